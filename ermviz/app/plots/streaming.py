"""Per-session pull of new trace rows (and teaching-view iterates) into Bokeh sources.

One :class:`Streamer` per browser session owns one :class:`RunSources` per run of the
race and ONE periodic callback (an ``async def``, every :data:`PERIOD_MS` ms) that reads
each run's trace with ``trace.since(seq)`` and sends only new, log-thinned points with
``ColumnDataSource.stream(new, rollover=None)`` inside ``pn.io.hold()``, so a tick is one
message to the browser. This design was measured on the 2-core target machine: HoloViews
``Buffer`` streams lost points or stalled the server, scheduling a callback per solver
chunk fell seconds behind, and ``stream`` cannot be called from a solver thread at all.

Thinning (:mod:`ermviz.app.plots.thinning`): a row is sent when its iteration crosses the next
point of a geometric grid (every iteration up to ~10, then ~24 points per decade), and
the newest row of every tick is always sent so curves end at the current iterate. The
periodic callback stops as soon as no run of the session is advancing (the server is idle
when nothing runs) and is restarted by :meth:`Streamer.start`.

Log axes: Bokeh drops values <= 0 on log scales, so certificates and step sizes are
clipped at :data:`FLOOR` (a final row, from which no step is taken, gets a NaN step size)
and iterations are plotted as ``iteration + 1`` (column ``k1``).

The teaching view's geometry (where a toy problem's atoms are drawn and how an iterate
is projected into the plane) is the problem's own (:mod:`ermviz.geometry`).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from bokeh.models import ColumnDataSource

from ermviz.app.plots.thinning import thin_rows
from ermviz.app.state.model import THRESHOLDS, DashboardModel, Slot
from ermviz.app.state.references import Reference
from ermviz.base import Problem
from ermviz.geometry import Geometry
from solvers.tags import STEP_NAMES

_log = logging.getLogger(__name__)

#: Refresh period of the live plots (milliseconds): ~2.9 refreshes a second. Measured with
#: the browser on the same 2 cores as the server, every refresh costs chromium ~11 ms of
#: CPU per live plot (Bokeh's layout checks and repaint, whatever the data), taken from
#: the solvers: a three-run race ran at 89-91.5 % of its headless speed at 300 ms and
#: 90.5-94 % (medians 93.4 and 92.4 %) at 350 ms with GRID_RATIO 1.1 (bench_dashboard.py).
PERIOD_MS = 350
#: Delay of the extra first pull after Start (milliseconds).
FIRST_PULL_MS = 40
#: Seconds without a connected browser after which a served page's runs are stopped.
DISCONNECT_GRACE = 0.5
#: Seconds between two updates of the best objective seen (suboptimality plot).
BEST_PERIOD = 1.0
#: Smallest value plotted on a log axis (certificates, step sizes).
FLOOR = 1e-16
#: Columns of every run's trace source.
TRACE_COLUMNS = (
    "iteration",
    "k1",
    "time_s",
    "cpu_s",
    "certificate",
    "objective",
    "step_size",
    "active_size",
    "step",
    "work",
    "w1",
)
#: Columns of every run's objective source (the suboptimality plot's own).
OBJECTIVE_COLUMNS = ("iteration", "k1", "objective", "work", "w1")


def _empty_objective() -> dict[str, list]:
    return {c: [] for c in OBJECTIVE_COLUMNS}


#: Columns of a repeated run spec's band: the x columns of the trace, and the certificate's
#: min, max and mean over the seeds at the checkpoints every seed has reached.
BAND_COLUMNS = ("iteration", "k1", "work", "w1", "lo", "hi", "mean")


def _empty_band() -> dict[str, list]:
    return {c: [] for c in BAND_COLUMNS}


def band_of(traces: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """The band of a group's sent trace data: at each iteration every member has sent
    (the stochastic methods' checkpoints do not depend on the seed), the min, max and mean
    of their certificates; x columns from the first member."""
    its = [np.asarray(t["iteration"], dtype=float) for t in traces]
    common = its[0]
    for it in its[1:]:
        common = np.intersect1d(common, it, assume_unique=False)
    if common.size == 0:
        return _empty_band()
    certs = []
    for t, it in zip(traces, its, strict=True):
        idx = np.searchsorted(it, common)
        certs.append(np.asarray(t["certificate"], dtype=float)[idx])
    C = np.vstack(certs)
    idx0 = np.searchsorted(its[0], common)
    first = traces[0]
    return {
        "iteration": common,
        "k1": common + 1.0,
        "work": np.asarray(first["work"], dtype=float)[idx0],
        "w1": np.asarray(first["w1"], dtype=float)[idx0],
        "lo": C.min(axis=0),
        "hi": C.max(axis=0),
        # A geometric mean would suit the log axis, but the mean is what a table reports.
        "mean": C.mean(axis=0),
    }


def _empty_trace() -> dict[str, Any]:
    return {c: ([] if c == "step" else np.zeros(0)) for c in TRACE_COLUMNS}


def frozen_trace_data(frame: pd.DataFrame, work_column: str = "iteration") -> dict[str, list]:
    """A kept race's thinned trace frame as the columns of a live trace source (same
    clipping for log axes), plus ``subopt``: objective minus the best objective of that
    run's own race (its frame's ``race_best`` attribute, else its own minimum), as the
    suboptimality plot showed it when the race was kept."""
    it = frame["iteration"].to_numpy(dtype=float)
    step = frame["step_size"].to_numpy(dtype=float)
    work = frame[work_column].to_numpy(dtype=float) if work_column in frame else it
    objective = frame["objective"].to_numpy(dtype=float)
    best = frame.attrs.get("race_best", np.nanmin(objective) if objective.size else np.nan)
    gap = objective - best
    data = {
        "iteration": it,
        "k1": it + 1.0,
        "time_s": frame["time_s"].to_numpy(dtype=float),
        "cpu_s": frame["cpu_s"].to_numpy(dtype=float),
        "certificate": np.maximum(frame["certificate"].to_numpy(dtype=float), FLOOR),
        "objective": objective,
        "step_size": np.where(step > 0, np.maximum(step, FLOOR), np.nan),
        "active_size": frame["active_size"].to_numpy(dtype=float),
        "step": [str(s) for s in frame["step_type"]],
        "work": work,
        "w1": work + 1.0,
        "subopt": np.where(gap > 0, gap, np.nan),
    }
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in data.items()}


def reference_series(
    references: list[Reference], work_column: str = "iteration"
) -> list[tuple[str, str, str, ColumnDataSource]]:
    """One ``(legend label, colour, dash, static source)`` per run of every kept race; the
    sources are named ``reference:<N>:<run_id>`` so that a page script can find them."""
    return [
        (
            ref.legend_label(run),
            run.color,
            ref.dash,
            ColumnDataSource(
                frozen_trace_data(run.frame, work_column),
                name=f"reference:{ref.number}:{run.run_id}",
            ),
        )
        for ref in references
        for run in ref.runs
    ]


def geometry_for(problem: Problem | None) -> Geometry | None:
    """The drawing of ``problem``'s feasible set, or None when it is not 2-D or 3-D."""
    return None if problem is None else problem.teaching_geometry()


# ---------------------------------------------------------------------------------------
# Sources and the pull


def _empty_path() -> dict[str, list]:
    return {"x": [], "y": [], "iteration": [], "step": []}


class RunSources:
    """The Bokeh sources of one place in the race: its run's thinned trace and its
    teaching-view path, current iterate and active-set vertices.

    Sources are kept from race to race (:meth:`bind` empties them for the next run), so
    a new race changes data, not figures: the browser has nothing to rebuild on Start.
    They carry names (``trace:<run_id>``, ``path:<run_id>``; ``idle:<index>`` when
    unused) so that a page script can find them in ``Bokeh.documents[0]``.
    """

    def __init__(self, index: int) -> None:
        self.index = index
        self.slot: Slot | None = None
        self.geometry: Geometry | None = None
        self.trace = ColumnDataSource(_empty_trace(), name=f"idle:trace-{index}")
        self.path = ColumnDataSource(_empty_path(), name=f"idle:path-{index}")
        #: The trace column streamed as ``work`` (and ``w1`` = work + 1, for log axes): the
        #: x of the iteration plots when the user picks a work counter (iteration if the
        #: run does not record it).
        self.work_column = "iteration"
        # The suboptimality plot has its own small source: when the best objective
        # improves, only its renderers must recompute (see Streamer.pull).
        self.objective = ColumnDataSource(_empty_objective(), name=f"idle:objective-{index}")
        self.current = ColumnDataSource({"x": [], "y": []}, name=f"idle:current-{index}")
        # Drawn when this place leads a group of seeds (Slot.group): their min-max band.
        self.band = ColumnDataSource(_empty_band(), name=f"idle:band-{index}")
        self.active = ColumnDataSource(
            {"x": [], "y": [], "weight": []}, name=f"idle:active-{index}"
        )
        self._reset_counters()

    def _reset_counters(self) -> None:
        self.seq = 0  # next trace seq to read
        self.last_bin = -1.0
        self.iterates_seen = 0
        #: Step tag of each iteration read so far (teaching view: marks on the path).
        self.step_of: dict[int, str] = {}
        self.active_key: tuple[int, ...] | None = None
        self.best_objective = math.inf
        self.sent = 0  # rows streamed so far

    def bind(self, slot: Slot | None, geometry: Geometry | None = None) -> None:
        """Empty the sources and follow ``slot``'s run from its first row (None: unused)."""
        self.slot = slot
        self.geometry = geometry
        self._reset_counters()
        tag = f"{slot.run_id}" if slot is not None else None
        for name, cds, empty in (
            ("trace", self.trace, _empty_trace),
            ("objective", self.objective, _empty_objective),
            ("band", self.band, _empty_band),
            ("path", self.path, _empty_path),
            ("current", self.current, lambda: {"x": [], "y": []}),
            ("active", self.active, lambda: {"x": [], "y": [], "weight": []}),
        ):
            cds.name = f"{name}:{tag}" if tag is not None else f"idle:{name}-{self.index}"
            if any(len(v) for v in cds.data.values()):
                cds.data = empty()

    def pull(self) -> int:
        """Stream the rows appended since the last pull (thinned); returns rows sent."""
        run = self.slot.run if self.slot is not None else None
        if run is None:
            return 0
        rows = run.trace.since(self.seq)
        seq = rows["seq"]
        if seq.size == 0:
            sent = 0
        else:
            self.seq = int(seq[-1]) + 1
            self._record_hits(rows)
            finite = rows["objective"][np.isfinite(rows["objective"])]
            if finite.size:
                self.best_objective = min(self.best_objective, float(finite.min()))
            idx, self.last_bin = thin_rows(rows["iteration"], self.last_bin)
            step = rows["step_size"][idx]
            work = rows.get(self.work_column, rows["iteration"])[idx]
            new = {
                "iteration": rows["iteration"][idx],
                "k1": rows["iteration"][idx] + 1.0,
                "time_s": rows["time_s"][idx],
                "cpu_s": rows["cpu_s"][idx],
                "certificate": np.maximum(rows["certificate"][idx], FLOOR),
                "objective": rows["objective"][idx],
                # No step is taken from a final row (size 0): NaN leaves a gap instead of
                # a plunge to the floor of the log axis.
                "step_size": np.where(step > 0, np.maximum(step, FLOOR), np.nan),
                "active_size": rows["active_size"][idx],
                "step": [STEP_NAMES.get(int(c), "none") for c in rows["step_type"][idx]],
                "work": work,
                "w1": work + 1.0,
            }
            # Plain lists, not arrays: Bokeh sends every array as its own binary websocket
            # frame, and a tick carries a handful of points per run. Measured: ~80 frames
            # (and send calls) per tick with arrays, one message with lists.
            new = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in new.items()}
            self.trace.stream(new, rollover=None)
            self.objective.stream({k: new[k] for k in OBJECTIVE_COLUMNS}, rollover=None)
            sent = idx.size
            self.sent += sent
        if self.geometry is not None and run.keep_iterates:
            if seq.size:
                # Every row, not the thinned ones: a path point shows the step taken from it.
                tags = rows["step_type"].tolist()
                for k, c in zip(rows["iteration"].tolist(), tags, strict=True):
                    self.step_of[int(k)] = STEP_NAMES.get(int(c), "none")
            self._pull_iterates()
        return sent

    def _record_hits(self, rows: dict[str, np.ndarray]) -> None:
        """First solver time at which the certificate reached each threshold (every row,
        before thinning, so the live results table is exact)."""
        cert = rows["certificate"]
        for eps in THRESHOLDS:
            if math.isnan(self.slot.hits.get(eps, math.nan)):
                hit = np.flatnonzero(cert <= eps)
                if hit.size:
                    self.slot.hits[eps] = float(rows["time_s"][hit[0]])

    def _pull_iterates(self) -> None:
        its, X, W = self.slot.run.iterates()
        if self.step_of and self.slot.active:
            # An iterate whose trace row (its step tag) is not read yet waits a pull.
            end = int(np.searchsorted(its, max(self.step_of), side="right"))
            its, X, W = its[:end], X[:end], W[:end]
        if its.size <= self.iterates_seen:
            return
        xy = self.geometry.project(X[self.iterates_seen :])
        new_its = its[self.iterates_seen :]
        self.path.stream(
            {
                "x": xy[:, 0],
                "y": xy[:, 1],
                "iteration": new_its.astype(float),
                "step": [self.step_of.get(int(k), "none") for k in new_its],
            },
            rollover=None,
        )
        self.iterates_seen = its.size
        self.current.data = {"x": [float(xy[-1, 0])], "y": [float(xy[-1, 1])]}
        act = self.geometry.active_atoms(W[-1])
        key = tuple(int(a) for a in act)
        if key != self.active_key:
            self.active_key = key
            pts = self.geometry.atoms[act]
            self.active.data = {
                "x": pts[:, 0],
                "y": pts[:, 1],
                "weight": np.asarray(W[-1])[act],
            }


class Streamer:
    """The session's single periodic pull from every run into the plots.

    ``listeners`` are called after each pull (on the server's event loop, inside the
    same ``hold``): the views refresh their status text and results table there.
    """

    def __init__(self, model: DashboardModel, period_ms: int = PERIOD_MS) -> None:
        self.model = model
        self.period_ms = int(period_ms)
        self.pool: list[RunSources] = []
        self.sources: list[RunSources] = []
        self.best = ColumnDataSource({"best": [np.nan]}, name="best-objective")
        self.geometry: Geometry | None = None
        #: The trace column the iteration plots use as x (see RunSources.work_column).
        self.work_column = "iteration"
        self.listeners: list[Callable[[], None]] = []
        self._callback: Any = None
        self._idle_ticks = 0
        self._doc: Any = None  # the session's document (served pages only)
        self._seen_connected = False
        self._disconnected_at: float | None = None
        self._best_at = -math.inf
        self.ticks = 0
        self.tick_seconds = 0.0  # wall time spent in pulls (diagnostics, benchmark)
        self.tick_cpu_seconds = 0.0  # CPU time of the event-loop thread in pulls
        self.first_point_at: float | None = None
        self.started_at: float | None = None

    def set_work_column(self, column: str) -> None:
        """Stream ``column`` as the iteration plots' x from now on: every run's rows are
        sent again from the first (thinned), so the curves are redrawn on the new axis."""
        self.work_column = column
        for src in self.pool:
            if src.work_column != column:
                src.work_column = column
                src.bind(src.slot, src.geometry)
        if any(src.slot is not None for src in self.sources):
            self.start()

    # -- race changes ----------------------------------------------------------------
    def ensure_pool(self, n: int) -> bool:
        """Have at least ``n`` reusable sources; True if the pool had to grow."""
        grew = False
        while len(self.pool) < n:
            src = RunSources(len(self.pool))
            src.work_column = self.work_column
            self.pool.append(src)
            grew = True
        return grew

    def attach(self, slots: list[Slot], problem: Problem | None = None) -> bool:
        """New race: bind one pooled source set per slot, empty the rest.

        Returns True when the pool grew (the views then need figures for the new sources).
        """
        keep = any(s.run is not None and s.run.keep_iterates for s in slots)
        geometry = geometry_for(problem) if keep else None
        self.geometry = geometry
        grew = self.ensure_pool(len(slots))
        for i, src in enumerate(self.pool):
            src.bind(slots[i] if i < len(slots) else None, geometry)
        self.sources = self.pool[: len(slots)]
        self.best.data = {"best": [np.nan]}
        self.first_point_at = None
        return grew

    # -- the pull --------------------------------------------------------------------
    def pull(self) -> bool:
        """Stream new rows of every run; returns whether any run is still advancing.

        Whether runs are active is read BEFORE reading their traces, so the pull that
        sees a run as ended has also read its final rows.
        """
        active = any(src.slot.active for src in self.sources)
        sent = 0
        for src in self.sources:
            sent += src.pull()
        if sent and self.first_point_at is None:
            self.first_point_at = time.perf_counter()
        if sent:
            self._update_bands()
        best = min((s.best_objective for s in self.sources), default=math.inf)
        now = time.perf_counter()
        # Every change of the best objective makes the browser recompute every
        # suboptimality curve; measured, doing that on each pull cost most of a core in
        # chromium. Once per BEST_PERIOD, and when the race ends, is plenty.
        if (
            math.isfinite(best)
            and best != self.best.data["best"][0]
            and (not active or now - self._best_at >= BEST_PERIOD)
        ):
            self.best.data = {"best": [best]}
            self._best_at = now
        for listener in list(self.listeners):
            listener()
        return active

    def _update_bands(self) -> None:
        """Each group of seeds' band, on its first member's source."""
        groups: dict[int, list[RunSources]] = {}
        for src in self.sources:
            if src.slot is not None and src.slot.group >= 0:
                groups.setdefault(src.slot.group, []).append(src)
        for members in groups.values():
            if len(members) < 2 or any(len(m.trace.data["iteration"]) == 0 for m in members):
                continue
            band = band_of([m.trace.data for m in members])
            members[0].band.data = {k: list(np.asarray(v).tolist()) for k, v in band.items()}

    def page_gone(self) -> bool:
        """True once the served page has had no browser connected for
        :data:`DISCONNECT_GRACE` seconds after having had one (the tab was closed or the
        network dropped). Bokeh destroys such a session only after its unused-session
        lifetime (15-32 s by default); the runs should not hold the shared cores that
        long for nobody."""
        ctx = getattr(self._doc, "session_context", None)
        session = getattr(ctx, "session", None)
        if session is None:
            return False
        if session.connection_count > 0:
            self._seen_connected, self._disconnected_at = True, None
            return False
        if not self._seen_connected:
            return False  # the page is still loading
        now = time.perf_counter()
        if self._disconnected_at is None:
            self._disconnected_at = now
        return now - self._disconnected_at >= DISCONNECT_GRACE

    async def _tick(self) -> None:
        t0 = time.perf_counter()
        c0 = time.thread_time()
        if self.page_gone():
            for slot in self.model.slots:
                if slot.run is not None and not slot.run.done:
                    slot.run.stop("stopped: the page was closed")
            self.stop()
            return
        try:
            import panel as pn

            # No freeze=True here: leaving a frozen hold always recomputes the document's
            # model graph (~0.2 s with this dashboard, measured), and a tick changes no
            # model references (streams and text only), so it never needs one.
            with pn.io.hold():
                active = self.pull()
        except Exception as exc:  # never let a broken tick freeze the page silently
            from ermviz.app.state.model import one_line

            _log.exception("live update failed")  # the traceback, for the server's log
            self.model.notify(f"live update failed: {one_line(exc)}")
            self.stop()
            return
        finally:
            self.ticks += 1
            self.tick_seconds += time.perf_counter() - t0
            self.tick_cpu_seconds += time.thread_time() - c0
        # Stop after two idle ticks in a row: a run being paused may still append the
        # chunk it was computing after its status changed.
        self._idle_ticks = 0 if active else self._idle_ticks + 1
        if self._idle_ticks >= 2:
            self.stop()

    # -- the periodic callback -------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._callback is not None

    def start(self) -> None:
        """(Re)start the periodic pull; a no-op if it is already running."""
        self._idle_ticks = 0
        if self._callback is not None:
            return
        from panel.io.callbacks import PeriodicCallback

        self.started_at = time.perf_counter()
        # background=True: the pull does not flag the session as busy, so the template's
        # busy indicator keeps meaning "a user action is being processed".
        cb = PeriodicCallback(callback=self._tick, period=self.period_ms, background=True)
        cb.log = False
        cb.start()
        self._callback = cb
        import panel as pn

        doc = pn.state.curdoc
        if doc is not None and doc.session_context is not None:
            self._doc = doc
            # The periodic callback first fires one period from now: an extra early pull
            # puts the first points on screen sooner after Start.
            doc.add_timeout_callback(self._tick, FIRST_PULL_MS)

    def stop(self) -> None:
        if self._callback is not None:
            cb, self._callback = self._callback, None
            cb.stop()
