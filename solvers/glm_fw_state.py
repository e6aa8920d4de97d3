"""The state the l1-constrained GLM Frank-Wolfe kernels share, and their per-iteration pieces.

The kernels of :mod:`solvers.tufw` (TUFW: Xiong & Freund, "Using Taylor-approximated
gradients to improve the Frank-Wolfe method for empirical risk minimization", SIAM J.
Optim.), :mod:`solvers.stochastic_fw` (SPIDER-FW, CSFW) and :mod:`solvers.glm_fw_exact`
(replay evaluation, plain FW) run on ``min_{||x||_1 <= r} F(x)`` with one integer-state
layout (``I_*``; unused slots stay 0), one float-state layout (``F_*``), the step codes
(``OL_*`` open-loop rules, ``STEP_TAYLOR``, ``STEP_BACKTRACK``) and, for the
estimated-gradient kernels, one log row per iteration (``LOG_*``: the step ``gamma``, the
vertex ``(j, sign)`` and the work counters) that :func:`solvers.glm_fw_exact.replay_eval`
replays.

The pieces every iteration runs are here too: the open-loop step sizes (the l1 ball's
LMO is :func:`solvers.lmo.l1_vertex`), the FW move (``_fw_move``: the kernels and the
replay share this arithmetic, bitwise), the checkpoint schedule, the log rows, and
sampling (``_pick``: uniform with replacement or a partial Fisher-Yates shuffle) from a
splitmix64 generator whose state lives in a caller-owned ``uint64`` array, so runs are
reproducible, resumable and independent of the thread they run on (numba's own generator
state is per thread). ``@njit(cache=True, inline="always")``."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from solvers.tags import (  # noqa: F401  (OL_* and OPEN_LOOP_CODES: re-exported)
    OL_CONSTANT_SQRT,
    OL_DIMINISHING,
    OL_NONCONVEX,
    OL_ONE,
    OPEN_LOOP_CODES,
    STATUS_MAX_ITER,
)

# Step codes of the GLM FW kernels (independent of solvers.steps' codes).
STEP_TAYLOR = 10  # (B-6): min(cap_k, g^T (x - s) / d^T H d) on the Taylor model
STEP_BACKTRACK = 11  # Pedregosa et al. (2020) backtracking on the exact objective

# Integer state (one layout for every GLM FW kernel; unused slots stay 0).
I_K = 0  # index of the current iterate
I_STATUS = 1  # solvers.tags.STATUS_*
I_STOP_AT = 2  # log x_k without stepping once k reaches this
I_LOSS = 3  # LOSS_*
I_STEP = 4  # OL_* or STEP_TAYLOR / STEP_BACKTRACK
I_CAP = 5  # OL_* cap of STEP_TAYLOR
I_HORIZON = 6  # K of the K-rules and of the constant step
I_RULE = 7  # TAYLOR_*
I_CEIL = 8  # 1: round batch sizes / periods up, 0: down
I_OFFSET = 9  # use k + offset in the rule formulas
I_REPLACE = 10  # 1: draw batches with replacement
I_SAMPLES = 11  # cumulative per-sample derivative evaluations
I_REFRESHES = 12  # cumulative Taylor-point resets
I_H_EVERY = 13  # rebuild h = H x every this many iterations (0 = never)
I_HH_PASSES = 14  # rebuild q, H from t after this many n partial resets (0 = never)
I_SINCE_REBUILD = 15  # partial resets since the last rebuild of q, H
I_INIT = 16  # 0 until the state was built at x_0
I_EVAL_EVERY = 17  # checkpoint spacing (iterations), at least
I_NEXT_CHECK = 18  # next checkpoint iteration
I_MAX_CHECKS = 19  # return after this many checkpoints (0 = only when the log is full)
I_BATCH = 20  # SPIDER-FW / CSFW batch size
I_EPOCH = 21  # SPIDER-FW epoch length
I_REBUILDS = 22  # number of from-scratch builds of q, H (TUFW)
I_REFRESH_Z = 23  # fw_glm_advance: rebuild z = X x every this many steps (0 = never)
I_TOL_AVG = 24  # fw_glm_advance: 1 = stop on the running-average gap
I_METRIC_AVG = 25  # fw_glm_advance: 1 = certificate column holds the running average
I_FUN_EVALS = 26  # line-model evaluations (backtracking trials)
N_ISTATE = 27

# Float state.
F_KAPPA = 0  # x^T H x (TUFW)
F_EVAL_GROWTH = 1  # checkpoint spacing grows like k * growth
F_LEST = 2  # backtracking: current estimate of L
F_ETA = 3  # backtracking: shrink factor of L before each step
F_TAU = 4  # backtracking: growth factor on a failed trial
F_MAX_TRIALS = 5  # backtracking: cap on trials
F_SUM_GAP = 6  # fw_glm_advance: sum of the gaps so far (running average)
N_FSTATE = 7

# Log rows written by the estimated-gradient kernels (one per iteration).
LOG_K = 0
LOG_GAMMA = 1
LOG_J = 2
LOG_SIGN = 3  # +1 / -1: the vertex is sign * r * e_j; 0 on a final row (no step)
LOG_SAMPLES = 4
LOG_REFRESHES = 5
LOG_EST_GAP = 6  # FW gap of the gradient estimate (free by-product of the LMO)
LOG_CHECK = 7  # 1 if this iterate is a checkpoint (a trace row)
N_LOG = 8


@njit(cache=True, inline="always")
def _rand_below(rng, m):
    """Uniform integer in ``[0, m)`` from the splitmix64 state ``rng[0]`` (advanced)."""
    s = rng[0] + np.uint64(0x9E3779B97F4A7C15)
    rng[0] = s
    z = s
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    u = float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)
    return min(int(u * m), m - 1)


@njit(cache=True, inline="always")
def _pick(rng, perm, a, n, replace):
    """The ``a``-th sample of a batch: uniform with replacement, or the ``a``-th step of a
    partial Fisher-Yates shuffle of ``perm`` (distinct within the batch)."""
    if replace:
        return _rand_below(rng, n)
    r = a + _rand_below(rng, n - a)
    tmp = perm[a]
    perm[a] = perm[r]
    perm[r] = tmp
    return perm[a]


@njit(cache=True, inline="always")
def _open_loop(code, k, horizon):
    if code == OL_DIMINISHING:
        return 2.0 / (k + 2.0)
    if code == OL_NONCONVEX:
        return 1.0 / math.sqrt(k + 1.0)
    if code == OL_CONSTANT_SQRT:
        return 1.0 / math.sqrt(horizon + 1.0)
    return 1.0


@njit(cache=True, inline="always")
def _fw_move(x, gamma, j, v):
    """``x <- (1 - gamma) x + gamma v e_j`` (kernels and replay share this arithmetic)."""
    om = 1.0 - gamma
    for c in range(x.shape[0]):
        x[c] *= om
    x[j] += gamma * v


@njit(cache=True, inline="always")
def _checkpoint(istate, fstate, k):
    """Is iterate ``k`` a checkpoint? If so, schedule the next one."""
    if k < istate[I_NEXT_CHECK]:
        return False
    gap = max(istate[I_EVAL_EVERY], int(k * fstate[F_EVAL_GROWTH]))
    istate[I_NEXT_CHECK] = k + max(gap, 1)
    return True


@njit(cache=True, inline="always")
def _log_row(log, row, k, gamma, j, sign, samples, refreshes, est_gap, check):
    log[row, LOG_K] = k
    log[row, LOG_GAMMA] = gamma
    log[row, LOG_J] = j
    log[row, LOG_SIGN] = sign
    log[row, LOG_SAMPLES] = samples
    log[row, LOG_REFRESHES] = refreshes
    log[row, LOG_EST_GAP] = est_gap
    log[row, LOG_CHECK] = 1.0 if check else 0.0


@njit(cache=True, inline="always")
def _final_log(log, row, istate, k):
    _log_row(log, row, k, 0.0, 0, 0.0, istate[I_SAMPLES], istate[I_REFRESHES], math.nan, True)
    istate[I_STATUS] = STATUS_MAX_ITER
    return row + 1
