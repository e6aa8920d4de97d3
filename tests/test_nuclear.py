"""The nuclear-norm LMO of :mod:`solvers.nuclear` against ``numpy.linalg.svd``.

* On random sparse matrices (tall, wide, and larger than one Lanczos cycle, so restarts
  happen) the returned pair matches numpy's top singular pair to the stated accuracy:
  ``sigma`` within ``lmo_tol`` relative, the vectors within Wedin's bound
  ``sin(angle) <= rnorm sqrt(2) / (sigma_1 - sigma_2)``, and the certificate bound
  ``sigma_ub`` is at least numpy's ``sigma_1`` and above it by at most the documented
  slack ``c rnorm``.
* Near-degenerate ``sigma_1 ~ sigma_2`` (gaps 1e-3 to 0), warm started on the *second*
  singular vector among others: the certified FW gap ``<G, X> + tau sigma_ub`` is still
  at least the exact gap computed from numpy's ``sigma_1``, and within 1e-6 relative of
  it when the LMO reports convergence.
* An unconverged call (a budget of 1-2 products, even started on the *second* singular
  vector) falls back to the rigorous Frobenius-tail bound, which is >= sigma_1.
* ``predict`` evaluates the factored iterate like the dense matrix does.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from solvers import nuclear as nu

TOL = 1e-9


def _sparse(m: int, n: int, density: float, seed: int):
    rng = np.random.default_rng(seed)
    mask = rng.random((m, n)) < density
    mask[0, 0] = True
    rows, cols = np.nonzero(mask)
    g = rng.standard_normal(rows.size)
    return rows.astype(np.int64), cols.astype(np.int64), g


def _dense(rows, cols, g, m, n):
    G = np.zeros((m, n))
    G[rows, cols] = g
    return G


def _lmo(rows, cols, g, m, n, v0=None, max_iters=500, tol=TOL, kmax=40):
    u = np.zeros(m)
    v = np.zeros(n) if v0 is None else v0.copy()
    Ub, Vb, B = nu.new_lmo_work(m, n, kmax)
    s, rnorm, ub, iters, conv = nu.top_singular_pair(
        rows, cols, g, u, v, Ub, Vb, B, tol, max_iters, 0
    )
    return SimpleNamespace(u=u, v=v, s=s, rnorm=rnorm, ub=ub, iters=iters, conv=conv)


@pytest.mark.parametrize(
    "m,n,density,seed",
    [(30, 25, 0.4, 0), (25, 30, 0.4, 1), (50, 80, 0.1, 2), (200, 150, 0.05, 3), (7, 300, 0.3, 4)],
)
def test_top_pair_matches_numpy_svd(m, n, density, seed):
    rows, cols, g = _sparse(m, n, density, seed)
    G = _dense(rows, cols, g, m, n)
    P, S, QT = np.linalg.svd(G)
    r = _lmo(rows, cols, g, m, n)
    u, v, s, rnorm, ub = r.u, r.v, r.s, r.rnorm, r.ub
    assert r.conv
    assert abs(np.linalg.norm(u) - 1) < 1e-12 and abs(np.linalg.norm(v) - 1) < 1e-12
    # The returned value is a Rayleigh quotient: below sigma_1, and within lmo_tol of it.
    assert s <= S[0] * (1 + 1e-14)
    assert S[0] - s <= TOL * S[0]
    # The certificate bound is above sigma_1, and above it by at most the documented slack.
    assert ub >= S[0]
    assert rnorm <= 10 * TOL * S[0]
    slack = nu.CLUSTER_SAFETY * np.sqrt(n) / nu.START_PERTURBATION * rnorm
    assert ub - S[0] <= slack + 1e-14 * S[0]
    # The reported residual is the residual of the returned pair.
    r1 = np.linalg.norm(G @ v - s * u)
    r2 = np.linalg.norm(G.T @ u - s * v)
    assert rnorm == pytest.approx(np.sqrt(0.5 * (r1 * r1 + r2 * r2)), rel=1e-6, abs=1e-15)
    # The vectors: Wedin's bound with numpy's gap sigma_1 - sigma_2.
    gap = S[0] - S[1]
    for got, ref in ((u, P[:, 0]), (v, QT[0])):
        sin = np.sqrt(max(0.0, 1.0 - float(got @ ref) ** 2))
        assert sin <= np.sqrt(2.0) * rnorm / gap + 1e-7
    # The LMO atom -tau u v^T minimizes <G, S>: <G, u v^T> = s (sign convention).
    assert float(u @ G @ v) == pytest.approx(s, rel=1e-12)


@pytest.mark.parametrize("split", [1e-3, 1e-7, 1e-10, 1e-13, 0.0])
def test_near_degenerate_top_pair_still_certifies(split):
    # n = 100 > the Krylov dimension 40: no cycle spans the whole space, so the certificate
    # comes from the residual bound (converged) or the Frobenius-tail bound (not).
    rng = np.random.default_rng(11)
    m, n, tau = 120, 100, 3.0
    Qm, _ = np.linalg.qr(rng.standard_normal((m, n)))
    Qn, _ = np.linalg.qr(rng.standard_normal((n, n)))
    sv = np.concatenate([[1.0, 1.0 - split], np.linspace(0.9, 0.1, n - 2)])
    G = (Qm * sv) @ Qn.T
    rows, cols = (a.ravel().astype(np.int64) for a in np.indices((m, n)))
    g = G[rows, cols]
    sigma1 = np.linalg.svd(G, compute_uv=False)[0]
    # A feasible X (inside the ball) and the exact FW gap from numpy's sigma_1.
    X = rng.standard_normal((m, n))
    X *= 0.7 * tau / np.linalg.svd(X, compute_uv=False).sum()
    exact_gap = float(np.sum(G * X)) + tau * sigma1
    converged = 0
    # Warm starts: none, exactly the second singular vector (the adversarial one: an old
    # top vector that is now second), and a mix.
    for v0 in (None, Qn[:, 1].copy(), Qn[:, 0] + Qn[:, 1], Qn[:, 1] + 1e-6 * Qn[:, 0]):
        r = _lmo(rows, cols, g, m, n, v0=v0)
        assert r.ub >= sigma1
        assert r.s <= sigma1 * (1 + 1e-14)
        certified_gap = float(np.sum(G * X)) + tau * r.ub
        assert certified_gap >= exact_gap
        if r.conv:
            converged += 1
            assert r.s >= sigma1 * (1 - 1e-6)
            assert certified_gap - exact_gap <= 1e-6 * tau * sigma1
    assert converged >= 1 if split != 1e-7 else True


def test_unconverged_call_uses_the_rigorous_bound():
    m, n = 200, 150
    rows, cols, g = _sparse(m, n, 0.05, 5)
    G = _dense(rows, cols, g, m, n)
    _, S, QT = np.linalg.svd(G)
    fro = np.linalg.norm(G)
    for budget, v0 in ((1, None), (2, QT[1].copy()), (1, QT[1].copy())):
        r = _lmo(rows, cols, g, m, n, v0=v0, max_iters=budget)
        assert not r.conv
        assert r.s <= S[0] * (1 + 1e-14)
        assert S[0] <= r.ub <= fro * (1 + 1e-12)


def test_full_krylov_space_certifies_without_the_residual_assumption():
    # kmax = min(m, n): the Krylov space is the whole row space, so the rigorous bound
    # alone is tight (tail ~ rounding) even when the residual test is not asked for.
    m, n = 30, 12
    rows, cols, g = _sparse(m, n, 0.5, 6)
    sigma1 = np.linalg.svd(_dense(rows, cols, g, m, n), compute_uv=False)[0]
    r = _lmo(rows, cols, g, m, n, tol=1e-300, max_iters=n + 1)
    assert not r.conv or r.iters >= n  # converged only through an invariant Krylov space
    assert r.ub >= sigma1
    assert r.ub - sigma1 <= 1e-6 * sigma1


def test_zero_gradient_is_handled():
    rows, cols, _ = _sparse(10, 8, 0.5, 7)
    r = _lmo(rows, cols, np.zeros(rows.size), 10, 8)
    assert r.conv and r.s == 0.0 and r.ub == 0.0 and r.iters == 0
    assert np.linalg.norm(r.u) == 1.0 and np.linalg.norm(r.v) == 1.0


def test_predict_matches_the_dense_iterate():
    rng = np.random.default_rng(8)
    m, n, cap, tau = 20, 15, 6, 2.5
    U = rng.standard_normal((cap, m))
    V = rng.standard_normal((cap, n))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    mu = np.array([0.3, 0.0, 0.2, 0.5, 0.0, 0.0])
    X = -tau * (U.T * mu) @ V
    rows = rng.integers(0, m, 50).astype(np.int64)
    cols = rng.integers(0, n, 50).astype(np.int64)
    out = np.empty(50)
    nu.predict(U, V, mu, tau, rows, cols, out)
    np.testing.assert_allclose(out, X[rows, cols], rtol=1e-13, atol=1e-15)
    assert nu.frobenius_sq(U, V, mu, tau) == pytest.approx(np.sum(X * X), rel=1e-12)
