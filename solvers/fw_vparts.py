"""Pieces of the generic Frank-Wolfe-variants kernel (:mod:`solvers.fw_variants`).

State layouts (``I_*`` integer state, ``F_*`` float state), record columns, the loss and
gradient pass, search directions built from sparse atoms (:mod:`solvers.sets`), the
active set kept as rows of atom arrays, and the gradient pursuit of Boosted FW
(Combettes & Pokutta 2020, "Boosting Frank-Wolfe by chasing gradients", ICML,
Algorithm 2). Everything is ``@njit(cache=True)``.

Active set: ``at_idx (cap, m)``, ``at_val (cap, m)``, ``at_nnz (cap,)`` hold atom ``a``
as ``(at_idx[a, :nnz], at_val[a, :nnz])``; ``mu[a]`` is its convex weight; the first
``istate[I_NACT]`` rows are live. A dropped atom is swapped with the last live row, so the
live rows stay packed. Weight updates are those of Lacoste-Julien & Jaggi (2015), "On the
global linear convergence of Frank-Wolfe optimization variants", NeurIPS.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from solvers.fw import (
    REC_ACTIVE,
    REC_CERTIFICATE,
    REC_FUN_EVALS,
    REC_GRAD_EVALS,
    REC_ITER,
    REC_OBJECTIVE,
    REC_STEP_SIZE,
    REC_STEP_TYPE,
)
from solvers.gram_cache import cached_column
from solvers.linalg import dot, rmatvec, row_axpy, row_dot_long
from solvers.lmo import atom_dot, atom_equal, lmo
from solvers.steps import logistic_pass
from solvers.tags import (
    BASE_COLUMNS,
)

METHOD_FW = 0
METHOD_AFW = 1
METHOD_PFW = 2
METHOD_BPCG = 3
METHOD_BOOSTED = 4
METHOD_DICG = 5
METHOD_CODES = {
    "fw": METHOD_FW,
    "afw": METHOD_AFW,
    "pfw": METHOD_PFW,
    "bpcg": METHOD_BPCG,
    "boosted": METHOD_BOOSTED,
    "dicg": METHOD_DICG,
}
ACTIVE_SET_METHODS = (METHOD_AFW, METHOD_PFW, METHOD_BPCG)
LAZY_METHODS = ACTIVE_SET_METHODS

LOSS_SQUARED = 0  # scale * ||z - b||^2
LOSS_LOGISTIC = 1  # mean_i log(1 + exp(-b_i z_i))
LOSS_CODES = {"squared": LOSS_SQUARED, "logistic": LOSS_LOGISTIC}
L_SCALE = 0
L_RIDGE = 1

# Integer state.
I_K = 0  # index of the current iterate x_k
I_STATUS = 1  # solvers.tags.STATUS_*
I_STOP_AT = 2  # record x_k without stepping once k reaches this
I_FUN_EVALS = 3  # cumulative line-model evaluations of the step rule
I_METHOD = 4  # METHOD_*
I_RULE = 5  # solvers.steps.RULE_*
I_REFRESH = 6  # rebuild x (from the active set) and z = M x every this many steps
I_SET = 7  # solvers.sets.SET_*
I_LOSS = 8  # LOSS_*
I_NACT = 9  # number of live rows of the active set
I_LAZY = 10  # 1: lazified afw / pfw / bpcg
I_LMO_CALLS = 11  # cumulative LMO calls
I_GRAD_EVALS = 12  # cumulative gradient evaluations (passes over MT)
I_BOOST_ROUNDS = 13  # Boosted FW: maximal pursuit rounds per iteration
I_GROW = 14  # set by the kernel: the active set is full, grow it and call again
I_H_VALID = 15  # Gram cache: 1 while h = M^T M x is up to date (0: recompute it)
N_ISTATE = 16

# Float state.
F_PHI = 0  # lazy: dual-gap estimate Phi (< 0 until the first LMO call)
F_LB = 1  # lazy: best Wolfe-dual lower bound max_s f(x_s) - gap_s on f*
F_LAZY_K = 2  # lazy: accept an active atom whose gap is >= Phi / lazy_K
F_BOOST_DELTA = 3  # Boosted FW: alignment-improvement threshold
N_FSTATE = 4

# The first eight record columns are solvers.fw's; the LMO calls come after them.
REC_LMO_CALLS = REC_FUN_EVALS + 1
FWV_RECORD_COLUMNS = (*BASE_COLUMNS, "grad_evals", "fun_evals", "lmo_calls")


@njit(cache=True, inline="always")
def record_row(rec, row, k, f, cert, gamma, step_type, active, istate):
    rec[row, REC_ITER] = k
    rec[row, REC_OBJECTIVE] = f
    rec[row, REC_CERTIFICATE] = cert
    rec[row, REC_STEP_SIZE] = gamma
    rec[row, REC_STEP_TYPE] = step_type
    rec[row, REC_ACTIVE] = active
    rec[row, REC_GRAD_EVALS] = istate[I_GRAD_EVALS]
    rec[row, REC_FUN_EVALS] = istate[I_FUN_EVALS]
    rec[row, REC_LMO_CALLS] = istate[I_LMO_CALLS]


@njit(cache=True)
def loss_grad(MT, b, loss_code, loss_par, x, z, r, g):
    """Objective ``loss(z) + ridge ||x||^2`` at ``z = M x``; writes ``r = dloss/dz`` and
    the gradient ``g = MT r + 2 ridge x`` (one pass over ``MT``)."""
    n = z.shape[0]
    scale = loss_par[L_SCALE]
    ridge = loss_par[L_RIDGE]
    if loss_code == LOSS_SQUARED:
        f = 0.0
        for i in range(n):
            e = z[i] - b[i]
            f += e * e
            r[i] = 2.0 * scale * e
        f *= scale
    else:
        f = logistic_pass(b, z, 1.0 / n, r)
    xx = 0.0
    for j in range(x.shape[0]):
        g[j] = row_dot_long(MT, j, r) + 2.0 * ridge * x[j]
        xx += x[j] * x[j]
    return f + ridge * xx


@njit(cache=True)
def squared_from_h(b, loss_par, x, z, r, h, mtb, g, full, MT):
    """Squared loss with the Gram cache: objective ``scale ||z - b||^2 + ridge ||x||^2``
    (exact, from ``z``), ``r = dloss/dz`` and the gradient ``g = 2 scale (h - M^T b) + 2
    ridge x`` from the maintained ``h = M^T M x``; with ``full`` ``h = MT z`` is first
    rebuilt (one pass over ``MT``). O(n + p) otherwise. Returns ``(f, <g, x>)``."""
    scale = loss_par[L_SCALE]
    ridge = loss_par[L_RIDGE]
    f = 0.0
    for i in range(z.shape[0]):
        e = z[i] - b[i]
        f += e * e
        r[i] = 2.0 * scale * e
    xx = 0.0
    gx = 0.0
    for j in range(x.shape[0]):
        if full:
            h[j] = row_dot_long(MT, j, z)
        gj = 2.0 * (scale * (h[j] - mtb[j]) + ridge * x[j])
        g[j] = gj
        xx += x[j] * x[j]
        gx += gj * x[j]
    return scale * f + ridge * xx, gx


@njit(cache=True)
def gram_step(MT, gram, now, a, ja, ba, jb, bb, istate):
    """``h <- a h + ba K[:, ja] + bb K[:, jb]`` with ``K = M^T M`` (``ja`` / ``jb`` < 0:
    no such term), the columns ``K[:, j] = MT @ MT[j, :]`` read from the LRU cache
    ``gram`` (:func:`solvers.gram_cache.cached_column` with unit labels); a column miss
    costs one pass over ``MT`` and is counted in ``istate[I_GRAD_EVALS]``."""
    cols, slot_of, atom_of, stamp, h, _, xj, ones = gram
    sa = -1
    sb = -1
    if ja >= 0:
        sa, miss = cached_column(MT, ones, ja, now, cols, slot_of, atom_of, stamp, xj)
        istate[I_GRAD_EVALS] += miss
    if jb >= 0:
        # Never evicts the slot of ja (stamped `now`): both columns stay live.
        sb, miss = cached_column(MT, ones, jb, now, cols, slot_of, atom_of, stamp, xj)
        istate[I_GRAD_EVALS] += miss
    p = h.shape[0]
    if sa >= 0 and sb >= 0:
        ca = cols[sa]
        cb = cols[sb]
        for j in range(p):
            h[j] = a * h[j] + ba * ca[j] + bb * cb[j]
    elif sa >= 0:
        ca = cols[sa]
        for j in range(p):
            h[j] = a * h[j] + ba * ca[j]
    elif sb >= 0:
        cb = cols[sb]
        for j in range(p):
            h[j] = a * h[j] + bb * cb[j]


@njit(cache=True)
def dir_from_x(MT, x, z, idx, val, nnz, sign, d, zd):
    """``d = sign (atom - x)`` and ``zd = M d`` (sign +1: FW direction, -1: away)."""
    for j in range(x.shape[0]):
        d[j] = -sign * x[j]
    for i in range(z.shape[0]):
        zd[i] = -sign * z[i]
    for t in range(nnz):
        d[idx[t]] += sign * val[t]
        row_axpy(MT, idx[t], sign * val[t], zd)


@njit(cache=True)
def dir_pair(MT, s_idx, s_val, s_nnz, a_idx, a_val, a_nnz, d, zd):
    """Pairwise direction ``d = s - a`` and ``zd = M d``."""
    d[:] = 0.0
    zd[:] = 0.0
    for t in range(s_nnz):
        d[s_idx[t]] += s_val[t]
        row_axpy(MT, s_idx[t], s_val[t], zd)
    for t in range(a_nnz):
        d[a_idx[t]] -= a_val[t]
        row_axpy(MT, a_idx[t], -a_val[t], zd)


@njit(cache=True)
def scan_active(at_idx, at_val, at_nnz, nact, g):
    """Away atom (max ``<g, v>``) and local FW atom (min ``<g, v>``) among the live rows:
    ``(i_away, g_away, i_local, g_local)``."""
    ia = 0
    il = 0
    ga = -np.inf
    gl = np.inf
    for a in range(nact):
        v = atom_dot(at_idx[a], at_val[a], at_nnz[a], g)
        if v > ga:
            ga = v
            ia = a
        if v < gl:
            gl = v
            il = a
    return ia, ga, il, gl


@njit(cache=True)
def _copy_row(at_idx, at_val, at_nnz, mu, src, dst):
    nnz = at_nnz[src]
    for t in range(nnz):
        at_idx[dst, t] = at_idx[src, t]
        at_val[dst, t] = at_val[src, t]
    at_nnz[dst] = nnz
    mu[dst] = mu[src]


@njit(cache=True)
def remove_atom(at_idx, at_val, at_nnz, mu, istate, i):
    """Drop live row ``i`` (the last live row moves into its place)."""
    last = istate[I_NACT] - 1
    if i != last:
        _copy_row(at_idx, at_val, at_nnz, mu, last, i)
    mu[last] = 0.0
    istate[I_NACT] = last


@njit(cache=True)
def find_or_append(at_idx, at_val, at_nnz, mu, istate, idx, val, nnz):
    """Row of the atom ``(idx, val)`` in the active set, appended with weight 0 if new.

    The caller guarantees a free row (the kernel asks for growth before any step)."""
    nact = istate[I_NACT]
    for a in range(nact):
        if atom_equal(at_idx[a], at_val[a], at_nnz[a], idx, val, nnz):
            return a
    for t in range(nnz):
        at_idx[nact, t] = idx[t]
        at_val[nact, t] = val[t]
    at_nnz[nact] = nnz
    mu[nact] = 0.0
    istate[I_NACT] = nact + 1
    return nact


@njit(cache=True)
def fw_weights(at_idx, at_val, at_nnz, mu, istate, i, gamma):
    """FW step toward row ``i``: ``mu <- (1 - gamma) mu + gamma e_i`` (gamma 1 keeps ``i``
    alone: every other weight is exactly 0)."""
    if gamma >= 1.0:
        if i != 0:
            _copy_row(at_idx, at_val, at_nnz, mu, i, np.int64(0))  # (np.int64: one compile)
        mu[0] = 1.0
        for a in range(1, istate[I_NACT]):
            mu[a] = 0.0
        istate[I_NACT] = 1
        return
    for a in range(istate[I_NACT]):
        mu[a] *= 1.0 - gamma
    mu[i] += gamma


@njit(cache=True)
def away_weights(at_idx, at_val, at_nnz, mu, istate, i, gamma, gamma_max):
    """Away step from row ``i``: ``mu <- (1 + gamma) mu - gamma e_i``; True if dropped."""
    for a in range(istate[I_NACT]):
        mu[a] *= 1.0 + gamma
    if gamma >= gamma_max:
        remove_atom(at_idx, at_val, at_nnz, mu, istate, i)
        return True
    mu[i] -= gamma
    return False


@njit(cache=True)
def pair_weights(at_idx, at_val, at_nnz, mu, istate, i_to, i_from, gamma, gamma_max):
    """Move ``gamma`` of weight from row ``i_from`` to row ``i_to``; True if dropped."""
    mu[i_to] += gamma
    if gamma >= gamma_max:
        remove_atom(at_idx, at_val, at_nnz, mu, istate, i_from)
        return True
    mu[i_from] -= gamma
    return False


@njit(cache=True)
def rebuild_from_active(MT, at_idx, at_val, at_nnz, mu, nact, x, z):
    """Renormalize the weights, then ``x = sum_a mu_a atom_a`` and ``z = M x`` from
    scratch (the incremental updates drift over many steps)."""
    tot = 0.0
    for a in range(nact):
        tot += mu[a]
    x[:] = 0.0
    for a in range(nact):
        mu[a] /= tot
        for t in range(at_nnz[a]):
            x[at_idx[a, t]] += mu[a] * at_val[a, t]
    rmatvec(MT, x, z)


@njit(cache=True)
def boost_pursuit(
    MT, set_code, set_par, x, z, g, gx, s_idx, s_val, s_nnz, d, u, q, md, rounds, delta
):
    """Gradient pursuit of Boosted FW (Combettes & Pokutta 2020, Algorithm 2).

    On entry ``s_idx, s_val, s_nnz`` hold ``LMO(g)`` (round 0's vertex, which also gives the
    FW gap). Builds ``d_K`` (in ``d``) and ``M d_K`` (in ``md``) by at most ``rounds``
    rounds: ``r_k = -g - d_k``; ``v_k = LMO(-r_k)``; ``u_k`` is ``v_k - x`` or
    ``-d_k / ||d_k||``, whichever ``r_k`` aligns with more; ``d_{k+1} = d_k + lambda_k u_k``
    with ``lambda_k = <r_k, u_k> / ||u_k||^2``, kept only while
    ``align(-g, d_{k+1}) - align(-g, d_k) >= delta`` (``align(-g, 0) = -1``).

    Returns ``(Lambda, extra_lmo_calls)``; ``d / Lambda`` is the step direction, and
    ``x + d / Lambda`` lies in the set (a convex combination of the ``v_k``, Lemma 3.1).
    """
    d[:] = 0.0
    md[:] = 0.0
    gnorm = math.sqrt(dot(g, g))
    lam_tot = 0.0
    dd = 0.0
    gdd = 0.0
    align = -1.0
    calls = 0
    nnz = s_nnz
    if gnorm == 0.0:
        return 0.0, 0
    for rd in range(rounds):
        if rd == 0:
            qx = gx
            qv = atom_dot(s_idx, s_val, nnz, g)
        else:
            for j in range(x.shape[0]):
                q[j] = g[j] + d[j]
            nnz = lmo(set_code, set_par, q, s_idx, s_val)
            calls += 1
            qx = dot(q, x)
            qv = atom_dot(s_idx, s_val, nnz, q)
        c = qx - qv  # <r_k, v_k - x>
        nd = math.sqrt(dd)
        use_fw = True
        if nd > 0.0:
            c2 = (dot(q, d)) / nd  # <r_k, -d_k / ||d_k||>
            if c2 > c:
                use_fw = False
                c = c2
        if c <= 0.0:
            break
        if use_fw:
            for j in range(x.shape[0]):
                u[j] = -x[j]
            for t in range(nnz):
                u[s_idx[t]] += s_val[t]
        else:
            for j in range(x.shape[0]):
                u[j] = -d[j] / nd
        uu = dot(u, u)
        if uu <= 0.0:
            break
        lam = c / uu
        dd_new = dd + 2.0 * lam * dot(d, u) + lam * lam * uu
        if dd_new <= 0.0:
            break
        align_new = -(gdd + lam * dot(g, u)) / (gnorm * math.sqrt(dd_new))
        if align_new - align < delta:
            break
        if use_fw:
            for i in range(z.shape[0]):
                md[i] -= lam * z[i]
            for t in range(nnz):
                row_axpy(MT, s_idx[t], lam * s_val[t], md)
            lam_tot += lam
        else:
            shrink = 1.0 - lam / nd
            for i in range(z.shape[0]):
                md[i] *= shrink
            lam_tot *= shrink
        for j in range(x.shape[0]):
            d[j] += lam * u[j]
        dd = dot(d, d)
        gdd = dot(g, d)
        align = align_new
    return lam_tot, calls


@njit(cache=True)
def product(MT, x, z):
    """``z = M x`` (``rmatvec`` of ``MT``), callable from Python."""
    rmatvec(MT, x, z)


@njit(cache=True)
def mt_product(MT, v, out):
    """``out = MT v`` (one pass over the rows of ``MT``), callable from Python."""
    for j in range(out.shape[0]):
        out[j] = row_dot_long(MT, j, v)


class KernelState:
    """Caller-owned arrays of one run of an FW-family kernel, as attributes (built by
    the kernel module's ``new_state``); ``istate`` holds the iteration at :data:`I_K`
    and the status at :data:`I_STATUS`."""

    def __init__(self, **arrays) -> None:
        self.__dict__.update(arrays)

    @property
    def status(self) -> int:
        return int(self.istate[I_STATUS])

    @property
    def iteration(self) -> int:
        return int(self.istate[I_K])
