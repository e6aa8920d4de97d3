"""Matrix completion over a nuclear-norm ball (:mod:`ermviz.families.frank_wolfe.completion`).

Instance: ``lowrank_ratings(m=30, n=25, rank=2, density=0.4, noise=0.1, seed=1)`` (237
training entries, 59 held out). The convergence tests use ``tau = 0.1 x`` the default
radius, where the constraint is active and the solution has rank 2 (``sigma_1(G*) ~
sigma_2(G*)``). There every method with every tested step rule (exact, diminishing,
short, armijo, adaptive) reaches a certified gap of 1e-6 in 100-9300 iterations
(measured; < 2 s each). At the default radius the solution has
much higher rank and AFW / PFW / BPCG are sublinear too (the nuclear ball is not a
polytope: its optimal face is a spectrahedron; measured: gap ~5e-5 after 3000 iterations
for all four methods), so the held-out RMSE test runs a fixed budget there instead.

What is checked, against independent references:

* every (method, step rule) pair stops converged with certificate <= 1e-6; the recorded
  certificate is >= the exact FW gap computed with numpy's SVD at the same iterate; the
  recorded objective equals the numpy objective of ``iterate()``; the iterate is in the
  ball; and the objective matches a cvxpy solve (``cp.normNuc(X) <= tau``, CLARABEL):
  ``f_cvx >= f - gap - 1e-7`` and ``f <= f_cvx + 1e-6 + 1e-7``;
* along a run (checkpoints every 20 iterations) the recorded certificate is >= the exact
  gap, for a converging and a sublinear method;
* at the default radius the held-out RMSE beats predicting the training mean by 25%;
* a feature-matrix dataset (bundled: the sparse binary sparse-synthetic, CSR as a1a, and
  the dense regression set sk-diabetes) raises the one-line DataError; a triplet-form
  Dataset gives the same problem as the RatingsData;
* active-set re-factoring keeps ``X`` and exact convex weights.
"""

from __future__ import annotations

import numpy as np
import pytest

from ermviz.data import load_dataset
from ermviz.data.dataset import Dataset
from ermviz.data.lowrank import RatingsData, triplets_xy
from ermviz.errors import DataError, SettingError
from ermviz.families.frank_wolfe.completion import (
    NUCLEAR_METHODS,
    NUCLEAR_STEP_RULES,
    MatrixCompletion,
    NuclearFWSolver,
    compress_atoms,
    lowrank_ratings,
)
from solvers.tags import STATUS_CONVERGED, STATUS_MAX_ITER

TOL = 1e-6


@pytest.fixture(scope="module")
def data() -> RatingsData:
    return lowrank_ratings(m=30, n=25, rank=2, density=0.4, noise=0.1, seed=1)


@pytest.fixture(scope="module")
def problem(data) -> MatrixCompletion:
    default = MatrixCompletion.build(data).radius
    return MatrixCompletion.build(data, radius=0.1 * default)


@pytest.fixture(scope="module")
def cvx_objective(problem) -> float:
    import cvxpy as cp

    X = cp.Variable((problem.m, problem.n))
    r = X[problem.rows, problem.cols] - problem.vals
    cvx = cp.Problem(
        cp.Minimize(cp.sum_squares(r) / (2 * problem.n_obs)), [cp.normNuc(X) <= problem.radius]
    )
    value = cvx.solve(solver=cp.CLARABEL)
    assert cvx.status == cp.OPTIMAL
    # CLARABEL's point is feasible and near-optimal to ~1e-9 by numpy's exact FW gap.
    Xv = np.asarray(X.value)
    assert np.linalg.svd(Xv, compute_uv=False).sum() <= problem.radius * (1 + 1e-7)
    assert problem.certificate(Xv.ravel()) <= 1e-7
    return float(value)


def _nuclear_norm(pb: MatrixCompletion, x: np.ndarray) -> float:
    return float(np.linalg.svd(x.reshape(pb.m, pb.n), compute_uv=False).sum())


@pytest.mark.parametrize("step", NUCLEAR_STEP_RULES)
@pytest.mark.parametrize("method", NUCLEAR_METHODS)
def test_every_method_reaches_the_certificate_and_the_cvxpy_objective(
    problem, cvx_objective, method, step
):
    solver = NuclearFWSolver(problem, method, step, {}, TOL)
    rows, status = solver.advance(20_000, 20_000)
    assert status == STATUS_CONVERGED
    last = dict(zip(solver.columns, rows[-1], strict=True))
    assert last["certificate"] <= TOL
    x = solver.iterate()
    exact_gap = problem.certificate(x)
    assert last["certificate"] >= exact_gap - 1e-14
    assert last["certificate"] - exact_gap <= 1e-8  # the LMO slack is small
    f = problem.objective(x)
    assert last["objective"] == pytest.approx(f, rel=1e-11)
    assert _nuclear_norm(problem, x) <= problem.radius * (1 + 1e-9)
    assert cvx_objective >= f - last["certificate"] - 1e-7
    assert f <= cvx_objective + TOL + 1e-7
    # Work counters: one LMO call per row, several Lanczos products per call.
    assert last["lmo_calls"] == last["iteration"] + 1
    assert last["lmo_iters"] >= 2 * last["lmo_calls"]
    np.testing.assert_allclose(
        solver.predict(problem.rows, problem.cols),
        x.reshape(problem.m, problem.n)[problem.rows, problem.cols],
        rtol=1e-12,
        atol=1e-14,
    )


@pytest.mark.parametrize("method,step", [("pfw", "exact"), ("fw", "diminishing")])
def test_certificate_bounds_the_exact_gap_along_the_run(problem, method, step):
    solver = NuclearFWSolver(problem, method, step, {}, 0.0)
    for k in range(0, 201, 20):
        rows, status = solver.advance(1000, k)
        assert status == STATUS_MAX_ITER and rows[-1, 0] == k
        x = solver.iterate()
        assert rows[-1, 2] >= problem.certificate(x) - 1e-14
        assert rows[-1, 1] == pytest.approx(problem.objective(x), rel=1e-11)


def test_heldout_rmse_beats_the_training_mean(data):
    pb = MatrixCompletion.build(data)
    assert pb.radius == pytest.approx(
        np.linalg.norm(pb.vals) * np.sqrt(pb.m * pb.n / pb.n_obs), rel=1e-12
    )
    solver = NuclearFWSolver(pb, "afw", "exact", {}, 1e-5)
    solver.advance(1500, 1500)
    rmse = pb.test_metrics(solver.iterate())["rmse"]
    baseline = pb.baseline_rmse()
    assert baseline == pytest.approx(
        np.sqrt(np.mean((data.test_vals - data.vals.mean()) ** 2)), rel=1e-12
    )
    assert rmse < 0.75 * baseline


@pytest.mark.parametrize("name", ["sparse-synthetic", "sk-diabetes"])
def test_a_feature_matrix_is_refused_with_one_line(name):
    ds = load_dataset(name)
    with pytest.raises(DataError) as err:
        MatrixCompletion.build(ds)
    assert str(err.value) == (
        f"matrix-completion needs a ratings matrix dataset (rows, cols, values); {name} is "
        "a feature matrix"
    )


def test_a_triplet_dataset_is_the_same_problem(data):
    X, y = triplets_xy(data.rows, data.cols, data.vals)
    Xt, yt = triplets_xy(data.test_rows, data.test_cols, data.test_vals)
    ds = Dataset("ratings", X, y, "regression", "memory", X_test=Xt, y_test=yt)
    a = MatrixCompletion.build(ds, radius=3.0)
    b = MatrixCompletion.build(data, radius=3.0)
    # The shape is inferred from the largest indices (entries in the last row and column).
    assert (a.m, a.n) == (b.m, b.n) == data.shape
    x = np.random.default_rng(0).standard_normal(a.dim)
    assert a.objective(x) == b.objective(x)
    assert a.test_metrics(x) == b.test_metrics(x)
    # Without a test split the problem holds out a seeded 20% of the entries.
    c = MatrixCompletion.build(Dataset("ratings", X, y, "regression", "memory"))
    assert c.data.n_test == round(0.2 * len(y)) and c.n_obs == len(y) - c.data.n_test
    # Non-integer indices (a standardized copy, say) are not a ratings matrix.
    with pytest.raises(DataError, match="ratings matrix"):
        MatrixCompletion.build(Dataset("bad", X + 0.5, y, "regression", "memory"))


def test_bad_settings_are_refused(data):
    with pytest.raises(SettingError, match="radius"):
        MatrixCompletion.build(data, radius=-1.0)
    pb = MatrixCompletion.build(data, radius=1.0)
    with pytest.raises(SettingError):
        NuclearFWSolver(pb, "nope", "exact", {}, 1e-6)
    with pytest.raises(SettingError):
        NuclearFWSolver(pb, "fw", "golden-section", {}, 1e-6)


def test_compress_atoms_keeps_x_and_convex_weights():
    rng = np.random.default_rng(3)
    m, n, cap = 12, 9, 20
    base_u = rng.standard_normal((3, m))
    base_v = rng.standard_normal((3, n))
    # 15 atoms living in a rank-3 subspace: re-factoring needs at most 4 slots.
    U = np.zeros((cap, m))
    V = np.zeros((cap, n))
    for k in range(15):
        a, b = rng.standard_normal(3) @ base_u, rng.standard_normal(3) @ base_v
        U[k], V[k] = a / np.linalg.norm(a), b / np.linalg.norm(b)
    mu = np.zeros(cap)
    mu[:15] = rng.random(15)
    mu /= mu.sum()
    X = (U.T * mu) @ V
    count = compress_atoms(U, V, mu)
    assert count <= 4
    assert np.all(mu >= 0) and mu.sum() == pytest.approx(1.0, abs=1e-15)
    assert np.count_nonzero(mu) == count
    np.testing.assert_allclose(np.linalg.norm(U[:count], axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose((U.T * mu) @ V, X, atol=1e-14)


def test_a_full_rank_active_set_grows(data, monkeypatch):
    # Two slots to start with: vanilla FW at the default radius adds independent atoms,
    # so re-factoring cannot free slots and the arrays must grow (twice or more).
    from ermviz.families.frank_wolfe import completion

    monkeypatch.setattr(completion, "INITIAL_ATOMS", 2)
    pb = MatrixCompletion.build(data)
    solver = NuclearFWSolver(pb, "fw", "exact", {}, 0.0)
    rows, status = solver.advance(100, 60)
    assert status == STATUS_MAX_ITER and rows.shape[0] == 61 and rows[-1, 0] == 60
    assert solver.compressions >= 2 and solver.mu.shape[0] >= 8
    x = solver.iterate()
    assert rows[-1, 1] == pytest.approx(pb.objective(x), rel=1e-11)
    assert rows[-1, 2] >= pb.certificate(x) - 1e-14
    assert np.all(np.diff(rows[:, 1]) <= 1e-15)  # exact line search never increases f
