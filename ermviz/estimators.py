"""scikit-learn estimators over the ermviz solvers: ``fit`` is the CLI's run.

Every estimator builds the family's problem on ``(X, y)`` and runs the chosen method to
``tol`` through the same path as ``python -m ermviz run`` (:class:`ermviz.experiment.RunConfig`,
:func:`~ermviz.experiment.make_problem`, :func:`~ermviz.experiment.make_run`), so a fit
reaches the CLI's objective on the same data and settings, and its settings are checked
at ``fit`` with the CLI's one-line messages (:class:`ermviz.errors.SettingError`, a
``ValueError``). After ``fit``: ``n_iter_``, ``certificate_`` (the final certificate),
``certificate_kind_`` (``fw_gap``, ``duality_gap``, ``rel_duality_gap``), ``objective_``,
``status_`` and ``trace_`` (the run's tidy trace, the CLI's ``--out`` schema).

Classifiers take any two classes (``classes_``; the second is coded +1) and predict them
back. Sparse ``X`` stays CSR. Example::

    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from ermviz.estimators import ConstrainedLogisticRegression

    model = make_pipeline(StandardScaler(), ConstrainedLogisticRegression(radius=5.0))
    model.fit(X_train, y_train).score(X_test, y_test)

:func:`ermviz.app.live_fit` fits one in a notebook while the dashboard's plots show its
certificate fall.
"""

from __future__ import annotations

import warnings
from abc import ABCMeta, abstractmethod
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ermviz.errors import SettingError

__all__ = [
    "ConstrainedLeastSquares",
    "ConstrainedLogisticRegression",
    "L2SVMClassifier",
    "LSSVMClassifier",
    "LSSVMRegressor",
    "PLQClassifier",
    "PLQRegressor",
]


class _RunEstimator(BaseEstimator, metaclass=ABCMeta):
    """Shared ``fit``: data -> Dataset -> the family's problem -> a run to ``tol``."""

    _problem_name: ClassVar[str] = ""
    _classifier: ClassVar[bool] = False

    # -- what each class declares ------------------------------------------------------
    @abstractmethod
    def _problem_settings(self) -> dict[str, Any]:
        """The family problem's settings from this estimator's parameters."""

    @abstractmethod
    def _set_model(self, problem: Any, x: np.ndarray) -> None:
        """The fitted attributes (``coef_``, ...) from the solver's final iterate ``x``."""

    # -- sklearn plumbing ----------------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _validate_xy(self, X: Any, y: Any) -> tuple[Any, np.ndarray, str]:
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse="csr",
            dtype=np.float64,
            y_numeric=not self._classifier,
            ensure_min_samples=2,
        )
        if not self._classifier:
            return X, np.asarray(y, dtype=np.float64), "regression"
        check_classification_targets(y)
        self.classes_, coded = np.unique(y, return_inverse=True)
        if len(self.classes_) != 2:
            raise ValueError(
                f"Only binary classification is supported. {type(self).__name__} got y with "
                f"{len(self.classes_)} class(es); give exactly two classes (or wrap it in "
                "sklearn.multiclass.OneVsRestClassifier)"
            )
        return X, np.where(coded == 1, 1.0, -1.0), "binary"

    def _config(self) -> Any:
        from ermviz.experiment import RunConfig
        from ermviz.runner import NO_ITER_LIMIT, Budget

        settings = {**self._problem_settings(), **dict(self.method_settings or {})}
        budget = Budget(
            tol=self.tol,
            max_iter=NO_ITER_LIMIT if self.max_iter is None else self.max_iter,
            max_time=self.max_time,
        )
        return RunConfig(
            "estimator", self._problem_name, self.method, self.step or "", settings, budget
        )

    def _prepare(self, X: Any, y: Any) -> Any:
        """Validate everything, build the problem and the run (not started)."""
        from ermviz import compile_notice
        from ermviz.data.dataset import _make_dataset
        from ermviz.experiment import make_problem, make_run, validate_method_side

        cfg = self._config()
        resolved = validate_method_side(cfg)  # bad names and settings fail before the data
        X, y, task = self._validate_xy(X, y)
        # A Dataset's arrays are read-only, and validate_data may hand back the caller's
        # own array: copy, so that fitting never freezes the user's X.
        X = X.copy()
        ds = _make_dataset(
            f"{type(self).__name__} data", X, y, task, "array", "", dense=not sp.issparse(X)
        )
        # A first fit (nothing in numba's cache) says "compiling ..." once, on stderr.
        with compile_notice.announce(cfg.problem, resolved.method, compile_notice.storage_of(ds)):
            problem = make_problem(cfg, dataset=ds)
            return make_run(cfg, problem=problem, resolved=resolved)

    def _finish(self, run: Any) -> _RunEstimator:
        summary = run.summary()
        if summary["status"] == "error":
            raise SettingError(f"{type(self).__name__}.fit failed: {summary['message']}")
        self.status_ = summary["status"]
        self.n_iter_ = int(summary["iterations"])
        self.objective_ = float(summary["objective"])
        self.certificate_ = float(summary["gap"])
        self.certificate_kind_ = summary["certificate_kind"]
        self.trace_ = run.frame()
        self.fit_time_ = float(summary["time_s"])
        x = run.solver.iterate()
        self._set_model(run.solver.problem, x)
        if self.status_ != "converged":
            warnings.warn(
                f"{type(self).__name__} stopped with status {self.status_!r} at certificate "
                f"{self.certificate_:.3g} > tol={self.tol:g}; raise max_iter/max_time or tol",
                ConvergenceWarning,
                stacklevel=3,
            )
        return self

    def fit(self, X: Any, y: Any) -> _RunEstimator:
        """Fit on ``X`` (n, p), dense or sparse (kept CSR), and targets ``y`` (n,)."""
        run = self._prepare(X, y)
        run.run()
        return self._finish(run)

    # -- predictions -----------------------------------------------------------------
    def _check_X(self, X: Any) -> Any:
        check_is_fitted(self)
        return validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)

    def _raw(self, X: Any) -> np.ndarray:
        X = self._check_X(X)
        return np.asarray(X @ np.ravel(self.coef_)).ravel() + float(np.ravel(self.intercept_)[0])


class _LinearClassifier(ClassifierMixin, _RunEstimator):
    _classifier: ClassVar[bool] = True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def decision_function(self, X: Any) -> np.ndarray:
        """Signed score of ``classes_[1]`` (the class coded +1), shape (n,)."""
        return self._raw(X)

    def predict(self, X: Any) -> np.ndarray:
        """``classes_[1]`` where ``decision_function > 0``, else ``classes_[0]``."""
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]


class _LinearRegressor(RegressorMixin, _RunEstimator):
    def predict(self, X: Any) -> np.ndarray:
        """``X @ coef_ + intercept_``."""
        return self._raw(X)


def _split_linear(x: np.ndarray, p: int, intercept: bool) -> tuple[np.ndarray, float]:
    x = np.asarray(x, dtype=np.float64)
    return x[:p].copy(), (float(x[p]) if intercept else 0.0)


# ---------------------------------------------------------------------------------------
# Frank-Wolfe family


class _ConstrainedMixin:
    def _problem_settings(self) -> dict[str, Any]:
        return {
            "radius": self.radius,
            "intercept": self.fit_intercept,
            "start": self.start,
            "constraint": self.constraint,
            "lo": self.lo,
            "hi": self.hi,
            "K": self.K,
        }


class ConstrainedLogisticRegression(_ConstrainedMixin, _LinearClassifier):
    """Logistic regression over an l1 / l2 ball, a box or a K-sparse polytope, by Frank-Wolfe.

    Minimizes the mean logistic loss ``(1/n) sum log(1 + exp(-y_i x_i^T w))`` subject to
    ``w`` in the set (problem ``logreg-l1``; Xiong & Freund's problem (7.1) for the l1
    ball). Methods: ``fw`` (Frank & Wolfe 1956; Jaggi 2013), ``afw`` (away steps) and
    ``pfw`` (pairwise; Lacoste-Julien & Jaggi 2015, linear convergence on polytopes),
    ``bpcg`` (blended pairwise conditional gradients; Tsuji, Tanaka & Pokutta 2022),
    ``boosted`` (Combettes & Pokutta 2020), and the family's ``tufw``, ``spider-fw``,
    ``csfw``, ``fw-nc``; ``step`` names the step rule (default: the method's own; see
    ``python -m ermviz methods``). The certificate is the Frank-Wolfe gap.

    Parameters
    ----------
    radius : float
        Radius of the l1 / l2 ball (K-sparse: the l_inf bound).
    constraint : {"l1", "l2", "box", "ksparse"}
    lo, hi : float
        Box bounds (``constraint="box"``).
    K : int
        Nonzeros per vertex (``constraint="ksparse"``).
    fit_intercept : bool
        Append a constant-1 feature; its weight (``intercept_``) lies inside the set too.
    start : {"zero", "vertex"}
    method, step : str
        Method and step rule, as the CLI's ``--method`` and ``--step`` (None: default).
    method_settings : dict or None
        Further method / step-rule settings (the CLI's ``--set KEY=VALUE``).
    tol : float
        Stop at certificate <= tol (the CLI's ``--tol``).
    max_iter : int or None
        Iteration limit (None: none).
    max_time : float
        Solver-seconds limit (the CLI's ``--max-time``).
    """

    _problem_name: ClassVar[str] = "logreg-l1"

    def __init__(
        self,
        radius: float = 1.0,
        constraint: str = "l1",
        *,
        lo: float = -1.0,
        hi: float = 1.0,
        K: int = 5,
        fit_intercept: bool = True,
        start: str = "zero",
        method: str = "pfw",
        step: str | None = None,
        method_settings: dict[str, Any] | None = None,
        tol: float = 1e-6,
        max_iter: int | None = None,
        max_time: float = 300.0,
    ) -> None:
        self.radius = radius
        self.constraint = constraint
        self.lo = lo
        self.hi = hi
        self.K = K
        self.fit_intercept = fit_intercept
        self.start = start
        self.method = method
        self.step = step
        self.method_settings = method_settings
        self.tol = tol
        self.max_iter = max_iter
        self.max_time = max_time

    def _set_model(self, problem: Any, x: np.ndarray) -> None:
        coef, b = _split_linear(x, self.n_features_in_, self.fit_intercept)
        self.coef_ = coef[None, :]
        self.intercept_ = np.array([b])

    def predict_proba(self, X: Any) -> np.ndarray:
        """Logistic probabilities of ``classes_``, shape (n, 2)."""
        from scipy.special import expit

        p1 = expit(self.decision_function(X))
        return np.column_stack([1.0 - p1, p1])


class ConstrainedLeastSquares(_ConstrainedMixin, _LinearRegressor):
    """Least squares over an l1 / l2 ball, a box or a K-sparse polytope, by Frank-Wolfe.

    Minimizes ``(1/2n) ||X w - y||^2`` subject to ``w`` in the set (problem
    ``least-squares``; the constrained Lasso of Jaggi 2013 on the l1 ball). ``radius=None``
    takes half the norm of the unconstrained solution, so that the set binds. Methods and
    parameters as :class:`ConstrainedLogisticRegression` (``fw``, ``afw``, ``pfw``,
    ``bpcg``, ``boosted``; Lacoste-Julien & Jaggi 2015). The certificate is the
    Frank-Wolfe gap.
    """

    _problem_name: ClassVar[str] = "least-squares"

    def __init__(
        self,
        radius: float | None = None,
        constraint: str = "l1",
        *,
        lo: float = -1.0,
        hi: float = 1.0,
        K: int = 5,
        fit_intercept: bool = True,
        start: str = "zero",
        method: str = "pfw",
        step: str | None = None,
        method_settings: dict[str, Any] | None = None,
        tol: float = 1e-6,
        max_iter: int | None = None,
        max_time: float = 300.0,
    ) -> None:
        self.radius = radius
        self.constraint = constraint
        self.lo = lo
        self.hi = hi
        self.K = K
        self.fit_intercept = fit_intercept
        self.start = start
        self.method = method
        self.step = step
        self.method_settings = method_settings
        self.tol = tol
        self.max_iter = max_iter
        self.max_time = max_time

    def _set_model(self, problem: Any, x: np.ndarray) -> None:
        self.coef_, self.intercept_ = _split_linear(x, self.n_features_in_, self.fit_intercept)
        self.radius_ = float(problem.radius)


class L2SVMClassifier(_LinearClassifier):
    """The L2-loss (squared hinge) SVM, solved in its dual over the simplex by Frank-Wolfe.

    Problem ``svm-dual``: ``min_{alpha in simplex} ||Z alpha||^2 + ||alpha||^2 / C``
    (Jaggi 2014, "An equivalence between the Lasso and support vector machines"), with
    ``Z = [y_i x_i]`` and, with ``fit_intercept``, a constant-1 feature inside ``w`` (so
    the offset is regularized, like scikit-learn's ``LinearSVC`` with
    ``intercept_scaling=1``). The primal weights are recovered from the dual:
    ``w = Z alpha / rho`` with ``rho = ||Z alpha||^2 + ||alpha||^2 / C``, which is the
    solution of ``min 1/2 ||w||^2 + (C/2) sum max(0, 1 - y_i w^T x_i)^2``, i.e.
    ``LinearSVC(loss="squared_hinge", C=C/2)``. Methods ``fw``, ``afw``, ``pfw``
    (Lacoste-Julien & Jaggi 2015), ``bpcg``, ``boosted``, ``dicg``; the certificate is
    the Frank-Wolfe (duality) gap of the dual. ``dual_coef_`` holds ``alpha``.
    """

    _problem_name: ClassVar[str] = "svm-dual"

    def __init__(
        self,
        C: float = 1.0,
        *,
        fit_intercept: bool = True,
        start: str = "e1",
        method: str = "pfw",
        step: str | None = None,
        method_settings: dict[str, Any] | None = None,
        tol: float = 1e-6,
        max_iter: int | None = None,
        max_time: float = 300.0,
    ) -> None:
        self.C = C
        self.fit_intercept = fit_intercept
        self.start = start
        self.method = method
        self.step = step
        self.method_settings = method_settings
        self.tol = tol
        self.max_iter = max_iter
        self.max_time = max_time

    def _problem_settings(self) -> dict[str, Any]:
        return {"C": self.C, "intercept": self.fit_intercept, "start": self.start}

    def _set_model(self, problem: Any, x: np.ndarray) -> None:
        prim = problem.primal(x)
        w = prim["w"] / prim["rho"]
        coef, b = _split_linear(w, self.n_features_in_, self.fit_intercept)
        self.coef_ = coef[None, :]
        self.intercept_ = np.array([b])
        self.dual_coef_ = np.asarray(x, dtype=np.float64).copy()


# ---------------------------------------------------------------------------------------
# PLQ family (ReHLine)


class _PlqMixin:
    _losses: ClassVar[tuple[str, ...]] = ()

    def _problem_settings(self) -> dict[str, Any]:
        if self.loss not in self._losses:
            raise SettingError(
                f"{type(self).__name__}: loss={self.loss!r} is not one of its losses; "
                f"choose one of: {', '.join(self._losses)}"
            )
        out = {
            "loss": self.loss,
            "C": self.C,
            "average": self.average,
            "intercept": self.fit_intercept,
            "constraint": self.constraint,
            "rho": self.rho,
            "sensitive": self.sensitive,
            "l1": self.l1,
        }
        for key in ("epsilon", "quantile", "kappa"):
            if hasattr(self, key):
                out[key] = getattr(self, key)
        return out

    def _set_model(self, problem: Any, x: np.ndarray) -> None:
        coef, b = _split_linear(x, self.n_features_in_, self.fit_intercept)
        if self._classifier:
            self.coef_, self.intercept_ = coef[None, :], np.array([b])
        else:
            self.coef_, self.intercept_ = coef, b


_PLQ_DOC = """

    Problem ``plq`` (Dai & Qiu 2023, "ReHLine: Regularized Composite ReLU-ReHU Loss
    Minimization with Linear Computation and Linear Convergence"):
    ``C * sum_i loss(y_i, x_i^T w) + l1 ||w||_1 + 1/2 ||w||^2`` (loss sum divided by n with
    ``average=True``) subject to ``constraint``: ``none``, ``fairness``
    (``|(1/n) z^T X w| <= rho`` for the centred column ``sensitive``), ``nonnegative``
    or ``monotone``. Methods: ``rehline`` (the paper's dual coordinate descent) or ``ipm``
    (a primal-dual interior-point method, Newton steps). With ``fit_intercept`` a constant-1
    column is appended and penalized like every coefficient. The certificate is the
    duality gap.
    """


class PLQClassifier(_PlqMixin, _LinearClassifier):
    __doc__ = (
        "A linear classifier with a piecewise linear-quadratic loss: ``svm`` (hinge), "
        "``ssvm`` (smoothed hinge) or ``svm2`` (squared hinge)." + _PLQ_DOC
    )

    _problem_name: ClassVar[str] = "plq"
    _losses: ClassVar[tuple[str, ...]] = ("svm", "ssvm", "svm2")

    def __init__(
        self,
        loss: str = "svm",
        C: float = 1.0,
        *,
        average: bool = False,
        fit_intercept: bool = True,
        constraint: str = "none",
        rho: float = 0.01,
        sensitive: int = 0,
        l1: float = 0.0,
        method: str = "rehline",
        step: str | None = None,
        method_settings: dict[str, Any] | None = None,
        tol: float = 1e-6,
        max_iter: int | None = None,
        max_time: float = 300.0,
    ) -> None:
        self.loss = loss
        self.C = C
        self.average = average
        self.fit_intercept = fit_intercept
        self.constraint = constraint
        self.rho = rho
        self.sensitive = sensitive
        self.l1 = l1
        self.method = method
        self.step = step
        self.method_settings = method_settings
        self.tol = tol
        self.max_iter = max_iter
        self.max_time = max_time


class PLQRegressor(_PlqMixin, _LinearRegressor):
    __doc__ = (
        "A linear regressor with a piecewise linear-quadratic loss: ``mse``, ``huber`` "
        "(threshold ``kappa``), ``lad``, ``svr`` (width ``epsilon``) or ``qr`` (check loss "
        "at ``quantile``)." + _PLQ_DOC
    )

    _problem_name: ClassVar[str] = "plq"
    _losses: ClassVar[tuple[str, ...]] = ("lad", "svr", "qr", "huber", "mse")

    def __init__(
        self,
        loss: str = "mse",
        C: float = 1.0,
        *,
        epsilon: float = 0.1,
        quantile: float = 0.5,
        kappa: float = 1.0,
        average: bool = False,
        fit_intercept: bool = True,
        constraint: str = "none",
        rho: float = 0.01,
        sensitive: int = 0,
        l1: float = 0.0,
        method: str = "rehline",
        step: str | None = None,
        method_settings: dict[str, Any] | None = None,
        tol: float = 1e-6,
        max_iter: int | None = None,
        max_time: float = 300.0,
    ) -> None:
        self.loss = loss
        self.C = C
        self.epsilon = epsilon
        self.quantile = quantile
        self.kappa = kappa
        self.average = average
        self.fit_intercept = fit_intercept
        self.constraint = constraint
        self.rho = rho
        self.sensitive = sensitive
        self.l1 = l1
        self.method = method
        self.step = step
        self.method_settings = method_settings
        self.tol = tol
        self.max_iter = max_iter
        self.max_time = max_time


# ---------------------------------------------------------------------------------------
# LS-SVM family


class _LssvmMixin:
    _task: ClassVar[str] = ""

    def _problem_settings(self) -> dict[str, Any]:
        return {
            "C": self.C,
            "sigma2": self.sigma2,
            "task": self._task,
            "kernel_cache_mb": self.kernel_cache_mb,
        }

    def _set_model(self, problem: Any, x: np.ndarray) -> None:
        self.dual_coef_ = np.asarray(x, dtype=np.float64).copy()
        self.intercept_ = float(problem.bias(x))
        self.sigma2_ = float(problem.sigma2)
        self.X_fit_ = problem.X.copy()

    def _raw(self, X: Any) -> np.ndarray:
        from solvers import lssvm as lk
        from solvers.linalg import as_kernel_matrix

        X = self._check_X(X)

        def sq(M: Any) -> np.ndarray:
            s = M.multiply(M).sum(axis=1) if sp.issparse(M) else np.einsum("ij,ij->i", M, M)
            return np.ascontiguousarray(np.asarray(s).ravel(), dtype=np.float64)

        Xf = self.X_fit_
        if sp.issparse(X) != sp.issparse(Xf):  # the kernel wants one storage for both
            X = sp.csr_matrix(X) if sp.issparse(Xf) else X.toarray()
        out = np.empty(X.shape[0])
        lk.kernel_times(
            as_kernel_matrix(X),
            sq(X),
            as_kernel_matrix(Xf),
            sq(Xf),
            1.0 / (2.0 * self.sigma2_),
            np.ascontiguousarray(self.dual_coef_),
            np.zeros(Xf.shape[1]),
            out,
        )
        return out + self.intercept_


_LSSVM_DOC = """

    Problem ``lssvm`` (Suykens & Vandewalle 1999, "Least squares support vector machine
    classifiers"): the Gaussian-kernel LS-SVM, ``[[K + I/C, 1], [1^T, 0]] [alpha; b] =
    [y; 0]`` with ``K_ij = exp(-||x_i - x_j||^2 / (2 sigma2))`` (``sigma2=0``: the
    median-distance heuristic; the value used is ``sigma2_``). Methods: ``cg-reduced``
    (Chu, Ong & Keerthi 2005, "An improved conjugate gradient scheme to the solution of
    least squares SVM": one CG on the reduced system of order n - 1), ``cg-two-system``
    (Suykens, Lukas, Van Dooren, De Moor & Vandewalle 1999: two CG systems in lock-step)
    and ``smo`` (Keerthi & Shevade 2003, "SMO algorithm for least-squares SVM
    formulations"). The certificate is the relative duality gap ``(P - D) / D``.
    ``dual_coef_`` holds ``alpha``, ``intercept_`` the bias ``b``.
    """


class LSSVMClassifier(_LssvmMixin, _LinearClassifier):
    __doc__ = "The LS-SVM classifier with a Gaussian kernel." + _LSSVM_DOC

    _problem_name: ClassVar[str] = "lssvm"
    _task: ClassVar[str] = "classification"

    def __init__(
        self,
        C: float = 1.0,
        sigma2: float = 0.0,
        *,
        kernel_cache_mb: float = 256.0,
        method: str = "cg-reduced",
        step: str | None = None,
        method_settings: dict[str, Any] | None = None,
        tol: float = 1e-6,
        max_iter: int | None = None,
        max_time: float = 300.0,
    ) -> None:
        self.C = C
        self.sigma2 = sigma2
        self.kernel_cache_mb = kernel_cache_mb
        self.method = method
        self.step = step
        self.method_settings = method_settings
        self.tol = tol
        self.max_iter = max_iter
        self.max_time = max_time


class LSSVMRegressor(_LssvmMixin, _LinearRegressor):
    __doc__ = "The LS-SVM regressor (kernel ridge with a bias) with a Gaussian kernel." + (
        _LSSVM_DOC
    )

    _problem_name: ClassVar[str] = "lssvm"
    _task: ClassVar[str] = "regression"

    def __init__(
        self,
        C: float = 1.0,
        sigma2: float = 0.0,
        *,
        kernel_cache_mb: float = 256.0,
        method: str = "cg-reduced",
        step: str | None = None,
        method_settings: dict[str, Any] | None = None,
        tol: float = 1e-6,
        max_iter: int | None = None,
        max_time: float = 300.0,
    ) -> None:
        self.C = C
        self.sigma2 = sigma2
        self.kernel_cache_mb = kernel_cache_mb
        self.method = method
        self.step = step
        self.method_settings = method_settings
        self.tol = tol
        self.max_iter = max_iter
        self.max_time = max_time
