"""The LS-SVM family's methods: two-system CG, reduced CG and SMO, and their step rules.

* ``cg-two-system``: Suykens, Lukas, Van Dooren, De Moor & Vandewalle (1999), "Least
  squares support vector machine classifiers: a large scale algorithm" (ECCTD): two CG
  runs ``Q eta = y``, ``Q nu = 1`` in lock-step, ``b = 1^T eta / 1^T nu``;
* ``cg-reduced``: Chu, Ong & Keerthi (2005), "An improved conjugate gradient scheme to the
  solution of least squares SVM" (IEEE TNN): one CG on the SPD system of order n - 1, one
  product with ``Q`` per iteration;
* ``smo``: Keerthi & Shevade (2003), "SMO algorithm for least-squares SVM formulations"
  (Neural Computation): the maximal violating pair, or ``--set pair=second-order``.

Kernels in :mod:`solvers.lssvm`. The kernel matrix is precomputed at set-up when it fits
in ``kernel_cache_mb`` (outside the timed region, like the paper's cache), otherwise each
product or SMO column computes kernel values on the fly; both give identical iterates,
and ``kernel_evals`` counts the paper's work measure either way (module docstring of
:mod:`solvers.lssvm`). Every row carries the dual and primal objectives and the relative
duality gap, computed in O(n) from the residual the method keeps anyway; as the paper
discounted the stopping rule's cost, the time of that evaluation (calibrated at set-up,
O(n) per row) is reported as ``eval_seconds`` and left out of solver time.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from typing import Any

import numpy as np

from ermviz.base import Method, MethodSpec, Solver, StepRuleSpec, methods_from
from ermviz.errors import SettingError
from ermviz.families.lazy import KernelConstant, kernel_module
from ermviz.families.lssvm.problem import LssvmProblem
from ermviz.settings import Setting
from solvers.tags import PAIR_CODES, STATUS_RUNNING

k = kernel_module("solvers.lssvm", globals())

REFERENCES = {
    "cg-two-system": "Suykens, Lukas, Van Dooren, De Moor & Vandewalle, ECCTD 1999",
    "cg-reduced": "Chu, Ong & Keerthi, IEEE Trans. Neural Networks 16(2), 2005",
    "smo": "Keerthi & Shevade, Neural Computation 15(2), 2003",
}

STEP_RULES: dict[str, StepRuleSpec] = {
    "cg": StepRuleSpec(
        name="cg",
        title="conjugate-gradient step (exact minimization along the conjugate direction)",
        settings=(),
        reference="Hestenes & Stiefel 1952",
    ),
    "smo": StepRuleSpec(
        name="smo",
        title="exact minimization along e_i - e_j (two coordinates)",
        settings=(),
        reference=REFERENCES["smo"],
    ),
}


#: Seconds per kernel value computed on the fly, ``a + b p`` (measured on this project's
#: 2-core AMD EPYC test machine: 1.6e-8 s at p = 22, 3.5e-8 s at p = 100); used only to
#: warn before a run, so a factor of two either way does not matter.
EVAL_SECONDS = (8e-9, 2.7e-10)
#: A CG iteration on the fly longer than this is refused: CG needs tens to hundreds of
#: iterations, so the run would take hours (pause and stop interrupt a product anyway).
MAX_ITERATION_SECONDS = 30.0


def kernel_plan(problem: LssvmProblem, products: int) -> tuple[bool, float, float]:
    """``(cached, matrix MB, estimated seconds per iteration)`` for a method that needs
    ``products`` products with Q per iteration (on the fly: n (n + 1) / 2 kernel values
    each)."""
    n = problem.n
    matrix_mb = 8.0 * n * n / 2**20
    cached = matrix_mb <= float(problem.settings["kernel_cache_mb"])
    per_eval = EVAL_SECONDS[0] + EVAL_SECONDS[1] * problem.p
    seconds = 0.0 if cached else products * (n * (n + 1) / 2) * per_eval
    return cached, matrix_mb, seconds


class LssvmSolver(Solver, Method):
    """Shared set-up of the three methods: kernel data, cache, state and record buffer;
    each subclass is one method and carries its declaration."""

    columns = KernelConstant("solvers.lssvm", "COLUMNS")
    certificate_kind = "rel_duality_gap"
    summary_columns = ("kernel_evals", "kernel_computed")
    #: Products with Q per iteration (0: SMO, which needs two kernel columns).
    products = 0
    family = "lssvm"
    problems = (LssvmProblem.name,)

    @classmethod
    def advise(cls, problem: Any) -> list[str]:
        """The warning of a CG method whose products compute the kernel on the fly."""
        cached, mb, seconds = kernel_plan(problem, cls.products)
        if cached or cls.products == 0:
            return []
        return [
            f"the {problem.n} x {problem.n} kernel matrix ({mb:,.0f} MB) exceeds "
            f"kernel_cache_mb={problem.settings['kernel_cache_mb']:g}: every CG iteration "
            f"computes its upper triangle on the fly, about {seconds:.2g} s per iteration "
            f"here (CG usually needs tens to hundreds); raise kernel_cache_mb to "
            f"{mb * 1.05:,.0f} if memory allows, or race smo, which needs two kernel "
            "columns per step"
        ]

    def __init__(self, problem: LssvmProblem, step: str, settings: dict[str, Any], tol: float):
        self.problem = problem
        n = problem.n
        self._X = problem._Xk
        self._sq = problem.sq
        self._xj = np.zeros(problem.p)
        self.istate = np.zeros(k.N_ISTATE, dtype=np.int64)
        self.fstate = np.zeros(k.N_FSTATE)
        self.fstate[k.F_INVC] = 1.0 / problem.C
        self.fstate[k.F_INV2S] = 1.0 / (2.0 * problem.sigma2)
        self.fstate[k.F_TOL] = float(tol)
        self.cached, matrix_mb, seconds = kernel_plan(problem, self.products)
        if seconds > MAX_ITERATION_SECONDS:
            raise SettingError(
                f"{self.name}: the {n} x {n} kernel matrix ({matrix_mb:,.0f} MB) "
                f"does not fit kernel_cache_mb={problem.settings['kernel_cache_mb']:g}, and "
                f"computing it on the fly would take about {seconds:,.0f} s per CG iteration "
                f"(CG needs tens to hundreds: hours); set kernel_cache_mb >= "
                f"{matrix_mb * 1.05:,.0f} if memory allows, use method smo, or subsample "
                "the data"
            )
        # The matrix is the problem's, formed once and shared (read-only) by the runs of
        # a race: one 214 MB matrix for banana's three methods, not three.
        self._K = problem.kernel_matrix() if self.cached else np.empty((0, n))
        self.istate[k.I_CACHED] = 1 if self.cached else 0
        self.alpha = np.zeros(n)
        self.F = problem.y.copy()
        self._rec = np.empty((256, len(self.columns)))
        self._at_row = True  # alpha = 0, F = y: the start is recorded state
        self._row_eval_s = self._calibrate()

    def _cache_bytes(self) -> float:
        return float(self.problem.settings["kernel_cache_mb"]) * 2**20

    def _calibrate(self) -> float:
        """Seconds of one row's certificate evaluation (O(n)), the best of a few timed
        batches; the paper discounted the stopping rule's cost, so ``advance`` reports
        rows x this as ``eval_seconds``, which the runner subtracts from solver time."""
        y, invc = self.problem.y, self.fstate[k.F_INVC]
        repeats = max(1, 200_000 // self.problem.n)
        k.certificate_cost(y, self.alpha, self.F, invc, 1)  # compile or load
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            k.certificate_cost(y, self.alpha, self.F, invc, repeats)
            best = min(best, (time.perf_counter() - t0) / repeats)
        return best

    def advance(self, max_rows: int, stop_at: int) -> tuple[np.ndarray, int]:
        if max_rows > self._rec.shape[0]:
            self._rec = np.empty((max(max_rows, 2 * self._rec.shape[0]), len(self.columns)))
        self.istate[k.I_STOP_AT] = stop_at
        rows = self._call(self._rec[:max_rows])
        # A call ends either after a step (running) or on a row it recorded and did not
        # step from (converged, stop_at, ...): then alpha and F are the current iterate's.
        self._at_row = rows > 0 and int(self.istate[k.I_STATUS]) != STATUS_RUNNING
        self.eval_seconds += rows * self._row_eval_s
        self.eval_cpu_seconds += rows * self._row_eval_s
        return self._rec[:rows], int(self.istate[k.I_STATUS])

    @abstractmethod
    def _call(self, rec: np.ndarray) -> int:
        """Run the method's kernel into ``rec``; returns the rows written."""

    def warm_start(self, alpha: np.ndarray) -> None:
        """Start from ``alpha`` (e.g. the solution for another ``C`` or ``sigma2`` on the
        same rows) instead of 0; before the first step only. Its mean is removed, so that
        ``1^T alpha = 0`` holds; one product with ``Q`` gives ``F = y - Q alpha``."""
        alpha = self.warm_point(alpha, self.alpha, "dual coefficients (one per row)")
        alpha = alpha - alpha.mean()
        pb = self.problem
        Ka = self._K @ alpha if self.cached else pb.kernel_times(pb.X, alpha)
        self._start_from(alpha, pb.y - Ka - alpha / pb.C)

    def _start_from(self, alpha: np.ndarray, F: np.ndarray) -> None:
        """Set the state to ``alpha`` with ``F = y - Q alpha`` (a method that cannot start
        from a given point says so)."""
        raise SettingError(
            f"{self.name} starts from alpha = 0 only (its two CG systems have no warm "
            "start); use cg-reduced or smo"
        )

    def iterate(self) -> np.ndarray:
        """The current ``alpha``. When it is the last recorded row's (always at the end of
        a run, which ends on a recorded row), its bias ``mean(y - Q alpha)``, which the
        kernel keeps, is remembered by the problem: reporting the bias and predicting
        then need no O(n^2) product."""
        if not self._at_row:
            return self._current_alpha()
        alpha, bias = self.decision_state()
        self.problem.remember_bias(alpha, bias)
        return alpha

    def interrupt(self, flag: bool) -> None:
        """Make a product computed on the fly return early (its iteration is redone by
        the next call): pause and stop then act within one kernel column."""
        self.istate[k.I_ABORT] = 1 if flag else 0

    def _current_alpha(self) -> np.ndarray:
        """``alpha`` of the state after the last step (SMO steps ``alpha`` itself)."""
        return self.alpha.copy()

    def decision_state(self) -> tuple[np.ndarray, float]:
        """``(alpha, b)`` in O(n), ``b = mean(F)`` (E.6) from the ``F = y - Q alpha`` the
        kernel keeps: the last recorded row's (CG) or the current state's (SMO steps
        ``alpha`` and ``F`` in place). Read while the run goes (the dashboard's boundary
        view) it may mix two consecutive iterates; once the run has ended it is exact."""
        F = self.F.copy()
        return self.alpha.copy(), float(F.mean())

    @property
    def iteration(self) -> int:
        return int(self.istate[k.I_K])


class TwoSystemCgSolver(LssvmSolver):
    """Method ``cg-two-system``, Suykens, Lukas, Van Dooren, De Moor & Vandewalle (1999):
    ``Q eta = y`` and ``Q nu = 1`` by CG in lock-step."""

    products = 2
    name = "cg-two-system"
    title = "LS-SVM: two conjugate-gradient runs in lock-step (Suykens et al.)"
    step_rules = ("cg",)
    reference = REFERENCES["cg-two-system"]

    def __init__(self, problem: LssvmProblem, step: str, settings: dict[str, Any], tol: float):
        super().__init__(problem, step, settings, tol)
        n, y = problem.n, problem.y
        self.eta, self.nu = np.zeros(n), np.zeros(n)
        self.r1, self.r2 = y.copy(), np.ones(n)
        self.p1, self.p2 = y.copy(), np.ones(n)
        self.q1, self.q2 = np.zeros(n), np.zeros(n)
        self.fstate[k.F_RR1] = float(y @ y)
        self.fstate[k.F_RR2] = float(n)
        self._call(self._rec[:0])  # compile or load the kernel outside the timed region

    def _current_alpha(self) -> np.ndarray:
        # The kernel combines alpha at the start of a row; after a step only eta and nu
        # have moved, so the current iterate is combined here.
        s2 = float(self.nu.sum())
        b = float(self.eta.sum()) / s2 if s2 != 0.0 else 0.0
        return self.eta - b * self.nu

    def _call(self, rec: np.ndarray) -> int:
        return k.cg_two_advance(
            self._X, self._sq, self._K, self._xj, self.problem.y, self.eta, self.nu,
            self.r1, self.r2, self.p1, self.p2, self.q1, self.q2, self.alpha, self.F,
            self.istate, self.fstate, rec,
        )  # fmt: skip


class ReducedCgSolver(LssvmSolver):
    """Method ``cg-reduced``, Chu, Ong & Keerthi (2005): one CG on the reduced system of
    order n - 1."""

    products = 1
    name = "cg-reduced"
    title = "LS-SVM: one conjugate-gradient run on the reduced system (Chu, Ong & Keerthi)"
    step_rules = ("cg",)
    reference = REFERENCES["cg-reduced"]

    def __init__(self, problem: LssvmProblem, step: str, settings: dict[str, Any], tol: float):
        super().__init__(problem, step, settings, tol)
        n, y = problem.n, problem.y
        self.at = np.zeros(n - 1)
        self.r = y[:-1] - y[-1]
        self.p = self.r.copy()
        self.q = np.zeros(n - 1)
        self._vbar, self._u = np.zeros(n), np.zeros(n)
        self.fstate[k.F_RR1] = float(self.r @ self.r)
        self.fstate[k.F_FN] = float(y[-1])  # F = y at alpha = 0
        self._call(self._rec[:0])

    def _current_alpha(self) -> np.ndarray:
        return np.append(self.at, -self.at.sum())  # alpha = (at; -1^T at)

    def _start_from(self, alpha: np.ndarray, F: np.ndarray) -> None:
        # The reduced residual is F_i - F_n (module docstring of solvers.lssvm).
        self.at[:] = alpha[:-1]
        self.r[:] = F[:-1] - F[-1]
        self.p[:] = self.r
        self.fstate[k.F_RR1] = float(self.r @ self.r)
        self.fstate[k.F_FN] = float(F[-1])
        self.alpha[:] = alpha
        self.F[:] = F

    def _call(self, rec: np.ndarray) -> int:
        return k.cg_reduced_advance(
            self._X, self._sq, self._K, self._xj, self.problem.y, self.at, self.r, self.p,
            self.q, self._vbar, self._u, self.alpha, self.F, self.istate, self.fstate, rec,
        )  # fmt: skip


class SmoSolver(LssvmSolver):
    """Method ``smo``, Keerthi & Shevade (2003): SMO with the maximal violating pair (or
    second order)."""

    name = "smo"
    title = "LS-SVM: SMO, two coordinates per step (Keerthi & Shevade)"
    step_rules = ("smo",)
    settings = (
        Setting(
            "pair",
            "choice",
            "max-violating",
            "working pair: the maximal violating pair, or j chosen by second-order gain",
            choices=tuple(PAIR_CODES),
        ),
    )
    reference = REFERENCES["smo"]
    advise = None  # two kernel columns per step: nothing to warn about

    def __init__(self, problem: LssvmProblem, step: str, settings: dict[str, Any], tol: float):
        super().__init__(problem, step, settings, tol)
        self.istate[k.I_PAIR] = PAIR_CODES[settings["pair"]]
        n = problem.n
        self._ci, self._cj = np.zeros(n), np.zeros(n)
        # Without the whole matrix, an LRU cache of kernel columns within kernel_cache_mb
        # (LIBSVM's scheme): the columns SMO revisits are computed once while they fit.
        slots = 0 if self.cached else min(n, int(self._cache_bytes() // (8 * n)))
        slots = slots if slots >= 2 else 0
        self._cols = np.zeros((slots, n))
        self._slot_of = np.full(n, -1, dtype=np.int64)
        self._atom_of = np.full(slots, -1, dtype=np.int64)
        self._stamp = np.zeros(slots, dtype=np.int64)
        self._call(self._rec[:0])

    def _start_from(self, alpha: np.ndarray, F: np.ndarray) -> None:
        self.alpha[:] = alpha
        self.F[:] = F

    def _call(self, rec: np.ndarray) -> int:
        return k.smo_advance(
            self._X, self._sq, self._K, self._xj, self.problem.y, self.alpha, self.F,
            self._ci, self._cj, self._cols, self._slot_of, self._atom_of, self._stamp,
            self.istate, self.fstate, rec,
        )  # fmt: skip


METHODS: dict[str, MethodSpec] = methods_from(TwoSystemCgSolver, ReducedCgSolver, SmoSolver)
