"""Exact objective and FW gap of l1-constrained GLM problems: replay, and plain FW.

Problem, losses and state layouts: :mod:`solvers.glm_losses`, :mod:`solvers.glm_fw_state`.

* :func:`replay_eval`: the estimated-gradient kernels (TUFW, SPIDER-FW, CSFW) never
  compute the exact gap; they write one log row per iteration and this kernel later
  replays the steps on a copy of the iterate (bitwise the same arithmetic, ``_fw_move``)
  keeping ``z = X x`` in O(n + nnz of column j) per step, and evaluates the exact
  objective and FW gap where asked. The caller times the kernels and the replay
  separately, so evaluation is never solver time.
* :func:`fw_glm_advance`: plain FW with the exact gradient for any loss code, with the
  open-loop steps and Pedregosa, Negiar, Askari & Jaggi's backtracking estimate of ``L``
  ("Linearly convergent Frank-Wolfe with backtracking line-search", AISTATS 2020) on the
  loss's own line model. It computes the exact gap itself (it needs the gradient anyway).

Both write trace rows with the columns ``OUT_*`` (:data:`OUT_COLUMNS`); the replay keeps
its own state (``E_*`` floats, ``J_*`` integers). ``@njit(cache=True, nogil=True)``; dense
or CSR data through :mod:`solvers.linalg`.
"""

from __future__ import annotations

import math

from numba import njit

from solvers.glm_fw_state import (
    F_ETA,
    F_LEST,
    F_MAX_TRIALS,
    F_SUM_GAP,
    F_TAU,
    I_FUN_EVALS,
    I_HORIZON,
    I_K,
    I_LOSS,
    I_METRIC_AVG,
    I_REFRESH_Z,
    I_SAMPLES,
    I_STATUS,
    I_STEP,
    I_STOP_AT,
    I_TOL_AVG,
    LOG_CHECK,
    LOG_EST_GAP,
    LOG_GAMMA,
    LOG_J,
    LOG_K,
    LOG_REFRESHES,
    LOG_SAMPLES,
    LOG_SIGN,
    STEP_BACKTRACK,
    _fw_move,
    _open_loop,
)
from solvers.glm_losses import _line_value, loss_pass
from solvers.linalg import rmatvec, row_axpy, row_dot
from solvers.lmo import l1_vertex
from solvers.tags import (
    BASE_COLUMNS,
    STATUS_CONVERGED,
    STATUS_MAX_ITER,
    STATUS_NONFINITE,
    STATUS_RUNNING,
    STATUS_STALLED,
    STEP_FW,
    STEP_NONE,
)

# Trace columns of every GLM FW solver (replay_eval and fw_glm_advance write them).
OUT_ITER = 0
OUT_OBJECTIVE = 1
OUT_CERTIFICATE = 2
OUT_STEP_SIZE = 3
OUT_STEP_TYPE = 4
OUT_ACTIVE = 5
OUT_FW_GAP = 6
OUT_AVG_GAP = 7
OUT_EST_GAP = 8
OUT_SAMPLES = 9
OUT_REFRESHES = 10
OUT_PASSES = 11
OUT_GRAD_EVALS = 12
OUT_FUN_EVALS = 13
OUT_COLUMNS = (
    *BASE_COLUMNS,
    "fw_gap",
    "avg_fw_gap",
    "est_gap",
    "samples",
    "refreshes",
    "data_passes",
    "grad_evals",
    "fun_evals",
)

# Replay state.
E_SUM_GAP = 0  # float: sum of the exact gaps of every evaluated iterate
E_COUNT = 1  # float: how many iterates went into E_SUM_GAP
N_ESTATE = 2
J_K = 0  # int: index of the replayed iterate
J_ALL = 1  # 1: evaluate every iterate (running average), 0: checkpoints only
J_TOL_AVG = 2  # 1: tolerance on the running average, 0: on the gap
J_METRIC_AVG = 3  # 1: certificate column = running average, 0: = gap
J_SINCE_Z = 4  # steps since z = X x was rebuilt
J_Z_EVERY = 5  # rebuild z every this many steps
J_STATUS = 6  # STATUS_CONVERGED / STATUS_NONFINITE once found, else STATUS_RUNNING
J_USED = 7  # log rows consumed by the last call
N_JSTATE = 8


# -- exact evaluation by replay -----------------------------------------------------------
@njit(cache=True, inline="always")
def _exact_gap(XT, y, loss, radius, x, z, r, g, inv_n):
    """Objective, exact FW gap and nonzeros of ``x`` from ``z = X x`` (one data pass)."""
    f = loss_pass(loss, y, z, inv_n, r)
    gx = 0.0
    best = 0.0
    active = 0
    for c in range(x.shape[0]):
        g[c] = row_dot(XT, c, r)
        gx += g[c] * x[c]
        if abs(g[c]) > best:
            best = abs(g[c])
        if x[c] != 0.0:
            active += 1
    return f, gx + radius * best, active


@njit(cache=True, nogil=True)
def replay_eval(XT, y, loss, radius, x, z, r, g, log, nlog, n, estate, jstate, tol, out):
    """Replay ``log[:nlog]`` from ``x`` (``z = X x``), evaluating exact objective and gap.

    Evaluates every iterate (``J_ALL``: needed by the running average) or only
    checkpoints; writes a trace row (``OUT_COLUMNS``) at each checkpoint and at the first
    iterate meeting the tolerance (then stops there: ``J_STATUS = STATUS_CONVERGED`` and
    ``x`` is that iterate). ``XT`` is ``X^T`` (rows = features). Returns rows written.
    """
    inv_n = 1.0 / n
    rows = 0
    jstate[J_STATUS] = STATUS_RUNNING
    for e in range(nlog):
        k = int(log[e, LOG_K])
        check = log[e, LOG_CHECK] != 0.0
        evaluate = check or jstate[J_ALL] != 0
        if evaluate:
            if jstate[J_ALL] == 0:
                # Checkpoints only: z = X x from scratch (the gradient costs a pass anyway).
                rmatvec(XT, x, z)
            f, gap, active = _exact_gap(XT, y, loss, radius, x, z, r, g, inv_n)
            if jstate[J_ALL] != 0:
                estate[E_SUM_GAP] += gap
                estate[E_COUNT] += 1.0
                avg = estate[E_SUM_GAP] / estate[E_COUNT]
            else:
                avg = math.nan
            crit = avg if jstate[J_TOL_AVG] != 0 else gap
            bad = not (math.isfinite(f) and math.isfinite(gap))
            done = crit <= tol
            if check or done or bad:
                gamma = log[e, LOG_GAMMA]
                sign = log[e, LOG_SIGN]
                last = done or bad or sign == 0.0
                o = out[rows]
                o[OUT_ITER] = k
                o[OUT_OBJECTIVE] = f
                o[OUT_CERTIFICATE] = avg if jstate[J_METRIC_AVG] != 0 else gap
                o[OUT_STEP_SIZE] = 0.0 if last else gamma
                o[OUT_STEP_TYPE] = STEP_NONE if last else STEP_FW
                o[OUT_ACTIVE] = active
                o[OUT_FW_GAP] = gap
                o[OUT_AVG_GAP] = avg
                o[OUT_EST_GAP] = log[e, LOG_EST_GAP]
                o[OUT_SAMPLES] = log[e, LOG_SAMPLES]
                o[OUT_REFRESHES] = log[e, LOG_REFRESHES]
                o[OUT_PASSES] = log[e, LOG_SAMPLES] * inv_n
                o[OUT_GRAD_EVALS] = math.floor(log[e, LOG_SAMPLES] * inv_n)
                o[OUT_FUN_EVALS] = 0.0
                rows += 1
            if bad or done:
                jstate[J_STATUS] = STATUS_NONFINITE if bad else STATUS_CONVERGED
                jstate[J_K] = k
                jstate[J_USED] = e + 1
                return rows
        sign = log[e, LOG_SIGN]
        if sign == 0.0:  # final row: no step
            jstate[J_K] = k
            continue
        gamma = log[e, LOG_GAMMA]
        j = int(log[e, LOG_J])
        vj = radius if sign > 0.0 else -radius
        if jstate[J_ALL] != 0:
            # Every iterate is evaluated: keep z = X x in step, O(n + nnz of column j).
            om = 1.0 - gamma
            for i in range(z.shape[0]):
                z[i] *= om
            row_axpy(XT, j, gamma * vj, z)
        _fw_move(x, gamma, j, vj)
        jstate[J_K] = k + 1
        if jstate[J_ALL] != 0:
            jstate[J_SINCE_Z] += 1
            if jstate[J_Z_EVERY] > 0 and jstate[J_SINCE_Z] >= jstate[J_Z_EVERY]:
                rmatvec(XT, x, z)
                jstate[J_SINCE_Z] = 0
    jstate[J_USED] = nlog
    return rows


# -- plain FW with the exact gradient ------------------------------------------------------
@njit(cache=True, nogil=True)
def fw_glm_advance(XT, y, radius, x, z, r, g, zd, istate, fstate, tol, rec):
    """Advance FW with the exact gradient by at most ``rec.shape[0]`` iterations.

    One trace row (``OUT_COLUMNS``) per iterate: objective, exact gap, running average of
    the gap. Stops when the gap (or, with ``I_TOL_AVG``, its running average) is at most
    ``tol``. Steps: ``OL_*`` open loop or ``STEP_BACKTRACK`` (Pedregosa et al. 2020: try
    ``gamma = min(gap / (M ||d||^2), 1)`` with ``M = eta L``, accept when
    ``F(x + gamma d) <= F(x) - gamma gap + gamma^2 M ||d||^2 / 2``, else ``M *= tau``).

    ``XT`` is ``X^T`` (rows = features); ``z = X x`` is kept in step (rebuilt every
    ``I_REFRESH_Z`` steps); ``r`` (n,), ``g`` (p,), ``zd`` (n,) are scratch.
    """
    n = z.shape[0]
    inv_n = 1.0 / n
    loss = istate[I_LOSS]
    step = istate[I_STEP]
    for row in range(rec.shape[0]):
        k = istate[I_K]
        if k > 0 and istate[I_REFRESH_Z] > 0 and k % istate[I_REFRESH_Z] == 0:
            rmatvec(XT, x, z)
        f, gap, active = _exact_gap(XT, y, loss, radius, x, z, r, g, inv_n)
        istate[I_SAMPLES] += n
        fstate[F_SUM_GAP] += gap
        avg = fstate[F_SUM_GAP] / (k + 1.0)
        j, v, _ = l1_vertex(g, x, radius)
        o = rec[row]
        o[OUT_ITER] = k
        o[OUT_OBJECTIVE] = f
        o[OUT_CERTIFICATE] = avg if istate[I_METRIC_AVG] != 0 else gap
        o[OUT_ACTIVE] = active
        o[OUT_FW_GAP] = gap
        o[OUT_AVG_GAP] = avg
        o[OUT_EST_GAP] = gap
        o[OUT_REFRESHES] = 0.0
        o[OUT_GRAD_EVALS] = k + 1
        status = STATUS_RUNNING
        if not (math.isfinite(f) and math.isfinite(gap)):
            status = STATUS_NONFINITE
        elif (avg if istate[I_TOL_AVG] != 0 else gap) <= tol:
            status = STATUS_CONVERGED
        elif k >= istate[I_STOP_AT]:
            status = STATUS_MAX_ITER
        gamma = 0.0
        if status == STATUS_RUNNING:
            if step == STEP_BACKTRACK:
                xx = 0.0
                for c in range(x.shape[0]):
                    xx += x[c] * x[c]
                dnorm2 = v * v - 2.0 * v * x[j] + xx
                for i in range(n):
                    zd[i] = -z[i]
                row_axpy(XT, j, v, zd)
                M = fstate[F_ETA] * fstate[F_LEST]
                trials = int(fstate[F_MAX_TRIALS])
                for _ in range(trials):
                    gamma = min(gap / (M * dnorm2), 1.0) if dnorm2 > 0.0 else 0.0
                    istate[I_FUN_EVALS] += 1
                    istate[I_SAMPLES] += n
                    fq = f - gamma * gap + 0.5 * gamma * gamma * M * dnorm2
                    if _line_value(loss, y, z, zd, gamma, inv_n) <= fq:
                        break
                    M *= fstate[F_TAU]
                    gamma = 0.0
                fstate[F_LEST] = M
            else:
                gamma = _open_loop(step, k, istate[I_HORIZON])
            if not (gamma > 0.0):
                status = STATUS_STALLED
        o[OUT_SAMPLES] = istate[I_SAMPLES]
        o[OUT_PASSES] = istate[I_SAMPLES] * inv_n
        o[OUT_FUN_EVALS] = istate[I_FUN_EVALS]
        if status != STATUS_RUNNING:
            o[OUT_STEP_SIZE] = 0.0
            o[OUT_STEP_TYPE] = STEP_NONE
            istate[I_STATUS] = status
            return row + 1
        o[OUT_STEP_SIZE] = gamma
        o[OUT_STEP_TYPE] = STEP_FW
        om = 1.0 - gamma
        for i in range(n):
            z[i] *= om
        row_axpy(XT, j, gamma * v, z)
        _fw_move(x, gamma, j, v)
        istate[I_K] = k + 1
    istate[I_STATUS] = STATUS_RUNNING
    return rec.shape[0]
