"""The small pieces of solvers/ against numpy and scipy: matrix primitives, oracles,
active-set updates and step rules."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from numba import njit
from scipy.optimize import minimize_scalar

from solvers import active_set, fw, lmo, steps
from solvers.linalg import (
    as_kernel_matrix,
    matvec,
    n_rows,
    rmatvec,
    row_axpy,
    row_dot,
    row_dot_long,
    row_row_dot,
)


@njit(cache=True)
def _primitives(M, v, r, i, j, a):
    rows = np.empty(r.shape[0])
    cols = np.empty(v.shape[0])
    matvec(M, v, rows)
    rmatvec(M, r, cols)
    acc = v.copy()
    row_axpy(M, i, a, acc)
    return rows, cols, acc, row_dot(M, i, v), row_row_dot(M, i, j)


@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.slow
def test_matrix_primitives_match_numpy(fmt):
    rng = np.random.default_rng(0)
    A = sp.random(40, 17, density=0.3, random_state=1, format="csr")
    dense = A.toarray()
    M = as_kernel_matrix(A if fmt == "csr" else dense)
    v = rng.standard_normal(17)
    r = rng.standard_normal(40)
    rows, cols, acc, d, rr = _primitives(M, v, r, 3, 11, 0.7)
    np.testing.assert_allclose(rows, dense @ v, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(cols, dense.T @ r, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(acc, v + 0.7 * dense[3], rtol=1e-13)
    assert d == pytest.approx(dense[3] @ v, rel=1e-13, abs=1e-14)
    assert rr == pytest.approx(dense[3] @ dense[11], rel=1e-13, abs=1e-14)


@njit(cache=True)
def _long_dots(M, v):
    out = np.empty((2, n_rows(M)))
    for i in range(n_rows(M)):
        out[0, i] = row_dot(M, i, v)
        out[1, i] = row_dot_long(M, i, v)
    return out


@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_row_dot_long_matches_row_dot(fmt):
    # Rows long enough for the vector lanes and their remainder loop; an empty row.
    rng = np.random.default_rng(3)
    A = sp.random(5, 1003, density=0.4, random_state=4, format="lil")
    A[2, :] = 0.0
    A = A.tocsr()
    dense = A.toarray()
    M = as_kernel_matrix(A if fmt == "csr" else dense)
    v = rng.standard_normal(1003)
    plain, long = _long_dots(M, v)
    np.testing.assert_allclose(long, dense @ v, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(long, plain, rtol=1e-12, atol=1e-13)
    assert long[2] == 0.0


def test_oracles_agree_with_brute_force():
    rng = np.random.default_rng(2)
    g = rng.standard_normal(9)
    mu = np.array([0.0, 0.3, 0.0, 0.2, 0.5, 0.0, 0.0, 0.0, 0.0])
    assert lmo.simplex_lmo(g) == int(np.argmin(g))
    active = np.flatnonzero(mu > 0)
    assert lmo.simplex_away(g, mu) == active[np.argmax(g[active])]
    # l1 ball: atoms 2j = +r e_j, 2j+1 = -r e_j; brute force over all 2p atoms.
    p, r = 5, 2.5
    atoms = np.zeros((2 * p, p))
    for j in range(p):
        atoms[2 * j, j], atoms[2 * j + 1, j] = r, -r
    gl = rng.standard_normal(p)
    assert lmo.l1_lmo(gl, r) == int(np.argmin(atoms @ gl))
    mul = np.zeros(2 * p)
    mul[[1, 4, 7]] = [0.2, 0.5, 0.3]
    act = np.flatnonzero(mul > 0)
    assert lmo.l1_away(gl, mul, r) == act[np.argmax(atoms[act] @ gl)]


def test_active_set_updates_keep_convex_weights():
    mu = np.array([0.5, 0.3, 0.2, 0.0])
    x = np.eye(4)  # simplex: weights are the point
    active_set.fw_update(mu, 3, 0.25)
    np.testing.assert_allclose(mu, [0.375, 0.225, 0.15, 0.25])
    gmax = active_set.away_gamma_max(mu[1])
    assert gmax == pytest.approx(0.225 / 0.775)
    dropped = active_set.away_update(mu, 1, gmax, gmax)
    assert dropped and mu[1] == 0.0 and mu.sum() == pytest.approx(1.0)
    dropped = active_set.pairwise_update(mu, 0, 2, mu[2], mu[2])
    assert dropped and mu[2] == 0.0 and mu.sum() == pytest.approx(1.0)
    assert active_set.active_count(mu) == 2
    assert np.all(mu @ x >= 0)


def _logistic_phi(z, zd, y, beta):
    return np.mean(np.logaddexp(0.0, -y * (z + beta * zd)))


def test_exact_line_search_logistic_matches_scipy():
    rng = np.random.default_rng(3)
    n = 200
    y = rng.choice([-1.0, 1.0], n)
    z = rng.standard_normal(n)
    zd = 3.0 * rng.standard_normal(n) + 2.0 * y  # a descent direction on average
    eps = 1e-7
    gd = (_logistic_phi(z, zd, y, eps) - _logistic_phi(z, zd, y, -eps)) / (2 * eps)
    assert gd < 0
    beta, evals = steps.exact_line_search(steps.LINE_LOGISTIC, gd, 0.0, z, zd, y, 1.0)
    ref = minimize_scalar(
        lambda b: _logistic_phi(z, zd, y, b),
        bounds=(0, 1),
        method="bounded",
        options={"xatol": 1e-12},
    )
    assert beta == pytest.approx(ref.x, abs=1e-7)
    assert evals >= 2
    # The loss/slope pass agrees with numpy to 1e-14 relative.
    r = np.empty(n)
    f = steps.logistic_pass(y, z, 1.0 / n, r)
    assert f == pytest.approx(np.mean(np.logaddexp(0.0, -y * z)), rel=1e-14)
    np.testing.assert_allclose(r, -y / (1 + np.exp(y * z)) / n, rtol=1e-13)


def test_exact_line_search_quadratic_closed_form():
    beta, _ = steps.exact_line_search(
        steps.LINE_QUADRATIC, -2.0, 4.0, np.zeros(0), np.zeros(0), np.zeros(0), 1.0
    )
    assert beta == pytest.approx(0.25)
    beta, _ = steps.exact_line_search(
        steps.LINE_QUADRATIC, -2.0, 0.5, np.zeros(0), np.zeros(0), np.zeros(0), 1.0
    )
    assert beta == 1.0  # minimizer 2.0 clipped to gamma_max


def _quad_step(rule, k=0, gd=-1.0, curv=2.0, dnorm2=1.0, gmax=1.0, start=1.0, L=8.0):
    params = steps.default_step_params(lipschitz=L)
    lstate = np.array([L])
    e = np.zeros(0)
    return steps.step_size(
        rule, k, gd, dnorm2, gmax, start, steps.LINE_QUADRATIC, 1.0, curv, e, e, e, params, lstate
    ), lstate[0]


def test_step_rules_on_a_quadratic():
    # phi(b) = 1 - b + 2 b^2: minimizer 0.25.
    (g, _), _ = _quad_step(steps.RULE_DIMINISHING, k=3)
    assert g == pytest.approx(2.0 / 5.0)
    (g, _), _ = _quad_step(steps.RULE_NONCONVEX, k=3)
    assert g == pytest.approx(0.5)
    (g, _), _ = _quad_step(steps.RULE_SHORT, L=8.0)
    assert g == pytest.approx(1.0 / 8.0)
    # Armijo from 1 halves until phi(b) <= 1 - 0.01 b: accepts 0.25 after 3 trials... check
    # against a direct search over the same sequence.
    (g, evals), _ = _quad_step(steps.RULE_ARMIJO)
    seq = [0.5**m for m in range(60)]
    first = next(b for b in seq if 1 - b + 2 * b * b <= 1 - 0.01 * b)
    assert g == first and evals == seq.index(first) + 1
    # Adaptive: the accepted step satisfies the quadratic upper bound with the final M.
    (g, _), M = _quad_step(steps.RULE_ADAPTIVE, L=0.1)
    assert 1 - g + 2 * g * g <= 1 - g + 0.5 * g * g * M + 1e-15
    assert M >= 4.0 * 0.9  # the true curvature of phi is 4


def test_vectorizable_exp_matches_libm():
    from numba import njit as _njit

    @_njit
    def many(t):
        out = np.empty_like(t)
        for i in range(t.shape[0]):
            out[i] = steps.exp_nonpositive(t[i])
        return out

    t = -np.concatenate([np.linspace(0, 708, 200_001), [1e-300, 0.5 * np.log(2), 37.0]])
    np.testing.assert_allclose(many(t), np.exp(t), rtol=4e-16, atol=0)
    assert 0 < many(np.array([-800.0]))[0] <= np.exp(-708.0) * (1 + 1e-15)  # clamped, finite


def test_vectorizable_log1p_matches_numpy():
    from numba import njit as _njit

    @_njit
    def many(e):
        out = np.empty_like(e)
        for i in range(e.shape[0]):
            out[i] = steps.log1p_unit(e[i])
        return out

    e = np.concatenate([np.linspace(0, 1, 100_001), [1e-300, 1e-17, 5e-9]])
    np.testing.assert_allclose(many(e), np.log1p(e), rtol=6e-16, atol=0)


@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_gram_cache_columns_and_eviction_match_scipy(fmt):
    """Cached Gram columns are ``Z^T z_j`` (scipy); the least recently used slot goes."""
    from solvers.gram_cache import cached_column, new_gram_cache

    rng = np.random.default_rng(3)
    A = sp.random(30, 9, density=0.4, random_state=2, format="csr")
    y = np.where(rng.random(30) < 0.5, -1.0, 1.0)
    K = (sp.diags(y) @ A @ A.T @ sp.diags(y)).toarray()
    M = as_kernel_matrix(A if fmt == "csr" else A.toarray())
    cols, slot_of, atom_of, stamp = new_gram_cache(30, 3 * 30 * 8 / 2**20)
    assert cols.shape == (3, 30)
    xj = np.zeros(9)
    order = [4, 7, 4, 11, 20, 4, 7]  # 11 evicts nothing, 20 evicts 7 (LRU), 7 evicts 11
    misses = []
    for now, j in enumerate(order, start=1):
        slot, miss = cached_column(M, y, j, now, cols, slot_of, atom_of, stamp, xj)
        misses.append(miss)
        np.testing.assert_allclose(cols[slot], K[:, j], rtol=1e-13, atol=1e-13)
        assert np.all(xj == 0.0)
    assert misses == [1, 1, 0, 1, 1, 0, 1]
    assert sorted(atom_of.tolist()) == [4, 7, 20] and slot_of[11] == -1
    assert new_gram_cache(30, 1e-6)[0].shape[0] == 0  # < 2 slots: no cache


@pytest.mark.parametrize("method", ["fw", "afw", "pfw"])
def test_svm_dual_gradient_kept_from_cached_columns(method):
    """With a two-slot cache (an eviction on most steps) the kept gradient is exact:
    every row's objective and FW gap equal a from-scratch evaluation (numpy)."""
    from ermviz.data import load_dataset
    from ermviz.registry import build_problem, build_solver

    pb = build_problem("svm-dual", load_dataset("wdbc"), C=1.0)
    two_slots = 2 * pb.n * 8 / 2**20
    solver = build_solver(pb, method, "exact", {"gram_cache_mb": two_slots}, 1e-12)
    assert solver._cache[0].shape[0] == 2
    for _ in range(300):
        x = solver.iterate()
        rows, _ = solver.advance(1, 10**9)
        assert rows[0, 1] == pytest.approx(pb.objective(x), rel=1e-11)
        assert rows[0, 2] == pytest.approx(pb.certificate(x), rel=1e-8, abs=1e-12)
    assert solver.istate[fw.I_PASSES] >= 10  # columns were recomputed (misses)
