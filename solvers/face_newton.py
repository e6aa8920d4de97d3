"""Face-Newton: second-order steps on the current face, blended with Frank-Wolfe steps.

Problem: ``min_{x in C} f(x) = loss(M x) + ridge ||x||^2`` in the layout of
:mod:`solvers.fw_variants` (``MT = M^T`` a kernel matrix, ``b`` the targets, the squared
loss ``scale ||z - b||^2`` or the mean logistic loss), over a set of :mod:`solvers.lmo`
that is coordinate bounds plus at most one signed-sum constraint:

* simplex: ``0 <= x_i``, ``sum x_i = 1`` (always tight);
* l1 ball: ``sum |x_i| <= r`` (sign-fixed coordinates, the kink at 0 acts as a bound);
* K-sparse polytope: ``|x_i| <= tau``, ``sum |x_i| <= K tau``;
* box: ``lo <= x_i <= hi`` (no sum constraint).

One iteration (one record row) at ``x_k``:

1. ``z = M x`` from scratch and the gradient (two passes over the data, so every row's
   objective, gradient and certificate are exact for the recorded ``x_k``), then the FW
   gap ``<g, x - v>`` with ``v = LMO(g)``: the certificate.
2. The face: the free coordinates (strictly inside their bounds; sign fixed), the sum
   constraint when tight, its multiplier ``lambda`` by least squares on the free
   coordinates (a negative multiplier of an inequality releases it). Coordinates whose
   gradient violates the face's optimality conditions by at least ``enter_frac`` times
   the largest violation join the working set ``W`` all at once (newGLMNET's working set,
   Yuan, Ho & Lin 2012), with the sign that decreases ``f``.
3. Blending (Braun, Pokutta, Tu & Wright 2019, "Blended conditional gradients", ICML):
   the local gap over ``W`` (the FW gap of ``g`` restricted to ``W``'s coordinates) is
   compared with the FW gap; when it is below ``gap / blend_K`` (or no face step is
   possible) the iteration takes a FW step toward ``v`` with the exact line search of
   :mod:`solvers.steps` (tag ``fw``).
4. Otherwise an inexact Newton step on the face (Carderera & Pokutta 2020, "Second-order
   conditional gradient sliding"): conjugate gradients on the quadratic model restricted
   to ``W``, projected onto the null space of the tight sum constraint, with
   Hessian-vector products ``M_W^T (D (M_W d))`` computed from the data (never the
   Hessian), stopped at relative residual ``min(cg_rtol, sqrt(||P g_W||))``. Then
   Armijo backtracking along the projected arc ``x(t) = clip(x + t d)`` (projected
   Newton, Bertsekas 1982; :mod:`solvers.face_arc`): a coordinate that would cross zero
   or its bound stops there, so several coordinates may leave the face in one step (tag
   ``drop``; else ``newton``).
   On the simplex the step follows the projected path instead
   (:mod:`solvers.face_simplex`): along ``d`` to the ratio test's bound, where the
   blocking coordinates are set to 0 exactly, then on without them, each piece to the
   minimizer of the exact quadratic (not Armijo on function values, whose differences
   are rounding noise for tiny steps); entering coordinates whose direction is negative
   are removed and the direction solved again.
5. On the simplex the fallback of step 3 (and of a face step that would make no
   measurable progress) is the pairwise step between the held coordinate with the
   largest gradient and the FW vertex (Lacoste-Julien & Jaggi 2015; tags ``pairwise`` /
   ``drop``), not a FW step, whose rescaling of every coordinate leaves tiny remainders.

A run that cannot progress ends as stalled, with a reason code (``istate[I_REASON]``,
:data:`STALL_REASONS`): the fallback step found no decrease, or the objective (computed
from scratch at every row) has not decreased beyond rounding (``RESOLUTION |f|``) for
``STALL_ITERS`` iterations: the tolerance is then below what float64 resolves here.

Cost counters (cumulative, per row): ``grad_evals``, ``fun_evals`` (arc or line trials),
``lmo_calls`` (the certificate's, and the local gap's when a face exists), ``hvps`` (Hessian-vector
products) and ``data_passes``: every product with ``M`` or ``M^T`` counted as the share of
the data's nonzeros it reads (``z = M x``: the rows of ``MT`` in the support of ``x``; the
gradient: 1; a Hessian-vector product on ``W``: twice ``W``'s share; an arc trial's
correction: the clipped coordinates' share).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from solvers.face_arc import arc_trial, at_bound, loss_at, make_feasible, sum_bound
from solvers.face_simplex import RESOLUTION, simplex_face_step, simplex_pairwise_step
from solvers.fw import terminal_status
from solvers.fw_vparts import (
    L_RIDGE,
    L_SCALE,
    LOSS_LOGISTIC,
    LOSS_SQUARED,
    KernelState,
    dir_from_x,
    loss_grad,
)
from solvers.linalg import as_kernel_vector, dot, rmatvec, row_axpy, row_dot_long
from solvers.lmo import (
    P_HI,
    P_LO,
    P_RADIUS,
    SET_BOX,
    SET_KSPARSE,
    SET_L1,
    SET_SIMPLEX,
    atom_dot,
    lmo,
)
from solvers.steps import (
    LINE_LOGISTIC,
    LINE_QUADRATIC,
    P_ARMIJO_C,
    P_ARMIJO_DELTA,
    P_MAX_TRIALS,
    exact_line_search,
    exp_nonpositive,
)
from solvers.tags import (
    BASE_COLUMNS,
    STATUS_RUNNING,
    STATUS_STALLED,
    STEP_DROP,
    STEP_FW,
    STEP_NEWTON,
    STEP_NONE,
)

__all__ = [
    "FN_RECORD_COLUMNS",
    "STALL_ITERS",
    "STALL_REASONS",
    "FNState",
    "advance",
    "fn_advance",
    "new_state",
    "stall_reason",
]

FN_RECORD_COLUMNS = (*BASE_COLUMNS, "grad_evals", "fun_evals", "lmo_calls", "hvps", "data_passes")
_C_GRAD, _C_FUN, _C_LMO, _C_HVP, _C_PASS = 6, 7, 8, 9, 10

# Integer state.
I_K = 0
I_STATUS = 1
I_STOP_AT = 2
I_SET = 3
I_LOSS = 4
I_CG_MAX = 5
I_GRAD = 6
I_FUN = 7
I_LMO = 8
I_HVP = 9
I_NOPROG = 10  # iterations since the objective last decreased beyond rounding
I_REASON = 11  # why the run stalled (REASON_*)
N_ISTATE = 12
# Float state.
F_PASSES = 0
F_ENTER = 1  # enter_frac
F_BLEND = 2  # blend_K
F_CG_RTOL = 3
F_FREF = 4  # the objective at the last decrease beyond rounding
N_FSTATE = 5

# Why a run stalled (istate[I_REASON]); the method class words them.
REASON_NONE = 0
REASON_NO_STEP = 1  # the fallback (FW or pairwise) step found no decrease
REASON_NO_DECREASE = 2  # f flat to rounding for STALL_ITERS iterations
STALL_REASONS = {REASON_NO_STEP: "no_step", REASON_NO_DECREASE: "no_decrease"}
#: Iterations without a decrease of ``f`` beyond ``RESOLUTION |f|`` that end a run.
STALL_ITERS = 50

# Relative slack under which the sum constraint counts as tight.
_TIGHT = 1e-9


@njit(cache=True, inline="always")
def _record(rec, row, k, f, cert, gamma, kind, active, istate, fstate):
    rec[row, 0] = k
    rec[row, 1] = f
    rec[row, 2] = cert
    rec[row, 3] = gamma
    rec[row, 4] = kind
    rec[row, 5] = active
    rec[row, _C_GRAD] = istate[I_GRAD]
    rec[row, _C_FUN] = istate[I_FUN]
    rec[row, _C_LMO] = istate[I_LMO]
    rec[row, _C_HVP] = istate[I_HVP]
    rec[row, _C_PASS] = fstate[F_PASSES]


@njit(cache=True)
def _stall(rec, row, k, f, cert, active, istate, fstate, reason):
    """Record ``x_k`` without stepping and end the run as stalled for ``reason``."""
    _record(rec, row, k, f, cert, 0.0, STEP_NONE, active, istate, fstate)
    istate[I_STATUS] = STATUS_STALLED
    istate[I_REASON] = reason
    return row + 1


@njit(cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def _hessian_weights(loss_code, loss_par, b, z, hd):
    """``D`` of ``Hessian = M^T D M + 2 ridge I`` at ``z``."""
    n = z.shape[0]
    if loss_code == LOSS_SQUARED:
        hd[:] = 2.0 * loss_par[L_SCALE]
        return
    for i in range(n):
        u = b[i] * z[i]
        e = exp_nonpositive(-abs(u))
        inv = 1.0 / (1.0 + e)
        hd[i] = e * inv * inv / n  # sigmoid(u) sigmoid(-u) / n


@njit(cache=True)
def _project(v, sg, m, tight):
    """Remove the component of ``v[:m]`` along the sum constraint's normal ``sg[:m]``
    (its entries are +-1, so ``||sg||^2 = m``)."""
    if not tight or m == 0:
        return
    acc = 0.0
    for t in range(m):
        acc += sg[t] * v[t]
    acc /= m
    for t in range(m):
        v[t] -= acc * sg[t]


@njit(cache=True)
def _face_cg(
    MT, loss_par, hd, g, wk, sg, m, tight, cg_max, rtol, cg, u, hu, zd, istate, fstate, wfrac
):
    """Inexact Newton direction on ``W = wk[:m]``: projected CG on ``P H_W P d = -P g_W``.

    Writes ``d`` in ``cg[0, :m]`` and ``zd = M_W d``; returns ``<g_W, d>``.
    """
    d = cg[0]
    res = cg[1]
    pp = cg[2]
    hp = cg[3]
    ridge2 = 2.0 * loss_par[L_RIDGE]
    share = 0.0
    for t in range(m):
        share += wfrac[wk[t]]
        d[t] = 0.0
        res[t] = -g[wk[t]]
    _project(res, sg, m, tight)
    zd[:] = 0.0
    rr = dot(res[:m], res[:m])
    r0 = math.sqrt(rr)
    if r0 == 0.0:
        return 0.0
    eta = min(rtol, math.sqrt(r0))
    for t in range(m):
        pp[t] = res[t]
    for _ in range(cg_max):
        u[:] = 0.0
        for t in range(m):
            if pp[t] != 0.0:
                row_axpy(MT, wk[t], pp[t], u)
        for i in range(u.shape[0]):
            hu[i] = hd[i] * u[i]
        for t in range(m):
            hp[t] = row_dot_long(MT, wk[t], hu) + ridge2 * pp[t]
        _project(hp, sg, m, tight)
        istate[I_HVP] += 1
        fstate[F_PASSES] += 2.0 * share
        curv = dot(pp[:m], hp[:m])
        if curv <= 0.0:
            break
        alpha = rr / curv
        for t in range(m):
            d[t] += alpha * pp[t]
            res[t] -= alpha * hp[t]
        for i in range(zd.shape[0]):
            zd[i] += alpha * u[i]
        rr_new = dot(res[:m], res[:m])
        if math.sqrt(rr_new) <= eta * r0:
            break
        beta = rr_new / rr
        rr = rr_new
        for t in range(m):
            pp[t] = res[t] + beta * pp[t]
    gd = 0.0
    for t in range(m):
        gd += g[wk[t]] * d[t]
    return gd


@njit(cache=True)
def _working_set(set_code, set_par, x, g, wk, sg, enter_frac):
    """The face (free coordinates), the sum constraint's status and the entering
    coordinates. Returns ``(m, n_free, tight)``: ``wk[:m]`` is ``W`` (free first), ``sg``
    the signs (+-1; the sum constraint's normal on ``W``)."""
    p = x.shape[0]
    signed = set_code == SET_L1 or set_code == SET_KSPARSE
    tau = set_par[P_RADIUS]
    lo = set_par[P_LO]
    hi = set_par[P_HI]
    m = 0
    s_abs = 0.0
    for j in range(p):
        xj = x[j]
        if signed:
            s_abs += abs(xj)
            free = xj != 0.0 and (set_code == SET_L1 or abs(xj) < tau)
            sj = 1.0 if xj > 0.0 else -1.0
        elif set_code == SET_SIMPLEX:
            free = xj > 0.0
            sj = 1.0
        else:
            free = lo < xj < hi
            sj = 1.0
        if free:
            wk[m] = j
            sg[m] = sj
            m += 1
    n_free = m
    bound = sum_bound(set_code, set_par)
    tight = set_code == SET_SIMPLEX or (signed and s_abs >= bound * (1.0 - _TIGHT))
    lam = 0.0
    if tight and n_free > 0:
        for t in range(n_free):
            lam -= sg[t] * g[wk[t]]
        lam /= n_free
        if signed and lam <= 0.0:
            tight = False  # the inequality's multiplier is negative: release it
            lam = 0.0
    elif signed:
        tight = tight and n_free > 0
    # Violations of the face's optimality conditions by the fixed coordinates.
    vmax = 0.0
    for pass_ in range(2):
        for j in range(p):
            xj = x[j]
            v = 0.0
            sj = 1.0
            if signed:
                if xj == 0.0:
                    v = abs(g[j]) - lam
                    sj = -1.0 if g[j] > 0.0 else 1.0
                elif set_code == SET_KSPARSE and abs(xj) >= tau:
                    sj = 1.0 if xj > 0.0 else -1.0
                    v = lam + sj * g[j]
            elif set_code == SET_SIMPLEX:
                if xj <= 0.0:
                    v = -(g[j] + lam)
            elif xj <= lo:
                v = -g[j]
            elif xj >= hi:
                v = g[j]
            if v <= 0.0:
                continue
            if pass_ == 0:
                vmax = max(vmax, v)
            elif v >= enter_frac * vmax:
                wk[m] = j
                sg[m] = sj
                m += 1
        if vmax == 0.0:
            break
    return m, n_free, tight


@njit(cache=True)
def _local_gap(set_code, set_par, x, g, wk, m, q, s_idx, s_val):
    """The FW gap of ``g`` restricted to ``W``'s coordinates and the support of ``x`` (the
    other coordinates see a gradient the LMO never picks: 0, or above ``max g`` on the
    simplex): the blending test's local gap (Braun et al. 2019)."""
    p = x.shape[0]
    off = 0.0
    if set_code == SET_SIMPLEX:
        gmax = -np.inf
        for j in range(p):
            gmax = max(gmax, g[j])
        off = gmax + 1.0
    for j in range(p):
        q[j] = g[j] if x[j] != 0.0 and set_code != SET_BOX else off
    for t in range(m):
        q[wk[t]] = g[wk[t]]
    nnz = lmo(set_code, set_par, q, s_idx, s_val)
    # x is 0 off W and its support (box: q = 0 there), so <q, x> is W's part of <g, x>.
    return dot(q, x) - atom_dot(s_idx, s_val, nnz, q)


@njit(cache=True, nogil=True)
def fn_advance(
    MT, b, set_par, loss_par, step_params, x, z, g, r, pv, nv, wk, sg, cg, s_idx, s_val,
    u_idx, u_val, istate, fstate, tol, rec, wfrac,
):  # fmt: skip
    """Advance face-Newton by at most ``rec.shape[0]`` iterations (see the module
    docstring); returns the number of rows written.

    ``pv`` (3, p) and ``nv`` (4, n) are scratch; ``wk`` (p,) int64 and ``sg`` (p,) the
    working set; ``cg`` (4, p) the CG vectors; ``wfrac`` (p,) each row of ``MT``'s share
    of the data's nonzeros.
    """
    p = x.shape[0]
    set_code = istate[I_SET]
    loss_code = istate[I_LOSS]
    line = LINE_QUADRATIC if loss_code == LOSS_SQUARED else LINE_LOGISTIC
    ridge = loss_par[L_RIDGE]
    simplex = set_code == SET_SIMPLEX
    signed = set_code == SET_L1 or set_code == SET_KSPARSE
    bound = sum_bound(set_code, set_par)
    dvec = pv[0]
    q = pv[1]
    xt = pv[2]
    zd = nv[0]
    zt = nv[1]
    hd = nv[2]
    hu = nv[3]
    c_arm = step_params[P_ARMIJO_C]
    delta = step_params[P_ARMIJO_DELTA]
    trials = int(step_params[P_MAX_TRIALS])
    for row in range(rec.shape[0]):
        k = istate[I_K]
        # z = M x and the gradient from scratch: the row's numbers are exact for x_k.
        rmatvec(MT, x, z)
        active = 0
        for j in range(p):
            if x[j] != 0.0:
                active += 1
                fstate[F_PASSES] += wfrac[j]
        f = loss_grad(MT, b, loss_code, loss_par, x, z, r, g)
        istate[I_GRAD] += 1
        fstate[F_PASSES] += 1.0
        nnz = lmo(set_code, set_par, g, s_idx, s_val)
        istate[I_LMO] += 1
        gx = dot(g, x)
        cert = gx - atom_dot(s_idx, s_val, nnz, g)
        status = terminal_status(cert, tol, f, k, istate[I_STOP_AT])
        if status != STATUS_RUNNING:
            _record(rec, row, k, f, cert, 0.0, STEP_NONE, active, istate, fstate)
            istate[I_STATUS] = status
            return row + 1
        # Progress: f below the last reference by more than rounding (k = 0 sets it).
        if k == 0 or f < fstate[F_FREF] - RESOLUTION * abs(fstate[F_FREF]):
            fstate[F_FREF] = f
            istate[I_NOPROG] = 0
        else:
            istate[I_NOPROG] += 1
            if istate[I_NOPROG] >= STALL_ITERS:
                return _stall(
                    rec, row, k, f, cert, active, istate, fstate, np.int64(REASON_NO_DECREASE)
                )
        kind = STEP_NONE
        gamma = 0.0
        m, n_free, tight = _working_set(set_code, set_par, x, g, wk, sg, fstate[F_ENTER])
        face = m > 0
        if face:
            lg = _local_gap(set_code, set_par, x, g, wk, m, q, u_idx, u_val)
            istate[I_LMO] += 1
            face = lg >= cert / fstate[F_BLEND]
        if face:
            _hessian_weights(loss_code, loss_par, b, z, hd)
            gd = 0.0
            for _attempt in range(8):
                gd = _face_cg(
                    MT, loss_par, hd, g, wk, sg, m, tight, istate[I_CG_MAX],
                    fstate[F_CG_RTOL], cg, zt, hu, zd, istate, fstate, wfrac,
                )  # fmt: skip
                if not simplex:
                    break
                # Simplex: an entering coordinate (x_j = 0) must not decrease; drop those
                # that would and solve again on the smaller set.
                keep = n_free
                for t in range(n_free, m):
                    if cg[0, t] >= 0.0:
                        wk[keep] = wk[t]
                        sg[keep] = sg[t]
                        keep += 1
                if keep == m:
                    break
                m = keep
            d = cg[0]
            rest = 0.0
            if signed:
                # The fixed coordinates' share of the sum (K-sparse at +-tau, not in W).
                for j in range(p):
                    rest += abs(x[j])
                for t in range(m):
                    rest -= abs(x[wk[t]])
                rest = max(rest, 0.0)
            xx = dot(x, x)
            if simplex:
                kind, gamma, evals = simplex_face_step(
                    MT, loss_code, loss_par, b, x, g, z, zd, wk, m, d, f, nv[1:], xt, wfrac,
                    fstate,
                )  # fmt: skip
                istate[I_FUN] += evals
            elif gd < 0.0:
                beta = 1.0
                for _ in range(trials):
                    arc_trial(
                        set_code, set_par, x, wk, sg, m, d, beta, xt, MT, z, zd, zt, wfrac,
                        fstate, rest,
                    )  # fmt: skip
                    istate[I_FUN] += 1
                    dec = 0.0
                    xx_t = xx
                    for t in range(m):
                        j = wk[t]
                        dec += g[j] * (xt[t] - x[j])
                        xx_t += xt[t] * xt[t] - x[j] * x[j]
                    ft = loss_at(loss_code, loss_par, b, zt) + ridge * xx_t
                    if dec < 0.0 and ft <= f + c_arm * dec:
                        kind = STEP_NEWTON
                        for t in range(m):
                            if t < n_free and at_bound(set_code, set_par, xt[t]):
                                kind = STEP_DROP
                            x[wk[t]] = xt[t]
                        gamma = beta
                        break
                    beta *= delta
        if kind == STEP_NONE and simplex:
            # Pairwise step from the worst held coordinate to v = LMO(g) = e_{s_idx[0]}.
            kind, gamma, evals = simplex_pairwise_step(
                MT, loss_code, loss_par, b, x, g, z, zd, s_idx[0], wfrac, fstate
            )
            istate[I_FUN] += evals
            if kind == STEP_NONE:
                return _stall(
                    rec, row, k, f, cert, active, istate, fstate, np.int64(REASON_NO_STEP)
                )
        elif kind == STEP_NONE:
            # FW step toward v = LMO(g) (s_idx / s_val), exact line search on [0, 1].
            dir_from_x(MT, x, z, s_idx, s_val, nnz, 1.0, dvec, zd)
            for t in range(nnz):
                fstate[F_PASSES] += wfrac[s_idx[t]]
            gd = -cert
            curv = 0.0
            if loss_code == LOSS_SQUARED:
                curv = loss_par[L_SCALE] * dot(zd, zd) + ridge * dot(dvec, dvec)
            gamma, evals = exact_line_search(line, gd, curv, z, zd, b, 1.0)
            istate[I_FUN] += evals
            if not gamma > 0.0:
                return _stall(
                    rec, row, k, f, cert, active, istate, fstate, np.int64(REASON_NO_STEP)
                )
            for j in range(p):
                x[j] += gamma * dvec[j]
            kind = STEP_FW
        make_feasible(set_code, set_par, x, bound)
        _record(rec, row, k, f, cert, gamma, kind, active, istate, fstate)
        istate[I_K] = k + 1
    istate[I_STATUS] = STATUS_RUNNING
    return rec.shape[0]


class FNState(KernelState):
    """Caller-owned arrays of one run of :func:`fn_advance` (see :func:`new_state`); its
    ``istate`` keeps the iteration and status where :class:`KernelState` reads them."""


def new_state(
    MT,
    b: np.ndarray,
    set_code: int,
    set_par: np.ndarray,
    loss_code: int,
    loss_par: np.ndarray,
    step_params: np.ndarray,
    x0: np.ndarray,
    *,
    enter_frac: float = 0.5,
    blend_K: float = 2.0,
    cg_max: int = 50,
    cg_rtol: float = 0.1,
) -> FNState:
    """State of a run from the feasible point ``x0``; ``MT`` is ``M^T`` through
    :func:`solvers.linalg.as_kernel_matrix`."""
    if int(set_code) not in (SET_SIMPLEX, SET_L1, SET_BOX, SET_KSPARSE):
        raise ValueError(
            "face-newton needs a polytope of bounds and one sum: simplex, l1, box, ksparse"
        )
    if int(loss_code) not in (LOSS_SQUARED, LOSS_LOGISTIC):
        raise ValueError(f"unknown loss code {loss_code}")
    if not (0.0 <= enter_frac <= 1.0 and blend_K >= 1.0 and cg_max >= 1 and 0.0 < cg_rtol < 1.0):
        raise ValueError("enter_frac in [0, 1], blend_K >= 1, cg_max >= 1, cg_rtol in (0, 1)")
    b = as_kernel_vector(b)  # read-only, as every caller hands it (one compiled kernel)
    x = np.array(x0, dtype=np.float64)
    p = x.shape[0]
    n = b.shape[0]
    if isinstance(MT, tuple):
        counts = np.diff(MT[2]).astype(np.float64)
    else:
        counts = np.full(p, float(MT.shape[1]))
    wfrac = counts / max(counts.sum(), 1.0)
    st = FNState(
        MT=MT,
        b=b,
        set_par=np.ascontiguousarray(set_par, dtype=np.float64),
        loss_par=np.ascontiguousarray(loss_par, dtype=np.float64),
        step_params=np.ascontiguousarray(step_params, dtype=np.float64),
        x=x,
        z=np.zeros(n),
        g=np.zeros(p),
        r=np.zeros(n),
        pv=np.zeros((3, p)),
        nv=np.zeros((4, n)),
        wk=np.zeros(p, dtype=np.int64),
        sg=np.zeros(p),
        cg=np.zeros((4, p)),
        s_idx=np.zeros(max(p, 1), dtype=np.int64),
        s_val=np.zeros(max(p, 1)),
        u_idx=np.zeros(max(p, 1), dtype=np.int64),
        u_val=np.zeros(max(p, 1)),
        istate=np.zeros(N_ISTATE, dtype=np.int64),
        fstate=np.zeros(N_FSTATE),
        wfrac=wfrac,
    )
    st.istate[I_SET] = int(set_code)
    st.istate[I_LOSS] = int(loss_code)
    st.istate[I_CG_MAX] = int(cg_max)
    st.fstate[F_ENTER] = float(enter_frac)
    st.fstate[F_BLEND] = float(blend_K)
    st.fstate[F_CG_RTOL] = float(cg_rtol)
    return st


def advance(st: FNState, rec: np.ndarray, tol: float, stop_at: int) -> int:
    """Run at most ``rec.shape[0]`` iterations (stopping at iteration ``stop_at``); return
    the number of rows written (status in ``st.status``)."""
    if rec.ndim != 2 or rec.shape[1] != len(FN_RECORD_COLUMNS) or rec.dtype != np.float64:
        raise ValueError(f"rec must be float64 of shape (rows, {len(FN_RECORD_COLUMNS)})")
    st.istate[I_STOP_AT] = int(stop_at)
    return fn_advance(
        st.MT, st.b, st.set_par, st.loss_par, st.step_params, st.x, st.z, st.g, st.r, st.pv,
        st.nv, st.wk, st.sg, st.cg, st.s_idx, st.s_val, st.u_idx, st.u_val, st.istate,
        st.fstate, float(tol), rec, st.wfrac,
    )  # fmt: skip


def stall_reason(st: FNState) -> str:
    """Why the run stalled: a key of :data:`STALL_REASONS` (``""`` if it did not)."""
    return STALL_REASONS.get(int(st.istate[I_REASON]), "")
