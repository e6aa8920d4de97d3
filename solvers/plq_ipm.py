"""A structured primal-dual interior-point method for PLQ ERM with linear constraints.

The problem is ReHLine's (Dai & Qiu 2023; ALGORITHMS.md D.1): ReLU and ReHU pieces of
``z_i = x_i^T beta``, an optional l1 term, ``0.5 ||beta||^2`` and ``A beta + b >= 0``.
Its dual (D.3) is a convex quadratic program over a *box*,

    min_mu  L(mu) = 0.5 ||B mu||^2 + 0.5 mu^T Dg mu + c^T mu,   0 <= mu <= hi,

with one variable per constraint (``xi_k``, ``hi = inf``), per ReLU piece (``lambda_li``,
``hi = 1``), per ReHU piece (``gamma_hi``, ``hi = tau_hi``, ``Dg = 1``) and two per l1
coordinate; column ``j`` of ``B`` is ``a_k``, ``-u_li x_i``, ``-s_hi x_i`` or ``-+w e_j``,
``c`` is ``b``, ``-v``, ``-t`` or 0, and the primal point is ``beta = B mu``.

Each iteration is one Mehrotra predictor-corrector step (Mehrotra 1992; for QPs in this
form Gertz & Wright 2003, OOQP) on the box QP with slacks ``mu`` (to the lower bound 0)
and ``su = hi - mu`` kept as separate variables (accurate near both bounds) and
multipliers ``zl, zu > 0``, and with the primal point ``beta`` kept as a variable of its
own, tied to the duals by the linear equation ``beta = B mu``: ``B mu`` sums ``n`` terms
that cancel (on raw features of magnitude 1e6 its entries carry absolute errors far
above the answer's accuracy), so the gradient ``B^T beta + Dg mu + c``, the margins and
the certificate are computed from ``beta`` itself, and the residual ``beta - B mu`` is
driven to zero by the Newton steps like any other. The Newton systems are solved in
:mod:`solvers.plq_newton`: through the d x d matrix ``M = I + B D^-1 B^T`` (the
Sherman-Morrison-Woodbury reduction of Ferris & Munson 2002 and Woodsend & Gondzio 2011),
or, for wide data, in the n-side form ``(B^T B + D) dmu = rho + B^T rp``. Gondzio's
(1996) multiple centrality correctors follow while the step is short.

Where things are: this module holds :func:`iterate`, :func:`gradient_at`, the fstate
layout ``F_*`` and the step parameters; :mod:`solvers.plq_newton` holds the products with
``B`` (:func:`~solvers.plq_newton.bmul`), the factors and solves, the variable kinds
``V_*`` and the work-array layouts ``W_*``, ``D_*``. Callers use those as attributes of this
module (``ipm.bmul``, ``ipm.V_BOX``, ``ipm.N_WM`` ...): the names are re-exported below.

Kernel contract: state in caller-owned arrays mutated in place, passed grouped in the
structs of :mod:`solvers.plq_state` (``ipm.BMatrix``, ``ipm.BoxQP``, ``ipm.IpmPoint``,
``ipm.IpmWork``); :func:`iterate` runs one iteration; ``@njit(cache=True, nogil=True)``;
dense or CSR ``X`` (and CSR ``A``) dispatched at compile time by :mod:`solvers.linalg`.
"""

from __future__ import annotations

from numba import njit

# The pieces iterate() runs, and names re-exported for callers, who use them as attributes
# of this module (ipm.bmul, ipm.V_BOX, ipm.N_WM, ipm.N_WD ...): noqa F401.
from solvers.plq_newton import (  # noqa: F401
    D_DBETA,
    D_DBETA_C,
    D_RHS,
    D_SCALE,
    D_T,
    FREE_RATIO,
    N_WD,
    N_WM,
    V_BOX,
    V_FIXED,
    V_LOWER,
    W_D,
    W_DMU,
    W_DMU_A,
    W_DZL,
    W_DZL_A,
    W_DZU,
    W_DZU_A,
    W_GRAD,
    W_IDE,
    W_RD,
    W_RHO,
    W_T,
    W_T2,
    _factor_dside,
    _factor_nside,
    _newton_solve,
    bmul,
    btmul,
    gram_add,
)
from solvers.plq_state import BMatrix, BoxQP, IpmPoint, IpmWork  # noqa: F401

# fstate layout (floats the caller reads).
F_MU = 0  # complementarity measure before the step
F_ALPHA = 1  # step length taken
F_SIGMA = 2  # centering parameter used
F_RD = 3  # max |dual residual| before the step
F_NFREE = 4  # size of the free set F of the last iteration
F_RP = 5  # max |primal residual beta - B mu| before the step
N_FSTATE = 6

#: Fraction of the step to the boundary taken (a larger one once the iterates are close).
ETA_MIN = 0.95
ETA_MAX = 0.9995
#: Gondzio centrality correctors per iteration (at most), while the step is short.
MAX_CORRECTORS = 3


@njit(cache=True, nogil=True)
def _max_step(vkind, mu, su, zl, zu, dmu, dzl, dzu):
    """Largest ``alpha <= 1`` keeping ``mu, su, zl, zu`` non-negative along the step."""
    alpha = 1.0
    for j in range(mu.shape[0]):
        k = vkind[j]
        if k == V_FIXED:
            continue
        if dmu[j] < 0.0:
            alpha = min(alpha, -mu[j] / dmu[j])
        if dzl[j] < 0.0:
            alpha = min(alpha, -zl[j] / dzl[j])
        if k == V_BOX:
            if dmu[j] > 0.0:
                alpha = min(alpha, su[j] / dmu[j])
            if dzu[j] < 0.0:
                alpha = min(alpha, -zu[j] / dzu[j])
    return alpha


@njit(cache=True, nogil=True)
def gradient_at(B, qp, mu, beta, grad):
    """``grad = B^T beta + Dg mu + c`` (0 on fixed variables): the gradient of the dual
    at ``mu`` with its ``B mu`` replaced by the primal iterate ``beta``."""
    dg, cost, vkind = qp.dg, qp.cost, qp.vkind
    btmul(B, beta, grad)
    for j in range(mu.shape[0]):
        if vkind[j] == V_FIXED:
            grad[j] = 0.0
        else:
            grad[j] += dg[j] * mu[j] + cost[j]


@njit(cache=True, nogil=True)
def iterate(B, qp, point, work, nside):
    """One Mehrotra predictor-corrector iteration on the dual box QP (module docstring).

    Parameters
    ----------
    B : :class:`~solvers.plq_state.BMatrix`
        ``X`` dense (n, d) array or CSR triple; ``A`` CSR triple (K, d) (K may be 0);
        ``U`` (n, L), ``S`` (n, H) piece slopes; ``l1w`` (d,) l1 weights or empty.
    qp : :class:`~solvers.plq_state.BoxQP`
        ``dg`` (m,) 1 for ReHU duals else 0; ``cost`` (m,) linear term c; ``vkind`` (m,)
        int8 ``V_FIXED``, ``V_LOWER`` or ``V_BOX``; ``bn2`` (m,) ``||b_j||^2``.
    point : :class:`~solvers.plq_state.IpmPoint`
        ``beta`` (d,) the primal iterate; ``mu``, ``su``, ``zl``, ``zu`` (m,) the dual
        iterate (``su = hi - mu`` on boxed variables): the state, updated in place.
    work : :class:`~solvers.plq_state.IpmWork`
        ``beta_mu``, ``rp`` (d,) out: ``B mu`` and the primal residual ``beta - B mu`` at
        the start of the iteration (before the step). ``wm`` (N_WM, m), ``wd`` (N_WD, d),
        ``M`` (d, d) scratch; ``Y`` (n, d) scratch for dense X (any 2-D array for CSR).
        ``sysf``: tuple ``(Lc (d, d), scale (d,), Bf (F, d), C (F, d), LF (F, F), scaleF
        (F,))`` and ``sysi`` (1 + F,) int64: the factors of the split Newton system
        (:func:`solvers.plq_newton._split_solve`), ``F`` the largest size of the free set.
        ``fstate`` (N_FSTATE,) out: complementarity, step, sigma, residual, size of ``F``.
    nside : bool
        Solve the Newton systems in the n-side form
        (:func:`solvers.plq_newton._nside_solve`): then ``M`` holds ``B^T B`` (m, m),
        constant, ``sysf`` is ``(Lc (m, m), scale (m,), ...)`` and the free set is not used.
    """
    vkind = qp.vkind
    dg = qp.dg
    beta, mu, su, zl, zu = point
    beta_mu = work.beta_mu
    rp = work.rp
    wm = work.wm
    wd = work.wd
    sysi = work.sysi
    fstate = work.fstate
    m = mu.shape[0]
    d = beta.shape[0]
    grad = wm[W_GRAD]
    rd = wm[W_RD]
    D = wm[W_D]
    rho = wm[W_RHO]
    bmul(B, mu, beta_mu)
    rpmax = 0.0
    for p in range(d):
        rp[p] = beta[p] - beta_mu[p]
        rpmax = max(rpmax, abs(rp[p]))
    gradient_at(B, qp, mu, beta, grad)
    comp = 0.0
    n_c = 0
    rdmax = 0.0
    for j in range(m):
        k = vkind[j]
        if k == V_FIXED:
            rd[j] = 0.0
            D[j] = 1.0
            continue
        rd[j] = grad[j] - zl[j] + (zu[j] if k == V_BOX else 0.0)
        rdmax = max(rdmax, abs(rd[j]))
        comp += mu[j] * zl[j]
        n_c += 1
        dj = dg[j] + zl[j] / mu[j]
        if k == V_BOX:
            comp += su[j] * zu[j]
            n_c += 1
            dj += zu[j] / su[j]
        D[j] = dj
    mu_c = comp / max(n_c, 1)

    if nside:
        sysi[0] = 0
        _factor_nside(work.M, D, vkind, work.sysf[1], work.sysf[0])
    else:
        _factor_dside(B, qp, work, D)
    fstate[F_NFREE] = sysi[0]

    # ---- predictor (affine scaling): rho = -grad
    dmu_a = wm[W_DMU_A]
    dzl_a = wm[W_DZL_A]
    dzu_a = wm[W_DZU_A]
    for j in range(m):
        rho[j] = -grad[j] if vkind[j] != V_FIXED else 0.0
    dbeta = wd[D_DBETA]
    _newton_solve(nside, B, qp, work, rp, rho, dmu_a, dbeta)
    for j in range(m):
        k = vkind[j]
        if k == V_FIXED:
            dmu_a[j] = dzl_a[j] = dzu_a[j] = 0.0
            continue
        dzl_a[j] = -zl[j] - zl[j] * dmu_a[j] / mu[j]
        dzu_a[j] = (-zu[j] + zu[j] * dmu_a[j] / su[j]) if k == V_BOX else 0.0
    a_aff = _max_step(vkind, mu, su, zl, zu, dmu_a, dzl_a, dzu_a)
    comp_aff = 0.0
    for j in range(m):
        k = vkind[j]
        if k == V_FIXED:
            continue
        comp_aff += (mu[j] + a_aff * dmu_a[j]) * (zl[j] + a_aff * dzl_a[j])
        if k == V_BOX:
            comp_aff += (su[j] - a_aff * dmu_a[j]) * (zu[j] + a_aff * dzu_a[j])
    mu_aff = comp_aff / max(n_c, 1)
    sigma = (mu_aff / mu_c) ** 3 if mu_c > 0.0 else 0.0
    sigma = min(sigma, 1.0)

    # ---- corrector: centering and second-order terms
    dmu = wm[W_DMU]
    dzl = wm[W_DZL]
    dzu = wm[W_DZU]
    target = sigma * mu_c
    for j in range(m):
        k = vkind[j]
        if k == V_FIXED:
            rho[j] = 0.0
            continue
        rcl = target - mu[j] * zl[j] - dmu_a[j] * dzl_a[j]
        r = -rd[j] + rcl / mu[j]
        if k == V_BOX:
            rcu = target - su[j] * zu[j] + dmu_a[j] * dzu_a[j]
            r -= rcu / su[j]
        rho[j] = r
    _newton_solve(nside, B, qp, work, rp, rho, dmu, dbeta)
    for j in range(m):
        k = vkind[j]
        if k == V_FIXED:
            dmu[j] = dzl[j] = dzu[j] = 0.0
            continue
        rcl = target - mu[j] * zl[j] - dmu_a[j] * dzl_a[j]
        dzl[j] = (rcl - zl[j] * dmu[j]) / mu[j]
        if k == V_BOX:
            rcu = target - su[j] * zu[j] + dmu_a[j] * dzu_a[j]
            dzu[j] = (rcu + zu[j] * dmu[j]) / su[j]
        else:
            dzu[j] = 0.0
    a_max = _max_step(vkind, mu, su, zl, zu, dmu, dzl, dzu)

    # ---- Gondzio's multiple centrality correctors while the step is short: move the
    # complementarity products of a longer trial step into [0.1, 10] x the target, which
    # removes the few products that block the step (Gondzio 1996).
    cdmu = wm[W_DMU_A]
    cdzl = wm[W_DZL_A]
    cdzu = wm[W_DZU_A]
    cdbeta = wd[D_DBETA_C]
    zero_rp = wd[D_T]
    for p in range(d):
        zero_rp[p] = 0.0
    for _ in range(MAX_CORRECTORS):
        if a_max >= 0.9:
            break
        a_t = min(1.0, 1.5 * a_max + 0.1)
        lo_t = 0.1 * target
        hi_t = 10.0 * target
        for j in range(m):
            k = vkind[j]
            if k == V_FIXED:
                rho[j] = 0.0
                cdzl[j] = cdzu[j] = 0.0
                continue
            v = (mu[j] + a_t * dmu[j]) * (zl[j] + a_t * dzl[j])
            dv = lo_t - v if v < lo_t else (max(hi_t - v, -hi_t) if v > hi_t else 0.0)
            cdzl[j] = dv  # the products' targets, kept for the multipliers below
            r = dv / mu[j]
            if k == V_BOX:
                v = (su[j] - a_t * dmu[j]) * (zu[j] + a_t * dzu[j])
                dv = lo_t - v if v < lo_t else (max(hi_t - v, -hi_t) if v > hi_t else 0.0)
                cdzu[j] = dv
                r -= dv / su[j]
            else:
                cdzu[j] = 0.0
            rho[j] = r
        _newton_solve(nside, B, qp, work, zero_rp, rho, cdmu, cdbeta)
        for j in range(m):
            k = vkind[j]
            if k == V_FIXED:
                cdmu[j] = 0.0
                continue
            cdzl[j] = (cdzl[j] - zl[j] * cdmu[j]) / mu[j]
            cdzu[j] = (cdzu[j] + zu[j] * cdmu[j]) / su[j] if k == V_BOX else 0.0
            cdmu[j] += dmu[j]
            cdzl[j] += dzl[j]
            cdzu[j] += dzu[j]
        a_new = _max_step(vkind, mu, su, zl, zu, cdmu, cdzl, cdzu)
        if a_new < a_max + 0.1 * (a_t - a_max):
            break
        a_max = a_new
        for j in range(m):
            dmu[j] = cdmu[j]
            dzl[j] = cdzl[j]
            dzu[j] = cdzu[j]
        for p in range(d):
            dbeta[p] += cdbeta[p]
    eta = max(ETA_MIN, min(ETA_MAX, 1.0 - mu_c))
    alpha = min(1.0, eta * a_max)
    for j in range(m):
        k = vkind[j]
        if k == V_FIXED:
            continue
        mu[j] += alpha * dmu[j]
        zl[j] += alpha * dzl[j]
        if k == V_BOX:
            su[j] -= alpha * dmu[j]
            zu[j] += alpha * dzu[j]
    for p in range(d):
        beta[p] += alpha * dbeta[p]
    fstate[F_RP] = rpmax
    fstate[F_MU] = mu_c
    fstate[F_ALPHA] = alpha
    fstate[F_SIGMA] = sigma
    fstate[F_RD] = rdmax
