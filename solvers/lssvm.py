"""LS-SVM kernels: Gaussian kernel columns, products with Q, and the three solvers.

The least-squares SVM (Suykens & Vandewalle 1999) trains by solving
``[[Q, 1], [1^T, 0]] [alpha; b] = [y; 0]`` with ``Q = K + I / C`` and the Gaussian kernel
``K_ij = exp(-||x_i - x_j||^2 / (2 sigma2))`` (ALGORITHMS.md E.1). Three solvers advance in
chunks, one record row per iteration (the kernel contract of :mod:`solvers.fw`):

* :func:`cg_two_advance`: Suykens et al. (1999), two conjugate-gradient runs ``Q eta = y``
  and ``Q nu = 1`` in lock-step, ``b = 1^T eta / 1^T nu``, ``alpha = eta - b nu`` (E.3);
* :func:`cg_reduced_advance`: Chu, Ong & Keerthi (2005), one CG on the SPD system of order
  ``n - 1`` obtained by eliminating ``alpha_n`` and ``b``; one product with ``Q`` per
  iteration (E.4);
* :func:`smo_advance`: Keerthi & Shevade (2003), SMO on the dual ``min 1/2 a^T Q a - y^T a``
  s.t. ``1^T a = 0``: the maximal violating pair (or the second-order choice of ``j``), an
  exact step along ``e_i - e_j`` and ``F = y - Q alpha`` kept up to date (E.5).

Certificate (E.6): with ``F = y - Q alpha`` and ``1^T alpha = 0``, the dual objective
``D = y^T alpha - alpha^T (y - F) / 2`` and the duality gap ``P - D = C/2 sum (F_i - b)^2``
at ``b = mean(F)``, both O(n) given ``F``; each row records ``(P - D) / D`` (the paper's
stopping rule ``P - D <= tol D``).

Kernel evaluations (column ``kernel_evals``) are counted as the paper's work measure,
whatever the cache serves: ``n (n + 1) / 2`` per product with the symmetric ``Q`` (the
symmetric half), ``2 n`` per SMO iteration (its two kernel columns). The column
``kernel_computed`` counts the kernel values the iterations actually computed: 0 with the
matrix cached (it is formed at set-up, outside the run), ``n (n + 1) / 2`` per product on
the fly, ``n`` per column an SMO step fetches that is not in its LRU cache. Kernel values come
either from a cached matrix or are computed on the fly in exactly the same arithmetic, so
both give identical iterates.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from solvers.gram_cache import lru_slot
from solvers.linalg import n_rows, row_axpy, row_dot_long
from solvers.tags import (
    BASE_COLUMNS,
    PAIR_CODES,  # noqa: F401  (re-exported)
    STATUS_CONVERGED,
    STATUS_MAX_ITER,
    STATUS_NONFINITE,
    STATUS_RUNNING,
    STEP_CG,
    STEP_NONE,
    STEP_SMO,
)

# Integer state.
I_K = 0  # iteration
I_STOP_AT = 1  # record, do not step, at this iteration
I_STATUS = 2
I_KEVALS = 3  # kernel evaluations (the paper's count)
I_CACHED = 4  # 1: the kernel matrix is in ``Kc``; 0: computed on the fly
I_PAIR = 5  # SMO: 0 maximal violating pair, 1 second-order choice of j
I_KCOMPUTED = 6  # kernel values actually computed by the iterations (cache misses)
I_ABORT = 7  # set from another thread: a product on the fly returns early (pause, stop)
N_ISTATE = 8

# Float state.
F_INVC = 0  # 1 / C
F_INV2S = 1  # 1 / (2 sigma2)
F_TOL = 2  # relative-gap tolerance
F_RR1 = 3  # CG: r^T r of the (first) system
F_RR2 = 4  # CG: r^T r of the second system (two-system CG)
F_FN = 5  # reduced CG: F_n = (y - Q alpha)_n, which the reduced residual leaves out
N_FSTATE = 6

# Record columns.
COLUMNS = (
    *BASE_COLUMNS,
    "kernel_evals",
    "dual_objective",
    "primal_objective",
    "kernel_computed",
)


@njit(cache=True)
def kernel_column_from(X, sq, inv2s, j, start, xj, out):
    """``out[i] = exp(-||x_i - x_j||^2 inv2s)`` for the rows ``i >= start`` (one pass over
    those rows of ``X``); ``xj`` is a zeroed scratch vector of length p, zero on return."""
    row_axpy(X, j, 1.0, xj)
    for i in range(start, n_rows(X)):
        d = sq[i] + sq[j] - 2.0 * row_dot_long(X, i, xj)
        out[i] = math.exp(-(d if d > 0.0 else 0.0) * inv2s)
    for t in range(xj.shape[0]):
        xj[t] = 0.0


@njit(cache=True)
def kernel_column(X, sq, inv2s, j, xj, out):
    """The whole kernel column j into ``out`` (see :func:`kernel_column_from`)."""
    kernel_column_from(X, sq, inv2s, j, np.int64(0), xj, out)  # (np.int64: one compile)


@njit(cache=True, nogil=True)
def gram(X, sq, inv2s, xj, K):
    """The kernel matrix into ``K`` (n, n), column by column (row j holds column j);
    ``xj`` is zeroed scratch of length p."""
    for j in range(n_rows(X)):
        kernel_column(X, sq, inv2s, j, xj, K[j])


@njit(cache=True, nogil=True)
def kernel_times(Xq, sqq, X, sq, inv2s, alpha, xq, out):
    """``out[q] = sum_i alpha_i exp(-||xq_q - x_i||^2 inv2s)`` for every row of ``Xq``:
    predictions, ``K alpha`` (``Xq = X``) and the dashboard's decision grid, without any
    temporary larger than a row (dense or CSR ``Xq`` and ``X``; ``xq`` zeroed scratch of
    length p, zero on return; ``sqq``, ``sq`` the rows' squared norms)."""
    for q in range(n_rows(Xq)):
        row_axpy(Xq, q, 1.0, xq)
        acc = 0.0
        for i in range(n_rows(X)):
            if alpha[i] != 0.0:
                d = sqq[q] + sq[i] - 2.0 * row_dot_long(X, i, xq)
                acc += alpha[i] * math.exp(-(d if d > 0.0 else 0.0) * inv2s)
        out[q] = acc
        for t in range(xq.shape[0]):
            xq[t] = 0.0


@njit(cache=True)
def _column(X, sq, Kc, istate, fstate, j, xj, col):
    """Column j of K (a view of the cache, or computed into ``col``)."""
    if istate[I_CACHED]:
        return Kc[j]
    kernel_column(X, sq, fstate[F_INV2S], j, xj, col)
    istate[I_KCOMPUTED] += col.shape[0]
    return col


@njit(cache=True)
def lru_column(X, sq, inv2s, j, xj, now, cols, slot_of, atom_of, stamp, istate):
    """Slot of ``cols`` holding kernel column ``j``: computed on a miss into the least
    recently used slot (LIBSVM's policy, Chang & Lin 2011; :func:`solvers.gram_cache.lru_slot`),
    stamped ``now`` either way."""
    slot, miss = lru_slot(j, now, slot_of, atom_of, stamp)
    if miss:
        kernel_column(X, sq, inv2s, j, xj, cols[slot])
        istate[I_KCOMPUTED] += cols.shape[1]
    return slot


@njit(cache=True)
def q_product(X, sq, Kc, istate, fstate, v, out, xj, col):
    """``out = Q v = K v + v / C`` from the upper triangle of K only: entry ``K_ij``,
    ``j >= i``, adds to both ``out_i`` and ``out_j``, so a product on the fly computes the
    ``n (n + 1) / 2`` entries it counts, and the cached matrix is read in the same order
    (identical results either way). Returns False, with ``out`` incomplete, when
    ``I_ABORT`` is set during a product on the fly (it is read once per row: a product of
    n = 5e4 on the fly takes minutes, and pause and stop must not wait for it)."""
    n = v.shape[0]
    invc = fstate[F_INVC]
    cached = istate[I_CACHED] != 0
    for i in range(n):
        out[i] = 0.0
    for i in range(n):
        if cached:
            k = Kc[i]
        else:
            if istate[I_ABORT] != 0:
                return False
            kernel_column_from(X, sq, fstate[F_INV2S], i, i, xj, col)
            istate[I_KCOMPUTED] += n - i
            k = col
        vi = v[i]
        acc = k[i] * vi
        for j in range(i + 1, n):
            kij = k[j]
            acc += kij * v[j]
            out[j] += kij * vi
        out[i] += acc
    for i in range(n):
        out[i] += v[i] * invc
    istate[I_KEVALS] += n * (n + 1) // 2
    return True


@njit(cache=True)
def gap_terms(y, alpha, F, invc):
    """``(D, P, (P - D) / D)`` from ``F = y - Q alpha`` (any constant shift of F) with
    ``1^T alpha = 0`` and ``b = mean(F)``; the relative gap is inf while ``D <= 0``."""
    n = y.shape[0]
    mean = 0.0
    for i in range(n):
        mean += F[i]
    mean /= n
    gap = 0.0
    ya = 0.0
    aqa = 0.0
    for i in range(n):
        gap += (F[i] - mean) ** 2
        ya += y[i] * alpha[i]
        aqa += alpha[i] * (y[i] - F[i])
    gap *= 0.5 / invc
    dual = ya - 0.5 * aqa
    rel = gap / dual if dual > 0.0 else np.inf
    return dual, dual + gap, rel


@njit(cache=True)
def certificate_cost(y, alpha, F, invc, repeats):
    """Run the per-row evaluation (:func:`gap_terms` and the active count) ``repeats``
    times: the caller times it to discount the evaluation from solver time."""
    acc = 0.0
    for _ in range(repeats):
        dual, _, _ = gap_terms(y, alpha, F, invc)
        acc += dual + _nonzeros(alpha)
    return acc


@njit(cache=True)
def _open_row(rec, row, y, alpha, F, istate, fstate):
    """Record the current iterate in ``rec[row]`` (k, D, gap, counters; no step yet) and
    decide: True when the run ends at this row (converged, non-finite, or the stop)."""
    dual, primal, rel = gap_terms(y, alpha, F, fstate[F_INVC])
    rec[row, 0] = istate[I_K]
    rec[row, 1] = dual
    rec[row, 2] = rel
    rec[row, 3] = 0.0
    rec[row, 4] = STEP_NONE
    rec[row, 5] = _nonzeros(alpha)
    rec[row, 6] = istate[I_KEVALS]  # spent to reach this iterate
    rec[row, 7] = dual
    rec[row, 8] = primal
    rec[row, 9] = istate[I_KCOMPUTED]
    if not (math.isfinite(dual) and math.isfinite(primal)):
        istate[I_STATUS] = STATUS_NONFINITE
        return True
    if rel <= fstate[F_TOL]:
        istate[I_STATUS] = STATUS_CONVERGED
        return True
    if istate[I_K] >= istate[I_STOP_AT]:
        istate[I_STATUS] = STATUS_MAX_ITER
        return True
    return False


@njit(cache=True)
def _close_row(rec, row, step, kind, istate):
    """The step taken from the row's iterate; the next iterate is the current one."""
    rec[row, 3] = step
    rec[row, 4] = kind
    istate[I_K] += 1


@njit(cache=True)
def _aborted(row, istate):
    """An interrupted product: drop the row opened (no step was taken; the next call opens
    it again at the same iterate) and return the rows before it, status running."""
    istate[I_STATUS] = STATUS_RUNNING
    return row


@njit(cache=True)
def _nonzeros(a):
    c = 0
    for i in range(a.shape[0]):
        if a[i] != 0.0:
            c += 1
    return c


@njit(cache=True)
def _combine(eta, nu, r1, r2, alpha, F):
    """``alpha = eta - b nu`` and ``F = y - Q alpha = r1 - b r2 + b`` with
    ``b = 1^T eta / 1^T nu`` (0 at the start, where both are 0); returns ``b``."""
    s1 = 0.0
    s2 = 0.0
    for i in range(eta.shape[0]):
        s1 += eta[i]
        s2 += nu[i]
    b = s1 / s2 if s2 != 0.0 else 0.0
    for i in range(eta.shape[0]):
        alpha[i] = eta[i] - b * nu[i]
        F[i] = r1[i] - b * r2[i] + b
    return b


@njit(cache=True, nogil=True)
def cg_two_advance(
    X, sq, Kc, xj, y, eta, nu, r1, r2, p1, p2, q1, q2, alpha, F, istate, fstate, rec
):
    """Two-system CG (Suykens et al. 1999) in lock-step; see the module docstring.

    State: ``eta, nu`` (iterates), ``r1 = y - Q eta``, ``r2 = 1 - Q nu`` (residuals),
    ``p1, p2`` (directions), ``q1, q2`` (scratch for ``Q p``); ``alpha`` and ``F`` hold
    the combined iterate and ``y - Q alpha``. Start: zeros, ``r1 = p1 = y``,
    ``r2 = p2 = 1``, ``F_RR1 = y^T y``, ``F_RR2 = n``. Returns rows written.
    """
    n = y.shape[0]
    col = np.empty(n)
    for row in range(rec.shape[0]):
        _combine(eta, nu, r1, r2, alpha, F)
        if _open_row(rec, row, y, alpha, F, istate, fstate):
            return row + 1
        if not (
            q_product(X, sq, Kc, istate, fstate, p1, q1, xj, col)
            and q_product(X, sq, Kc, istate, fstate, p2, q2, xj, col)
        ):
            return _aborted(row, istate)
        pq1 = 0.0
        pq2 = 0.0
        for i in range(n):
            pq1 += p1[i] * q1[i]
            pq2 += p2[i] * q2[i]
        a1 = fstate[F_RR1] / pq1
        a2 = fstate[F_RR2] / pq2
        rr1 = 0.0
        rr2 = 0.0
        for i in range(n):
            eta[i] += a1 * p1[i]
            nu[i] += a2 * p2[i]
            r1[i] -= a1 * q1[i]
            r2[i] -= a2 * q2[i]
            rr1 += r1[i] * r1[i]
            rr2 += r2[i] * r2[i]
        beta1 = rr1 / fstate[F_RR1]
        beta2 = rr2 / fstate[F_RR2]
        for i in range(n):
            p1[i] = r1[i] + beta1 * p1[i]
            p2[i] = r2[i] + beta2 * p2[i]
        fstate[F_RR1] = rr1
        fstate[F_RR2] = rr2
        # ||alpha_{k+1} - alpha_k||, from the new b.
        s1 = 0.0
        s2 = 0.0
        for i in range(n):
            s1 += eta[i]
            s2 += nu[i]
        b = s1 / s2 if s2 != 0.0 else 0.0
        step = 0.0
        for i in range(n):
            step += (eta[i] - b * nu[i] - alpha[i]) ** 2
        _close_row(rec, row, math.sqrt(step), np.int64(STEP_CG), istate)
    istate[I_STATUS] = STATUS_RUNNING
    return rec.shape[0]


@njit(cache=True)
def reduced_product(X, sq, Kc, istate, fstate, v, vbar, u, out, xj, col):
    """``out = Q~ v`` (order n - 1) without forming Q~: ``vbar = (v; -1^T v)``,
    ``u = Q vbar``, ``out = u[:n-1] - u[n-1]`` (ALGORITHMS.md E.4); one product with Q."""
    m = v.shape[0]
    s = 0.0
    for i in range(m):
        vbar[i] = v[i]
        s += v[i]
    vbar[m] = -s
    if not q_product(X, sq, Kc, istate, fstate, vbar, u, xj, col):
        return False
    for i in range(m):
        out[i] = u[i] - u[m]
    return True


@njit(cache=True, nogil=True)
def cg_reduced_advance(X, sq, Kc, xj, y, at, r, p, q, vbar, u, alpha, F, istate, fstate, rec):
    """Reduced CG (Chu, Ong & Keerthi 2005) on ``Q~ at = y~ - y_n 1``; see the module
    docstring. State: ``at`` (n - 1), residual ``r``, direction ``p``, scratch ``q``
    (n - 1), ``vbar`` and ``u`` (n); ``alpha = (at; -1^T at)`` and ``F = y - Q alpha`` are
    outputs: the reduced residual is ``F_i - F_n`` (i < n), and ``F_FN`` tracks ``F_n``
    (so the bias ``mean(F)`` is known without another product). Start: ``at = 0``,
    ``r = p = y~ - y_n 1``, ``F_RR1 = r^T r``, ``F_FN = y_n``. Returns rows written."""
    n = y.shape[0]
    m = n - 1
    col = np.empty(n)
    for row in range(rec.shape[0]):
        s = 0.0
        fn = fstate[F_FN]
        for i in range(m):
            alpha[i] = at[i]
            F[i] = r[i] + fn
            s += at[i]
        alpha[m] = -s
        F[m] = fn
        if _open_row(rec, row, y, alpha, F, istate, fstate):
            return row + 1
        if not reduced_product(X, sq, Kc, istate, fstate, p, vbar, u, q, xj, col):
            return _aborted(row, istate)
        pq = 0.0
        for i in range(m):
            pq += p[i] * q[i]
        a = fstate[F_RR1] / pq
        rr = 0.0
        sp = 0.0
        # alpha moves by a (p; -1^T p), so Q alpha by a u: keeps F_n for the bias.
        fstate[F_FN] -= a * u[m]
        for i in range(m):
            at[i] += a * p[i]
            r[i] -= a * q[i]
            rr += r[i] * r[i]
            sp += p[i]
        # ||alpha_{k+1} - alpha_k|| = |a| ||(p; -1^T p)||.
        pp = sp * sp
        for i in range(m):
            pp += p[i] * p[i]
        beta = rr / fstate[F_RR1]
        for i in range(m):
            p[i] = r[i] + beta * p[i]
        fstate[F_RR1] = rr
        step = abs(a) * math.sqrt(pp)
        _close_row(rec, row, step, np.int64(STEP_CG), istate)
    istate[I_STATUS] = STATUS_RUNNING
    return rec.shape[0]


@njit(cache=True, nogil=True)
def smo_advance(
    X, sq, Kc, xj, y, alpha, F, ci, cj, cols, slot_of, atom_of, stamp, istate, fstate, rec
):
    """SMO for the LS-SVM dual (Keerthi & Shevade 2003); see the module docstring.

    State: ``alpha`` and ``F = y - Q alpha`` (start: 0 and y); ``ci, cj`` scratch for two
    kernel columns. Pair: ``i = argmax F``; ``j = argmin F`` (``I_PAIR`` = 0) or
    ``j = argmax_{F_k < F_i} (F_i - F_k)^2 / eta_ik`` (1, the second-order choice). Step
    ``t = (F_i - F_j) / eta_ij``, ``eta_ij = K_ii + K_jj - 2 K_ij + 2 / C``. Returns rows
    written. Without a cached matrix, columns come from the LRU cache ``cols, slot_of,
    atom_of, stamp`` (:func:`lru_column`) when it has at least two slots, and are
    recomputed otherwise."""
    n = y.shape[0]
    invc = fstate[F_INVC]
    lru = istate[I_CACHED] == 0 and cols.shape[0] >= 2
    for row in range(rec.shape[0]):
        if _open_row(rec, row, y, alpha, F, istate, fstate):
            return row + 1
        k = istate[I_K]
        i = np.int64(0)  # (np.int64: no Literal-typed helper calls)
        for t in range(1, n):
            if F[t] > F[i]:
                i = t
        if lru:
            ki = cols[
                lru_column(
                    X, sq, fstate[F_INV2S], i, xj, 2 * k + 1, cols, slot_of, atom_of, stamp, istate
                )
            ]
        else:
            ki = _column(X, sq, Kc, istate, fstate, i, xj, ci)
        j = np.int64(-1)
        if istate[I_PAIR] == 0:
            j = np.int64(0)
            for t in range(1, n):
                if F[t] < F[j]:
                    j = t
        else:
            best = -1.0
            for t in range(n):
                if F[t] < F[i]:
                    eta = ki[i] + 1.0 - 2.0 * ki[t] + 2.0 * invc  # K_tt = 1 (Gaussian)
                    gain = (F[i] - F[t]) ** 2 / eta
                    if gain > best:
                        best = gain
                        j = t
        if j < 0 or j == i:  # every F equal: optimal (the gap is 0 already)
            istate[I_STATUS] = STATUS_CONVERGED
            return row + 1
        if lru:
            kj = cols[
                lru_column(
                    X, sq, fstate[F_INV2S], j, xj, 2 * k + 2, cols, slot_of, atom_of, stamp, istate
                )
            ]
        else:
            kj = _column(X, sq, Kc, istate, fstate, j, xj, cj)
        eta = ki[i] + kj[j] - 2.0 * ki[j] + 2.0 * invc
        step = (F[i] - F[j]) / eta
        alpha[i] += step
        alpha[j] -= step
        for t in range(n):
            F[t] -= step * (ki[t] - kj[t])
        F[i] -= step * invc
        F[j] += step * invc
        istate[I_KEVALS] += 2 * n
        _close_row(rec, row, abs(step) * math.sqrt(2.0), np.int64(STEP_SMO), istate)
    istate[I_STATUS] = STATUS_RUNNING
    return rec.shape[0]
