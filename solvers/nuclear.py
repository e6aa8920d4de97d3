"""Matrix completion over a nuclear-norm ball: the LMO and FW / AFW / PFW / BPCG kernels.

Problem: ``min f(X) = 1/(2 N) sum_{(i,j) in Omega} (X_ij - M_ij)^2`` subject to
``||X||_* <= tau``, ``X`` of shape ``(m, n)``, ``N = |Omega|``. The observed entries are
COO arrays ``rows, cols, vals`` (int64, int64, float64, length ``N``). The gradient
``G = P_Omega(X - M) / N`` lives on ``Omega``, so ``G v`` and ``G^T u`` are O(N) loops
(:func:`matvec`, :func:`rmatvec`) and ``X`` itself is never formed.

Linear minimization oracle
--------------------------
``argmin_{||S||_* <= tau} <G, S> = -tau u1 v1^T`` with ``(u1, v1)`` the top singular pair
of ``G``: :func:`solvers.lmo.top_singular_pair` (restarted Golub-Kahan-Lanczos; its
accuracy control is described there), re-exported here with :func:`new_lmo_work`,
:func:`matvec` and :func:`rmatvec` (the O(N) products ``G v`` and ``G^T u``).

Why the FW gap stays a certificate
----------------------------------
The exact gap at ``X`` is ``<G, X> + tau sigma_1(G)``. The computed ``s = u^T G v`` is a
Rayleigh quotient of unit vectors, so ``s <= sigma_1``: a gap built from it
*under*-estimates the true gap and cannot certify anything. The kernels therefore record
``<G, X> + tau sigma_ub`` with an upper bound ``sigma_ub >= sigma_1``:

* always available and rigorous: ``sigma_rig = min(||G||_F, sqrt(sigma_1(B)^2 +
  ||G||_F^2 - ||B||_F^2))`` for the bidiagonal ``B`` of any Lanczos cycle. Proof: with
  ``P = V V^T`` the projector on the cycle's (orthonormal) right Krylov basis, ``G V =
  U B`` gives ``||G P||_2 = sigma_1(B)`` and ``||G (I - P)||_F^2 = ||G||_F^2 -
  ||B||_F^2``, and by Cauchy-Schwarz ``||G x||^2 <= (||G P||_2^2 + ||G (I - P)||_2^2)
  ||x||^2``. It is tight when the Krylov space holds the whole row space of ``G`` (small
  problems, or ``kmax = min(m, n)``), and can be loose otherwise;
* when the Lanczos run converged, ``min(sigma_rig, s + c rnorm)``: ``(u, v) / sqrt(2)``
  is a unit vector of the symmetric matrix ``[[0, G], [G^T, 0]]`` with Rayleigh quotient
  ``s`` and residual norm ``rnorm``, so some singular value of ``G`` lies within
  ``rnorm`` of ``s`` (Krylov-Bogoliubov bound) -- but not necessarily ``sigma_1``: when
  the start vector is nearly orthogonal to ``v1`` (e.g. a warm start equal to the old
  top vector, now the *second* one, with ``sigma_1 ~ sigma_2``), the Ritz pair can
  converge to ``sigma_2`` with a tiny residual. The residual's component along ``v1`` is
  about ``|c1| (sigma_1 - s)``, ``c1`` the ``v1``-weight of the Ritz vector, so
  ``sigma_1 - s <~ rnorm / |c1|``. Every start is therefore the unit warm start plus a
  deterministic pseudo-random unit vector of weight ``START_PERTURBATION = 0.5``, giving
  ``|c1| ~ 0.5 / sqrt(n)``, and the bound uses ``c = CLUSTER_SAFETY sqrt(n) /
  START_PERTURBATION`` (``CLUSTER_SAFETY = 10``). This is a heuristic (probabilistic in
  the start vector), not a proof; it costs ``tau c rnorm`` of slack, about
  ``20 sqrt(n) lmo_tol tau sigma_1``. An unconverged call uses ``sigma_rig`` alone.

Kernel
------
:func:`completion_advance` follows the kernel contract of :mod:`solvers.fw` (state in
caller-owned arrays mutated in place, one ``rec`` row per iteration, ``istate`` status).
Methods: ``METHOD_FW`` (vanilla), ``METHOD_AFW`` (away steps), ``METHOD_PFW`` (pairwise),
``METHOD_BPCG`` (blended pairwise conditional gradients, Tsuji, Tanaka & Pokutta 2022:
a local pairwise step between the active atoms with the largest and smallest ``<G, A>``
when that local gap is at least the FW gap, else a FW step). The iterate is an explicit
convex combination of rank-one atoms ``A_k = -tau u_k v_k^T`` with weights ``mu`` over
preallocated slots ``U (cap, m)``, ``V (cap, n)``, ``mu (cap,)`` (a slot is free when its
weight is 0). The kernel keeps ``z = X`` restricted to ``Omega`` (length ``N``) and
``||X||_F^2``; atom values on ``Omega`` are recomputed from ``(u_k, v_k)`` when needed
(O(N) each, the same order as reading stored values), so memory is
``cap (m + n + 1) + 3 N + kmax (m + n)`` floats. The away oracle costs O(N) per active
atom. When every slot is taken the kernel returns early with ``istate[I_FULL] = 1`` and
the caller re-factors the active set (fewer atoms, same ``X``) or grows the arrays.

Step rules (:mod:`solvers.steps`, ``LINE_QUADRATIC``): ``f(X + g D) = f + g <G, D> +
g^2 ||D_Omega||^2 / (2 N)`` exactly, so the exact line search is closed form; the short
step uses ``L = 1 / N`` and ``||D||_F^2`` (from the maintained ``||X||_F^2`` and atom
inner products); armijo and diminishing as in :mod:`solvers.steps`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solvers.active_set import away_gamma_max, away_update, fw_update, pairwise_update
from solvers.fw import terminal_status
from solvers.linalg import dot
from solvers.lmo import (  # noqa: F401  (the nuclear-norm LMO: re-exported)
    CLUSTER_SAFETY,
    START_PERTURBATION,
    matvec,
    new_lmo_work,
    rmatvec,
    top_singular_pair,
)
from solvers.steps import LINE_QUADRATIC, RULE_SHORT, step_size
from solvers.tags import (
    BASE_COLUMNS,
    STATUS_RUNNING,
    STATUS_STALLED,
    STEP_AWAY,
    STEP_DROP,
    STEP_FW,
    STEP_NONE,
    STEP_PAIRWISE,
)

try:  # BPCG's local pairwise step has its own tag where solvers.tags defines one
    from solvers.tags import STEP_LOCAL
except ImportError:  # pragma: no cover - older tags module
    STEP_LOCAL = STEP_PAIRWISE

# Step kinds inside the kernel (the recorded tag is chosen after the step).
_K_FW = 0
_K_AWAY = 1
_K_PAIR = 2
_K_LOCAL = 3

METHOD_FW = 0
METHOD_AFW = 1
METHOD_PFW = 2
METHOD_BPCG = 3
METHOD_CODES = {"fw": METHOD_FW, "afw": METHOD_AFW, "pfw": METHOD_PFW, "bpcg": METHOD_BPCG}

# Integer state layout.
I_K = 0  # index of the current iterate
I_STATUS = 1  # solvers.tags.STATUS_*
I_STOP_AT = 2  # record without stepping once k reaches this
I_FUN_EVALS = 3  # cumulative line evaluations (armijo)
I_METHOD = 4  # METHOD_*
I_RULE = 5  # solvers.steps.RULE_*
I_REFRESH = 6  # rebuild z and ||X||_F^2 from the atoms every this many steps; 0 = never
I_LMO_CALLS = 7  # cumulative LMO calls
I_LMO_ITERS = 8  # cumulative products G v (each with its G^T u) spent in the LMO
I_MAX_LMO_ITERS = 9  # cap on products per LMO call
I_FULL = 10  # set to 1 when the kernel returned because no atom slot was free
I_LOCAL_TAG = 11  # step-type code recorded for BPCG's local pairwise steps
N_ISTATE = 12

# Float state layout.
F_XX = 0  # ||X||_F^2, kept in step with the atoms
F_LMO_TOL = 1  # relative accuracy of the LMO (see the module docstring)
N_FSTATE = 2

NUCLEAR_RECORD_COLUMNS = (*BASE_COLUMNS, "grad_evals", "fun_evals", "lmo_calls", "lmo_iters")

#: Two unit rank-one atoms are the same atom when ``(u.u')(v.v') >= 1 - SAME_ATOM_TOL``.
SAME_ATOM_TOL = 1e-10


# ---------------------------------------------------------------------------------------
# Predictions and the active set


@njit(cache=True, nogil=True)
def predict(U, V, mu, tau, rows, cols, out):
    """``out[t] = X[rows[t], cols[t]]`` for ``X = sum_k mu_k (-tau) u_k v_k^T``, without
    forming ``X``: O(len(rows)) per active atom."""
    out[:] = 0.0
    for a in range(mu.shape[0]):
        w = mu[a]
        if w <= 0.0:
            continue
        c = -tau * w
        ua = U[a]
        va = V[a]
        for t in range(rows.shape[0]):
            out[t] += c * ua[rows[t]] * va[cols[t]]


@njit(cache=True)
def _x_dot_atom(U, V, mu, tau, us, vs):
    """``<X, -tau us vs^T>`` for the current iterate ``X``."""
    acc = 0.0
    for a in range(mu.shape[0]):
        if mu[a] > 0.0:
            acc += mu[a] * dot(U[a], us) * dot(V[a], vs)
    return tau * tau * acc


@njit(cache=True)
def frobenius_sq(U, V, mu, tau):
    """``||X||_F^2`` from the atoms (O(|A|^2 (m + n)))."""
    acc = 0.0
    for a in range(mu.shape[0]):
        if mu[a] > 0.0:
            acc += mu[a] * _x_dot_atom(U, V, mu, tau, U[a], V[a])
    return acc


@njit(cache=True)
def _atom_on_omega(U, V, a, tau, rows, cols, out, scale):
    """``out += scale * (-tau) u_a v_a^T`` on Omega."""
    c = -tau * scale
    for t in range(rows.shape[0]):
        out[t] += c * U[a, rows[t]] * V[a, cols[t]]


@njit(cache=True)
def _atom_grad(U, V, a, tau, rows, cols, g):
    """``<G, -tau u_a v_a^T>``."""
    acc = 0.0
    for t in range(rows.shape[0]):
        acc += g[t] * U[a, rows[t]] * V[a, cols[t]]
    return -tau * acc


# ---------------------------------------------------------------------------------------
# The kernel


@njit(cache=True, inline="always")
def _record(rec, row, k, f, cert, gamma, step_type, active, istate):
    """One row: the columns of ``NUCLEAR_RECORD_COLUMNS`` in order."""
    rec[row, 0] = k
    rec[row, 1] = f
    rec[row, 2] = cert
    rec[row, 3] = gamma
    rec[row, 4] = step_type
    rec[row, 5] = active
    rec[row, 6] = k + 1  # gradient passes
    rec[row, 7] = istate[I_FUN_EVALS]
    rec[row, 8] = istate[I_LMO_CALLS]
    rec[row, 9] = istate[I_LMO_ITERS]


@njit(cache=True)
def _store_atom(U, V, mu, slot, us, vs):
    """Write the atom ``(us, vs)`` into the free ``slot`` (weight 0); return the slot."""
    U[slot, :] = us
    V[slot, :] = vs
    mu[slot] = 0.0
    return slot


@njit(cache=True, nogil=True)
def completion_advance(
    data, tau, atoms, z, scratch, lmo, fstate, istate, lstate, step_params, tol, rec
):
    """Advance FW / AFW / PFW / BPCG on nuclear-ball matrix completion (module docstring).

    Parameters
    ----------
    data : ``(rows, cols, vals)``, the observed entries of ``M`` ((N,) int64, int64,
        float64).
    tau : float, the nuclear-norm radius.
    atoms : ``(U, V, mu)``: ``U`` (cap, m), ``V`` (cap, n), ``mu`` (cap,) float64, the
        atoms and their convex weights.
    z : (N,) float64, ``X`` on Omega (kept in step with the atoms).
    scratch : ``(g, dz, gatom)``: (N,), (N,), (cap,) float64 (gradient and direction on
        Omega, ``<G, A_k>`` of the active atoms).
    lmo : ``(lu, lv, Ub, Vb, B)``: the LMO's warm-start pair ((m,), (n,), updated by
        each call) and its scratch (:func:`new_lmo_work`).
    fstate : float64 array of length ``N_FSTATE``; istate : int64 array of ``N_ISTATE``.
    lstate, step_params : see :mod:`solvers.steps`.
    tol : float, stop when the certified FW gap is at most this.
    rec : (max_rows, len(NUCLEAR_RECORD_COLUMNS)) float64 array receiving the rows.

    Returns
    -------
    rows : int, the number of rows written.
    """
    rows, cols, vals = data
    U, V, mu = atoms
    g, dz, gatom = scratch
    lu, lv, Ub, Vb, B = lmo
    N = z.shape[0]
    cap = mu.shape[0]
    inv_n = 1.0 / N
    method = istate[I_METHOD]
    rule = istate[I_RULE]
    max_rows = rec.shape[0]
    empty = vals[:0]
    tau2 = tau * tau
    istate[I_FULL] = 0
    for row in range(max_rows):
        k = istate[I_K]
        active = 0
        free = np.int64(-1)  # (np.int64: no Literal-typed helper calls)
        for a in range(cap):
            if mu[a] > 0.0:
                active += 1
            elif free < 0:
                free = a
        if free < 0:
            # No slot for a new atom: the caller compresses or grows the active set.
            istate[I_FULL] = 1
            istate[I_STATUS] = STATUS_RUNNING
            return row
        if k > 0 and istate[I_REFRESH] > 0 and k % istate[I_REFRESH] == 0:
            predict(U, V, mu, tau, rows, cols, z)  # drift control
            fstate[F_XX] = frobenius_sq(U, V, mu, tau)
        f = 0.0
        gx = 0.0
        for t in range(N):
            r = z[t] - vals[t]
            f += r * r
            g[t] = r * inv_n
            gx += g[t] * z[t]
        f *= 0.5 * inv_n
        sig, _, sig_ub, its, _ = top_singular_pair(
            rows,
            cols,
            g,
            lu,
            lv,
            Ub,
            Vb,
            B,
            fstate[F_LMO_TOL],
            istate[I_MAX_LMO_ITERS],
            istate[I_LMO_CALLS],
        )
        istate[I_LMO_CALLS] += 1
        istate[I_LMO_ITERS] += its
        cert = gx + tau * sig_ub
        status = terminal_status(cert, tol, f, k, istate[I_STOP_AT])
        if status != STATUS_RUNNING:
            _record(rec, row, k, f, cert, 0.0, STEP_NONE, active, istate)
            istate[I_STATUS] = status
            return row + 1
        gap = gx + tau * sig  # the FW gap along the computed atom (drives the step)
        # The FW atom: an active atom when the LMO returned (numerically) the same one.
        s = np.int64(-1)
        for a in range(cap):
            if mu[a] > 0.0 and dot(U[a], lu) * dot(V[a], lv) >= 1.0 - SAME_ATOM_TOL:
                s = a
                break
        if s >= 0:
            us = U[s]
            vs = V[s]
            gs = _atom_grad(U, V, s, tau, rows, cols, g)
            gap = gx - gs
        else:
            us = lu
            vs = lv
            gs = -tau * sig
        # Away (largest <G, A>) and local FW (smallest <G, A>) atoms among the active ones.
        v = np.int64(-1)
        loc = np.int64(-1)
        if method != METHOD_FW:
            for a in range(cap):
                if mu[a] > 0.0:
                    ga = _atom_grad(U, V, a, tau, rows, cols, g)
                    gatom[a] = ga
                    if v < 0 or ga > gatom[v]:
                        v = a
                    if loc < 0 or ga < gatom[loc]:
                        loc = a
        kind = _K_FW
        if method == METHOD_AFW and gatom[v] - gx > gap:
            kind = _K_AWAY
        elif method == METHOD_PFW:
            kind = _K_PAIR
        elif method == METHOD_BPCG and gatom[v] - gatom[loc] >= gap:
            kind = _K_LOCAL
        xx = fstate[F_XX]
        # Direction d on Omega (dz), <G, d>, ||d||_F^2, the largest step, and the inner
        # products that keep ||X||_F^2 in step.
        dz[:] = 0.0
        xs = 0.0
        xv = 0.0
        sv = 0.0
        if kind == _K_FW:
            xs = _x_dot_atom(U, V, mu, tau, us, vs)
            for t in range(N):
                dz[t] = -tau * us[rows[t]] * vs[cols[t]] - z[t]
            gd = -gap
            dnorm2 = tau2 - 2.0 * xs + xx
            gmax = 1.0
        elif kind == _K_AWAY:
            xv = _x_dot_atom(U, V, mu, tau, U[v], V[v])
            for t in range(N):
                dz[t] = z[t]
            _atom_on_omega(U, V, v, tau, rows, cols, dz, -1.0)
            gd = gx - gatom[v]
            dnorm2 = xx - 2.0 * xv + tau2
            gmax = away_gamma_max(mu[v])
        else:
            if kind == _K_LOCAL:
                us = U[loc]
                vs = V[loc]
                gs = gatom[loc]
            xs = _x_dot_atom(U, V, mu, tau, us, vs)
            xv = _x_dot_atom(U, V, mu, tau, U[v], V[v])
            sv = tau2 * dot(us, U[v]) * dot(vs, V[v])
            for t in range(N):
                dz[t] = -tau * us[rows[t]] * vs[cols[t]]
            _atom_on_omega(U, V, v, tau, rows, cols, dz, -1.0)
            gd = gs - gatom[v]
            dnorm2 = 2.0 * tau2 - 2.0 * sv
            gmax = mu[v]
        if gd >= 0.0:
            # Not a descent direction (same atom twice, or the gap is at rounding level).
            _record(rec, row, k, f, cert, 0.0, STEP_NONE, active, istate)
            istate[I_STATUS] = STATUS_STALLED
            return row + 1
        curv = 0.0
        for t in range(N):
            curv += dz[t] * dz[t]
        curv *= 0.5 * inv_n
        start = 2.0 / (k + 2.0) if method == METHOD_FW else gmax
        gamma, evals = step_size(
            rule,
            k,
            gd,
            max(dnorm2, 0.0) if rule == RULE_SHORT else dnorm2,
            gmax,
            start,
            np.int64(LINE_QUADRATIC),
            f,
            curv,
            empty,
            empty,
            empty,
            step_params,
            lstate,
        )
        istate[I_FUN_EVALS] += evals
        if gamma <= 0.0:
            _record(rec, row, k, f, cert, 0.0, STEP_NONE, active, istate)
            istate[I_STATUS] = STATUS_STALLED
            return row + 1
        for t in range(N):
            z[t] += gamma * dz[t]
        if kind == _K_FW:
            if s < 0:
                s = _store_atom(U, V, mu, free, us, vs)
            fw_update(mu, s, gamma)
            xx = (1.0 - gamma) ** 2 * xx + 2.0 * gamma * (1.0 - gamma) * xs + gamma**2 * tau2
            tag = STEP_FW
        elif kind == _K_AWAY:
            dropped = away_update(mu, v, gamma, gmax)
            xx = (1.0 + gamma) ** 2 * xx - 2.0 * gamma * (1.0 + gamma) * xv + gamma**2 * tau2
            tag = STEP_DROP if dropped else STEP_AWAY
        else:
            if kind == _K_PAIR:
                if s < 0:
                    s = _store_atom(U, V, mu, free, us, vs)
                target = s
                tag = STEP_PAIRWISE
            else:
                target = loc
                tag = istate[I_LOCAL_TAG]
            dropped = pairwise_update(mu, target, v, gamma, gmax)
            xx = xx + 2.0 * gamma * (xs - xv) + gamma**2 * (2.0 * tau2 - 2.0 * sv)
            if dropped:
                tag = STEP_DROP
        fstate[F_XX] = max(xx, 0.0)
        _record(rec, row, k, f, cert, gamma, tag, active, istate)
        istate[I_K] = k + 1
    istate[I_STATUS] = STATUS_RUNNING
    return max_rows
