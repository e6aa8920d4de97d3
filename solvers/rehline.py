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
All pieces of one sample are updated from a single inner product, so the sample's row is
read twice (dot, then one combined axpy) whatever ``L`` or ``H``.

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
loss of the SVM and FairSVM, any ``C``), the lambda block runs the plain dual coordinate
descent of Hsieh et al. (2008) for the L1-loss SVM.

Where things are:

* this module: the state layouts (``I_*``, ``F_*``), :func:`epoch`, :func:`epochs` and
  :func:`reset_shrinking`;
* :mod:`solvers.plq_state`: the workspace structs every kernel here takes instead of
  separate arrays: :class:`~solvers.plq_state.PlqData` (the problem, with its constraint
  rows :class:`~solvers.plq_state.PlqRows`), :class:`~solvers.plq_state.PlqDuals` (the
  dual point and ``beta``), :class:`~solvers.plq_state.CdWork` (working sets, scratch,
  state, generator);
* :mod:`solvers.rehline_blocks`: the blocks an epoch runs (constraint duals ``xi``,
  ``XI_*`` kinds, :func:`~solvers.rehline_blocks.xi_block`; the lambda and gamma blocks;
  shrinking tests, random order, prefetching);
* :mod:`solvers.plq_pieces`: :func:`~solvers.plq_pieces.pack_pieces`, the packed per-sample
  rows ``PL``, ``PH`` of the pieces;
* :mod:`solvers.plq_certificate`: the duality-gap certificate
  (:func:`~solvers.plq_certificate.evaluate`, :func:`~solvers.plq_certificate.evaluate_sized`,
  output layout ``E_*``).

Callers use all of them as attributes of this module (``kern.evaluate``, ``kern.E_MAG``,
``kern.xi_block`` ...): the names are re-exported below.

Kernel contract: state in caller-owned arrays (grouped in the structs) mutated in place;
:func:`epoch` runs one outer iteration (:func:`epochs` a group of them), :func:`evaluate`
writes the primal objective and certificate of the current state;
``@njit(cache=True, nogil=True)``; dense or CSR ``X`` (and CSR ``A``) dispatched at compile
time by :mod:`solvers.linalg`; no allocation in the loops.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

# The pieces epoch() runs, and names re-exported for callers, who use them as attributes of
# this module (kern.evaluate, kern.E_MAG, kern.xi_block, kern.pack_pieces ...): noqa F401.
from solvers.plq_certificate import (  # noqa: F401
    E_CERT,
    E_GAP,
    E_INFEAS,
    E_MAG,
    E_PRIMAL,
    N_EVAL,
    asq_of,
    evaluate,
    evaluate_sized,
)
from solvers.plq_pieces import pack_pieces  # noqa: F401
from solvers.plq_state import CdWork, PlqData, PlqDuals, PlqRows  # noqa: F401
from solvers.rehline_blocks import (  # noqa: F401
    PF_FAR,
    XI_CHAIN,
    XI_ROWS,
    XI_SEPARABLE,
    _gamma_segment,
    _lambda_general,
    _lambda_relu1,
    _shuffle,
    xi_block,
)

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

# How the xi block is solved (istate[I_XI_KIND]): XI_* in solvers.rehline_blocks.
#: XI_ROWS: sweeps of the exact xi solve that ends each group of epochs (at most).
XI_EXACT_SWEEPS = 200
#: Relative movement of beta (||delta beta|| / ||beta||) below which an epoch on shrunk
#: working sets counts as stuck (and the full sets are restored).
STUCK_MOVE_REL = 1e-13

_INF = np.inf

# Shrinking: the first restore threshold is EPS_SHRINK_FIRST x the first epoch's projected-
# gradient range, and each use multiplies it by EPS_SHRINK_DECAY.
EPS_SHRINK_FIRST = 0.1
EPS_SHRINK_DECAY = 0.125


def reset_shrinking(istate, fstate, n_lam, n_gam):
    """Full working sets and no shrinking thresholds (call from Python or a kernel)."""
    istate[I_N_LAM] = n_lam
    istate[I_N_GAM] = n_gam
    fstate[F_PGMAX_LAM] = _INF
    fstate[F_PGMIN_LAM] = -_INF
    fstate[F_PGMAX_GAM] = _INF
    fstate[F_PGMIN_GAM] = -_INF


@njit(cache=True, nogil=True)
def epoch(data, duals, work):
    """One outer iteration of ReHLine: the xi block, all lambda, then all gamma.

    Parameters
    ----------
    data : :class:`~solvers.plq_state.PlqData`
        ``X``: dense (n, d) array or CSR triple, the samples (the intercept column, if any,
        already appended). ``PL``: (n, 1 + 3 L) float64, row i = ``||x_i||^2, u_1i, v_1i,
        1/(u_1i^2 ||x_i||^2), ..., u_Li, v_Li, 1/(u_Li^2 ||x_i||^2)`` (ReLU parameters and
        inverse curvatures packed per sample, so one sample's scalars share a cache line;
        an inverse curvature is 0 for a constant piece, ``u_li ||x_i|| = 0``). ``PH``:
        (n, 1 + 4 H) float64, row i = ``||x_i||^2, s_1i, t_1i, tau_1i,
        1/(s_1i^2 ||x_i||^2 + 1), ...`` (ReHU parameters; ``tau`` may be ``inf``).
        ``l1w``: (d,) float64 l1 weights (fake samples); an empty array when there is no
        l1 term. ``rows``: ``A`` CSR triple of the (K, d) constraint matrix (no zero rows),
        ``b`` (K,) float64, ``asq`` (K,) float64 ``||a_k||^2``.
    duals : :class:`~solvers.plq_state.PlqDuals`
        ``beta`` (d,) kept equal to ``beta(xi, Lambda, Gamma)``; ``xi`` (K,); ``lam``
        (n, L); ``lam1`` (d, 2) duals of the fake samples (``+w``, ``-w``); ``gam`` (n, H):
        updated in place.
    work : :class:`~solvers.plq_state.CdWork`
        ``idx_lam``, ``idx_gam``: int64 permutations of each block's coordinates; the first
        ``istate[I_N_*]`` entries are the working set. ``idx_lam`` holds ``i`` for real
        sample ``i`` (when ``L > 0``) and ``n + j`` for fake sample ``j``. ``buf``: float64
        scratch, at least ``4 (K + 1)`` entries. ``istate``, ``fstate``: int64 / float64
        state (layouts ``I_*`` and ``F_*``). ``rng``: (1,) uint64 generator state.
        (``beta_start`` is used by :func:`epochs` only.)

    With constraints the xi block also runs after every ``istate[I_XI_EVERY]`` sample
    visits of the lambda and gamma blocks (see the module docstring).
    """
    PL = data.PL
    PH = data.PH
    rows = data.rows
    beta = duals.beta
    xi = duals.xi
    idx_lam = work.idx_lam
    idx_gam = work.idx_gam
    buf = work.buf
    istate = work.istate
    fstate = work.fstate
    rng = work.rng
    n_pieces_l = (PL.shape[1] - 1) // 3
    K = rows.b.shape[0]
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
        c, mv = xi_block(rows, beta, xi, kind, sweeps, 0.0, buf)
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
    relu1 = n_pieces_l == 1 and data.l1w.shape[0] == 0
    rule = (shrink, pgmax_old, pgmin_old)
    s = np.int64(0)  # (np.int64: no Literal-typed helper calls, linalg docstring)
    while s < m:
        acc = (pgmax_lam, pgmin_lam, move2)
        if relu1:
            s, m, acc, nv, nc = _lambda_relu1(data, duals, idx_lam, (s, m, every), rule, acc)
        else:
            s, m, acc, nv, nc = _lambda_general(
                data, duals, idx_lam, (s, m, every), rule, acc, interleave
            )
        pgmax_lam, pgmin_lam, move2 = acc
        visited += nv
        changed += nc
        if interleave:
            c, mv = xi_block(rows, beta, xi, kind, sweeps, 0.0, buf)
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
    rule = (shrink_gam, pgmax_old, pgmin_old)
    s = np.int64(0)
    while s < m:
        acc = (pgmax_gam, pgmin_gam, move2)
        if plain:
            s, m, acc, nv, nc = _gamma_segment(
                data, duals, idx_gam, (s, m, every), (False, _INF, -_INF), acc, False
            )
        else:
            s, m, acc, nv, nc = _gamma_segment(data, duals, idx_gam, (s, m, every), rule, acc, True)
        pgmax_gam, pgmin_gam, move2 = acc
        visited += nv
        changed += nc
        if interleave:
            c, mv = xi_block(rows, beta, xi, kind, sweeps, 0.0, buf)
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
def epochs(data, duals, work, min_visits, max_epochs):
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
    (``||beta_end - beta_start||_2``). Arguments as in :func:`epoch`;
    ``work.beta_start`` is (d,) scratch.
    """
    beta = duals.beta
    beta_start = work.beta_start
    istate = work.istate
    rows = data.rows
    b = rows.b
    d = beta.shape[0]
    for j in range(d):
        beta_start[j] = beta[j]
    total = b.shape[0] + work.idx_lam.shape[0] + work.idx_gam.shape[0]
    visits = 0
    done = 0
    while done < max_epochs:
        epoch(data, duals, work)
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
            rows,
            beta,
            duals.xi,
            np.int64(XI_ROWS),
            np.int64(XI_EXACT_SWEEPS),
            (STUCK_MOVE_REL**2) * bsq,
            work.buf,
        )
        visits += c
    istate[I_VISITED] = visits
    step = 0.0
    for j in range(d):
        step += (beta[j] - beta_start[j]) ** 2
    work.fstate[F_STEP] = math.sqrt(step)
