"""A demo family, used only by tests/test_add_a_family.py: projected gradient on a box.

It follows the recipe in docs/ARCHITECTURE.md ("How to add a family") to the letter: a
kernel module (:mod:`demo_family.kernel`, numpy + numba only), one family module (this
package: problem, step rule, and a method class carrying its declaration, whose
``METHODS`` is ``methods_from`` over it), its test, and one line naming it in the
registry (here the ``ERMVIZ_FAMILIES`` variable, since it lives outside ermviz).

Problem ``box-lsq``: ``min_{lo <= w_j <= hi} f(w) = ||X w - y||^2 / (2 n)``, certified by
the Frank-Wolfe gap ``<grad f(w), w - s>``, ``s_j = lo if g_j > 0 else hi``, an upper bound
on ``f(w) - f*`` (Jaggi 2013). Method ``pgd``: projected gradient with step ``1/L``,
``L = ||X||_2^2 / n`` (Nesterov, "Introductory lectures on convex optimization", 2.2.3).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from ermviz.base import Method, MethodSpec, Problem, Solver, StepRuleSpec, methods_from
from ermviz.errors import SettingError
from ermviz.families.common import spectral_norm_sq
from ermviz.families.lazy import KernelConstant, kernel_module
from ermviz.settings import Setting

# The kernels load when the family is first used, not when the registry lists it.
kernel = kernel_module("demo_family.kernel", globals())


@dataclass
class BoxLeastSquares(Problem):
    """Least squares over the box ``[lo, hi]^p``; variable ``w`` of shape (p,)."""

    name: ClassVar[str] = "box-lsq"
    title: ClassVar[str] = "least squares over a box (demo family)"
    certificate_kind: ClassVar[str] = "fw_gap"
    default_race: ClassVar[tuple[tuple[str, str], ...]] = (("pgd", "inverse-lipschitz"),)
    settings_decl: ClassVar[tuple[Setting, ...]] = (
        Setting("lo", "float", -1.0, "lower bound of every coordinate", low=-1e12, high=1e12),
        Setting("hi", "float", 1.0, "upper bound of every coordinate", low=-1e12, high=1e12),
    )

    def __post_init__(self) -> None:
        self.lo, self.hi = float(self.settings["lo"]), float(self.settings["hi"])
        if not self.lo < self.hi:
            raise SettingError(f"box-lsq needs lo < hi; got lo={self.lo}, hi={self.hi}")
        X = self.dataset.X
        self.X = np.ascontiguousarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
        self.y = np.ascontiguousarray(self.dataset.y, dtype=np.float64)
        self.n, self.p = self.X.shape

    def objective(self, x: np.ndarray) -> float:
        r = self.X @ x - self.y
        return float(r @ r) / (2.0 * self.n)

    def gradient(self, x: np.ndarray) -> np.ndarray:
        return self.X.T @ (self.X @ x - self.y) / self.n

    def certificate(self, x: np.ndarray) -> float:
        g = self.gradient(x)
        return float(g @ (x - np.where(g > 0.0, self.lo, self.hi)))

    def initial_point(self) -> np.ndarray:
        return np.clip(np.zeros(self.p), self.lo, self.hi)

    def lipschitz(self) -> float:
        return spectral_norm_sq(self.X) / self.n


class ProjectedGradientSolver(Solver, Method):
    """Method ``pgd``: projected gradient with step ``1/L`` on :class:`BoxLeastSquares`
    (Nesterov, "Introductory lectures on convex optimization", 2004, 2.2.3)."""

    name = "pgd"
    title = "projected gradient (demo family)"
    family = "demo"
    problems = (BoxLeastSquares.name,)
    step_rules = ("inverse-lipschitz",)
    reference = "Nesterov 2004, 2.2.3"
    columns = KernelConstant("demo_family.kernel", "COLUMNS")
    certificate_kind = "fw_gap"

    def __init__(self, problem: Any, step: str, settings: dict[str, Any], tol: float):
        self.problem = problem
        self.tol = float(tol)
        self.step = float(settings["scale"]) / problem.lipschitz()
        self.w = problem.initial_point()
        self.istate = np.zeros(kernel.N_ISTATE, dtype=np.int64)
        self._rec = np.empty((256, len(self.columns)))

    def advance(self, max_rows: int, stop_at: int) -> tuple[np.ndarray, int]:
        if max_rows > self._rec.shape[0]:
            self._rec = np.empty((max_rows, len(self.columns)))
        self.istate[kernel.I_STOP_AT] = stop_at
        pb = self.problem
        rows = kernel.pgd_advance(
            pb.X, pb.y, pb.lo, pb.hi, self.step, self.w, self.istate, self.tol,
            self._rec[:max_rows],
        )  # fmt: skip
        return self._rec[:rows], int(self.istate[kernel.I_STATUS])

    def iterate(self) -> np.ndarray:
        return self.w.copy()

    @property
    def iteration(self) -> int:
        return int(self.istate[kernel.I_K])


PROBLEMS = {BoxLeastSquares.name: BoxLeastSquares}
STEP_RULES = {
    "inverse-lipschitz": StepRuleSpec(
        name="inverse-lipschitz",
        title="constant step scale / L",
        settings=(
            Setting("scale", "float", 1.0, "step = scale / L", low=0.0, high=2.0, low_open=True),
        ),
        reference="Nesterov 2004, 2.2.3",
    )
}
METHODS: dict[str, MethodSpec] = methods_from(ProjectedGradientSolver)
ALIASES: dict = {}
