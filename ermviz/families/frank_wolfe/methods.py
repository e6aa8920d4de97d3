"""The Frank-Wolfe family's methods and step rules.

Each method is a class carrying its declaration (:class:`ermviz.base.Method`): ``fw``
(:class:`FrankWolfe`), ``afw`` (:class:`AwayStepFrankWolfe`), ``pfw``
(:class:`PairwiseFrankWolfe`), ``bpcg`` (:class:`BlendedPairwiseCG`), ``boosted``
(:class:`BoostedFrankWolfe`) and ``dicg`` (:class:`DecompositionInvariantCG`); their
shared base :class:`FrankWolfeMethod` builds the solver of the kernel that runs the
method on the problem. FW, away-step FW and pairwise FW on the simplex (``svm-dual``) and
the l1 ball (``logreg-l1``) run in :mod:`solvers.fw`'s kernels through
:class:`FrankWolfeSolver` (defined here: it packs a problem's arrays in the layout those
kernels want, owns the state arrays and the record buffer); BPCG, boosted FW, DICG, the
lazified variants and every method on the other sets run in :class:`.variants.VariantsSolver`
(:mod:`solvers.fw_variants`), and FW, AFW, PFW and BPCG on ``matrix-completion`` in
:class:`.completion.NuclearFWSolver` (:mod:`solvers.nuclear`). Those three solver classes
take the method's name as well, ``(problem, method, step, settings, tol)``: the lower-level
API that tests and benchmarks call directly; the registry calls the method classes'
``build(problem, step, settings, tol)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ermviz.base import Method, MethodSpec, Problem, Solver, StepRuleSpec, methods_from
from ermviz.errors import SettingError
from ermviz.families.frank_wolfe.completion import (
    NUCLEAR_SETTINGS,
    MatrixCompletion,
    NuclearFWSolver,
)
from ermviz.families.frank_wolfe.face_newton import FaceNewton
from ermviz.families.frank_wolfe.passes import DataPasses
from ermviz.families.frank_wolfe.problems import LeastSquares, LogregL1, SvmDual
from ermviz.families.frank_wolfe.variants import (
    BOOST_SETTINGS,
    LAZY_SETTINGS,
    VariantsSolver,
    initial_lipschitz,
    step_params_of,
    uses_variants_kernel,
)
from ermviz.families.lazy import KernelConstant, kernel_module
from ermviz.settings import Setting

fw = kernel_module("solvers.fw", globals())
steps = kernel_module("solvers.steps", globals())
gram_cache = kernel_module("solvers.gram_cache", globals())
linalg = kernel_module("solvers.linalg", globals())

STEP_RULES: dict[str, StepRuleSpec] = {
    "diminishing": StepRuleSpec(
        name="diminishing",
        title="open loop 2/(k+2)",
        settings=(),
        reference="Frank & Wolfe 1956; Jaggi 2013",
    ),
    "nonconvex": StepRuleSpec(
        name="nonconvex",
        title="open loop 1/sqrt(k+1)",
        settings=(),
        reference="Lacoste-Julien 2016",
    ),
    "armijo": StepRuleSpec(
        name="armijo",
        title="backtracking from 2/(k+2) (FW) or the maximal step (AFW, PFW)",
        settings=(
            Setting(
                "armijo_delta",
                "float",
                0.5,
                "backtracking factor",
                low=0.0,
                high=1.0,
                low_open=True,
                high_open=True,
            ),
            Setting(
                "armijo_c",
                "float",
                0.01,
                "sufficient-decrease constant",
                low=0.0,
                high=1.0,
                low_open=True,
                high_open=True,
            ),
            Setting("max_trials", "int", 60, "cap on backtracking trials", low=1, high=1000),
        ),
        reference="Armijo 1966; seed report (delta 0.5, gamma 0.01)",
    ),
    "exact": StepRuleSpec(
        name="exact",
        title="exact line search (closed form on quadratics, safeguarded Newton otherwise)",
        settings=(),
        reference="Lacoste-Julien & Jaggi 2015",
    ),
    "short": StepRuleSpec(
        name="short",
        title="Demyanov-Rubinov short step min(g/(L||d||^2), gamma_max)",
        settings=(
            Setting(
                "lipschitz",
                "float",
                None,
                "Lipschitz constant of the gradient (default: computed from ||X||_2)",
                low=0.0,
                low_open=True,
            ),
        ),
        reference="Demyanov & Rubinov 1970",
    ),
    "adaptive": StepRuleSpec(
        name="adaptive",
        title="backtracking estimate of L (AdaFW)",
        settings=(
            Setting(
                "eta",
                "float",
                0.9,
                "shrink factor on the previous L",
                low=0.0,
                high=1.0,
                low_open=True,
            ),
            Setting("tau", "float", 2.0, "growth factor on a failed trial", low=1.0, low_open=True),
            Setting("max_trials", "int", 60, "cap on backtracking trials", low=1, high=1000),
        ),
        reference="Pedregosa, Negiar, Askari & Jaggi 2020 (AISTATS)",
    ),
}

FW_SETTINGS = (
    Setting(
        "refresh_every",
        "int",
        1000,
        "rebuild the maintained product (w = Z alpha or z = X x) every this many steps; 0 = never",
        low=0,
        high=10**9,
    ),
)

#: Settings of fw / afw / pfw: FW_SETTINGS plus the SVM dual's Gram-column cache.
FW_METHOD_SETTINGS = (
    *FW_SETTINGS,
    Setting(
        "gram_cache_mb",
        "float",
        256.0,
        "svm-dual: memory (MB) for cached Gram columns Z^T z_j, which make a step O(n) "
        "once its vertices are cached; 0 = recompute the gradient every step",
        low=0.0,
        high=1e6,
    ),
)


class FrankWolfeSolver(Solver):
    """FW / AFW / PFW on :class:`.SvmDual` or :class:`.LogregL1` (:mod:`solvers.fw`).

    The lower-level API: it takes the method's name too. The registry builds it through
    the method classes (:meth:`FrankWolfeMethod.build`).

    Parameters
    ----------
    problem : Problem
    method : {"fw", "afw", "pfw"}
    step : str
        A key of :data:`STEP_RULES`.
    settings : dict
        Validated method and step-rule settings.
    tol : float
        Stop when the FW gap is at most ``tol``.
    """

    columns = KernelConstant("solvers.fw", "FW_RECORD_COLUMNS")
    certificate_kind = "fw_gap"

    def __init__(
        self, problem: Problem, method: str, step: str, settings: dict[str, Any], tol: float
    ) -> None:
        self.problem = problem
        self.tol = float(tol)
        self.istate = np.zeros(fw.N_ISTATE, dtype=np.int64)
        self.istate[fw.I_METHOD] = fw.METHOD_CODES[method]
        self.istate[fw.I_RULE] = steps.RULE_CODES[step]
        self.istate[fw.I_REFRESH] = settings.get("refresh_every", 1000)
        self.step_params = step_params_of(problem, step, settings)
        self.lstate = np.array([1.0])
        kernel_columns = type(self).columns
        self._rec = np.empty((1024, len(kernel_columns)))
        self._passes = DataPasses(
            kernel_columns, method, settings.get("refresh_every", 1000), 1, problem.dim
        )
        self.columns = self._passes.columns
        if isinstance(problem, SvmDual):
            self._init_svm(problem, settings.get("gram_cache_mb", 256.0))
        elif isinstance(problem, LogregL1):
            self._init_logreg(problem)
        else:  # the registry only pairs FW methods with these problems
            raise TypeError(f"Frank-Wolfe methods do not solve {problem.name}")
        if step == "adaptive":
            self.lstate[0] = self._initial_lipschitz_estimate()
        # Compile (or load from numba's cache) now, so solver time excludes compilation.
        self._call(self._rec[:0])

    def _init_svm(self, pb: SvmDual, cache_mb: float) -> None:
        self._X = linalg.as_kernel_matrix(pb.X)
        self._y = linalg.as_kernel_vector(pb.y)
        self._sqnorms = linalg.as_kernel_vector(pb.sqnorms)
        self.x = pb.initial_point()
        self._w = pb.w_of(self.x)
        self._g = np.zeros(pb.n)
        self._cache = gram_cache.new_gram_cache(pb.n, cache_mb)
        self._xj = np.zeros(self._w.shape[0])
        self._call = lambda rec: fw.svm_dual_advance(*self._args_svm(rec))

    def _args_svm(self, rec: np.ndarray) -> tuple:
        pb = self.problem
        return (
            self._X,
            self._y,
            self._sqnorms,
            pb.inv_c,
            self.x,
            self._w,
            self._g,
            self.istate,
            self.lstate,
            self.step_params,
            self.tol,
            rec,
            self._cache,
            self._xj,
        )

    def _init_logreg(self, pb: LogregL1) -> None:
        # The kernel walks the columns of X: hand it X^T row by row (CSR of X^T).
        XT = pb.X.T.tocsr() if sp.issparse(pb.X) else np.ascontiguousarray(pb.X.T)
        self._X = linalg.as_kernel_matrix(XT)
        self._y = linalg.as_kernel_vector(pb.y)
        self.mu = pb.initial_atoms()
        self.x = pb.radius * (self.mu[0::2] - self.mu[1::2])
        self._z = pb.margins(self.x)
        self._g = np.zeros(pb.p)
        self._r = np.zeros(pb.n)
        self._zd = np.zeros(pb.n)
        self._call = lambda rec: fw.logreg_l1_advance(*self._args_logreg(rec))

    def _args_logreg(self, rec: np.ndarray) -> tuple:
        pb = self.problem
        return (
            self._X,
            self._y,
            pb.radius,
            self.mu,
            self.x,
            self._z,
            self._g,
            self._r,
            self._zd,
            self.istate,
            self.lstate,
            self.step_params,
            self.tol,
            rec,
        )

    def _initial_lipschitz_estimate(self) -> float:
        return initial_lipschitz(self.problem)

    def advance(self, max_rows: int, stop_at: int) -> tuple[np.ndarray, int]:
        if max_rows > self._rec.shape[0]:
            self._rec = np.empty((max(max_rows, 2 * self._rec.shape[0]), self._rec.shape[1]))
        self.istate[fw.I_STOP_AT] = stop_at
        rec = self._rec[:max_rows]
        rows = self._call(rec)
        return self._passes.rows(self._rec[:rows]), int(self.istate[fw.I_STATUS])

    def iterate(self) -> np.ndarray:
        return self.x.copy()

    def active_weights(self) -> np.ndarray:
        """Atom weights: ``alpha`` itself on the simplex; ``mu`` (2 p,) on the l1 ball."""
        return (self.mu if isinstance(self.problem, LogregL1) else self.x).copy()

    @property
    def iteration(self) -> int:
        return int(self.istate[fw.I_K])


_FW_PROBLEMS = (SvmDual.name, LogregL1.name, LeastSquares.name)
#: FW, AFW, PFW and BPCG also complete matrices over a nuclear-norm ball.
_NUC_PROBLEMS = (*_FW_PROBLEMS, MatrixCompletion.name)
#: The nuclear-norm LMO's settings, not already declared by the vector kernels.
NUCLEAR_ONLY_SETTINGS = tuple(s for s in NUCLEAR_SETTINGS if s.name != "refresh_every")
#: AFW and PFW: their kernels' settings plus lazification.
ACTIVE_SET_SETTINGS = (*FW_METHOD_SETTINGS, *LAZY_SETTINGS, *NUCLEAR_ONLY_SETTINGS)


class FrankWolfeMethod(Method):
    """The family's method classes: each subclass declares one method (its ``name`` is
    the kernels' method code) and :meth:`build` runs it in the kernel that serves it on
    the problem: :class:`.completion.NuclearFWSolver` on matrix completion,
    :class:`FrankWolfeSolver` for FW, AFW and PFW (not lazified) on the simplex and the
    l1 ball, :class:`.variants.VariantsSolver` otherwise."""

    family = "frank-wolfe"
    step_rules = tuple(STEP_RULES)
    default_step = "exact"

    @classmethod
    def build(cls, problem: Problem, step: str, settings: dict[str, Any], tol: float) -> Solver:
        method = cls.name
        if isinstance(problem, MatrixCompletion):
            if settings.get("lazy", False):
                raise SettingError(f"{method} on matrix-completion is not lazified: drop lazy")
            return NuclearFWSolver(problem, method, step, settings, tol)
        if uses_variants_kernel(problem, method, settings):
            return VariantsSolver(problem, method, step, settings, tol)
        return FrankWolfeSolver(problem, method, step, settings, tol)


class FrankWolfe(FrankWolfeMethod):
    """Method ``fw``: Frank & Wolfe (1956), "An algorithm for quadratic programming"; the
    conditional gradient method's analysis of Jaggi (2013), ICML."""

    name = "fw"
    title = "Frank-Wolfe (conditional gradient)"
    problems = _NUC_PROBLEMS
    settings = (*FW_METHOD_SETTINGS, *NUCLEAR_ONLY_SETTINGS)
    reference = "Frank & Wolfe 1956; Jaggi 2013"


class AwayStepFrankWolfe(FrankWolfeMethod):
    """Method ``afw``: away-step FW, Guelat & Marcotte (1986), Math. Programming;
    Lacoste-Julien & Jaggi (2015), NeurIPS; lazified: Braun, Pokutta & Zink (2017), ICML."""

    name = "afw"
    title = "away-step Frank-Wolfe"
    problems = _NUC_PROBLEMS
    settings = ACTIVE_SET_SETTINGS
    reference = (
        "Guelat & Marcotte 1986; Lacoste-Julien & Jaggi 2015; lazy: Braun, Pokutta & Zink 2017"
    )


class PairwiseFrankWolfe(FrankWolfeMethod):
    """Method ``pfw``: pairwise FW, Lacoste-Julien & Jaggi (2015), "On the global linear
    convergence of Frank-Wolfe optimization variants", NeurIPS; lazified: Braun, Pokutta
    & Zink (2017), ICML."""

    name = "pfw"
    title = "pairwise Frank-Wolfe"
    problems = _NUC_PROBLEMS
    settings = ACTIVE_SET_SETTINGS
    reference = "Lacoste-Julien & Jaggi 2015; lazy: Braun, Pokutta & Zink 2017"


class BlendedPairwiseCG(FrankWolfeMethod):
    """Method ``bpcg``: Tsuji, Tanaka & Pokutta (2022), "Pairwise conditional gradients
    without swap steps and sparser kernel herding", ICML."""

    name = "bpcg"
    title = "blended pairwise conditional gradients (BPCG)"
    problems = _NUC_PROBLEMS
    settings = (*FW_SETTINGS, *LAZY_SETTINGS, *NUCLEAR_ONLY_SETTINGS)
    reference = "Tsuji, Tanaka & Pokutta 2022 (ICML)"


class BoostedFrankWolfe(FrankWolfeMethod):
    """Method ``boosted``: Combettes & Pokutta (2020), "Boosting Frank-Wolfe by chasing
    gradients", ICML."""

    name = "boosted"
    title = "boosted Frank-Wolfe (gradient pursuit)"
    problems = _FW_PROBLEMS
    settings = (*FW_SETTINGS, *BOOST_SETTINGS)
    reference = "Combettes & Pokutta 2020 (ICML)"


class DecompositionInvariantCG(FrankWolfeMethod):
    """Method ``dicg``: Garber & Meshi (2016), "Linear-memory and decomposition-invariant
    linearly convergent conditional gradient algorithm for structured polytopes",
    NeurIPS (on the simplex)."""

    name = "dicg"
    title = "decomposition-invariant pairwise CG (simplex)"
    problems = (SvmDual.name,)
    settings = FW_SETTINGS
    reference = "Garber & Meshi 2016 (NeurIPS)"


METHODS: dict[str, MethodSpec] = methods_from(
    FrankWolfe,
    AwayStepFrankWolfe,
    PairwiseFrankWolfe,
    BlendedPairwiseCG,
    BoostedFrankWolfe,
    DecompositionInvariantCG,
    FaceNewton,
)
