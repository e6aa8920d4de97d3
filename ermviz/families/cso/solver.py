"""The conditional stochastic optimization family's solver base: the state, the samples
budget, the checkpoints and their evaluation that every method of the family shares
(:mod:`.methods` on ``invariant-logreg``, :mod:`.maml_methods` on ``maml-sine``).

Every method counts its inner samples (column ``samples``, the budget of F.7: ``--max-samples``
stops a run exactly before a step that would exceed it) and records, at checkpoints
spaced geometrically in iterations (at most :data:`ROW_SAMPLES` samples apart), the
estimated ``F`` of its reported iterate and the gap to ``F(x*)``; that evaluation is
outside the timed region (``eval_seconds``).
"""

from __future__ import annotations

import math
import time
from abc import abstractmethod
from typing import Any

import numpy as np

from ermviz.base import Method, Solver
from ermviz.errors import SettingError
from ermviz.families.cso.problem import InvariantLogregProblem
from ermviz.families.lazy import kernel_module
from ermviz.settings import Setting
from solvers.tags import (
    BASE_COLUMNS,
    STATUS_CONVERGED,
    STATUS_MAX_ITER,
    STATUS_MAX_WORK,
    STATUS_NONFINITE,
    STATUS_RUNNING,
    STEP_NONE,
    STEP_SGD,
)

k = kernel_module("solvers.cso", globals())

#: Checkpoints: the next row at ``ceil(k * ROW_RATIO)`` iterations, at most ROW_SAMPLES
#: inner samples after the last one (about 10-20 ms of sampling at d = 10).
ROW_RATIO = 1.05
ROW_SAMPLES = 200_000

#: Settings several of the family's methods declare.
INNER_BATCH = Setting(
    "inner_batch", "int", 10, "inner samples m per outer sample (>= 1)", low=1, high=1e7
)
SEED = Setting("seed", "int", 0, "seed of the run's sample stream", low=0)


class CsoSolver(Solver, Method):
    """Shared state, checkpoints and evaluation of the family's methods; a subclass that
    sets the declaration's class attributes (:class:`ermviz.base.Method`) is one method.
    ``config`` holds the run's validated settings."""

    family = "cso"
    columns = (*BASE_COLUMNS, "samples", "inner_batch")
    summary_columns = ("samples",)
    #: What one unit of the samples budget is, for messages.
    sample_word = "inner samples"
    step_kind = STEP_SGD
    name = ""

    def __init__(
        self, problem: InvariantLogregProblem, step: str, settings: dict[str, Any], tol: float
    ):
        self.problem = problem
        self.certificate_kind = problem.certificate_kind
        self.step_rule = step
        self.config = settings
        self.tol = float(tol)
        self.seed = int(settings.get("seed", 0))
        # The stream's key: a run is a function of its seed only.
        self.key = np.uint64(np.random.SeedSequence(self.seed).generate_state(1, np.uint64)[0])
        self.istate = np.zeros(k.N_ISTATE, dtype=np.int64)
        self.istate[k.I_LIMIT] = -1
        self.fstate = np.zeros(3)
        self.fstate[2] = math.sqrt(problem.noise_var)
        self.x = problem.initial_point()
        self.eta = np.zeros(problem.d)
        self._rec = np.empty((64, len(self.columns)))
        self._last_step = 0.0

    # -- budget ------------------------------------------------------------------------
    def set_budget(self, budget: Any) -> bool:
        """A samples budget (``max_work=("samples", N)``): stop exactly before a step whose
        inner samples would exceed it; refuse one smaller than the first step's."""
        work = getattr(budget, "max_work", None)
        if work is None or work[0] != "samples":
            return False
        self.istate[k.I_LIMIT] = int(work[1])
        if self.istate[k.I_STATUS] == STATUS_MAX_WORK:
            self.istate[k.I_STATUS] = STATUS_RUNNING  # a new, larger budget continues the run
        first = self._first_step_samples()
        if work[1] < first:
            raise SettingError(
                f"--max-samples {work[1]:g} is smaller than one step of {self.name}, which "
                f"draws {first:,} {self.sample_word}; raise it to at least {first:,} or lower "
                "inner_batch"
            )
        return True

    def _first_step_samples(self) -> int:
        return int(self.config["inner_batch"])

    def step_size(self) -> float:
        """The step rule's ``gamma``, or the problem's suggested step when it is 0."""
        gamma = float(self.config.get("gamma", 0.0))
        return gamma if gamma > 0.0 else float(self.problem.suggested_step)

    # -- what each method provides ---------------------------------------------------------
    @abstractmethod
    def _steps(self, stop_at: int) -> None:
        """Advance to iteration ``stop_at`` (or the samples budget); sets ``I_STATUS``."""

    def _reported(self) -> np.ndarray:
        """The iterate the method reports (and the trace evaluates)."""
        return self.x

    def _inner_batch(self) -> float:
        return float(self.config.get("inner_batch", 0))

    def _next_checkpoint(self, it: int) -> int:
        per_step = max(1.0, self._inner_batch())
        gap = max(1, min(math.ceil(it * (ROW_RATIO - 1.0)), int(ROW_SAMPLES // per_step)))
        return it + gap

    # -- the row loop ------------------------------------------------------------------------
    def advance(self, max_rows: int, stop_at: int) -> tuple[np.ndarray, int]:
        if max_rows > self._rec.shape[0]:
            self._rec = np.empty((max(max_rows, 2 * self._rec.shape[0]), len(self.columns)))
        rec = self._rec
        for row in range(max_rows):
            it = int(self.istate[k.I_K])
            status = self._record(rec[row], it >= stop_at)
            if status != STATUS_RUNNING:
                return rec[: row + 1], status
            if self.istate[k.I_STATUS] == STATUS_MAX_WORK:
                return rec[: row + 1], STATUS_MAX_WORK  # the budget stopped the last steps
            self._steps(min(stop_at, self._next_checkpoint(it)))
            if int(self.istate[k.I_K]) == it:  # no step fitted in the budget: final row
                return rec[: row + 1], STATUS_MAX_WORK
            rec[row, 3] = self._last_step
            rec[row, 4] = self.step_kind
        return rec[:max_rows], STATUS_RUNNING

    def _record(self, out: np.ndarray, at_stop: bool) -> int:
        """Write the current checkpoint (evaluated outside the timed region); returns the
        status that ends the run here, or running."""
        t0, c0 = time.perf_counter(), time.thread_time()
        x = self._reported()
        f = self.problem.objective(x)
        gap = f - self.problem.f_star
        self.eval_seconds += time.perf_counter() - t0
        self.eval_cpu_seconds += time.thread_time() - c0
        out[0] = self.istate[k.I_K]
        out[1] = f
        out[2] = gap
        out[3] = 0.0
        out[4] = STEP_NONE
        out[5] = float(np.count_nonzero(x))
        out[6] = self.istate[k.I_SAMPLES]
        out[7] = self._inner_batch()
        if not math.isfinite(f):
            return STATUS_NONFINITE
        if gap <= self.tol:
            return STATUS_CONVERGED
        if at_stop:
            return STATUS_MAX_ITER
        return STATUS_RUNNING

    def iterate(self) -> np.ndarray:
        return self._reported().copy()

    @property
    def iteration(self) -> int:
        return int(self.istate[k.I_K])
