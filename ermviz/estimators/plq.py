"""Linear models with a piecewise linear-quadratic loss and a ridge (the PLQ family's
problem ``plq``, Dai & Qiu 2023): the hinge, smoothed and squared hinge classifiers and
the mse, Huber, LAD, epsilon-insensitive and quantile regressors.

``method="auto"`` (:func:`auto_method`), measured. Differentiable losses without
constraints go to ``primal-newton``: on the squared hinge at C = 1 it took 0.011 / 0.18 /
0.25 s on a1a / ijcnn1 / w8a (75 % training splits) where ``rehline`` took 0.031 / 0.37 /
0.81 s and ``ipm`` 0.014 / 0.28 / 1.1 s (phishing: 0.082 s against ``rehline``'s 0.062 s;
its Newton steps need few iterations whatever C, where coordinate descent needs epochs in
proportion to ``C ||x||^2``). For the hinge, time of ``ipm`` over ``rehline`` at tol 1e-4
(relative gap), by the curvature ``kappa = C mean(||x_i||^2 + 1)`` (2-core machine under
load, medians of 3):

=============  ==========  ==================  ============================
data           n x p       kappa at C = 0.1,   ipm / rehline at C = 0.1, 1,
                           1, 10               10
=============  ==========  ==================  ============================
a1a            1203 x 123  1.5, 15, 149        11.9, 0.87, 0.19
splice (std)   750 x 60    6.1, 61, 613        1.45, 0.45, 0.08
breast-cancer  512 x 10    1.1, 11, 108        7.3, 0.24, 0.45
ijcnn1         37492 x 22  0.25, 2.5, 25       13.8, 4.8, 2.3
phishing       8291 x 68   0.2, 2, 20          6.5, 5.6, 4.6
w8a            37311x300   1.3, 13, 126        10.8, 4.1, 0.85
=============  ==========  ==================  ============================

so ``ipm`` runs when ``kappa >= 30`` on at most 5000 rows and 150 features, ``rehline``
otherwise (w8a at C = 10 gains 15 %, but ``ipm``'s ``d x d`` system costs d^3 per step
as p grows: ``rehline`` stays there).
"""

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
    check_choice,
    classifier_tags,
    shared_doc,
    split_linear,
)

#: The PLQ family's methods; ``auto`` picks one of them from the data (:func:`auto_method`).
PLQ_METHODS = ("rehline", "ipm", "primal-newton")
#: Losses made of ReHU pieces only: differentiable, so ``primal-newton`` solves them.
SMOOTH_LOSSES = ("svm2", "ssvm", "huber", "mse")
#: ``ipm`` instead of ``rehline`` for the other losses when the loss weight times the mean
#: squared row norm (the dual's curvature against the ridge, which sets how many epochs
#: coordinate descent needs) is at least this, on data this small (module docstring).
IPM_MIN_CURVATURE = 30.0
IPM_MAX_FEATURES = 150
IPM_MAX_ROWS = 5000
#: ``rehline`` evaluates its certificate (one pass over the data) after coordinate updates
#: worth this many passes in the estimators (the method's own default: 1). Measured on the
#: hinge at C = 1, time over the rehline package's: a1a 0.95 against 1.16, w8a 0.73 against
#: 0.89, phishing 0.59 against 0.63, ijcnn1 0.75 either way.
REHLINE_CHECK_WORK = 3.0


def auto_method(
    X: Any,
    loss: str,
    C: float,
    *,
    average: bool,
    intercept: bool,
    constraint: str = "none",
    l1: float = 0.0,
) -> str:
    """The PLQ method ``method="auto"`` runs on ``X`` (n, p), by measurement
    (``benchmarks/bench_estimators.py`` and the crossover table of this module's
    docstring): ``primal-newton`` for a differentiable loss (:data:`SMOOTH_LOSSES`) without
    constraint or l1 term: a few Newton steps whatever ``C``; otherwise ``ipm`` on small,
    ill-conditioned problems (``c * mean ||x_i||^2 >= 30``, ``c`` the per-sample loss
    weight, p <= 150 and n <= 5000), where coordinate descent needs hundreds of epochs and
    the interior-point method's 10-20 Newton steps on a small ``d x d`` system cost less;
    ``rehline`` (dual coordinate descent) everywhere else."""
    if loss in SMOOTH_LOSSES and constraint == "none" and l1 == 0.0:
        return "primal-newton"
    n, p = X.shape
    if p > IPM_MAX_FEATURES or n > IPM_MAX_ROWS:
        return "rehline"
    if sp.issparse(X):
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    else:
        sq = np.einsum("ij,ij->i", X, X)
    weight = float(C) / (n if average else 1.0)
    curvature = weight * (float(np.mean(sq)) + (1.0 if intercept else 0.0))
    return "ipm" if curvature >= IPM_MIN_CURVATURE else "rehline"


def plq_settings(
    est: SolverEstimator, loss_settings: dict[str, Any], method: str
) -> dict[str, Any]:
    """The ``plq`` settings of ``est``: the relative duality gap as the certificate of the
    family's methods and, for ``rehline``, a certificate check every
    :data:`REHLINE_CHECK_WORK` passes of work (``method_settings`` overrides both)."""
    out = {**loss_settings, "intercept": est.fit_intercept}
    if method in PLQ_METHODS:
        out["gap"] = "relative"
    if method == "rehline":
        out["check_work"] = REHLINE_CHECK_WORK
    return {**out, **dict(est.method_settings or {})}


def plq_warm_state(setup: Setup) -> Any:
    """What a PLQ fit leaves for the next one with ``warm_start=True``: the coefficients of
    a ``primal-newton`` fit; the duals of a ``rehline`` fit with the per-sample loss weight
    they belong to; nothing after ``ipm`` (an interior point has no warm start)."""
    solver, pb = setup.solver, setup.problem
    if setup.resolved.method == "primal-newton":
        return solver.iterate()
    if setup.resolved.method == "rehline":
        weight = float(pb.settings["C"]) / (pb.n if pb.settings["average"] else 1.0)
        return solver.duals(), weight
    return None


def plq_warm_start(setup: Setup, state: Any) -> None:
    """Start from a previous fit (same method and shapes, :meth:`_Plq._warm_key`).

    ``primal-newton`` starts from the previous coefficients. ``rehline`` starts from the
    previous duals rescaled to the new loss weight ``c`` so that the start point is the
    previous solution: ``beta = -sum_i x_i (Lambda_i c u_i + Gamma_i sqrt(c) s_i)`` is
    unchanged when ``Lambda`` scales by ``c_old / c`` and ``Gamma`` by ``sqrt(c_old / c)``
    (liblinear's warm start along a path of ``C`` keeps its ``alpha``, the same point;
    Chu, Hsieh & Lin 2015), then clipped into the new boxes."""
    if state is None:
        return
    if setup.resolved.method == "primal-newton":
        setup.solver.warm_start(state)
        return
    duals, c_old = state
    pb = setup.problem
    c_new = float(pb.settings["C"]) / (pb.n if pb.settings["average"] else 1.0)
    ratio = c_old / c_new
    setup.solver.warm_start(
        {**duals, "Lambda": duals["Lambda"] * ratio, "Gamma": duals["Gamma"] * np.sqrt(ratio)}
    )


class _Plq(SolverEstimator):
    """Shared by the PLQ estimators: settings, method choice, warm start, model."""

    _losses: ClassVar[tuple[str, ...]] = ()

    def _plan(self, X: Any, y: np.ndarray) -> Plan:
        check_choice(type(self).__name__, "loss", self.loss, self._losses)
        method = self.method
        if method == "auto":
            method = auto_method(
                X, self.loss, self.C, average=self.average, intercept=self.fit_intercept,
                constraint=self.constraint, l1=self.l1,
            )  # fmt: skip
        loss = {
            "loss": self.loss,
            "C": self.C,
            "average": self.average,
            "constraint": self.constraint,
            "rho": self.rho,
            "sensitive": self.sensitive,
            "l1": self.l1,
        }
        for key in ("epsilon", "quantile", "kappa"):
            if hasattr(self, key):
                loss[key] = getattr(self, key)
        return Plan("plq", plq_settings(self, loss, method), method, self.step, float(self.tol))

    def _warm_key(self, setup: Setup) -> tuple:
        pb = setup.problem
        return (*super()._warm_key(setup), pb.n, pb.L, pb.H, pb.K, pb.l1w.shape[0])

    def _warm_state(self, setup: Setup) -> Any:
        return plq_warm_state(setup)

    def _warm_start(self, setup: Setup, state: Any) -> None:
        plq_warm_start(setup, state)

    def _set_model(self, problem: Any, x: np.ndarray) -> None:
        coef, b = split_linear(x, self.n_features_in_, self.fit_intercept)
        if self._classifier:
            self.coef_, self.intercept_ = coef[None, :], np.array([b])
        else:
            self.coef_, self.intercept_ = coef, b


_PLQ_DOC = """
    Problem ``plq`` (Dai & Qiu 2023, "ReHLine: Regularized Composite ReLU-ReHU Loss
    Minimization with Linear Computation and Linear Convergence", NeurIPS): minimizes

        C * sum_i loss(y_i, x_i^T w + b) + l1 * ||(w, b)||_1 + 1/2 ||(w, b)||^2

    (the loss sum divided by n with ``average=True``) subject to ``constraint``:
    ``"none"``, ``"fairness"`` (``|(1/n) z^T X w| <= rho`` for the centred column
    ``sensitive``), ``"nonnegative"`` or ``"monotone"``. With ``fit_intercept`` the offset
    ``b`` is the weight of an appended constant-1 column, penalized like every weight
    (scikit-learn's ``intercept_scaling=1``).

    Default method (``method="auto"``, :func:`auto_method`): ``primal-newton`` (Newton-CG
    on the primal, Keerthi & DeCoste 2005) for the differentiable losses (``svm2``,
    ``ssvm``, ``huber``, ``mse``) without constraint or l1 term; otherwise ``ipm`` on small,
    ill-conditioned problems (``C mean ||x_i||^2 >= 30``, n <= 5000, p <= 150) and
    ``rehline`` everywhere else. ``rehline`` is the paper's dual
    coordinate descent (with shrinking); ``ipm`` a primal-dual interior-point method
    (Mehrotra 1992) whose Newton steps solve one ``d x d`` system. Measured
    (``benchmarks/bench_estimators.py``, each side at its defaults, the hinge at ``C =
    1``, where ``auto`` runs ``rehline`` on a1a, w8a, ijcnn1 and phishing): CPU time
    over the ``rehline`` package's 0.56-0.91, over ``LinearSVC(loss="hinge")``'s
    0.67-0.86 on w8a, ijcnn1 and phishing and 1.22 on a1a, where ``LinearSVC`` stops
    unconverged at its ``max_iter=1000`` (relative excess over the optimum 3.3e-4 against
    this fit's 6.4e-5); test accuracy within 1.5e-3 of theirs. The certificate is the relative
    duality gap ``(P - D) / |D|`` (``method_settings={"gap": "absolute"}``: the duality
    gap ``P - D``), an upper bound on the relative suboptimality of ``objective_``.
"""

_PLQ_PARAMS = """\
    C : float, default=1.0
        Weight of the loss sum (scikit-learn's ``C``: the same objective as ``LinearSVC``,
        ``LinearSVR`` at the same ``C``).
    average : bool, default=False
        Divide the loss sum by n (``C / n`` per sample).
    fit_intercept : bool, default=True
        Append a constant-1 column; its weight is ``intercept_`` (penalized).
    constraint : {"none", "fairness", "nonnegative", "monotone"}, default="none"
        Linear constraints on the weights (not the offset).
    rho : float, default=0.01
        ``constraint="fairness"``: the bound on ``|(1/n) z^T X w|``.
    sensitive : int, default=0
        ``constraint="fairness"``: the column ``z`` of ``X`` (centred) the scores must not
        correlate with.
    l1 : float, default=0.0
        Weight of the l1 penalty ``l1 * ||(w, b)||_1`` (an elastic net with the ridge).
    method : {"auto", "rehline", "ipm"}, default="auto"
        See above.
    tol : float, default=1e-4
        Stop when the relative duality gap is at most ``tol`` (the ``rehline`` package's
        criterion and default): the objective is then within a fraction ``tol`` of the
        minimum.
"""


@shared_doc
class PLQClassifier(ClassifierMixin, LinearClassifierMixin, _Plq):
    __doc__ = (
        """A linear classifier with a piecewise linear-quadratic loss: ``"svm"`` (hinge
    ``(1 - y z)_+``), ``"ssvm"`` (smoothed hinge) or ``"svm2"`` (squared hinge).
"""
        + _PLQ_DOC
        + """
    scikit-learn's twins at the same ``C`` (offset penalized as theirs with
    ``intercept_scaling=1``): ``LinearSVC(loss="hinge", C)`` for ``loss="svm"``,
    ``LinearSVC(loss="squared_hinge", C)`` for ``loss="svm2"`` (see also
    :class:`L2SVMClassifier`); the ``rehline`` package's ``plq_Ridge_Classifier`` for
    every loss.

    Parameters
    ----------
    loss : {"svm", "ssvm", "svm2"}, default="svm"
        The loss of the margin ``y z``.
"""
        + _PLQ_PARAMS
        + """    {run_params}

    Attributes
    ----------
    {linear_classifier_attributes}
    {run_attributes}

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from ermviz.estimators import PLQClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> model = make_pipeline(StandardScaler(), PLQClassifier(loss="svm", C=1.0))
    >>> model.fit(X, y).score(X, y) > 0.95
    True
    """
    )

    _classifier: ClassVar[bool] = True
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
        method: str = "auto",
        step: str | None = None,
        method_settings: dict[str, Any] | None = None,
        tol: float = 1e-4,
        max_iter: int | None = None,
        max_time: float | None = None,
        warm_start: bool = False,
        keep_trace: bool = False,
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
        self.warm_start = warm_start
        self.keep_trace = keep_trace

    def __sklearn_tags__(self):
        return classifier_tags(super().__sklearn_tags__())


@shared_doc
class PLQRegressor(RegressorMixin, _Plq):
    __doc__ = (
        """A linear regressor with a piecewise linear-quadratic loss of the residual ``r = y -
    z``: ``"mse"`` (``r^2``), ``"huber"`` (threshold ``kappa``), ``"lad"`` (``|r|``),
    ``"svr"`` (``(|r| - epsilon)_+``) or ``"qr"`` (the check loss at ``quantile``).
"""
        + _PLQ_DOC
        + """
    scikit-learn's twins: ``LinearSVR(loss="epsilon_insensitive", epsilon, C)`` for
    ``loss="svr"`` at the same ``C`` (offset penalized as LinearSVR's with
    ``intercept_scaling=1``); ``Ridge(alpha=1 / (2 C))`` for ``loss="mse"``
    with ``fit_intercept=False`` (Ridge does not penalize its offset). Huber and quantile
    regression in scikit-learn put their penalties otherwise (``HuberRegressor``:
    ``alpha ||w||^2`` and a scale; ``QuantileRegressor``: ``alpha ||w||_1`` and the mean
    loss): no closed-form conversion.

    Parameters
    ----------
    loss : {"mse", "huber", "lad", "svr", "qr"}, default="mse"
        The loss of the residual.
"""
        + _PLQ_PARAMS
        + """    epsilon : float, default=0.1
        ``loss="svr"``: width of the insensitive zone.
    quantile : float, default=0.5
        ``loss="qr"``: the quantile level, in (0, 1).
    kappa : float, default=1.0
        ``loss="huber"``: the threshold between the quadratic and the linear part.
    {run_params}

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Weights.
    intercept_ : float
        Offset (0 without ``fit_intercept``).
    {run_attributes}

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from ermviz.estimators import PLQRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> model = make_pipeline(StandardScaler(), PLQRegressor(loss="huber", kappa=10.0))
    >>> model.fit(X, y).score(X, y) > 0.45
    True
    """
    )

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
        method: str = "auto",
        step: str | None = None,
        method_settings: dict[str, Any] | None = None,
        tol: float = 1e-4,
        max_iter: int | None = None,
        max_time: float | None = None,
        warm_start: bool = False,
        keep_trace: bool = False,
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
        self.warm_start = warm_start
        self.keep_trace = keep_trace

    def predict(self, X: Any) -> np.ndarray:
        """``X @ coef_ + intercept_``, shape (n_samples,)."""
        return self._raw(X)
