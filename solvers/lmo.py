"""Every linear minimization oracle (LMO) of the kernels: one module, one docstring.

An LMO answers ``argmin_{s in C} <g, s>`` for a gradient ``g`` over a feasible set ``C``;
an away oracle, ``argmax <g, v>`` over the active atoms ``v``. The feasible sets:

* unit simplex and l1 ball of radius ``r``, dense gradients, atoms as integer ids
  (``e_j``; ``2j, 2j+1`` for ``+-r e_j``): :func:`simplex_lmo`, :func:`simplex_away`,
  :func:`l1_lmo`, :func:`l1_away`, :func:`l1_atom` (kernels of :mod:`solvers.fw`);
* simplex, l1 ball, l2 ball, box ``[lo, hi]^p`` and K-sparse polytope as sparse atoms
  ``(idx, val, nnz)``: :func:`lmo` with a ``SET_*`` code and :func:`set_params`, plus
  :func:`atom_dot`, :func:`atom_equal`, :func:`max_nnz`, :func:`contains` (the generic
  kernel :mod:`solvers.fw_variants`);
* nuclear-norm ball of radius ``tau``, rank-one atoms ``-tau u v^T``:
  :func:`top_singular_pair` (Lanczos) with scratch from :func:`new_lmo_work`
  (:mod:`solvers.nuclear`, matrix completion).

References: Jaggi (2013), "Revisiting Frank-Wolfe: projection-free sparse convex
optimization", ICML (LMOs of the simplex, l1, l2 and box, and of the nuclear-norm ball,
Section 4); Lacoste-Julien & Jaggi (2015) (away oracle); Combettes & Pokutta (2021),
"Complexity of linear minimization and projection on some sets", Oper. Res. Lett.
(K-sparse polytope). The old homes :mod:`solvers.sets` and the LMO of
:mod:`solvers.nuclear` re-export these names.

Vertex oracles of the simplex and the l1 ball (dense gradients)
---------------------------------------------------------------
Atoms are integer ids (see :mod:`solvers.active_set`).

Sparse-atom sets of the generic kernel
--------------------------------------
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

The nuclear-norm ball (matrix completion)
-----------------------------------------
``argmin_{||S||_* <= tau} <G, S> = -tau u1 v1^T`` with ``(u1, v1)`` the top singular pair
of ``G`` (Jaggi 2013, "Revisiting Frank-Wolfe", Section 4). :func:`top_singular_pair`
computes it by Golub-Kahan-Lanczos bidiagonalization with full reorthogonalization
(Krylov dimension ``kmax = Ub.shape[0]``), restarted from the current Ritz vector, warm
started from the previous call's pair. Accuracy control: after each Lanczos step the
Ritz value ``sigma_k`` (top singular value of the bidiagonal ``B_k``) and the Lanczos
residual estimate ``beta_k |p_k|`` are checked; the run stops when
``|sigma_k - sigma_{k-1}| <= lmo_tol sigma_k`` and ``beta_k |p_k| <= lmo_tol sigma_k``
(or the Krylov space became invariant), or after ``max_lmo_iters`` products ``G v``.
One more product pair then measures the achieved residual of the returned unit pair,
``rnorm = sqrt((||G v - s u||^2 + ||G^T u - s v||^2) / 2)`` with ``s = u^T G v``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from solvers.linalg import dot

# ---------------------------------------------------------------------------------------
# Vertex oracles of the simplex and the l1 ball


@njit(cache=True)
def simplex_lmo(g):
    """Vertex ``e_s`` of the unit simplex minimizing ``<g, e_s>``: returns ``s``."""
    s = 0
    best = g[0]
    for i in range(1, g.shape[0]):
        if g[i] < best:
            best = g[i]
            s = i
    return s


@njit(cache=True)
def simplex_away(g, mu):
    """Active vertex maximizing ``<g, e_v>``: returns ``v`` (or -1 if none is active)."""
    v = -1
    best = -np.inf
    for i in range(g.shape[0]):
        if mu[i] > 0.0 and g[i] > best:
            best = g[i]
            v = i
    return v


@njit(cache=True)
def l1_atom(a, radius):
    """Coordinate and signed value of atom ``a`` of the l1 ball: ``(j, +-radius)``."""
    j = a // 2
    return j, (radius if a % 2 == 0 else -radius)


@njit(cache=True)
def l1_lmo(g, radius):
    """Vertex ``-radius * sign(g_j) e_j``, ``j = argmax |g_j|``: returns its atom id."""
    j = 0
    best = abs(g[0])
    for c in range(1, g.shape[0]):
        if abs(g[c]) > best:
            best = abs(g[c])
            j = c
    return 2 * j if g[j] < 0.0 else 2 * j + 1


@njit(cache=True)
def l1_away(g, mu, radius):
    """Active atom maximizing ``<g, v>``: returns its atom id (or -1 if none is active)."""
    v = -1
    best = -np.inf
    for j in range(g.shape[0]):
        if mu[2 * j] > 0.0 and radius * g[j] > best:
            best = radius * g[j]
            v = 2 * j
        if mu[2 * j + 1] > 0.0 and -radius * g[j] > best:
            best = -radius * g[j]
            v = 2 * j + 1
    return v


# ---------------------------------------------------------------------------------------
# Sparse-atom sets: simplex, l1, l2, box, K-sparse

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
            _sift_down(g, out_idx, np.int64(0), K)  # (np.int64: one compile)
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


# ---------------------------------------------------------------------------------------
# The nuclear-norm ball: top singular pair of a sparse G

#: Weight of the pseudo-random unit vector added to every (unit) LMO start vector.
START_PERTURBATION = 0.5
#: Safety factor on the residual bound for an unresolved top singular-value cluster.
CLUSTER_SAFETY = 10.0


@njit(cache=True, nogil=True)
def matvec(rows, cols, g, v, out):
    """``out = G v`` for ``G`` with entries ``g`` at ``(rows, cols)``."""
    out[:] = 0.0
    for t in range(g.shape[0]):
        out[rows[t]] += g[t] * v[cols[t]]


@njit(cache=True, nogil=True)
def rmatvec(rows, cols, g, u, out):
    """``out = G^T u``."""
    out[:] = 0.0
    for t in range(g.shape[0]):
        out[cols[t]] += g[t] * u[rows[t]]


@njit(cache=True)
def _pseudo_random(out, seed):
    """Deterministic entries in (-0.5, 0.5) (a sine hash): no RNG state to carry."""
    for i in range(out.shape[0]):
        t = math.sin((i + 1) * 12.9898 + (seed + 1) * 78.233) * 43758.5453
        out[i] = t - math.floor(t) - 0.5


@njit(cache=True)
def _orthogonalize(w, basis, count):
    """Remove from ``w`` its components on ``basis[:count]`` (two Gram-Schmidt passes)."""
    for _ in range(2):
        for i in range(count):
            c = dot(basis[i], w)
            for t in range(w.shape[0]):
                w[t] -= c * basis[i, t]


# ---------------------------------------------------------------------------------------
# The LMO: top singular pair by restarted Golub-Kahan-Lanczos


@njit(cache=True, nogil=True)
def top_singular_pair(rows, cols, g, u, v, Ub, Vb, B, tol, max_iters, seed):
    """Top singular pair of the sparse ``G`` (see the module docstring; the upper bound on
    ``sigma_1`` it returns is explained in :mod:`solvers.nuclear`).

    Parameters
    ----------
    rows, cols, g : the COO entries of ``G`` (shape ``(m, n)`` from ``u``, ``v``).
    u : (m,) float64, overwritten with the left vector.
    v : (n,) float64, the warm start on input (any vector; zero means none), the right
        vector on output.
    Ub : (kmax, m), Vb : (kmax + 1, n), B : (kmax + 1, kmax + 1) float64 scratch.
    tol : float, relative accuracy ``lmo_tol``; max_iters : int, cap on products ``G v``.
    seed : int, varies the pseudo-random part of the start vector between calls.

    Returns
    -------
    sigma : float, ``u^T G v`` (a lower bound on ``sigma_1``).
    rnorm : float, the achieved residual (see the module docstring).
    sigma_ub : float, the upper bound on ``sigma_1`` used for certificates.
    iters : int, products ``G v`` spent (each paired with one ``G^T u``).
    converged : bool, whether the accuracy test passed.
    """
    m = u.shape[0]
    n = v.shape[0]
    kmax = Ub.shape[0]
    fro2 = dot(g, g)
    if not (fro2 > 0.0 and math.isfinite(fro2)):
        # G = 0 (every atom minimizes <G, S>) or non-finite: return a fixed unit pair.
        u[:] = 0.0
        v[:] = 0.0
        u[0] = 1.0
        v[0] = 1.0
        s = 0.0 if fro2 == 0.0 else math.nan
        return s, s, s, 0, fro2 == 0.0
    fro = math.sqrt(fro2)
    tiny = 1e-14 * fro
    # Start vector: the warm start plus a small pseudo-random component.
    work = Vb[kmax]
    _pseudo_random(work, seed)
    wn = math.sqrt(dot(work, work))
    nv = math.sqrt(dot(v, v))
    if nv > 0.0 and math.isfinite(nv):
        for t in range(n):
            v[t] = v[t] / nv + START_PERTURBATION * work[t] / wn
    else:
        for t in range(n):
            v[t] = work[t] / wn
    iters = 0
    sigma_prev = -1.0
    sig_rig = fro
    converged = False
    retries = 0
    while True:
        nv = math.sqrt(dot(v, v))
        for t in range(n):
            Vb[0, t] = v[t] / nv
        B[:, :] = 0.0
        k = 0  # left vectors in this cycle
        kc = 0  # right vectors used by the Ritz problem (k, or k + 1 on an alpha breakdown)
        beta = 0.0
        invariant = False
        null_start = False
        for j in range(kmax):
            w = Ub[j]
            matvec(rows, cols, g, Vb[j], w)
            iters += 1
            if j > 0:
                for t in range(m):
                    w[t] -= beta * Ub[j - 1, t]
            _orthogonalize(w, Ub, j)
            alpha = math.sqrt(dot(w, w))
            if alpha <= tiny:
                if j == 0:
                    null_start = True
                else:
                    # G V_{j+1} = U_j B[:j, :j+1] exactly: an invariant pair of subspaces.
                    k = j
                    kc = j + 1
                    invariant = True
                break
            for t in range(m):
                w[t] /= alpha
            B[j, j] = alpha
            x = Vb[j + 1]
            rmatvec(rows, cols, g, Ub[j], x)
            for t in range(n):
                x[t] -= alpha * Vb[j, t]
            _orthogonalize(x, Vb, j + 1)
            beta = math.sqrt(dot(x, x))
            k = j + 1
            kc = k
            if beta <= tiny or k >= n:
                invariant = True  # G^T U_k = V_k B_k^T: nothing outside the Krylov space
                break
            for t in range(n):
                x[t] /= beta
            B[j, j + 1] = beta
            Bk = np.ascontiguousarray(B[:k, :k])
            P, S, _ = np.linalg.svd(Bk)
            sigma = S[0]
            res = beta * abs(P[k - 1, 0])
            if abs(sigma - sigma_prev) <= tol * sigma and res <= tol * sigma:
                converged = True
                break
            sigma_prev = sigma
            if iters >= max_iters:
                break
        if null_start:
            # v is in the null space of G: start again from a pseudo-random vector.
            retries += 1
            _pseudo_random(v, seed + 7919 * retries)
            if iters >= max_iters or retries > 5:
                break
            continue
        if invariant:
            converged = True
        Bc = np.ascontiguousarray(B[:k, :kc])
        P, S, QT = np.linalg.svd(Bc)
        bf2 = 0.0
        for i in range(k):
            for j2 in range(kc):
                bf2 += Bc[i, j2] * Bc[i, j2]
        # Rounding allowance for ||G||_F^2 - ||B||_F^2 (both sums carry ~k eps relative error).
        tail2 = max(fro2 - bf2, 0.0) + 4.0 * (kc + 1) * 2.220446049250313e-16 * fro2
        sig_rig = min(sig_rig, math.sqrt(S[0] * S[0] + tail2))
        # Ritz vectors.
        u[:] = 0.0
        v[:] = 0.0
        for i in range(k):
            c = P[i, 0]
            for t in range(m):
                u[t] += c * Ub[i, t]
        for i in range(kc):
            c = QT[0, i]
            for t in range(n):
                v[t] += c * Vb[i, t]
        if converged or iters >= max_iters:
            break
    nu = math.sqrt(dot(u, u))
    nv = math.sqrt(dot(v, v))
    if not (nu > 0.0 and nv > 0.0):
        u[:] = 0.0
        u[0] = 1.0
        nu = 1.0
        if not nv > 0.0:
            v[:] = 0.0
            v[0] = 1.0
            nv = 1.0
    for t in range(m):
        u[t] /= nu
    for t in range(n):
        v[t] /= nv
    # Achieved residual of the returned pair (one more product pair).
    gv = Ub[0]
    gtu = Vb[0]
    matvec(rows, cols, g, v, gv)
    rmatvec(rows, cols, g, u, gtu)
    iters += 1
    s = dot(u, gv)
    if s < 0.0:
        s = -s
        for t in range(m):
            u[t] = -u[t]
        for t in range(n):
            gtu[t] = -gtu[t]
    r1 = 0.0
    for t in range(m):
        d = gv[t] - s * u[t]
        r1 += d * d
    r2 = 0.0
    for t in range(n):
        d = gtu[t] - s * v[t]
        r2 += d * d
    rnorm = math.sqrt(0.5 * (r1 + r2))
    safety = CLUSTER_SAFETY * math.sqrt(n) / START_PERTURBATION
    sigma_ub = min(sig_rig, s + safety * rnorm) if converged else sig_rig
    return s, rnorm, max(sigma_ub, s), iters, converged


def new_lmo_work(m: int, n: int, kmax: int = 40) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scratch ``(Ub, Vb, B)`` for :func:`top_singular_pair` with Krylov dimension
    ``min(kmax, m, n)`` (memory ``kmax (m + n)`` floats)."""
    k = max(1, min(int(kmax), m, n))
    return np.zeros((k, m)), np.zeros((k + 1, n)), np.zeros((k + 1, k + 1))
