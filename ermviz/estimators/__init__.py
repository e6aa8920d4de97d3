"""scikit-learn estimators over the ermviz solvers, each fit certified.

Every estimator solves one family's problem on ``(X, y)`` with the fastest certified
method measured for it (``method="auto"``, the estimator's docstring says which and why)
and reports how close it got: ``certificate_`` bounds the distance of ``objective_`` to
the optimum (a Frank-Wolfe gap or a duality gap, ``certificate_kind_``). A fit reaches the
CLI's objective on the same data and settings (``python -m ermviz run``), and bad settings
fail at ``fit`` with the CLI's one-line messages (:class:`ermviz.errors.SettingError`, a
``ValueError``).

============================  =================  ===========================================
estimator                     problem            default method (``method="auto"``)
============================  =================  ===========================================
ConstrainedLogisticRegression ``logreg-l1``      ``face-newton`` (``fw`` on the l2 ball)
ConstrainedLeastSquares       ``least-squares``  ``face-newton`` (``fw`` on the l2 ball)
L2SVMClassifier               ``plq`` (svm2)     ``primal-newton``
PLQClassifier, PLQRegressor   ``plq``            ``primal-newton``, ``rehline`` or ``ipm``
LSSVMClassifier, -Regressor   ``lssvm``          ``smo`` or ``cg-reduced``, by n and ``C``
============================  =================  ===========================================

As scikit-learn's: deterministic budgets (``max_iter``; a time budget only with
``max_time``), a ``ConvergenceWarning`` naming the certificate reached and the fix, a
``UserWarning`` naming ``StandardScaler`` when the features are badly scaled,
``warm_start=True`` for paths and grids, and the meaning of ``C`` of the scikit-learn twin
where there is one (``L2SVMClassifier`` and ``LinearSVC``, ``PLQClassifier`` and
``LinearSVC(loss="hinge")``, ``LSSVMRegressor`` and ``KernelRidge``; each docstring gives
the exact objective and the conversion). Classifiers take any two classes (``classes_``;
the second is coded +1). Sparse ``X`` stays CSR. Example::

    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from ermviz.estimators import ConstrainedLogisticRegression

    model = make_pipeline(StandardScaler(), ConstrainedLogisticRegression(radius=5.0))
    model.fit(X_train, y_train).score(X_test, y_test)

``keep_trace=True`` keeps the run's trace as ``trace_``; :func:`ermviz.app.live_fit` fits
one in a notebook while the dashboard's plots show its certificate fall (through the
public :meth:`~ermviz.estimators._base.SolverEstimator.prepare_run` /
:meth:`~ermviz.estimators._base.SolverEstimator.finish_run` pair). The shared machinery is
:mod:`ermviz.estimators._base`; one module per family holds its estimators.
"""

from __future__ import annotations

from ermviz.estimators._base import SolverEstimator as SolverEstimator
from ermviz.estimators.constrained import ConstrainedLeastSquares, ConstrainedLogisticRegression
from ermviz.estimators.lssvm import LSSVMClassifier, LSSVMRegressor
from ermviz.estimators.plq import PLQClassifier, PLQRegressor
from ermviz.estimators.svm import L2SVMClassifier

__all__ = [
    "ConstrainedLeastSquares",
    "ConstrainedLogisticRegression",
    "L2SVMClassifier",
    "LSSVMClassifier",
    "LSSVMRegressor",
    "PLQClassifier",
    "PLQRegressor",
]
