"""The TUFW family's method classes: TUFW, SPIDER-FW, CSFW and exact-gradient FW for GLM
losses, each carrying its declaration (:class:`ermviz.base.Method`) and its settings.

Adapters of the kernels in :mod:`solvers.tufw` (Xiong & Freund, SIAM J. Optim.; Yurtsever,
Sra & Cevher, ICML 2019; Negiar et al., ICML 2020): each packs the problem's arrays, owns
the state and record buffers and advances in chunks for the runner.

Timing. TUFW, SPIDER-FW and CSFW never need the exact gradient; their trace rows carry
the exact objective and FW gap anyway, computed by replaying the logged steps
(:func:`solvers.tufw.replay_eval`) outside the timed region and reported through
``eval_seconds`` / ``eval_cpu_seconds``. Each ``advance`` call runs the kernel up to the
next *checkpoint* (iterations ``0 .. eval_every`` and then every ``max(eval_every,
eval_growth * k)`` iterations) and returns that one row, so the row's time is the exact
kernel time up to it; the kernel's call overhead (measured at construction) is not
counted. Non-convex runs evaluate the gap at *every* iterate (the running average
``avg_fw_gap`` needs them all) and stop on the running average.
"""

from __future__ import annotations

import math
import time
from abc import abstractmethod
from typing import Any

import numpy as np
import scipy.sparse as sp

from ermviz.base import Method, Problem, Solver
from ermviz.errors import SettingError
from ermviz.families.frank_wolfe.methods import FW_SETTINGS
from ermviz.families.frank_wolfe.problems import LogregL1
from ermviz.families.lazy import KernelConstant, kernel_module
from ermviz.families.tufw.problem import NonconvexL1
from ermviz.settings import Setting
from solvers.tags import STATUS_CONVERGED, STATUS_NONFINITE, STATUS_RUNNING, TAYLOR_CODES

k = kernel_module("solvers.tufw", globals())
linalg = kernel_module("solvers.linalg", globals())


# -- the methods' settings ---------------------------------------------------------------
K_SETTING = Setting(
    "K",
    "int",
    10000,
    "horizon K fixed in advance (constant step 1/sqrt(K+1), K-rules of TUFW)",
    low=1,
    high=10**12,
)

EVAL_SETTINGS = (
    Setting(
        "eval_every",
        "int",
        1,
        "checkpoint (trace row, exact gap) spacing in iterations, at least",
        low=1,
        high=10**9,
    ),
    Setting(
        "eval_growth",
        "float",
        0.01,
        "checkpoint spacing also grows like k * eval_growth (0 = fixed spacing); "
        "non-convex runs still evaluate every iterate for the running average",
        low=0.0,
        high=10.0,
    ),
    Setting("seed", "int", 0, "seed of the sampling", low=0, high=2**62),
)

TAYLOR_SETTINGS = (
    K_SETTING,
    Setting(
        "rounding",
        "choice",
        "ceil",
        "round batch sizes n/sqrt(k), n/K^(1/4) and the period K^(1/4) up or down",
        choices=("ceil", "floor"),
    ),
    Setting("offset", "int", 0, "use k + offset in the rule formulas", low=0, high=1),
    Setting(
        "replace",
        "bool",
        False,
        "SBD rules: draw the batch with replacement (default: without)",
    ),
    Setting(
        "rebuild_h_every",
        "int",
        1000,
        "rebuild h = H x and x^T H x from H every this many iterations (0 = never)",
        low=0,
        high=10**9,
    ),
    Setting(
        "rebuild_H_passes",
        "int",
        20,
        "rebuild q and H from the stored t_i after this many n partial resets (0 = never); "
        "full resets always rebuild",
        low=0,
        high=10**6,
    ),
    *EVAL_SETTINGS,
)

RULE_SETTING = Setting(
    "rule",
    "choice",
    "dbd-sqrtk",
    "Taylor-point rule: sbd-sqrtk, dbd-sqrtk, sbd-k4, dbd-k4",
    choices=tuple(TAYLOR_CODES),
)


def sampling_settings(replace_default: bool, epoch: bool) -> tuple[Setting, ...]:
    out = [
        Setting(
            "batch",
            "int",
            0,
            "samples per iteration (0 = ceil(sqrt(n)))",
            low=0,
            high=10**9,
        ),
        Setting("replace", "bool", replace_default, "draw the batch with replacement"),
    ]
    if epoch:
        out.append(
            Setting(
                "epoch",
                "int",
                0,
                "iterations per epoch: a full gradient starts each (0 = ceil(sqrt(n)))",
                low=0,
                high=10**9,
            )
        )
    return (*out, *EVAL_SETTINGS)


PROBLEMS_SOLVED = (LogregL1.name, NonconvexL1.name)
OPEN_LOOP = ("diminishing", "nonconvex", "constant-sqrt")
TUFW_STEPS = ("taylor-adaptive", "taylor-exact", *OPEN_LOOP)
XF = "Xiong & Freund, SIAM J. Optim. (Algorithm 2.1)"


def _loss_code(problem: Problem) -> int:
    if isinstance(problem, NonconvexL1):
        return k.LOSS_CODES[problem.loss]
    return k.LOSS_LOGISTIC


def _is_nonconvex(problem: Problem) -> bool:
    return isinstance(problem, NonconvexL1)


def _certificate_kind(problem: Problem) -> str:
    if not _is_nonconvex(problem):
        return "fw_gap"
    return problem.certificate_kind_for(problem.settings)


def _require_l1(problem: LogregL1, method: str) -> None:
    """The TUFW kernels' LMO is the l1 ball's: another ``constraint`` is a one-line error."""
    if problem.constraint != "l1":
        raise SettingError(
            f"{method} runs over the l1 ball only, not constraint={problem.constraint}: "
            "drop the constraint setting or use a Frank-Wolfe method (fw, afw, pfw, bpcg, "
            "boosted)"
        )


def _kernel_matrices(problem: LogregL1) -> tuple[Any, Any]:
    """The data by rows (samples) and by columns (``X^T`` by rows), in kernel form."""
    X = problem.X
    if sp.issparse(X):
        return linalg.as_kernel_matrix(sp.csr_matrix(X)), linalg.as_kernel_matrix(X.T.tocsr())
    return linalg.as_kernel_matrix(X), linalg.as_kernel_matrix(np.ascontiguousarray(X.T))


def _sqrt_n(n: int) -> int:
    return max(1, math.isqrt(n - 1) + 1) if n > 1 else 1


def _step_codes(step: str, settings: dict[str, Any], problem: Problem) -> tuple[int, int]:
    """(step code, cap code) of the kernels in :mod:`solvers.tufw`."""
    if step == "taylor-adaptive":
        cap = settings.get("cap", "auto")
        if cap == "auto":
            cap = "nonconvex" if _is_nonconvex(problem) else "diminishing"
        return k.STEP_TAYLOR, k.OPEN_LOOP_CODES[cap]
    if step == "taylor-exact":
        return k.STEP_TAYLOR, k.OL_ONE
    if step == "adaptive":
        return k.STEP_BACKTRACK, k.OL_ONE
    return k.OPEN_LOOP_CODES[step], k.OL_ONE


def _overhead(call: Any, repeats: int = 40) -> tuple[float, float]:
    """Smallest wall and CPU time of a zero-iteration kernel call (dispatch overhead)."""
    walls, cpus = [], []
    for _ in range(repeats):
        c0 = time.thread_time()
        t0 = time.perf_counter()
        call()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.thread_time() - c0)
    return min(walls), min(cpus)


# -- solvers ------------------------------------------------------------------------------
class EstimatorSolver(Solver, Method):
    """Shared glue of TUFW, SPIDER-FW and CSFW: kernel runs, exact evaluation by replay.

    Subclasses are one method each, carry its declaration and set up their own state
    arrays and ``_kernel(log) -> rows``.
    """

    columns = KernelConstant("solvers.tufw", "OUT_COLUMNS")
    family = "tufw"
    problems = PROBLEMS_SOLVED
    LOG_CAP = 1 << 15
    EVAL_TARGET = 0.05  # seconds of replay per kernel call when every iterate is evaluated

    def __init__(self, problem: Problem, step: str, settings: dict[str, Any], tol: float):
        if not isinstance(problem, LogregL1):  # the registry pairs these with l1 GLMs only
            raise TypeError(f"{type(self).__name__} does not solve {problem.name}")
        _require_l1(problem, self.name or "this method")
        self.problem = problem
        self.tol = float(tol)
        self.certificate_kind = _certificate_kind(problem)
        self._X, self._XT = _kernel_matrices(problem)
        self.n, self.p = problem.n, problem.p
        self.x = problem.initial_point().astype(np.float64)
        self.istate = np.zeros(k.N_ISTATE, dtype=np.int64)
        self.fstate = np.zeros(k.N_FSTATE)
        step_code, cap = _step_codes(step, settings, problem)
        self.istate[k.I_LOSS] = _loss_code(problem)
        self.istate[k.I_STEP] = step_code
        self.istate[k.I_CAP] = cap
        self.istate[k.I_HORIZON] = int(settings.get("K", 10000))
        self.istate[k.I_EVAL_EVERY] = int(settings.get("eval_every", 1))
        self.fstate[k.F_EVAL_GROWTH] = float(settings.get("eval_growth", 0.01))
        seed = int(settings.get("seed", 0))
        mixed = (seed * 0x9E3779B97F4A7C15 + 0xD1B54A32D192ED03) % (1 << 64)
        self.rng = np.array([mixed], dtype=np.uint64)
        self.perm = np.arange(self.n, dtype=np.int64)
        # Replay (evaluation) state: its own copy of the iterate.
        nonconvex = _is_nonconvex(problem)
        every = self.istate[k.I_EVAL_EVERY] == 1 and self.fstate[k.F_EVAL_GROWTH] == 0.0
        self._xe = self.x.copy()
        self._z = np.asarray(problem.margins(self._xe), dtype=np.float64).copy()
        self._r = np.zeros(self.n)
        self._g = np.zeros(self.p)
        self.estate = np.zeros(k.N_ESTATE)
        self.jstate = np.zeros(k.N_JSTATE, dtype=np.int64)
        self.jstate[k.J_ALL] = 1 if (nonconvex or every) else 0
        self.jstate[k.J_TOL_AVG] = 1 if nonconvex else 0
        self.jstate[k.J_METRIC_AVG] = (
            1 if nonconvex and problem.settings.get("metric") == "avg-fw-gap" else 0
        )
        self.jstate[k.J_Z_EVERY] = 1000
        self._log = np.zeros((self.LOG_CAP, k.N_LOG))
        self._out = np.zeros((self.LOG_CAP, len(self.columns)))
        self._done: tuple[np.ndarray, int] | None = None
        self._eval_per_iter = 0.0

    def _finish_init(self) -> None:
        """Compile (or load) both kernels now and measure the kernel call overhead."""
        self._kernel(self._log[:0])
        self._replay(0, self._out)
        self._overhead_wall, self._overhead_cpu = _overhead(lambda: self._kernel(self._log[:0]))

    @abstractmethod
    def _kernel(self, log: np.ndarray) -> int:
        """Run the method's kernel on ``log`` (rows = iterations); rows written."""

    def _replay(self, nlog: int, out: np.ndarray) -> int:
        return k.replay_eval(
            self._XT,
            self.problem.y,
            int(self.istate[k.I_LOSS]),
            self.problem.radius,
            self._xe,
            self._z,
            self._r,
            self._g,
            self._log,
            nlog,
            self.n,
            self.estate,
            self.jstate,
            self.tol,
            out,
        )

    def _cap(self) -> int:
        """Iterations per kernel call: all until the checkpoint, unless every iterate is
        evaluated, then as many as ``EVAL_TARGET`` seconds of replay allow."""
        if not self.jstate[k.J_ALL] or self._eval_per_iter <= 0.0:
            return self.LOG_CAP if not self.jstate[k.J_ALL] else 1
        return int(min(self.LOG_CAP, max(1, self.EVAL_TARGET / self._eval_per_iter)))

    def advance(self, max_rows: int, stop_at: int) -> tuple[np.ndarray, int]:
        if self._done is not None:
            return self._done
        if max_rows <= 0:  # no row asked for (the kernel always writes at least one)
            return np.zeros((0, len(self.columns))), int(self.istate[k.I_STATUS])
        w_in = time.perf_counter()
        c_in = time.thread_time()
        self.istate[k.I_STOP_AT] = stop_at
        self.istate[k.I_MAX_CHECKS] = 1
        kern_w = 0.0
        kern_c = 0.0
        rows = 0
        status = STATUS_RUNNING
        while True:
            cap = self._cap()
            c0 = time.thread_time()
            t0 = time.perf_counter()
            nlog = self._kernel(self._log[:cap])
            kern_w += max(time.perf_counter() - t0 - self._overhead_wall, 0.0)
            kern_c += max(time.thread_time() - c0 - self._overhead_cpu, 0.0)
            kstatus = int(self.istate[k.I_STATUS])
            if rows + nlog > self._out.shape[0]:
                grown = np.zeros((2 * (rows + nlog), len(self.columns)))
                grown[:rows] = self._out[:rows]
                self._out = grown
            r0 = time.perf_counter()
            got = self._replay(nlog, self._out[rows:])
            if self.jstate[k.J_ALL] and nlog:
                per = (time.perf_counter() - r0) / nlog
                old = self._eval_per_iter
                self._eval_per_iter = per if old == 0.0 else 0.7 * old + 0.3 * per
            rows += got
            jstatus = int(self.jstate[k.J_STATUS])
            if jstatus in (STATUS_CONVERGED, STATUS_NONFINITE):
                status = jstatus
                break
            if kstatus != STATUS_RUNNING:
                status = kstatus
                break
            if rows > 0:
                break
        spent_w = time.perf_counter() - w_in
        spent_c = time.thread_time() - c_in
        self.eval_seconds += max(spent_w - kern_w, 0.0)
        self.eval_cpu_seconds += max(spent_c - kern_c, 0.0)
        result = self._out[:rows]
        if status == STATUS_CONVERGED:
            self._done = (result[-1:].copy(), status)
        return result, status

    def iterate(self) -> np.ndarray:
        return self._xe.copy()

    @property
    def iteration(self) -> int:
        return int(self.jstate[k.J_K])


class TufwSolver(EstimatorSolver):
    """TUFW (Algorithm 2.1 of Xiong & Freund) with the O(p) maintenance of ``h = H x``.

    State: ``t`` (n,) Taylor margins, ``q`` (p,), ``H`` (p, p; upper triangle), ``h``
    (p,) and ``kappa`` (in ``fstate``). Settings: ``rule`` and its rounding options,
    ``K``, drift control (``rebuild_h_every``, ``rebuild_H_passes``), evaluation schedule.
    """

    name = "tufw"
    title = "Taylor-approximated-gradient Frank-Wolfe (TUFW)"
    step_rules = TUFW_STEPS
    settings = (RULE_SETTING, *TAYLOR_SETTINGS)
    reference = XF

    def __init__(
        self,
        problem: Problem,
        step: str,
        settings: dict[str, Any],
        tol: float,
        rule: str | None = None,
    ) -> None:
        super().__init__(problem, step, settings, tol)
        self.rule = rule or settings.get("rule", "dbd-sqrtk")
        self.istate[k.I_RULE] = k.TAYLOR_CODES[self.rule]
        self.istate[k.I_CEIL] = 1 if settings.get("rounding", "ceil") == "ceil" else 0
        self.istate[k.I_OFFSET] = int(settings.get("offset", 0))
        self.istate[k.I_REPLACE] = 1 if settings.get("replace", False) else 0
        self.istate[k.I_H_EVERY] = int(settings.get("rebuild_h_every", 1000))
        self.istate[k.I_HH_PASSES] = int(settings.get("rebuild_H_passes", 20))
        self.t = np.zeros(self.n)
        self.q = np.zeros(self.p)
        self.H = np.zeros((self.p, self.p))
        self.h = np.zeros(self.p)
        self._gs = np.zeros(self.p)
        self._wbuf = np.zeros(self.n)
        self._cbuf = np.zeros(self.n)
        self._finish_init()

    def _kernel(self, log: np.ndarray) -> int:
        return k.tufw_advance(
            self._X,
            self._XT,
            self.problem.y,
            self.problem.radius,
            self.x,
            self.t,
            self.q,
            self.H,
            self.h,
            self._gs,
            self._wbuf,
            self._cbuf,
            self.perm,
            self.rng,
            self.istate,
            self.fstate,
            log,
        )

    @property
    def gradient_estimate(self) -> np.ndarray:
        """``q + H x`` at the kernel's iterate ``self.x``."""
        return self.q + self.h

    def hessian(self) -> np.ndarray:
        """The full symmetric ``H`` from its stored upper triangle."""
        U = np.triu(self.H)
        return U + np.triu(U, 1).T


class SpiderFwSolver(EstimatorSolver):
    """SPIDER-FW (Yurtsever, Sra & Cevher, ICML 2019): epochs of ``epoch`` iterations,
    each starting with a full gradient, then SARAH/SPIDER minibatch corrections of
    ``batch`` samples (defaults ``ceil(sqrt(n))``, the paper's values are unconfirmed)."""

    name = "spider-fw"
    title = "SPIDER Frank-Wolfe (recursive variance-reduced gradient estimator)"
    step_rules = OPEN_LOOP
    settings = sampling_settings(True, epoch=True)
    reference = "Yurtsever, Sra & Cevher, ICML 2019"

    def __init__(self, problem: Problem, step: str, settings: dict[str, Any], tol: float):
        super().__init__(problem, step, settings, tol)
        self.istate[k.I_BATCH] = int(settings.get("batch") or _sqrt_n(self.n))
        self.istate[k.I_EPOCH] = int(settings.get("epoch") or _sqrt_n(self.n))
        self.istate[k.I_REPLACE] = 1 if settings.get("replace", True) else 0
        if not self.istate[k.I_REPLACE] and self.istate[k.I_BATCH] > self.n:
            self.istate[k.I_BATCH] = self.n
        self.xprev = self.x.copy()
        self.v = np.zeros(self.p)
        self._finish_init()

    def _kernel(self, log: np.ndarray) -> int:
        return k.spider_advance(
            self._X,
            self.problem.y,
            self.problem.radius,
            self.x,
            self.xprev,
            self.v,
            self.perm,
            self.rng,
            self.istate,
            self.fstate,
            log,
        )

    @property
    def gradient_estimate(self) -> np.ndarray:
        return self.v.copy()


class CsfwSolver(EstimatorSolver):
    """Constant-batch stochastic FW (Negiar et al., ICML 2020; SAG-type variant as in the
    reference implementation copt ``minimize_sfw``): per-sample memory ``alpha_i``,
    ``batch`` samples per iteration (default ``ceil(sqrt(n))``, unconfirmed)."""

    name = "csfw"
    title = "constant-batch stochastic Frank-Wolfe (SAG-type memory)"
    step_rules = OPEN_LOOP
    settings = sampling_settings(True, epoch=False)
    reference = "Negiar et al., ICML 2020"

    def __init__(self, problem: Problem, step: str, settings: dict[str, Any], tol: float):
        super().__init__(problem, step, settings, tol)
        self.istate[k.I_BATCH] = int(settings.get("batch") or _sqrt_n(self.n))
        self.istate[k.I_REPLACE] = 1 if settings.get("replace", True) else 0
        if not self.istate[k.I_REPLACE] and self.istate[k.I_BATCH] > self.n:
            self.istate[k.I_BATCH] = self.n
        self.alpha = np.zeros(self.n)
        self.r = np.zeros(self.p)
        self._finish_init()

    def _kernel(self, log: np.ndarray) -> int:
        return k.csfw_advance(
            self._X,
            self.problem.y,
            self.problem.radius,
            self.x,
            self.alpha,
            self.r,
            self.perm,
            self.rng,
            self.istate,
            self.fstate,
            log,
        )

    @property
    def gradient_estimate(self) -> np.ndarray:
        return self.r.copy()


class GlmFrankWolfeSolver(Solver, Method):
    """Method ``fw-nc``: plain FW (Frank & Wolfe 1956) with the exact gradient for any
    loss code (``fw-nc``, ``fw-ada`` on ``nonconvex-l1``; the FW baseline of Xiong &
    Freund). It computes the exact gap itself, so nothing is subtracted."""

    name = "fw-nc"
    title = "Frank-Wolfe with the exact gradient for any GLM loss (incl. non-convex)"
    family = "tufw"
    problems = PROBLEMS_SOLVED
    step_rules = (*OPEN_LOOP, "adaptive")
    settings = FW_SETTINGS
    reference = "Frank & Wolfe 1956; Xiong & Freund (baseline FW)"
    columns = KernelConstant("solvers.tufw", "OUT_COLUMNS")

    def __init__(self, problem: Problem, step: str, settings: dict[str, Any], tol: float):
        if not isinstance(problem, LogregL1):
            raise TypeError(f"fw-nc does not solve {problem.name}")
        _require_l1(problem, "fw-nc")
        self.problem = problem
        self.tol = float(tol)
        self.certificate_kind = _certificate_kind(problem)
        _, self._XT = _kernel_matrices(problem)
        self.x = problem.initial_point().astype(np.float64)
        self._z = np.asarray(problem.margins(self.x), dtype=np.float64).copy()
        self._r = np.zeros(problem.n)
        self._g = np.zeros(problem.p)
        self._zd = np.zeros(problem.n)
        self.istate = np.zeros(k.N_ISTATE, dtype=np.int64)
        self.fstate = np.zeros(k.N_FSTATE)
        step_code, _ = _step_codes(step, settings, problem)
        self.istate[k.I_LOSS] = _loss_code(problem)
        self.istate[k.I_STEP] = step_code
        self.istate[k.I_HORIZON] = int(settings.get("K", 10000))
        self.istate[k.I_REFRESH_Z] = int(settings.get("refresh_every", 1000))
        nonconvex = _is_nonconvex(problem)
        self.istate[k.I_TOL_AVG] = 1 if nonconvex else 0
        self.istate[k.I_METRIC_AVG] = (
            1 if nonconvex and problem.settings.get("metric") == "avg-fw-gap" else 0
        )
        self.fstate[k.F_ETA] = float(settings.get("eta", 0.9))
        self.fstate[k.F_TAU] = float(settings.get("tau", 2.0))
        self.fstate[k.F_MAX_TRIALS] = float(settings.get("max_trials", 60))
        self.fstate[k.F_LEST] = self._initial_lipschitz_estimate() if step == "adaptive" else 1.0
        self._rec = np.empty((1024, len(self.columns)))
        self._call(self._rec[:0])

    def _initial_lipschitz_estimate(self) -> float:
        """Pedregosa et al. (2020): ``||grad F(x0 + eps d0) - grad F(x0)|| / (eps ||d0||)``
        along the first FW direction, ``eps = 1e-3``."""
        pb = self.problem
        x0 = pb.initial_point()
        g0 = pb.gradient(x0)
        j = int(np.argmax(np.abs(g0)))
        s0 = np.zeros_like(x0)
        s0[j] = -pb.radius * np.sign(g0[j]) if g0[j] != 0 else pb.radius
        d0 = s0 - x0
        nd = float(np.linalg.norm(d0))
        if nd == 0.0:
            return 1.0
        est = float(np.linalg.norm(pb.gradient(x0 + 1e-3 * d0) - g0)) / (1e-3 * nd)
        return est if est > 0.0 else 1.0

    def _call(self, rec: np.ndarray) -> int:
        pb = self.problem
        return k.fw_glm_advance(
            self._XT,
            pb.y,
            pb.radius,
            self.x,
            self._z,
            self._r,
            self._g,
            self._zd,
            self.istate,
            self.fstate,
            self.tol,
            rec,
        )

    def advance(self, max_rows: int, stop_at: int) -> tuple[np.ndarray, int]:
        if max_rows <= 0:  # no row asked for (the kernel always writes at least one)
            return self._rec[:0], int(self.istate[k.I_STATUS])
        if max_rows > self._rec.shape[0]:
            self._rec = np.empty((max(max_rows, 2 * self._rec.shape[0]), len(self.columns)))
        self.istate[k.I_STOP_AT] = stop_at
        rows = self._call(self._rec[:max_rows])
        return self._rec[:rows], int(self.istate[k.I_STATUS])

    def iterate(self) -> np.ndarray:
        return self.x.copy()

    @property
    def iteration(self) -> int:
        return int(self.istate[k.I_K])
