"""Method ``face-newton``: second-order steps on the current face, blended with FW steps.

:class:`FaceNewton` declares the method; :class:`FaceNewtonSolver` binds the kernel of
:mod:`solvers.face_newton` to the family's problems (``logreg-l1`` and ``least-squares``
over the l1 ball, the box and the K-sparse polytope; ``svm-dual`` over the simplex), in
the data layout of :class:`.variants.VariantsSolver`.

References: Braun, Pokutta, Tu & Wright (2019), "Blended conditional gradients", ICML
(face steps vs FW steps by the local gap); Carderera & Pokutta (2020), "Second-order
conditional gradient sliding" (inexact Newton steps on the active face); Bertsekas
(1982), "Projected Newton methods for optimization problems with simple constraints",
SIAM J. Control Optim. (the projected arc at the bounds); Yuan, Ho & Lin (2012), "An
improved GLMNET for l1-regularized logistic regression", JMLR (several coordinates join
the working set at once).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ermviz.base import Method, Problem, Solver
from ermviz.errors import SettingError
from ermviz.families.frank_wolfe.problems import LeastSquares, LogregL1, SvmDual
from ermviz.families.frank_wolfe.variants import VariantsSolver, step_params_of
from ermviz.families.lazy import KernelConstant, kernel_module
from ermviz.settings import Setting

face_newton = kernel_module("solvers.face_newton", globals())

FACE_NEWTON_SETTINGS = (
    Setting(
        "enter_frac",
        "float",
        0.5,
        "a fixed coordinate joins the face when its violation of the face's optimality "
        "is at least this fraction of the largest one (0: every violator at once; 0.5 "
        "measured fastest on a1a, w8a and ijcnn1)",
        low=0.0,
        high=1.0,
    ),
    Setting(
        "blend_K",
        "float",
        2.0,
        "take a FW step instead of a face step when the local gap is below gap / blend_K",
        low=1.0,
        high=1e6,
    ),
    Setting(
        "cg_max",
        "int",
        50,
        "cap on conjugate-gradient iterations per Newton step",
        low=1,
        high=10**5,
    ),
    Setting(
        "cg_rtol",
        "float",
        0.1,
        "CG stops at relative residual min(cg_rtol, sqrt(||projected gradient||))",
        low=0.0,
        high=1.0,
        low_open=True,
        high_open=True,
    ),
)

#: The sets face-newton handles: coordinate bounds and at most one signed sum.
_FACE_SETS = ("simplex", "l1", "box", "ksparse")


class FaceNewtonSolver(Solver):
    """:mod:`solvers.face_newton` on :class:`.SvmDual`, :class:`.LogregL1` or
    :class:`.LeastSquares` (the sets of ``_FACE_SETS``)."""

    columns = KernelConstant("solvers.face_newton", "FN_RECORD_COLUMNS")
    certificate_kind = "fw_gap"

    def __init__(self, problem: Problem, step: str, settings: dict[str, Any], tol: float) -> None:
        self.problem = problem
        self.tol = float(tol)
        cset, MT, b, loss, loss_par = VariantsSolver._layout(problem)
        if cset.kind not in _FACE_SETS:
            raise SettingError(
                f"face-newton needs a set of coordinate bounds and one sum (constraint = "
                f"l1, box or ksparse), not the {cset.describe()}: use fw or boosted there"
            )
        self.cset = cset
        self.state = face_newton.new_state(
            MT,
            b,
            cset.code,
            cset.params,
            loss,
            loss_par,
            step_params_of(problem, step, settings),
            problem.initial_point(),
            enter_frac=float(settings.get("enter_frac", 0.5)),
            blend_K=float(settings.get("blend_K", 2.0)),
            cg_max=int(settings.get("cg_max", 50)),
            cg_rtol=float(settings.get("cg_rtol", 0.1)),
        )
        self._rec = np.empty((1024, len(self.columns)))
        # Compile (or load from numba's cache) now, so solver time excludes compilation.
        face_newton.advance(self.state, self._rec[:0], self.tol, 0)

    def advance(self, max_rows: int, stop_at: int) -> tuple[np.ndarray, int]:
        if max_rows > self._rec.shape[0]:
            self._rec = np.empty((max(max_rows, 2 * self._rec.shape[0]), len(self.columns)))
        rows = face_newton.advance(self.state, self._rec[:max_rows], self.tol, stop_at)
        return self._rec[:rows], int(self.state.status)

    def warm_start(self, x: np.ndarray) -> None:
        """Start from ``x`` (moved into the set by :meth:`.ConstraintSet.inside`) instead of
        the problem's start point; before the first step only. The kernel recomputes
        ``M x`` and the gradient at every iteration, so the point is all it needs."""
        self.state.x[:] = self.cset.inside(self.warm_point(x, self.state.x, "coordinates"))

    @property
    def end_note(self) -> str:  # type: ignore[override]
        """Why the run stalled, in one line (empty unless it did)."""
        reason = face_newton.stall_reason(self.state)
        if reason == "no_step":
            step = "pairwise" if self.cset.kind == "simplex" else "FW"
            return (
                f"the {step} step found no decrease of the objective: the certificate is "
                "at what float64 resolves for this problem (raise tol)"
            )
        if reason == "no_decrease":
            return (
                f"the objective has not decreased beyond float64 rounding in "
                f"{face_newton.STALL_ITERS} iterations: the certificate is at what float64 "
                "resolves for this problem (raise tol)"
            )
        return ""

    def iterate(self) -> np.ndarray:
        return self.state.x.copy()

    @property
    def iteration(self) -> int:
        return int(self.state.iteration)


class FaceNewton(Method):
    """Method ``face-newton``: inexact projected Newton steps on the current face with a
    working set, blended with FW steps (Braun, Pokutta, Tu & Wright 2019, ICML;
    Carderera & Pokutta 2020; Bertsekas 1982); see :mod:`solvers.face_newton`."""

    name = "face-newton"
    title = "face-Newton (second-order steps on the active face, blended with FW)"
    family = "frank-wolfe"
    problems = (SvmDual.name, LogregL1.name, LeastSquares.name)
    step_rules = ("armijo",)
    default_step = "armijo"
    settings = FACE_NEWTON_SETTINGS
    reference = (
        "Braun, Pokutta, Tu & Wright 2019 (ICML, blended conditional gradients); "
        "Carderera & Pokutta 2020 (second-order conditional gradient sliding); "
        "Bertsekas 1982 (projected Newton)"
    )

    @classmethod
    def build(cls, problem: Any, step: str, settings: dict[str, Any], tol: float) -> Solver:
        return FaceNewtonSolver(problem, step, settings, tol)
