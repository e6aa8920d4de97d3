"""Matrix primitives shared by every kernel, for dense and CSR data alike.

A *matrix argument* of a kernel is either a C-contiguous ``float64`` array of shape
``(rows, cols)`` or a CSR triple ``(data, indices, indptr)`` with sorted column indices.
Each primitive below is an ``overload``: numba picks the dense or the sparse body from
the argument's type at compile time, so a kernel is written once and compiled (and cached)
once per storage format. Every primitive works row by row, so a kernel chooses the layout
that makes its hot loop a row loop (CSR rows for the SVM dual, CSR rows of ``X^T`` for
l1-constrained logistic regression).

CSR loops index with unsigned integers: numba adds a negative-index wraparound (compare and
select) to every access through a signed index, and in a sparse row loop those extra
operations cost more than the multiply-add (the loop ran 1.6-1.9x slower than scipy's
``XT @ r``; unsigned, it runs at scipy's speed or faster, with the same summation order).

One type per argument (compile once): numba compiles a kernel once per combination of its
arguments' types, and an array's type includes its dtype, layout *and* whether it is
writeable. Every array a kernel only reads that comes from the data (matrices, labels,
targets, weights) is therefore handed over through :func:`as_kernel_matrix` or
:func:`as_kernel_vector`: float64, C-contiguous, **read-only** (a read-only view, never a
copy of an array already in that form), CSR index arrays int32 (int64 only past 2^31 - 1
entries). What a kernel writes (its state, scratch and record buffers) is allocated
writeable by the solver. Before this rule the same kernel compiled twice whenever one
caller passed the dataset's read-only labels and another a fresh writeable array (e.g.
``fwv_advance`` four times: dense/CSR x read-only/writeable targets). Likewise a jitted
helper is never called with a literal integer constant: numba types such an argument as
``Literal[int]`` and compiles the helper once per constant; callers pass ``np.int64(c)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

__all__ = [
    "as_kernel_matrix",
    "as_kernel_vector",
    "matvec",
    "n_rows",
    "read_only",
    "rmatvec",
    "row_axpy",
    "row_dot",
    "row_dot_long",
    "row_row_dot",
]


#: CSR index arrays are int32 up to this many entries (or columns), int64 beyond.
INT32_MAX = 2**31 - 1


def read_only(a: np.ndarray) -> np.ndarray:
    """``a`` itself when read-only, else a read-only view of it (no copy)."""
    if not a.flags.writeable:
        return a
    v = a.view()
    v.flags.writeable = False
    return v


def as_kernel_vector(v, dtype=np.float64) -> np.ndarray:
    """A 1-D data array a kernel only reads (labels, targets, weights), in the one form
    kernels compile for: C-contiguous ``dtype`` (float64 by default), read-only (a view;
    copied only when the dtype or layout differs)."""
    return read_only(np.ascontiguousarray(v, dtype=dtype))


def as_kernel_matrix(M) -> np.ndarray | tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ``M`` in the form kernels take (read-only; see the module docstring).

    Parameters
    ----------
    M : ndarray of shape (rows, cols), scipy.sparse matrix, or a CSR triple
        Dense input becomes a C-contiguous float64 array (no copy if already so);
        sparse input (or a ``(data, indices, indptr)`` triple with sorted indices) becomes
        the CSR triple ``(data, indices, indptr)`` with sorted indices and summed
        duplicates, its index arrays int32 unless the matrix has more than
        :data:`INT32_MAX` entries or columns. Every array returned is read-only.
    """
    import scipy.sparse as sp

    if isinstance(M, tuple):
        data, indices, indptr = M
        return _csr_triple(data, indices, indptr, int(indices.max(initial=0)) + 1)
    if sp.issparse(M):
        if not (isinstance(M, sp.csr_matrix) and M.dtype == np.float64):
            # (A float64 csr_matrix as is: scipy caches its canonical-format check.)
            M = sp.csr_matrix(M, dtype=np.float64)
        if not M.has_canonical_format:
            M = M.copy()
            M.sum_duplicates()
        return _csr_triple(M.data, M.indices, M.indptr, M.shape[1])
    return read_only(np.ascontiguousarray(M, dtype=np.float64))


def _csr_triple(data, indices, indptr, n_cols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # int32 indices: a third less memory traffic per nonzero than int64 in every pass over
    # the data, and one index type, so one compiled kernel, for every matrix that fits.
    itype = (
        np.int32 if max(int(indptr[-1]) if len(indptr) else 0, n_cols) <= INT32_MAX else np.int64
    )
    return (
        read_only(np.ascontiguousarray(data, dtype=np.float64)),
        read_only(np.ascontiguousarray(indices, dtype=itype)),
        read_only(np.ascontiguousarray(indptr, dtype=itype)),
    )


def n_rows(M):  # pragma: no cover - dispatched by numba
    """Number of rows of a kernel matrix."""


def row_dot(M, i, v):  # pragma: no cover
    """``M[i, :] @ v``."""


def row_dot_long(M, i, v):  # pragma: no cover
    """``M[i, :] @ v`` with the sum reassociated into vector lanes, for long rows.

    A single running sum (``row_dot``) waits on the latency of each addition; over the
    long rows of ``X^T`` that, not memory or arithmetic, bounds a gradient pass. The
    lanes change the rounding of the sum (not its accuracy: partial sums are, if
    anything, more accurate), and the order depends on the CPU's vector width.
    """


def row_axpy(M, i, a, out):  # pragma: no cover
    """``out += a * M[i, :]`` in place."""


def row_row_dot(M, i, j):  # pragma: no cover
    """``M[i, :] @ M[j, :]``."""


def matvec(M, v, out):  # pragma: no cover
    """``out[:] = M @ v`` (one pass over the rows)."""


def rmatvec(M, r, out):  # pragma: no cover
    """``out[:] = M.T @ r`` (one pass over the rows, scattering)."""


def _is_csr(M) -> bool:
    return isinstance(M, types.BaseTuple)


@overload(n_rows)
def _n_rows(M):
    if _is_csr(M):
        return lambda M: M[2].shape[0] - 1
    return lambda M: M.shape[0]


def _row_dot_impl(M):
    """The implementation of row_dot and row_dot_long (they differ in jit options only)."""
    if _is_csr(M):

        def impl(M, i, v):
            data, indices, indptr = M
            acc = 0.0
            for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                acc += data[k] * v[np.uint64(indices[k])]
            return acc

        return impl

    def impl_dense(M, i, v):
        acc = 0.0
        for j in range(M.shape[1]):
            acc += M[i, j] * v[j]
        return acc

    return impl_dense


@overload(row_dot)
def _row_dot(M, i, v):
    return _row_dot_impl(M)


@overload(row_dot_long, jit_options={"fastmath": {"reassoc", "contract"}})
def _row_dot_long(M, i, v):
    return _row_dot_impl(M)


@overload(row_axpy)
def _row_axpy(M, i, a, out):
    if _is_csr(M):

        def impl(M, i, a, out):
            data, indices, indptr = M
            for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                out[np.uint64(indices[k])] += a * data[k]

        return impl

    def impl_dense(M, i, a, out):
        for j in range(M.shape[1]):
            out[j] += a * M[i, j]

    return impl_dense


@overload(row_row_dot)
def _row_row_dot(M, i, j):
    if _is_csr(M):

        def impl(M, i, j):
            # Merge of two sorted index lists.
            data, indices, indptr = M
            a, a_end = indptr[i], indptr[i + 1]
            b, b_end = indptr[j], indptr[j + 1]
            acc = 0.0
            while a < a_end and b < b_end:
                ia = indices[a]
                ib = indices[b]
                if ia == ib:
                    acc += data[a] * data[b]
                    a += 1
                    b += 1
                elif ia < ib:
                    a += 1
                else:
                    b += 1
            return acc

        return impl

    def impl_dense(M, i, j):
        acc = 0.0
        for c in range(M.shape[1]):
            acc += M[i, c] * M[j, c]
        return acc

    return impl_dense


@overload(matvec)
def _matvec(M, v, out):
    def impl(M, v, out):
        for i in range(n_rows(M)):
            out[i] = row_dot(M, i, v)

    return impl


@overload(rmatvec)
def _rmatvec(M, r, out):
    def impl(M, r, out):
        out[:] = 0.0
        for i in range(n_rows(M)):
            if r[i] != 0.0:
                row_axpy(M, i, r[i], out)

    return impl


@njit(cache=True, inline="always")
def dot(a, b):
    """``a . b`` of two dense vectors (a plain loop numba inlines)."""
    acc = 0.0
    for j in range(a.shape[0]):
        acc += a[j] * b[j]
    return acc
