"""LMOs of the feasible sets (solvers.lmo) against cvxpy + Clarabel and brute-force
vertex enumeration.

For every set and a spread of directions (random, integer-valued with ties, zero, all
equal, with zero entries), the atom the LMO writes must attain the true minimum of
``<g, s>`` over the set (solved independently), lie in the set, and be a vertex of the
polytopes (simplex / l1: one entry, box: entries in ``{lo, hi}``, K-sparse: exactly K
entries of magnitude tau), with sorted indices.
"""

from __future__ import annotations

import itertools

import cvxpy as cp
import numpy as np
import pytest

from solvers import lmo as sets  # the sets' LMOs (solvers.sets before issue 33)
from solvers.lmo import (
    SET_BOX,
    SET_CODES,
    SET_KSPARSE,
    SET_L1,
    SET_L2,
    SET_SIMPLEX,
    atom_dot,
    atom_equal,
    contains,
    lmo,
    max_nnz,
    set_params,
)

P = 7


def _directions(p: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = [
        rng.standard_normal(p),
        rng.integers(-2, 3, p).astype(float),  # many ties, some zeros
        np.zeros(p),
        np.full(p, 1.5),
        np.full(p, -0.5),
        np.where(rng.random(p) < 0.5, 0.0, rng.standard_normal(p)),
        np.array([(-1.0) ** j for j in range(p)]),  # all |g_j| equal, mixed signs
    ]
    return out


def _cvx_min(set_code: int, par: np.ndarray, g: np.ndarray) -> float:
    s = cp.Variable(g.size)
    r = par[sets.P_RADIUS]
    cons = {
        SET_SIMPLEX: lambda: [s >= 0, cp.sum(s) == 1],
        SET_L1: lambda: [cp.norm1(s) <= r],
        SET_L2: lambda: [cp.norm2(s) <= r],
        SET_BOX: lambda: [s >= par[sets.P_LO], s <= par[sets.P_HI]],
        SET_KSPARSE: lambda: [
            cp.norm_inf(s) <= r,
            cp.norm1(s) <= min(int(par[sets.P_K]), g.size) * r,
        ],
    }[set_code]()
    prob = cp.Problem(cp.Minimize(g @ s), cons)
    prob.solve(solver=cp.CLARABEL)
    assert prob.status == cp.OPTIMAL
    return float(prob.value)


CASES = [
    ("simplex", set_params()),
    ("l1", set_params(radius=2.5)),
    ("l2", set_params(radius=0.7)),
    ("box", set_params(lo=-0.4, hi=1.3)),
    ("box", set_params(lo=0.2, hi=0.9)),
    ("ksparse", set_params(radius=0.6, K=1)),
    ("ksparse", set_params(radius=0.6, K=3)),
    ("ksparse", set_params(radius=0.6, K=P)),
]


def _atom(set_code, par, g):
    m = max_nnz(set_code, g.size, int(par[sets.P_K]))
    idx = np.full(m, -1, dtype=np.int64)
    val = np.full(m, np.nan)
    nnz = lmo(set_code, par, g, idx, val)
    assert 1 <= nnz <= m
    dense = np.zeros(g.size)
    dense[idx[:nnz]] = val[:nnz]
    return idx, val, nnz, dense


@pytest.mark.parametrize(("name", "par"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_lmo_attains_the_minimum_and_is_a_vertex(name, par):
    code = SET_CODES[name]
    for seed in range(3):
        for g in _directions(P, seed):
            idx, val, nnz, s = _atom(code, par, g)
            assert np.all(np.diff(idx[:nnz]) > 0), "indices must be sorted and distinct"
            assert contains(code, par, s, tol=1e-12)
            ref = _cvx_min(code, par, g)
            assert g @ s <= ref + 1e-7 * max(1.0, abs(ref)), (g, s, ref)
            assert atom_dot(idx, val, nnz, g) == pytest.approx(g @ s, abs=1e-14)
            r = par[sets.P_RADIUS]
            if code == SET_SIMPLEX:
                assert nnz == 1 and val[0] == 1.0
            elif code == SET_L1:
                assert nnz == 1 and abs(val[0]) == r
            elif code == SET_L2:
                assert np.linalg.norm(s) == pytest.approx(r, rel=1e-12)
            elif code == SET_BOX:
                assert nnz == P
                assert np.all((s == par[sets.P_LO]) | (s == par[sets.P_HI]))
            else:
                K = int(par[sets.P_K])
                assert nnz == K and np.count_nonzero(s) == K
                assert np.all(np.abs(val[:nnz]) == r)


def test_ksparse_matches_brute_force_over_all_vertices():
    p, tau = 6, 0.8
    rng = np.random.default_rng(5)
    for K in range(1, p + 1):
        par = set_params(radius=tau, K=K)
        verts = []
        for supp in itertools.combinations(range(p), K):
            for signs in itertools.product((-tau, tau), repeat=K):
                v = np.zeros(p)
                v[list(supp)] = signs
                verts.append(v)
        V = np.array(verts)
        for g in [*_directions(p, 11), rng.integers(-1, 2, p).astype(float)]:
            _, _, _, s = _atom(SET_KSPARSE, par, g)
            assert g @ s == pytest.approx((V @ g).min(), abs=1e-12)


def test_degenerate_directions_pick_deterministic_vertices():
    p = 5
    # All-equal |g|: the K smallest indices; g_j = 0 gives +tau, g_j > 0 gives -tau.
    idx, val, nnz, _ = _atom(SET_KSPARSE, set_params(radius=2.0, K=3), np.zeros(p))
    assert list(idx[:nnz]) == [0, 1, 2] and list(val[:nnz]) == [2.0, 2.0, 2.0]
    idx, val, nnz, _ = _atom(SET_KSPARSE, set_params(radius=2.0, K=2), np.ones(p))
    assert list(idx[:nnz]) == [0, 1] and list(val[:nnz]) == [-2.0, -2.0]
    # Box: g_j = 0 takes lo.
    _, _, _, s = _atom(SET_BOX, set_params(lo=-1.0, hi=3.0), np.array([0.0, -1.0, 1.0, 0.0, 0.0]))
    assert list(s) == [-1.0, 3.0, -1.0, -1.0, -1.0]
    # l2 at g = 0: r e_0.
    _, _, _, s = _atom(SET_L2, set_params(radius=0.5), np.zeros(p))
    assert list(s) == [0.5, 0.0, 0.0, 0.0, 0.0]
    # Simplex / l1 ties: the first index.
    idx, _, _, _ = _atom(SET_SIMPLEX, set_params(), np.array([1.0, -2.0, -2.0, 0.0, 5.0]))
    assert idx[0] == 1
    idx, val, _, _ = _atom(SET_L1, set_params(radius=3.0), np.array([1.0, -2.0, 2.0, 0.0, 0.5]))
    assert idx[0] == 1 and val[0] == 3.0


def test_atom_equal_and_max_nnz():
    g = np.array([0.3, -1.0, 2.0, 0.0, -0.7, 1.1])
    par = set_params(radius=1.0, K=2)
    a = _atom(SET_KSPARSE, par, g)
    b = _atom(SET_KSPARSE, par, g.copy())
    c = _atom(SET_KSPARSE, par, -g)
    assert atom_equal(a[0], a[1], a[2], b[0], b[1], b[2])
    assert not atom_equal(a[0], a[1], a[2], c[0], c[1], c[2])
    d = _atom(SET_KSPARSE, set_params(radius=1.0, K=3), g)
    assert not atom_equal(a[0], a[1], a[2], d[0], d[1], d[2])
    assert max_nnz(SET_SIMPLEX, 9) == 1 and max_nnz(SET_L1, 9) == 1
    assert max_nnz(SET_KSPARSE, 9, 4) == 4 and max_nnz(SET_KSPARSE, 3, 4) == 3
    assert max_nnz(SET_BOX, 9) == 9 and max_nnz(SET_L2, 9) == 9
    with pytest.raises(ValueError):
        max_nnz(7, 9)


def test_the_old_module_name_still_works():
    import importlib

    import solvers.lmo

    with pytest.warns(DeprecationWarning, match="solvers.lmo"):
        old = importlib.reload(importlib.import_module("solvers.sets"))
    assert old.lmo is solvers.lmo.lmo and old.SET_CODES is solvers.lmo.SET_CODES
