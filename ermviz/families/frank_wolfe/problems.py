"""The Frank-Wolfe family's problems: objective, gradient and certificate, on given data.

A problem is independent of any method: it owns the (preprocessed) training data, its
settings, plain numpy reference implementations of ``objective``, ``gradient`` and
``certificate`` (used for tests, initial estimates and checkpoints) and the quantities
built from the solution (primal recovery, predictions, test metrics). Methods in
:mod:`ermviz.families.frank_wolfe.methods` take the arrays they need from it.

Problems
--------
``svm-dual``
    The L2-loss soft-margin SVM dual over the unit simplex,
    ``min_{alpha in simplex} f(alpha) = ||A alpha||^2``, ``A = [Z; I / sqrt(C)]``,
    ``Z = [y_1 x_1, ..., y_n x_n]`` (Jaggi 2014, "An equivalence between the Lasso and
    support vector machines"; the seed report on FW variants for the L2-SVM, following
    it). A constant-1 feature is appended by default so the offset is part of ``w``.
    Certificate: the Frank-Wolfe (duality) gap ``max_{s} <grad f, alpha - s>``.
``logreg-l1``
    Mean logistic loss subject to ``||x||_1 <= radius`` (Xiong & Freund, problem (7.1)),
    or over another set chosen by ``constraint`` (l2 ball, box, K-sparse polytope; see
    :mod:`.constraints`). Certificate: the Frank-Wolfe gap
    ``<grad f, x> - min_{s in C} <grad f, s>`` (``+ radius * ||grad f||_inf`` on the l1 ball).
``least-squares``
    ``(1 / 2n) ||X x - y||^2`` over the same sets (regression data). Certificate: the FW gap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from ermviz.base import Problem
from ermviz.errors import DataError
from ermviz.families.common import (
    append_ones,
    binary_metrics,
    check_binary,
    log1pexp,
    sigmoid,
    spectral_norm_sq,
)
from ermviz.families.frank_wolfe.constraints import (
    CONSTRAINT_SETTINGS,
    ConstraintSet,
    radius_setting,
)
from ermviz.families.scaling import ScalingCheck
from ermviz.geometry import (
    Geometry,
    box_geometry,
    l1_ball_geometry,
    l2_ball_geometry,
    simplex_geometry,
)
from ermviz.settings import Setting

#: Vanilla against away-step against pairwise FW, each with its exact line search: the
#: lesson of Lacoste-Julien & Jaggi (2015), linear convergence of the last two.
FW_RACE: tuple[tuple[str, str], ...] = (("fw", "exact"), ("afw", "exact"), ("pfw", "exact"))
#: Every method of these problems (FW variants, TUFW and its baselines) slows down on badly
#: scaled features; none copes (see :mod:`ermviz.families.scaling`).
FW_SLOW = "Frank-Wolfe methods"
#: The FW methods' traces count passes over the data matrix (``data_passes``: each product
#: with X or X^T; see :mod:`.passes` and :mod:`solvers.face_newton`).
DATA_PASSES_AXIS: tuple[tuple[str, str], ...] = (("data_passes", "passes over the data"),)


@dataclass
class SvmDual(Problem):
    """L2-loss SVM dual over the unit simplex (see the module docstring).

    Variable: ``alpha``, shape (n,), on the unit simplex. Objective units: squared norm
    (``||A alpha||^2``; the primal optimum is ``-f* / 2``).
    """

    name: ClassVar[str] = "svm-dual"
    title: ClassVar[str] = "L2-SVM dual over the simplex"
    default_race: ClassVar[tuple[tuple[str, str], ...]] = FW_RACE
    work_axes: ClassVar[tuple[tuple[str, str], ...]] = DATA_PASSES_AXIS
    scaling: ClassVar[ScalingCheck] = ScalingCheck(FW_SLOW, unit="the constant feature and 1/C")
    settings_decl: ClassVar[tuple[Setting, ...]] = (
        Setting("C", "float", 1.0, "penalty on the squared slacks", low=0.0, low_open=True),
        Setting(
            "intercept",
            "bool",
            True,
            "append a constant-1 feature so the offset is part of w (as in the seed report)",
        ),
        Setting(
            "start",
            "choice",
            "e1",
            "initial point: e1 = first vertex, uniform = barycentre",
            choices=("e1", "uniform"),
        ),
    )

    def __post_init__(self) -> None:
        check_binary(self.dataset, self.name)
        X = self.dataset.X
        self.X = append_ones(X) if self.settings["intercept"] else X
        self.y = np.ascontiguousarray(self.dataset.y, dtype=np.float64)
        self.inv_c = 1.0 / self.settings["C"]
        if sp.issparse(self.X):
            self.sqnorms = np.asarray(self.X.multiply(self.X).sum(axis=1)).ravel()
        else:
            self.sqnorms = np.einsum("ij,ij->i", self.X, self.X)
        self.n = self.X.shape[0]

    @property
    def dim(self) -> int:
        return self.n

    @property
    def constraint_set(self) -> ConstraintSet:
        """The unit simplex of R^n."""
        return ConstraintSet("simplex", self.n)

    def w_of(self, alpha: np.ndarray) -> np.ndarray:
        """``w = Z alpha``, shape (d,)."""
        return np.asarray(self.X.T @ (alpha * self.y)).ravel()

    def objective(self, alpha: np.ndarray) -> float:
        w = self.w_of(alpha)
        return float(w @ w + self.inv_c * (alpha @ alpha))

    def objectives(self, alphas: np.ndarray) -> np.ndarray:
        """:meth:`objective` at each row of ``alphas`` (k, n), shape (k,) (the teaching
        view's contour grid)."""
        W = _rows_times(alphas * self.y, self.X)  # (k, d): each row's w = Z alpha
        return np.einsum("ij,ij->i", W, W) + self.inv_c * np.einsum("ij,ij->i", alphas, alphas)

    def gradient(self, alpha: np.ndarray) -> np.ndarray:
        w = self.w_of(alpha)
        return 2.0 * (self.y * np.asarray(self.X @ w).ravel() + self.inv_c * alpha)

    def certificate(self, alpha: np.ndarray) -> float:
        g = self.gradient(alpha)
        return float(g @ alpha - g.min())

    def initial_point(self) -> np.ndarray:
        alpha = np.zeros(self.n)
        if self.settings["start"] == "e1":
            alpha[0] = 1.0
        else:
            alpha[:] = 1.0 / self.n
        return alpha

    def lipschitz(self) -> float:
        """Lipschitz constant of the gradient: ``2 (||Z||_2^2 + 1/C)``."""
        return 2.0 * (spectral_norm_sq(self.X) + self.inv_c)

    def primal(self, alpha: np.ndarray) -> dict[str, Any]:
        """Primal solution from the dual (KKT): ``w = Z alpha``, ``xi = alpha / C``,
        ``rho = ||w||^2 + ||alpha||^2 / C``; primal objective ``-rho / 2`` at the optimum."""
        w = self.w_of(alpha)
        rho = float(w @ w + self.inv_c * (alpha @ alpha))
        return {"w": w, "rho": rho, "xi": alpha * self.inv_c}

    def decision_function(self, X: np.ndarray | sp.spmatrix, alpha: np.ndarray) -> np.ndarray:
        """``w^T x`` for each row of ``X`` (raw features; the constant is appended here)."""
        Xa = append_ones(X) if self.settings["intercept"] else X
        return np.asarray(Xa @ self.w_of(alpha)).ravel()

    @classmethod
    def teachable(cls, n: int, p: int) -> bool:
        return n <= 4

    def teaching_geometry(self) -> Geometry | None:
        """The simplex of 3 or 4 points, drawn as a triangle or a tetrahedron."""
        return simplex_geometry(self.n)

    def test_metrics(self, alpha: np.ndarray) -> dict[str, float]:
        ds = self.dataset
        if getattr(ds, "X_test", None) is None:
            return {}
        return binary_metrics(ds.y_test, self.decision_function(ds.X_test, alpha))


#: Settings of the l1-constrained GLMs (the TUFW family's problems keep to these).
L1_GLM_SETTINGS: tuple[Setting, ...] = (
    radius_setting(1.0, "radius of the l1 / l2 ball (K-sparse: the l_inf bound tau)"),
    Setting("intercept", "bool", False, "append a constant-1 feature (inside the set)"),
    Setting(
        "start",
        "choice",
        "zero",
        "initial point: zero = centre of the set (as 1/2 (v + its opposite vertex), "
        "e.g. 1/2 (+r e_j) + 1/2 (-r e_j)), vertex = the LMO vertex at the centre",
        choices=("zero", "vertex"),
    ),
)


class ConstrainedProblem(Problem):
    """Shared by the vector problems over a set chosen by ``constraint``: the set
    (validated), the FW gap as certificate, the start point and the teaching drawing."""

    constraint_set: ConstraintSet
    p: int

    def _load(self, y: np.ndarray) -> None:
        """Features (a constant-1 column appended with ``intercept``; sparse as CSR),
        targets ``y`` and the validated set."""
        X = self.dataset.X
        self.X = append_ones(X) if self.settings["intercept"] else X
        if sp.issparse(self.X):
            self.X = sp.csr_matrix(self.X)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.n, self.p = self.X.shape
        radius = self.settings["radius"]
        self.radius = float(radius) if radius is not None else self.derived_radius()
        self._build_constraint()

    def derived_radius(self) -> float:
        """The radius when the settings leave it to the data (None): the unit ball here;
        least squares derives one from its data."""
        return 1.0

    @property
    def dim(self) -> int:
        return self.p

    def decision_function(self, X: np.ndarray | sp.spmatrix, x: np.ndarray) -> np.ndarray:
        """``x^T a`` for each row ``a`` of ``X`` (raw features; the constant appended here)."""
        Xa = append_ones(X) if self.settings["intercept"] else X
        return np.asarray(Xa @ x).ravel()

    @classmethod
    def teachable(cls, n: int, p: int) -> bool:
        return p <= 2

    def _build_constraint(self) -> None:
        self.constraint_set = ConstraintSet.from_settings(
            {
                **self.settings,
                "constraint": self.settings.get("constraint", "l1"),
                "radius": self.radius,
            },
            self.p,
            self.name,
        )
        X = self.X
        entries = X.data if sp.issparse(X) else np.asarray(X)
        feature_max = float(np.abs(entries).max()) if entries.size else 0.0
        self.constraint_set.check_scale(feature_max, self.n, self.name)

    @property
    def constraint(self) -> str:
        return self.constraint_set.kind

    def certificate(self, x: np.ndarray) -> float:
        return self.constraint_set.fw_gap(self.gradient(x), x)

    def start_atoms(self) -> list[tuple[np.ndarray, np.ndarray, float]]:
        """The start point as weighted atoms of the set (see ``start``)."""
        c = self.constraint_set
        return c.start_atoms(self.gradient(c.centre()), self.settings.get("start", "zero"))

    def initial_point(self) -> np.ndarray:
        x = np.zeros(self.p)
        for idx, val, w in self.start_atoms():
            x[idx] += w * val
        return x

    def teaching_geometry(self) -> Geometry | None:
        """The set in R^2: the l1 diamond, the l2 disc or the box (None otherwise)."""
        c = self.constraint_set
        if c.kind == "l1":
            return l1_ball_geometry(self.p, c.radius)
        if c.kind == "l2":
            return l2_ball_geometry(self.p, c.radius)
        if c.kind == "box":
            return box_geometry(self.p, c.lo, c.hi)
        return None


@dataclass
class LogregL1(ConstrainedProblem):
    """Mean logistic loss over the l1 ball (see the module docstring).

    Variable: ``x``, shape (p,), with ``||x||_1 <= radius``. Objective units: nats per
    sample.
    """

    name: ClassVar[str] = "logreg-l1"
    title: ClassVar[str] = "l1-constrained logistic regression"
    default_race: ClassVar[tuple[tuple[str, str], ...]] = FW_RACE
    work_axes: ClassVar[tuple[tuple[str, str], ...]] = DATA_PASSES_AXIS
    scaling: ClassVar[ScalingCheck] = ScalingCheck(FW_SLOW, unit="the loss's unit margin")
    settings_decl: ClassVar[tuple[Setting, ...]] = (*L1_GLM_SETTINGS, *CONSTRAINT_SETTINGS)

    def __post_init__(self) -> None:
        check_binary(self.dataset, self.name)
        self._load(np.asarray(self.dataset.y, dtype=np.float64))

    def margins(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.X @ x).ravel()

    def objective(self, x: np.ndarray) -> float:
        return float(np.mean(log1pexp(-self.y * self.margins(x))))

    def objectives(self, xs: np.ndarray) -> np.ndarray:
        """:meth:`objective` at each row of ``xs`` (k, p), shape (k,)."""
        margins = _rows_times(xs, self.X.T)  # (k, n)
        return np.mean(log1pexp(-self.y * margins), axis=1)

    def gradient(self, x: np.ndarray) -> np.ndarray:
        r = -self.y * sigmoid(-self.y * self.margins(x)) / self.n
        return np.asarray(self.X.T @ r).ravel()

    def initial_atoms(self) -> np.ndarray:
        """Atom weights of the start point, shape (2 p,) (see :mod:`solvers.active_set`)."""
        g0 = self.gradient(np.zeros(self.p))
        j = int(np.argmax(np.abs(g0)))
        mu = np.zeros(2 * self.p)
        if self.settings["start"] == "zero":
            mu[2 * j] = mu[2 * j + 1] = 0.5
        else:
            mu[2 * j if g0[j] < 0 else 2 * j + 1] = 1.0
        return mu

    def initial_point(self) -> np.ndarray:
        if self.constraint != "l1":
            return super().initial_point()
        mu = self.initial_atoms()
        return self.radius * (mu[0::2] - mu[1::2])

    def lipschitz(self) -> float:
        """Lipschitz constant of the gradient: ``||X||_2^2 / (4 n)``."""
        return spectral_norm_sq(self.X) / (4.0 * self.n)

    def test_metrics(self, x: np.ndarray) -> dict[str, float]:
        ds = self.dataset
        if getattr(ds, "X_test", None) is None:
            return {}
        return binary_metrics(ds.y_test, self.decision_function(ds.X_test, x))


@dataclass
class LeastSquares(ConstrainedProblem):
    """Least squares over a set chosen by ``constraint`` (see the module docstring).

    ``min_{x in C} (1 / 2n) ||X x - y||^2``: the constrained regression of Jaggi (2013)
    (the l1 ball is the Lasso in its constrained form). Variable: ``x``, shape (p,).
    Objective units: half the mean squared residual, in squared target units.
    """

    name: ClassVar[str] = "least-squares"
    title: ClassVar[str] = "constrained least squares (l1 ball by default)"
    default_race: ClassVar[tuple[tuple[str, str], ...]] = FW_RACE
    work_axes: ClassVar[tuple[tuple[str, str], ...]] = DATA_PASSES_AXIS
    # Invariant under a common rescaling of the features (the radius follows the data):
    # only their spread counts (an appended constant-1 column among them).
    scaling: ClassVar[ScalingCheck] = ScalingCheck(FW_SLOW)
    settings_decl: ClassVar[tuple[Setting, ...]] = (
        radius_setting(
            None,
            "radius of the l1 / l2 ball (K-sparse: the l_inf bound tau); default: half the "
            "norm of the unconstrained least-squares solution in the set's norm (l1, l2; "
            "K-sparse: its largest |x_j|), so that the constraint binds",
        ),
        *L1_GLM_SETTINGS[1:],
        *CONSTRAINT_SETTINGS,
    )

    def __post_init__(self) -> None:
        ds = self.dataset
        y = np.asarray(ds.y, dtype=np.float64)
        if not np.all(np.isfinite(y)):
            raise DataError(f"least-squares: dataset {ds.name!r} has non-finite targets")
        self._load(y)

    def derived_radius(self) -> float:
        """Half the norm of the unconstrained solution ``x_ls`` (LSQR, Paige & Saunders
        1982), in the norm of ``constraint``: a set that binds without being a vertex's
        worth of the data. Falls back to 1 when ``x_ls`` is 0."""
        from scipy.sparse.linalg import lsqr

        x_ls = lsqr(self.X, self.y, atol=1e-10, btol=1e-10, iter_lim=max(100, 10 * self.p))[0]
        kind = self.settings.get("constraint", "l1")
        norm = {"l2": np.linalg.norm(x_ls), "ksparse": np.abs(x_ls).max(initial=0.0)}.get(
            kind, np.abs(x_ls).sum()
        )
        return 0.5 * float(norm) if norm > 0 else 1.0

    def residual(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.X @ x).ravel() - self.y

    def objective(self, x: np.ndarray) -> float:
        r = self.residual(x)
        return float(r @ r) / (2.0 * self.n)

    def objectives(self, xs: np.ndarray) -> np.ndarray:
        """:meth:`objective` at each row of ``xs`` (k, p), shape (k,)."""
        R = _rows_times(xs, self.X.T) - self.y  # (k, n) residuals
        return np.einsum("ij,ij->i", R, R) / (2.0 * self.n)

    def gradient(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.X.T @ self.residual(x)).ravel() / self.n

    def lipschitz(self) -> float:
        """Lipschitz constant of the gradient: ``||X||_2^2 / n``."""
        return spectral_norm_sq(self.X) / self.n

    def test_metrics(self, x: np.ndarray) -> dict[str, float]:
        ds = self.dataset
        if getattr(ds, "X_test", None) is None:
            return {}
        r = self.decision_function(ds.X_test, x) - np.asarray(ds.y_test, dtype=float)
        return {"test_rmse": float(np.sqrt(np.mean(r * r)))}


def _problems() -> dict[str, type[Problem]]:
    from ermviz.families.frank_wolfe.completion import MatrixCompletion

    return {cls.name: cls for cls in (SvmDual, LogregL1, LeastSquares, MatrixCompletion)}


PROBLEMS: dict[str, type[Problem]] = _problems()


def _rows_times(rows: np.ndarray, M: np.ndarray | sp.spmatrix) -> np.ndarray:
    """``rows @ M`` as a dense array (k, M.shape[1]), for a dense or sparse ``M``."""
    out = M.T @ np.asarray(rows, dtype=np.float64).T
    return np.asarray(out.toarray() if sp.issparse(out) else out).T
