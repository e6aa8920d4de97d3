"""TUFW and its stochastic baselines on l1-constrained GLM classification, plus plain FW.

Problem: ``min_{||x||_1 <= r} F(x) = (1/n) sum_i l_i(a_i^T x)`` with a pluggable loss
triple ``(l, l', l'')`` chosen by an integer code (:data:`LOSS_CODES`): the logistic loss
(Xiong & Freund's problem (7.1)) and two bounded non-convex losses for problem (7.2)
(``1 - tanh(y t)`` and the sigmoid loss ``sigma(-y t)``; the paper's exact choice is not
known, see :mod:`ermviz.methods.tufw`).

Kernels (all ``@njit(cache=True, nogil=True)``, dense or CSR data through
:mod:`solvers.linalg` and the two overloads below):

* :func:`tufw_advance`: Taylor-approximated-gradient Frank-Wolfe (Xiong & Freund, "Using
  Taylor-approximated gradients to improve the Frank-Wolfe method for empirical risk
  minimization", SIAM J. Optim.; Algorithm 2.1). Per sample only the scalar
  ``t_i = a_i^T b_i`` of its Taylor point ``b_i`` is stored; the gradient estimate is
  ``g = q + H x`` with ``q = (1/n) sum_i c(t_i) a_i``, ``c(t) = l'(t) - l''(t) t`` and
  ``H = (1/n) sum_i l''(t_i) a_i a_i^T`` (dense p x p, upper triangle stored). A reset of
  sample ``i`` is a rank-one update of ``q`` and ``H``; ``h = H x`` and
  ``kappa = x^T H x`` are kept too, so an iteration without resets costs O(p): the LMO
  vertex ``s = v e_j`` (``v = +-r``) makes ``h <- (1 - gamma) h + gamma v H[:, j]``.
  Batch rules (which samples are reset at iteration ``k``): ``TAYLOR_*`` codes, see
  :func:`taylor_batch_size`. ``h`` is rebuilt from ``H`` every ``I_H_EVERY`` iterations and
  ``q, H`` from the stored ``t`` after every ``I_HH_PASSES * n`` partial resets (drift);
  a full reset (``B_k = [n]``) always rebuilds everything from scratch.
* :func:`spider_advance`: SPIDER-FW (Yurtsever, Sra & Cevher, "Conditional gradient
  methods via stochastic path-integrated differential estimator", ICML 2019): the full
  gradient at the start of every epoch, SARAH/SPIDER corrections
  ``v += (1/b) sum_{i in S} [grad f_i(x_k) - grad f_i(x_{k-1})]`` inside it.
* :func:`csfw_advance`: constant-batch stochastic FW (Negiar, Dresdner, Tsai, El Ghaoui,
  Locatello, Freund & Pedregosa, "Stochastic Frank-Wolfe for constrained finite-sum
  minimization", ICML 2020), the SAG-type variant: a memory ``alpha_i = l'(a_i^T x)/n`` per
  sample, ``r = sum_i alpha_i a_i`` updated for a batch of ``b`` samples per iteration.
* :func:`fw_glm_advance`: plain FW with the exact gradient for any loss code, with the
  open-loop steps and Pedregosa, Negiar, Askari & Jaggi's backtracking estimate of ``L``
  ("Linearly convergent Frank-Wolfe with backtracking line-search", AISTATS 2020) on the
  loss's own line model. It computes the exact gap itself (it needs the gradient anyway).

Estimated-gradient kernels (TUFW, SPIDER-FW, CSFW) never compute the exact gap: they write
one *log* row per iteration (the step ``gamma``, the vertex ``(j, sign)`` and the work
counters) and :func:`replay_eval` later replays the steps on a copy of the iterate (bitwise
the same arithmetic, :func:`_fw_move`) keeping ``z = X x`` in O(n + nnz of column j) per
step, and evaluates the exact objective and FW gap where asked. The caller times the
kernels and the replay separately, so evaluation is never solver time.

Randomness: a splitmix64 generator whose state lives in a caller-owned ``uint64`` array,
so runs are reproducible, resumable and independent of the thread they run on (numba's
own generator state is per thread).

Size: over 800 lines because it holds the TUFW kernels and their baselines; issue 12
(one home per solver family) splits it along these jobs, and nothing here depends on the
split.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.extending import overload

from solvers.linalg import n_rows, rmatvec, row_axpy, row_dot
from solvers.steps import logistic_pass
from solvers.tags import (
    STATUS_CONVERGED,
    STATUS_MAX_ITER,
    STATUS_NONFINITE,
    STATUS_RUNNING,
    STATUS_STALLED,
    STEP_FW,
    STEP_NONE,
)

# Loss codes: the (l, l', l'') triple used by every kernel here.
LOSS_LOGISTIC = 0  # log(1 + exp(-y t))
LOSS_TANH = 1  # 1 - tanh(y t)
LOSS_SIGMOID = 2  # sigma(-y t) = 1 / (1 + exp(y t))
LOSS_CODES = {"logistic": LOSS_LOGISTIC, "tanh": LOSS_TANH, "sigmoid": LOSS_SIGMOID}

# Taylor-point (batch) rules of TUFW (ALGORITHMS.md B.4).
TAYLOR_SBD_SQRTK = 0
TAYLOR_DBD_SQRTK = 1
TAYLOR_SBD_K4 = 2
TAYLOR_DBD_K4 = 3
TAYLOR_CODES = {
    "sbd-sqrtk": TAYLOR_SBD_SQRTK,
    "dbd-sqrtk": TAYLOR_DBD_SQRTK,
    "sbd-k4": TAYLOR_SBD_K4,
    "dbd-k4": TAYLOR_DBD_K4,
}

# Step codes of this module (independent of solvers.steps' codes).
OL_DIMINISHING = 0  # 2 / (k + 2)
OL_NONCONVEX = 1  # 1 / sqrt(k + 1)
OL_CONSTANT_SQRT = 2  # 1 / sqrt(K + 1), K fixed in advance
OL_ONE = 3  # 1 (only as the cap of the Taylor-model step)
STEP_TAYLOR = 10  # (B-6): min(cap_k, g^T (x - s) / d^T H d) on the Taylor model
STEP_BACKTRACK = 11  # Pedregosa et al. (2020) backtracking on the exact objective
OPEN_LOOP_CODES = {
    "diminishing": OL_DIMINISHING,
    "nonconvex": OL_NONCONVEX,
    "constant-sqrt": OL_CONSTANT_SQRT,
    "one": OL_ONE,
}

# Integer state (one layout for every kernel of this module; unused slots stay 0).
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

# Trace columns of every solver of this module (replay_eval and fw_glm_advance write them).
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
    "iteration",
    "objective",
    "certificate",
    "step_size",
    "step_type",
    "active_size",
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


# -- losses -------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _sig_pair(u):
    """``(sigma(u), sigma(-u))`` without overflow."""
    e = math.exp(-abs(u))
    inv = 1.0 / (1.0 + e)
    if u >= 0.0:
        return inv, e * inv
    return e * inv, inv


@njit(cache=True)
def loss_d12(code, y, t):
    """``(l'(t), l''(t))`` of loss ``code`` for label ``y`` (derivatives in ``t``)."""
    u = y * t
    if code == LOSS_TANH:
        e = math.exp(-2.0 * abs(u))
        inv = 1.0 / (1.0 + e)
        sech2 = 4.0 * e * inv * inv
        th = (1.0 - e) * inv
        if u < 0.0:
            th = -th
        return -y * sech2, 2.0 * th * sech2
    a, b = _sig_pair(u)
    if code == LOSS_SIGMOID:
        return -y * a * b, a * b * (a - b)
    return -y * b, a * b


@njit(cache=True)
def loss_vd1(code, y, t):
    """``(l(t), l'(t))`` of loss ``code`` for label ``y``."""
    u = y * t
    if code == LOSS_TANH:
        e = math.exp(-2.0 * abs(u))
        inv = 1.0 / (1.0 + e)
        val = 2.0 * e * inv if u >= 0.0 else 2.0 * inv
        return val, -y * 4.0 * e * inv * inv
    a, b = _sig_pair(u)
    if code == LOSS_SIGMOID:
        return b, -y * a * b
    lv = -u + math.log1p(math.exp(u)) if u < 0.0 else math.log1p(math.exp(-u))
    return lv, -y * b


@njit(cache=True)
def loss_pass(code, y, z, inv_n, r):
    """Mean loss at margins ``z`` and ``r_i = l'(z_i) / n``, in one pass."""
    if code == LOSS_LOGISTIC:
        return logistic_pass(y, z, inv_n, r)
    acc = 0.0
    for i in range(z.shape[0]):
        v, d1 = loss_vd1(code, y[i], z[i])
        acc += v
        r[i] = d1 * inv_n
    return acc * inv_n


@njit(cache=True)
def _line_value(code, y, z, zd, gamma, inv_n):
    """Mean loss at margins ``z + gamma zd``."""
    acc = 0.0
    for i in range(z.shape[0]):
        v, _ = loss_vd1(code, y[i], z[i] + gamma * zd[i])
        acc += v
    return acc * inv_n


# -- two matrix primitives the shared linalg module does not have --------------------------
def row_outer_upper(M, i, w, H):  # pragma: no cover - dispatched by numba
    """``H[a, b] += w * M[i, a] * M[i, b]`` for ``a <= b`` (upper triangle)."""


@overload(row_outer_upper)
def _row_outer_upper(M, i, w, H):
    if isinstance(M, types.BaseTuple):

        def impl(M, i, w, H):
            data, indices, indptr = M
            lo = indptr[i]
            hi = indptr[i + 1]
            for a in range(lo, hi):
                wa = w * data[a]
                ia = indices[a]
                for b in range(a, hi):
                    H[ia, indices[b]] += wa * data[b]

        return impl

    def impl_dense(M, i, w, H):
        p = M.shape[1]
        for a in range(p):
            wa = w * M[i, a]
            if wa != 0.0:
                for b in range(a, p):
                    H[a, b] += wa * M[i, b]

    return impl_dense


@njit(cache=True)
def weighted_gram_upper(X, w, H):
    """``H = sum_i w_i x_i x_i^T`` (upper triangle), one rank-one update per row.

    (Blocked column-pair dot products over ``X^T`` were slower here in CPU time for the
    small p of these data sets: the per-row update of a p x p triangle stays in L1.)"""
    H[:, :] = 0.0
    for i in range(n_rows(X)):
        if w[i] != 0.0:
            row_outer_upper(X, i, w[i], H)


# -- small shared pieces ------------------------------------------------------------------
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
def _l1_lmo(g, x, radius):
    """``(j, v, <g, x> + r |g_j|)``: the vertex ``v e_j`` minimizing ``<g, s>`` over the
    l1 ball and the FW gap of ``g`` at ``x``."""
    j = 0
    best = -1.0
    gx = 0.0
    for c in range(g.shape[0]):
        gx += g[c] * x[c]
        a = abs(g[c])
        if a > best:
            best = a
            j = c
    v = -radius if g[j] > 0.0 else radius
    return j, v, gx + radius * best


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


# -- TUFW ---------------------------------------------------------------------------------
@njit(cache=True)
def taylor_batch_size(rule, k, n, horizon, ceil, offset):
    """Number of Taylor points reset at iteration ``k >= 1`` (``n`` = all of them).

    ``kk = k + offset``:

    * ``sbd-sqrtk``: ``round(n / sqrt(kk))`` random samples;
    * ``dbd-sqrtk``: all ``n`` when ``kk`` is a perfect square, else none;
    * ``sbd-k4``: ``round(n / K^(1/4))`` random samples every iteration;
    * ``dbd-k4``: all ``n`` when ``kk`` is a multiple of ``round(K^(1/4))``, else none;

    ``round`` is ceil (``ceil=1``) or floor (``ceil=0``), clipped to ``[1, n]`` for the
    SBD rules and ``[1, inf)`` for the DBD period.
    """
    kk = k + offset
    if kk <= 0:
        return 0
    if rule == TAYLOR_DBD_SQRTK:
        s = int(math.sqrt(kk))
        while s * s > kk:
            s -= 1
        while (s + 1) * (s + 1) <= kk:
            s += 1
        return n if s * s == kk else 0
    root4 = math.sqrt(math.sqrt(float(horizon)))
    if rule == TAYLOR_DBD_K4:
        period = math.ceil(root4 - 1e-9) if ceil else math.floor(root4 + 1e-9)
        period = max(int(period), 1)
        return n if kk % period == 0 else 0
    val = n / (math.sqrt(kk) if rule == TAYLOR_SBD_SQRTK else root4)
    m = math.ceil(val - 1e-9) if ceil else math.floor(val + 1e-9)
    return min(max(int(m), 1), n)


@njit(cache=True)
def sym_matvec_upper(H, x, out):
    """``out = H x`` for symmetric ``H`` stored in its upper triangle."""
    p = x.shape[0]
    for a in range(p):
        out[a] = 0.0
    for a in range(p):
        acc = H[a, a] * x[a]
        xa = x[a]
        for b in range(a + 1, p):
            acc += H[a, b] * x[b]
            out[b] += H[a, b] * xa
        out[a] += acc


@njit(cache=True)
def tufw_rebuild(X, XT, y, loss, x, t, q, H, h, wbuf, cbuf, fstate):
    """Build ``q``, ``H`` (upper triangle) from the stored ``t``; then ``h = H x`` and
    ``kappa = x^T h`` from scratch. ``XT`` is ``X^T``; ``wbuf``, ``cbuf`` (n,) scratch."""
    n = n_rows(X)
    inv_n = 1.0 / n
    for i in range(n):
        d1, d2 = loss_d12(loss, y[i], t[i])
        cbuf[i] = (d1 - d2 * t[i]) * inv_n
        wbuf[i] = d2 * inv_n
    for c in range(q.shape[0]):
        q[c] = row_dot(XT, c, cbuf)
    weighted_gram_upper(X, wbuf, H)
    sym_matvec_upper(H, x, h)
    kap = 0.0
    for c in range(x.shape[0]):
        kap += x[c] * h[c]
    fstate[F_KAPPA] = kap


@njit(cache=True)
def tufw_full_refresh(X, XT, y, loss, x, t, q, H, h, wbuf, cbuf, fstate):
    """Reset every Taylor point to ``x`` (``t_i = a_i^T x``) and rebuild from scratch; then
    ``q + h`` is the exact gradient at ``x``."""
    for i in range(n_rows(X)):
        t[i] = row_dot(X, i, x)
    tufw_rebuild(X, XT, y, loss, x, t, q, H, h, wbuf, cbuf, fstate)


@njit(cache=True, inline="always")
def _tufw_reset(X, y, loss, x, t, q, H, h, fstate, i, inv_n):
    """Move the Taylor point of sample ``i`` to ``x``: rank-one updates of q, H, h, kappa."""
    t_new = row_dot(X, i, x)
    t_old = t[i]
    d1n, d2n = loss_d12(loss, y[i], t_new)
    d1o, d2o = loss_d12(loss, y[i], t_old)
    dc = ((d1n - d2n * t_new) - (d1o - d2o * t_old)) * inv_n
    dh = (d2n - d2o) * inv_n
    row_axpy(X, i, dc, q)
    if dh != 0.0:
        row_outer_upper(X, i, dh, H)
        # H x changes by dh a_i (a_i^T x) = dh t_new a_i.
        row_axpy(X, i, dh * t_new, h)
        fstate[F_KAPPA] += dh * t_new * t_new
    t[i] = t_new


@njit(cache=True, nogil=True)
def tufw_advance(X, XT, y, radius, x, t, q, H, h, g, wbuf, cbuf, perm, rng, istate, fstate, log):
    """Advance TUFW by at most ``log.shape[0]`` iterations (one log row each).

    Parameters
    ----------
    X : dense (n, p) array or CSR triple of the data (rows = samples); ``XT`` the same
        for ``X^T`` (used by from-scratch builds); ``wbuf``, ``cbuf`` (n,) scratch.
    y : (n,) labels +-1.
    radius : l1 radius.
    x : (p,) iterate. t : (n,) Taylor margins. q, h, g : (p,) linear term, ``H x`` and
        scratch for the estimate. H : (p, p) Hessian sum (upper triangle).
    perm : (n,) int64 permutation (sampling without replacement). rng : (1,) uint64.
    istate, fstate : ``N_ISTATE`` int64 / ``N_FSTATE`` float64 (layouts above).
    log : (L, N_LOG) float64.

    Returns
    -------
    rows : int, log rows written. The call also returns after ``I_MAX_CHECKS``
    checkpoints (if > 0) and at ``I_STOP_AT`` (a final row without a step).
    """
    n = n_rows(X)
    p = x.shape[0]
    inv_n = 1.0 / n
    loss = istate[I_LOSS]
    rule = istate[I_RULE]
    checks = 0
    istate[I_STATUS] = STATUS_RUNNING
    for row in range(log.shape[0]):
        k = istate[I_K]
        if k >= istate[I_STOP_AT]:
            return _final_log(log, row, istate, k)
        # 1. Taylor points: B_0 = [n] (initialization), then the batch rule.
        if istate[I_INIT] == 0:
            m = n
            istate[I_INIT] = 1
        else:
            m = taylor_batch_size(rule, k, n, istate[I_HORIZON], istate[I_CEIL], istate[I_OFFSET])
        if m >= n and istate[I_REPLACE] == 0:
            tufw_full_refresh(X, XT, y, loss, x, t, q, H, h, wbuf, cbuf, fstate)
            istate[I_SINCE_REBUILD] = 0
            istate[I_REBUILDS] += 1
        elif m > 0:
            for a in range(m):
                i = _pick(rng, perm, a, n, istate[I_REPLACE])
                _tufw_reset(X, y, loss, x, t, q, H, h, fstate, i, inv_n)
            istate[I_SINCE_REBUILD] += m
            if istate[I_HH_PASSES] > 0 and istate[I_SINCE_REBUILD] >= istate[I_HH_PASSES] * n:
                tufw_rebuild(X, XT, y, loss, x, t, q, H, h, wbuf, cbuf, fstate)
                istate[I_SINCE_REBUILD] = 0
                istate[I_REBUILDS] += 1
        istate[I_SAMPLES] += m
        istate[I_REFRESHES] += m
        if istate[I_H_EVERY] > 0 and k > 0 and k % istate[I_H_EVERY] == 0:
            sym_matvec_upper(H, x, h)
            kap = 0.0
            for c in range(p):
                kap += x[c] * h[c]
            fstate[F_KAPPA] = kap
        # 2.-3. g = q + H x and the LMO on it.
        for c in range(p):
            g[c] = q[c] + h[c]
        j, v, est_gap = _l1_lmo(g, x, radius)
        # 4. Step size.
        hj = h[j]
        hjj = H[j, j]
        kap = fstate[F_KAPPA]
        step = istate[I_STEP]
        if step == STEP_TAYLOR:
            gamma = _open_loop(istate[I_CAP], k, istate[I_HORIZON])
            theta = v * v * hjj - 2.0 * v * hj + kap  # d^T H d, d = v e_j - x
            if theta > 0.0 and est_gap / theta < gamma:
                gamma = est_gap / theta
        else:
            gamma = _open_loop(step, k, istate[I_HORIZON])
        check = _checkpoint(istate, fstate, k)
        if not (math.isfinite(est_gap) and math.isfinite(gamma)):
            _log_row(
                log, row, k, 0.0, j, 0.0, istate[I_SAMPLES], istate[I_REFRESHES], est_gap, True
            )
            istate[I_STATUS] = STATUS_NONFINITE
            return row + 1
        # gamma = 0 (estimated gap 0: x is the LMO vertex of the estimate) is a null step,
        # not the end: later resets change the estimate; only the exact gap decides.
        _log_row(
            log,
            row,
            k,
            gamma,
            j,
            1.0 if v > 0.0 else -1.0,
            istate[I_SAMPLES],
            istate[I_REFRESHES],
            est_gap,
            check,
        )
        # 5. x <- (1 - gamma) x + gamma v e_j; h and kappa follow in O(p).
        om = 1.0 - gamma
        a = gamma * v
        for c in range(j):
            h[c] = om * h[c] + a * H[c, j]
        for c in range(j, p):
            h[c] = om * h[c] + a * H[j, c]
        fstate[F_KAPPA] = om * om * kap + 2.0 * om * a * hj + a * a * hjj
        _fw_move(x, gamma, j, v)
        istate[I_K] = k + 1
        if check:
            checks += 1
            if istate[I_MAX_CHECKS] > 0 and checks >= istate[I_MAX_CHECKS]:
                return row + 1
    return log.shape[0]


# -- SPIDER-FW ----------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def spider_advance(X, y, radius, x, xprev, v, perm, rng, istate, fstate, log):
    """Advance SPIDER-FW by at most ``log.shape[0]`` iterations (one log row each).

    At iterations ``k`` with ``k % I_EPOCH == 0``: ``v = grad F(x_k)`` (n samples); else
    ``v += (1/b) sum_{i in S} (l_i'(a_i^T x_k) - l_i'(a_i^T x_{k-1})) a_i`` for a batch
    ``S`` of ``b = I_BATCH`` samples (2 b derivative evaluations). ``xprev`` holds
    ``x_{k-1}``. Other arguments as in :func:`tufw_advance`.
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
        j, s, est_gap = _l1_lmo(v, x, radius)
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
    0 (so does ``r``). Other arguments as in :func:`tufw_advance`.
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
        j, s, est_gap = _l1_lmo(r, x, radius)
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
        j, v, _ = _l1_lmo(g, x, radius)
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
