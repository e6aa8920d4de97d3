"""One Frank-Wolfe kernel for several variants and feasible sets.

Problem: ``min_{x in C} f(x) = loss(M x) + ridge ||x||^2`` with ``C`` one of the sets of
:mod:`solvers.sets` and the loss ``scale ||z - b||^2`` (``LOSS_SQUARED``) or the mean
logistic loss ``mean_i log(1 + exp(-b_i z_i))`` (``LOSS_LOGISTIC``, ``ridge = 0``). The
kernel takes ``MT = M^T`` as a kernel matrix (:func:`solvers.linalg.as_kernel_matrix`):
row ``j`` of ``MT`` is column ``j`` of ``M``, so the gradient ``MT r + 2 ridge x`` is one
row pass and ``M s`` for a sparse atom ``s`` costs its ``nnz`` rows. It keeps ``x`` and
``z = M x`` and updates both per step. This covers the L2-SVM dual over the simplex
(``MT = diag(y) X``, ``b = 0``, ``scale = 1``, ``ridge = 1/C``), constrained logistic
regression (``MT = X^T``, ``b = y``) and least squares (``scale = 1/(2n)``).

Methods (``METHOD_CODES``):

* ``fw``: vanilla Frank-Wolfe (Frank & Wolfe 1956; Jaggi 2013).
* ``afw``, ``pfw``: away-step and pairwise FW (Lacoste-Julien & Jaggi 2015, NeurIPS).
* ``bpcg``: blended pairwise conditional gradients (Tsuji, Tanaka & Pokutta 2022, ICML,
  Algorithm 1): a local pairwise step between the active atoms of largest and smallest
  ``<g, v>`` when its gap ``<g, a - s>`` is at least the FW gap, else a FW step.
* ``boosted``: Boosted FW (Combettes & Pokutta 2020, ICML, Algorithm 2), see
  :func:`solvers.fw_vparts.boost_pursuit`; several LMO calls per iteration.
* ``dicg``: decomposition-invariant pairwise CG on the simplex (Garber & Meshi 2016,
  NeurIPS): no active set; the away vertex is ``argmax_{x_i > 0} g_i``.

``afw``, ``pfw`` and ``bpcg`` keep an active set (:mod:`solvers.fw_vparts`); with
``lazy`` they are lazified (Braun, Pokutta & Zink 2017, "Lazifying conditional gradient
algorithms", ICML): a dual-gap estimate ``Phi`` (initially half the FW gap at ``x_0``)
decides whether an active atom is good enough (gap ``>= Phi / lazy_K``); only otherwise
is the LMO called, and when its FW gap is below ``Phi / lazy_K`` the estimate becomes
``gap / 2`` (the step still uses the LMO vertex).

Certificate (record column ``certificate``): the FW gap ``<g, x - s>`` at ``x_k`` for the
non-lazy methods (one LMO call at every iterate). A lazy run calls the LMO only now and
then, so it records the certified primal-dual gap ``f(x_k) - max_{s} (f(x_s) - gap_s)``
over the iterates ``x_s`` where the LMO was called: by convexity ``f* >= f(x_s) +
<g_s, v - x_s>`` for every ``v`` in ``C``, i.e. ``f* >= f(x_s) - gap_s`` (the Wolfe dual
bound), so the recorded value bounds ``f(x_k) - f*`` from above.

Step types: ``fw``, ``away``, ``pairwise``, ``drop`` (an away, pairwise, local or lazy
pairwise step that removed its atom), ``local`` (BPCG), ``lazy`` (toward / pairwise with
the best active atom, no LMO call), ``boosted``. ``active_size`` is the active-set size
for the active-set methods and the number of nonzeros of ``x`` otherwise.

Gram cache (squared loss over the simplex or the l1 ball, whose atoms are 1-sparse, all
methods but ``boosted``): the kernel keeps ``h = M^T M x`` and the gradient ``g = 2 scale
(h - M^T b) + 2 ridge x`` (``M^T b`` computed once), updating ``h`` after each step from
the Gram columns ``M^T M e_j = MT MT[j, :]`` of the step's atoms, held in an LRU cache
(:mod:`solvers.gram_cache`, as :func:`solvers.fw.svm_dual_advance` does): a step costs
O(n + p) once its atoms are cached instead of a pass over ``MT``. The objective stays
exact (from ``z``); ``h`` is rebuilt from scratch with ``x`` and ``z`` every
``refresh_every`` steps. ``grad_evals`` counts passes over the data: full gradients plus
cache misses (one pass each).

The kernel contract is that of :mod:`solvers.fw`. The active set lives in caller-owned
arrays the kernel cannot reallocate: when it is full at the start of an iteration the
kernel sets ``istate[I_GROW]`` and returns; :func:`advance` doubles the arrays and calls
again, so callers never see this.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solvers.fw import terminal_status as terminal
from solvers.fw_vparts import (
    ACTIVE_SET_METHODS,
    F_BOOST_DELTA,
    F_LAZY_K,
    F_LB,
    F_PHI,
    FWV_RECORD_COLUMNS,
    I_BOOST_ROUNDS,
    I_FUN_EVALS,
    I_GRAD_EVALS,
    I_GROW,
    I_H_VALID,
    I_K,
    I_LAZY,
    I_LMO_CALLS,
    I_LOSS,
    I_METHOD,
    I_NACT,
    I_REFRESH,
    I_RULE,
    I_SET,
    I_STATUS,
    I_STOP_AT,
    L_RIDGE,
    L_SCALE,
    LAZY_METHODS,
    LOSS_CODES,
    LOSS_LOGISTIC,
    LOSS_SQUARED,
    METHOD_AFW,
    METHOD_BOOSTED,
    METHOD_BPCG,
    METHOD_CODES,
    METHOD_DICG,
    METHOD_FW,
    METHOD_PFW,
    N_FSTATE,
    N_ISTATE,
    KernelState,
    away_weights,
    boost_pursuit,
    dir_from_x,
    dir_pair,
    dot,
    find_or_append,
    fw_weights,
    gram_step,
    loss_grad,
    mt_product,
    pair_weights,
    product,
    rebuild_from_active,
    record_row,
    scan_active,
    squared_from_h,
)
from solvers.gram_cache import new_gram_cache
from solvers.linalg import as_kernel_vector, rmatvec, row_axpy
from solvers.lmo import SET_L1, SET_L2, SET_SIMPLEX, atom_dot, lmo, max_nnz
from solvers.steps import LINE_LOGISTIC, LINE_QUADRATIC, RULE_CODES, step_size
from solvers.tags import (
    STATUS_RUNNING,
    STATUS_STALLED,
    STEP_AWAY,
    STEP_BOOSTED,
    STEP_DROP,
    STEP_FW,
    STEP_LAZY,
    STEP_LOCAL,
    STEP_NONE,
    STEP_PAIRWISE,
)

__all__ = [
    "FWV_RECORD_COLUMNS",
    "LOSS_CODES",
    "METHOD_CODES",
    "FWVState",
    "active_atoms",
    "advance",
    "fwv_advance",
    "new_state",
]

# What the kernel does with the step it chose.
_UPD_X = 0  # no active set: x += gamma d only
_UPD_FW = 1  # FW-type step toward active row i_to (-1: the LMO atom, looked up / appended)
_UPD_AWAY = 2  # away from row i_from
_UPD_PAIR = 3  # pairwise: weight from row i_from to row i_to (-1: the LMO atom)
_UPD_DICG = 4  # DICG: x[js] += gamma, x[jv] -= gamma (x[jv] = 0 on a drop)

# How the Gram cache updates h = M^T M x after the step (atoms a = va e_ja, v = vb e_jb).
_H_NONE = 0  # not handled (boosted, atoms with several entries): recompute next time
_H_TOWARD = 1  # x' = (1 - gamma) x + gamma a
_H_AWAY = 2  # x' = (1 + gamma) x - gamma v
_H_PAIR = 3  # x' = x + gamma (a - v)
#: gram_step's "no atom" index, typed int64 rather than Literal[int](-1): one compiled
#: gram_step for every call (solvers.linalg's docstring).
_NO_ATOM = np.int64(-1)


@njit(cache=True, nogil=True)
def fwv_advance(
    MT, b, set_par, loss_par, step_params, x, z, g, r, pv, nv, s_idx, s_val,
    at_idx, at_val, at_nnz, mu, istate, fstate, lstate, tol, rec, gram,
):  # fmt: skip
    """Advance the chosen variant by at most ``rec.shape[0]`` iterations.

    Parameters
    ----------
    MT : dense (p, n) array or CSR triple, ``M^T``.
    b : (n,) float64, the loss's targets (labels +-1 for the logistic loss).
    set_par, loss_par, step_params : float64 parameter vectors (sets, ``[scale, ridge]``,
        :func:`solvers.steps.default_step_params`).
    x : (p,) iterate; z : (n,) ``M x``; g : (p,) gradient; r : (n,) ``dloss/dz``.
    pv : (3, p) and nv : (2, n) float64 scratch (direction, pursuit vectors, ``M d``).
    s_idx, s_val : (max_nnz,) scratch atom written by the LMO.
    at_idx, at_val, at_nnz, mu : the active set (see :mod:`solvers.fw_vparts`).
    istate, fstate : ``I_*`` / ``F_*`` state; lstate : (1,) adaptive rule's ``L``.
    tol : float, stop when the certificate is at most this.
    rec : (max_rows, len(FWV_RECORD_COLUMNS)) float64.
    gram : ``(cols, slot_of, atom_of, stamp, h, mtb, xj, ones)``: the Gram-column cache
        of :mod:`solvers.gram_cache` over ``p`` columns, ``h = M^T M x``, ``mtb = M^T b``,
        (n,) zeroed scratch and (p,) ones; used when it has at least two slots, the loss
        is squared and the set's atoms are 1-sparse (simplex, l1 ball).

    Returns the number of rows written.
    """
    p = x.shape[0]
    method = istate[I_METHOD]
    rule = istate[I_RULE]
    set_code = istate[I_SET]
    loss_code = istate[I_LOSS]
    lazy = istate[I_LAZY] == 1
    has_active = method == METHOD_AFW or method == METHOD_PFW or method == METHOD_BPCG
    line = LINE_QUADRATIC if loss_code == LOSS_SQUARED else LINE_LOGISTIC
    cap = mu.shape[0]
    d = pv[0]
    zd = nv[0]
    max_rows = rec.shape[0]
    h = gram[4]
    mtb = gram[5]
    cached = (
        gram[0].shape[0] >= 2
        and loss_code == LOSS_SQUARED
        and (set_code == SET_SIMPLEX or set_code == SET_L1)
        and method != METHOD_BOOSTED
        and h.shape[0] == p
    )
    for row in range(max_rows):
        k = istate[I_K]
        if has_active and istate[I_NACT] >= cap:
            # A step may append an atom and the arrays are full: let advance() grow them.
            istate[I_GROW] = 1
            istate[I_STATUS] = STATUS_RUNNING
            return row
        if k > 0 and istate[I_REFRESH] > 0 and k % istate[I_REFRESH] == 0:
            if has_active:
                rebuild_from_active(MT, at_idx, at_val, at_nnz, mu, istate[I_NACT], x, z)
            else:
                rmatvec(MT, x, z)
            istate[I_H_VALID] = 0
        if cached:
            full = istate[I_H_VALID] == 0
            f, gx = squared_from_h(b, loss_par, x, z, r, h, mtb, g, full, MT)
            if full:
                istate[I_GRAD_EVALS] += 1
                istate[I_H_VALID] = 1
        else:
            f = loss_grad(MT, b, loss_code, loss_par, x, z, r, g)
            istate[I_GRAD_EVALS] += 1
            gx = dot(g, x)
        nact = istate[I_NACT]
        active = nact
        if not has_active and method != METHOD_DICG:  # DICG counts in its scan
            active = 0
            for j in range(p):
                if x[j] != 0.0:
                    active += 1
        upd = _UPD_X
        kind = STEP_FW
        i_to = -1
        i_from = -1
        js = 0
        jv = 0
        gmax = 1.0
        fw_like = True  # Armijo starts at 2/(k+2) for FW steps, at gamma_max otherwise
        s_nnz = 0
        if method == METHOD_DICG:
            # Simplex only: LMO e_js, away vertex e_jv over the support of x.
            gmin = np.inf
            gv = -np.inf
            active = 0
            for j in range(p):  # two plain loops run faster than one with all branches
                if g[j] < gmin:
                    gmin = g[j]
                    js = j
            for j in range(p):
                if x[j] != 0.0:
                    active += 1
                    if x[j] > 0.0 and g[j] > gv:
                        gv = g[j]
                        jv = j
            istate[I_LMO_CALLS] += 1
            cert = gx - gmin
            upd = _UPD_DICG
            kind = STEP_PAIRWISE
            gmax = x[jv]
            fw_like = False
        elif not has_active:
            s_nnz = lmo(set_code, set_par, g, s_idx, s_val)
            istate[I_LMO_CALLS] += 1
            cert = gx - atom_dot(s_idx, s_val, s_nnz, g)
        else:
            ia, ga, il, gl = scan_active(at_idx, at_val, at_nnz, nact, g)
            call = not lazy
            first = lazy and fstate[F_PHI] < 0.0
            if first:
                call = True
            thr = fstate[F_PHI] / fstate[F_LAZY_K]
            lazy_step = False
            if lazy and not first:
                # Lazy tests on the active atoms only (no LMO call when one passes).
                if method == METHOD_AFW:
                    if gx - gl >= thr:
                        upd, kind, i_to, lazy_step = _UPD_FW, STEP_LAZY, il, True
                    elif nact > 1 and ga - gx >= thr:
                        upd, kind, i_from, lazy_step = _UPD_AWAY, STEP_AWAY, ia, True
                elif method == METHOD_PFW:
                    if il != ia and gx - gl >= thr:
                        upd, kind, i_to, i_from, lazy_step = _UPD_PAIR, STEP_LAZY, il, ia, True
                elif ga - gl >= thr:
                    upd, kind, i_to, i_from, lazy_step = _UPD_PAIR, STEP_LOCAL, il, ia, True
                call = not lazy_step
            gap = 0.0
            if call:
                s_nnz = lmo(set_code, set_par, g, s_idx, s_val)
                istate[I_LMO_CALLS] += 1
                gap = gx - atom_dot(s_idx, s_val, s_nnz, g)
                if lazy:
                    fstate[F_LB] = max(fstate[F_LB], f - gap)
                    if first:
                        fstate[F_PHI] = 0.5 * gap
                    elif gap < thr:
                        fstate[F_PHI] = 0.5 * gap
                if method == METHOD_AFW:
                    if not lazy and nact > 1 and ga - gx > gap:
                        upd, kind, i_from = _UPD_AWAY, STEP_AWAY, ia
                    else:
                        upd, kind, i_to = _UPD_FW, STEP_FW, -1
                elif method == METHOD_PFW:
                    upd, kind, i_to, i_from = _UPD_PAIR, STEP_PAIRWISE, -1, ia
                elif ga - gl >= gap and il != ia:
                    upd, kind, i_to, i_from = _UPD_PAIR, STEP_LOCAL, il, ia
                else:
                    upd, kind, i_to = _UPD_FW, STEP_FW, -1
            cert = f - fstate[F_LB] if lazy else gap
            if upd == _UPD_AWAY:
                mv = mu[i_from]
                gmax = mv / (1.0 - mv) if mv < 1.0 else 0.0
                fw_like = False
            elif upd == _UPD_PAIR:
                gmax = mu[i_from]
                fw_like = False
        status = terminal(cert, tol, f, k, istate[I_STOP_AT])
        if status != STATUS_RUNNING:
            record_row(rec, row, k, f, cert, 0.0, STEP_NONE, active, istate)
            istate[I_STATUS] = status
            return row + 1
        # The search direction d and zd = M d.
        if method == METHOD_DICG:
            d[:] = 0.0
            zd[:] = 0.0
            d[js] = 1.0
            d[jv] -= 1.0
            row_axpy(MT, js, 1.0, zd)
            row_axpy(MT, jv, -1.0, zd)
        elif method == METHOD_BOOSTED:
            lam, extra = boost_pursuit(
                MT, set_code, set_par, x, z, g, gx, s_idx, s_val, s_nnz,
                d, pv[1], pv[2], zd, istate[I_BOOST_ROUNDS], fstate[F_BOOST_DELTA],
            )  # fmt: skip
            istate[I_LMO_CALLS] += extra
            kind = STEP_BOOSTED
            fw_like = False
            if lam > 0.0:
                d /= lam
                zd /= lam
        elif not has_active or (upd == _UPD_FW and i_to < 0):
            dir_from_x(MT, x, z, s_idx, s_val, s_nnz, 1.0, d, zd)
        elif upd == _UPD_FW:
            dir_from_x(MT, x, z, at_idx[i_to], at_val[i_to], at_nnz[i_to], 1.0, d, zd)
        elif upd == _UPD_AWAY:
            dir_from_x(MT, x, z, at_idx[i_from], at_val[i_from], at_nnz[i_from], -1.0, d, zd)
        elif i_to < 0:
            dir_pair(MT, s_idx, s_val, s_nnz, at_idx[i_from], at_val[i_from], at_nnz[i_from], d, zd)
        else:
            dir_pair(
                MT, at_idx[i_to], at_val[i_to], at_nnz[i_to],
                at_idx[i_from], at_val[i_from], at_nnz[i_from], d, zd,
            )  # fmt: skip
        # The atoms the step moves toward (va e_ja) and away from (vb e_jb), for the cache.
        hmode = _H_NONE
        ja = np.int64(-1)
        va = 0.0
        jb = np.int64(-1)
        vb = 0.0
        if cached:
            if method == METHOD_DICG:
                hmode, ja, va, jb, vb = _H_PAIR, js, 1.0, jv, 1.0
            elif upd == _UPD_AWAY:
                if at_nnz[i_from] == 1:
                    hmode, jb, vb = _H_AWAY, at_idx[i_from, 0], at_val[i_from, 0]
            else:
                if i_to < 0:
                    nnz_a, ja, va = s_nnz, s_idx[0], s_val[0]
                else:
                    nnz_a, ja, va = at_nnz[i_to], at_idx[i_to, 0], at_val[i_to, 0]
                if nnz_a == 1 and upd != _UPD_PAIR:
                    hmode = _H_TOWARD
                elif nnz_a == 1 and at_nnz[i_from] == 1:
                    hmode, jb, vb = _H_PAIR, at_idx[i_from, 0], at_val[i_from, 0]
        sparse_d = hmode == _H_PAIR and ja != jb
        if sparse_d:
            # d = va e_ja - vb e_jb: the same sums as the dense dot products, in O(1).
            gd = g[ja] * va + g[jb] * (-vb)
            dnorm2 = va * va + vb * vb
        else:
            gd = dot(g, d)
            dnorm2 = dot(d, d)
        if gd >= 0.0:
            # Not a descent direction (zero direction or a gap at rounding level): no step
            # can make progress, so stop rather than move along it.
            record_row(rec, row, k, f, cert, 0.0, STEP_NONE, active, istate)
            istate[I_STATUS] = STATUS_STALLED
            return row + 1
        curv = 0.0
        if loss_code == LOSS_SQUARED:
            curv = loss_par[L_SCALE] * dot(zd, zd) + loss_par[L_RIDGE] * dnorm2
        start = 2.0 / (k + 2.0) if fw_like else gmax
        gamma, evals = step_size(
            rule, k, gd, dnorm2, gmax, start, line, f, curv, z, zd, b, step_params, lstate
        )
        istate[I_FUN_EVALS] += evals
        if gamma <= 0.0:
            record_row(rec, row, k, f, cert, 0.0, STEP_NONE, active, istate)
            istate[I_STATUS] = STATUS_STALLED
            return row + 1
        if sparse_d:
            x[ja] += gamma * d[ja]
            x[jb] += gamma * d[jb]
        else:
            for j in range(p):
                x[j] += gamma * d[j]
        for i in range(z.shape[0]):
            z[i] += gamma * zd[i]
        if upd == _UPD_DICG:
            if gamma >= gmax:
                x[jv] = 0.0  # exact drop: the support test x_i > 0 must see it
                kind = STEP_DROP
        elif upd == _UPD_FW:
            if i_to < 0:
                i_to = find_or_append(at_idx, at_val, at_nnz, mu, istate, s_idx, s_val, s_nnz)
            fw_weights(at_idx, at_val, at_nnz, mu, istate, i_to, gamma)
        elif upd == _UPD_AWAY:
            if away_weights(at_idx, at_val, at_nnz, mu, istate, i_from, gamma, gmax):
                kind = STEP_DROP
        elif upd == _UPD_PAIR:
            if i_to < 0:
                i_to = find_or_append(at_idx, at_val, at_nnz, mu, istate, s_idx, s_val, s_nnz)
            if pair_weights(at_idx, at_val, at_nnz, mu, istate, i_to, i_from, gamma, gmax):
                kind = STEP_DROP
        record_row(rec, row, k, f, cert, gamma, kind, active, istate)
        istate[I_K] = k + 1
        if cached:
            # h(x') from h(x) and the cached columns; their misses count in the next row.
            if hmode == _H_TOWARD:
                gram_step(MT, gram, k + 1, 1.0 - gamma, ja, gamma * va, _NO_ATOM, 0.0, istate)
            elif hmode == _H_AWAY:
                gram_step(MT, gram, k + 1, 1.0 + gamma, _NO_ATOM, 0.0, jb, -gamma * vb, istate)
            elif hmode == _H_PAIR:
                gram_step(MT, gram, k + 1, 1.0, ja, gamma * va, jb, -gamma * vb, istate)
            else:
                istate[I_H_VALID] = 0
    istate[I_STATUS] = STATUS_RUNNING
    return max_rows


class FWVState(KernelState):
    """Caller-owned arrays of one run of :func:`fwv_advance` (see :func:`new_state`)."""

    @property
    def gram_slots(self) -> int:
        """Slots of the Gram-column cache (0: the gradient is recomputed every step)."""
        return int(self.gram[0].shape[0])

    @property
    def lmo_calls(self) -> int:
        return int(self.istate[I_LMO_CALLS])


def new_state(
    MT,
    b: np.ndarray,
    set_code: int,
    set_par: np.ndarray,
    loss_code: int,
    loss_par: np.ndarray,
    method: int,
    rule: int,
    step_params: np.ndarray,
    x0_idx: np.ndarray,
    x0_val: np.ndarray,
    x0_nnz: np.ndarray,
    x0_w: np.ndarray,
    *,
    lazy: bool = False,
    lazy_K: float = 2.0,
    boost_rounds: int = 20,
    boost_delta: float = 1e-3,
    refresh_every: int = 1000,
    gram_cache_mb: float = 256.0,
) -> FWVState:
    """State of a run started at ``x_0 = sum_i x0_w[i] atom_i``.

    ``MT`` is ``M^T`` already passed through :func:`solvers.linalg.as_kernel_matrix`;
    atom ``i`` of the start is ``(x0_idx[i, :x0_nnz[i]], x0_val[i, :x0_nnz[i]])`` (points
    of the set; the weights are nonnegative and sum to 1). ``method``, ``rule``,
    ``set_code`` and ``loss_code`` are integer codes (``METHOD_CODES``,
    :data:`solvers.steps.RULE_CODES`, :data:`solvers.sets.SET_CODES`, ``LOSS_CODES``).
    ``gram_cache_mb`` bounds the Gram-column cache of the squared loss over the simplex
    or the l1 ball (see :func:`fwv_advance`; 0 disables it, other cases never use it).
    """
    method = int(method)
    set_code = int(set_code)
    loss_code = int(loss_code)
    if method not in METHOD_CODES.values():
        raise ValueError(f"unknown method code {method}; expected one of {METHOD_CODES}")
    if set_code == SET_L2 and method not in (METHOD_FW, METHOD_BOOSTED):
        raise ValueError("the l2 ball is not a polytope: allowed methods are fw, boosted")
    if method == METHOD_DICG and set_code != SET_SIMPLEX:
        raise ValueError("dicg runs on the simplex only: use fw, afw, pfw, bpcg or boosted")
    if lazy and method not in LAZY_METHODS:
        raise ValueError("lazy applies to afw, pfw and bpcg only")
    if int(rule) not in RULE_CODES.values():
        raise ValueError(f"unknown step rule code {rule}; expected one of {RULE_CODES}")
    if loss_code not in LOSS_CODES.values():
        raise ValueError(f"unknown loss code {loss_code}; expected one of {LOSS_CODES}")
    loss_par = np.ascontiguousarray(loss_par, dtype=np.float64)
    if loss_code == LOSS_LOGISTIC and loss_par[L_RIDGE] != 0.0:
        raise ValueError("the logistic loss takes ridge = 0")
    if lazy_K <= 0.0 or boost_rounds < 1:
        raise ValueError("lazy_K must be > 0 and boost_rounds >= 1")
    if not gram_cache_mb >= 0.0:
        raise ValueError("gram_cache_mb must be >= 0")
    set_par = np.ascontiguousarray(set_par, dtype=np.float64)
    b = as_kernel_vector(b)  # read-only, as every caller hands it (one compiled kernel)
    p = MT[2].shape[0] - 1 if isinstance(MT, tuple) else MT.shape[0]
    n = b.shape[0]
    m = max_nnz(set_code, p, int(set_par[3]))
    x0_idx = np.atleast_2d(np.asarray(x0_idx, dtype=np.int64))
    x0_val = np.atleast_2d(np.asarray(x0_val, dtype=np.float64))
    x0_nnz = np.atleast_1d(np.asarray(x0_nnz, dtype=np.int64))
    x0_w = np.atleast_1d(np.asarray(x0_w, dtype=np.float64))
    n0 = x0_w.shape[0]
    if x0_nnz.shape[0] != n0 or x0_idx.shape[0] != n0 or x0_val.shape[0] != n0:
        raise ValueError("x0_idx, x0_val, x0_nnz and x0_w must describe the same atoms")
    if n0 == 0 or x0_nnz.min() < 1 or x0_nnz.max() > m:
        raise ValueError(f"each start atom needs 1 to {m} entries")
    if x0_w.min() < 0.0 or abs(x0_w.sum() - 1.0) > 1e-9:
        raise ValueError("the start weights must be nonnegative and sum to 1")
    # Simplex and l1 ball have p and 2p vertices: a cap above that never grows.
    bound = {0: p + 1, 1: 2 * p + 1}.get(set_code, 0)
    cap = bound if bound else max(16, 2 * n0 + 2)
    use_gram = (
        loss_code == LOSS_SQUARED
        and set_code in (SET_SIMPLEX, SET_L1)
        and method != METHOD_BOOSTED
        and gram_cache_mb > 0.0
    )
    cache = new_gram_cache(p if use_gram else 0, float(gram_cache_mb) if use_gram else 0.0)
    q = p if cache[0].shape[0] >= 2 else 0
    mtb = np.zeros(q)
    if q:
        mt_product(MT, b, mtb)
    gram = (*cache, np.zeros(q), mtb, np.zeros(n if q else 0), np.ones(q))
    st = FWVState(
        MT=MT,
        b=b,
        set_par=set_par,
        loss_par=loss_par,
        step_params=np.ascontiguousarray(step_params, dtype=np.float64),
        x=np.zeros(p),
        z=np.zeros(n),
        g=np.zeros(p),
        r=np.zeros(n),
        pv=np.zeros((3, p)),
        nv=np.zeros((2, n)),
        s_idx=np.zeros(m, dtype=np.int64),
        s_val=np.zeros(m),
        at_idx=np.zeros((cap, m), dtype=np.int64),
        at_val=np.zeros((cap, m)),
        at_nnz=np.zeros(cap, dtype=np.int64),
        mu=np.zeros(cap),
        istate=np.zeros(N_ISTATE, dtype=np.int64),
        fstate=np.zeros(N_FSTATE),
        lstate=np.ones(1),
        gram=gram,
    )
    ist = st.istate
    ist[I_METHOD] = method
    ist[I_RULE] = int(rule)
    ist[I_REFRESH] = int(refresh_every)
    ist[I_SET] = set_code
    ist[I_LOSS] = loss_code
    ist[I_LAZY] = int(bool(lazy))
    ist[I_BOOST_ROUNDS] = int(boost_rounds)
    ist[I_STATUS] = STATUS_RUNNING
    st.fstate[F_PHI] = -1.0
    st.fstate[F_LB] = -np.inf
    st.fstate[F_LAZY_K] = lazy_K
    st.fstate[F_BOOST_DELTA] = boost_delta
    for i in range(n0):
        k = int(x0_nnz[i])
        order = np.argsort(x0_idx[i, :k], kind="stable")
        idx = np.ascontiguousarray(x0_idx[i, :k][order])
        val = np.ascontiguousarray(x0_val[i, :k][order])
        np.add.at(st.x, idx, x0_w[i] * val)
        if method in ACTIVE_SET_METHODS and x0_w[i] > 0.0:
            row = _find_row(st, idx, val)
            if row < 0:
                row = int(ist[I_NACT])
                st.at_idx[row, :k] = idx
                st.at_val[row, :k] = val
                st.at_nnz[row] = k
                ist[I_NACT] = row + 1
            st.mu[row] += x0_w[i]
    if method == METHOD_DICG and (st.x.min() < 0.0 or abs(st.x.sum() - 1.0) > 1e-9):
        raise ValueError("dicg needs a start point on the simplex")
    product(MT, st.x, st.z)
    return st


def _find_row(st: FWVState, idx: np.ndarray, val: np.ndarray) -> int:
    for a in range(int(st.istate[I_NACT])):
        k = int(st.at_nnz[a])
        if k == idx.size and (st.at_idx[a, :k] == idx).all() and (st.at_val[a, :k] == val).all():
            return a
    return -1


def _grow(st: FWVState) -> None:
    """Double the active-set arrays (the kernel asked for room)."""
    cap, m = st.at_idx.shape
    for name, shape, dtype in (
        ("at_idx", (2 * cap, m), np.int64),
        ("at_val", (2 * cap, m), np.float64),
        ("at_nnz", (2 * cap,), np.int64),
        ("mu", (2 * cap,), np.float64),
    ):
        new = np.zeros(shape, dtype=dtype)
        new[:cap] = getattr(st, name)
        setattr(st, name, new)


def advance(st: FWVState, rec: np.ndarray, tol: float, stop_at: int) -> int:
    """Run at most ``rec.shape[0]`` iterations (stopping at iteration ``stop_at``); return
    the number of rows written into ``rec`` (status in ``st.status``)."""
    if rec.ndim != 2 or rec.shape[1] != len(FWV_RECORD_COLUMNS) or rec.dtype != np.float64:
        raise ValueError(f"rec must be float64 of shape (rows, {len(FWV_RECORD_COLUMNS)})")
    if not rec.flags.c_contiguous:
        raise ValueError("rec must be C-contiguous")
    st.istate[I_STOP_AT] = int(stop_at)
    done = 0
    while True:
        done += fwv_advance(
            st.MT, st.b, st.set_par, st.loss_par, st.step_params, st.x, st.z, st.g, st.r,
            st.pv, st.nv, st.s_idx, st.s_val, st.at_idx, st.at_val, st.at_nnz, st.mu,
            st.istate, st.fstate, st.lstate, float(tol), rec[done:], st.gram,
        )  # fmt: skip
        if st.istate[I_GROW] == 0:
            return done
        st.istate[I_GROW] = 0
        _grow(st)


def active_atoms(st: FWVState) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    """The active set: lists of atom indices and values, and the weights (empty for the
    methods without an active set)."""
    nact = int(st.istate[I_NACT])
    idx = [st.at_idx[a, : st.at_nnz[a]].copy() for a in range(nact)]
    val = [st.at_val[a, : st.at_nnz[a]].copy() for a in range(nact)]
    return idx, val, st.mu[:nact].copy()
