"""The duality-gap certificate of the PLQ problem, for a primal point and a dual point.

The problem is ReHLine's (Dai & Qiu (2023), "ReHLine: Regularized Composite ReLU-ReHU Loss
Minimization with Linear Computation and Linear Convergence", NeurIPS):

    min_beta  sum_i [ sum_l ReLU(u_li z_i + v_li) + sum_h ReHU_tau_hi(s_hi z_i + t_hi) ]
              + sum_j w_j |beta_j| + 0.5 ||beta||^2     s.t.  A beta + b >= 0,

with ``z_i = x_i^T beta``, and its dual in minimization form ``L(mu)`` over ``mu = (xi,
Lambda, Gamma)`` (see :mod:`solvers.rehline`). The certificate (:func:`evaluate`) is
computed term by term, which needs no cancellation of the (possibly large) primal and dual
values:

    P(beta) + L(mu) = sum over pieces of [loss(w) - dual * w (+ gamma^2 / 2)] + xi^T (A beta + b),

each bracket being >= 0 (Fenchel-Young). Weak duality makes ``P(beta) + L(mu)`` an upper
bound on ``P(beta) - P*`` at *every* iterate, but when ``beta`` violates a constraint the
last term can be negative and ``P(beta)`` can lie below ``P*``; the kernel therefore also
returns ``cert = loss gap + sum_k xi_k max(a_k^T beta + b_k, 0)`` (>= the gap, >= 0, equal
to it when ``beta`` is feasible) and the largest violation ``max_k max(0, -(a_k^T beta +
b_k))``. :func:`evaluate_sized` also writes the size of the terms the gap is computed
from, which bounds its rounding error.

Both ReHLine's coordinate descent and the interior-point method (:mod:`solvers.plq_ipm`)
are certified by these kernels. Output layout: ``E_*``. ``@njit(cache=True, nogil=True)``;
dense or CSR ``X`` (and CSR ``A``) dispatched at compile time by :mod:`solvers.linalg`;
the pieces packed by :func:`solvers.plq_pieces.pack_pieces`; no allocation.
"""

from __future__ import annotations

import math

from numba import njit

from solvers.linalg import row_dot, row_dot_long
from solvers.plq_pieces import _rehu

# evaluate() output layout.
E_PRIMAL = 0  # P(beta)
E_GAP = 1  # P(beta) + L(mu) (the duality gap, dual in minimization form)
E_CERT = 2  # loss gap + sum_k xi_k max(a_k beta + b_k, 0) >= max(E_GAP, 0)
E_INFEAS = 3  # max_k max(0, -(a_k beta + b_k))
E_MAG = 4  # size of the terms the gap is computed from: rounding error <= ~4 eps E_MAG
N_EVAL = 5


@njit(cache=True, inline="always")
def asq_of(A, k):
    """``||a_k||^2`` of row ``k`` of a CSR triple."""
    data, _, indptr = A
    acc = 0.0
    for t in range(indptr[k], indptr[k + 1]):
        acc += data[t] * data[t]
    return acc


@njit(cache=True, inline="always")
def _gap_terms(data, beta, duals, out, with_size):
    """The body of :func:`evaluate` and :func:`evaluate_sized`; ``with_size`` is a
    constant at each inlined call, so the size terms cost nothing when not asked for."""
    X, PL, PH, l1w, rows = data
    A = rows.A
    b = rows.b
    beta_mu, xi, lam, lam1, gam = duals
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
def evaluate(data, beta, duals, out):
    """Primal objective, duality gap, certificate and infeasibility of a primal point and
    a dual point.

    ``data``: the problem (:class:`solvers.plq_state.PlqData`; ``rows.asq`` is not read);
    ``beta``: the primal point; ``duals``: the dual point
    (:class:`solvers.plq_state.PlqDuals`), whose ``beta`` is the dual map ``beta_mu =
    beta(xi, Lambda, Gamma)`` (the same array as ``beta`` when ``beta`` is kept equal to
    it, as coordinate descent does; a feasible point near it otherwise). For any pair,
    ``P(beta) + L(mu) = sum of Fenchel-Young gaps at beta + 0.5 ||beta - beta_mu||^2
    + xi^T (A beta + b)``, every term >= 0 when ``beta`` is feasible: the gap is computed
    that way, term by term. Writes ``out[E_PRIMAL]`` = P(beta), ``out[E_GAP]`` = P(beta) +
    L(mu), ``out[E_CERT]`` (the gap with the constraint terms ``xi_k (a_k beta + b_k)``
    replaced by ``xi_k max(a_k beta + b_k, 0)``: >= the gap, equal to it when beta is
    feasible) and ``out[E_INFEAS]`` = ``max_k max(0, -(a_k beta + b_k))``; ``out[E_MAG]``
    is left as it is (:func:`evaluate_sized` writes it). One pass over the rows of ``X``
    and ``A``. Layouts as in :func:`solvers.rehline.epoch`.
    """
    _gap_terms(data, beta, duals, out, False)


@njit(cache=True, nogil=True)
def evaluate_sized(data, beta, duals, out):
    """:func:`evaluate`, and ``out[E_MAG]``: the size of the quantities the gap is
    computed from. Its rounding error is at most a few ``eps * E_MAG`` (on raw features
    the gap of an optimal pair can come out slightly negative). The size costs ~40 % of an
    evaluation on 8-feature data, so callers recompute it only near a decision."""
    _gap_terms(data, beta, duals, out, True)
