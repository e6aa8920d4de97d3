"""Frank-Wolfe, away-step FW and pairwise FW kernels.

Two problems, one kernel each, built from the shared pieces (:mod:`solvers.lmo`,
:mod:`solvers.active_set`, :mod:`solvers.steps`, :mod:`solvers.linalg`):

* :func:`svm_dual_advance`: the L2-loss SVM dual over the unit simplex,
  ``min_{alpha in simplex} ||A alpha||^2`` with ``A = [Z; I / sqrt(C)]`` and
  ``Z = [y_1 x_1, ..., y_n x_n]`` (Jaggi 2014, "An equivalence between the Lasso and
  support vector machines"; the seed report on FW/AFW/PFW for the L2-SVM). The kernel
  keeps ``w = Z alpha``, so a step costs O(d) and a gradient one pass over the rows; with
  a Gram-column cache (:mod:`solvers.gram_cache`) it keeps the gradient itself, updated
  in O(n) from the cached columns of the step's vertices.
* :func:`logreg_l1_advance`: mean logistic loss over the l1 ball of radius ``r``. The
  kernel keeps ``z = X x`` and takes ``X^T`` row by row (columns of ``X``), so a gradient
  is one pass over the nonzeros and a step costs one column of ``X``.

Methods (Lacoste-Julien & Jaggi 2015): ``METHOD_FW`` (vanilla), ``METHOD_AFW``
(away steps; ties go to FW) and ``METHOD_PFW`` (pairwise).

Kernel contract (shared by every family in :mod:`solvers`):

* all state lives in arrays owned by the caller and is mutated in place, so a run is
  paused by simply not calling the kernel and resumed by calling it again;
* a call runs at most ``max_rows`` iterations; iteration ``k`` writes row ``k`` of the
  trace into ``rec[row]``: the objective and certificate *at* ``x_k``, then the size and
  type of the step taken from ``x_k`` (``STEP_NONE`` on a final row);
* the call returns the number of rows written; ``istate[I_STATUS]`` says why it stopped.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from solvers.active_set import (
    active_count,
    away_gamma_max,
    away_update,
    fw_update,
    pairwise_update,
)
from solvers.gram_cache import cached_column
from solvers.linalg import n_rows, rmatvec, row_axpy, row_dot_long, row_row_dot
from solvers.lmo import l1_atom, l1_away, l1_lmo
from solvers.steps import (
    LINE_LOGISTIC,
    LINE_QUADRATIC,
    RULE_ADAPTIVE,
    RULE_ARMIJO,
    RULE_EXACT,
    logistic_pass,
    step_size,
)
from solvers.tags import (
    BASE_COLUMNS,
    STATUS_CONVERGED,
    STATUS_MAX_ITER,
    STATUS_NONFINITE,
    STATUS_RUNNING,
    STATUS_STALLED,
    STEP_AWAY,
    STEP_DROP,
    STEP_FW,
    STEP_NONE,
    STEP_PAIRWISE,
)

METHOD_FW = 0
METHOD_AFW = 1
METHOD_PFW = 2
METHOD_CODES = {"fw": METHOD_FW, "afw": METHOD_AFW, "pfw": METHOD_PFW}

# Integer state vector layout.
I_K = 0  # iteration counter: index of the current iterate x_k
I_STATUS = 1  # one of solvers.tags.STATUS_*
I_STOP_AT = 2  # record x_k without stepping once k reaches this
I_FUN_EVALS = 3  # cumulative evaluations of the objective along a line
I_METHOD = 4  # METHOD_*
I_RULE = 5  # solvers.steps.RULE_*
I_REFRESH = 6  # recompute the maintained product (w or z) every this many steps
I_GRAD_VALID = 7  # svm_dual_advance: 1 when g is the gradient at alpha (kept by updates)
I_PASSES = 8  # svm_dual_advance: cumulative passes over the data (gradients, Gram columns)
N_ISTATE = 9

# Record columns written by both kernels.
REC_ITER = 0
REC_OBJECTIVE = 1
REC_CERTIFICATE = 2
REC_STEP_SIZE = 3
REC_STEP_TYPE = 4
REC_ACTIVE = 5
REC_GRAD_EVALS = 6
REC_FUN_EVALS = 7
FW_RECORD_COLUMNS = (
    *BASE_COLUMNS,
    "grad_evals",
    "fun_evals",
)


@njit(cache=True, inline="always")
def _record(rec, row, k, f, gap, gamma, step_type, active, fun_evals, grad_evals):
    rec[row, REC_ITER] = k
    rec[row, REC_OBJECTIVE] = f
    rec[row, REC_CERTIFICATE] = gap
    rec[row, REC_STEP_SIZE] = gamma
    rec[row, REC_STEP_TYPE] = step_type
    rec[row, REC_ACTIVE] = active
    rec[row, REC_GRAD_EVALS] = grad_evals
    rec[row, REC_FUN_EVALS] = fun_evals


@njit(cache=True, inline="always")
def terminal_status(gap, tol, f, k, stop_at):
    """Status to stop with at this iterate, or STATUS_RUNNING to keep stepping (shared by
    every Frank-Wolfe kernel: fw, fw_variants, nuclear)."""
    if not (math.isfinite(f) and math.isfinite(gap)):
        return STATUS_NONFINITE
    if gap <= tol:
        return STATUS_CONVERGED
    if k >= stop_at:
        return STATUS_MAX_ITER
    return STATUS_RUNNING


@njit(cache=True, inline="always")
def _use_away(method, gap_fw, gap_away):
    """Direction choice: away (or pairwise) instead of a FW step."""
    if method == METHOD_FW:
        return False
    if method == METHOD_PFW:
        return True
    return gap_away > gap_fw


@njit(cache=True, nogil=True)
def svm_dual_advance(
    X, y, sqnorms, inv_c, alpha, w, g, istate, lstate, step_params, tol, rec, cache, xj
):
    """Advance FW/AFW/PFW on the L2-SVM dual by at most ``rec.shape[0]`` iterations.

    Parameters
    ----------
    X : dense (n, d) array or CSR triple
        Training points (with the constant feature already appended if wanted).
    y : (n,) float64 array of +-1 labels.
    sqnorms : (n,) float64 array, ``||x_i||^2``.
    inv_c : float, ``1 / C``.
    alpha : (n,) float64, the iterate on the simplex (also its active-set weights).
    w : (d,) float64, ``Z alpha`` (kept in step with ``alpha``).
    g : (n,) float64, the gradient at ``alpha`` while ``istate[I_GRAD_VALID]`` is 1.
    istate : int64 array of length ``N_ISTATE``; lstate : float64 array of length 1
        (adaptive step's estimate of L); step_params : see :mod:`solvers.steps`.
    tol : float, stop when the FW gap is at most this.
    rec : (max_rows, len(FW_RECORD_COLUMNS)) float64 array receiving the rows.
    cache : the Gram-column cache ``(cols, slot_of, atom_of, stamp)`` of
        :mod:`solvers.gram_cache`. With at least two slots the gradient is updated from
        cached columns after each step (O(n) per step once the visited vertices are
        cached) and recomputed from scratch only every ``istate[I_REFRESH]`` steps; with
        no slots every iteration recomputes it (one pass over the data).
    xj : (d,) float64 zeroed scratch.

    Returns
    -------
    rows : int, the number of rows written.
    """
    cols, slot_of, atom_of, stamp = cache
    cached = cols.shape[0] >= 2
    n = n_rows(X)
    method = istate[I_METHOD]
    rule = istate[I_RULE]
    max_rows = rec.shape[0]
    empty = alpha[:0]
    for row in range(max_rows):
        k = istate[I_K]
        full = not cached or istate[I_GRAD_VALID] == 0
        if k > 0 and istate[I_REFRESH] > 0 and k % istate[I_REFRESH] == 0:
            # Rebuild w = Z alpha (and g) from scratch: updates drift over many steps.
            for i in range(n):
                g[i] = alpha[i] * y[i]
            rmatvec(X, g, w)
            full = True
        if full:
            istate[I_PASSES] += 1
            istate[I_GRAD_VALID] = 1
        # One sweep: (on a full pass) the gradient 2 (Z^T w + alpha / C), fused with the
        # simplex LMO, the away oracle and the active-set count (solvers.lmo has the same
        # oracles as standalone pieces).
        ga = 0.0
        aa = 0.0
        s = np.int64(0)  # (np.int64: no Literal-typed helper calls, linalg docstring)
        v = np.int64(-1)
        g_min = np.inf
        g_max = -np.inf
        active = 0
        for i in range(n):
            if full:
                gi = 2.0 * (y[i] * row_dot_long(X, i, w) + alpha[i] * inv_c)
                g[i] = gi
            else:
                gi = g[i]
            if gi < g_min:
                g_min = gi
                s = i
            ai = alpha[i]
            if ai > 0.0:
                active += 1
                aa += ai * ai
                ga += gi * ai
                if gi > g_max:
                    g_max = gi
                    v = i
        ww = 0.0
        for j in range(w.shape[0]):
            ww += w[j] * w[j]
        f = ww + aa * inv_c
        gap = ga - g_min
        passes = istate[I_PASSES]
        status = terminal_status(gap, tol, f, k, istate[I_STOP_AT])
        if status != STATUS_RUNNING:
            _record(rec, row, k, f, gap, 0.0, STEP_NONE, active, istate[I_FUN_EVALS], passes)
            istate[I_STATUS] = status
            return row + 1
        away = _use_away(method, gap, g_max - ga)
        if not away:
            # d = e_s - alpha; Z_s^T w = g_s / 2 - alpha_s / C.
            gd = -gap
            dnorm2 = 1.0 - 2.0 * alpha[s] + aa
            zw = 0.5 * g[s] - alpha[s] * inv_c
            curv = sqnorms[s] - 2.0 * zw + ww + dnorm2 * inv_c
            gmax = 1.0
        elif method == METHOD_AFW:
            # d = alpha - e_v.
            gd = ga - g[v]
            dnorm2 = 1.0 - 2.0 * alpha[v] + aa
            zw = 0.5 * g[v] - alpha[v] * inv_c
            curv = sqnorms[v] - 2.0 * zw + ww + dnorm2 * inv_c
            gmax = away_gamma_max(alpha[v])
        else:
            # d = e_s - e_v.
            gd = g[s] - g[v]
            dnorm2 = 2.0
            curv = sqnorms[s] + sqnorms[v] - 2.0 * y[s] * y[v] * row_row_dot(X, s, v)
            curv += 2.0 * inv_c
            gmax = alpha[v]
        if gd >= 0.0:
            # Not a descent direction (s == v, or the gap is at rounding level): no step
            # can make progress, so stop rather than move weight along a zero direction.
            _record(rec, row, k, f, gap, 0.0, STEP_NONE, active, istate[I_FUN_EVALS], passes)
            istate[I_STATUS] = STATUS_STALLED
            return row + 1
        start = 2.0 / (k + 2.0) if method == METHOD_FW else gmax
        gamma, evals = step_size(
            rule,
            k,
            gd,
            dnorm2,
            gmax,
            start,
            np.int64(LINE_QUADRATIC),
            f,
            curv,
            empty,
            empty,
            empty,
            step_params,
            lstate,
        )
        istate[I_FUN_EVALS] += evals
        if gamma <= 0.0:
            _record(rec, row, k, f, gap, 0.0, STEP_NONE, active, istate[I_FUN_EVALS], passes)
            istate[I_STATUS] = STATUS_STALLED
            return row + 1
        if not away:
            for j in range(w.shape[0]):
                w[j] *= 1.0 - gamma
            row_axpy(X, s, gamma * y[s], w)
            fw_update(alpha, s, gamma)
            kind = STEP_FW
        elif method == METHOD_AFW:
            for j in range(w.shape[0]):
                w[j] *= 1.0 + gamma
            row_axpy(X, v, -gamma * y[v], w)
            kind = STEP_DROP if away_update(alpha, v, gamma, gmax) else STEP_AWAY
        else:
            row_axpy(X, s, gamma * y[s], w)
            row_axpy(X, v, -gamma * y[v], w)
            kind = STEP_DROP if pairwise_update(alpha, s, v, gamma, gmax) else STEP_PAIRWISE
        _record(rec, row, k, f, gap, gamma, kind, active, istate[I_FUN_EVALS], passes)
        istate[I_K] = k + 1
        if cached:
            # g(alpha') from g(alpha): alpha' = a alpha + b e_s + c e_v, so
            # g' = a g + 2 b (Z^T z_s + e_s / C) + 2 c (Z^T z_v + e_v / C).
            a = 1.0
            b = 0.0
            c = 0.0
            if not away:
                a = 1.0 - gamma
                b = gamma
            elif method == METHOD_AFW:
                a = 1.0 + gamma
                c = -gamma
            else:
                b = gamma
                c = -gamma
            now = k + 1
            if b != 0.0:
                slot_s, miss = cached_column(X, y, s, now, cols, slot_of, atom_of, stamp, xj)
                istate[I_PASSES] += miss
            if c != 0.0:
                slot_v, miss = cached_column(X, y, v, now, cols, slot_of, atom_of, stamp, xj)
                istate[I_PASSES] += miss
            if b != 0.0 and c != 0.0:
                # cached_column never evicts a slot stamped `now`: both columns are live.
                col_s = cols[slot_s]
                col_v = cols[slot_v]
                for i in range(n):
                    g[i] = a * g[i] + 2.0 * (b * col_s[i] + c * col_v[i])
            elif b != 0.0:
                col_s = cols[slot_s]
                for i in range(n):
                    g[i] = a * g[i] + 2.0 * b * col_s[i]
            else:
                col_v = cols[slot_v]
                for i in range(n):
                    g[i] = a * g[i] + 2.0 * c * col_v[i]
            if b != 0.0:
                g[s] += 2.0 * b * inv_c
            if c != 0.0:
                g[v] += 2.0 * c * inv_c
    istate[I_STATUS] = STATUS_RUNNING
    return max_rows


@njit(cache=True, nogil=True)
def logreg_l1_advance(XT, y, radius, mu, x, z, g, r, zd, istate, lstate, step_params, tol, rec):
    """Advance FW/AFW/PFW on l1-constrained logistic regression.

    Minimizes ``f(x) = mean_i log(1 + exp(-y_i a_i^T x))`` subject to
    ``||x||_1 <= radius``.

    Parameters
    ----------
    XT : dense (p, n) array or CSR triple of ``X^T`` (rows are the columns of ``X``).
    y : (n,) float64 array of +-1 labels.
    radius : float, the l1 radius (> 0).
    mu : (2 p,) float64 atom weights (``x = radius (mu[0::2] - mu[1::2])``).
    x : (p,) float64 iterate; z : (n,) float64, ``X x`` kept in step.
    g : (p,) scratch gradient; r : (n,) scratch residual ``dloss/dz``;
    zd : (n,) scratch for ``X d``.
    istate, lstate, step_params, tol, rec : as in :func:`svm_dual_advance`.
    """
    n = z.shape[0]
    p = x.shape[0]
    method = istate[I_METHOD]
    rule = istate[I_RULE]
    max_rows = rec.shape[0]
    inv_n = 1.0 / n
    for row in range(max_rows):
        k = istate[I_K]
        if k > 0 and istate[I_REFRESH] > 0 and k % istate[I_REFRESH] == 0:
            # Rebuild x from its atom weights and z = X x from scratch (drift control).
            for j in range(p):
                x[j] = radius * (mu[2 * j] - mu[2 * j + 1])
            rmatvec(XT, x, z)
        f = logistic_pass(y, z, inv_n, r)
        gx = 0.0
        xx = 0.0
        for j in range(p):
            g[j] = row_dot_long(XT, j, r)
            gx += g[j] * x[j]
            xx += x[j] * x[j]
        a_s = l1_lmo(g, radius)
        js, vs = l1_atom(a_s, radius)
        gs = vs * g[js]
        gap = gx - gs
        active = active_count(mu)
        status = terminal_status(gap, tol, f, k, istate[I_STOP_AT])
        if status != STATUS_RUNNING:
            _record(rec, row, k, f, gap, 0.0, STEP_NONE, active, istate[I_FUN_EVALS], k + 1)
            istate[I_STATUS] = status
            return row + 1
        if method == METHOD_FW:
            # Vanilla FW never steps away: skip the away oracle's pass over the atoms.
            a_v, jv, vv, gv = np.int64(-1), np.int64(0), 0.0, 0.0
            away = False
        else:
            a_v = l1_away(g, mu, radius)
            jv, vv = l1_atom(a_v, radius)
            gv = vv * g[jv]
            away = _use_away(method, gap, gv - gx)
        # X d is needed only by rules that evaluate f along d; the others update z directly.
        line = rule == RULE_ARMIJO or rule == RULE_EXACT or rule == RULE_ADAPTIVE
        if not away:
            # d = s - x
            if line:
                for i in range(n):
                    zd[i] = -z[i]
                row_axpy(XT, js, vs, zd)
            gd = -gap
            dnorm2 = radius * radius - 2.0 * vs * x[js] + xx
            gmax = 1.0
        elif method == METHOD_AFW:
            # d = x - v
            if line:
                for i in range(n):
                    zd[i] = z[i]
                row_axpy(XT, jv, -vv, zd)
            gd = gx - gv
            dnorm2 = xx - 2.0 * vv * x[jv] + radius * radius
            gmax = away_gamma_max(mu[a_v])
        else:
            # d = s - v
            if line:
                zd[:] = 0.0
                row_axpy(XT, js, vs, zd)
                row_axpy(XT, jv, -vv, zd)
            gd = gs - gv
            if js != jv:
                dnorm2 = 2.0 * radius * radius
            else:
                dnorm2 = (vs - vv) * (vs - vv)
            gmax = mu[a_v]
        if gd >= 0.0:
            # Not a descent direction (s == v, or the gap is at rounding level): no step
            # can make progress, so stop rather than move weight along a zero direction.
            _record(rec, row, k, f, gap, 0.0, STEP_NONE, active, istate[I_FUN_EVALS], k + 1)
            istate[I_STATUS] = STATUS_STALLED
            return row + 1
        start = 2.0 / (k + 2.0) if method == METHOD_FW else gmax
        gamma, evals = step_size(
            rule,
            k,
            gd,
            dnorm2,
            gmax,
            start,
            np.int64(LINE_LOGISTIC),
            f,
            0.0,
            z,
            zd,
            y,
            step_params,
            lstate,
        )
        istate[I_FUN_EVALS] += evals
        if gamma <= 0.0:
            _record(rec, row, k, f, gap, 0.0, STEP_NONE, active, istate[I_FUN_EVALS], k + 1)
            istate[I_STATUS] = STATUS_STALLED
            return row + 1
        if not away:
            for i in range(n):
                z[i] *= 1.0 - gamma
            row_axpy(XT, js, gamma * vs, z)
            for j in range(p):
                x[j] *= 1.0 - gamma
            x[js] += gamma * vs
            fw_update(mu, a_s, gamma)
            kind = STEP_FW
        elif method == METHOD_AFW:
            for i in range(n):
                z[i] *= 1.0 + gamma
            row_axpy(XT, jv, -gamma * vv, z)
            for j in range(p):
                x[j] *= 1.0 + gamma
            x[jv] -= gamma * vv
            kind = STEP_DROP if away_update(mu, a_v, gamma, gmax) else STEP_AWAY
        else:
            row_axpy(XT, js, gamma * vs, z)
            row_axpy(XT, jv, -gamma * vv, z)
            x[js] += gamma * vs
            x[jv] -= gamma * vv
            kind = STEP_DROP if pairwise_update(mu, a_s, a_v, gamma, gmax) else STEP_PAIRWISE
        _record(rec, row, k, f, gap, gamma, kind, active, istate[I_FUN_EVALS], k + 1)
        istate[I_K] = k + 1
    istate[I_STATUS] = STATUS_RUNNING
    return max_rows
