"""The conditional stochastic optimization family's methods: BSGD, BSpiderBoost and SAA.

* ``bsgd``: biased SGD (Hu, Chen & He, NeurIPS 2020, Algorithm 1; ALGORITHMS.md F.4):
  one outer sample and ``m`` inner samples per step, the biased estimator (3); fixed or
  growing inner batch, step ``gamma`` (``fixed``) or ``gamma / sqrt(t + 1)``
  (``inv-sqrt``); reports the step-weighted average of the iterates (the convex output
  of F.4) or the last iterate;
* ``bspiderboost``: biased SpiderBoost (Algorithm 2, F.5): a large batch ``n1`` at each
  epoch start, recursive corrections from ``n2`` pairs inside epochs of ``q`` steps;
* ``saa``: sample average approximation (F.6): ``outer x inner_batch`` samples drawn at
  once, then the deterministic problem (logistic regression on the averaged features)
  solved by damped Newton, one trace row per Newton step.

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

from ermviz.base import Solver, StepRuleSpec
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
    STEP_NEWTON,
    STEP_NONE,
    STEP_SGD,
)

k = kernel_module("solvers.cso", globals())

REFERENCES = {
    "bsgd": "Hu, Chen & He, NeurIPS 2020, Algorithm 1 (BSGD)",
    "bspiderboost": "Hu, Chen & He, NeurIPS 2020, Algorithm 2 (BSpiderBoost)",
    "saa": "Hu, Chen & He, NeurIPS 2020 (SAA baseline; Hu, Chen & He 2019, arXiv:1905.11957)",
}

#: Checkpoints: the next row at ``ceil(k * ROW_RATIO)`` iterations, at most ROW_SAMPLES
#: inner samples after the last one (about 10-20 ms of sampling at d = 10).
ROW_RATIO = 1.05
ROW_SAMPLES = 200_000
#: SAA's outer samples when neither ``outer`` nor a samples budget gives them.
DEFAULT_OUTER = 20_000

_GAMMA = Setting(
    "gamma",
    "float",
    0.0,
    "step size gamma; 0 = the problem's suggested step (invariant-logreg 0.03, maml-sine 0.01)",
    low=0.0,
)
_ADAM = (
    Setting("gamma", "float", 1e-3, "Adam's step size (Kingma & Ba: 1e-3)", low=0.0,
            low_open=True),
    Setting("beta1", "float", 0.9, "decay of the first moment", low=0.0, high=1.0, high_open=True),
    Setting("beta2", "float", 0.999, "decay of the second moment", low=0.0, high=1.0,
            high_open=True),
    Setting("eps", "float", 1e-8, "added to the root of the second moment", low=0.0,
            low_open=True),
)  # fmt: skip
STEP_RULES: dict[str, StepRuleSpec] = {
    "fixed": StepRuleSpec("fixed", "constant step gamma", (_GAMMA,), REFERENCES["bsgd"]),
    "inv-sqrt": StepRuleSpec(
        "inv-sqrt",
        "gamma / sqrt(t + 1) (the convex schedule of F.4)",
        (_GAMMA,),
        REFERENCES["bsgd"],
    ),
    "adam": StepRuleSpec(
        "adam",
        "Adam update of the biased estimate (bias-corrected moments)",
        _ADAM,
        "Kingma & Ba, ICLR 2015; Hu, Chen & He, NeurIPS 2020, Appendix D (the Adam variant)",
    ),
    "newton-ls": StepRuleSpec(
        "newton-ls",
        "Newton step with backtracking (Armijo 1e-4) on the sample-average objective",
        (),
        "Boyd & Vandenberghe 2004, Algorithm 9.5",
    ),
}

_INNER = Setting(
    "inner_batch", "int", 10, "inner samples m per outer sample (>= 1)", low=1, high=1e7
)


class CsoSolver(Solver):
    """Shared state, checkpoints and evaluation of the family's methods."""

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
        self.settings = settings
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
        return int(self.settings["inner_batch"])

    def step_size(self) -> float:
        """The step rule's ``gamma``, or the problem's suggested step when it is 0."""
        gamma = float(self.settings.get("gamma", 0.0))
        return gamma if gamma > 0.0 else float(self.problem.suggested_step)

    # -- what each method provides ---------------------------------------------------------
    @abstractmethod
    def _steps(self, stop_at: int) -> None:
        """Advance to iteration ``stop_at`` (or the samples budget); sets ``I_STATUS``."""

    def _reported(self) -> np.ndarray:
        """The iterate the method reports (and the trace evaluates)."""
        return self.x

    def _inner_batch(self) -> float:
        return float(self.settings.get("inner_batch", 0))

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


class BsgdSolver(CsoSolver):
    """BSGD (Algorithm 1): one outer and ``m_t`` inner samples per step."""

    name = "bsgd"

    def __init__(self, problem, step, settings, tol):
        super().__init__(problem, step, settings, tol)
        self.xavg = self.x.copy()
        self._gamma = self.step_size()
        self._decay = 1 if step == "inv-sqrt" else 0
        self._growth = float(settings["inner_growth"])
        self._steps(0)  # compile or load the kernel outside the timed region
        self.istate[k.I_STATUS] = STATUS_RUNNING

    def _inner_batch(self) -> float:
        m, t = int(self.settings["inner_batch"]), int(self.istate[k.I_K])
        return float(m if self._growth == 0.0 else math.ceil(m * (t + 1.0) ** self._growth))

    def _reported(self) -> np.ndarray:
        if self.settings["output"] in ("auto", "average") and self.istate[k.I_K] > 0:
            return self.xavg
        return self.x

    def _steps(self, stop_at: int) -> None:
        p = self.problem
        k.bsgd_advance(
            p.A, p.y, self.key, self.x, self.xavg, self.eta, self.istate, self.fstate,
            int(self.settings["inner_batch"]), self._growth, self._gamma, self._decay, p.l2,
            stop_at,
        )  # fmt: skip
        self._last_step = float(self.fstate[1])


class SpiderSolver(CsoSolver):
    """BSpiderBoost (Algorithm 2): SPIDER estimator with biased inner batches."""

    name = "bspiderboost"

    def _first_step_samples(self) -> int:
        return int(self.settings["n1"]) * int(self.settings["inner_batch"])

    def __init__(self, problem, step, settings, tol):
        super().__init__(problem, step, settings, tol)
        self.xprev = self.x.copy()
        self.v = np.zeros(problem.d)
        self._steps(0)
        self.istate[k.I_STATUS] = STATUS_RUNNING

    def _next_checkpoint(self, it: int) -> int:
        s = self.settings
        per_step = int(s["inner_batch"]) * (int(s["n1"]) / int(s["q"]) + int(s["n2"]))
        gap = max(1, min(math.ceil(it * (ROW_RATIO - 1.0)), int(ROW_SAMPLES // per_step)))
        return it + gap

    def _steps(self, stop_at: int) -> None:
        p, s = self.problem, self.settings
        k.spider_advance(
            p.A, p.y, self.key, self.x, self.xprev, self.v, self.eta, self.istate, self.fstate,
            int(s["inner_batch"]), int(s["q"]), int(s["n1"]), int(s["n2"]), self.step_size(),
            p.l2, stop_at,
        )  # fmt: skip
        self._last_step = float(self.fstate[1])


class SaaSolver(CsoSolver):
    """SAA (F.6): draw ``outer x inner_batch`` samples, then Newton on their average."""

    step_kind = STEP_NEWTON
    name = "saa"

    def __init__(self, problem, step, settings, tol):
        super().__init__(problem, step, settings, tol)
        self.outer = int(settings["outer"])
        self.E: np.ndarray | None = None
        self.b: np.ndarray | None = None
        self._done = False
        # Compile or load the sampling kernel outside the timed region (no draw).
        scratch = np.zeros(k.N_ISTATE, dtype=np.int64)
        k.saa_draw(problem.A, problem.y, self.key, scratch, 1, 1.0, np.empty((0, problem.d)),
                   np.empty(0))  # fmt: skip

    def set_budget(self, budget: Any) -> bool:
        work = getattr(budget, "max_work", None)
        m = int(self.settings["inner_batch"])
        if self.outer == 0:
            samples = work is not None and work[0] == "samples"
            self.outer = int(work[1] // m) if samples else DEFAULT_OUTER
        return super().set_budget(budget)

    def _first_step_samples(self) -> int:
        return max(self.outer, 1) * int(self.settings["inner_batch"])

    def _next_checkpoint(self, it: int) -> int:
        return it + 1  # a row per Newton step

    def _draw(self) -> None:
        m = int(self.settings["inner_batch"])
        self.outer = self.outer or DEFAULT_OUTER  # (a solver used without a runner)
        self.E = np.empty((self.outer, self.problem.d))
        self.b = np.empty(self.outer)
        p = self.problem
        k.saa_draw(p.A, p.y, self.key, self.istate, m, float(self.fstate[2]), self.E, self.b)

    def _steps(self, stop_at: int) -> None:
        if self.E is None:
            self._draw()
        if self.istate[k.I_K] >= stop_at:
            return
        if self._done:
            return
        E, b, l2, x = self.E, self.b, self.problem.l2, self.x
        n = E.shape[0]
        z = E @ x
        p = 0.5 * (1.0 - np.tanh(0.5 * b * z))
        grad = -(E.T @ (b * p)) / n + l2 * x
        if float(np.linalg.norm(grad)) <= 1e-12:
            self._done = True  # solved on its sample: the samples are its whole budget
            return
        w = p * (1.0 - p) / n
        H = E.T @ (E * w[:, None])
        H[np.diag_indices_from(H)] += l2 + 1e-14
        step = np.linalg.solve(H, -grad)
        f0 = _saa_value(E, b, x, l2)
        t = 1.0
        while t > 1e-12 and _saa_value(E, b, x + t * step, l2) > f0 + 1e-4 * t * (grad @ step):
            t *= 0.5
        self.x = x + t * step
        self._last_step = t * float(np.linalg.norm(step))
        self.istate[k.I_K] += 1
        self.istate[k.I_STATUS] = STATUS_RUNNING


def _saa_value(E: np.ndarray, b: np.ndarray, x: np.ndarray, l2: float) -> float:
    s = -b * (E @ x)
    return float(np.mean(np.logaddexp(0.0, s)) + 0.5 * l2 * (x @ x))
