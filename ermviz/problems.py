"""Problems: an objective, its gradient and a certificate of optimality, on given data.

A problem is independent of any method: it owns the (preprocessed) training data, its
settings, plain numpy reference implementations of ``objective``, ``gradient`` and
``certificate`` (used for tests, initial estimates and checkpoints) and the quantities
built from the solution (primal recovery, predictions, test metrics). Methods in
:mod:`ermviz.methods` take the arrays they need from it.

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
    Mean logistic loss subject to ``||x||_1 <= radius`` (Xiong & Freund, problem (7.1)).
    Certificate: the Frank-Wolfe gap ``<grad f, x> + radius * ||grad f||_inf``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from ermviz.errors import DataError, SettingError
from ermviz.settings import Setting, resolve_settings


def _log1pexp(t: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, t)


def _sigmoid(t: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -t))


def spectral_norm_sq(X: np.ndarray | sp.spmatrix) -> float:
    """Largest eigenvalue of ``X^T X`` (squared spectral norm), to ~1e-8 relative."""
    if not sp.issparse(X) and X.size <= 4_000_000:
        return float(np.linalg.norm(X, 2) ** 2)
    if min(X.shape) <= 2:
        G = (X.T @ X) if X.shape[0] >= X.shape[1] else (X @ X.T)
        G = G.toarray() if sp.issparse(G) else G
        return float(np.linalg.eigvalsh(G)[-1])
    from scipy.sparse.linalg import svds

    s = svds(X, k=1, tol=1e-10, return_singular_vectors=False, random_state=0)
    return float(s[0] ** 2)


def _check_binary(ds: Any, problem: str) -> None:
    if getattr(ds, "task", "binary") != "binary":
        raise DataError(
            f"{problem} needs a binary classification dataset; {ds.name!r} is a "
            f"{ds.task} dataset (pick a binary one, e.g. a1a or wdbc)"
        )
    labels = np.unique(ds.y)
    if labels.size != 2 or not np.all(np.isin(labels, (-1.0, 1.0))):
        raise DataError(
            f"{problem} needs labels -1/+1 with both classes present; {ds.name!r} has "
            f"labels {labels[:5].tolist()}"
        )


def _append_ones(X: np.ndarray | sp.csr_matrix) -> np.ndarray | sp.csr_matrix:
    ones = np.ones((X.shape[0], 1))
    if sp.issparse(X):
        return sp.hstack([X, sp.csr_matrix(ones)], format="csr")
    return np.hstack([X, ones])


@dataclass
class Problem(ABC):
    """Base class: data, settings and reference (numpy) math of one problem."""

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    certificate_kind: ClassVar[str] = "fw_gap"
    settings_decl: ClassVar[tuple[Setting, ...]] = ()
    #: The comparison worth racing on this problem, as ``(method, step rule)`` pairs: what
    #: the dashboard's race becomes when the user switches to this problem.
    default_race: ClassVar[tuple[tuple[str, str], ...]] = ()

    dataset: Any
    settings: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(cls, dataset: Any, **given: Any) -> Problem:
        """Validate ``given`` against the declared settings and build the problem."""
        return cls(dataset, resolve_settings(cls.settings_decl, given, owner=cls.name))

    # Reference math (numpy), implemented by each problem.
    @abstractmethod
    def objective(self, x: np.ndarray) -> float:
        """See the subclasses."""

    @abstractmethod
    def gradient(self, x: np.ndarray) -> np.ndarray:
        """See the subclasses."""

    @abstractmethod
    def certificate(self, x: np.ndarray) -> float:
        """See the subclasses."""

    @abstractmethod
    def initial_point(self) -> np.ndarray:
        """See the subclasses."""

    @abstractmethod
    def lipschitz(self) -> float:
        """See the subclasses."""

    def test_metrics(self, x: np.ndarray) -> dict[str, float]:
        """Metrics on the dataset's test split (empty when it has none)."""
        return {}


#: Vanilla against away-step against pairwise FW, each with its exact line search: the
#: lesson of Lacoste-Julien & Jaggi (2015), linear convergence of the last two.
FW_RACE: tuple[tuple[str, str], ...] = (("fw", "exact"), ("afw", "exact"), ("pfw", "exact"))


def _binary_metrics(y_true: np.ndarray, scores: np.ndarray) -> dict[str, float]:
    pred = np.where(scores >= 0.0, 1.0, -1.0)
    tp = float(np.sum((pred == 1) & (y_true == 1)))
    fp = float(np.sum((pred == 1) & (y_true == -1)))
    fn = float(np.sum((pred == -1) & (y_true == 1)))
    acc = float(np.mean(pred == y_true))
    f1 = 2 * tp / (2 * tp + fp + fn) if tp > 0 else 0.0
    return {"test_accuracy": acc, "test_f1": f1}


@dataclass
class SvmDual(Problem):
    """L2-loss SVM dual over the unit simplex (see the module docstring).

    Variable: ``alpha``, shape (n,), on the unit simplex. Objective units: squared norm
    (``||A alpha||^2``; the primal optimum is ``-f* / 2``).
    """

    name: ClassVar[str] = "svm-dual"
    title: ClassVar[str] = "L2-SVM dual over the simplex"
    default_race: ClassVar[tuple[tuple[str, str], ...]] = FW_RACE
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
        _check_binary(self.dataset, self.name)
        X = self.dataset.X
        self.X = _append_ones(X) if self.settings["intercept"] else X
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

    def w_of(self, alpha: np.ndarray) -> np.ndarray:
        """``w = Z alpha``, shape (d,)."""
        return np.asarray(self.X.T @ (alpha * self.y)).ravel()

    def objective(self, alpha: np.ndarray) -> float:
        w = self.w_of(alpha)
        return float(w @ w + self.inv_c * (alpha @ alpha))

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
        Xa = _append_ones(X) if self.settings["intercept"] else X
        return np.asarray(Xa @ self.w_of(alpha)).ravel()

    def test_metrics(self, alpha: np.ndarray) -> dict[str, float]:
        ds = self.dataset
        if getattr(ds, "X_test", None) is None:
            return {}
        return _binary_metrics(ds.y_test, self.decision_function(ds.X_test, alpha))


@dataclass
class LogregL1(Problem):
    """Mean logistic loss over the l1 ball (see the module docstring).

    Variable: ``x``, shape (p,), with ``||x||_1 <= radius``. Objective units: nats per
    sample.
    """

    name: ClassVar[str] = "logreg-l1"
    title: ClassVar[str] = "l1-constrained logistic regression"
    default_race: ClassVar[tuple[tuple[str, str], ...]] = FW_RACE
    settings_decl: ClassVar[tuple[Setting, ...]] = (
        Setting("radius", "float", 1.0, "radius of the l1 ball", low=0.0, low_open=True),
        Setting("intercept", "bool", False, "append a constant-1 feature (inside the ball)"),
        Setting(
            "start",
            "choice",
            "zero",
            "initial point: zero = centre of the ball (as 1/2 (+r e_j) + 1/2 (-r e_j)), "
            "vertex = the LMO vertex at 0",
            choices=("zero", "vertex"),
        ),
    )

    def __post_init__(self) -> None:
        _check_binary(self.dataset, self.name)
        X = self.dataset.X
        self.X = _append_ones(X) if self.settings["intercept"] else X
        if sp.issparse(self.X):
            self.X = sp.csr_matrix(self.X)
        self.y = np.ascontiguousarray(self.dataset.y, dtype=np.float64)
        self.radius = float(self.settings["radius"])
        self.n, self.p = self.X.shape

    @property
    def dim(self) -> int:
        return self.p

    def margins(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.X @ x).ravel()

    def objective(self, x: np.ndarray) -> float:
        return float(np.mean(_log1pexp(-self.y * self.margins(x))))

    def gradient(self, x: np.ndarray) -> np.ndarray:
        r = -self.y * _sigmoid(-self.y * self.margins(x)) / self.n
        return np.asarray(self.X.T @ r).ravel()

    def certificate(self, x: np.ndarray) -> float:
        g = self.gradient(x)
        return float(g @ x + self.radius * np.abs(g).max())

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
        mu = self.initial_atoms()
        return self.radius * (mu[0::2] - mu[1::2])

    def lipschitz(self) -> float:
        """Lipschitz constant of the gradient: ``||X||_2^2 / (4 n)``."""
        return spectral_norm_sq(self.X) / (4.0 * self.n)

    def decision_function(self, X: np.ndarray | sp.spmatrix, x: np.ndarray) -> np.ndarray:
        Xa = _append_ones(X) if self.settings["intercept"] else X
        return np.asarray(Xa @ x).ravel()

    def test_metrics(self, x: np.ndarray) -> dict[str, float]:
        ds = self.dataset
        if getattr(ds, "X_test", None) is None:
            return {}
        return _binary_metrics(ds.y_test, self.decision_function(ds.X_test, x))


# Problems of the Frank-Wolfe family; other families add theirs through ermviz.methods.
PROBLEMS: dict[str, type[Problem]] = {cls.name: cls for cls in (SvmDual, LogregL1)}


def get_problem(name: str) -> type[Problem]:
    """The problem class registered under ``name`` (any family's)."""
    import ermviz.methods  # noqa: F401 - importing the registry registers every family

    try:
        return PROBLEMS[name]
    except KeyError:
        raise SettingError(
            f"unknown problem {name!r}; choose one of: {', '.join(PROBLEMS)}"
        ) from None


def build_problem(name: str, dataset: Any, **settings: Any) -> Problem:
    """Build problem ``name`` on ``dataset`` with validated ``settings``."""
    return get_problem(name).build(dataset, **settings)
