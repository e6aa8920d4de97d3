"""Feasible sets of the generic Frank-Wolfe kernels, described by their atoms.

A set is an integer code (``SET_*``) and a float64 parameter vector ``set_par``
(:func:`set_params`). An *atom* is a sparse vector ``(idx[:nnz], val[:nnz])`` with
``idx`` sorted ascending and ``nnz <= max_nnz(set, p, K)``; the LMO writes one:

* ``SET_SIMPLEX``: unit simplex ``{x >= 0, sum x = 1}``; vertices ``e_j`` (nnz 1).
* ``SET_L1``: l1 ball of radius ``r``; vertices ``+-r e_j`` (nnz 1).
* ``SET_L2``: l2 ball of radius ``r`` (not a polytope); ``-r g / ||g||`` (dense).
* ``SET_BOX``: ``[lo, hi]^p``; vertices with entries in ``{lo, hi}`` (dense, nnz p).
* ``SET_KSPARSE``: the K-sparse polytope of radius ``tau``, ``conv{x : exactly K
  nonzeros, each +-tau}`` ``= {||x||_1 <= K tau} cap {||x||_inf <= tau}`` (nnz K).

The LMOs are the closed forms of Jaggi (2013), "Revisiting Frank-Wolfe", ICML (simplex,
l1, l2, box) and of Combettes & Pokutta (2021), "Complexity of linear minimization and
projection on some sets", Oper. Res. Lett. (K-sparse polytope: the K largest ``|g_j|``).
Degenerate directions still get a true minimizer and, on polytopes, a vertex, chosen
deterministically (ties go to the smallest index; ``g_j = 0`` gives ``+tau`` / ``lo``), so
equal gradients give equal atoms and :func:`atom_equal` can find an atom already active.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

SET_SIMPLEX = 0
SET_L1 = 1
SET_L2 = 2
SET_BOX = 3
SET_KSPARSE = 4
SET_CODES = {
    "simplex": SET_SIMPLEX,
    "l1": SET_L1,
    "l2": SET_L2,
    "box": SET_BOX,
    "ksparse": SET_KSPARSE,
}

# Layout of set_par.
P_RADIUS = 0  # l1 / l2 radius r; K-sparse tau
P_LO = 1  # box lower bound
P_HI = 2  # box upper bound
P_K = 3  # K-sparse: number of nonzeros per vertex
N_SET_PARAMS = 4


def set_params(radius: float = 1.0, lo: float = -1.0, hi: float = 1.0, K: int = 1) -> np.ndarray:
    """Pack set parameters in the layout the kernels read."""
    par = np.empty(N_SET_PARAMS)
    par[P_RADIUS] = radius
    par[P_LO] = lo
    par[P_HI] = hi
    par[P_K] = K
    return par


def max_nnz(set_code: int, p: int, K: int = 1) -> int:
    """Largest number of stored entries of an atom of the set in ``R^p``."""
    if set_code in (SET_SIMPLEX, SET_L1):
        return 1
    if set_code == SET_KSPARSE:
        return max(1, min(int(K), p))
    if set_code in (SET_L2, SET_BOX):
        return p
    raise ValueError(f"unknown set code {set_code}; expected one of {sorted(SET_CODES.values())}")


def contains(set_code: int, set_par: np.ndarray, x: np.ndarray, tol: float = 1e-9) -> bool:
    """Whether ``x`` lies in the set (to ``tol``, scaled by the set's size)."""
    x = np.asarray(x, dtype=np.float64)
    r = set_par[P_RADIUS]
    if set_code == SET_SIMPLEX:
        return bool(x.min() >= -tol and abs(x.sum() - 1.0) <= tol * max(1, x.size))
    if set_code == SET_L1:
        return bool(np.abs(x).sum() <= r * (1.0 + tol))
    if set_code == SET_L2:
        return bool(np.linalg.norm(x) <= r * (1.0 + tol))
    if set_code == SET_BOX:
        lo, hi = set_par[P_LO], set_par[P_HI]
        slack = tol * max(1.0, abs(lo), abs(hi))
        return bool(x.min() >= lo - slack and x.max() <= hi + slack)
    if set_code == SET_KSPARSE:
        K = min(int(set_par[P_K]), x.size)
        return bool(np.abs(x).max() <= r * (1.0 + tol) and np.abs(x).sum() <= K * r * (1.0 + tol))
    raise ValueError(f"unknown set code {set_code}")


@njit(cache=True, inline="always")
def _better(g, i, j):
    """K-sparse selection order: ``|g_i|`` larger, ties to the smaller index."""
    a = abs(g[i])
    b = abs(g[j])
    return a > b or (a == b and i < j)


@njit(cache=True)
def _sift_down(g, heap, start, m):
    """Restore the heap below ``start``: ``heap[:m]`` with the *worst* entry at the root."""
    i = start
    while True:
        c = 2 * i + 1
        if c >= m:
            return
        if c + 1 < m and _better(g, heap[c], heap[c + 1]):
            c += 1  # the worse child
        if _better(g, heap[i], heap[c]):
            tmp = heap[i]
            heap[i] = heap[c]
            heap[c] = tmp
            i = c
        else:
            return


@njit(cache=True)
def _ksparse_select(g, K, out_idx):
    """The ``K`` best coordinates by :func:`_better` into ``out_idx[:K]``, sorted.

    A heap of size K holding the worst selected entry at its root: O(p log K)."""
    p = g.shape[0]
    for j in range(K):
        out_idx[j] = j
    for j in range(K // 2 - 1, -1, -1):
        _sift_down(g, out_idx, j, K)
    for j in range(K, p):
        if _better(g, j, out_idx[0]):
            out_idx[0] = j
            _sift_down(g, out_idx, 0, K)
    # Insertion sort of the K indices (K is small next to p in the typical use).
    for a in range(1, K):
        v = out_idx[a]
        b = a - 1
        while b >= 0 and out_idx[b] > v:
            out_idx[b + 1] = out_idx[b]
            b -= 1
        out_idx[b + 1] = v


@njit(cache=True)
def lmo(set_code, set_par, g, out_idx, out_val):
    """Write the atom ``s`` minimizing ``<g, s>`` over the set; return its ``nnz``.

    ``out_idx`` (int64) and ``out_val`` (float64) need room for ``max_nnz`` entries;
    ``out_idx[:nnz]`` comes back sorted ascending.
    """
    p = g.shape[0]
    r = set_par[P_RADIUS]
    if set_code == SET_SIMPLEX or set_code == SET_L1:
        j = 0
        if set_code == SET_SIMPLEX:
            best = g[0]
            for c in range(1, p):
                if g[c] < best:
                    best = g[c]
                    j = c
            out_val[0] = 1.0
        else:
            best = abs(g[0])
            for c in range(1, p):
                if abs(g[c]) > best:
                    best = abs(g[c])
                    j = c
            out_val[0] = -r if g[j] > 0.0 else r
        out_idx[0] = j
        return 1
    if set_code == SET_BOX:
        lo = set_par[P_LO]
        hi = set_par[P_HI]
        for j in range(p):
            out_idx[j] = j
            out_val[j] = hi if g[j] < 0.0 else lo
        return p
    if set_code == SET_L2:
        nrm = 0.0
        for j in range(p):
            nrm += g[j] * g[j]
        nrm = math.sqrt(nrm)
        for j in range(p):
            out_idx[j] = j
            out_val[j] = -r * g[j] / nrm if nrm > 0.0 else 0.0
        if nrm == 0.0:
            out_val[0] = r  # any point of the sphere minimizes <0, s>
        return p
    # SET_KSPARSE
    K = min(max(int(set_par[P_K]), 1), p)
    _ksparse_select(g, K, out_idx)
    for a in range(K):
        out_val[a] = -r if g[out_idx[a]] > 0.0 else r
    return K


@njit(cache=True, inline="always")
def atom_dot(idx, val, nnz, v):
    """``<atom, v>`` for the atom ``(idx[:nnz], val[:nnz])``."""
    acc = 0.0
    for t in range(nnz):
        acc += val[t] * v[idx[t]]
    return acc


@njit(cache=True, inline="always")
def atom_equal(idx_a, val_a, nnz_a, idx_b, val_b, nnz_b):
    """Whether two atoms (sorted indices, as the LMO writes them) are the same vector."""
    if nnz_a != nnz_b:
        return False
    for t in range(nnz_a):
        if idx_a[t] != idx_b[t] or val_a[t] != val_b[t]:
            return False
    return True
