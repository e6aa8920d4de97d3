"""Stochastic Frank-Wolfe baselines of TUFW on l1-constrained GLM problems.

Problem, losses and state layouts: :mod:`solvers.glm_losses`, :mod:`solvers.glm_fw_state`.

* :func:`spider_advance`: SPIDER-FW (Yurtsever, Sra & Cevher, "Conditional gradient
  methods via stochastic path-integrated differential estimator", ICML 2019): the full
  gradient at the start of every epoch, SARAH/SPIDER corrections
  ``v += (1/b) sum_{i in S} [grad f_i(x_k) - grad f_i(x_{k-1})]`` inside it.
* :func:`csfw_advance`: constant-batch stochastic FW (Negiar, Dresdner, Tsai, El Ghaoui,
  Locatello, Freund & Pedregosa, "Stochastic Frank-Wolfe for constrained finite-sum
  minimization", ICML 2020), the SAG-type variant: a memory ``alpha_i = l'(a_i^T x)/n`` per
  sample, ``r = sum_i alpha_i a_i`` updated for a batch of ``b`` samples per iteration.

Like TUFW (:mod:`solvers.tufw`), these kernels never compute the exact gap: they write one
log row per iteration, which :func:`solvers.glm_fw_exact.replay_eval` replays.
``@njit(cache=True, nogil=True)``; dense or CSR data through :mod:`solvers.linalg`.
"""

from __future__ import annotations

import math

from numba import njit

from solvers.glm_fw_state import (
    I_BATCH,
    I_EPOCH,
    I_HORIZON,
    I_K,
    I_LOSS,
    I_MAX_CHECKS,
    I_REPLACE,
    I_SAMPLES,
    I_STATUS,
    I_STEP,
    I_STOP_AT,
    _checkpoint,
    _final_log,
    _fw_move,
    _log_row,
    _open_loop,
    _pick,
)
from solvers.glm_losses import loss_d12
from solvers.linalg import n_rows, row_axpy, row_dot
from solvers.lmo import l1_vertex
from solvers.tags import STATUS_NONFINITE, STATUS_RUNNING


# -- SPIDER-FW ----------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def spider_advance(X, y, radius, x, xprev, v, perm, rng, istate, fstate, log):
    """Advance SPIDER-FW by at most ``log.shape[0]`` iterations (one log row each).

    At iterations ``k`` with ``k % I_EPOCH == 0``: ``v = grad F(x_k)`` (n samples); else
    ``v += (1/b) sum_{i in S} (l_i'(a_i^T x_k) - l_i'(a_i^T x_{k-1})) a_i`` for a batch
    ``S`` of ``b = I_BATCH`` samples (2 b derivative evaluations). ``xprev`` holds
    ``x_{k-1}``. Other arguments as in :func:`solvers.tufw.tufw_advance`.
    """
    n = n_rows(X)
    inv_n = 1.0 / n
    loss = istate[I_LOSS]
    b = istate[I_BATCH]
    checks = 0
    istate[I_STATUS] = STATUS_RUNNING
    for row in range(log.shape[0]):
        k = istate[I_K]
        if k >= istate[I_STOP_AT]:
            return _final_log(log, row, istate, k)
        if k % istate[I_EPOCH] == 0:
            v[:] = 0.0
            for i in range(n):
                d1, _ = loss_d12(loss, y[i], row_dot(X, i, x))
                row_axpy(X, i, d1 * inv_n, v)
            istate[I_SAMPLES] += n
        else:
            inv_b = 1.0 / b
            for a in range(b):
                i = _pick(rng, perm, a, n, istate[I_REPLACE])
                d_new, _ = loss_d12(loss, y[i], row_dot(X, i, x))
                d_old, _ = loss_d12(loss, y[i], row_dot(X, i, xprev))
                row_axpy(X, i, (d_new - d_old) * inv_b, v)
            istate[I_SAMPLES] += 2 * b
        j, s, est_gap = l1_vertex(v, x, radius)
        gamma = _open_loop(istate[I_STEP], k, istate[I_HORIZON])
        check = _checkpoint(istate, fstate, k)
        if not math.isfinite(est_gap):
            _log_row(log, row, k, 0.0, j, 0.0, istate[I_SAMPLES], 0, est_gap, True)
            istate[I_STATUS] = STATUS_NONFINITE
            return row + 1
        _log_row(
            log, row, k, gamma, j, 1.0 if s > 0.0 else -1.0, istate[I_SAMPLES], 0, est_gap, check
        )
        xprev[:] = x
        _fw_move(x, gamma, j, s)
        istate[I_K] = k + 1
        if check:
            checks += 1
            if istate[I_MAX_CHECKS] > 0 and checks >= istate[I_MAX_CHECKS]:
                return row + 1
    return log.shape[0]


# -- CSFW ---------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def csfw_advance(X, y, radius, x, alpha, r, perm, rng, istate, fstate, log):
    """Advance constant-batch stochastic FW by at most ``log.shape[0]`` iterations.

    Each iteration draws ``b = I_BATCH`` samples (with replacement by default, as the
    reference implementation does), sets ``alpha_i = l_i'(a_i^T x) / n`` for them and keeps
    ``r = sum_i alpha_i a_i`` in step; the FW vertex is the LMO of ``r``. ``alpha`` starts at
    0 (so does ``r``). Other arguments as in :func:`solvers.tufw.tufw_advance`.
    """
    n = n_rows(X)
    inv_n = 1.0 / n
    loss = istate[I_LOSS]
    b = istate[I_BATCH]
    checks = 0
    istate[I_STATUS] = STATUS_RUNNING
    for row in range(log.shape[0]):
        k = istate[I_K]
        if k >= istate[I_STOP_AT]:
            return _final_log(log, row, istate, k)
        for a in range(b):
            i = _pick(rng, perm, a, n, istate[I_REPLACE])
            d1, _ = loss_d12(loss, y[i], row_dot(X, i, x))
            new = d1 * inv_n
            row_axpy(X, i, new - alpha[i], r)
            alpha[i] = new
        istate[I_SAMPLES] += b
        j, s, est_gap = l1_vertex(r, x, radius)
        gamma = _open_loop(istate[I_STEP], k, istate[I_HORIZON])
        check = _checkpoint(istate, fstate, k)
        if not math.isfinite(est_gap):
            _log_row(log, row, k, 0.0, j, 0.0, istate[I_SAMPLES], 0, est_gap, True)
            istate[I_STATUS] = STATUS_NONFINITE
            return row + 1
        _log_row(
            log, row, k, gamma, j, 1.0 if s > 0.0 else -1.0, istate[I_SAMPLES], 0, est_gap, check
        )
        _fw_move(x, gamma, j, s)
        istate[I_K] = k + 1
        if check:
            checks += 1
            if istate[I_MAX_CHECKS] > 0 and checks >= istate[I_MAX_CHECKS]:
                return row + 1
    return log.shape[0]
