"""Face-Newton's sets off the simplex: the projected arc, and the set bookkeeping.

:mod:`solvers.face_newton` steps on the l1 ball, the box and the K-sparse polytope along
the projected arc ``x(t) = P(x + t d)`` of Bertsekas (1982), "Projected Newton methods for
optimization problems with simple constraints", SIAM J. Control Optim.: :func:`arc_trial`
builds one trial point and its margins, :func:`loss_at` the loss there, :func:`at_bound`
says whether a coordinate left the face. :func:`sum_bound` (the signed sum's right-hand
side) and :func:`make_feasible` (undo rounding after a step) serve every set, the
simplex too (whose steps are in :mod:`solvers.face_simplex`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solvers.fw_vparts import L_SCALE, LOSS_SQUARED
from solvers.linalg import row_axpy
from solvers.lmo import P_HI, P_K, P_LO, P_RADIUS, SET_BOX, SET_KSPARSE, SET_L1, SET_SIMPLEX
from solvers.steps import exp_nonpositive, log1p_unit

__all__ = ["arc_trial", "at_bound", "loss_at", "make_feasible", "sum_bound"]


@njit(cache=True, inline="always")
def sum_bound(set_code, set_par):
    """Right-hand side of the signed-sum constraint (inf: none)."""
    if set_code == SET_L1:
        return set_par[P_RADIUS]
    if set_code == SET_KSPARSE:
        return set_par[P_RADIUS] * set_par[P_K]
    if set_code == SET_SIMPLEX:
        return 1.0
    return np.inf


@njit(cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def loss_at(loss_code, loss_par, b, zt):
    """The loss part of ``f`` at margins ``zt`` (no ridge)."""
    n = zt.shape[0]
    if loss_code == LOSS_SQUARED:
        acc = 0.0
        for i in range(n):
            e = zt[i] - b[i]
            acc += e * e
        return loss_par[L_SCALE] * acc
    acc = 0.0
    for i in range(n):
        u = b[i] * zt[i]
        acc += (-u if u < 0.0 else 0.0) + log1p_unit(exp_nonpositive(-abs(u)))
    return acc / n


@njit(cache=True)
def arc_trial(set_code, set_par, x, wk, sg, m, d, gamma, xt, MT, z, zd, zt, wfrac, passes, rest):
    """``x(gamma)`` on ``W`` into ``xt[:m]`` and ``zt = M x(gamma)``.

    The projected arc (Bertsekas 1982): box, clip to the bounds; l1 and K-sparse, the
    Euclidean projection of ``x + gamma d`` onto ``{0 <= s_t y_t <= cap, sum_t s_t y_t <=
    bound - rest}`` (the face's orthant and the sum constraint; ``rest`` = the fixed
    coordinates' share), a clip shifted by a threshold found by bisection. (The simplex's
    path is :func:`solvers.face_simplex.simplex_face_step`.) ``passes[0]`` counts the
    rows of ``MT`` read.
    """
    signed = set_code == SET_L1 or set_code == SET_KSPARSE
    lo = set_par[P_LO]
    hi = set_par[P_HI]
    cap = set_par[P_RADIUS] if set_code == SET_KSPARSE else np.inf
    for i in range(z.shape[0]):
        zt[i] = z[i] + gamma * zd[i]
    for t in range(m):
        xt[t] = x[wk[t]] + gamma * d[t]
    if signed:
        room = sum_bound(set_code, set_par) - rest
        tot = 0.0
        for t in range(m):
            tot += min(max(sg[t] * xt[t], 0.0), cap)
        theta = 0.0
        if tot > room:
            # sum_t clip(s_t y_t - theta, 0, cap) = room: decreasing in theta, bisect.
            a = 0.0
            bb = 0.0
            for t in range(m):
                bb = max(bb, sg[t] * xt[t])
            for _ in range(200):
                theta = 0.5 * (a + bb)
                tot = 0.0
                for t in range(m):
                    tot += min(max(sg[t] * xt[t] - theta, 0.0), cap)
                if tot > room:
                    a = theta
                else:
                    bb = theta
                if bb - a <= 1e-16 * max(bb, 1e-300):
                    break
            theta = bb  # the feasible side
    for t in range(m):
        raw = xt[t]
        if signed:
            v = sg[t] * min(max(sg[t] * raw - theta, 0.0), cap)
        else:
            v = min(max(raw, lo), hi)
        if v != raw:
            row_axpy(MT, wk[t], v - raw, zt)
            passes[0] += wfrac[wk[t]]
        xt[t] = v


@njit(cache=True, inline="always")
def at_bound(set_code, set_par, v):
    """Whether a coordinate's value ``v`` is at zero or a bound (it left the face)."""
    if set_code == SET_BOX:
        return v <= set_par[P_LO] or v >= set_par[P_HI]
    if set_code == SET_KSPARSE and abs(v) >= set_par[P_RADIUS]:
        return True
    return v == 0.0


@njit(cache=True)
def make_feasible(set_code, set_par, x, bound):
    """Undo rounding: the sum constraint (l1, K-sparse, simplex) and the bounds hold
    exactly (a rescaling by ``1 + O(eps)``)."""
    p = x.shape[0]
    if set_code == SET_SIMPLEX:
        s = 0.0
        for j in range(p):
            if x[j] < 0.0:
                x[j] = 0.0
            s += x[j]
        if s != 1.0:
            for j in range(p):
                x[j] /= s
        return
    if set_code == SET_BOX:
        for j in range(p):
            x[j] = min(max(x[j], set_par[P_LO]), set_par[P_HI])
        return
    if set_code == SET_KSPARSE:
        tau = set_par[P_RADIUS]
        for j in range(p):
            x[j] = min(max(x[j], -tau), tau)
    s = 0.0
    for j in range(p):
        s += abs(x[j])
    if s > bound:
        for j in range(p):
            x[j] *= bound / s
