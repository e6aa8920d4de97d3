"""The least-squares SVM with a Gaussian kernel (the LS-SVM family's problem ``lssvm``,
Suykens & Vandewalle 1999): a classifier and a regressor."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import ClassifierMixin, RegressorMixin

from ermviz.estimators._base import (
    LinearClassifierMixin,
    Plan,
    Setup,
    SolverEstimator,
    classifier_tags,
    shared_doc,
)

#: Methods that start from a given ``alpha`` (``cg-two-system`` runs two systems from 0).
WARM_METHODS = ("cg-reduced", "smo")


#: ``method="auto"`` runs ``smo`` from this many rows on (below, ``cg-reduced``) ...
SMO_MIN_ROWS = 1000
#: ... while ``C`` is at most this (SMO's steps grow with ``C`` faster than CG's products).
SMO_MAX_C = 10.0


def auto_method(n_samples: int, C: float, kernel_cache_mb: float) -> str:
    """The LS-SVM method ``method="auto"`` runs, by measurement (CPU seconds to the default
    relative gap 1e-6 on seeded rows of ijcnn1, sigma2 by the median heuristic, the kernel
    matrix cached; cg-reduced / smo):

    ======  ===============  ===============  =====================================
    n       C = 1            C = 10           C = 100
    ======  ===============  ===============  =====================================
    300     0.0049 / 0.0048  0.0053 / 0.0063  0.0075 / 0.015 (smo: budget used up)
    2000    0.13 / 0.082     0.22 / 0.15      0.55 / 0.35 (smo: budget used up)
    5000    0.92 / 0.44      1.85 / 1.09      4.77 / 2.28 (smo: budget used up)
    ======  ===============  ===============  =====================================

    so ``smo`` (Keerthi & Shevade 2003: two kernel columns per step) from
    :data:`SMO_MIN_ROWS` rows on while ``C <= 10``, ``cg-reduced`` (Chu, Ong & Keerthi
    2005) otherwise, as long as the ``n x n`` kernel matrix fits ``kernel_cache_mb``.
    Beyond the cache ``smo`` always: each CG product would compute an O(n^2) pass of kernel
    values on the fly (hours at n = 5 x 10^4; ``kernel_plan``), where SMO's LRU cache of
    columns took 46 s on all of ijcnn1 (``benchmarks/results/lssvm_smo_scale.txt``)."""
    if 8.0 * n_samples * n_samples > kernel_cache_mb * 2**20:
        return "smo"
    return "smo" if n_samples >= SMO_MIN_ROWS and C <= SMO_MAX_C else "cg-reduced"


class _Lssvm(SolverEstimator):
    """Shared by the two LS-SVM estimators: their parameters (the same for both),
    settings, warm start, predictions."""

    _task: ClassVar[str] = ""

    def __init__(
        self,
        C: float = 1.0,
        sigma2: float = 0.0,
        *,
        kernel_cache_mb: float = 256.0,
        method: str = "auto",
        step: str | None = None,
        method_settings: dict[str, Any] | None = None,
        tol: float = 1e-6,
        max_iter: int | None = None,
        max_time: float | None = None,
        warm_start: bool = False,
        keep_trace: bool = False,
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
        self.warm_start = warm_start
        self.keep_trace = keep_trace

    def _plan(self, X: Any, y: np.ndarray) -> Plan:
        method = self.method
        if method == "auto":
            method = auto_method(X.shape[0], float(self.C), float(self.kernel_cache_mb))
        settings = {
            "C": self.C,
            "sigma2": self.sigma2,
            "task": self._task,
            "kernel_cache_mb": self.kernel_cache_mb,
            **dict(self.method_settings or {}),
        }
        return Plan("lssvm", settings, method, self.step, float(self.tol))

    def _warm_start(self, setup: Setup, state: Any) -> None:
        if setup.resolved.method in WARM_METHODS:
            super()._warm_start(setup, state)

    def _set_model(self, problem: Any, x: np.ndarray) -> None:
        self.dual_coef_ = np.asarray(x, dtype=np.float64).copy()
        self.intercept_ = float(problem.bias(x))
        self.sigma2_ = float(problem.sigma2)
        self.gamma_ = 1.0 / (2.0 * self.sigma2_)
        self.X_fit_ = problem.X  # the training rows, as KernelRidge keeps them (no copy)

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
            self.gamma_,
            np.ascontiguousarray(self.dual_coef_),
            np.zeros(Xf.shape[1]),
            out,
        )
        return out + self.intercept_


_LSSVM_DOC = """
    Problem ``lssvm`` (Suykens & Vandewalle 1999, "Least squares support vector machine
    classifiers"): minimizes ``1/2 ||w||^2 + C/2 sum_i (y_i - w^T phi(x_i) - b)^2`` in
    the feature space of the Gaussian kernel ``K(x, x') = exp(-||x - x'||^2 / (2
    sigma2))``, with an unpenalized bias ``b``; its optimality conditions are the linear
    system ``[[K + I/C, 1], [1^T, 0]] [alpha; b] = [y; 0]``, and ``f(x) = sum_i alpha_i
    K(x_i, x) + b``.

    scikit-learn's twin is ``KernelRidge(kernel="rbf", alpha=1 / C, gamma=1 / (2 sigma2))``,
    the same model without the bias: given this estimator's ``intercept_``, KernelRidge
    fitted on ``y - intercept_`` returns ``dual_coef_`` (``(K + I/C) alpha = y - b``).

    Default method (``method="auto"``, :func:`auto_method`, measured): ``smo`` (Keerthi
    & Shevade 2003, "SMO algorithm for least-squares SVM formulations": two kernel
    columns per step) from 1000 rows on while ``C <= 10`` (0.44 s against 0.92 s for
    ``cg-reduced`` at n = 5000, C = 1), and always past the kernel cache; ``cg-reduced``
    (Chu, Ong & Keerthi 2005, "An improved conjugate gradient scheme to the solution of
    least squares SVM": one CG on the reduced system of order n - 1) on fewer rows or a
    larger ``C``, where SMO's steps multiply (at C = 100 it used up its budget of 20 steps
    per row where CG converged in 73-240 products).
    ``cg-two-system`` (Suykens, Lukas, Van Dooren, De Moor & Vandewalle 1999) stays
    selectable. The certificate is the relative duality gap ``(P - D) / D``.
"""

_LSSVM_PARAMS = """\
    C : float, default=1.0
        Weight of the squared errors (``KernelRidge``'s ``alpha`` is ``1 / C``).
    sigma2 : float, default=0.0
        Kernel width ``sigma^2`` (``KernelRidge``'s ``gamma`` is ``1 / (2 sigma2)``); 0: the
        median-distance heuristic (the median squared distance between up to 1000 seeded
        rows; the value used is ``sigma2_``).
    kernel_cache_mb : float, default=256.0
        The kernel matrix is precomputed when its ``n^2`` float64 entries fit in this many
        MB; otherwise kernel columns are computed on the fly.
    method : {"auto", "cg-reduced", "smo", "cg-two-system"}, default="auto"
        See above.
    tol : float, default=1e-6
        Stop when the relative duality gap ``(P - D) / D`` is at most ``tol``.
    {run_params}

    Attributes
    ----------
    dual_coef_ : ndarray of shape (n_samples,)
        ``alpha`` (summing to 0).
    intercept_ : float
        The bias ``b``.
    sigma2_ : float
        The kernel width used.
    gamma_ : float
        ``1 / (2 sigma2_)``, ``KernelRidge``'s ``gamma``.
    X_fit_ : ndarray or CSR matrix of shape (n_samples, n_features)
        The training rows (the caller's array when it was float64, not a copy).
"""


@shared_doc
class LSSVMClassifier(ClassifierMixin, LinearClassifierMixin, _Lssvm):
    __doc__ = (
        """The LS-SVM classifier with a Gaussian kernel: the regression below on labels
    coded -1/+1 (``classes_[1]`` is +1), classified by the sign of ``f``.
"""
        + _LSSVM_DOC
        + """
    Parameters
    ----------
"""
        + _LSSVM_PARAMS
        + """    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the class of positive scores.
    {run_attributes}

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from ermviz.estimators import LSSVMClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> model = make_pipeline(StandardScaler(), LSSVMClassifier(C=10.0))
    >>> model.fit(X, y).score(X, y) > 0.95
    True
    """
    )

    _classifier: ClassVar[bool] = True
    _task: ClassVar[str] = "classification"

    def __sklearn_tags__(self):
        return classifier_tags(super().__sklearn_tags__())


@shared_doc
class LSSVMRegressor(RegressorMixin, _Lssvm):
    __doc__ = (
        """The LS-SVM regressor with a Gaussian kernel (kernel ridge regression with an
    unpenalized bias).
"""
        + _LSSVM_DOC
        + """
    Parameters
    ----------
"""
        + _LSSVM_PARAMS
        + """    {run_attributes}

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.preprocessing import StandardScaler
    >>> from ermviz.estimators import LSSVMRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> model = LSSVMRegressor(C=1.0).fit(X, y)
    >>> model.score(X, y) > 0.5
    True
    """
    )

    _task: ClassVar[str] = "regression"

    def predict(self, X: Any) -> np.ndarray:
        """``f(x) = sum_i alpha_i K(x_i, x) + b`` for each row, shape (n_samples,)."""
        return self._raw(X)
