"""Constrained generalized linear models: logistic regression and least squares over an
l1 / l2 ball, a box or a K-sparse polytope (the Frank-Wolfe family's ``logreg-l1`` and
``least-squares`` problems)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin

from ermviz.estimators._base import (
    LinearClassifierMixin,
    Plan,
    SolverEstimator,
    check_choice,
    classifier_tags,
    shared_doc,
    split_linear,
)

#: Sets face-newton handles (coordinate bounds and at most one sum); the l2 ball is not one.
FACE_SETS = ("l1", "box", "ksparse")
#: CG products per Newton step of face-newton in the estimators (the method's own default:
#: 50). Truncating the inner CG earlier measured faster wherever the working set is large:
#: w8a 0.76x liblinear's time against 1.8x, a9a 0.38x against 0.80x, phishing 2.0x against
#: 3.1x (l1 logistic at liblinear's C = 0.5, each side at its defaults); a1a 0.6x against
#: 0.4x, ijcnn1 0.13x either way.
FACE_NEWTON_CG_MAX = 10
CONSTRAINTS = ("l1", "l2", "box", "ksparse")


class _Constrained(SolverEstimator):
    """Shared by the two constrained GLMs: the set's settings and the default method."""

    _problem_name: ClassVar[str] = ""

    def _method(self) -> str:
        """``auto``: face-newton on the polytopes, the exact-line-search FW on the l2 ball."""
        check_choice(type(self).__name__, "constraint", self.constraint, CONSTRAINTS)
        if self.method != "auto":
            return self.method
        return "face-newton" if self.constraint in FACE_SETS else "fw"

    def _settings(self, method: str) -> dict[str, Any]:
        out = {
            "radius": self.radius,
            "intercept": self.fit_intercept,
            "start": self.start,
            "constraint": self.constraint,
            "lo": self.lo,
            "hi": self.hi,
            "K": self.K,
        }
        if method == "face-newton":
            out["cg_max"] = FACE_NEWTON_CG_MAX
        return {**out, **dict(self.method_settings or {})}


@shared_doc
class ConstrainedLogisticRegression(ClassifierMixin, LinearClassifierMixin, _Constrained):
    """Logistic regression over an l1 / l2 ball, a box or a K-sparse polytope.

    Minimizes the mean logistic loss ``(1/n) sum_i log(1 + exp(-y_i (x_i^T w + b)))``
    subject to ``(w, b)`` in the set (problem ``logreg-l1``; the l1 ball is Xiong &
    Freund's problem (7.1), the constrained form of l1-penalized logistic regression).
    With ``fit_intercept`` the offset ``b`` is the weight of a constant-1 feature and lies
    inside the set too. Labels: any two classes (``classes_[1]`` is coded +1).

    scikit-learn's twin is ``LogisticRegression(penalty="l1", solver="liblinear", C)``,
    which minimizes ``||(w, b)||_1 + C sum_i log(1 + exp(-y_i (x_i^T w + b)))`` (its
    ``intercept_scaling=1`` penalizes the offset like a weight): its solution is this
    estimator's at ``radius = ||(w, b)||_1`` of that solution (the constrained and the
    penalized forms share their solutions; ``C`` has no closed-form radius).

    Default method (``method="auto"``): ``face-newton`` (inexact projected Newton steps on
    the active face, blended with Frank-Wolfe steps; Braun, Pokutta, Tu & Wright 2019;
    Carderera & Pokutta 2020; Bertsekas 1982) on the l1 ball, the box and the K-sparse
    polytope, with at most 10 CG products per Newton step (:data:`FACE_NEWTON_CG_MAX`); the
    exact-line-search Frank-Wolfe method (``fw``) on the l2 ball, which has no faces (``fw``
    and ``boosted`` measured within 30 % of each other there, a few ms on a1a and wdbc).
    Measured (``benchmarks/bench_estimators.py``, each side at its defaults, CPU time over
    liblinear's l1 logistic regression at the matched radius, ``C = 0.5``): 0.11 on
    ijcnn1 and 0.62 on a1a, but 1.09 on w8a and 2.1 on phishing, where face-newton's 29
    and 31 steps read the data 372 and 433 times (margins and gradient from scratch every
    step, then up to 10 CG products) against liblinear's 17 and 15 newGLMNET iterations
    (on phishing steps 7-22 add 10 CG products each while the working set grows, the
    excess over the optimum falling only from 1.5e-2 to 3.5e-3; letting every violating
    coordinate enter at once, ``method_settings={"enter_frac": 1.0}``, takes phishing to
    0.9x but w8a to 5.6x); test accuracy within 1e-4 of liblinear's. The Frank-Wolfe
    variants stay selectable: ``fw`` (Frank & Wolfe 1956; Jaggi 2013), ``afw`` (away
    steps) and ``pfw`` (pairwise; Lacoste-Julien & Jaggi 2015), ``bpcg`` (Tsuji, Tanaka &
    Pokutta 2022), ``boosted`` (Combettes & Pokutta 2020) and the TUFW family's methods.
    The certificate is the Frank-Wolfe gap, an upper bound on ``objective_ - min``.

    Parameters
    ----------
    radius : float, default=1.0
        Radius of the l1 / l2 ball (K-sparse polytope: the bound on each ``|w_j|``).
    constraint : {"l1", "l2", "box", "ksparse"}, default="l1"
        The set: l1 ball, l2 ball, box ``[lo, hi]^d`` or K-sparse polytope (the l1 ball of
        radius ``K * radius`` within the l_inf ball of radius ``radius``).
    lo, hi : float, default=-1.0, 1.0
        Box bounds (``constraint="box"``).
    K : int, default=5
        Nonzeros per vertex of the K-sparse polytope.
    fit_intercept : bool, default=True
        Append a constant-1 feature; its weight (``intercept_``) lies inside the set too.
    start : {"zero", "vertex"}, default="zero"
        Start point: the set's centre or the vertex the first gradient picks.
    method : str, default="auto"
        ``"auto"`` (above) or any method of ``python -m ermviz methods`` solving
        ``logreg-l1``.
    tol : float, default=1e-4
        Stop when the Frank-Wolfe gap is at most ``tol``, in the objective's units (nats
        per sample): the fit's mean loss is then within ``tol`` of the minimum.
    {run_params}

    Attributes
    ----------
    {linear_classifier_attributes}
    {run_attributes}

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from ermviz.estimators import ConstrainedLogisticRegression
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> model = make_pipeline(StandardScaler(), ConstrainedLogisticRegression(radius=5.0))
    >>> model.fit(X, y).score(X, y) > 0.95
    True
    >>> model[-1].status_, model[-1].certificate_ <= 1e-4
    ('converged', True)
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
        method: str = "auto",
        step: str | None = None,
        method_settings: dict[str, Any] | None = None,
        tol: float = 1e-4,
        max_iter: int | None = None,
        max_time: float | None = None,
        warm_start: bool = False,
        keep_trace: bool = False,
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
        self.warm_start = warm_start
        self.keep_trace = keep_trace

    _classifier: ClassVar[bool] = True

    def __sklearn_tags__(self):
        return classifier_tags(super().__sklearn_tags__())

    def _plan(self, X: Any, y: np.ndarray) -> Plan:
        method = self._method()
        return Plan("logreg-l1", self._settings(method), method, self.step, float(self.tol))

    def _set_model(self, problem: Any, x: np.ndarray) -> None:
        coef, b = split_linear(x, self.n_features_in_, self.fit_intercept)
        self.coef_ = coef[None, :]
        self.intercept_ = np.array([b])

    def predict_proba(self, X: Any) -> np.ndarray:
        """Logistic probabilities of ``classes_``, shape (n_samples, 2)."""
        from scipy.special import expit

        p1 = expit(self.decision_function(X))
        return np.column_stack([1.0 - p1, p1])

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Logarithms of :meth:`predict_proba`, computed without underflow."""
        from scipy.special import log_expit

        z = self.decision_function(X)
        return np.column_stack([log_expit(-z), log_expit(z)])


@shared_doc
class ConstrainedLeastSquares(RegressorMixin, _Constrained):
    """Least squares over an l1 / l2 ball, a box or a K-sparse polytope.

    Minimizes ``(1/2n) ||X w + b - y||^2`` subject to ``(w, b)`` in the set (problem
    ``least-squares``; on the l1 ball the constrained Lasso, Tibshirani 1996, as Jaggi 2013
    solves it by Frank-Wolfe). With ``fit_intercept`` the offset ``b`` is the weight of a
    constant-1 feature inside the set. ``radius=None`` takes half the norm of the
    unconstrained solution, so that the set binds (``radius_`` is the value used).

    scikit-learn's twin is ``Lasso(alpha)``, which minimizes ``(1/2n) ||X w + b - y||^2 +
    alpha ||w||_1`` with an unpenalized offset: on centred data (``y`` and the columns of
    ``X`` of mean 0, so that ``b = 0``) and ``fit_intercept=False`` its solution is this
    estimator's at ``radius = ||w||_1`` of that solution.

    Default method (``method="auto"``): ``face-newton`` on the polytopes (l1, box,
    K-sparse), where it needs a few Newton steps on the active face; the exact-line-search
    ``fw`` on the l2 ball. The other methods of :class:`ConstrainedLogisticRegression` are
    selectable. The certificate is the Frank-Wolfe gap.

    Parameters
    ----------
    radius : float or None, default=None
        Radius of the l1 / l2 ball (K-sparse: the bound on each ``|w_j|``); None: half the
        norm of the unconstrained least-squares solution in the set's norm.
    constraint : {"l1", "l2", "box", "ksparse"}, default="l1"
        The set (see :class:`ConstrainedLogisticRegression`).
    lo, hi : float, default=-1.0, 1.0
        Box bounds (``constraint="box"``).
    K : int, default=5
        Nonzeros per vertex of the K-sparse polytope.
    fit_intercept : bool, default=True
        Append a constant-1 feature; its weight (``intercept_``) lies inside the set too.
    start : {"zero", "vertex"}, default="zero"
        Start point: the set's centre or the vertex the first gradient picks.
    method : str, default="auto"
        ``"auto"`` (above) or any method solving ``least-squares``.
    tol : float, default=1e-4
        Stop when the Frank-Wolfe gap is at most ``tol * ||y||^2 / (2n)``, relative to the
        objective at ``w = 0`` as scikit-learn's ``Lasso`` scales its tolerance (so the
        same ``tol`` serves targets of any unit).
    {run_params}

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Weights.
    intercept_ : float
        Offset (0 without ``fit_intercept``).
    radius_ : float
        The radius used.
    {run_attributes}

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from ermviz.estimators import ConstrainedLeastSquares
    >>> X, y = load_diabetes(return_X_y=True)
    >>> model = ConstrainedLeastSquares().fit(X, y)  # radius: half the least-squares norm
    >>> bool(abs(model.coef_).sum() + abs(model.intercept_) <= model.radius_ * (1 + 1e-12))
    True
    >>> model.score(X, y) > 0.45
    True
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
        method: str = "auto",
        step: str | None = None,
        method_settings: dict[str, Any] | None = None,
        tol: float = 1e-4,
        max_iter: int | None = None,
        max_time: float | None = None,
        warm_start: bool = False,
        keep_trace: bool = False,
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
        self.warm_start = warm_start
        self.keep_trace = keep_trace

    def _plan(self, X: Any, y: np.ndarray) -> Plan:
        scale = float(y @ y) / (2.0 * y.shape[0])  # the objective at w = 0
        tol = float(self.tol) * (scale if scale > 0 else 1.0)
        method = self._method()
        return Plan("least-squares", self._settings(method), method, self.step, tol)

    def _set_model(self, problem: Any, x: np.ndarray) -> None:
        self.coef_, self.intercept_ = split_linear(x, self.n_features_in_, self.fit_intercept)
        self.radius_ = float(problem.radius)

    def predict(self, X: Any) -> np.ndarray:
        """``X @ coef_ + intercept_``, shape (n_samples,)."""
        return self._raw(X)
