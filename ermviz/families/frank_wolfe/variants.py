"""The Frank-Wolfe variants on any feasible set: BPCG, boosted FW, DICG, lazified AFW/PFW.

:class:`VariantsSolver` binds :mod:`solvers.fw_variants` (one kernel for FW, AFW, PFW,
BPCG, boosted FW and DICG over the simplex, l1 / l2 balls, boxes and K-sparse polytopes,
optionally lazified) to the family's problems: the L2-SVM dual over the simplex,
logistic regression and least squares over the set their ``constraint`` names. FW, AFW
and PFW on the problems' original sets (simplex, l1 ball) keep their tuned kernels in
:mod:`solvers.fw`; every other combination runs here.

References: Tsuji, Tanaka & Pokutta (2022), "Pairwise conditional gradients without swap
steps and sparser kernel herding", ICML (BPCG); Combettes & Pokutta (2020), "Boosting
Frank-Wolfe by chasing gradients", ICML; Garber & Meshi (2016), "Linear-memory and
decomposition-invariant linearly convergent conditional gradient algorithm for
structured polytopes", NeurIPS (DICG); Braun, Pokutta & Zink (2017), "Lazifying
conditional gradient algorithms", ICML.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ermviz.base import Problem, Solver
from ermviz.families.frank_wolfe.constraints import ConstraintSet, pack_atoms
from ermviz.families.frank_wolfe.passes import DataPasses
from ermviz.families.frank_wolfe.problems import LeastSquares, LogregL1, SvmDual
from ermviz.families.lazy import KernelConstant, kernel_module
from ermviz.settings import Setting
from solvers import fw_methods

fw_variants = kernel_module("solvers.fw_variants", globals())
steps = kernel_module("solvers.steps", globals())
linalg = kernel_module("solvers.linalg", globals())

LAZY_SETTINGS = (
    Setting(
        "lazy",
        "bool",
        False,
        "lazified (Braun, Pokutta & Zink 2017): call the LMO only when no active atom "
        "makes enough progress (LMO calls counted in the trace)",
    ),
    Setting(
        "lazy_K",
        "float",
        2.0,
        "lazy: an active atom is good enough when its gap is >= Phi / lazy_K",
        low=0.0,
        low_open=True,
        high=1e6,
    ),
)

BOOST_SETTINGS = (
    Setting(
        "boost_rounds",
        "int",
        20,
        "boosted: at most this many gradient-pursuit rounds (LMO calls) per iteration",
        low=1,
        high=1000,
    ),
    Setting(
        "boost_delta",
        "float",
        1e-3,
        "boosted: a round is kept when it improves the alignment with -grad by at least this",
        low=0.0,
        low_open=True,
        high=1.0,
    ),
)


def step_params_of(problem: Problem, step: str, settings: dict[str, Any]) -> np.ndarray:
    """The step rule's parameter vector (:func:`solvers.steps.default_step_params`) from
    validated settings; the short step's L defaults to the problem's bound."""
    lipschitz = settings.get("lipschitz")
    if step == "short" and lipschitz is None:
        lipschitz = problem.lipschitz()
    return steps.default_step_params(
        armijo_delta=settings.get("armijo_delta", 0.5),
        armijo_c=settings.get("armijo_c", 0.01),
        lipschitz=lipschitz or 1.0,
        eta=settings.get("eta", 0.9),
        tau=settings.get("tau", 2.0),
        max_trials=settings.get("max_trials", 60),
    )


def uses_variants_kernel(
    problem: Problem, method: str | fw_methods.FWMethod, settings: dict[str, Any]
) -> bool:
    """Whether ``method`` on ``problem`` runs here rather than in :mod:`solvers.fw`'s
    kernels (those serve the methods whose ``kernels`` name ``fw``, not lazified, on the
    simplex and the l1 ball)."""
    if "fw" not in fw_methods.lookup(method).kernels or settings.get("lazy", False):
        return True
    if isinstance(problem, SvmDual):
        return False
    return not (isinstance(problem, LogregL1) and problem.constraint == "l1")


class VariantsSolver(Solver):
    """One of ``fw_variants.METHOD_CODES`` on :class:`.SvmDual`, :class:`.LogregL1` or
    :class:`.LeastSquares`.

    The lower-level API: it takes the method's name too. The registry builds it through
    the method classes of :mod:`.methods` (:meth:`.methods.FrankWolfeMethod.build`).

    Parameters
    ----------
    problem : Problem
    method : {"fw", "afw", "pfw", "bpcg", "boosted", "dicg"}, or a
        :class:`solvers.fw_methods.FWMethod` row
    step : str
        A step rule of :mod:`solvers.steps`.
    settings : dict
        Validated method and step-rule settings (``lazy``, ``lazy_K``, ``boost_rounds``,
        ``boost_delta``, ``refresh_every``, ``gram_cache_mb``, step-rule parameters).
    tol : float
        Stop when the certificate is at most ``tol``: the FW gap, or for a lazy run the
        certified gap ``f(x_k) - max_s (f(x_s) - gap_s)`` over its LMO calls.
    """

    columns = KernelConstant("solvers.fw_variants", "FWV_RECORD_COLUMNS")

    def __init__(
        self,
        problem: Problem,
        method: str | fw_methods.FWMethod,
        step: str,
        settings: dict[str, Any],
        tol: float,
    ) -> None:
        facts = fw_methods.lookup(method)
        self.problem = problem
        self.method = facts.name
        self.tol = float(tol)
        lazy = bool(settings.get("lazy", False))
        self.certificate_kind = "primal_dual_gap" if lazy else "fw_gap"
        cset, MT, b, loss, loss_par = self._layout(problem)
        self.cset = cset
        params = step_params_of(problem, step, settings)
        idx, val, nnz, w = pack_atoms(self._start_atoms(problem, cset))
        self.state = fw_variants.new_state(
            MT,
            b,
            cset.code,
            cset.params,
            loss,
            loss_par,
            facts.code,
            steps.RULE_CODES[step],
            params,
            idx,
            val,
            nnz,
            w,
            lazy=lazy,
            lazy_K=float(settings.get("lazy_K", 2.0)),
            boost_rounds=int(settings.get("boost_rounds", 20)),
            boost_delta=float(settings.get("boost_delta", 1e-3)),
            refresh_every=int(settings.get("refresh_every", 1000)),
            gram_cache_mb=float(settings.get("gram_cache_mb", 256.0)),
        )
        if step == "adaptive":
            self.state.lstate[0] = initial_lipschitz(problem)
        kernel_columns = type(self).columns
        self._passes = DataPasses(
            kernel_columns,
            facts,
            int(settings.get("refresh_every", 1000)),
            _atom_nnz(cset),
            cset.p,
        )
        self.columns = self._passes.columns
        self._rec = np.empty((1024, len(kernel_columns)))
        # Compile (or load from numba's cache) now, so solver time excludes compilation.
        fw_variants.advance(self.state, self._rec[:0], self.tol, 0)

    @staticmethod
    def _layout(problem: Problem) -> tuple[ConstraintSet, Any, np.ndarray, int, np.ndarray]:
        """The set, ``M^T``, ``b``, the loss code and its ``[scale, ridge]``."""
        if isinstance(problem, SvmDual):
            Z = sp.diags(problem.y) @ problem.X if sp.issparse(problem.X) else None
            MT = Z.tocsr() if Z is not None else problem.y[:, None] * np.asarray(problem.X)
            return (
                problem.constraint_set,
                linalg.as_kernel_matrix(MT),
                np.zeros(problem.X.shape[1]),
                fw_variants.LOSS_CODES["squared"],
                np.array([1.0, problem.inv_c]),
            )
        X = problem.X
        XT = X.T.tocsr() if sp.issparse(X) else np.ascontiguousarray(np.asarray(X).T)
        if isinstance(problem, LeastSquares):
            loss, par = fw_variants.LOSS_CODES["squared"], np.array([0.5 / problem.n, 0.0])
        elif isinstance(problem, LogregL1):
            loss, par = fw_variants.LOSS_CODES["logistic"], np.array([1.0, 0.0])
        else:  # the registry pairs these methods with the family's problems only
            raise TypeError(f"Frank-Wolfe variants do not solve {problem.name}")
        return problem.constraint_set, linalg.as_kernel_matrix(XT), problem.y, loss, par

    @staticmethod
    def _start_atoms(problem: Problem, cset: ConstraintSet) -> list:
        if isinstance(problem, SvmDual):
            alpha = problem.initial_point()
            support = np.flatnonzero(alpha > 0)
            return [(np.array([i]), np.array([1.0]), float(alpha[i])) for i in support]
        return problem.start_atoms()

    def advance(self, max_rows: int, stop_at: int) -> tuple[np.ndarray, int]:
        if max_rows > self._rec.shape[0]:
            self._rec = np.empty((max(max_rows, 2 * self._rec.shape[0]), self._rec.shape[1]))
        rows = fw_variants.advance(self.state, self._rec[:max_rows], self.tol, stop_at)
        return self._passes.rows(self._rec[:rows]), int(self.state.status)

    def iterate(self) -> np.ndarray:
        return self.state.x.copy()

    def active_weights(self) -> np.ndarray:
        """Weights over the atoms the teaching view draws: ``alpha`` on the simplex, the
        ``(2 p,)`` weights of ``+-r e_j`` on the l1 ball, the 4 corners (lo, lo), (hi, lo),
        (hi, hi), (lo, hi) of a box in R^2; empty otherwise (no active set kept)."""
        idx, val, mu = fw_variants.active_atoms(self.state)
        kind, p = self.cset.kind, self.cset.p
        if kind == "simplex":
            return self.state.x.copy()
        if kind == "l1" and len(mu):
            out = np.zeros(2 * p)
            for i, v, m in zip(idx, val, mu, strict=True):
                out[2 * int(i[0]) + (0 if v[0] > 0 else 1)] += m
            return out
        if kind == "box" and p == 2 and len(mu):
            out = np.zeros(4)
            mid = 0.5 * (self.cset.lo + self.cset.hi)
            corner = {(False, False): 0, (True, False): 1, (True, True): 2, (False, True): 3}
            for i, v, m in zip(idx, val, mu, strict=True):
                dense = self.cset.dense((i, v))
                out[corner[(bool(dense[0] > mid), bool(dense[1] > mid))]] += m
            return out
        return np.zeros(0)

    @property
    def iteration(self) -> int:
        return int(self.state.iteration)


def _atom_nnz(cset: ConstraintSet) -> int:
    """Entries of the set's atoms: 1 (simplex, l1 ball), K (K-sparse polytope), p (box,
    l2 ball)."""
    if cset.kind in ("simplex", "l1"):
        return 1
    return min(cset.K, cset.p) if cset.kind == "ksparse" else cset.p


def initial_lipschitz(problem: Problem) -> float:
    """Pedregosa et al. (2020): ``||grad f(x0 + eps d0) - grad f(x0)|| / (eps ||d0||)``
    along the first FW direction, ``eps = 1e-3`` (the adaptive rule's first estimate)."""
    cset = problem.constraint_set
    x0 = problem.initial_point()
    g0 = problem.gradient(x0)
    d0 = cset.dense(cset.vertex(g0)) - x0
    nd = float(np.linalg.norm(d0))
    if nd == 0.0:
        return 1.0
    eps = 1e-3
    est = float(np.linalg.norm(problem.gradient(x0 + eps * d0) - g0)) / (eps * nd)
    return est if est > 0.0 else 1.0
