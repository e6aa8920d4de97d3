"""The Newton system of the PLQ interior-point method: products with ``B``, factors, solves.

The dual of the PLQ problem (Dai & Qiu 2023, "ReHLine: Regularized Composite ReLU-ReHU Loss
Minimization with Linear Computation and Linear Convergence", NeurIPS; ALGORITHMS.md D.3)
is the box QP ``min 0.5 ||B mu||^2 + 0.5 mu^T Dg mu + c^T mu, 0 <= mu <= hi`` that
:mod:`solvers.plq_ipm` solves. Column ``j`` of ``B`` is ``a_k``, ``-u_li x_i``,
``-s_hi x_i`` or ``-+w e_j`` in the variable layout (xi, lambda sample-major, gamma, l1
pairs) of :func:`bmul`, :func:`btmul` and :func:`_column`. Each Mehrotra step solves

    dbeta - B dmu = -rp,    B^T dbeta + D dmu = rho,

with ``D = Dg + zl/mu + zu/su`` (diagonal), through one of two reductions.

d-side form (:func:`_factor_dside`, :func:`_split_solve`): the d x d matrix

    M = I + B D^-1 B^T = I + X^T diag(omega) X + A^T diag(1/D_xi) A (+ l1 diagonal),
    omega_i = sum_l u_li^2 / D_li + sum_h s_hi^2 / D_hi,

formed in one pass over the data (:func:`gram_add`: BLAS for dense data) and factored once
per iteration (Cholesky after a symmetric diagonal scaling to unit diagonal); then
``dbeta = M^-1 B D^-1 rho`` and ``dmu = D^-1 (rho - B^T dbeta)`` (the
Sherman-Morrison-Woodbury reduction that Ferris & Munson 2002 used for the SVM dual,
written with the primal step ``dbeta`` as Woodsend & Gondzio 2011 keep it). Variables
with a tiny ``D_j`` against ``||b_j||^2`` (free duals near the end: the free set ``F``,
:func:`_select_free`) are not divided by it but solved for through the Schur complement
on ``F``, factored by QR of the stacked matrix (:func:`_factor_stacked`). The predictor,
the corrector and the centrality correctors of an iteration all use the same factors.
Cost per iteration: ``O(nnz(X) + sum_i nnz(x_i)^2 + d^3)`` for CSR data,
``O(n d^2 + d^3)`` for dense data.

n-side form for wide data (``m < d`` dual variables, no l1 term, few constraint rows;
:func:`_factor_nside`, :func:`_nside_solve`): ``(B^T B + D) dmu = rho + B^T rp``,
``dbeta = B dmu - rp``, with ``B^T B`` (m x m; ``x_i^T x_j`` scaled by the pieces'
slopes) formed once by the caller and only its diagonal changing: ``O(m^3)`` per
iteration instead of ``O(d^3)``, and no ``D^-1``, so no free set is needed.

The variable kinds ``V_*`` and the rows of the work arrays ``W_*`` (m-sized) and ``D_*``
(d-sized) are defined here and shared with :mod:`solvers.plq_ipm`.
``@njit(cache=True, nogil=True)``; dense or CSR ``X`` (and CSR ``A``) dispatched at compile
time by :mod:`solvers.linalg` and :func:`gram_add`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.extending import overload

from solvers.linalg import row_axpy, row_dot

# Variable kinds (per dual variable).
V_FIXED = 0  # degenerate box [0, 0]: held at 0, not part of the iteration
V_LOWER = 1  # [0, inf)
V_BOX = 2  # [0, hi]

# Rows of the (N_WM, m) work array.
W_GRAD = 0  # gradient of L at mu
W_RD = 1  # dual residual grad - zl + zu
W_D = 2  # Newton diagonal D
W_RHO = 3  # right-hand side
W_DMU = 4  # step in mu (predictor, then corrector)
W_DZL = 5
W_DZU = 6
W_DMU_A = 7  # affine (predictor) step
W_DZL_A = 8
W_DZU_A = 9
W_T = 10  # scratch
W_T2 = 11  # scratch
W_IDE = 12  # 1 / D outside the free set F, 0 inside
N_WM = 13

# Rows of the (N_WD, d) work array.
D_RHS = 0
D_DBETA = 1
D_SCALE = 2  # equilibration of M
D_T = 3
D_DBETA_C = 4  # corrector step in beta
N_WD = 5

#: A dual variable joins the free set F when ``||b_j||^2 / D_j`` exceeds this.
FREE_RATIO = 1e6


@njit(cache=True, nogil=True)
def bmul(B, y, out):
    """``out = B y`` (d,): ``A^T y_xi - sum_i x_i (u_i . y_lam_i + s_i . y_gam_i) - w (y_1 -
    y_2)``; ``y`` in the variable layout (xi, lambda sample-major, gamma, l1 pairs).
    ``B``: :class:`solvers.plq_state.BMatrix` (``X``, ``A``, ``U``, ``S``, ``l1w``)."""
    X, A, U, S, l1w = B
    K = A[2].shape[0] - 1
    n = U.shape[0]
    L = U.shape[1]
    H = S.shape[1]
    for j in range(out.shape[0]):
        out[j] = 0.0
    for k in range(K):
        if y[k] != 0.0:
            row_axpy(A, k, y[k], out)
    off_l = K
    off_h = K + n * L
    for i in range(n):
        acc = 0.0
        for l_ in range(L):
            acc += U[i, l_] * y[off_l + i * L + l_]
        for h in range(H):
            acc += S[i, h] * y[off_h + i * H + h]
        if acc != 0.0:
            row_axpy(X, i, -acc, out)
    off_1 = K + n * (L + H)
    for j in range(l1w.shape[0]):
        out[j] -= l1w[j] * (y[off_1 + 2 * j] - y[off_1 + 2 * j + 1])


@njit(cache=True, nogil=True)
def btmul(B, v, out):
    """``out = B^T v`` (m,) for ``v`` (d,), in the variable layout of :func:`bmul`."""
    X, A, U, S, l1w = B
    K = A[2].shape[0] - 1
    n = U.shape[0]
    L = U.shape[1]
    H = S.shape[1]
    for k in range(K):
        out[k] = row_dot(A, k, v)
    off_l = K
    off_h = K + n * L
    for i in range(n):
        zi = row_dot(X, i, v)
        for l_ in range(L):
            out[off_l + i * L + l_] = -U[i, l_] * zi
        for h in range(H):
            out[off_h + i * H + h] = -S[i, h] * zi
    off_1 = K + n * (L + H)
    for j in range(l1w.shape[0]):
        out[off_1 + 2 * j] = -l1w[j] * v[j]
        out[off_1 + 2 * j + 1] = l1w[j] * v[j]


@njit(cache=True, nogil=True)
def _gram_csr(X, omega, M):
    """``M += X^T diag(omega) X`` for a CSR triple (both triangles)."""
    data, indices, indptr = X
    for i in range(indptr.shape[0] - 1):
        w = omega[i]
        if w == 0.0:
            continue
        start = np.uint64(indptr[i])
        stop = np.uint64(indptr[i + 1])
        for p in range(start, stop):
            cp = np.uint64(indices[p])
            vp = w * data[p]
            M[cp, cp] += vp * data[p]
            for q in range(p + 1, stop):
                cq = np.uint64(indices[q])
                v = vp * data[q]
                M[cp, cq] += v
                M[cq, cp] += v


def gram_add(X, omega, M, Y):  # pragma: no cover - dispatched by numba
    """``M += X^T diag(omega) X``; ``Y`` is (n, d) scratch used for dense ``X`` (BLAS)."""


@overload(gram_add)
def _gram_add(X, omega, M, Y):
    if isinstance(X, types.BaseTuple):

        def impl(X, omega, M, Y):
            _gram_csr(X, omega, M)

        return impl

    def impl_dense(X, omega, M, Y):
        n, d = X.shape
        for i in range(n):
            r = math.sqrt(omega[i])
            for j in range(d):
                Y[i, j] = r * X[i, j]
        M += np.dot(Y.T, Y)

    return impl_dense


@njit(cache=True, inline="always")
def _copy_into(src, dst):
    """``dst[:, :] = src`` as a loop: the slice assignment's shape check formats its error
    message with numba's string machinery, about 3 s of compiling on a fresh install."""
    for p in range(src.shape[0]):
        for q in range(src.shape[1]):
            dst[p, q] = src[p, q]


@njit(cache=True, nogil=True)
def _factor(M, scale, Lc):
    """Cholesky factor of ``S M S`` with ``S = diag(1 / sqrt(M_jj))`` into ``Lc``."""
    d = M.shape[0]
    for j in range(d):
        scale[j] = 1.0 / math.sqrt(M[j, j])
    E = np.empty((d, d))
    for p in range(d):
        for q in range(d):
            E[p, q] = M[p, q] * scale[p] * scale[q]
    _copy_into(np.linalg.cholesky(E), Lc)


@njit(cache=True, nogil=True)
def _factor_stacked(C, D, idx, scale, Lc):
    """A triangular factor of ``S (diag(D[idx]) + C C^T) S`` (``S`` scales it to unit
    diagonal) from the QR factorization of ``[C^T; diag(sqrt(D[idx]))] S``: no product
    is formed, so nearly dependent columns of ``B_F`` (a fairness slab's two opposite rows,
    say) keep a factor accurate to the conditioning of the stacked matrix, the square root
    of that of the product."""
    nf, d = C.shape
    Z = np.zeros((d + nf, nf))
    for k in range(nf):
        acc = D[idx[k]]
        for p in range(d):
            acc += C[k, p] * C[k, p]
        scale[k] = 1.0 / math.sqrt(acc)
        for p in range(d):
            Z[p, k] = C[k, p] * scale[k]
        Z[d + k, k] = math.sqrt(D[idx[k]]) * scale[k]
    _, R = np.linalg.qr(Z)
    for p in range(nf):
        for q in range(nf):
            Lc[p, q] = R[q, p]


@njit(cache=True, nogil=True)
def _forward(Lc, scale, r, out):
    """``out = L^-1 S r`` (forward substitution with the factor of :func:`_factor`)."""
    d = r.shape[0]
    for j in range(d):
        acc = r[j] * scale[j]
        for k in range(j):
            acc -= Lc[j, k] * out[k]
        out[j] = acc / Lc[j, j]


@njit(cache=True, nogil=True)
def _chol_solve(Lc, scale, r, out):
    """``out = M^-1 r`` from the factor of :func:`_factor` (two triangular solves)."""
    d = r.shape[0]
    _forward(Lc, scale, r, out)
    for j in range(d - 1, -1, -1):
        acc = out[j]
        for k in range(j + 1, d):
            acc -= Lc[k, j] * out[k]
        out[j] = acc / Lc[j, j]
    for j in range(d):
        out[j] *= scale[j]


@njit(cache=True, nogil=True)
def _factor_nside(BtB, D, vkind, scale, Lc):
    """Cholesky factor of ``S (B^T B + diag(D)) S`` into ``Lc`` (``S`` scales it to unit
    diagonal); a fixed variable's row and column are the identity's (its step is 0)."""
    m = BtB.shape[0]
    for j in range(m):
        scale[j] = 1.0 if vkind[j] == V_FIXED else 1.0 / math.sqrt(BtB[j, j] + D[j])
    E = np.empty((m, m))
    for p in range(m):
        fixed_p = vkind[p] == V_FIXED
        for q in range(m):
            if fixed_p or vkind[q] == V_FIXED:
                E[p, q] = 1.0 if p == q else 0.0
            else:
                g = BtB[p, q] + (D[p] if p == q else 0.0)
                E[p, q] = g * scale[p] * scale[q]
    _copy_into(np.linalg.cholesky(E), Lc)


@njit(cache=True, nogil=True)
def _nside_solve(B, qp, work, rp, rho, dmu, dbeta):
    """Solve ``dbeta - B dmu = -rp``, ``B^T dbeta + D dmu = rho`` in the n-side form:
    ``(B^T B + D) dmu = rho + B^T rp``, then ``dbeta = B dmu - rp``. No ``D^-1`` appears,
    so tiny ``D_j`` (free duals) need no special treatment; used when the dual has fewer
    variables than the primal (wide data). Factors in ``work.sysf``; scratch
    ``work.wm[W_T]``."""
    Lc, scale = work.sysf[0], work.sysf[1]
    vkind = qp.vkind
    wm_t = work.wm[W_T]
    btmul(B, rp, wm_t)
    for j in range(rho.shape[0]):
        wm_t[j] = 0.0 if vkind[j] == V_FIXED else rho[j] + wm_t[j]
    _chol_solve(Lc, scale, wm_t, dmu)
    for j in range(rho.shape[0]):
        if vkind[j] == V_FIXED:
            dmu[j] = 0.0
    bmul(B, dmu, dbeta)
    for p in range(dbeta.shape[0]):
        dbeta[p] -= rp[p]


@njit(cache=True, nogil=True)
def _newton_solve(nside, B, qp, work, rp, rho, dmu, dbeta):
    """One solve with the factors of this iteration (in ``work``): n-side form or split
    d-side form. ``B``, ``qp``, ``work``: :class:`solvers.plq_state.BMatrix`,
    :class:`~solvers.plq_state.BoxQP`, :class:`~solvers.plq_state.IpmWork`."""
    if nside:
        _nside_solve(B, qp, work, rp, rho, dmu, dbeta)
    else:
        _split_solve(B, work, rp, rho, dmu, dbeta)


@njit(cache=True, nogil=True)
def _column(B, j, out):
    """``out = b_j``, column ``j`` of ``B`` (variable layout of :func:`bmul`)."""
    X, A, U, S, l1w = B
    K = A[2].shape[0] - 1
    n = U.shape[0]
    L = U.shape[1]
    H = S.shape[1]
    for p in range(out.shape[0]):
        out[p] = 0.0
    if j < K:
        row_axpy(A, j, 1.0, out)
        return
    j -= K
    if j < n * L:
        row_axpy(X, j // L, -U[j // L, j % L], out)
        return
    j -= n * L
    if j < n * H:
        row_axpy(X, j // H, -S[j // H, j % H], out)
        return
    j -= n * H
    w = l1w[j // 2]
    out[j // 2] = -w if j % 2 == 0 else w


@njit(cache=True, nogil=True)
def _split_solve(B, work, rp, rho, dmu, dbeta):
    """Solve ``dbeta - B dmu = -rp``, ``B^T dbeta + D dmu = rho`` (module docstring).

    Variables outside the set ``F`` (``sysi`` lists it) are eliminated through the factor
    of ``M_b = I + B_b D_b^-1 B_b^T``; those in ``F`` (small ``D_j`` against ``||b_j||^2``:
    free duals near the end) are solved for through the Schur complement
    ``S_F = D_F + B_F^T M_b^-1 B_F``. Dividing by their tiny ``D_j`` would amplify the
    rounding of ``b_j^T dbeta`` by ``||b_j||^2 / D_j`` (measured: the step's relative
    error grew to 1e-2 and beyond on unscaled data once the barrier parameter fell below
    1e-6). Factors in ``work.sysf``, ``work.sysi``; ``1 / D`` outside ``F`` in
    ``work.wm[W_IDE]``; scratch ``work.wm[W_T]``, ``work.wd[D_RHS]``.
    """
    Lc, scale, Bf, _, LF, scaleF = work.sysf
    sysi = work.sysi
    iDe = work.wm[W_IDE]
    wm_t = work.wm[W_T]
    wd_t = work.wd[D_RHS]
    nf = sysi[0]
    fidx = sysi[1:]
    m = rho.shape[0]
    for j in range(m):
        wm_t[j] = rho[j] * iDe[j]
    bmul(B, wm_t, wd_t)
    for p in range(wd_t.shape[0]):
        wd_t[p] -= rp[p]
    _chol_solve(Lc, scale, wd_t, dbeta)  # h = M_b^-1 (B_b D_b^-1 rho_b - rp)
    xf = np.empty(nf)
    if nf > 0:
        d = dbeta.shape[0]
        rf = np.empty(nf)
        for k in range(nf):
            acc = 0.0
            for p in range(d):
                acc += Bf[k, p] * dbeta[p]
            rf[k] = rho[fidx[k]] - acc
        _chol_solve(LF[:nf, :nf], scaleF[:nf], rf, xf)
        for p in range(d):
            wd_t[p] = 0.0
        for k in range(nf):
            for p in range(d):
                wd_t[p] += Bf[k, p] * xf[k]
        corr = np.empty(d)
        _chol_solve(Lc, scale, wd_t, corr)
        for p in range(d):
            dbeta[p] += corr[p]
    btmul(B, dbeta, wm_t)
    for j in range(m):
        dmu[j] = (rho[j] - wm_t[j]) * iDe[j]
    for k in range(nf):
        dmu[fidx[k]] = xf[k]


@njit(cache=True, nogil=True)
def _select_free(bn2, D, vkind, iDe, sysi, ratio):
    """The set ``F``: variables with ``||b_j||^2 / D_j > ratio``, the largest first, at
    most ``len(sysi) - 1`` of them; ``iDe`` gets ``1 / D_j`` outside ``F`` and 0 inside."""
    m = D.shape[0]
    cap = sysi.shape[0] - 1
    count = 0
    for j in range(m):
        iDe[j] = 0.0 if vkind[j] == V_FIXED else 1.0 / D[j]
        if vkind[j] != V_FIXED and bn2[j] > ratio * D[j]:
            count += 1
    if count == 0:
        sysi[0] = 0
        return
    if count <= cap:
        k = 0
        for j in range(m):
            if vkind[j] != V_FIXED and bn2[j] > ratio * D[j]:
                sysi[1 + k] = j
                k += 1
    else:
        # The cap largest ratios: a partition finds the cap-th largest in O(m) (a full sort
        # of all m ratios cost more than the rest of the iteration on unscaled cadata).
        key = np.empty(m)
        for j in range(m):
            key[j] = bn2[j] / D[j] if vkind[j] != V_FIXED else 0.0
        cut = np.partition(key, m - cap)[m - cap]
        k = 0
        for j in range(m):
            if key[j] > cut and k < cap:
                sysi[1 + k] = j
                k += 1
        for j in range(m):  # ties at the cut fill what is left
            if key[j] == cut and k < cap:
                sysi[1 + k] = j
                k += 1
        count = k
    sysi[0] = count
    for k in range(count):
        iDe[sysi[1 + k]] = 0.0


@njit(cache=True, nogil=True)
def _factor_dside(B, qp, work, D):
    """The factors of the split d-side form, for the Newton diagonal ``D``: the free set
    ``F`` (``work.sysi``), ``1 / D`` outside it (``work.wm[W_IDE]``), the factor of
    ``M_b = I + B_b D_b^-1 B_b^T`` and that of the Schur complement on ``F``
    (:func:`_split_solve`; ``work.sysf``)."""
    X, A, U, S, l1w = B
    vkind = qp.vkind
    bn2 = qp.bn2
    M = work.M
    Y = work.Y
    wm = work.wm
    wd = work.wd
    sysi = work.sysi
    iDe = wm[W_IDE]
    Lc, scale, Bf, C, LF, scaleF = work.sysf
    d = M.shape[0]
    K = A[2].shape[0] - 1
    n = U.shape[0]
    L = U.shape[1]
    H = S.shape[1]
    _select_free(bn2, D, vkind, iDe, sysi, FREE_RATIO)
    nf = sysi[0]
    for p in range(d):
        for q in range(d):
            M[p, q] = 0.0
    omega = wm[W_T][:n]
    off_l = K
    off_h = K + n * L
    for i in range(n):
        w = 0.0
        for l_ in range(L):
            u = U[i, l_]
            w += u * u * iDe[off_l + i * L + l_]
        for h in range(H):
            s = S[i, h]
            w += s * s * iDe[off_h + i * H + h]
        omega[i] = w
    gram_add(X, omega, M, Y)
    if K > 0:
        _gram_csr(A, iDe[:K], M)
    off_1 = K + n * (L + H)
    for j in range(l1w.shape[0]):
        w = l1w[j]
        M[j, j] += w * w * (iDe[off_1 + 2 * j] + iDe[off_1 + 2 * j + 1])
    for j in range(d):
        M[j, j] += 1.0
    _factor(M, scale, Lc)
    if nf > 0:
        col = wd[D_T]
        for k in range(nf):
            _column(B, sysi[1 + k], col)
            for p in range(d):
                Bf[k, p] = col[p]
            _forward(Lc, scale, col, wd[D_RHS])
            for p in range(d):
                C[k, p] = wd[D_RHS][p]
        _factor_stacked(C[:nf], D, sysi[1 : 1 + nf], scaleF[:nf], LF[:nf, :nf])
