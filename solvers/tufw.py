"""TUFW: Taylor-approximated-gradient Frank-Wolfe on l1-constrained GLM problems.

Xiong & Freund, "Using Taylor-approximated gradients to improve the Frank-Wolfe method for
empirical risk minimization", SIAM J. Optim.; Algorithm 2.1, on
``min_{||x||_1 <= r} F(x) = (1/n) sum_i l_i(a_i^T x)`` (losses: :mod:`solvers.glm_losses`).

:func:`tufw_advance`: per sample only the scalar ``t_i = a_i^T b_i`` of its Taylor point
``b_i`` is stored; the gradient estimate is ``g = q + H x`` with
``q = (1/n) sum_i c(t_i) a_i``, ``c(t) = l'(t) - l''(t) t`` and
``H = (1/n) sum_i l''(t_i) a_i a_i^T`` (dense p x p, upper triangle stored). A reset of
sample ``i`` is a rank-one update of ``q`` and ``H``; ``h = H x`` and ``kappa = x^T H x``
are kept too, so an iteration without resets costs O(p): the LMO vertex ``s = v e_j``
(``v = +-r``) makes ``h <- (1 - gamma) h + gamma v H[:, j]``. Batch rules (which samples
are reset at iteration ``k``): ``TAYLOR_*`` codes, see :func:`taylor_batch_size`. ``h`` is
rebuilt from ``H`` every ``I_H_EVERY`` iterations and ``q, H`` from the stored ``t`` after
every ``I_HH_PASSES * n`` partial resets (drift); a full reset (``B_k = [n]``) always
rebuilds everything from scratch. Like the stochastic baselines, TUFW never computes the
exact gap: it writes one log row per iteration, replayed by
:func:`solvers.glm_fw_exact.replay_eval`.

Where things are (callers use all of them as attributes of this module, ``k.I_K``,
``k.TAYLOR_CODES``, ``k.replay_eval`` ...: the names are re-exported below):

* this module: the Taylor model (``TAYLOR_*`` rules, the rank-one and from-scratch builds
  of ``q``, ``H``, ``h``) and :func:`tufw_advance`;
* :mod:`solvers.glm_losses`: the loss codes and triples;
* :mod:`solvers.glm_fw_state`: the state, step and log layouts every kernel of the family
  shares, and the per-iteration pieces (LMO, FW move, step rules, sampling);
* :mod:`solvers.stochastic_fw`: the baselines SPIDER-FW and CSFW;
* :mod:`solvers.glm_fw_exact`: the exact evaluation by replay and plain FW with the exact
  gradient.

Kernels: ``@njit(cache=True, ...)``, dense or CSR data through :mod:`solvers.linalg` and
the overload below.
"""

from __future__ import annotations

import math

from numba import njit, types
from numba.extending import overload

# The pieces the kernels below run, and names re-exported for callers, who use them
# as attributes of this module (k.I_K, k.LOSS_CODES, k.replay_eval ...): noqa F401.
from solvers.glm_fw_exact import (  # noqa: F401
    E_COUNT,
    E_SUM_GAP,
    J_ALL,
    J_K,
    J_METRIC_AVG,
    J_SINCE_Z,
    J_STATUS,
    J_TOL_AVG,
    J_USED,
    J_Z_EVERY,
    N_ESTATE,
    N_JSTATE,
    OUT_ACTIVE,
    OUT_AVG_GAP,
    OUT_CERTIFICATE,
    OUT_COLUMNS,
    OUT_EST_GAP,
    OUT_FUN_EVALS,
    OUT_FW_GAP,
    OUT_GRAD_EVALS,
    OUT_ITER,
    OUT_OBJECTIVE,
    OUT_PASSES,
    OUT_REFRESHES,
    OUT_SAMPLES,
    OUT_STEP_SIZE,
    OUT_STEP_TYPE,
    fw_glm_advance,
    replay_eval,
)
from solvers.glm_fw_state import (  # noqa: F401
    F_ETA,
    F_EVAL_GROWTH,
    F_KAPPA,
    F_LEST,
    F_MAX_TRIALS,
    F_SUM_GAP,
    F_TAU,
    I_BATCH,
    I_CAP,
    I_CEIL,
    I_EPOCH,
    I_EVAL_EVERY,
    I_FUN_EVALS,
    I_H_EVERY,
    I_HH_PASSES,
    I_HORIZON,
    I_INIT,
    I_K,
    I_LOSS,
    I_MAX_CHECKS,
    I_METRIC_AVG,
    I_NEXT_CHECK,
    I_OFFSET,
    I_REBUILDS,
    I_REFRESH_Z,
    I_REFRESHES,
    I_REPLACE,
    I_RULE,
    I_SAMPLES,
    I_SINCE_REBUILD,
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
    N_FSTATE,
    N_ISTATE,
    N_LOG,
    OL_CONSTANT_SQRT,
    OL_DIMINISHING,
    OL_NONCONVEX,
    OL_ONE,
    OPEN_LOOP_CODES,
    STEP_BACKTRACK,
    STEP_TAYLOR,
    _checkpoint,
    _final_log,
    _fw_move,
    _log_row,
    _open_loop,
    _pick,
)
from solvers.glm_losses import (  # noqa: F401
    LOSS_CODES,
    LOSS_LOGISTIC,
    LOSS_SIGMOID,
    LOSS_TANH,
    loss_d12,
    loss_pass,
    loss_vd1,
)
from solvers.linalg import n_rows, row_axpy, row_dot
from solvers.lmo import l1_vertex
from solvers.stochastic_fw import (  # noqa: F401
    csfw_advance,
    spider_advance,
)
from solvers.tags import (  # noqa: F401  (TAYLOR_*: re-exported)
    STATUS_NONFINITE,
    STATUS_RUNNING,
    TAYLOR_CODES,
    TAYLOR_DBD_K4,
    TAYLOR_DBD_SQRTK,
    TAYLOR_SBD_K4,
    TAYLOR_SBD_SQRTK,
)


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
        j, v, est_gap = l1_vertex(g, x, radius)
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
