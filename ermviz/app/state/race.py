"""The live race's records and what is read off them: one :class:`Slot` per run (its
place, label, colour and the :class:`~ermviz.runner.Run`, or the error that prevented it),
the results table's rows, every run's trace as one tidy frame, and its CSV and Parquet
exports.

:class:`~ermviz.app.state.model.DashboardModel` holds the slots and drives the race; the
functions here only read them (they are called from the model's ``results``,
``result_rows``, ``traces`` and ``export_*`` methods).
"""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from ermviz.runner import Run, time_to_threshold

#: Certificate levels whose first hitting time the results table reports.
THRESHOLDS: tuple[float, ...] = (1e-2, 1e-4, 1e-6)
#: One colour per run, shared by every plot (Bokeh's Category10, in order).
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


@dataclasses.dataclass(eq=False)
class Slot:
    """One run of the live race: its place, label and colour, and the run (or its error).

    ``hits`` holds the solver time at which the certificate first fell to each of
    :data:`THRESHOLDS`, kept up to date by the streaming pull while the run goes; once the
    run has ended :meth:`final_extras` recomputes them from the whole trace.
    """

    index: int
    label: str
    color: str
    method: str
    step: str
    settings: dict[str, Any]
    run: Run | None = None
    error: str = ""
    dataset: str = ""
    started: bool = False
    #: The run spec this place repeats (same method and settings, another seed); -1: a
    #: place of its own.
    group: int = -1
    hits: dict[float, float] = dataclasses.field(
        default_factory=lambda: dict.fromkeys(THRESHOLDS, float("nan"))
    )
    _final: dict[str, Any] | None = None

    @property
    def run_id(self) -> str:
        return self.run.run_id if self.run is not None else f"failed-{self.index + 1}"

    @property
    def status(self) -> str:
        if self.run is None:
            return "error" if self.error else "ready"
        return self.run.status

    @property
    def message(self) -> str:
        if self.run is None:
            return self.error
        return self.run.message

    @property
    def done(self) -> bool:
        return self.run is None or self.run.done

    @property
    def active(self) -> bool:
        """True while the run's thread is advancing (not paused, not ended)."""
        return self.run is not None and not self.run.done and self.run.status != "paused"

    def final_extras(self) -> dict[str, Any]:
        """Exact thresholds hitting times and test metrics of an ended run (computed once)."""
        if self._final is None and self.run is not None and self.run.done:
            # Only the two columns time_to_threshold reads: run.frame() would also build
            # the labelled step-type column, ~0.2 s per 100k rows on the event loop.
            cols = self.run.trace.since(0)
            frame = pd.DataFrame({"certificate": cols["certificate"], "time_s": cols["time_s"]})
            hits = time_to_threshold(frame, THRESHOLDS) if len(frame) else dict(self.hits)
            try:
                metrics = self.run.solver.problem.test_metrics(self.run.solver.iterate())
            except Exception:  # metrics are a bonus; a failing one must not hide the run
                metrics = {}
            self._final = {"hits": hits, "metrics": metrics}
        return self._final or {"hits": dict(self.hits), "metrics": {}}


#: Columns of the results table.
RESULT_COLUMNS = (
    "run",
    "run_id",
    "status",
    "iterations",
    "rows",
    "time_s",
    "cpu_s",
    "certificate",
    "certificate_dev",
    "objective",
    *[f"t<={eps:.0e}" for eps in THRESHOLDS],
    "test_accuracy",
    "message",
)


def is_seeded(method: str) -> bool:
    """Whether ``method`` declares a ``seed`` (a stochastic method: repeats differ)."""
    from ermviz.registry import get_method

    return any(s.name == "seed" for s in get_method(method).settings)


def expand_repeats(
    specs: Iterable[Any], labels: list[str], repeat: int, dataset: str
) -> list[Slot]:
    """The race's places: one per run spec; ``repeat`` per spec of a stochastic method,
    seeds ``seed, seed + 1, ...`` (the spec's seed, default 0), one colour per spec and
    the spec's index as their ``group``."""
    slots: list[Slot] = []
    for i, (spec, label) in enumerate(zip(specs, labels, strict=True)):
        color = PALETTE[i % len(PALETTE)]
        seeds = [None]
        if repeat > 1 and is_seeded(spec.method):
            first = int(spec.settings.get("seed", 0))
            seeds = [first + r for r in range(repeat)]
        for seed in seeds:
            settings = dict(spec.settings)
            if seed is not None:
                settings["seed"] = seed
            slots.append(
                Slot(
                    index=len(slots),
                    label=label if seed is None else f"{label} · seed {seed}",
                    color=color,
                    method=spec.method,
                    step=spec.step,
                    settings=settings,
                    dataset=dataset,
                    group=-1 if seed is None else i,
                )
            )
    return slots


def _mean(values: list[float]) -> float:
    """The mean of the finite values (NaN when there is none; a threshold some seeds
    never reached counts only the seeds that did)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else float("nan")


def spec_label(slot: Slot) -> str:
    """The label of ``slot``'s run spec (a seed's label without its ``· seed k``)."""
    return slot.label.rsplit(" · seed ", 1)[0]


def group_entries(slots: list[Slot]) -> list[str | None]:
    """Per slot, the legend entry it shares with the other seeds of its run spec
    (``"label · 3 seeds"``); None for a run that is alone."""
    sizes: dict[int, int] = {}
    for slot in slots:
        if slot.group >= 0:
            sizes[slot.group] = sizes.get(slot.group, 0) + 1
    return [
        f"{spec_label(slot)} · {sizes[slot.group]} seeds"
        if slot.group >= 0 and sizes[slot.group] > 1
        else None
        for slot in slots
    ]


def group_rows(slots: list[Slot], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A row per repeated run spec: the mean of its runs' measures, with ``certificate_dev``
    (sample standard deviation over the seeds); status ``"k seeds"``."""
    out = []
    groups: dict[int, list[int]] = {}
    for k, slot in enumerate(slots):
        if slot.group >= 0:
            groups.setdefault(slot.group, []).append(k)
    for members in groups.values():
        first = slots[members[0]]
        row: dict[str, Any] = {"run": f"{spec_label(first)} (mean of {len(members)})", "run_id": ""}
        row["status"] = f"{len(members)} seeds"
        for key in ("iterations", "rows", "time_s", "cpu_s", "certificate", "objective"):
            row[key] = _mean([rows[k][key] for k in members])
        cert = np.array([rows[k]["certificate"] for k in members], dtype=float)
        cert = cert[np.isfinite(cert)]
        row["certificate_dev"] = float(np.std(cert, ddof=1)) if cert.size > 1 else np.nan
        for eps in THRESHOLDS:
            row[f"t<={eps:.0e}"] = _mean([rows[k][f"t<={eps:.0e}"] for k in members])
        row["test_accuracy"] = _mean([rows[k]["test_accuracy"] for k in members])
        row["message"] = "mean over the seeds; certificate_dev: their standard deviation"
        row["color"] = first.color
        out.append(row)
    return out


def result_rows_of(slots: Iterable[Slot]) -> list[dict[str, Any]]:
    """One dict per run: the :data:`RESULT_COLUMNS`, plus the run's ``color`` (for views;
    not a column of the results frame); then one per repeated run spec (:func:`group_rows`)."""
    slots = list(slots)
    rows = []
    for slot in slots:
        run = slot.run
        last = (run.trace.last() if run is not None else None) or {}
        extras = slot.final_extras() if slot.done else {"hits": slot.hits, "metrics": {}}
        row = {
            "run": slot.label,
            "run_id": slot.run_id,
            "status": slot.status,
            "iterations": int(last.get("iteration", 0)),
            "rows": len(run.trace) if run is not None else 0,
            "time_s": run.time_s if run is not None else 0.0,
            "cpu_s": run.cpu_s if run is not None else 0.0,
            "certificate": last.get("certificate", np.nan),
            "certificate_dev": np.nan,
            "objective": last.get("objective", np.nan),
        }
        for eps in THRESHOLDS:
            row[f"t<={eps:.0e}"] = extras["hits"].get(eps, np.nan)
        row["test_accuracy"] = extras["metrics"].get("test_accuracy", np.nan)
        row["message"] = slot.message
        row["color"] = slot.color  # for views; not a column of results()
        rows.append(row)
    return rows + group_rows(slots, rows)


#: Columns of the traces export that say how each run was set up, after the trace's own
#: ``dataset``, ``problem``, ``method`` and ``step``: the problem's settings and the
#: method's and step rule's (JSON objects), the method's ``seed`` (stochastic methods;
#: empty otherwise), the budget and the preprocessing (``split_seed``: the seed of the
#: train/test split).
SETTING_COLUMNS = (
    "problem_settings",
    "method_settings",
    "seed",
    "tol",
    "max_iter",
    "max_time",
    "max_work",
    "standardize",
    "normalize",
    "test_size",
    "split_seed",
)


def _json(settings: dict[str, Any]) -> str:
    return json.dumps(settings, sort_keys=True, separators=(",", ":"), default=str)


def _setup_value(setup: dict[str, str], key: str, kind: type) -> Any:
    text = setup.get(key)
    if text is None:
        return None
    if kind is bool:
        return text == "yes"
    return kind(text)


def run_settings(slot: Slot, setup: dict[str, str] | None = None) -> dict[str, Any]:
    """The :data:`SETTING_COLUMNS` of ``slot``'s run: its settings and budget from the run
    itself, its preprocessing from ``setup`` (the race's set-up texts, see
    :func:`~ermviz.app.state.references.setup_of`; None where unknown)."""
    run = slot.run
    problem = getattr(getattr(run, "solver", None), "problem", None)
    psettings = dict(getattr(problem, "settings", {}) or {})
    msettings = {k: v for k, v in run.info.settings.items() if k not in psettings}
    budget = run.budget
    setup = setup or {}
    test_size = _setup_value(setup, "test_size", float)
    return {
        "problem_settings": _json(psettings),
        "method_settings": _json(msettings),
        "seed": msettings.get("seed"),
        "tol": float(budget.tol),
        "max_iter": int(budget.max_iter),
        "max_time": float(budget.max_time),
        "max_work": f"{budget.max_work[0]}={budget.max_work[1]:g}" if budget.max_work else "",
        "standardize": _setup_value(setup, "standardize", bool),
        "normalize": _setup_value(setup, "normalize", bool),
        # 0 in the set-up: the dataset's own test file, if any (no split).
        "test_size": test_size if test_size else None,
        "split_seed": _setup_value(setup, "seed", int),
    }


def with_settings(frame: pd.DataFrame, slot: Slot, setup: dict[str, str] | None) -> pd.DataFrame:
    """``frame`` (a run's trace frame) with its ``label`` and :data:`SETTING_COLUMNS`
    inserted after its ``step`` column (at the end if it has none)."""
    if "label" not in frame:
        frame.insert(1, "label", slot.label)
    at = frame.columns.get_loc("step") + 1 if "step" in frame else len(frame.columns)
    for k, (name, v) in enumerate(run_settings(slot, setup).items()):
        frame.insert(at + k, name, v)
    return frame


def traces_of(slots: Iterable[Slot], setup: dict[str, str] | None = None) -> pd.DataFrame:
    """Every run's whole trace (``run.frame()``), with its label and the settings it ran
    with (:data:`SETTING_COLUMNS`; ``setup``: the race's set-up texts, for the
    preprocessing), in one tidy frame."""
    frames = []
    for slot in slots:
        if slot.run is None:
            continue
        frames.append(with_settings(slot.run.frame(), slot, setup))
    if not frames:
        return pd.DataFrame(columns=["run_id", "label", *SETTING_COLUMNS])
    return pd.concat(frames, ignore_index=True)


def csv_bytes(frame: pd.DataFrame) -> io.BytesIO:
    """``frame`` as a CSV file in memory (positioned at its start)."""
    buf = io.BytesIO()
    frame.to_csv(buf, index=False)
    buf.seek(0)
    return buf


def parquet_bytes(frame: pd.DataFrame) -> io.BytesIO:
    """``frame`` as a Parquet file in memory (positioned at its start)."""
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    buf.seek(0)
    return buf
