"""The coordinate blocks of one ReHLine epoch: constraint duals and sample duals.

Dai & Qiu (2023), "ReHLine: Regularized Composite ReLU-ReHU Loss Minimization with Linear
Computation and Linear Convergence", NeurIPS; the epoch that runs these blocks, the dual
and the state layouts are in :mod:`solvers.rehline`. Every block keeps ``beta`` equal to
``beta(mu)`` through its coordinate moves (the ReHLine trick), so a coordinate costs one
inner product and one axpy over the nonzeros of its row.

* The constraint duals ``xi >= 0`` (:func:`xi_block`, ``XI_*`` kinds): coordinate sweeps
  over the rows of ``A`` (D.4's xi update), one exact sweep when the rows are separable,
  or, for the chain ``beta_0 <= ... <= beta_K``, the exact block minimizer by isotonic
  regression (pool adjacent violators).
* The sample duals ``lambda_li in [0, 1]`` and ``gamma_hi in [0, tau_hi]``
  (:func:`_lambda_general`, :func:`_gamma_segment`): all pieces of one sample are updated
  one after the other from a single inner product: after moving ``lambda_li`` by
  ``delta``, ``z_i`` moves by ``-delta u_li ||x_i||^2`` exactly, so the sample's row is
  read twice (dot, then one combined axpy) whatever ``L`` or ``H``. The l1 term's fake
  samples ``e_j`` are handled in O(1).
* Fast path (:func:`_lambda_relu1`): when every sample has exactly one ReLU piece and
  there is no l1 term (the hinge loss of the SVM and FairSVM, any ``C``), the plain dual
  coordinate descent of Hsieh, Chang, Lin, Keerthi & Sundararajan (2008), "A dual
  coordinate descent method for large-scale linear SVM", ICML: one dot product, one clipped
  step with the precomputed inverse curvature and one axpy per visit.

Shrinking tests (:func:`_projected`, :func:`_shrink_or_pg`: a variable at a bound whose
gradient pushes outward beyond last epoch's extreme projected gradient may leave its
block's working set) and the random order (a Fisher-Yates shuffle driven by a splitmix64
generator whose state lives in a caller-owned array) live here too. Every loop over
samples prefetches the scalars and row pointers of the sample ``PF_FAR`` visits ahead
(random order defeats the hardware prefetcher); dot products over rows use
``row_dot_long`` (reassociated sums: vector lanes on dense rows, independent partial sums
on sparse ones). ``@njit(cache=True, ...)``; dense or CSR ``X`` (and CSR ``A``) dispatched
at compile time by :mod:`solvers.linalg`; no allocation in the loops.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solvers.linalg import row_axpy, row_dot, row_dot_long
from solvers.prefetch import prefetch, prefetch_ptr

# How the xi block is solved (istate[I_XI_KIND]).
XI_ROWS = 0  # coordinate sweeps over the rows of A
XI_SEPARABLE = 1  # one non-zero per row, in distinct columns: one sweep is exact
XI_CHAIN = 2  # rows beta_{k+1} - beta_k >= 0 on columns 0..K: isotonic regression
# Prefetch distance (visits ahead) for the next samples' scalars and row pointers.
PF_FAR = 8


@njit(cache=True, inline="always")
def _next_u64(rng):
    """splitmix64 step on the one-element uint64 state ``rng``."""
    x = rng[0] + np.uint64(0x9E3779B97F4A7C15)
    rng[0] = x
    z = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _shuffle(idx, m, rng):
    """Fisher-Yates shuffle of ``idx[:m]`` in place (bounded draws by multiply-shift)."""
    for s in range(m - 1, 0, -1):
        r = np.int64(((_next_u64(rng) >> np.uint64(32)) * np.uint64(s + 1)) >> np.uint64(32))
        tmp = idx[s]
        idx[s] = idx[r]
        idx[r] = tmp


@njit(cache=True, inline="always")
def _projected(x, g, lo, hi, pgmax_old, pgmin_old):
    """Projected gradient of a boxed coordinate and whether it may leave the working set.

    A coordinate at its lower (upper) bound whose gradient pushes outward has projected
    gradient 0; it may be shrunk when the push exceeds last epoch's largest (smallest)
    projected gradient. A degenerate box (``hi <= lo``) is always 0 and shrinkable.
    """
    if hi <= lo:
        return 0.0, True
    if x <= lo:
        if g > pgmax_old:
            return 0.0, True
        if g >= 0.0:
            return 0.0, False
        return g, False
    if x >= hi:
        if g < pgmin_old:
            return 0.0, True
        if g <= 0.0:
            return 0.0, False
        return g, False
    return g, False


@njit(cache=True, inline="always")
def _clip(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@njit(cache=True, inline="always")
def _swap(idx, a, c):
    tmp = idx[a]
    idx[a] = idx[c]
    idx[c] = tmp


@njit(cache=True, inline="always")
def _shrink_or_pg(x, g, hi, pgmax_old, pgmin_old):
    """:func:`_projected` for the box ``[0, hi]`` with ``hi > 0`` (no degenerate check)."""
    if x <= 0.0:
        if g > pgmax_old:
            return 0.0, True
        return (g if g < 0.0 else 0.0), False
    if x >= hi:
        if g < pgmin_old:
            return 0.0, True
        return (g if g > 0.0 else 0.0), False
    return g, False


# ---- the constraint duals ----------------------------------------------------------------
@njit(cache=True, nogil=True)
def _xi_rows(rows, beta, xi, sweeps, stop_move2):
    """Sweeps of exact coordinate steps over the rows of ``A`` (D.4's xi update).

    Stops after ``sweeps`` sweeps or after a sweep whose largest squared movement of beta
    (``delta^2 ||a_k||^2``) is at most ``stop_move2``. Returns (changed, squared movement).
    """
    A, b, asq = rows
    K = b.shape[0]
    changed = 0
    move2 = 0.0
    for _ in range(sweeps):
        biggest = 0.0
        for k in range(K):
            g = row_dot(A, k, beta) + b[k]
            new = xi[k] - g / asq[k]
            if new < 0.0:
                new = 0.0
            delta = new - xi[k]
            if delta != 0.0:
                xi[k] = new
                row_axpy(A, k, delta, beta)
                changed += 1
                mv = delta * delta * asq[k]
                move2 += mv
                if mv > biggest:
                    biggest = mv
        if biggest <= stop_move2:
            break
    return changed, move2


@njit(cache=True, nogil=True)
def _xi_chain(beta, xi, buf):
    """Exact minimization over the duals of the chain ``beta_0 <= beta_1 <= ... <= beta_K``.

    With the other duals fixed, the optimal xi makes ``beta`` the Euclidean projection of
    ``r = beta - A^T xi`` onto the chain's cone: isotonic regression of ``r[:K+1]`` (pool
    adjacent violators, O(K)). ``A^T xi`` has entries ``-xi_0``, ``xi_{t-1} - xi_t``,
    ``xi_{K-1}``, so ``xi`` follows from the change ``v - r`` by a running sum.
    ``buf``: scratch of at least ``4 (K + 1)`` floats. Returns (changed, squared movement).
    """
    K = xi.shape[0]
    n = K + 1
    r = buf[:n]
    bsum = buf[n : 2 * n]
    bcnt = buf[2 * n : 3 * n]
    bend = buf[3 * n : 4 * n]
    prev = 0.0
    for j in range(n):
        cur = xi[j] if j < K else 0.0
        # (A^T xi)_j = xi_{j-1} - xi_j with xi_{-1} = xi_K = 0
        r[j] = beta[j] - (prev - cur)
        prev = cur
    top = -1
    for j in range(n):
        top += 1
        bsum[top] = r[j]
        bcnt[top] = 1.0
        bend[top] = j
        while top > 0 and bsum[top - 1] * bcnt[top] > bsum[top] * bcnt[top - 1]:
            bsum[top - 1] += bsum[top]
            bcnt[top - 1] += bcnt[top]
            bend[top - 1] = bend[top]
            top -= 1
    changed = 0
    move2 = 0.0
    run = 0.0  # running sum of (v - r): xi_t = -sum_{s <= t} (v_s - r_s)
    start = 0
    for blk in range(top + 1):
        mean = bsum[blk] / bcnt[blk]
        stop = int(bend[blk]) + 1
        for j in range(start, stop):
            run += mean - r[j]
            if j < K:
                new = -run
                if new < 0.0:
                    new = 0.0
                if new != xi[j]:
                    xi[j] = new
                    changed += 1
        start = stop
    prev = 0.0
    for j in range(n):
        cur = xi[j] if j < K else 0.0
        new_beta = r[j] + (prev - cur)
        d = new_beta - beta[j]
        move2 += d * d
        beta[j] = new_beta
        prev = cur
    return changed, move2


@njit(cache=True, nogil=True)
def xi_block(rows, beta, xi, kind, sweeps, stop_move2, buf):
    """Minimize the dual over the constraint duals ``xi`` with the others fixed.

    ``kind``: :data:`XI_CHAIN` (the rows are ``beta_{k+1} - beta_k >= 0``, ``k < K``:
    exact by isotonic regression), :data:`XI_SEPARABLE` (one non-zero per row, each in its
    own column: one sweep of coordinate steps is exact) or :data:`XI_ROWS` (coordinate
    sweeps, see :func:`_xi_rows`). ``rows``: the constraints
    (:class:`solvers.plq_state.PlqRows`); ``buf``: scratch of at least ``4 (K + 1)``
    floats. Returns (changed, squared movement of beta).
    """
    if rows.b.shape[0] == 0:
        return 0, 0.0
    if kind == XI_CHAIN:
        return _xi_chain(beta, xi, buf)
    if kind == XI_SEPARABLE:
        return _xi_rows(rows, beta, xi, np.int64(1), 0.0)  # (np.int64: one compile)
    return _xi_rows(rows, beta, xi, sweeps, stop_move2)


# ---- the sample duals --------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _lambda_relu1(data, duals, idx, span, rule, acc):
    """Visit ``idx[s:m]`` (at most ``budget`` samples) when every sample has one ReLU
    piece and there is no l1 term.

    The plain hinge-loss case (Hsieh et al. 2008's dual coordinate descent for the L1-loss
    SVM, with ``u_i = -c_i y_i``): per visit one dot product, one clipped step with the
    precomputed inverse curvature, one axpy when the dual moves, nothing else; the scalars
    and row pointers of the sample ``PF_FAR`` visits ahead are prefetched. Same updates and
    shrinking rule as :func:`_lambda_general`.

    Arguments: ``data`` (:class:`solvers.plq_state.PlqData`), ``duals``
    (:class:`solvers.plq_state.PlqDuals`, updated in place), ``idx`` the block's
    permutation, ``span = (s, m, budget)``, ``rule = (shrink, pgmax_old, pgmin_old)`` (the
    shrinking switch and last epoch's PG extremes), ``acc = (pgmax, pgmin, move2)`` (this
    epoch's PG extremes and squared movement of beta so far; tuples of scalars, which stay
    in registers). Returns the new ``s, m``, the updated ``acc``, and the visits and
    changes of this call.
    """
    X = data.X
    PL = data.PL
    beta = duals.beta
    lam = duals.lam
    s, m, budget = span
    shrink, pgmax_old, pgmin_old = rule
    pgmax, pgmin, move2 = acc
    visited = 0
    changed = 0
    while s < m and visited < budget:
        if s + PF_FAR < m:
            j = idx[s + PF_FAR]
            prefetch(PL, np.uint64(j) * np.uint64(PL.shape[1]))
            prefetch(lam, np.uint64(j))
            prefetch_ptr(X, j)
        i = idx[s]
        visited += 1
        u = PL[i, 1]
        v = PL[i, 2]
        ic = PL[i, 3]
        lm = lam[i, 0]
        if ic == 0.0:
            # Constant piece (u ||x_i|| = 0): the dual optimum is 1[v > 0]; beta stays.
            target = 1.0 if v > 0.0 else 0.0
            if lm != target:
                lam[i, 0] = target
                changed += 1
            if shrink:
                m -= 1
                _swap(idx, s, m)
                continue
            s += 1
            continue
        z = row_dot_long(X, i, beta)
        g = -(u * z + v)
        pg, shr = _shrink_or_pg(lm, g, 1.0, pgmax_old, pgmin_old)
        if shr:
            if shrink:
                m -= 1
                _swap(idx, s, m)
                continue
        else:
            pgmax = max(pgmax, pg)
            pgmin = min(pgmin, pg)
            if pg != 0.0:
                new = _clip(lm - g * ic, 0.0, 1.0)
                delta = new - lm
                if delta != 0.0:
                    lam[i, 0] = new
                    row_axpy(X, i, -delta * u, beta)
                    changed += 1
                    move2 += delta * delta * (u * u) * PL[i, 0]  # no division in the loop
        s += 1
    return s, m, (pgmax, pgmin, move2), visited, changed


@njit(cache=True, inline="always")
def _lambda_general(data, duals, idx, span, rule, acc, bounded):
    """Visit ``idx[s:m]`` (at most ``budget`` samples when ``bounded``) of the lambda
    block: real samples (all their ReLU pieces from one dot product, one combined axpy)
    and the l1 term's fake samples ``n + j``. Arguments and returns as
    :func:`_lambda_relu1`; ``bounded`` is a constant at each inlined call (the budget test
    costs ~4 % of an elastic-net quantile epoch on cadata and house_8L)."""
    X = data.X
    PL = data.PL
    l1w = data.l1w
    beta = duals.beta
    lam = duals.lam
    lam1 = duals.lam1
    s, m, budget = span
    shrink, pgmax_old, pgmin_old = rule
    pgmax, pgmin, move2 = acc
    n = PL.shape[0]
    n_pieces_l = (PL.shape[1] - 1) // 3
    visited = 0
    changed = 0
    samples = 0
    while s < m and (not bounded or samples < budget):
        samples += 1
        if s + PF_FAR < m:
            j = idx[s + PF_FAR]
            if j < n:
                prefetch(PL, np.uint64(j) * np.uint64(PL.shape[1]))
                prefetch(lam, np.uint64(j) * np.uint64(lam.shape[1]))
                prefetch_ptr(X, j)
        i = idx[s]
        all_shrink = True
        total = 0.0
        if i < n:
            z = row_dot_long(X, i, beta)
            q = PL[i, 0]
            for l_ in range(n_pieces_l):
                visited += 1
                u = PL[i, 1 + 3 * l_]
                v = PL[i, 2 + 3 * l_]
                ic = PL[i, 3 + 3 * l_]
                lm = lam[i, l_]
                if ic == 0.0:
                    # Constant piece: the dual optimum is 1[v > 0]; beta does not move.
                    target = 1.0 if v > 0.0 else 0.0
                    if lm != target:
                        lam[i, l_] = target
                        changed += 1
                    continue
                g = -(u * z + v)
                pg, shr = _shrink_or_pg(lm, g, 1.0, pgmax_old, pgmin_old)
                if not shr:
                    all_shrink = False
                    pgmax = max(pgmax, pg)
                    pgmin = min(pgmin, pg)
                if pg != 0.0:
                    new = _clip(lm - g * ic, 0.0, 1.0)
                    delta = new - lm
                    if delta != 0.0:
                        lam[i, l_] = new
                        z -= delta * u * q
                        total += delta * u
                        changed += 1
            if total != 0.0:
                row_axpy(X, i, -total, beta)
                move2 += total * total * q  # ||total x_i||^2, once per sample
        else:
            # Fake sample e_j: pieces ReLU(+w beta_j) and ReLU(-w beta_j), ||e_j||^2 = 1.
            j = i - n
            w = l1w[j]
            z = beta[j]
            for l_ in range(2):
                visited += 1
                u = w if l_ == 0 else -w
                lm = lam1[j, l_]
                curv = u * u
                if curv <= 0.0:
                    if lm != 0.0:
                        lam1[j, l_] = 0.0
                        changed += 1
                    continue
                g = -u * z
                pg, shr = _shrink_or_pg(lm, g, 1.0, pgmax_old, pgmin_old)
                if not shr:
                    all_shrink = False
                    pgmax = max(pgmax, pg)
                    pgmin = min(pgmin, pg)
                if pg != 0.0:
                    new = _clip(lm - g / curv, 0.0, 1.0)
                    delta = new - lm
                    if delta != 0.0:
                        lam1[j, l_] = new
                        z -= delta * u
                        total += delta * u
                        changed += 1
            beta[j] -= total
            move2 += total * total
        if shrink and all_shrink:
            m -= 1
            _swap(idx, s, m)
            continue
        s += 1
    return s, m, (pgmax, pgmin, move2), visited, changed


@njit(cache=True, inline="always")
def _gamma_segment(data, duals, idx, span, rule, acc, track):
    """Visit ``idx[s:m]`` (at most ``budget`` samples) of the gamma block: per sample one
    dot product, the ReHU pieces one after the other (``z`` kept exact), one combined
    axpy. Arguments and returns as :func:`_lambda_relu1`; ``track=False`` (a constant at
    the call) ignores ``budget`` and leaves ``move2`` as it is, for callers that need
    neither (3-4 % of a Huber epoch on cadata and house_8L)."""
    X = data.X
    PH = data.PH
    beta = duals.beta
    gam = duals.gam
    s, m, budget = span
    shrink, pgmax_old, pgmin_old = rule
    pgmax, pgmin, move2 = acc
    n_pieces_h = (PH.shape[1] - 1) // 4
    visited = 0
    changed = 0
    samples = 0
    while s < m and (not track or samples < budget):
        samples += 1
        if s + PF_FAR < m:
            j = idx[s + PF_FAR]
            prefetch(PH, np.uint64(j) * np.uint64(PH.shape[1]))
            prefetch(gam, np.uint64(j) * np.uint64(gam.shape[1]))
            prefetch_ptr(X, j)
        i = idx[s]
        all_shrink = True
        total = 0.0
        z = row_dot_long(X, i, beta)
        q = PH[i, 0]
        for h in range(n_pieces_h):
            visited += 1
            sh = PH[i, 1 + 4 * h]
            th = PH[i, 3 + 4 * h]
            gm = gam[i, h]
            g = gm - (sh * z + PH[i, 2 + 4 * h])
            pg, shr = _projected(gm, g, 0.0, th, pgmax_old, pgmin_old)
            if not shr:
                all_shrink = False
                pgmax = max(pgmax, pg)
                pgmin = min(pgmin, pg)
            if pg != 0.0:
                new = _clip(gm - g * PH[i, 4 + 4 * h], 0.0, th)
                delta = new - gm
                if delta != 0.0:
                    gam[i, h] = new
                    z -= delta * sh * q
                    total += delta * sh
                    changed += 1
        if total != 0.0:
            row_axpy(X, i, -total, beta)
            if track:
                move2 += total * total * q  # ||total x_i||^2, once per sample
        if shrink and all_shrink:
            m -= 1
            _swap(idx, s, m)
            continue
        s += 1
    return s, m, (pgmax, pgmin, move2), visited, changed
