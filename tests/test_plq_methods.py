"""The methods of the PLQ family (``rehline``, ``ipm``; ``primal-newton`` on the smooth,
unconstrained problems) on constrained and badly scaled problems, against independent
references (issues 20 and 44).

* every constraint kind (none, fairness, nonnegative, monotone, custom ``A, b``) with
  several losses, the elastic net and an intercept, on standardized synthetic data: both
  methods, against cvxpy + Clarabel;
* the same problems with features spanning six orders of magnitude and targets of ~1e3:
  ``ipm`` (which solves them as posed) against cvxpy + Clarabel on the rescaled problem
  (:func:`ermviz.reference.plq_cvxpy` with ``rescale=True``, the same minimizer);
* real cases that failed before: raw breast-cancer (svm; fairness, monotone, none) and raw
  diabetes (svm, monotone) by ``ipm``, their scaled versions by ``rehline``; a9a fairness
  and monotone and w7a nonnegative (binary features) by both; raw cadata (mse, against the
  closed-form ridge solution by scipy) and raw house_8L (huber, svr; plain Clarabel
  declares them infeasible) by ``ipm``;
* every check: ``status == converged``, objective within 1e-6 relative of the reference,
  infeasibility at most 1e-6, and the certificate of every row bounds the suboptimality;
* ``primal-newton`` (issue 44): the differentiable losses with and without intercept, on
  standardized and badly scaled data, against cvxpy + Clarabel; raw cadata against the
  closed-form ridge; sparse a9a against its dense copy; the losses and constraints it
  refuses, with one-line errors;
* endings: on unscaled data ``rehline`` warns about scaling, and a run that stops
  unconverged reports the best certified row it saw (objective, certificate and
  coefficients from that row); ``max_iter`` does not bind unless set.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp

from ermviz.data import Dataset, load_dataset
from ermviz.families.plq.losses import NAMED_LOSSES
from ermviz.families.plq.problem import PlqProblem
from ermviz.families.plq.rehline import scaling_notices
from ermviz.reference import TIGHT_CLARABEL, plq_cvxpy
from ermviz.registry import build_solver
from ermviz.runner import NO_ITER_LIMIT, Budget, Run

pytest.importorskip("cvxpy")

REL = 1e-6
FEAS = 1e-6
METHODS = {"rehline": "cd", "ipm": "newton"}
CONSTRAINTS = ("none", "fairness", "nonnegative", "monotone", "custom")


# ---- helpers ---------------------------------------------------------------------------
def _reference(pb: PlqProblem, *, rescale: bool = False) -> float:
    res = plq_cvxpy(pb, "CLARABEL", rescale=rescale, **TIGHT_CLARABEL)
    assert res.status == "optimal", res.status
    assert res.infeasibility <= 1e-8
    return res.objective


def _solve(pb: PlqProblem, method: str, tol: float = 1e-8, max_time: float = 300.0):
    # (max_time counts the kernels' first compilation: on a fresh clone, with the suite's
    # two workers, the interior-point kernels alone took over 60 s)
    solver = build_solver(pb, method, METHODS[method], {"gap": "relative"}, tol)
    run = Run(solver, Budget(tol=tol, max_time=max_time))
    run.run()
    return solver, run, run.frame()


def _check(pb: PlqProblem, fstar: float, solver, run, frame) -> None:
    assert run.status == "converged", run.message
    beta = solver.iterate()
    assert pb.infeasibility(beta) <= FEAS
    assert pb.objective(beta) == pytest.approx(fstar, rel=REL)
    # The reported row is the reported point.
    assert frame["objective"].iloc[-1] == pytest.approx(pb.objective(beta), rel=1e-12)
    # Weak duality at every row, and the (relative) certificate bounds the suboptimality of
    # every feasible row whose dual value is positive.
    slack = 1e-9 * abs(fstar)
    P = frame["objective"].to_numpy()
    D = frame["dual_objective"].to_numpy()
    ok = np.isfinite(D)
    assert np.all(D[ok] <= fstar + slack)
    rows = (frame["infeasibility"].to_numpy() <= 1e-12) & (D > 0)
    cert = frame["certificate"].to_numpy()
    assert np.all(cert[rows] * fstar >= P[rows] - fstar - slack)


def _synthetic(kind: str, *, raw: bool, n: int = 150, p: int = 8, seed: int = 0) -> Dataset:
    """Standardized features (``raw=False``) or features whose scales span 1e-2 to 1e4 with
    targets of ~1e3 (``raw=True``); labels -1/+1 for ``kind="binary"``."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    beta0 = rng.standard_normal(p)
    f = X @ beta0
    if kind == "binary":
        y = np.where(f + 0.5 * rng.standard_normal(n) >= 0, 1.0, -1.0)
    else:
        y = f + rng.standard_normal(n)
    if raw:
        X = X * np.logspace(-2, 4, p)
        X[:, 0] = np.abs(X[:, 0]) + 50.0  # a positive, uncentred column (sensitive)
        if kind != "binary":
            y = 1e3 * y + 2e3
    return Dataset(f"synthetic-{kind}-{'raw' if raw else 'std'}", X, y, kind, "test")


def _settings(loss: str, constraint: str, d: int) -> dict:
    s: dict = {"loss": loss, "C": 2.0, "quantile": 0.3, "epsilon": 0.2, "kappa": 0.8}
    if constraint == "custom":
        # sum_j beta_j <= 1 and beta_1 >= beta_0 + 0.1
        A = np.zeros((2, d))
        A[0] = -1.0
        A[1, 0], A[1, 1] = -1.0, 1.0
        s.update(A=A, b=np.array([1.0, -0.1]))
    elif constraint != "none":
        s.update(constraint=constraint, sensitive=0, rho=1e-3)
    return s


# (loss, constraint, extras): every constraint kind meets several losses; the elastic net
# and the intercept come with some of them.
GRID = [
    ("svm", "none", {}),
    ("svm", "fairness", {}),
    ("svm", "nonnegative", {"intercept": True}),
    ("svm", "monotone", {}),
    ("svm", "custom", {"l1": 0.3}),
    ("ssvm", "fairness", {"l1": 0.2}),
    ("ssvm", "monotone", {"intercept": True}),
    ("svm2", "nonnegative", {}),
    ("svm2", "custom", {}),
    ("lad", "fairness", {"intercept": True}),
    ("lad", "nonnegative", {"l1": 0.5}),
    ("svr", "monotone", {}),
    ("svr", "none", {"l1": 0.1}),
    ("qr", "custom", {"intercept": True}),
    ("qr", "fairness", {}),
    ("huber", "nonnegative", {}),
    ("huber", "monotone", {"l1": 0.2}),
    ("mse", "fairness", {}),
    ("mse", "custom", {"l1": 0.4}),
]
assert {g[0] for g in GRID} == set(NAMED_LOSSES)
assert {g[1] for g in GRID} == set(CONSTRAINTS)


def _grid_problem(loss: str, constraint: str, extras: dict, raw: bool) -> PlqProblem:
    kind = "binary" if loss in ("svm", "ssvm", "svm2") else "regression"
    ds = _synthetic(kind, raw=raw, seed=len(loss) + 7 * CONSTRAINTS.index(constraint))
    d = ds.p + (1 if extras.get("intercept") else 0)
    return PlqProblem.build(ds, **_settings(loss, constraint, d), **extras)


# ---- synthetic grids -------------------------------------------------------------------
@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("loss, constraint, extras", GRID)
def test_constraint_kinds_and_losses_match_cvxpy(method, loss, constraint, extras):
    pb = _grid_problem(loss, constraint, extras, raw=False)
    _check(pb, _reference(pb), *_solve(pb, method))


@pytest.mark.parametrize("loss, constraint, extras", GRID)
def test_ipm_solves_badly_scaled_problems_as_posed(loss, constraint, extras):
    pb = _grid_problem(loss, constraint, extras, raw=True)
    assert scaling_notices(pb)  # these are the problems the warning is about
    _check(pb, _reference(pb, rescale=True), *_solve(pb, "ipm"))


@pytest.mark.slow
def test_ipm_on_sparse_input_matches_dense():
    ds = _synthetic("binary", raw=True, seed=4)
    X = ds.X.copy()
    X[np.random.default_rng(1).random(X.shape) < 0.8] = 0.0  # density ~0.2: CSR kernels
    dense = Dataset("dense", X, ds.y, "binary", "test")
    sparse = Dataset("sparse", sp.csr_matrix(X), ds.y, "binary", "test")
    settings = {"loss": "svm", "constraint": "fairness", "sensitive": 0, "rho": 1e-3}
    pb_d, pb_s = PlqProblem.build(dense, **settings), PlqProblem.build(sparse, **settings)
    fstar = _reference(pb_d, rescale=True)
    for pb in (pb_d, pb_s):
        solver, run, frame = _solve(pb, "ipm")
        _check(pb, fstar, solver, run, frame)
    assert isinstance(solver._X, tuple)  # the CSR kernels ran on the CSR copy


# ---- real cases of issue 20 ------------------------------------------------------------
def _real(name: str, n: int | None = None) -> Dataset:
    ds = load_dataset(name, with_test=False)
    if n is not None and ds.n > n:
        ds = Dataset(f"{name}[:{n}]", ds.X[:n], ds.y[:n], ds.task, "subset")
    return ds


RAW_CASES = [
    ("breast-cancer", {"loss": "svm", "constraint": "fairness"}),
    ("breast-cancer", {"loss": "svm", "constraint": "monotone"}),
    ("breast-cancer", {"loss": "svm"}),
    ("diabetes", {"loss": "svm", "constraint": "monotone"}),
]


@pytest.mark.parametrize("name, settings", RAW_CASES)
def test_ipm_on_raw_small_cases(real_data, requires_data, name, settings):
    requires_data(name)
    pb = PlqProblem.build(_real(name), **settings)
    assert scaling_notices(pb)
    _check(pb, _reference(pb, rescale=True), *_solve(pb, "ipm"))


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("name, settings", RAW_CASES)
def test_scaled_small_cases(real_data, requires_data, method, name, settings):
    requires_data(f"{name}_scale")
    pb = PlqProblem.build(_real(f"{name}_scale"), **settings)
    assert not scaling_notices(pb)
    _check(pb, _reference(pb), *_solve(pb, method))


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize(
    "name, settings",
    [
        ("a9a", {"loss": "svm", "constraint": "fairness"}),
        ("a9a", {"loss": "svm", "constraint": "monotone"}),
        ("w7a", {"loss": "svm", "constraint": "nonnegative"}),
    ],
)
@pytest.mark.slow
def test_binary_feature_constrained_cases(real_data, requires_data, method, name, settings):
    requires_data(name)
    pb = PlqProblem.build(_real(name, 8000), **settings)
    _check(pb, _reference(pb), *_solve(pb, method, tol=1e-7))


@pytest.mark.requires_data("cadata")
def test_ipm_on_raw_cadata_matches_closed_form_ridge(real_data):
    # mse: C sum (y - x^T beta)^2 + 0.5 ||beta||^2, minimized by (I + 2C X^T X) beta = 2C X^T y.
    ds = _real("cadata")
    pb = PlqProblem.build(ds, loss="mse", C=1.0)
    X = ds.X.toarray() if sp.issparse(ds.X) else ds.X
    beta = scipy.linalg.solve(np.eye(ds.p) + 2.0 * X.T @ X, 2.0 * X.T @ ds.y, assume_a="pos")
    _check(pb, pb.objective(beta), *_solve(pb, "ipm"))


@pytest.mark.requires_data("house_8L")
@pytest.mark.parametrize("loss", ["huber", "svr"])
def test_ipm_on_raw_house_8l(real_data, loss):
    pb = PlqProblem.build(_real("house_8L", 6000), loss=loss)
    plain = plq_cvxpy(pb, "CLARABEL", **TIGHT_CLARABEL)
    fstar = _reference(pb, rescale=True)
    if plain.status == "optimal":  # plain Clarabel fails here on the full set (issue 20)
        fstar = min(fstar, plain.objective)
    _check(pb, fstar, *_solve(pb, "ipm"))


# ---- primal-newton: the differentiable losses without constraints ---------------------
SMOOTH = [
    ("svm2", {}),
    ("svm2", {"intercept": True}),
    ("ssvm", {}),
    ("huber", {"intercept": True}),
    ("mse", {}),
]


def _newton(pb: PlqProblem, tol: float = 1e-10):
    solver = build_solver(pb, "primal-newton", "newton-exact", {"gap": "relative"}, tol)
    run = Run(solver, Budget(tol=tol, max_time=300.0))
    run.run()
    return solver, run, run.frame()


def _check_smooth(pb: PlqProblem, fstar: float, solver, run, frame, max_steps: int = 60) -> None:
    assert run.status == "converged", run.message
    assert solver.certificate_kind == "rel_duality_gap"
    beta = solver.iterate()
    assert pb.objective(beta) == pytest.approx(fstar, rel=REL)
    P = frame["objective"].to_numpy()
    D = frame["dual_objective"].to_numpy()
    cert = frame["certificate"].to_numpy()
    slack = 1e-9 * abs(fstar)
    # Every row: the objective is the numpy objective of the point, the dual value a
    # lower bound, and the certificate bounds the relative suboptimality (1/2 ||grad||^2
    # is the duality gap at the duals the point implies).
    assert P[-1] == pytest.approx(pb.objective(beta), rel=1e-12)
    assert np.all(D <= fstar + slack)
    rows = D > 0
    assert np.all(cert[rows] * D[rows] >= P[rows] - fstar - slack)
    # Newton: a few tens of steps on standardized data (badly scaled Huber: 173).
    assert frame["iteration"].iloc[-1] <= max_steps


@pytest.mark.parametrize("raw", [False, True], ids=["std", "raw"])
@pytest.mark.parametrize("loss, extras", SMOOTH)
def test_primal_newton_matches_cvxpy(loss, extras, raw):
    kind = "binary" if loss in ("svm2", "ssvm") else "regression"
    ds = _synthetic(kind, raw=raw, seed=11 + len(loss))
    pb = PlqProblem.build(ds, loss=loss, C=2.0, kappa=0.8, **extras)
    _check_smooth(pb, _reference(pb, rescale=raw), *_newton(pb), max_steps=400 if raw else 60)


@pytest.mark.requires_data("cadata")
def test_primal_newton_on_raw_cadata_matches_closed_form_ridge(real_data):
    ds = _real("cadata")
    pb = PlqProblem.build(ds, loss="mse", C=1.0)
    X = ds.X.toarray() if sp.issparse(ds.X) else ds.X
    beta = scipy.linalg.solve(np.eye(ds.p) + 2.0 * X.T @ X, 2.0 * X.T @ ds.y, assume_a="pos")
    _check_smooth(pb, pb.objective(beta), *_newton(pb))


@pytest.mark.requires_data("a9a")
def test_primal_newton_on_sparse_a9a_matches_dense_and_cvxpy(real_data):
    ds = _real("a9a", 3000)
    dense = Dataset("dense", ds.X.toarray(), ds.y, "binary", "test")
    fstar = None
    for data in (ds, dense):
        pb = PlqProblem.build(data, loss="svm2", C=1.0, intercept=True)
        fstar = _reference(pb) if fstar is None else fstar
        solver, run, frame = _newton(pb)
        _check_smooth(pb, fstar, solver, run, frame)
    assert not isinstance(solver._X, tuple)


@pytest.mark.parametrize(
    "settings, words",
    [
        ({"loss": "svm"}, "loss=svm has ReLU"),
        ({"loss": "svm2", "constraint": "nonnegative"}, "constraint=nonnegative"),
        ({"loss": "svm2", "l1": 0.5}, "l1 > 0"),
    ],
)
def test_primal_newton_refuses_what_it_does_not_solve(settings, words):
    from ermviz.errors import SettingError

    pb = PlqProblem.build(_synthetic("binary", raw=False), **settings)
    with pytest.raises(SettingError, match=words) as err:
        build_solver(pb, "primal-newton", "newton-exact", {}, 1e-6)
    assert "rehline or ipm" in str(err.value)


# ---- endings ---------------------------------------------------------------------------
@pytest.mark.requires_data("breast-cancer")
@pytest.mark.parametrize("constraint", ["monotone", "fairness"])
def test_unconverged_rehline_reports_its_best_certified_row(real_data, constraint):
    pb = PlqProblem.build(_real("breast-cancer"), loss="svm", constraint=constraint)
    fstar = _reference(pb, rescale=True)
    solver = build_solver(pb, "rehline", "cd", {"gap": "relative"}, 1e-9)
    assert "ipm" in scaling_notices(pb)[0]  # the warning names the method that copes
    run = Run(solver, Budget(tol=1e-9, max_time=1.5))
    run.run()
    frame = run.frame()
    assert run.status == "max_time"
    body, last = frame.iloc[:-1], frame.iloc[-1]
    # The best row: feasible first; among those, rows with a positive dual value (their
    # relative certificate is a bound; the start's gap / P is not) before the others.
    feasible = body[body["infeasibility"] <= solver.feas_tol]
    bound = feasible[feasible["dual_objective"] > 0]
    pool = bound if len(bound) else feasible
    row = pool.loc[pool["certificate"].idxmin()]
    # The final row is that row, or the final evaluation when it is better still (and
    # feasible); its objective is that of the point reported.
    assert last["certificate"] <= row["certificate"] * (1 + 1e-12)
    assert last["infeasibility"] <= solver.feas_tol
    if len(bound):
        assert last["dual_objective"] > 0
    if last["certificate"] == pytest.approx(row["certificate"], rel=1e-12):
        assert last["objective"] == pytest.approx(row["objective"], rel=1e-12)
    beta = solver.iterate()
    assert pb.objective(beta) == pytest.approx(last["objective"], rel=1e-12)
    assert pb.infeasibility(beta) <= solver.feas_tol
    if len(bound):  # ... and the certificate it reports is a true bound for that point
        assert last["certificate"] * last["dual_objective"] >= pb.objective(beta) - fstar - 1e-9


@pytest.mark.parametrize("method", list(METHODS))
def test_max_iter_binds_only_when_set(method):
    pb = _grid_problem("svm", "fairness", {}, raw=False)
    solver = build_solver(pb, method, METHODS[method], {"gap": "relative"}, 1e-14)
    run = Run(solver, Budget(tol=1e-14, max_iter=3, max_time=30))
    run.run()
    assert run.status == "max_iter"
    assert run.frame()["iteration"].iloc[-1] == 3
    assert Budget().max_iter == NO_ITER_LIMIT  # unset: only time (or tol) ends a run


# ---- wide data: the n-side Newton system ------------------------------------------------
# nonnegative and monotone add about d constraint duals and the l1 term 2 d: their dual is
# never the smaller one.
WIDE_GRID = [g for g in GRID if g[1] not in ("nonnegative", "monotone") and "l1" not in g[2]]


@pytest.mark.parametrize("loss, constraint, extras", WIDE_GRID)
def test_ipm_nside_form_on_wide_data(monkeypatch, loss, constraint, extras):
    import ermviz.families.plq.ipm as ipm_module

    monkeypatch.setattr(ipm_module, "NSIDE_MIN_D", 0)  # the m x m form whenever m < d
    kind = "binary" if loss in ("svm", "ssvm", "svm2") else "regression"
    ds = _synthetic(kind, raw=False, n=30, p=120, seed=3 + CONSTRAINTS.index(constraint))
    d = ds.p + (1 if extras.get("intercept") else 0)
    pb = PlqProblem.build(ds, **_settings(loss, constraint, d), **extras)
    solver, run, frame = _solve(pb, "ipm")
    assert solver.nside
    _check(pb, _reference(pb), solver, run, frame)


@pytest.mark.slow
def test_ipm_on_the_bundled_wide_set_matches_cvxpy():
    # sparse-synthetic: n = 1000, p = 5000 (CSR): the n-side form (a 5000 x 5000 factor per
    # Newton step took 3.8 s; the 1000 x 1000 one takes milliseconds).
    ds = load_dataset("sparse-synthetic", with_test=False)
    pb = PlqProblem.build(ds, loss="svm", constraint="fairness", sensitive=3)
    solver, run, frame = _solve(pb, "ipm")
    assert solver.nside
    _check(pb, _reference(pb), solver, run, frame)


def test_ipm_too_wide_for_both_forms_is_one_clear_error(monkeypatch):
    import ermviz.families.plq.ipm as ipm_module
    from ermviz.errors import SettingError

    monkeypatch.setattr(ipm_module, "MAX_DENSE_D", 50)
    monkeypatch.setattr(ipm_module, "NSIDE_MIN_D", 0)
    ds = _synthetic("binary", raw=False, n=30, p=120)
    # nonnegative: 120 constraint duals + 30 sample duals > 120 features: no n-side form.
    pb = PlqProblem.build(ds, loss="svm", constraint="nonnegative")
    with pytest.raises(SettingError) as err:
        build_solver(pb, "ipm", "newton", {}, 1e-6)
    msg = str(err.value)
    assert "120 x 120" in msg and "m = 150" in msg and "--method rehline" in msg
    assert "\n" not in msg
