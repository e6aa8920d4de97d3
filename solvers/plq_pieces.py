"""The packed pieces of a PLQ loss: the per-sample rows every PLQ kernel reads.

The loss of the PLQ problem (Dai & Qiu (2023), "ReHLine: Regularized Composite ReLU-ReHU
Loss Minimization with Linear Computation and Linear Convergence", NeurIPS) is a sum over
samples of ReLU pieces ``ReLU(u_li z_i + v_li)`` and ReHU pieces ``ReHU_tau_hi(s_hi z_i +
t_hi)`` of the margin ``z_i = x_i^T beta``. :func:`pack_pieces` lays each sample's
parameters side by side, so that one sample's scalars share a cache line:

* ``PL`` (n, 1 + 3 L), row i = ``||x_i||^2, u_1i, v_1i, 1/(u_1i^2 ||x_i||^2), ..., u_Li,
  v_Li, 1/(u_Li^2 ||x_i||^2)`` (an inverse curvature is 0 for a constant piece,
  ``u_li ||x_i|| = 0``);
* ``PH`` (n, 1 + 4 H), row i = ``||x_i||^2, s_1i, t_1i, tau_1i, 1/(s_1i^2 ||x_i||^2 + 1),
  ...`` (``tau`` may be ``inf``).

The coordinate-descent kernels (:mod:`solvers.rehline`, :mod:`solvers.rehline_blocks`)
and the certificate (:mod:`solvers.plq_certificate`) read these layouts; ``_rehu`` is the
ReHU function the certificate evaluates. ``@njit(cache=True)``; dense or CSR ``X``
dispatched at compile time (the overload below, :mod:`solvers.linalg`'s conventions).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload


@njit(cache=True, inline="always")
def _rehu(w, tau):
    # c (w - c/2) with c = clip(w, 0, tau): 0, w^2/2 and tau (w - tau/2) on the three
    # pieces (tau = inf included), without branches (the certificate pass mispredicted
    # the sign of w about half the time on Huber losses: twice as slow).
    c = min(max(w, 0.0), tau)
    return c * (w - 0.5 * c)


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


@njit(cache=True, nogil=True)
def pack_pieces(X, U, V, S, T, tau, PL, PH):
    """Fill the per-sample parameter rows ``PL`` (n, 1 + 3L) and ``PH`` (n, 1 + 4H).

    Layouts of :func:`solvers.rehline.epoch`: ``PL`` row i holds ``||x_i||^2`` then ``u,
    v, 1/(u^2 ||x_i||^2)`` per ReLU piece (0 for a constant piece); ``PH`` row i holds
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
