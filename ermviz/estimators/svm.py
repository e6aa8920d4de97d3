"""The L2-loss (squared hinge) linear SVM, scikit-learn's ``LinearSVC`` model: by the PLQ
family's methods on problem ``plq`` (default) or by Frank-Wolfe on its dual over the
simplex (problem ``svm-dual``)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from sklearn.base import ClassifierMixin

from ermviz.errors import SettingError
from ermviz.estimators._base import (
    LinearClassifierMixin,
    Plan,
    Setup,
    SolverEstimator,
    classifier_tags,
    shared_doc,
    split_linear,
)
from ermviz.estimators.plq import (
    PLQ_METHODS,
    plq_settings,
    plq_warm_start,
    plq_warm_state,
)


def _dual_methods() -> tuple[str, ...]:
    """The methods that solve ``svm-dual`` (the Frank-Wolfe family's and its neighbours')."""
    from ermviz.registry import METHODS

    return tuple(name for name, spec in METHODS.items() if "svm-dual" in spec.problems)


@shared_doc
class L2SVMClassifier(ClassifierMixin, LinearClassifierMixin, SolverEstimator):
    """The L2-loss linear SVM: ``LinearSVC(loss="squared_hinge")``'s model and ``C``.

    Minimizes ``1/2 ||(w, b)||^2 + C sum_i max(0, 1 - y_i (x_i^T w + b))^2``, exactly
    ``LinearSVC(loss="squared_hinge", C=C)`` (whose ``intercept_scaling=1`` penalizes the
    offset ``b`` like a weight, as here with ``fit_intercept``): the same ``C`` gives the
    same model. Labels: any two classes (``classes_[1]`` is coded +1).

    Changed in this version: ``C`` now means ``LinearSVC``'s ``C``. Before, this
    estimator solved the simplex dual at its ``C`` directly, which is ``LinearSVC`` at
    ``C / 2``: to reproduce an earlier model, halve ``C``.

    Methods. Default (``method="auto"``): ``primal-newton`` on problem ``plq`` with the
    squared hinge: truncated Newton-CG on the primal with an exact line search on the
    piecewise quadratic (Keerthi & DeCoste 2005, "A modified finite Newton method for fast
    solution of large scale linear SVMs"; liblinear's TRON, which ``LinearSVC`` runs when
    n > p, is the same idea), certified by the relative duality gap at the duals the point
    implies (``||grad||^2 / 2``). Measured (``benchmarks/bench_estimators.py``, each side
    at its defaults, CPU time over ``LinearSVC``'s): 0.71 on a1a, 0.78 on w8a, 0.36 on
    ijcnn1, 0.76 on phishing, training objectives equal to 1.5e-6 (relative) and test
    accuracy to 3e-5. Measured against the dual coordinate descent the
    issue first proposed (``rehline``, the squared-hinge case of Hsieh et al. 2008's dual
    CD, with shrinking): 0.011 / 0.18 / 0.25 s against 0.031 / 0.37 / 0.81 s on a1a /
    ijcnn1 / w8a, whose Newton steps do not multiply with ``C``. ``rehline`` and ``ipm``
    stay selectable.
    The Frank-Wolfe methods on the dual over the unit simplex stay selectable (problem
    ``svm-dual``: ``min_{alpha in simplex} ||Z alpha||^2 + ||alpha||^2 / (2 C)``, ``Z =
    [y_i x_i]``, Jaggi 2014; ``w = Z alpha / rho`` with ``rho`` the optimal value):
    ``fw``, ``afw``, ``pfw`` (Lacoste-Julien & Jaggi 2015), ``bpcg``, ``boosted``,
    ``dicg``, ``face-newton``; their certificate is the Frank-Wolfe gap of the dual,
    stopped at ``tol / (2 C n)`` so that it bounds the same relative suboptimality
    (``rho >= 1 / (2 C n)``).

    Parameters
    ----------
    C : float, default=1.0
        Weight of the squared hinge losses (``LinearSVC``'s ``C``).
    fit_intercept : bool, default=True
        Append a constant-1 feature; its weight is ``intercept_`` (penalized).
    method : str, default="auto"
        ``"auto"``, ``"rehline"``, ``"ipm"`` or a Frank-Wolfe method of ``svm-dual``.
    tol : float, default=1e-4
        Stop when the relative duality gap is at most ``tol``: the objective is then
        within a fraction ``tol`` of the minimum.
    {run_params}

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        Weights.
    intercept_ : ndarray of shape (1,)
        Offset (0 without ``fit_intercept``).
    dual_coef_ : ndarray of shape (n_samples,)
        The dual coefficients in ``LinearSVC``'s dual, ``alpha_i = 2 C max(0, 1 - y_i
        (x_i^T w + b))`` (its optimality condition: ``(w, b) = sum_i alpha_i y_i (x_i,
        1)`` at the optimum), with ``y_i`` the labels coded -1/+1.
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the class of positive scores.
    {run_attributes}

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn.svm import LinearSVC
    >>> from ermviz.estimators import L2SVMClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> ours = L2SVMClassifier(C=0.1).fit(X, y)
    >>> ref = LinearSVC(C=0.1, tol=1e-8).fit(X, y)
    >>> bool(abs(ours.coef_ - ref.coef_).max() < 1e-2 * abs(ref.coef_).max())
    True
    """

    _classifier: ClassVar[bool] = True

    def __init__(
        self,
        C: float = 1.0,
        *,
        fit_intercept: bool = True,
        method: str = "auto",
        step: str | None = None,
        method_settings: dict[str, Any] | None = None,
        tol: float = 1e-4,
        max_iter: int | None = None,
        max_time: float | None = None,
        warm_start: bool = False,
        keep_trace: bool = False,
    ) -> None:
        self.C = C
        self.fit_intercept = fit_intercept
        self.method = method
        self.step = step
        self.method_settings = method_settings
        self.tol = tol
        self.max_iter = max_iter
        self.max_time = max_time
        self.warm_start = warm_start
        self.keep_trace = keep_trace

    def __sklearn_tags__(self):
        return classifier_tags(super().__sklearn_tags__())

    def _plan(self, X: Any, y: np.ndarray) -> Plan:
        C = self.C
        if not (isinstance(C, int | float) and np.isfinite(C) and C > 0):
            raise SettingError(f"L2SVMClassifier: C={C!r} is out of range; allowed range (0, inf)")
        method = "primal-newton" if self.method == "auto" else self.method
        if method in PLQ_METHODS:
            settings = plq_settings(self, {"loss": "svm2", "C": C}, method)
            return Plan("plq", settings, method, self.step, float(self.tol))
        if method not in _dual_methods():
            raise SettingError(
                f"L2SVMClassifier: method={method!r} does not solve the L2-SVM; choose one of: "
                f"auto, {', '.join(PLQ_METHODS)}, {', '.join(_dual_methods())}"
            )
        # The simplex dual at C' = 2 C is LinearSVC's model at C; its optimal value rho =
        # 1 / (2 P*) >= 1 / (2 C n) (P* <= P(0) = C n), so a FW gap of tol / (2 C n)
        # bounds the relative suboptimality by tol.
        settings = {"C": 2.0 * C, "intercept": self.fit_intercept}
        settings.update(self.method_settings or {})
        tol = float(self.tol) / (2.0 * C * X.shape[0])
        return Plan("svm-dual", settings, method, self.step, tol)

    def _warm_key(self, setup: Setup) -> tuple:
        return (*super()._warm_key(setup), setup.problem.n)

    def _warm_state(self, setup: Setup) -> Any:
        if setup.plan.problem == "plq":
            return plq_warm_state(setup)
        return super()._warm_state(setup)

    def _warm_start(self, setup: Setup, state: Any) -> None:
        if setup.plan.problem == "plq":
            plq_warm_start(setup, state)
        else:
            super()._warm_start(setup, state)

    def _set_model(self, problem: Any, x: np.ndarray) -> None:
        if getattr(problem, "name", "") == "svm-dual":
            prim = problem.primal(x)
            x = prim["w"] / prim["rho"]
        coef, b = split_linear(x, self.n_features_in_, self.fit_intercept)
        self.coef_ = coef[None, :]
        self.intercept_ = np.array([b])
        margins = problem.y * np.asarray(problem.dataset.X @ coef).ravel() + problem.y * b
        self.dual_coef_ = 2.0 * float(self.C) * np.maximum(0.0, 1.0 - margins)
