"""The scaling check every family with that failure mode shares (ermviz.families.scaling):
the one-line warning at set-up in the CLI and once per race in the dashboard, where the
features are badly scaled, and nowhere else (issue 31)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import missing_catalog_files

from ermviz.app.state.model import DashboardModel, RunSpec
from ermviz.cli import main
from ermviz.data import bundled_names, load_dataset, preprocess
from ermviz.data.dataset import Dataset
from ermviz.families.scaling import SCALE_SPREAD, feature_scales, scaling_notices
from ermviz.registry import PROBLEMS, build_problem, build_solver
from ermviz.runner import Budget, Run

FW_PROBLEMS = {
    "binary": ("svm-dual", "logreg-l1", "nonconvex-l1"),
    "regression": ("least-squares",),
}
#: The first method the dashboard and the CLI would race on each problem (any would do).
METHOD = {"svm-dual": "pfw", "logreg-l1": "pfw", "nonconvex-l1": "tufw", "least-squares": "pfw"}


def requires_catalog(*names: str) -> None:
    """Skip (a failure under CI) when a catalog file is not on the search path."""
    reason = missing_catalog_files(names)
    if reason:
        pytest.skip(reason)


def cli_warnings(capsys, *argv: str) -> list[str]:
    """The warnings ``ermviz run`` prints (one iteration: the warning comes at set-up)."""
    code = main(["run", *argv, "--max-iter", "1", "--no-progress"])
    _, err = capsys.readouterr()
    assert code == 0, err
    return [line for line in err.splitlines() if line.startswith("ermviz: warning:")]


# ---- the criterion on matrices -----------------------------------------------------------
@pytest.mark.parametrize("sparse", [False, True])
def test_feature_scales_are_the_columns_largest_magnitudes(sparse):
    X = np.array([[1.0, 0.0, 200.0, 0.0], [-3.0, 0.5, 0.0, 0.0], [2.0, -0.25, 7.0, 0.0]])
    f = feature_scales(sp.csr_matrix(X) if sparse else X)
    # Independent: the column maxima of |X| over the columns not all zero are 3, 0.5, 200.
    assert (f.low, f.high) == (0.5, 200.0)
    assert f.spread(unit=False) == 400.0
    assert f.spread(unit=True) == 400.0  # 1 lies inside [0.5, 200]
    assert not f.standardized
    g = feature_scales(np.array([[5.0, 0.0], [6.0, 0.0]]))
    assert g.spread(unit=False) == 1.0 and g.spread(unit=True) == 6.0


def test_standardized_data_never_warn_even_with_a_wide_spread():
    # One non-zero value in a column: standardized, its z-score is sqrt(n - 1) = 141, a
    # spread that would warn; --standardize has nothing left to do, so no warning.
    n = 20_000
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 3))
    X[:, 2] = 0.0
    X[7, 2] = 1.0
    X = np.c_[X * [1.0, 1e3, 1.0], np.ones(n)]
    ds = Dataset("spiky", X, np.where(X[:, 0] > 0, 1.0, -1.0), "binary", "test")
    raw, std = ds, preprocess(ds, standardize=True)
    assert feature_scales(std.X).standardized
    assert feature_scales(std.X).spread(unit=True) > SCALE_SPREAD
    for problem in FW_PROBLEMS["binary"]:
        assert scaling_notices(build_problem(problem, raw), METHOD[problem])
        assert not scaling_notices(build_problem(problem, std), METHOD[problem])


def test_the_warning_marks_a_real_slowdown():
    # Least squares on friedman (features in [0, 1]) against the same data with half of the
    # columns multiplied by 300: PFW needs under 100 steps on the first, is far from its
    # relative tolerance after 5000 on the second. Counted in iterations, not seconds.
    ds = load_dataset("friedman")
    X = np.array(ds.X) * np.r_[np.full(5, 300.0), np.ones(ds.p - 5)]
    scaled = Dataset("friedman-x300", X, ds.y, "regression", "test")
    out = {}
    for name, d in (("plain", ds), ("x300", scaled)):
        pb = build_problem("least-squares", d)
        tol = 1e-8 * pb.certificate(pb.initial_point())
        run = Run(build_solver(pb, "pfw", "exact", {}, tol), Budget(tol=tol, max_iter=5000))
        run.run()
        out[name] = (run.summary(), scaling_notices(pb, "pfw"))
    (plain, plain_notice), (x300, x300_notice) = out["plain"], out["x300"]
    assert plain["status"] == "converged" and plain["iterations"] < 100 and not plain_notice
    assert x300["status"] == "max_iter" and x300_notice


# ---- the CLI -----------------------------------------------------------------------------
def test_cli_warns_on_raw_wdbc_svm_dual_naming_standardize_only(capsys):
    (line,) = cli_warnings(capsys, "--dataset", "wdbc", "--problem", "svm-dual", "--method", "pfw")
    assert "'wdbc' are badly scaled for Frank-Wolfe methods" in line
    assert "--standardize" in line and "--method" not in line  # no FW method copes
    assert "4.25e+03" in line  # wdbc's largest feature (worst area, 4254)
    assert not cli_warnings(
        capsys, "--dataset", "wdbc", "--problem", "svm-dual", "--method", "pfw", "--standardize"
    )


@pytest.mark.parametrize("method", ["pfw", "bpcg", "boosted", "pfw lazy=true"])
@pytest.mark.parametrize("constraint", ["l1", "box"])
def test_cli_warns_on_raw_cadata_least_squares(capsys, method, constraint):
    # cpusmall is not among the catalog files; cadata is the unscaled regression set that is
    # (features from 15 to 3.9e4: PFW ends a 3 s budget unconverged, 434 steps standardized).
    requires_catalog("cadata")
    method, *lazy = method.split()
    argv = ["--dataset", "cadata", "--problem", "least-squares", "--method", method]
    for setting in (f"constraint={constraint}", *lazy):
        argv += ["--set", setting]
    (line,) = cli_warnings(capsys, *argv)
    assert "'cadata' are badly scaled for Frank-Wolfe methods" in line
    assert "--standardize" in line
    assert not cli_warnings(capsys, *argv, "--standardize")


def test_cli_warns_on_unscaled_plq_for_rehline_only(capsys):
    argv = ["--dataset", "wdbc", "--problem", "plq"]
    (line,) = cli_warnings(capsys, *argv, "--method", "rehline")
    assert "badly scaled for rehline's coordinate descent" in line
    assert "--standardize" in line and "--method ipm" in line
    assert not cli_warnings(capsys, *argv, "--method", "ipm")  # the method that copes
    assert not cli_warnings(capsys, *argv, "--method", "rehline", "--standardize")


@pytest.mark.parametrize(
    "name, problem, method",
    [
        ("a1a", "svm-dual", "pfw"),
        ("a1a", "logreg-l1", "fw"),
        ("ijcnn1", "logreg-l1", "pfw"),
        ("w8a", "logreg-l1", "bpcg"),
        ("w1a", "nonconvex-l1", "tufw"),
        ("phishing", "logreg-l1", "pfw"),
        ("breast-cancer_scale", "svm-dual", "afw"),
        ("abalone", "least-squares", "pfw"),
    ],
)
@pytest.mark.slow
def test_cli_is_silent_on_scaled_catalog_sets(capsys, name, problem, method):
    requires_catalog(name)
    assert not cli_warnings(capsys, "--dataset", name, "--problem", problem, "--method", method)


# ---- every problem that declares the check, over data sets ---------------------------------
SCALED_CATALOG = (
    "a1a", "a2a", "a8a", "a9a", "w1a", "w7a", "w8a", "ijcnn1", "ijcnn1-20k", "phishing",
    "svmguide3", "splice", "banana", "waveform", "breast-cancer_scale", "diabetes_scale",
    "abalone", "kin8nm",
)  # fmt: skip
UNSCALED_CATALOG = (
    "breast-cancer", "diabetes", "liver-disorders", "skin_nonskin", "cadata", "house_8L",
)  # fmt: skip


def _problems_for(ds) -> list[str]:
    names = list(FW_PROBLEMS[ds.task])
    if ds.task == "binary":
        names.append("least-squares")  # least squares takes -1/+1 targets as well
    return names


@pytest.mark.parametrize("name", bundled_names())
def test_bundled_sets_standardized_never_warn(name):
    ds = load_dataset(name, **({"n": 5000} if name in ("cso-synthetic", "sine-tasks") else {}))
    std = preprocess(ds, standardize=True)
    for problem in _problems_for(ds):
        assert not scaling_notices(build_problem(problem, std), METHOD[problem]), problem
    if name != "wdbc":  # the bundled sets other than wdbc are scaled as generated
        for problem in _problems_for(ds):
            assert not scaling_notices(build_problem(problem, ds), METHOD[problem]), problem


@pytest.mark.parametrize("name", SCALED_CATALOG)
@pytest.mark.slow
def test_scaled_catalog_sets_never_warn(name):
    requires_catalog(name)
    ds = load_dataset(name, with_test=False)
    for problem in _problems_for(ds):
        pb = build_problem(problem, ds)
        assert not scaling_notices(pb, METHOD[problem]), problem


@pytest.mark.parametrize("name", UNSCALED_CATALOG)
def test_unscaled_catalog_sets_warn_where_the_unit_scale_counts(name):
    requires_catalog(name)
    ds = load_dataset(name, with_test=False)
    for problem in _problems_for(ds):
        notices = scaling_notices(build_problem(problem, ds), METHOD[problem])
        # skin_nonskin (RGB, 0-255 in every column) and liver-disorders (82-297) are large
        # against 1 but evenly spread: least squares, invariant to a common scale, is fine.
        even = name in ("skin_nonskin", "liver-disorders") and problem == "least-squares"
        assert bool(notices) != even, problem


def test_every_fw_family_problem_declares_the_check():
    for problem in ("svm-dual", "logreg-l1", "least-squares", "nonconvex-l1", "plq"):
        assert PROBLEMS[problem].scaling is not None


# ---- the dashboard -----------------------------------------------------------------------
def _model(**params) -> DashboardModel:
    notes: list[tuple[str, str]] = []
    m = DashboardModel(notifier=lambda level, msg: notes.append((level, msg)), **params)
    m.notes = notes
    return m


def _warnings(m: DashboardModel) -> list[str]:
    return [msg for level, msg in m.notes if level == "warning"]


def test_dashboard_warns_once_per_race_on_raw_wdbc_svm_dual():
    m = _model(dataset="wdbc", problem="svm-dual", standardize=False, max_time=0.2)
    assert len(m.specs) == 3  # FW, AFW and PFW: three runs, one warning
    m.start()
    (line,) = _warnings(m)
    assert "badly scaled for Frank-Wolfe methods" in line
    assert "'standardize features' checkbox" in line and "--" not in line
    assert "a run with method" not in line
    m.stop()
    m.notes.clear()
    m.start()  # a new race: warned again, once
    assert len(_warnings(m)) == 1
    m.stop()
    m.notes.clear()
    m.standardize = True
    m.start()
    assert not _warnings(m)
    m.stop()


def test_dashboard_plq_race_warns_about_rehline_only():
    m = _model(dataset="wdbc", problem="plq", standardize=False, max_time=0.2)
    m.specs = [RunSpec(method="ipm", step="newton")]
    m.start()
    assert not _warnings(m)  # ipm copes
    m.stop()
    m.specs = [RunSpec(method="ipm", step="newton"), RunSpec(method="rehline", step="cd")]
    m.start()
    (line,) = _warnings(m)
    assert "rehline's coordinate descent" in line and "a run with method ipm" in line
    m.stop()
