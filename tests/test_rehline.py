"""ReHLine (Dai & Qiu 2023) on the ``plq`` problem: losses, solutions, certificates, errors.

* every named loss: the ReLU-ReHU parameters reproduce a direct numpy formula of the loss
  (with weights) at random points;
* small instances (synthetic 200 x 10, dense and CSR, and real-data subsets): the solution
  matches cvxpy + Clarabel to 1e-6 relative in objective, for every loss, FairSVM (constraint
  satisfied to 1e-8), ElasticQR, non-negativity, monotonicity, custom losses and custom
  constraints; at every recorded row the certificate bounds the suboptimality
  ``P(beta_k) - P*``; the recorded dual objective never exceeds ``P*``;
* agreement with the C++ ``rehline`` package on real datasets (objective to 1e-6);
* options (shrinking, order, start, relative gap, warm starts, work budgets) and the CLI;
* bad inputs give one-line SettingError / DataError messages.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp

from ermviz.cli import main
from ermviz.data import Dataset, load_dataset, preprocess
from ermviz.errors import DataError, ErmvizError, SettingError
from ermviz.families.plq import certificate as plq_certificate
from ermviz.families.plq import packing as plq_packing
from ermviz.families.plq.losses import NAMED_LOSSES, named_loss_pieces, plq_value
from ermviz.families.plq.problem import PlqProblem
from ermviz.families.plq.rehline import ReHLineSolver
from ermviz.reference import TIGHT_CLARABEL, plq_cvxpy
from ermviz.registry import build_problem, build_solver
from ermviz.runner import Budget, Run

cp = pytest.importorskip("cvxpy")

REL = 1e-6


# ---- helpers ---------------------------------------------------------------------------
def _direct_loss(loss, y, z, *, epsilon=0.1, quantile=0.5, kappa=1.0):
    r = y - z
    if loss == "svm":
        return np.maximum(1 - y * z, 0)
    if loss == "ssvm":
        m = 1 - y * z
        return np.where(m <= 0, 0, np.where(m <= 1, 0.5 * m * m, m - 0.5))
    if loss == "svm2":
        return np.maximum(1 - y * z, 0) ** 2
    if loss == "lad":
        return np.abs(r)
    if loss == "svr":
        return np.maximum(np.abs(r) - epsilon, 0)
    if loss == "qr":
        return r * (quantile - (r < 0))
    if loss == "huber":
        a = np.abs(r)
        return np.where(a <= kappa, 0.5 * r * r, kappa * (a - 0.5 * kappa))
    if loss == "mse":
        return r * r
    raise AssertionError(loss)


def _cvx_reference(pb: PlqProblem) -> float:
    """P* by cvxpy + Clarabel at tight tolerances (:func:`ermviz.reference.plq_cvxpy`)."""
    res = plq_cvxpy(pb, "CLARABEL", **TIGHT_CLARABEL)
    assert res.status == "optimal", res.status
    return res.objective


def _solve(pb, tol=1e-9, **settings):
    solver = ReHLineSolver(pb, "cd", {"gap": "relative", **settings}, tol)
    run = Run(solver, Budget(tol=tol, max_iter=10**6, max_time=120))
    run.run()
    return solver, run, run.frame()


def _check_against(pb, fstar, solver, run, frame):
    assert run.status == "converged", run.message
    P = frame["objective"].to_numpy()
    D = frame["dual_objective"].to_numpy()
    cert_abs = P - D  # the absolute duality gap (when beta is feasible)
    infeas = frame["infeasibility"].to_numpy()
    slack = 1e-8 * max(1.0, abs(fstar))
    # Weak duality: D <= P*; the gap bounds P(beta_k) - P* at every row.
    assert np.all(D <= fstar + slack)
    feasible = infeas <= 1e-12
    assert np.all(cert_abs[feasible] >= P[feasible] - fstar - slack)
    # The certificate column (relative here) bounds the relative suboptimality wherever
    # the dual value is positive (D <= P* makes gap / D >= (P - P*) / P*).
    rel_cert = frame["certificate"].to_numpy()
    pos = feasible & (D > 0)
    assert np.all(rel_cert[pos] * abs(fstar) >= P[pos] - fstar - slack)
    beta = solver.iterate()
    assert pb.objective(beta) == pytest.approx(fstar, rel=REL)
    assert pb.infeasibility(beta) <= 1e-8
    assert P[-1] == pytest.approx(pb.objective(beta), rel=1e-12, abs=1e-12)


# ---- synthetic data --------------------------------------------------------------------
def _synthetic(kind: str, sparse: bool = False, n: int = 200, p: int = 10, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    if sparse:
        # Density ~0.2: below the kernels' dense-copy threshold, so CSR kernels run.
        X[rng.random((n, p)) < 0.8] = 0.0
        X = sp.csr_matrix(X)
    beta0 = rng.standard_normal(p)
    f = np.asarray(X @ beta0).ravel()
    if kind == "binary":
        y = np.where(f + 0.5 * rng.standard_normal(n) >= 0, 1.0, -1.0)
    else:
        y = f + rng.standard_normal(n)
    return Dataset(f"synthetic-{kind}", X, y, kind, "test")


@pytest.fixture(scope="module")
def binary():
    return _synthetic("binary")


@pytest.fixture(scope="module")
def regression():
    return _synthetic("regression")


@pytest.mark.parametrize("loss", NAMED_LOSSES)
def test_loss_pieces_reproduce_the_loss(loss):
    rng = np.random.default_rng(1)
    n = 500
    y = np.sign(rng.standard_normal(n)) if loss in ("svm", "ssvm", "svm2") else rng.normal(size=n)
    z = 3 * rng.standard_normal(n)
    c = rng.uniform(0.0, 3.0, n)
    c[:5] = 0.0  # zero weights are allowed
    kw = {"epsilon": 0.3, "quantile": 0.2, "kappa": 0.7}
    U, V, S, T, tau = named_loss_pieces(loss, y, c, **kw)
    got = plq_value(U, V, S, T, tau, z)
    want = c * _direct_loss(loss, y, z, **kw)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # Through the problem: C, sample weights and averaging multiply the loss.
    ds = Dataset(
        "d", np.eye(n, 3), y, "binary" if loss in ("svm", "ssvm", "svm2") else "regression", "t"
    )
    pb = PlqProblem.build(ds, loss=loss, C=2.5, average=True, sample_weight=c, **kw)
    beta = rng.standard_normal(3)
    zz = ds.X @ beta
    np.testing.assert_allclose(
        pb.losses(beta), 2.5 * c / n * _direct_loss(loss, y, zz, **kw), rtol=1e-12, atol=1e-14
    )


@pytest.mark.parametrize("loss", NAMED_LOSSES)
@pytest.mark.parametrize("shrink", [False, True])
def test_every_loss_matches_cvxpy(binary, regression, loss, shrink):
    ds = binary if loss in ("svm", "ssvm", "svm2") else regression
    pb = PlqProblem.build(ds, loss=loss, C=0.7, quantile=0.3, epsilon=0.2, kappa=0.8)
    fstar = _cvx_reference(pb)
    _check_against(pb, fstar, *_solve(pb, shrink=shrink))


@pytest.mark.parametrize(
    "kind, settings",
    [
        ("binary", {"preset": "fairsvm", "sensitive": 2, "rho": 1e-3}),
        ("binary", {"loss": "svm", "constraint": "fairness", "sensitive": 4, "rho": 0.0}),
        ("regression", {"preset": "elasticqr"}),
        ("regression", {"loss": "qr", "quantile": 0.3, "l1": 0.5, "intercept": True}),
        ("regression", {"loss": "huber", "constraint": "nonnegative", "intercept": True}),
        ("regression", {"loss": "lad", "constraint": "monotone", "l1": 0.2}),
        ("binary", {"preset": "ssvm"}),
        ("binary", {"preset": "svm", "C": 50.0}),
        ("regression", {"preset": "ridgehuber", "C": 30.0}),
    ],
)
@pytest.mark.parametrize("sparse", [False, True])
def test_setups_match_cvxpy(kind, settings, sparse):
    ds = _synthetic(kind, sparse=sparse, seed=3)
    pb = PlqProblem.build(ds, **settings)
    fstar = _cvx_reference(pb)
    solver, run, frame = _solve(pb)
    assert isinstance(solver._X, tuple) == sparse  # the CSR kernels when the data are CSR
    _check_against(pb, fstar, solver, run, frame)
    if settings.get("constraint") == "fairness" or settings.get("preset") == "fairsvm":
        beta = solver.iterate()
        j = settings["sensitive"]
        Xd = ds.X.toarray() if sp.issparse(ds.X) else ds.X
        zc = Xd[:, j] - Xd[:, j].mean()
        rho = settings["rho"]
        assert abs(zc @ (Xd @ beta) / ds.n) <= rho + 1e-8


def test_custom_loss_and_constraints_match_cvxpy(regression):
    rng = np.random.default_rng(5)
    n, d = regression.n, regression.p
    # A ReLU piece and a ReHU piece per sample, plus sum_j beta_j <= 1 and beta_0 >= 0.2.
    U = rng.normal(size=(1, n))
    V = rng.normal(size=(1, n))
    S = rng.normal(size=(1, n))
    T = rng.normal(size=(1, n))
    tau = rng.uniform(0.0, 2.0, size=(1, n))
    A = np.vstack([-np.ones(d), np.eye(d)[0]])
    b = np.array([1.0, -0.2])
    sw = rng.uniform(0.5, 2.0, n)
    pb = PlqProblem.build(
        regression, U=U, V=V, S=S, T=T, tau=tau, A=A, b=b, sample_weight=sw, C=0.5
    )
    assert pb.settings["loss"] == "custom"
    fstar = _cvx_reference(pb)
    solver, run, frame = _solve(pb)
    _check_against(pb, fstar, solver, run, frame)
    beta = solver.iterate()
    assert beta.sum() <= 1 + 1e-8 and beta[0] >= 0.2 - 1e-8


# ---- real data -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real_sets(real_data, requires_data):
    requires_data("breast-cancer_scale", "kin8nm", "a9a")
    bc = preprocess(load_dataset("breast-cancer_scale", with_test=False), standardize=True)
    kin = preprocess(load_dataset("kin8nm", with_test=False), standardize=True)
    kin = Dataset("kin300", kin.X[:300], kin.y[:300], "regression", "subset")
    a9a = load_dataset("a9a", with_test=False)
    a9a = Dataset("a9a300", a9a.X[:300], a9a.y[:300], "binary", "subset")
    return {"bc": bc, "kin": kin, "a9a": a9a}


@pytest.mark.parametrize(
    "key, settings",
    [
        ("bc", {"preset": "svm", "C": 100.0}),
        ("bc", {"preset": "fairsvm", "sensitive": 1, "rho": 0.005, "C": 100.0}),
        ("bc", {"loss": "svm2", "intercept": True}),
        ("a9a", {"loss": "svm", "C": 1.0}),
        ("a9a", {"loss": "ssvm", "constraint": "fairness", "sensitive": 10, "rho": 0.01}),
        ("kin", {"preset": "elasticqr", "l1": 0.01}),
        ("kin", {"loss": "huber", "kappa": 0.1, "C": 10.0, "intercept": True}),
        ("kin", {"loss": "svr", "epsilon": 0.05, "C": 10.0}),
    ],
)
def test_real_subsets_match_cvxpy(real_sets, key, settings):
    pb = PlqProblem.build(real_sets[key], **settings)
    fstar = _cvx_reference(pb)
    _check_against(pb, fstar, *_solve(pb))


@pytest.mark.requires_data("phishing", "a9a", "kin8nm")
@pytest.mark.slow
def test_agrees_with_rehline_package(real_data):
    rehline = pytest.importorskip("rehline")
    cases = [
        (
            preprocess(load_dataset("phishing", with_test=False), standardize=True),
            {"preset": "svm"},
        ),
        (load_dataset("a9a", with_test=False), {"loss": "svm", "C": 0.1}),
        (
            preprocess(load_dataset("kin8nm", with_test=False), standardize=True),
            {"loss": "huber", "kappa": 0.5, "C": 1.0},
        ),
        (
            preprocess(load_dataset("phishing", with_test=False), standardize=True),
            {"preset": "fairsvm", "sensitive": 7},
        ),
    ]
    for ds, settings in cases:
        pb = PlqProblem.build(ds, **settings)
        solver, run, frame = _solve(pb, tol=1e-9)
        assert run.status == "converged", run.message
        res = rehline.ReHLine_solver(
            pb.X,
            pb.U.T.copy(),
            pb.V.T.copy(),
            pb.tau.T.copy(),
            pb.S.T.copy(),
            pb.T.T.copy(),
            pb.A.toarray() if pb.K else None,
            pb.b if pb.K else None,
            max_iter=10**6,
            tol=1e-9,
            verbose=0,
        )
        theirs = pb.objective(np.asarray(res.beta))
        ours = pb.objective(solver.iterate())
        assert ours == pytest.approx(theirs, rel=1e-6), settings
        # Our certificate is a bound: their (feasible) objective is not below ours - gap.
        if pb.infeasibility(np.asarray(res.beta)) <= 1e-12:
            assert theirs >= frame["dual_objective"].iloc[-1] - 1e-9 * abs(theirs)


def test_kernel_layout_follows_density(monkeypatch):
    """CSR data at least KERNEL_DENSE_MIN_DENSITY dense reach the kernels as a dense copy
    (equal entries); sparser or too large ones stay CSR; dense data stay dense."""
    rng = np.random.default_rng(0)
    M = rng.standard_normal((50, 8))
    for density, dense in ((0.5, True), (0.1, False)):
        X = sp.csr_matrix(np.where(rng.random(M.shape) < density, M, 0.0))
        out = plq_packing.kernel_rows(X)
        assert isinstance(out, np.ndarray) == dense
        if dense:
            assert out.flags.c_contiguous and np.array_equal(out, X.toarray())
    monkeypatch.setattr(plq_packing, "KERNEL_DENSE_MAX_ENTRIES", 399)
    assert isinstance(plq_packing.kernel_rows(sp.csr_matrix(M)), tuple)
    assert isinstance(plq_packing.kernel_rows(M), np.ndarray)


@pytest.mark.requires_data("phishing", "kin8nm")
@pytest.mark.slow
def test_cyclic_iterates_follow_rehline_package(real_data, monkeypatch):
    """Same start (zeros), cyclic order, no shrinking, the reference code's xi schedule
    (``xi_block=epoch``): after 3 epochs our iterate is the package's to rounding, for a
    constraint block, ReHU pieces and the l1 block. phishing is CSR of density 0.44, which
    the kernels take as a dense copy; the CSR kernels are checked on it too (dense-copy
    threshold raised above 1)."""
    rehline = pytest.importorskip("rehline")
    phishing = preprocess(load_dataset("phishing", with_test=False), standardize=True)
    kin = preprocess(load_dataset("kin8nm", with_test=False), standardize=True)
    cases = [
        (phishing, {"preset": "fairsvm", "sensitive": 3, "rho": 0.001, "C": 100.0}),
        (kin, {"loss": "huber", "kappa": 0.5, "C": 10.0}),
        (kin, {"loss": "qr", "quantile": 0.3, "l1": 0.5, "C": 10.0, "constraint": "nonnegative"}),
    ]
    default_threshold = plq_packing.KERNEL_DENSE_MIN_DENSITY
    for ds, settings in cases:
        pb = PlqProblem.build(ds, **settings)
        extra = {"A": pb.A.toarray(), "b": pb.b} if pb.K else {}
        if pb.l1w.size:
            extra["rho"] = pb.l1w
        res = rehline.ReHLine_solver(
            pb.X,
            pb.U.T.copy(),
            pb.V.T.copy(),
            pb.tau.T.copy(),
            pb.S.T.copy(),
            pb.T.T.copy(),
            max_iter=3,
            tol=1e-14,
            shrink=0,
            coordinate_order="cyclic",
            verbose=0,
            **extra,
        )
        for csr_kernels in (False, True) if sp.issparse(pb.X) else (False,):
            monkeypatch.setattr(
                plq_packing,
                "KERNEL_DENSE_MIN_DENSITY",
                2.0 if csr_kernels else default_threshold,
            )
            solver = ReHLineSolver(
                pb, "cd", {"shrink": False, "order": "cyclic", "xi_block": "epoch"}, 1e-6
            )
            assert isinstance(solver._X, tuple) == csr_kernels
            solver.advance(3, 10**9)
            np.testing.assert_allclose(solver.iterate(), res.beta, rtol=1e-10, atol=1e-12)
            if pb.K:
                np.testing.assert_allclose(solver.duals()["xi"], res.xi, rtol=1e-10, atol=1e-12)


# ---- options ---------------------------------------------------------------------------
def test_orders_starts_and_shrinking_agree(binary):
    pb = PlqProblem.build(binary, loss="svm", C=2.0, constraint="fairness", rho=0.01)
    values = []
    for opts in (
        {"shrink": False, "order": "cyclic"},
        {"shrink": False, "order": "random", "seed": 3},
        {"shrink": True},
        {"shrink": True, "order": "cyclic", "check_work": 0.0},
        {"start": "legacy"},
    ):
        _, run, frame = _solve(pb, **opts)
        assert run.status == "converged", (opts, run.message)
        values.append(frame["objective"].iloc[-1])
        if opts.get("check_work") == 0.0 or not opts.get("shrink", True):
            # One row per epoch.
            assert (np.diff(frame["epoch"].to_numpy()) == 1).all()
    assert np.ptp(values) <= 1e-8 * abs(values[0])


def test_reproducible_with_seed(binary):
    pb = PlqProblem.build(binary, loss="ssvm")
    a = _solve(pb, seed=7)[0].iterate()
    b = _solve(pb, seed=7)[0].iterate()
    np.testing.assert_array_equal(a, b)


def test_reference_math_matches_kernel_records(regression):
    pb = PlqProblem.build(regression, loss="qr", quantile=0.2, l1=0.3, constraint="monotone")
    solver = build_solver(pb, "rehline", "cd", {"shrink": False, "gap": "absolute"}, tol=1e-300)
    rows, _ = solver.advance(25, 10**9)
    assert rows.shape[0] == 25
    beta, duals = solver.iterate(), solver.duals()
    np.testing.assert_allclose(beta, pb.beta_of(duals), rtol=1e-9, atol=1e-11)
    rows, _ = solver.advance(1, 0)  # record the current iterate without stepping
    cols = {c: rows[0, i] for i, c in enumerate(solver.columns)}
    assert cols["objective"] == pytest.approx(pb.objective(beta), rel=1e-12)
    assert cols["dual_objective"] == pytest.approx(pb.dual_objective(duals), rel=1e-9, abs=1e-9)
    assert cols["certificate"] == pytest.approx(pb.certificate(beta, duals), rel=1e-7, abs=1e-9)
    assert cols["infeasibility"] == pytest.approx(pb.infeasibility(beta), abs=1e-12)
    assert cols["epoch"] == 25 and cols["iteration"] == 25
    # Without duals the certificate uses the duals implied by beta: still an upper bound.
    fstar = _cvx_reference(pb)
    assert pb.certificate(beta) >= pb.objective(beta) - fstar - 1e-9


def test_certificate_size_is_fresh_on_the_deciding_row(regression, monkeypatch):
    """The size of the gap's terms (its rounding resolution, part of the certificate) is
    reused between evaluations far from a decision; the row that ends the run carries a
    fresh one, and both evaluation kernels agree on everything else."""
    from solvers import rehline as kern

    calls = {"evaluate": 0, "evaluate_sized": 0}
    for name in calls:
        inner = getattr(kern, name)

        def counted(*a, _inner=inner, _name=name):
            calls[_name] += 1
            return _inner(*a)

        monkeypatch.setattr(kern, name, counted)
    pb = PlqProblem.build(regression, loss="qr", quantile=0.2, l1=0.3, constraint="monotone")
    solver, run, frame = _solve(pb, tol=1e-8)
    assert run.status == "converged"
    assert calls["evaluate"] > 0 and calls["evaluate_sized"] > 0
    args = (solver._data, solver.beta, solver._duals)
    plain = np.full(kern.N_EVAL, -7.0)
    sized = np.zeros(kern.N_EVAL)
    kern.evaluate(*args, plain)
    kern.evaluate_sized(*args, sized)
    assert plain[kern.E_MAG] == -7.0  # left as it was
    for e in (kern.E_PRIMAL, kern.E_GAP, kern.E_CERT, kern.E_INFEAS):
        assert plain[e] == sized[e]
    assert sized[kern.E_PRIMAL] == pytest.approx(pb.objective(solver.iterate()), rel=1e-12)
    assert sized[kern.E_MAG] >= abs(sized[kern.E_PRIMAL])
    fresh = plq_certificate.read_gap(sized, relative=True)
    assert frame["certificate"].iloc[-1] == fresh.certificate
    # At the zero start the size is the primal value, which the sized kernel agrees with.
    start = ReHLineSolver(pb, "cd", {"gap": "relative"}, 1e-8)
    first = start._evaluate()
    at0 = np.zeros(kern.N_EVAL)
    zeros = kern.PlqDuals(*(np.zeros_like(a) for a in solver._duals))
    kern.evaluate_sized(solver._data, zeros.beta, zeros, at0)
    assert at0[kern.E_MAG] == at0[kern.E_PRIMAL]
    assert first.resolution == plq_certificate.read_gap(at0, relative=True).resolution


def test_warm_start_from_solution_and_clipping(binary):
    pb = PlqProblem.build(binary, loss="svm", constraint="fairness", rho=0.01)
    solver = _solve(pb, tol=1e-10)[0]
    duals = solver.duals()
    warm = ReHLineSolver(pb, "cd", {"gap": "relative"}, 1e-8, warm_start=duals)
    run2 = Run(warm, Budget(tol=1e-8, max_iter=1000))
    run2.run()
    assert run2.status == "converged" and warm.iteration <= 2
    # Out-of-box values are clipped into the boxes; beta follows the clipped duals.
    cold = ReHLineSolver(pb, "cd", {}, 1e-6)
    bad = {"Lambda": np.full((1, pb.n), 7.0), "xi": np.array([-1.0, 3.0])}
    cold.warm_start(bad)
    d = cold.duals()
    assert d["Lambda"].max() == 1.0 and d["xi"].tolist() == [0.0, 3.0]
    np.testing.assert_allclose(cold.iterate(), pb.beta_of(d), atol=1e-12)
    cold.advance(1, 10)
    with pytest.raises(SettingError):
        cold.warm_start(duals)


def test_absolute_gap_and_work_budget(regression):
    pb = PlqProblem.build(regression, loss="huber")
    solver = build_solver(pb, "rehline", "cd", {"gap": "absolute"}, tol=1e-7)
    run = Run(solver, Budget(tol=1e-7, max_time=60))
    run.run()
    f = run.frame()
    assert run.status == "converged"
    assert f["certificate"].iloc[-1] <= 1e-7
    np.testing.assert_allclose(
        f["certificate"], f["objective"] - f["dual_objective"], rtol=1e-6, atol=1e-8
    )
    solver = build_solver(pb, "rehline", "cd", {"shrink": False}, tol=1e-12)
    run = Run(solver, Budget(tol=1e-12, max_work=("epoch", 5)))
    run.run()
    assert run.status == "max_work"
    assert 5 <= run.frame()["epoch"].iloc[-1] <= 30


def test_registry_and_cli(capsys):
    ds = load_dataset("wdbc")
    pb = build_problem("plq", ds, preset="fairsvm", sensitive=3)
    assert pb.settings["loss"] == "svm" and pb.settings["constraint"] == "fairness"
    assert pb.settings["average"] is True
    # An explicit setting wins over the preset.
    assert build_problem("plq", ds, preset="SVM", C=5.0).settings["C"] == 5.0
    code = main(
        [
            "run",
            "--dataset",
            "wdbc",
            "--standardize",
            "--problem",
            "plq",
            "--set",
            "loss=svm",
            "--C",
            "1",
            "--method",
            "rehline",
            "--step",
            "cd",
            "--tol",
            "1e-6",
            "--no-progress",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["status"] == "converged"
    assert summary["certificate_kind"] == "duality_gap" and summary["gap"] <= 1e-6
    code = main(
        [
            "run",
            "--dataset",
            "friedman",
            "--standardize",
            "--problem",
            "plq",
            "--set",
            "preset=elasticqr",
            "--method",
            "rehline",
            "--no-progress",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out.strip().splitlines()[-1])["step"] == "cd"


# ---- bad inputs ------------------------------------------------------------------------
def _one_line(exc: ErmvizError) -> str:
    msg = str(exc)
    assert "\n" not in msg and msg
    return msg


@pytest.mark.parametrize(
    "settings, exc, words",
    [
        ({"loss": "qr", "quantile": 1.5}, SettingError, "quantile"),
        ({"loss": "qr", "quantile": 0.0}, SettingError, "quantile"),
        ({"loss": "huber", "kappa": -1.0}, SettingError, "kappa"),
        ({"constraint": "fairness", "rho": -0.1}, SettingError, "rho"),
        ({"loss": "lad", "constraint": "fairness", "sensitive": 99}, SettingError, "sensitive"),
        ({"C": 0.0}, SettingError, "C"),
        ({"l1": -1.0}, SettingError, "l1"),
        ({"loss": "logistic"}, SettingError, "loss"),
        ({"preset": "lasso"}, SettingError, "preset"),
        ({"loss": "custom"}, SettingError, "custom"),
        ({"loss": "svm"}, DataError, "binary"),
        ({"colour": 1}, SettingError, "colour"),
    ],
)
def test_bad_settings_one_line(regression, settings, exc, words):
    with pytest.raises(exc) as info:
        PlqProblem.build(regression, **settings)
    assert words in _one_line(info.value)


def test_bad_arrays_one_line(regression, binary):
    n, d = regression.n, regression.p
    lad = {"loss": "lad"}
    cases = [
        ({"S": np.ones((1, n)), "T": np.ones((1, n)), "tau": -np.ones((1, n))}, "tau < 0"),
        ({"U": np.ones((1, n + 1)), "V": np.ones((1, n + 1))}, "shape"),
        ({"U": np.full((1, n), np.nan), "V": np.ones((1, n))}, "non-finite"),
        ({"U": np.ones((1, n)), "V": np.ones((1, n)), "loss": "svm"}, "contradicts"),
        (
            {**lad, "A": np.vstack([np.eye(d)[0], -np.eye(d)[0]]), "b": np.array([-1.0, -1.0])},
            "infeasible",
        ),
        ({**lad, "A": np.zeros((1, d)), "b": np.array([-1.0])}, "infeasible"),
        ({**lad, "A": np.ones((1, d + 3)), "b": np.ones(1)}, "(K, d="),
        ({**lad, "A": np.ones((1, d))}, "both A and b"),
        ({**lad, "sample_weight": -np.ones(n)}, "sample_weight"),
    ]
    for kwargs, words in cases:
        with pytest.raises(ErmvizError) as info:
            PlqProblem.build(regression, **kwargs)
        assert words in _one_line(info.value), (kwargs, str(info.value))
    # Fairness on a constant column is void: said so.
    Xc = np.hstack([np.ones((binary.n, 1)), binary.X])
    with pytest.raises(SettingError) as info:
        PlqProblem.build(Dataset("c", Xc, binary.y, "binary", "t"), constraint="fairness")
    assert "constant" in _one_line(info.value)
    # Non-finite data: the data layer refuses them in files; the problem checks arrays too.
    Xn = regression.X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(DataError) as info:
        PlqProblem.build(Dataset("nan", Xn, regression.y, "regression", "t"), loss="lad")
    assert "non-finite" in _one_line(info.value)
