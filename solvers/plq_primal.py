"""Primal Newton-CG for the smooth PLQ problems: the squared hinge, smoothed hinge, Huber
and squared losses with a ridge, no constraints.

Problem (the PLQ problem of Dai & Qiu 2023 with ReHU pieces only, in the layout of
:mod:`solvers.plq_pieces`): ``P(beta) = 1/2 ||beta||^2 + sum_i sum_h
ReHU_tau_hi(s_hi z_i + t_hi)``, ``z = X beta``, with ``ReHU_tau(u) = 0, u^2 / 2, tau (u -
tau / 2)`` below 0, in ``[0, tau]`` and above ``tau``. ``P`` is differentiable and
1-strongly convex, with the gradient ``g = beta + X^T r``, ``r_i = sum_h s_hi
clip(u_hi, 0, tau_hi)``, and the generalized Hessian ``I + X^T diag(w) X``, ``w_i = sum_h
s_hi^2 [0 < u_hi < tau_hi]`` (Mangasarian 2002, "A finite Newton method for
classification").

One iteration (one record row) at ``beta_k``:

1. ``z = X beta`` and the gradient from scratch (two passes over the data), so that each
   row's objective and certificate are exact for the recorded ``beta_k``.
2. The certificate. The duals the point implies, ``gamma_hi = clip(u_hi, 0, tau_hi)``,
   give ``beta(gamma) = -sum_i x_i sum_h gamma_hi s_hi = beta - g`` and the dual objective
   ``D = -1/2 ||beta - g||^2 + sum gamma t - 1/2 ||gamma||^2``; by Fenchel's equality
   on every piece the duality gap is exactly ``P - D = 1/2 ||g||^2`` (also the strong
   convexity bound on ``P - P*``). It is computed as ``1/2 (||g|| + e)^2`` with ``e``
   the rounding bound of the computed gradient (:data:`ROUNDING` times ``||beta|| +
   sum_i |r_i| ||x_i||``), so that it stays an upper bound; divided by ``D`` (when
   positive) for the relative gap.
3. The Newton direction: conjugate gradients on ``(I + X^T diag(w) X) d = -g``, whose
   products read only the rows with ``w_i > 0`` (the margin violators of an SVM;
   Keerthi & DeCoste 2005), to relative residual ``cg_rtol`` or ``cg_max`` products
   (truncated Newton, as TRON; Lin, Weng & Keerthi 2008).
4. The exact line search: ``phi(t) = P(beta + t d)`` is a convex piecewise quadratic, so
   ``phi'(t)`` is found to vanish by safeguarded Newton steps on it from ``t = 1``
   (bracketed, bisection when a step leaves the bracket), each O(n) with ``X d`` and ``z``
   at hand (Keerthi & DeCoste 2005, "A modified finite Newton method for fast solution of
   large scale linear SVMs", JMLR 6).

A direction that does not descend or a line search that cannot move (float64 has
resolved all it can) ends the run as stalled on the last recorded point. Cost counters:
``hvps`` (Hessian-vector products) and ``data_passes`` (products with ``X`` or ``X^T``,
those restricted to the active rows counted as their share of the rows).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from solvers.linalg import dot, matvec, n_rows, rmatvec, row_axpy, row_dot
from solvers.tags import (
    BASE_COLUMNS,
    STATUS_CONVERGED,
    STATUS_MAX_ITER,
    STATUS_RUNNING,
    STATUS_STALLED,
    STEP_NEWTON,
    STEP_NONE,
)

__all__ = ["NEWTON_RECORD_COLUMNS", "newton_advance"]

NEWTON_RECORD_COLUMNS = (*BASE_COLUMNS, "dual_objective", "hvps", "data_passes")

# Integer state.
I_K = 0
I_STATUS = 1
I_STOP_AT = 2
I_RELATIVE = 3  # 1: tol applies to the relative gap
I_CG_MAX = 4
I_HVP = 5
N_ISTATE = 6
# Float state.
F_PASSES = 0
F_CG_RTOL = 1
N_FSTATE = 2

#: The computed gradient is exact to about this many eps times the size of its terms.
ROUNDING = 4.0 * float(np.finfo(np.float64).eps)
#: Line-search iterations at most (each O(n); a piecewise quadratic needs a few).
LS_MAX = 60


@njit(cache=True, inline="always")
def _record(rec, row, k, f, cert, step, kind, active, dual, istate, fstate):
    rec[row, 0] = k
    rec[row, 1] = f
    rec[row, 2] = cert
    rec[row, 3] = step
    rec[row, 4] = kind
    rec[row, 5] = active
    rec[row, 6] = dual
    rec[row, 7] = istate[I_HVP]
    rec[row, 8] = fstate[F_PASSES]


@njit(cache=True, fastmath={"reassoc", "contract"})
def _pieces(PH, z, r, w):
    """Loss, ``r`` and the Hessian weights ``w`` at margins ``z``; returns (loss, size of
    the gradient's terms ``sum_i |r_i| ||x_i||``, rows with ``w_i > 0``)."""
    n_h = (PH.shape[1] - 1) // 4
    loss = 0.0
    size = 0.0
    active = 0
    for i in range(z.shape[0]):
        ri = 0.0
        wi = 0.0
        for h in range(n_h):
            s = PH[i, 1 + 4 * h]
            u = s * z[i] + PH[i, 2 + 4 * h]
            tau = PH[i, 3 + 4 * h]
            c = min(max(u, 0.0), tau)
            loss += c * (u - 0.5 * c)
            ri += s * c
            if 0.0 < u < tau:
                wi += s * s
        r[i] = ri
        w[i] = wi
        if wi > 0.0:
            active += 1
        size += abs(ri) * math.sqrt(PH[i, 0])
    return loss, size, active


@njit(cache=True, fastmath={"reassoc", "contract"})
def _slope(PH, z, xd, t, bd, dd):
    """``(phi'(t), phi''(t))`` of ``phi(t) = P(beta + t d)`` (``bd = beta.d``, ``dd =
    d.d``)."""
    n_h = (PH.shape[1] - 1) // 4
    d1 = bd + t * dd
    d2 = dd
    for i in range(z.shape[0]):
        a = xd[i]
        if a == 0.0:
            continue
        zi = z[i] + t * a
        for h in range(n_h):
            s = PH[i, 1 + 4 * h]
            u = s * zi + PH[i, 2 + 4 * h]
            tau = PH[i, 3 + 4 * h]
            d1 += a * s * min(max(u, 0.0), tau)
            if 0.0 < u < tau:
                d2 += a * a * s * s
    return d1, d2


@njit(cache=True)
def _line_search(PH, z, xd, bd, dd, slope0):
    """The minimizer ``t > 0`` of the convex piecewise quadratic ``phi`` along ``d``
    (``phi'(0) = slope0 < 0``): safeguarded Newton steps on ``phi'`` from ``t = 1``."""
    lo = 0.0
    hi = math.inf
    t = 1.0
    for _ in range(LS_MAX):
        d1, d2 = _slope(PH, z, xd, t, bd, dd)
        if abs(d1) <= 1e-12 * abs(slope0):
            return t
        if d1 < 0.0:
            lo = t
        else:
            hi = t
        if hi - lo <= 1e-15 * hi:
            return lo
        nxt = t - d1 / d2
        if not (lo < nxt < hi):
            nxt = 0.5 * (lo + hi) if hi < math.inf else 2.0 * t
        t = nxt
    return lo


@njit(cache=True)
def _hvp(X, w, v, xv, out):
    """``out = v + X^T (w * (X v))`` over the rows with ``w_i > 0``."""
    for j in range(v.shape[0]):
        out[j] = v[j]
    for i in range(n_rows(X)):
        if w[i] > 0.0:
            xv[i] = w[i] * row_dot(X, i, v)
            row_axpy(X, i, xv[i], out)


@njit(cache=True, nogil=True)
def newton_advance(X, PH, beta, z, r, w, g, d, cg, xd, istate, fstate, tol, rec):
    """Advance the primal Newton-CG method by at most ``rec.shape[0]`` iterations (see the
    module docstring); returns the rows written.

    ``X`` the kernel matrix (dense or CSR triple, the constant column included), ``PH``
    the ReHU rows of :func:`solvers.plq_pieces.pack_pieces`; ``z, r, w, xd`` (n,) and
    ``g, d`` (d,) scratch; ``cg`` (3, d) the CG vectors.
    """
    n = z.shape[0]
    p = beta.shape[0]
    res = cg[0]
    dirn = cg[1]
    q = cg[2]
    for row in range(rec.shape[0]):
        k = istate[I_K]
        matvec(X, beta, z)
        loss, size, active = _pieces(PH, z, r, w)
        rmatvec(X, r, g)
        fstate[F_PASSES] += 2.0
        bb = 0.0
        gg = 0.0
        for j in range(p):
            g[j] += beta[j]
            bb += beta[j] * beta[j]
            gg += g[j] * g[j]
        f = 0.5 * bb + loss
        dual = f - 0.5 * gg
        err = ROUNDING * (math.sqrt(bb) + size)
        cert = 0.5 * (math.sqrt(gg) + err) ** 2
        if istate[I_RELATIVE] == 1:
            if dual > 0.0:
                cert /= dual
            elif f < 0.0:
                cert /= -f
            else:
                scale = max(abs(f), abs(dual))
                cert /= scale if scale > 0.0 else 1.0
        status = STATUS_RUNNING
        if cert <= tol:
            status = STATUS_CONVERGED
        elif k >= istate[I_STOP_AT]:
            status = STATUS_MAX_ITER
        if status == STATUS_RUNNING:
            # Truncated CG on (I + X^T W X) d = -g, from d = 0.
            for j in range(p):
                d[j] = 0.0
                res[j] = -g[j]
                dirn[j] = -g[j]
            rr = gg
            target = (fstate[F_CG_RTOL] ** 2) * gg
            for _ in range(istate[I_CG_MAX]):
                if rr <= target:
                    break
                _hvp(X, w, dirn, xd, q)
                istate[I_HVP] += 1
                fstate[F_PASSES] += 2.0 * active / max(n, 1)
                alpha = rr / dot(dirn, q)
                rr_new = 0.0
                for j in range(p):
                    d[j] += alpha * dirn[j]
                    res[j] -= alpha * q[j]
                    rr_new += res[j] * res[j]
                ratio = rr_new / rr
                for j in range(p):
                    dirn[j] = res[j] + ratio * dirn[j]
                rr = rr_new
            slope0 = dot(g, d)
            t = 0.0
            if slope0 < 0.0:
                matvec(X, d, xd)
                fstate[F_PASSES] += 1.0
                t = _line_search(PH, z, xd, dot(beta, d), dot(d, d), slope0)
            if t * math.sqrt(dot(d, d)) <= 1e-16 * math.sqrt(bb) or t <= 0.0:
                status = STATUS_STALLED  # no move float64 can make
            else:
                for j in range(p):
                    beta[j] += t * d[j]
                _record(
                    rec, row, k, f, cert, t * math.sqrt(dot(d, d)), STEP_NEWTON, active, dual,
                    istate, fstate,
                )  # fmt: skip
                istate[I_K] = k + 1
                continue
        _record(rec, row, k, f, cert, 0.0, STEP_NONE, active, dual, istate, fstate)
        istate[I_STATUS] = status
        return row + 1
    istate[I_STATUS] = STATUS_RUNNING
    return rec.shape[0]
