"""Method ``primal-newton``: Newton-CG on the primal of the smooth PLQ problems.

For the losses made of ReHU pieces only (``svm2``, ``ssvm``, ``huber``, ``mse``, or a
custom loss without ReLU pieces) and no constraint or l1 term, the PLQ objective ``P(beta)
= 1/2 ||beta||^2 + sum ReHU(...)`` is differentiable and 1-strongly convex, and its
generalized Hessian ``I + X^T diag(w) X`` reads only the rows on a quadratic piece:
truncated Newton steps with an exact line search on the piecewise quadratic converge in a
few tens of iterations whatever ``C`` (Keerthi & DeCoste 2005, "A modified finite Newton
method for fast solution of large scale linear SVMs", JMLR 6; Lin, Weng & Keerthi 2008,
"Trust region Newton method for large-scale logistic regression", JMLR 9, whose TRON is
liblinear's primal solver). Where ``rehline``'s dual coordinate descent needs epochs in
proportion to ``C ||x||^2``, this method needs about ten passes of CG per Newton step on
the active rows.

Certificate (``duality_gap``, as the family's other methods): the duals the point implies,
``gamma = clip(s z + t, 0, tau)``, make the duality gap exactly ``1/2 ||grad P||^2`` (see
:mod:`solvers.plq_primal`, which also bounds its rounding); ``gap=relative`` divides it by
the dual objective. ``dual_objective`` is recorded beside it, as for ``rehline`` and ``ipm``.
Kernels in :mod:`solvers.plq_primal`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ermviz.base import Method, MethodSpec, Solver, StepRuleSpec, methods_from
from ermviz.errors import SettingError
from ermviz.families.lazy import KernelConstant, kernel_module
from ermviz.families.plq.certificate import CERTIFICATE_SETTINGS
from ermviz.families.plq.packing import kernel_rows, pack_pieces
from ermviz.families.plq.problem import PlqProblem
from ermviz.settings import Setting, with_defaults
from solvers.tags import STATUS_STALLED

kern = kernel_module("solvers.plq_primal", globals())

REFERENCE = (
    "Keerthi & DeCoste (2005), A modified finite Newton method for fast solution of large "
    "scale linear SVMs, JMLR 6; Lin, Weng & Keerthi (2008), Trust region Newton method "
    "for large-scale logistic regression, JMLR 9"
)

STEP_RULES: dict[str, StepRuleSpec] = {
    "newton-exact": StepRuleSpec(
        name="newton-exact",
        title="truncated Newton-CG direction, exact line search on the piecewise quadratic",
        settings=(),
        reference=REFERENCE,
    ),
}

NEWTON_SETTINGS = (
    *CERTIFICATE_SETTINGS,
    Setting(
        "cg_rtol",
        "float",
        0.1,
        "CG stops at this residual relative to the gradient's norm (TRON's 0.1)",
        low=0.0,
        high=1.0,
        low_open=True,
        high_open=True,
    ),
    Setting("cg_max", "int", 250, "cap on CG iterations per Newton step", low=1, high=10**6),
)


class PrimalNewtonSolver(Solver, Method):
    """Method ``primal-newton`` on a smooth, unconstrained :class:`PlqProblem` (module
    docstring); a loss with ReLU pieces, a constraint or an l1 term is a one-line
    SettingError naming the methods that solve it."""

    name = "primal-newton"
    title = "primal Newton-CG with exact line search (smooth losses, no constraints)"
    family = "rehline"
    problems = (PlqProblem.name,)
    step_rules = ("newton-exact",)
    default_step = "newton-exact"
    settings = NEWTON_SETTINGS
    reference = REFERENCE

    columns = KernelConstant("solvers.plq_primal", "NEWTON_RECORD_COLUMNS")
    certificate_kind = "duality_gap"

    def __init__(
        self, problem: PlqProblem, step: str, settings: dict[str, Any], tol: float
    ) -> None:
        settings = with_defaults(NEWTON_SETTINGS, settings or {})
        self.problem = pb = problem
        why = smooth_unconstrained(pb)
        if why:
            raise SettingError(
                f"primal-newton needs a differentiable loss without constraints: {why}; "
                "use --method rehline or ipm"
            )
        self.tol = float(tol)
        self._X = kernel_rows(pb.X)
        _, self._PH = pack_pieces(pb, self._X)
        n, d = pb.n, pb.d
        self.beta = np.zeros(d)
        self._z, self._r, self._w, self._xd = (np.zeros(n) for _ in range(4))
        self._g, self._d = np.zeros(d), np.zeros(d)
        self._cg = np.zeros((3, d))
        self.istate = np.zeros(kern.N_ISTATE, dtype=np.int64)
        self.fstate = np.zeros(kern.N_FSTATE)
        self.istate[kern.I_RELATIVE] = int(settings["gap"] == "relative")
        self.certificate_kind = (
            "rel_duality_gap" if settings["gap"] == "relative" else "duality_gap"
        )
        self.istate[kern.I_CG_MAX] = int(settings["cg_max"])
        self.fstate[kern.F_CG_RTOL] = float(settings["cg_rtol"])
        self._rec = np.empty((64, len(self.columns)))
        # Compile (or load from numba's cache) now, so solver time excludes compilation.
        self._call(self._rec[:0])

    def _call(self, rec: np.ndarray) -> int:
        return kern.newton_advance(
            self._X, self._PH, self.beta, self._z, self._r, self._w, self._g, self._d,
            self._cg, self._xd, self.istate, self.fstate, self.tol, rec,
        )  # fmt: skip

    def warm_start(self, beta: np.ndarray) -> None:
        """Start from the coefficients ``beta`` (any point: the problem is unconstrained);
        before the first step only."""
        self.beta[:] = self.warm_point(beta, self.beta, "coefficients")

    def advance(self, max_rows: int, stop_at: int) -> tuple[np.ndarray, int]:
        if max_rows > self._rec.shape[0]:
            self._rec = np.empty((max(max_rows, 2 * self._rec.shape[0]), len(self.columns)))
        self.istate[kern.I_STOP_AT] = stop_at
        rows = self._call(self._rec[:max_rows])
        if int(self.istate[kern.I_STATUS]) == STATUS_STALLED:
            self.end_note = (
                "a Newton step could not decrease the objective in float64 (the gradient is "
                "at its rounding level); a larger tol or gap=relative certifies the point"
            )
        return self._rec[:rows], int(self.istate[kern.I_STATUS])

    def iterate(self) -> np.ndarray:
        return self.beta.copy()

    @property
    def iteration(self) -> int:
        return int(self.istate[kern.I_K])


def smooth_unconstrained(pb: PlqProblem) -> str:
    """Why ``primal-newton`` cannot solve ``pb`` ("" when it can)."""
    if pb.L:
        return f"loss={pb.settings['loss']} has ReLU (hinge-like) pieces"
    if pb.K:
        return f"constraint={pb.settings['constraint']} adds linear constraints"
    if pb.l1w.size:
        return "l1 > 0 adds a non-differentiable term"
    return ""


METHODS: dict[str, MethodSpec] = methods_from(PrimalNewtonSolver)
