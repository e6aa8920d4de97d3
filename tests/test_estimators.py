"""ermviz.estimators: scikit-learn's estimator checks, the CLI's objective, scikit-learn's
accuracy on the same models, pipelines and parallel grid search."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import estimator_checks_generator

from ermviz import cli
from ermviz import estimators as E
from ermviz.data import load_dataset
from ermviz.errors import SettingError

CLASSES = [getattr(E, name) for name in E.__all__ if isinstance(getattr(E, name), type)]


def _check_name(check) -> str:
    return getattr(check, "func", check).__name__


def test_all_lists_every_family_estimator():
    assert {c.__name__ for c in CLASSES} == {
        "ConstrainedLogisticRegression",
        "ConstrainedLeastSquares",
        "L2SVMClassifier",
        "PLQClassifier",
        "PLQRegressor",
        "LSSVMClassifier",
        "LSSVMRegressor",
    }


# -- scikit-learn's own checks ------------------------------------------------------------


# Every check holds, with one exclusion: the array-API checks, which need SCIPY_ARRAY_API
# and otherwise skip (a skip fails the run under CI). The estimators do not claim array-API
# support (the tag is False): their numba kernels take numpy arrays only. ``max_iter``
# bounds each fit so the checks' ill-posed data (e.g. features around 100 with random
# labels) cannot run for the default 300 s; a capped fit is still deterministic.
CHECKS = [
    pytest.param(est, check, id=f"{type(est).__name__}-{_check_name(check)}")
    for cls in CLASSES
    for est, check in estimator_checks_generator(cls(max_iter=2000), legacy=True)
    if not _check_name(check).startswith("check_array_api")
]


@pytest.mark.parametrize("estimator, check", CHECKS)
@pytest.mark.slow
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=ConvergenceWarning)
        check(estimator)


# -- fit = the CLI's run ------------------------------------------------------------------

# (estimator, dataset, CLI arguments): the same problem, method and settings both ways.
CLI_CASES = [
    (
        E.ConstrainedLogisticRegression(radius=5.0, method="pfw", tol=1e-7),
        "a1a",
        ["--problem", "logreg-l1", "--method", "pfw", "--radius", "5", "--set", "intercept=true"],
    ),
    (
        E.ConstrainedLogisticRegression(radius=2.0, constraint="l2", method="fw", tol=1e-6),
        "a1a",
        [
            "--problem",
            "logreg-l1",
            "--method",
            "fw",
            "--radius",
            "2",
            "--set",
            "constraint=l2",
            "--set",
            "intercept=true",
        ],
    ),
    (
        E.ConstrainedLeastSquares(radius=300.0, method="afw", tol=1e-6),
        "sk-diabetes",
        [
            "--problem",
            "least-squares",
            "--method",
            "afw",
            "--radius",
            "300",
            "--set",
            "intercept=true",
        ],
    ),
    (
        E.L2SVMClassifier(C=1.0, method="pfw", tol=1e-6),
        "a1a",
        ["--problem", "svm-dual", "--method", "pfw", "--C", "1"],
    ),
    (
        E.PLQClassifier(loss="svm2", C=0.5, method="rehline", tol=1e-8),
        "a1a",
        [
            "--problem",
            "plq",
            "--method",
            "rehline",
            "--set",
            "loss=svm2",
            "--C",
            "0.5",
            "--set",
            "intercept=true",
        ],
    ),
    (
        E.PLQRegressor(loss="huber", C=1.0, average=True, method="ipm", tol=1e-8),
        "sk-diabetes",
        [
            "--problem",
            "plq",
            "--method",
            "ipm",
            "--set",
            "loss=huber",
            "--C",
            "1",
            "--set",
            "average=true",
            "--set",
            "intercept=true",
        ],
    ),
    (
        E.LSSVMClassifier(C=1.0, method="smo", tol=1e-6),
        "wdbc",
        ["--problem", "lssvm", "--method", "smo", "--C", "1", "--set", "task=classification"],
    ),
    (
        E.LSSVMRegressor(C=10.0, sigma2=4.0, method="cg-two-system", tol=1e-8),
        "friedman",
        [
            "--problem",
            "lssvm",
            "--method",
            "cg-two-system",
            "--C",
            "10",
            "--set",
            "sigma2=4",
            "--set",
            "task=regression",
        ],
    ),
]


@pytest.mark.parametrize(
    "estimator, dataset, args", CLI_CASES, ids=lambda v: getattr(v, "method", None)
)
@pytest.mark.slow
def test_fit_reaches_the_cli_objective(estimator, dataset, args, capsys):
    tol = str(estimator.tol)
    assert cli.main(["run", "--dataset", dataset, *args, "--tol", tol, "--no-progress"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["status"] == "converged"
    ds = load_dataset(dataset)
    est = estimator.fit(ds.X, ds.y)
    assert est.status_ == "converged"
    assert est.certificate_kind_ == summary["certificate_kind"]
    assert est.certificate_ <= estimator.tol
    # Same path, same data: the same objective (to the precision the certificate bounds).
    bound = max(est.certificate_, summary["gap"]) * max(1.0, abs(summary["objective"]))
    assert est.objective_ == pytest.approx(summary["objective"], abs=bound + 1e-12)
    assert est.n_iter_ == summary["iterations"]
    # The trace is the run's: the CLI's schema, ending at the reported values.
    assert {"iteration", "objective", "certificate", "method", "certificate_kind"} <= set(
        est.trace_.columns
    )
    last = est.trace_.iloc[-1]
    assert last["certificate"] == est.certificate_ and last["iteration"] == est.n_iter_


def test_settings_fail_at_fit_with_the_cli_message(capsys):
    X = np.random.default_rng(0).normal(size=(20, 3))
    y = np.where(X[:, 0] > 0, "yes", "no")
    est = E.ConstrainedLogisticRegression(constraint="l2", method="pfw")  # not a polytope
    code = cli.main(
        [
            "run",
            "--dataset",
            "wdbc",
            "--problem",
            "logreg-l1",
            "--method",
            "pfw",
            "--set",
            "constraint=l2",
        ]
    )
    cli_line = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2 and cli_line.startswith("ermviz: error: ")
    with pytest.raises(SettingError) as info:
        est.fit(X, y)
    assert str(info.value) == cli_line.removeprefix("ermviz: error: ")
    with pytest.raises(SettingError, match="radius=-1"):
        E.ConstrainedLogisticRegression(radius=-1.0).fit(X, y)
    with pytest.raises(SettingError, match="loss='huber'"):
        E.PLQClassifier(loss="huber").fit(X, y)


def test_labels_map_back_and_sparse_input_stays_sparse():
    ds = load_dataset("a1a")
    y = np.where(ds.y > 0, "pos", "neg")
    dense = E.L2SVMClassifier(C=1.0).fit(ds.X.toarray(), y)
    sparse = E.L2SVMClassifier(C=1.0).fit(ds.X, y)
    assert list(sparse.classes_) == ["neg", "pos"]
    assert set(sparse.predict(ds.X_test)) == {"neg", "pos"}
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-9, atol=1e-12)
    assert sparse.trace_["iteration"].iloc[-1] == dense.trace_["iteration"].iloc[-1]
    # Fitting leaves the caller's arrays as they were (a Dataset's are read-only).
    Xd = np.array(ds.X[:100].toarray())
    E.PLQClassifier().fit(Xd, y[:100])
    assert Xd.flags.writeable
    # LS-SVM keeps the training matrix as it came: CSR in, CSR kept.
    small = E.LSSVMClassifier().fit(ds.X[:200], y[:200])
    assert sp.issparse(small.X_fit_) and small.X_fit_.format == "csr"


# -- the same models as scikit-learn --------------------------------------------------------


def _a1a():
    ds = load_dataset("a1a")
    return ds.X, ds.y, ds.X_test, ds.y_test


@pytest.fixture(scope="module")
def breast_cancer(requires_data):
    requires_data("breast-cancer")
    ds = load_dataset("breast-cancer")
    X = StandardScaler().fit_transform(ds.X.toarray() if sp.issparse(ds.X) else ds.X)
    return train_test_split(X, ds.y, test_size=0.3, stratify=ds.y, random_state=0)


def _split(name, breast_cancer_request):
    if name == "a1a":
        return _a1a()
    Xtr, Xte, ytr, yte = breast_cancer_request.getfixturevalue("breast_cancer")
    return Xtr, ytr, Xte, yte


@pytest.mark.parametrize("name", ["a1a", "breast-cancer"])
def test_l2svm_matches_linear_svc(name, request):
    Xtr, ytr, Xte, yte = _split(name, request)
    C = 1.0
    ours = E.L2SVMClassifier(C=C, tol=1e-7).fit(Xtr, ytr)
    ref = LinearSVC(C=C / 2, loss="squared_hinge", tol=1e-10, max_iter=100_000).fit(Xtr, ytr)
    assert abs(ours.score(Xte, yte) - ref.score(Xte, yte)) <= 0.005
    # The recovered primal weights are LinearSVC's (offset regularized in both).
    w = np.append(ours.coef_.ravel(), ours.intercept_)
    w_ref = np.append(ref.coef_.ravel(), ref.intercept_)
    assert np.linalg.norm(w - w_ref) <= 1e-2 * np.linalg.norm(w_ref)


@pytest.mark.parametrize("name", ["a1a", "breast-cancer"])
@pytest.mark.slow
def test_plq_squared_hinge_matches_linear_svc(name, request):
    Xtr, ytr, Xte, yte = _split(name, request)
    ours = E.PLQClassifier(loss="svm2", C=0.5, tol=1e-9).fit(Xtr, ytr)
    ref = LinearSVC(C=0.5, loss="squared_hinge", tol=1e-10, max_iter=100_000).fit(Xtr, ytr)
    assert abs(ours.score(Xte, yte) - ref.score(Xte, yte)) <= 0.005
    w = np.append(ours.coef_.ravel(), ours.intercept_)
    w_ref = np.append(ref.coef_.ravel(), ref.intercept_)
    assert np.linalg.norm(w - w_ref) <= 1e-3 * np.linalg.norm(w_ref)


@pytest.mark.parametrize("name", ["a1a", "breast-cancer"])
def test_constrained_logreg_matches_l1_logistic_regression(name, request):
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss

    Xtr, ytr, Xte, yte = _split(name, request)
    # The l1 penalty (l1_ratio=1: scikit-learn 1.8 deprecated penalty="l1" for it). liblinear
    # penalizes the offset like every weight (intercept_scaling=1): the penalized solution
    # is the l1 ball's of radius ||(w, b)||_1, offset inside.
    ref = LogisticRegression(
        l1_ratio=1.0, C=0.5, solver="liblinear", tol=1e-10, max_iter=10_000
    ).fit(Xtr, ytr)
    w_ref = np.append(ref.coef_.ravel(), ref.intercept_)
    radius = float(np.abs(w_ref).sum())
    ours = E.ConstrainedLogisticRegression(radius=radius, tol=1e-7).fit(Xtr, ytr)
    assert abs(ours.score(Xte, yte) - ref.score(Xte, yte)) <= 0.005
    # The same problem: our optimum is no worse than scikit-learn's point (same ball).
    ref_loss = log_loss(ytr, ref.predict_proba(Xtr))
    assert ours.objective_ <= ref_loss + 1e-6
    assert ours.objective_ == pytest.approx(ref_loss, abs=1e-4)


# -- pipelines, grid search, live fit ----------------------------------------------------


@pytest.mark.slow
def test_pipeline_and_parallel_grid_search():
    ds = load_dataset("wdbc")
    Xtr, Xte, ytr, yte = train_test_split(ds.X, ds.y, test_size=0.3, random_state=0)
    pipe = make_pipeline(StandardScaler(), E.ConstrainedLogisticRegression(radius=5.0))
    assert pipe.fit(Xtr, ytr).score(Xte, yte) > 0.9
    grid = GridSearchCV(
        make_pipeline(StandardScaler(), E.ConstrainedLogisticRegression()),
        {"constrainedlogisticregression__radius": [0.05, 1.0, 10.0]},
        cv=3,
        n_jobs=2,
    ).fit(Xtr, ytr)
    scores = grid.cv_results_["mean_test_score"]
    assert grid.best_params_["constrainedlogisticregression__radius"] > 0.05
    assert scores[0] < scores.max()  # a tiny ball underfits
    svm = GridSearchCV(E.L2SVMClassifier(), {"C": [0.1, 1.0]}, cv=3, n_jobs=2)
    svm.fit(StandardScaler().fit_transform(Xtr), ytr)
    assert svm.best_score_ > 0.9


def test_live_fit_returns_the_fitted_estimator_and_draws_the_certificate():
    from ermviz.app import live_fit

    ds = load_dataset("wdbc")
    X = StandardScaler().fit_transform(ds.X)
    est = live_fit(E.ConstrainedLogisticRegression(radius=5.0, method="pfw"), X, ds.y)
    assert est.status_ == "converged" and est.certificate_ <= est.tol
    # The dashboard's two certificate plots, fed from the run's trace (thinned).
    assert len(est.live_figures_) == 2
    for fig in est.live_figures_:
        drawn = [r.data_source.data for r in fig.renderers if "certificate" in r.data_source.data]
        cert = np.asarray(drawn[0]["certificate"])
        assert len(cert) > 2 and cert[-1] == pytest.approx(est.certificate_, rel=1e-12)
        assert cert[-1] < cert[0]
        its = np.asarray(drawn[0]["iteration"])
        assert its[0] == 0 and its[-1] == est.n_iter_
