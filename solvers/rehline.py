"""ReHLine: dual coordinate descent for ReLU-ReHU losses with linear constraints.

Dai & Qiu (2023), "ReHLine: Regularized Composite ReLU-ReHU Loss Minimization with Linear
Computation and Linear Convergence", NeurIPS. The primal problem is

    min_beta  sum_i [ sum_l ReLU(u_li z_i + v_li) + sum_h ReHU_tau_hi(s_hi z_i + t_hi) ]
              + sum_j w_j |beta_j| + 0.5 ||beta||^2     s.t.  A beta + b >= 0,

with ``z_i = x_i^T beta``. The l1 term is the paper's device for the elastic net: every
coordinate ``j`` is a *fake sample* ``e_j`` carrying two ReLU pieces ``u = +w_j`` and
``u = -w_j`` with ``v = 0`` (``ReLU(w b) + ReLU(-w b) = w |b|``); the kernel runs exactly the
coordinate updates of those pieces, with ``x = e_j`` handled in O(1) instead of a stored row.

The dual variables are ``xi >= 0`` (one per constraint), ``lambda_li in [0, 1]`` (one per
ReLU piece, fake samples included) and ``gamma_hi in [0, tau_hi]`` (one per ReHU piece).
The dual objective in minimization form is

    L = 0.5 ||beta(mu)||^2 + 0.5 ||Gamma||^2 + xi^T b - <Lambda, V> - <Gamma, T>,
    beta(mu) = A^T xi - sum_i x_i (sum_l lambda_li u_li + sum_h gamma_hi s_hi),

and ``beta`` is kept equal to ``beta(mu)`` through every coordinate move (the ReHLine
trick), so a coordinate costs one inner product and one axpy over the nonzeros of its row.
All pieces of one sample are updated one after the other from a single inner product:
after moving ``lambda_li`` by ``delta``, ``z_i`` moves by ``-delta u_li ||x_i||^2`` exactly,
so the sample's row is read twice (dot, then one combined axpy) whatever ``L`` or ``H``.

One epoch (:func:`epoch`, one outer iteration of the reference code) visits all ``xi_k``,
then all ``lambda_li`` (sample by sample, fake samples after the real ones), then all
``gamma_hi`` (the vanilla order of the reference code). :func:`epochs` runs epochs until
a given number of coordinate visits is reached (one trace row per group; a group is one
epoch unless shrinking has made the working sets small). Options kept in the integer
state:

* random order: each block's working set is visited in a fresh random permutation
  (splitmix64 generator whose state lives in a caller-owned array, so runs are
  reproducible and resumable);
* shrinking: a variable sitting at a bound whose gradient pushes outward beyond last
  epoch's extreme projected gradient leaves its block's working set (a sample leaves when
  all its pieces may); when the working sets' projected-gradient range falls below an
  internal threshold ``eps`` (``EPS_SHRINK_FIRST`` = 0.1 x the first epoch's range,
  multiplied by ``EPS_SHRINK_DECAY`` = 1/8 at each use) the full sets are restored, and
  the restoring epoch shrinks again, at once, every variable at a bound whose gradient
  pushes outward by more than ``eps`` (LIBLINEAR instead restores with no shrinking for
  one epoch: one more full pass per restore). The gamma block shrinks only when each
  sample has one ReHU piece (smoothed hinge, squared hinge): with two or more (Huber,
  MSE) a sample rarely has all its pieces at bounds, and the tests cost more than the
  few removals save. Shrinking only decides which coordinates are visited: the
  certificate is always evaluated on the full problem.

Fast path: when every sample has exactly one ReLU piece and there is no l1 term (the hinge
loss of the SVM and FairSVM, any ``C``), the lambda block runs
:func:`_lambda_block_relu1`, the plain dual coordinate descent of Hsieh et al. (2008) for
the L1-loss SVM: one dot product, one clipped step with the precomputed inverse curvature
and one axpy per visit. Every loop over samples prefetches the scalars and row pointers of
the sample ``PF_FAR`` visits ahead (random order defeats the hardware prefetcher); dot
products over rows use ``row_dot_long`` (reassociated sums: vector lanes on dense rows,
independent partial sums on sparse ones).

The certificate (:func:`evaluate`) is computed term by term, which needs no cancellation
of the (possibly large) primal and dual values:

    P(beta) + L(mu) = sum over pieces of [loss(w) - dual * w (+ gamma^2 / 2)] + xi^T (A beta + b),

each bracket being >= 0 (Fenchel-Young). Weak duality makes ``P(beta) + L(mu)`` an upper
bound on ``P(beta) - P*`` at *every* iterate, but when ``beta`` violates a constraint the
last term can be negative and ``P(beta)`` can lie below ``P*``; the kernel therefore also
returns ``cert = loss gap + sum_k xi_k max(a_k^T beta + b_k, 0)`` (>= the gap, >= 0, equal
to it when ``beta`` is feasible) and the largest violation ``max_k max(0, -(a_k^T beta +
b_k))``.

Kernel contract: state in caller-owned arrays mutated in place; :func:`epoch` runs one
outer iteration (:func:`epochs` a group of them), :func:`evaluate` writes the primal
objective and certificate of the current state; ``@njit(cache=True, nogil=True)``; dense
or CSR ``X`` (and CSR ``A``) dispatched at compile time by :mod:`solvers.linalg`; no
allocation in the loops.

Size: over 800 lines because it holds the ReHLine kernels (epoch blocks, constraint
duals, certificate); issue 12 (one home per solver family) splits it along these jobs,
and nothing here depends on the split.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.extending import overload

from solvers.linalg import row_axpy, row_dot, row_dot_long
from solvers.prefetch import prefetch, prefetch_ptr

# Integer state vector layout.
I_K = 0  # epochs done
I_STATUS = 1  # one of solvers.tags.STATUS_*
I_SHRINK = 2  # 1: shrinking on
I_RANDOM = 3  # 1: random permutation of each working set every epoch
I_XI_KIND = 4  # XI_ROWS, XI_SEPARABLE or XI_CHAIN: how the xi block is solved
I_N_LAM = 5  # working-set sizes of the lambda and gamma blocks
I_N_GAM = 6
I_VISITED = 7  # coordinates visited in the last epoch
I_CHANGED = 8  # coordinates whose value changed in the last epoch
I_UPDATES = 9  # cumulative coordinate visits
I_RESTORES = 10  # working-set restorations so far
I_FULL = 11  # 1: the last epoch started with the full working sets
I_XI_EVERY = 12  # with constraints: run the xi block after this many sample visits
I_XI_SWEEPS = 13  # XI_ROWS: coordinate sweeps per xi block inside an epoch
I_XI_EXACT = 14  # 1: XI_ROWS blocks are solved to convergence at the end of epochs()
N_ISTATE = 15

# Float state vector layout.
F_PGMAX_LAM = 0  # last epoch's projected-gradient extremes per block (shrinking thresholds)
F_PGMIN_LAM = 1
F_PGMAX_GAM = 2
F_PGMIN_GAM = 3
F_EPS_SHRINK = 4  # restore the full sets when the PG range falls below this (< 0: unset)
F_STEP = 5  # ||beta_end - beta_start||_2 over the last group of epochs (epochs())
F_PG_RANGE = 6  # largest projected-gradient range over the blocks in the last epoch
F_MOVE = 7  # sum over the last epoch's steps of ||delta beta||^2
N_FSTATE = 8

# How the xi block is solved (istate[I_XI_KIND]).
XI_ROWS = 0  # coordinate sweeps over the rows of A
XI_SEPARABLE = 1  # one non-zero per row, in distinct columns: one sweep is exact
XI_CHAIN = 2  # rows beta_{k+1} - beta_k >= 0 on columns 0..K: isotonic regression
#: XI_ROWS: sweeps of the exact xi solve that ends each group of epochs (at most).
XI_EXACT_SWEEPS = 200
#: Relative movement of beta (||delta beta|| / ||beta||) below which an epoch on shrunk
#: working sets counts as stuck (and the full sets are restored).
STUCK_MOVE_REL = 1e-13

# evaluate() output layout.
E_PRIMAL = 0  # P(beta)
E_GAP = 1  # P(beta) + L(mu) (the duality gap, dual in minimization form)
E_CERT = 2  # loss gap + sum_k xi_k max(a_k beta + b_k, 0) >= max(E_GAP, 0)
E_INFEAS = 3  # max_k max(0, -(a_k beta + b_k))
E_MAG = 4  # size of the terms the gap is computed from: rounding error <= ~4 eps E_MAG
N_EVAL = 5

_INF = np.inf

# Shrinking: the first restore threshold is EPS_SHRINK_FIRST x the first epoch's projected-
# gradient range, and each use multiplies it by EPS_SHRINK_DECAY.
EPS_SHRINK_FIRST = 0.1
EPS_SHRINK_DECAY = 0.125
# Prefetch distance (visits ahead) for the next samples' scalars and row pointers.
PF_FAR = 8


def reset_shrinking(istate, fstate, n_lam, n_gam):
    """Full working sets and no shrinking thresholds (call from Python or a kernel)."""
    istate[I_N_LAM] = n_lam
    istate[I_N_GAM] = n_gam
    fstate[F_PGMAX_LAM] = _INF
    fstate[F_PGMIN_LAM] = -_INF
    fstate[F_PGMAX_GAM] = _INF
    fstate[F_PGMIN_GAM] = -_INF


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
def _rehu(w, tau):
    # c (w - c/2) with c = clip(w, 0, tau): 0, w^2/2 and tau (w - tau/2) on the three
    # pieces (tau = inf included), without branches (the certificate pass mispredicted
    # the sign of w about half the time on Huber losses: twice as slow).
    c = min(max(w, 0.0), tau)
    return c * (w - 0.5 * c)


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
def _xi_rows(A, b, asq, beta, xi, sweeps, stop_move2):
    """Sweeps of exact coordinate steps over the rows of ``A`` (D.4's xi update).

    Stops after ``sweeps`` sweeps or after a sweep whose largest squared movement of beta
    (``delta^2 ||a_k||^2``) is at most ``stop_move2``. Returns (changed, squared movement).
    """
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
def xi_block(A, b, asq, beta, xi, kind, sweeps, stop_move2, buf):
    """Minimize the dual over the constraint duals ``xi`` with the others fixed.

    ``kind``: :data:`XI_CHAIN` (the rows are ``beta_{k+1} - beta_k >= 0``, ``k < K``:
    exact by isotonic regression), :data:`XI_SEPARABLE` (one non-zero per row, each in its
    own column: one sweep of coordinate steps is exact) or :data:`XI_ROWS` (coordinate
    sweeps, see :func:`_xi_rows`). Returns (changed, squared movement of beta).
    """
    if b.shape[0] == 0:
        return 0, 0.0
    if kind == XI_CHAIN:
        return _xi_chain(beta, xi, buf)
    if kind == XI_SEPARABLE:
        return _xi_rows(A, b, asq, beta, xi, 1, 0.0)
    return _xi_rows(A, b, asq, beta, xi, sweeps, stop_move2)


# ---- the sample duals --------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _lambda_relu1(
    X, PL, beta, lam, idx, s, m, budget, pgmax_old, pgmin_old, shrink, pgmax, pgmin, move2
):
    """Visit ``idx[s:m]`` (at most ``budget`` samples) when every sample has one ReLU
    piece and there is no l1 term.

    The plain hinge-loss case (Hsieh et al. 2008's dual coordinate descent for the L1-loss
    SVM, with ``u_i = -c_i y_i``): per visit one dot product, one clipped step with the
    precomputed inverse curvature, one axpy when the dual moves, nothing else; the scalars
    and row pointers of the sample ``PF_FAR`` visits ahead are prefetched. Same updates and
    shrinking rule as :func:`_lambda_general`. Returns the new ``(s, m)``, the updated PG
    extremes ``pgmax, pgmin`` and squared movement ``move2`` of beta (passed in and out as
    scalars, which stay in registers), and the visits and changes of this call.
    """
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
    return s, m, pgmax, pgmin, move2, visited, changed


@njit(cache=True, inline="always")
def _lambda_general(
    X,
    PL,
    l1w,
    beta,
    lam,
    lam1,
    idx,
    s,
    m,
    budget,
    bounded,
    pgmax_old,
    pgmin_old,
    shrink,
    pgmax,
    pgmin,
    move2,
):
    """Visit ``idx[s:m]`` (at most ``budget`` samples when ``bounded``) of the lambda
    block: real samples (all their ReLU pieces from one dot product, one combined axpy)
    and the l1 term's fake samples ``n + j``. Arguments and returns as
    :func:`_lambda_relu1`; ``bounded`` is a constant at each inlined call (the budget test
    costs ~4 % of an elastic-net quantile epoch on cadata and house_8L)."""
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
    return s, m, pgmax, pgmin, move2, visited, changed


@njit(cache=True, inline="always")
def _gamma_segment(
    X,
    PH,
    beta,
    gam,
    idx,
    s,
    m,
    budget,
    pgmax_old,
    pgmin_old,
    shrink,
    track,
    pgmax,
    pgmin,
    move2,
):
    """Visit ``idx[s:m]`` (at most ``budget`` samples) of the gamma block: per sample one
    dot product, the ReHU pieces one after the other (``z`` kept exact), one combined
    axpy. Arguments and returns as :func:`_lambda_relu1`; ``track=False`` (a constant at
    the call) ignores ``budget`` and leaves ``move2`` as it is, for callers that need
    neither (3-4 % of a Huber epoch on cadata and house_8L)."""
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
    return s, m, pgmax, pgmin, move2, visited, changed


@njit(cache=True, nogil=True)
def epoch(
    X,
    PL,
    PH,
    A,
    b,
    asq,
    l1w,
    beta,
    xi,
    lam,
    lam1,
    gam,
    idx_lam,
    idx_gam,
    buf,
    istate,
    fstate,
    rng,
):
    """One outer iteration of ReHLine: the xi block, all lambda, then all gamma.

    Parameters
    ----------
    X : dense (n, d) array or CSR triple
        Samples (the intercept column, if any, already appended).
    PL : (n, 1 + 3 L) float64, row i = ``||x_i||^2, u_1i, v_1i, 1/(u_1i^2 ||x_i||^2), ...,
        u_Li, v_Li, 1/(u_Li^2 ||x_i||^2)`` (ReLU parameters and inverse curvatures packed
        per sample, so one sample's scalars share a cache line; an inverse curvature is 0
        for a constant piece, ``u_li ||x_i|| = 0``).
    PH : (n, 1 + 4 H) float64, row i = ``||x_i||^2, s_1i, t_1i, tau_1i,
        1/(s_1i^2 ||x_i||^2 + 1), ...`` (ReHU parameters; ``tau`` may be ``inf``).
    A : CSR triple of the (K, d) constraint matrix (no zero rows); b : (K,) float64.
    asq : (K,) float64, ``||a_k||^2``.
    l1w : (d,) float64 l1 weights (fake samples); an empty array when there is no l1 term.
    beta : (d,) float64, kept equal to ``beta(xi, Lambda, Gamma)``.
    xi : (K,); lam : (n, L); lam1 : (d, 2) duals of the fake samples (``+w``, ``-w``);
    gam : (n, H): the dual variables, updated in place.
    idx_lam, idx_gam : int64 permutations of each block's coordinates; the first
        ``istate[I_N_*]`` entries are the working set. ``idx_lam`` holds ``i`` for real
        sample ``i`` (when ``L > 0``) and ``n + j`` for fake sample ``j``.
    buf : float64 scratch, at least ``4 (K + 1)`` entries.
    istate, fstate : int64 / float64 state (layouts ``I_*`` and ``F_*``).
    rng : (1,) uint64 generator state.

    With constraints the xi block also runs after every ``istate[I_XI_EVERY]`` sample
    visits of the lambda and gamma blocks (see the module docstring).
    """
    n_pieces_l = (PL.shape[1] - 1) // 3
    K = b.shape[0]
    shrink = istate[I_SHRINK] == 1
    rnd = istate[I_RANDOM] == 1
    full_lam = idx_lam.shape[0]
    full_gam = idx_gam.shape[0]
    was_full = istate[I_N_LAM] == full_lam and istate[I_N_GAM] == full_gam
    istate[I_FULL] = 1 if was_full else 0
    kind = istate[I_XI_KIND]
    sweeps = istate[I_XI_SWEEPS]
    interleave = K > 0 and istate[I_XI_EVERY] > 0
    every = istate[I_XI_EVERY] if interleave else 2**62
    visited = 0
    changed = 0
    move2 = 0.0

    # ---- xi block
    if K > 0:
        c, mv = xi_block(A, b, asq, beta, xi, kind, sweeps, 0.0, buf)
        visited += K
        changed += c
        move2 += mv

    # ---- lambda block, with the xi block after every `every` sample visits.
    m = istate[I_N_LAM]
    if rnd:
        _shuffle(idx_lam, m, rng)
    pgmax_old = fstate[F_PGMAX_LAM]
    pgmin_old = fstate[F_PGMIN_LAM]
    pgmax_lam = -_INF
    pgmin_lam = _INF
    relu1 = n_pieces_l == 1 and l1w.shape[0] == 0
    s = 0
    while s < m:
        if relu1:
            s, m, pgmax_lam, pgmin_lam, move2, nv, nc = _lambda_relu1(
                X,
                PL,
                beta,
                lam,
                idx_lam,
                s,
                m,
                every,
                pgmax_old,
                pgmin_old,
                shrink,
                pgmax_lam,
                pgmin_lam,
                move2,
            )
        elif interleave:
            # Two inlined calls that differ only in the constant `bounded` (folded away).
            s, m, pgmax_lam, pgmin_lam, move2, nv, nc = _lambda_general(
                X,
                PL,
                l1w,
                beta,
                lam,
                lam1,
                idx_lam,
                s,
                m,
                every,
                True,
                pgmax_old,
                pgmin_old,
                shrink,
                pgmax_lam,
                pgmin_lam,
                move2,
            )
        else:
            s, m, pgmax_lam, pgmin_lam, move2, nv, nc = _lambda_general(
                X,
                PL,
                l1w,
                beta,
                lam,
                lam1,
                idx_lam,
                s,
                m,
                every,
                False,
                pgmax_old,
                pgmin_old,
                shrink,
                pgmax_lam,
                pgmin_lam,
                move2,
            )
        visited += nv
        changed += nc
        if interleave:
            c, mv = xi_block(A, b, asq, beta, xi, kind, sweeps, 0.0, buf)
            visited += K
            changed += c
            move2 += mv
    istate[I_N_LAM] = m

    # ---- gamma block: gamma_hi in [0, tau_hi], curvature s^2 ||x_i||^2 + 1.
    m = istate[I_N_GAM]
    if rnd:
        _shuffle(idx_gam, m, rng)
    pgmax_gam = -_INF
    pgmin_gam = _INF
    # Two or more ReHU pieces per sample (Huber, MSE: complementary pieces, one of them at
    # 0 whenever the other is active) leave a sample all-at-bounds only beyond the Huber
    # threshold: shrinking removes few samples there and its tests cost about a quarter of
    # the loop (cadata, house_8L), so that block is not shrunk (constant thresholds).
    # The block is visited through one of two inlined copies: the first, for the common
    # unconstrained multi-piece case (no shrinking of this block, no xi block between
    # segments, no shrunk lambda block whose epochs need the movement of beta), has
    # constant flags that fold the shrinking tests, the budget and the movement away.
    shrink_gam = shrink and (PH.shape[1] - 1) // 4 == 1
    plain = not shrink_gam and not interleave and not (shrink and full_lam > 0)
    pgmax_old = fstate[F_PGMAX_GAM] if shrink_gam else _INF
    pgmin_old = fstate[F_PGMIN_GAM] if shrink_gam else -_INF
    s = 0
    while s < m:
        if plain:
            s, m, pgmax_gam, pgmin_gam, move2, nv, nc = _gamma_segment(
                X,
                PH,
                beta,
                gam,
                idx_gam,
                s,
                m,
                every,
                _INF,
                -_INF,
                False,
                False,
                pgmax_gam,
                pgmin_gam,
                move2,
            )
        else:
            s, m, pgmax_gam, pgmin_gam, move2, nv, nc = _gamma_segment(
                X,
                PH,
                beta,
                gam,
                idx_gam,
                s,
                m,
                every,
                pgmax_old,
                pgmin_old,
                shrink_gam,
                True,
                pgmax_gam,
                pgmin_gam,
                move2,
            )
        visited += nv
        changed += nc
        if interleave:
            c, mv = xi_block(A, b, asq, beta, xi, kind, sweeps, 0.0, buf)
            visited += K
            changed += c
            move2 += mv
    istate[I_N_GAM] = m

    # ---- bookkeeping: counters, shrinking thresholds.
    istate[I_VISITED] = visited
    istate[I_CHANGED] = changed
    istate[I_UPDATES] += visited
    istate[I_K] += 1
    fstate[F_MOVE] = move2
    pg_range = 0.0
    if pgmax_lam >= pgmin_lam:
        pg_range = max(pg_range, pgmax_lam - pgmin_lam)
    if pgmax_gam >= pgmin_gam:
        pg_range = max(pg_range, pgmax_gam - pgmin_gam)
    fstate[F_PG_RANGE] = pg_range
    if not shrink:
        return
    if fstate[F_EPS_SHRINK] < 0.0:
        fstate[F_EPS_SHRINK] = EPS_SHRINK_FIRST * pg_range
    if not was_full:
        # An epoch on shrunk working sets that moved beta by no more than rounding is
        # stuck there (steps below the resolution of the variables they would move, or
        # every coordinate at a bound): only a full pass can tell whether beta is optimal.
        bsq = 0.0
        for j in range(beta.shape[0]):
            bsq += beta[j] * beta[j]
        if changed == 0 or move2 <= STUCK_MOVE_REL * STUCK_MOVE_REL * bsq:
            istate[I_N_LAM] = full_lam
            istate[I_N_GAM] = full_gam
            istate[I_RESTORES] += 1
            fstate[F_PGMAX_LAM] = _INF
            fstate[F_PGMIN_LAM] = -_INF
            fstate[F_PGMAX_GAM] = _INF
            fstate[F_PGMIN_GAM] = -_INF
            return
    if pg_range <= fstate[F_EPS_SHRINK]:
        eps = fstate[F_EPS_SHRINK]
        fstate[F_EPS_SHRINK] = eps * EPS_SHRINK_DECAY
        if not was_full or istate[I_N_LAM] != full_lam or istate[I_N_GAM] != full_gam:
            # Restore the full sets; the restoring epoch shrinks again at once what sits
            # at a bound with its gradient pushing outward by more than eps (the range the
            # working sets just fell below), rather than after a full epoch unshrunk.
            istate[I_N_LAM] = full_lam
            istate[I_N_GAM] = full_gam
            istate[I_RESTORES] += 1
            fstate[F_PGMAX_LAM] = eps
            fstate[F_PGMIN_LAM] = -eps
            fstate[F_PGMAX_GAM] = eps
            fstate[F_PGMIN_GAM] = -eps
        return
    fstate[F_PGMAX_LAM] = pgmax_lam if pgmax_lam > 0.0 else _INF
    fstate[F_PGMIN_LAM] = pgmin_lam if pgmin_lam < 0.0 else -_INF
    fstate[F_PGMAX_GAM] = pgmax_gam if pgmax_gam > 0.0 else _INF
    fstate[F_PGMIN_GAM] = pgmin_gam if pgmin_gam < 0.0 else -_INF


@njit(cache=True, nogil=True)
def epochs(
    X,
    PL,
    PH,
    A,
    b,
    asq,
    l1w,
    beta,
    xi,
    lam,
    lam1,
    gam,
    idx_lam,
    idx_gam,
    buf,
    beta_start,
    min_visits,
    max_epochs,
    istate,
    fstate,
    rng,
):
    """Run :func:`epoch` until the group has visited at least ``min_visits`` coordinates
    (or has run ``max_epochs`` epochs), then, with constraints, solve the xi block to
    convergence (so that the certificate is evaluated with the best xi for the others).

    One trace row per group: without shrinking every epoch visits all coordinates, so a
    group is one epoch when ``min_visits`` is at most the coordinate count; with shrinking,
    epochs over small working sets are grouped so that each certificate evaluation (one
    pass over the data) is preceded by at least ``min_visits`` coordinate updates. The group
    also ends at a fixed point (a full epoch that changed nothing).

    Writes ``istate[I_VISITED]`` (visits of the group), ``istate[I_CHANGED]`` and
    ``istate[I_FULL]`` (of the last epoch) and ``fstate[F_STEP]``
    (``||beta_end - beta_start||_2``). Other arguments as in :func:`epoch`;
    ``beta_start`` is (d,) scratch.
    """
    d = beta.shape[0]
    for j in range(d):
        beta_start[j] = beta[j]
    total = b.shape[0] + idx_lam.shape[0] + idx_gam.shape[0]
    visits = 0
    done = 0
    while done < max_epochs:
        epoch(
            X,
            PL,
            PH,
            A,
            b,
            asq,
            l1w,
            beta,
            xi,
            lam,
            lam1,
            gam,
            idx_lam,
            idx_gam,
            buf,
            istate,
            fstate,
            rng,
        )
        visits += istate[I_VISITED]
        done += 1
        if total == 0 or visits >= min_visits:
            break
        if istate[I_FULL] == 1 and istate[I_CHANGED] == 0:
            break
    if b.shape[0] > 0 and istate[I_XI_KIND] == XI_ROWS and istate[I_XI_EXACT] == 1:
        bsq = 0.0
        for j in range(d):
            bsq += beta[j] * beta[j]
        c, _ = xi_block(
            A, b, asq, beta, xi, XI_ROWS, XI_EXACT_SWEEPS, (STUCK_MOVE_REL**2) * bsq, buf
        )
        visits += c
    istate[I_VISITED] = visits
    step = 0.0
    for j in range(d):
        step += (beta[j] - beta_start[j]) ** 2
    fstate[F_STEP] = math.sqrt(step)


def _row_sqnorm(M, i):  # pragma: no cover - dispatched by numba
    """``||M[i, :]||^2`` for a dense or CSR kernel matrix."""


@overload(_row_sqnorm, jit_options={"fastmath": {"reassoc", "contract"}})
def _row_sqnorm_impl(M, i):
    if isinstance(M, types.BaseTuple):

        def impl(M, i):
            data, _, indptr = M
            acc = 0.0
            for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                acc += data[k] * data[k]
            return acc

        return impl

    def impl_dense(M, i):
        acc = 0.0
        for j in range(M.shape[1]):
            acc += M[i, j] * M[i, j]
        return acc

    return impl_dense


@njit(cache=True, inline="always")
def asq_of(A, k):
    """``||a_k||^2`` of row ``k`` of a CSR triple."""
    data, _, indptr = A
    acc = 0.0
    for t in range(indptr[k], indptr[k + 1]):
        acc += data[t] * data[t]
    return acc


@njit(cache=True, nogil=True)
def pack_pieces(X, U, V, S, T, tau, PL, PH):
    """Fill the per-sample parameter rows ``PL`` (n, 1 + 3L) and ``PH`` (n, 1 + 4H).

    Layouts of :func:`epoch`: ``PL`` row i holds ``||x_i||^2`` then ``u, v, 1/(u^2
    ||x_i||^2)`` per ReLU piece (0 for a constant piece); ``PH`` row i holds
    ``||x_i||^2`` then ``s, t, tau, 1/(s^2 ||x_i||^2 + 1)`` per ReHU piece. ``U, V`` are
    (n, L), ``S, T, tau`` (n, H). One pass over the rows of ``X``.
    """
    n = PL.shape[0]
    n_l = U.shape[1]
    n_h = S.shape[1]
    for i in range(n):
        q = _row_sqnorm(X, i)
        PL[i, 0] = q
        for l_ in range(n_l):
            u = U[i, l_]
            curv = u * u * q
            PL[i, 1 + 3 * l_] = u
            PL[i, 2 + 3 * l_] = V[i, l_]
            PL[i, 3 + 3 * l_] = 1.0 / curv if curv > 0.0 else 0.0
        PH[i, 0] = q
        for h in range(n_h):
            s = S[i, h]
            PH[i, 1 + 4 * h] = s
            PH[i, 2 + 4 * h] = T[i, h]
            PH[i, 3 + 4 * h] = tau[i, h]
            PH[i, 4 + 4 * h] = 1.0 / (s * s * q + 1.0)


@njit(cache=True, inline="always")
def _gap_terms(X, PL, PH, A, b, l1w, beta, beta_mu, xi, lam, lam1, gam, out, with_size):
    """The body of :func:`evaluate` and :func:`evaluate_sized`; ``with_size`` is a
    constant at each inlined call, so the size terms cost nothing when not asked for."""
    n = PL.shape[0]
    n_pieces_l = (PL.shape[1] - 1) // 3
    n_pieces_h = (PH.shape[1] - 1) // 4
    d = beta.shape[0]
    primal = 0.0
    for j in range(d):
        primal += beta[j] * beta[j]
    primal *= 0.5
    bnorm = math.sqrt(2.0 * primal)
    # mag: the size of what the gap's terms are computed from (each margin z_i carries a
    # rounding error of about eps ||x_i|| ||beta||), so that 4 eps mag bounds the rounding
    # error of the computed gap.
    mag = primal
    gap = 0.0
    if n_pieces_l + n_pieces_h > 0:
        for i in range(n):
            z = row_dot_long(X, i, beta)
            zerr = 0.0
            if with_size:
                zerr = math.sqrt(PL[i, 0]) * bnorm
            for l_ in range(n_pieces_l):
                u = PL[i, 1 + 3 * l_]
                w = u * z + PL[i, 2 + 3 * l_]
                r = w if w > 0.0 else 0.0
                lm = lam[i, l_]
                primal += r
                gap += r - lm * w
                if with_size:
                    mag += r + lm * (abs(w) + abs(u) * zerr)
            for h in range(n_pieces_h):
                sh = PH[i, 1 + 4 * h]
                w = sh * z + PH[i, 2 + 4 * h]
                r = _rehu(w, PH[i, 3 + 4 * h])
                g = gam[i, h]
                primal += r
                gap += r - g * w + 0.5 * g * g
                if with_size:
                    mag += r + g * (abs(w) + abs(sh) * zerr) + 0.5 * g * g
    for j in range(l1w.shape[0]):
        w = l1w[j] * beta[j]
        r = abs(w)
        primal += r
        gap += r - lam1[j, 0] * w + lam1[j, 1] * w
        mag += 2.0 * r  # folded away when with_size is False (mag unused)
    dist = 0.0
    for j in range(d):
        t = beta[j] - beta_mu[j]
        dist += t * t
    gap += 0.5 * dist
    mag += 0.5 * dist
    cert = gap
    infeas = 0.0
    for k in range(b.shape[0]):
        r = row_dot(A, k, beta) + b[k]
        gap += xi[k] * r
        if with_size:
            mag += abs(xi[k] * r) + xi[k] * math.sqrt(asq_of(A, k)) * bnorm
        if r > 0.0:
            cert += xi[k] * r
        elif -r > infeas:
            infeas = -r
    if with_size:
        out[E_MAG] = mag
    out[E_PRIMAL] = primal
    out[E_GAP] = gap
    out[E_CERT] = cert
    out[E_INFEAS] = infeas


@njit(cache=True, nogil=True)
def evaluate(X, PL, PH, A, b, l1w, beta, beta_mu, xi, lam, lam1, gam, out):
    """Primal objective, duality gap, certificate and infeasibility of a primal point and
    a dual point.

    ``beta`` is the primal point, ``beta_mu`` the dual map ``beta(xi, Lambda, Gamma)`` of
    the dual point (the same array when ``beta`` is kept equal to it, as coordinate descent
    does; a feasible point near it otherwise). For any pair,
    ``P(beta) + L(mu) = sum of Fenchel-Young gaps at beta + 0.5 ||beta - beta_mu||^2
    + xi^T (A beta + b)``, every term >= 0 when ``beta`` is feasible: the gap is computed
    that way, term by term. Writes ``out[E_PRIMAL]`` = P(beta), ``out[E_GAP]`` = P(beta) +
    L(mu), ``out[E_CERT]`` (the gap with the constraint terms ``xi_k (a_k beta + b_k)``
    replaced by ``xi_k max(a_k beta + b_k, 0)``: >= the gap, equal to it when beta is
    feasible) and ``out[E_INFEAS]`` = ``max_k max(0, -(a_k beta + b_k))``; ``out[E_MAG]``
    is left as it is (:func:`evaluate_sized` writes it). One pass over the rows of ``X``
    and ``A``. Arguments as in :func:`epoch`.
    """
    _gap_terms(X, PL, PH, A, b, l1w, beta, beta_mu, xi, lam, lam1, gam, out, False)


@njit(cache=True, nogil=True)
def evaluate_sized(X, PL, PH, A, b, l1w, beta, beta_mu, xi, lam, lam1, gam, out):
    """:func:`evaluate`, and ``out[E_MAG]``: the size of the quantities the gap is
    computed from. Its rounding error is at most a few ``eps * E_MAG`` (on raw features
    the gap of an optimal pair can come out slightly negative). The size costs ~40 % of an
    evaluation on 8-feature data, so callers recompute it only near a decision."""
    _gap_terms(X, PL, PH, A, b, l1w, beta, beta_mu, xi, lam, lam1, gam, out, True)
