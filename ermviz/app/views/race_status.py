"""The race's status in words, for the page's toolbar (:mod:`ermviz.app.views.page`).

* :func:`race_line`: what the race is doing, on one line: ``idle``, ``starting`` (its runs
  being built: data, problem, kernels), ``compiling`` (its Start waits for kernels the
  server's background warm-up compiles, :mod:`ermviz.app.serving.warmup`: which ones, for how
  long so far, how many are ready, and about how long is left when the warm-up can tell),
  ``running``, ``paused`` or ``finished``. One line for one state: the page never says
  "idle" and "compiling" at once.
* :func:`run_chips`: one chip per run with its status; while a race starts, the runs it
  is building and which of them waits for its kernel.
* :func:`race_summary`: the race's outcome in words, its times on the clock the page
  shows (``s CPU``: the solver thread's CPU time, which a loaded machine does not
  stretch; ``s wall``) and, when the plots count a work unit (data passes, samples), that
  count beside the iteration.

Plain functions of the model's state returning HTML (or text): no widget, no Panel.
"""

from __future__ import annotations

import dataclasses
import html
import math
from collections.abc import Sequence
from typing import Any

#: The page's name for each clock of the traces (``Model.time_basis``).
CLOCKS = {"cpu_s": "CPU", "time_s": "wall"}
#: The toolbar's and the lesson's text size in Presentation mode, in the page's (the
#: figures' own: :data:`~ermviz.app.plots.figure_style.TEXT_STYLES`).
PRESENTATION_EM = 1.4
#: Seconds into a Start on a first launch after which the status line says its runs'
#: kernels are compiling (loading data and a cached kernel take less).
COMPILING_AFTER = 5.0
#: The colour of the status dot per state (a static dot, not a spinner: an endless CSS
#: animation keeps the browser repainting, measured to compete with the solvers).
COLOURS = {
    "running": "#2ca02c",
    "paused": "#ff7f0e",
    "finished": "#1f77b4",
    "starting": "#8a5a00",
    "compiling": "#8a5a00",
}


@dataclasses.dataclass
class Starting:
    """A Start whose runs are being built.

    ``since``: when Start was pressed (``time.perf_counter()``); ``labels``: the runs'
    labels; ``waiting``: the kernels its Start waits for now
    (:func:`ermviz.app.serving.warmup.waiting_for`, "IPM newton on plq (fairness-synthetic)");
    ``needed``: the most it waited for at once since Start (so ``needed - len(waiting)``
    are ready); ``left``: the seconds the warm-up expects the wait to last still (None:
    no estimate); ``first_launch``: the warm-up is still compiling (a kernel it has not
    reached, the Start compiles itself)."""

    since: float
    labels: list[str]
    waiting: list[str] = dataclasses.field(default_factory=list)
    needed: int = 0
    left: float | None = None
    first_launch: bool = False

    def follow(self, waiting: list[str], left: float | None, first_launch: bool) -> None:
        """Take the warm-up's latest word on what this Start waits for."""
        self.waiting = list(waiting)
        self.needed = max(self.needed, len(self.waiting))
        self.left = left
        self.first_launch = first_launch

    @property
    def state(self) -> str:
        return "compiling" if self.waiting else "starting"


def sized(text: str, presentation: bool) -> str:
    """``text`` (HTML) at :data:`PRESENTATION_EM` times the page's size when
    ``presentation`` (read from the back of a room), else as it is."""
    if not text or not presentation:
        return text
    return f'<div class="ermviz-presenting" style="font-size:{PRESENTATION_EM}em">{text}</div>'


def _kernels(waiting: Sequence[str]) -> str:
    """The waited kernels by their run's label ("IPM newton on plq (...)" -> "IPM newton")."""
    names = list(dict.fromkeys(label.split(" on ")[0] for label in waiting))
    if len(names) == 1:
        return f"the {names[0]} kernel"
    if len(names) == 2:
        return f"the {names[0]} and {names[1]} kernels"
    return f"{len(names)} kernels ({', '.join(names)})"


def race_line(status: str, runs: int, starting: Starting | None = None, now: float = 0.0) -> str:
    """The race's status line (HTML; ``class="race-status-text"``, its state in
    ``data-status``): ``status`` is the model's race status, ``runs`` its number of
    runs, ``starting`` the Start being prepared (it overrides ``status``), ``now`` the
    current ``time.perf_counter()``."""
    extra = ""
    if starting is not None:
        status = starting.state
        seconds = max(0.0, now - starting.since)
        n = len(starting.labels)
        if status == "compiling":
            ready = starting.needed - len(starting.waiting)
            left = starting.left
            # The bar moves with the time when the warm-up gives an estimate, else it counts
            # the kernels ready.
            if left is not None:
                value, top = seconds, seconds + left
                eta = f" · about {left:.0f} s left"
            else:
                value, top, eta = ready, starting.needed, ""
            words = (
                f"{html.escape(_kernels(starting.waiting))}, {seconds:.0f} s so far; first "
                f"launch only · {ready} of {starting.needed} ready{eta}"
            )
            extra = (
                f" data-seconds='{seconds:.1f}' data-ready='{ready}' "
                f"data-needed='{starting.needed}'"
            )
            text = (
                f"race: <b>compiling</b> {words} "
                f'<progress class="race-progress" value="{value:.1f}" max="{max(top, 0.1):.1f}"'
                ' style="width:90px;height:0.8em;vertical-align:middle"></progress>'
            )
        else:
            # Seconds into a first launch, building the runs is compiling their kernels
            # (the warm-up has not reached them): say so rather than "loading" for minutes.
            compiles = starting.first_launch and seconds >= COMPILING_AFTER
            text = (
                f"race: <b>starting</b>: loading the data and building {n} run"
                f"{'s' if n != 1 else ''}, {seconds:.0f} s so far"
                + ("; compiling their kernels, first launch only" if compiles else "")
            )
            extra = f" data-seconds='{seconds:.1f}'"
    else:
        text = f"race: <b>{status}</b>{f' ({runs} runs)' if runs else ''}"
    dot = COLOURS.get(status, "#999")
    return (
        f'<span class="race-status-text" data-status="{status}"{extra} style="margin-right:12px">'
        f'<span style="color:{dot};font-size:1.3em">●</span> {text}</span>'
    )


def run_chips(slots: Sequence[Any], starting: Starting | None = None) -> str:
    """One chip per run of the race (``class="run-status"``, its id, label, status and
    rows in ``data-*``); while a race starts, one chip per run being built
    (``class="run-status-pending"``) saying whether it waits for its kernel."""
    chip = (
        "display:inline-block;margin:2px 10px 2px 0;padding:2px 8px;"
        "border-left:6px solid {color};background:#f5f5f5"
    )
    if starting is not None:
        waiting = {label.split(" on ")[0] for label in starting.waiting}
        return "".join(
            f'<span class="run-status-pending" data-label="{html.escape(label)}" '
            f'style="{chip.format(color="#bbb")}">{html.escape(label)}: '
            f"<b>{'waits for its kernel' if label in waiting else 'being built'}</b></span>"
            for label in starting.labels
        )
    parts = []
    for s in slots:
        msg = html.escape(s.message)
        # A busy server shares its cores between runs (ermviz.cores): say so.
        waiting = s.run is not None and s.status == "running" and s.run.waiting
        shown = "running, waiting for a core" if waiting else s.status
        parts.append(
            f'<span class="run-status" data-run-id="{html.escape(s.run_id)}" '
            f'data-label="{html.escape(s.label)}" data-status="{s.status}" '
            f'data-waiting="{int(waiting)}" '
            f'data-rows="{len(s.run.trace) if s.run is not None else 0}" title="{msg}" '
            f'style="{chip.format(color=s.color)}">'
            f"{html.escape(s.label)}: <b>{shown}</b></span>"
        )
    return "".join(parts) or '<span class="run-status-empty">No race yet: press Start.</span>'


def _fmt(value: float) -> str:
    return "nan" if not math.isfinite(value) else f"{value:.1e}"


def _seconds(value: float) -> str:
    """Seconds as short text: 12 s, 1.8 s, 0.28 s, 16 ms, 160 µs."""

    def two(v: float) -> str:  # two significant digits, never in exponent form
        return f"{float(f'{v:.2g}'):g}"

    if value >= 10:
        return f"{value:.0f} s"
    if value >= 0.1:
        return f"{two(value)} s"
    if value >= 1e-3:
        return f"{two(value * 1e3)} ms"
    return f"{two(value * 1e6)} µs"


def _count(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, float) and value < 1e4 else f"{value:,.0f}"


def _measures(row: dict[str, Any], clock: str, work: tuple[str, str] | None) -> str:
    """The row's work count (the plots' x, when a counter), time on ``clock`` and LMO
    calls (when the trace counts them: lazified methods make fewer than iterations)."""
    out = []
    if work is not None and isinstance(row.get(work[0]), int | float):
        out.append(f"{_count(row[work[0]])} {work[1]}")
    seconds = row.get(clock)
    if isinstance(seconds, int | float) and math.isfinite(seconds):
        out.append(f"{_seconds(seconds)} {CLOCKS.get(clock, clock)}")
    calls = row.get("lmo_calls")
    if isinstance(calls, int | float) and math.isfinite(calls):
        out.append(f"{int(calls)} LMO calls")
    return ", ".join(out)


def race_summary(
    runs: Sequence[dict[str, Any]],
    tol: float,
    clock: str = "cpu_s",
    work: tuple[str, str] | None = None,
) -> str:
    """The race's outcome in words, from each run's last trace row.

    ``runs``: one dict per run with ``label``, ``status`` and, once it has a row,
    ``iteration``, ``certificate`` and the clocks ``cpu_s`` and ``time_s``; ``clock``
    the one to state (:data:`CLOCKS`); ``work`` the plots' work counter (column, name)
    when their x is one. Empty until a run has converged or every run has ended; then
    the converged runs first, fastest first ("PFW exact reached 9.9e-09 at iteration 412
    (0.32 s CPU)"; "(77 data passes, 0.05 s CPU)"; ", 30 LMO calls" when the trace counts
    them), then where the others stand ("FW exact at 3.0e-04 after 2.1 s CPU"), joined by
    semicolons.
    """
    rows = [r for r in runs if "certificate" in r]
    converged = [r for r in rows if r["status"] == "converged"]
    ended = all(r["status"] not in ("running", "paused", "ready") for r in runs)
    if not rows or not (converged or ended):
        return ""
    parts = [
        f"{r['label']} reached {_fmt(r['certificate'])} at iteration {int(r['iteration'])} "
        f"({_measures(r, clock, work)})"
        for r in sorted(converged, key=lambda r: r.get(clock, math.inf))
    ]
    for r in rows:
        if r["status"] == "converged":
            continue
        state = "" if r["status"] in ("running", "paused") else f", {r['status']}"
        where = _measures(r, clock, work)
        parts.append(f"{r['label']} at {_fmt(r['certificate'])} after {where}{state}")
    if not converged:
        parts.insert(0, f"no run reached tol {tol:.0e}")
    return "; ".join(parts)
