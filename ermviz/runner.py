"""The runner: one solver per background thread, advanced in chunks, traced.

A :class:`Run` calls its solver's ``advance`` in chunks sized so that a call lasts about
``chunk_seconds`` (20 ms by default): pause, resume and stop therefore take effect within
one chunk, far under 100 ms. The kernels release the GIL (``nogil=True``), so several runs
race in parallel on several cores. Each chunk's rows go to the run's :class:`Trace`,
with the solver's wall time and the thread's CPU time; subscribers are told the new rows'
``seq`` after each chunk (from the solver thread: they must only record it, never touch
a UI from there).

Budgets: tolerance on the certificate (checked inside the kernel), maximum iterations
(the kernel records ``x_N`` and stops), maximum solver time (checked between chunks; the
last iterate is recorded before stopping). Every run's trace ends with a row describing
its final iterate. A run whose solver raises or produces NaN/inf ends with status
``error`` and a message; other runs are not affected.

The same runner runs headless (CLI, tests, sweep workers in other processes) and behind
the dashboard.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
import time
import traceback
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ermviz import cores
from ermviz.base import Solver
from ermviz.errors import SettingError
from ermviz.trace import Trace
from solvers.tags import (
    BASE_COLUMNS,
    KERNEL_STATUS_NAMES,
    STATUS_CONVERGED,
    STATUS_MAX_ITER,
    STATUS_MAX_WORK,
    STATUS_NONFINITE,
    STATUS_RUNNING,
    STATUS_STALLED,
)

if TYPE_CHECKING:  # pandas is imported when a frame is built: it costs start-up
    import pandas as pd

FINAL_STATUSES = (
    "converged",
    "max_iter",
    "max_time",
    "max_work",
    "stopped",
    "stalled",
    "error",
)


#: ``Budget.max_iter`` when no iteration limit is set.
NO_ITER_LIMIT = 2**62
#: Largest work budget (``max_work``): the kernels' counters are int64.
MAX_WORK_LIMIT = float(2**62)


@dataclass(frozen=True)
class Budget:
    """When a run ends.

    Parameters
    ----------
    tol : float
        Stop when the certificate is at most ``tol`` (> 0).
    max_iter : int
        Stop after this many steps (>= 1); the iterate reached is still recorded. Default:
        no limit (:data:`NO_ITER_LIMIT`), so that only ``max_time`` ends a slow run.
    max_time : float
        Stop after this many seconds of solver time (> 0): the time spent in the method's
        own steps, without the certificate evaluations it does not need (and without
        set-up and JIT compilation, which happen before the run).
    max_wall : float or None
        Stop after this many seconds of the run's wall time, certificate evaluations
        included (> 0); None: no such limit.
    max_work : tuple of (str, float), optional
        Stop once a cumulative counter column of the trace reaches a limit, e.g.
        ``("grad_evals", 1e4)``, ``("samples", 1e6)`` for stochastic methods,
        ``("kernel_evals", 1e8)`` for kernel methods or ``("epoch", 50)`` for coordinate
        descent (checked between chunks, so it may overshoot by one chunk).
    """

    tol: float = 1e-6
    max_iter: int = NO_ITER_LIMIT
    max_time: float = 60.0
    max_work: tuple[str, float] | None = None
    max_wall: float | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.tol, int | float) and math.isfinite(self.tol) and self.tol > 0):
            raise SettingError(f"tol={self.tol!r} is out of range; allowed range (0, inf)")
        if not (
            isinstance(self.max_iter, int | np.integer) and 1 <= self.max_iter <= NO_ITER_LIMIT
        ):
            raise SettingError(
                f"max-iter={self.max_iter!r} is out of range; allowed: an integer in "
                f"[1, {NO_ITER_LIMIT}] (the kernels count iterations in int64)"
            )
        if not (
            isinstance(self.max_time, int | float)
            and self.max_time > 0
            and not math.isnan(self.max_time)
        ):
            raise SettingError(
                f"max-time={self.max_time!r} is out of range; allowed range (0, inf) seconds"
            )
        if self.max_wall is not None and not (
            isinstance(self.max_wall, int | float) and self.max_wall > 0
        ):
            raise SettingError(
                f"max-wall={self.max_wall!r} is out of range; allowed range (0, inf) seconds"
            )
        if self.max_work is not None:
            name, limit = self.max_work
            if not (isinstance(limit, int | float | np.number) and 0 < limit <= MAX_WORK_LIMIT):
                raise SettingError(
                    f"max-work {name}={limit!r} is out of range; allowed (0, {MAX_WORK_LIMIT:.3g}]"
                    " (the kernels count work in int64)"
                )


def new_run_id() -> str:
    """A fresh 8-character run id that always begins with a letter.

    Plain ``uuid4().hex[:8]`` is all digits about 2 % of the time (or digits, ``e`` and
    digits): CSV readers such as pandas then read that run's ids as numbers, so one export
    mixes numeric and text ids (seen in CI). A leading a-f keeps every id a string.
    """
    digest = uuid.uuid4().hex
    return "abcdef"[int(digest[0], 16) % 6] + digest[1:8]


@dataclass
class RunInfo:
    """Labels that travel with a run into its trace and summary."""

    dataset: str = ""
    problem: str = ""
    method: str = ""
    step: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    label: str = ""


def stop_all(wait: float = 0.2, reason: str = "stopped: the server is shutting down") -> int:
    """Stop every run started in this process that has not ended (a server shutting
    down), waiting up to ``wait`` seconds in all for them to end; returns how many were
    running."""
    runs = [run for run in list(_STARTED) if not run.done]
    for run in runs:
        run.stop(reason)
    deadline = time.perf_counter() + wait
    for run in runs:
        run.join(max(0.0, deadline - time.perf_counter()))
    return len(runs)


def running() -> int:
    """Runs started in this process that have not ended."""
    return sum(1 for run in list(_STARTED) if not run.done)


class _StoppedWaiting(Exception):
    """A stop request arrived while the run was queued for a core (no chunk was run)."""


class Run:
    """One solver advanced on a background thread (or in the caller's, see :meth:`run`).

    Parameters
    ----------
    solver : Solver
    budget : Budget
    info : RunInfo
        Labels for the trace and the summary.
    run_id : str, optional
        Defaults to a short random id.
    chunk_seconds : float
        Target duration of one ``advance`` call (pause/stop latency).
    max_rows : int
        Trace thinning threshold.
    keep_iterates : bool
        Advance one iteration per call and keep every iterate and its active-set weights
        (for the 2-D/3-D teaching views; small problems only).
    step_delay : float
        Seconds to sleep between calls (animation speed of teaching views); not counted
        as solver time.

    Attributes
    ----------
    thread_niceness : int
        Niceness added to the background thread :meth:`start` launches (Linux; 0 = as
        the caller). The dashboard uses it so that its event loop, which holds the GIL
        while it streams, is never kept off the CPU by solver threads: a descheduled GIL
        holder stalls every solver thread that finishes a chunk.
    """

    def __init__(
        self,
        solver: Solver,
        budget: Budget | None = None,
        info: RunInfo | None = None,
        run_id: str | None = None,
        chunk_seconds: float = 0.02,
        max_rows: int = 100_000,
        keep_iterates: bool = False,
        step_delay: float = 0.0,
    ) -> None:
        self.solver = solver
        self.budget = budget or Budget()
        self.info = info or RunInfo()
        self.run_id = run_id or new_run_id()
        self.chunk_seconds = float(chunk_seconds)
        extras = tuple(c for c in solver.columns if c not in _SOLVER_BASE)
        self._objective_col = solver.columns.index("objective")
        self._certificate_col = solver.columns.index("certificate")
        self.trace = Trace(extras, max_rows=max_rows)
        if self.budget.max_work is not None and self.budget.max_work[0] not in extras:
            raise SettingError(
                f"max-work counter {self.budget.max_work[0]!r} is not recorded by this method; "
                f"its counters: {', '.join(extras) or 'none'}"
            )
        # True: the method stops itself exactly at its work budget (e.g. SAA spends all
        # its samples first and then keeps solving on them).
        self._work_in_solver = bool(solver.set_budget(self.budget))
        self.status = "ready"
        self.message = ""
        self.time_s = 0.0
        self.cpu_s = 0.0
        #: Wall seconds of the run's chunks, certificate evaluations included.
        self.wall_s = 0.0
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._resume = threading.Event()
        self._resume.set()
        self._subscribers: list[Callable[[Run, int], None]] = []
        self._done = threading.Event()
        self.keep_iterates = bool(keep_iterates)
        self.step_delay = float(step_delay)
        self.thread_niceness = 0
        self._iterates: list[tuple[int, np.ndarray, np.ndarray]] = []
        self._iterates_lock = threading.Lock()
        self._waiting_since: float | None = None
        self._stop_reason = "stopped by the user"
        self._ticket: cores.Ticket | None = None  # the last place taken in the core queue
        if self.keep_iterates:
            self._keep_iterate()

    # -- control ---------------------------------------------------------------------
    def start(self) -> Run:
        """Start on a daemon thread; returns immediately."""
        if self._thread is not None:
            raise RuntimeError(f"run {self.run_id} was already started")
        self._thread = threading.Thread(
            target=self._run_in_thread, name=f"ermviz-{self.run_id}", daemon=True
        )
        _STARTED.add(self)
        self._thread.start()
        return self

    def pause(self) -> None:
        """Hold the run between chunks (takes effect within one chunk)."""
        if self.status == "running":
            self._resume.clear()
            self.status = "paused"
            self.solver.interrupt(True)

    def resume(self) -> None:
        if self.status == "paused":
            self.status = "running"
        self.solver.interrupt(False)
        self._resume.set()

    def stop(self, reason: str = "stopped by the user") -> None:
        """End the run (status ``stopped``, message ``reason``); its trace is kept, ending
        with the last iterate."""
        self._stop_reason = reason
        self._stop.set()
        ticket = self._ticket
        if ticket is not None:
            ticket.cancel()  # queued for a core: leave the queue now
        self.solver.interrupt(True)
        self._resume.set()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the run to end; True if it has."""
        return self._done.wait(timeout)

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def waiting(self) -> bool:
        """True while the run has waited more than ``cores.WAITING_AFTER`` seconds for a
        core of the process-wide gate (:mod:`ermviz.cores`)."""
        since = self._waiting_since
        return since is not None and time.perf_counter() - since > cores.WAITING_AFTER

    def subscribe(self, callback: Callable[[Run, int], None]) -> None:
        """Call ``callback(run, first_new_seq)`` after each chunk (from the solver thread)."""
        self._subscribers.append(callback)

    def _run_in_thread(self) -> None:
        if self.thread_niceness and sys.platform.startswith("linux"):
            # On Linux a niceness belongs to a thread; raising one's own needs no privilege.
            with contextlib.suppress(OSError):
                tid = threading.get_native_id()
                os.setpriority(
                    os.PRIO_PROCESS,
                    tid,
                    os.getpriority(os.PRIO_PROCESS, tid) + self.thread_niceness,
                )
        self.run()

    # -- the loop --------------------------------------------------------------------
    def run(self) -> Run:
        """Advance until a budget, the tolerance, a stop request or an error ends the run."""
        if self.status in FINAL_STATUSES:
            return self
        self.status = "running"
        try:
            self._loop()
        except Exception as exc:  # a failing solver must not take other runs down
            self.status = "error"
            # One line: the CLI's JSON summary, the dashboard's toast and status strip and
            # a sweep's summary row all show it as one (numba's errors span many lines).
            text = " ".join(str(exc).split())
            self.message = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
            self._traceback = traceback.format_exc()
        finally:
            self._done.set()
            self._notify()
        return self

    def _loop(self) -> None:
        solver = self.solver
        budget = self.budget
        rows_per_call = 1
        while True:
            if not self._resume.is_set():
                while not self._resume.wait(0.05):
                    pass
            if self._stop.is_set():
                self._final_row("stopped", self._stop_reason)
                return
            if self.time_s >= budget.max_time:
                self._final_row("max_time", f"reached max_time={budget.max_time:g} s")
                return
            if budget.max_wall is not None and self.wall_s >= budget.max_wall:
                self._final_row("max_time", f"reached max_wall={budget.max_wall:g} s of wall time")
                return
            if (
                budget.max_work is not None
                and not self._work_in_solver
                and self._work_done() >= budget.max_work[1]
            ):
                name, limit = budget.max_work
                self._final_row("max_work", f"reached {name}={limit:g}")
                return
            remaining = budget.max_iter - solver.iteration
            n = 1 if self.keep_iterates else max(1, min(rows_per_call, remaining + 1))
            try:
                rows, status, dt = self._advance(n, budget.max_iter)
            except _StoppedWaiting:
                continue  # stopped while queued for a core: the loop's top ends the run
            if self.keep_iterates:
                self._keep_iterate()
            if status != STATUS_RUNNING:
                self._finish(status)
                return
            if self.step_delay > 0:
                self._stop.wait(self.step_delay)
            # Aim for chunk_seconds per call; grow at most 4x at a time.
            if dt > 0:
                rows_per_call = int(min(max(rows * self.chunk_seconds / dt, 1), 4 * rows + 1))
            else:
                rows_per_call = 4 * rows + 1

    def _work_done(self) -> float:
        last = self.trace.last()
        return 0.0 if last is None else last[self.budget.max_work[0]]

    def _advance(self, n: int, stop_at: int, gated: bool = True) -> tuple[int, int, float]:
        solver = self.solver
        # One core from the process-wide gate per chunk (ermviz.cores); the wait is not
        # solver time.
        core_gate = cores.gate() if gated else None
        if core_gate is not None:
            self._ticket = ticket = cores.Ticket()
            if self._stop.is_set():
                ticket.cancel()
            self._waiting_since = time.perf_counter()
            got = core_gate.acquire(ticket)
            self._waiting_since = None
            if not got:
                raise _StoppedWaiting
        try:
            e0, ec0 = solver.eval_seconds, solver.eval_cpu_seconds
            c0 = time.thread_time()
            t0 = time.perf_counter()
            rec, status = solver.advance(n, stop_at)
            elapsed = time.perf_counter() - t0
            c1 = time.thread_time()
        finally:
            if core_gate is not None:
                core_gate.release()
        rec, status = self._end_at_nonfinite(rec, status)
        self.wall_s += elapsed
        # Evaluation the method does not need itself is not solver time.
        dt = max(elapsed - (solver.eval_seconds - e0), 0.0)
        dc = max(c1 - c0 - (solver.eval_cpu_seconds - ec0), 0.0)
        k = rec.shape[0]
        # Spread the chunk's time evenly over its rows (iterations in a chunk cost alike).
        frac = np.arange(1, k + 1) / max(k, 1)
        times = self.time_s + dt * frac
        cpus = self.cpu_s + dc * frac
        self.time_s += dt
        self.cpu_s += dc
        first = self.trace.appended
        self.trace.append(self.solver.columns, rec, times, cpus)
        self._notify(first)
        return k, status, dt

    def _end_at_nonfinite(self, rec: np.ndarray, status: int) -> tuple[np.ndarray, int]:
        """The rows up to the first with a NaN objective or certificate (or an infinite
        objective), and ``STATUS_NONFINITE`` if there is one.

        The kernels stop there themselves; this holds the same line for any solver that
        does not (a Python adapter, a family kept outside the repository), which would
        otherwise run on NaN until its time budget with nothing to plot. A certificate of
        +inf is allowed: it means "no bound yet" (LS-SVM's relative gap while the dual
        objective is not positive).
        """
        if rec.shape[0] == 0 or status == STATUS_NONFINITE:
            return rec, status
        objective = rec[:, self._objective_col]
        certificate = rec[:, self._certificate_col]
        bad = ~np.isfinite(objective) | np.isnan(certificate) | (certificate == -np.inf)
        if not bad.any():
            return rec, status
        return rec[: int(np.argmax(bad)) + 1], STATUS_NONFINITE

    def _final_row(self, status: str, message: str) -> None:
        """Record the current iterate without stepping, then end with ``status``."""
        # A stop skips the core queue (one record, and the user is waiting for it).
        it = self.solver.iteration
        try:
            _, kstatus, _ = self._advance(1, it, gated=status != "stopped")
        except _StoppedWaiting:
            _, kstatus, _ = self._advance(1, it, gated=False)
        if kstatus in (STATUS_CONVERGED, STATUS_NONFINITE):
            self._finish(kstatus)
            return
        self.status = status
        self.message = message
        note = getattr(self.solver, "end_note", "")
        if note:
            self.message = f"{message}; {note}"

    def _finish(self, kstatus: int) -> None:
        self._finish_status(kstatus)
        note = getattr(self.solver, "end_note", "")
        if note and note not in self.message:
            self.message = f"{self.message}; {note}" if self.message else note

    def _finish_status(self, kstatus: int) -> None:
        last = self.trace.last() or {}
        it = int(last.get("iteration", 0))
        cert = last.get("certificate", float("nan"))
        if kstatus == STATUS_CONVERGED:
            self.status = "converged"
            self.message = f"certificate {cert:.3g} <= tol {self.budget.tol:g} at iteration {it}"
        elif kstatus == STATUS_MAX_ITER:
            self.status = "max_iter"
            self.message = f"reached max_iter={self.budget.max_iter}"
        elif kstatus == STATUS_STALLED:
            self.status = "stalled"
            if getattr(self.solver, "end_note", ""):
                self.message = f"stalled at iteration {it}"
            else:
                self.message = (
                    f"the step rule found no decrease at iteration {it} (certificate "
                    f"{cert:.3g}); the tolerance may be below what float64 resolves for this "
                    "step rule"
                )
        elif kstatus == STATUS_MAX_WORK:
            self.status = "max_work"
            if self.budget.max_work is not None:
                name, limit = self.budget.max_work
                self.message = f"reached {name}={limit:g} (no further step fits in it)"
            else:
                self.message = "the method's sample is used up"
        elif kstatus == STATUS_NONFINITE:
            self.status = "error"
            self.message = (
                f"objective or certificate became NaN/inf at iteration {it}; "
                "check the data scale or try another step rule"
            )
        else:
            self.status = KERNEL_STATUS_NAMES.get(kstatus, "error")

    def _notify(self, first_seq: int | None = None) -> None:
        seq = self.trace.appended if first_seq is None else first_seq
        for cb in list(self._subscribers):
            try:
                cb(self, seq)
            except Exception:  # a broken subscriber must not stop the solver
                pass

    def _keep_iterate(self) -> None:
        it = self.solver.iteration
        with self._iterates_lock:
            if self._iterates and self._iterates[-1][0] == it:
                return
            self._iterates.append((it, self.solver.iterate(), self.solver.active_weights()))

    def iterates(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Kept iterates (``keep_iterates=True``): iterations (k,), points (k, dim) and
        active-set weights (k, n_atoms)."""
        with self._iterates_lock:
            items = list(self._iterates)
        if not items:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0)), np.zeros((0, 0))
        its = np.array([i for i, _, _ in items], dtype=np.int64)
        return its, np.vstack([x for _, x, _ in items]), np.vstack([w for _, _, w in items])

    # -- results ---------------------------------------------------------------------
    def frame(self) -> pd.DataFrame:
        """The trace as a tidy DataFrame with the run's labels as columns."""
        return self.trace.to_frame(
            run_id=self.run_id,
            dataset=self.info.dataset,
            problem=self.info.problem,
            method=self.info.method,
            step=self.info.step,
            certificate_kind=self.solver.certificate_kind,
        )

    def summary(self) -> dict[str, Any]:
        """One dict per run: labels, status, final measures, budgets, versions."""
        last = self.trace.last() or {}
        return {
            "run_id": self.run_id,
            "label": self.info.label,
            "dataset": self.info.dataset,
            "problem": self.info.problem,
            "method": self.info.method,
            "step": self.info.step,
            "status": self.status,
            "message": self.message,
            "iterations": int(last.get("iteration", 0)),
            "time_s": self.time_s,
            "wall_s": self.wall_s,
            "cpu_s": self.cpu_s,
            "objective": last.get("objective", float("nan")),
            "gap": last.get("certificate", float("nan")),
            "certificate_kind": self.solver.certificate_kind,
            "tol": self.budget.tol,
            "max_iter": self.budget.max_iter,
            "max_time": self.budget.max_time,
            "max_wall": self.budget.max_wall,
            "settings": dict(self.info.settings),
            "versions": versions(),
        }


#: Runs started in this process (weakly held), for :func:`stop_all`.
_STARTED: weakref.WeakSet[Run] = weakref.WeakSet()
_SOLVER_BASE = BASE_COLUMNS


def versions() -> dict[str, str]:
    """Versions of the packages that decide the numbers."""
    import numba
    import scipy

    from ermviz._version import __version__

    return {
        "ermviz": __version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "numba": numba.__version__,
    }


def time_to_threshold(frame: pd.DataFrame, thresholds: tuple[float, ...]) -> dict[float, float]:
    """Solver time at which the certificate first fell to each threshold (NaN if never)."""
    out = {}
    cert = frame["certificate"].to_numpy()
    t = frame["time_s"].to_numpy()
    for eps in thresholds:
        hit = np.flatnonzero(cert <= eps)
        out[eps] = float(t[hit[0]]) if hit.size else float("nan")
    return out
