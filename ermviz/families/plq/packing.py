"""How a PLQ problem's arrays are laid out for the kernels of :mod:`solvers.rehline`.

Dense or CSR rows of ``X`` and ``A``, the per-sample loss pieces side by side, the kind of
constraint set and the schedule of the ``xi`` (constraint) block.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from ermviz.families.lazy import kernel_module

if TYPE_CHECKING:
    from ermviz.families.plq.problem import PlqProblem

kern = kernel_module("solvers.rehline", globals())
linalg = kernel_module("solvers.linalg", globals())


#: The kernels visit X row by row; a CSR matrix at least this dense is handed to them as a
#: dense C-contiguous copy. Measured (ReHLine epochs, same coordinate order, this
#: machine): phishing (density 0.44) 0.58-0.68x the CSR time, a9a (0.11) 2.4-3.0x and w8a
#: (0.04) 4.6x: a dense row costs about 0.2-0.35 of a CSR row with as many non-zeros, so
#: the crossover is near 0.3. (The loader turns a file dense only above 0.5, as storage, for every
#: method; this copy is the kernels' layout and does not change the data.)
KERNEL_DENSE_MIN_DENSITY = 0.3
#: ... and when the copy has at most this many entries (float64: 80 MB).
KERNEL_DENSE_MAX_ENTRIES = 10_000_000


def kernel_rows(X: Any) -> np.ndarray | tuple[np.ndarray, np.ndarray, np.ndarray]:
    """X as the kernels take it (:func:`solvers.linalg.as_kernel_matrix`: read-only,
    int32 CSR indices): dense when X is dense, or a CSR matrix of density >=
    :data:`KERNEL_DENSE_MIN_DENSITY` whose dense copy has at most
    :data:`KERNEL_DENSE_MAX_ENTRIES` entries; otherwise the CSR triple."""
    if not sp.issparse(X):
        return linalg.as_kernel_matrix(X)
    entries = X.shape[0] * X.shape[1]
    if entries <= KERNEL_DENSE_MAX_ENTRIES and X.nnz >= KERNEL_DENSE_MIN_DENSITY * entries:
        return linalg.as_kernel_matrix(X.toarray())
    return kernel_csr32(X)


def kernel_csr32(M: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR triple of :func:`solvers.linalg.as_kernel_matrix` (int32 indices when they
    fit: less memory traffic per row visit)."""
    return linalg.as_kernel_matrix(sp.csr_matrix(M))


#: Kernel argument types whose kernels this process has compiled or loaded already (the
#: other arguments are allocated by the solver with fixed dtypes and layouts).
LOADED_KERNEL_TYPES: set[tuple] = set()


def kernel_type_key(M: Any) -> tuple:
    """What numba's dispatch distinguishes in a kernel matrix: dense layout or CSR index
    dtypes."""
    if isinstance(M, tuple):
        return ("csr", M[0].dtype.str, M[1].dtype.str, M[2].dtype.str)
    return ("dense", M.dtype.str, M.ndim, M.flags.c_contiguous, M.flags.f_contiguous)


def pack_pieces(pb: PlqProblem, X: Any) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's per-sample parameter rows ``(PL, PH)`` (layouts in
    :func:`solvers.rehline.pack_pieces`). One sample's scalars side by side: one cache line
    per random visit, and a multiplication instead of a division per coordinate step.
    ``X`` is the kernel matrix (its squared row norms are computed here, in the set-up).
    """
    PL = np.empty((pb.n, 1 + 3 * pb.L))
    PH = np.empty((pb.n, 1 + 4 * pb.H))
    # One kernel pass instead of a dozen numpy expressions: the set-up of a small problem
    # is dominated by per-call overheads (measured on liver-disorders, 345 x 6: 12 -> 2 us).
    kern.pack_pieces(X, pb.U, pb.V, pb.S, pb.T, pb.tau, PL, PH)
    return PL, PH


def constraint_kind(A: sp.csr_matrix, b: np.ndarray) -> int:
    """How the kernels solve the block of constraint duals (``solvers.rehline.XI_*``).

    ``XI_CHAIN`` when the rows are exactly ``beta_{k+1} - beta_k >= 0`` for ``k < K``
    (the ``monotone`` constraint: isotonic regression is exact and O(K), where coordinate
    sweeps over a chain need O(K^2) sweeps); ``XI_SEPARABLE`` when every row has one
    non-zero, each in its own column (``nonnegative``: one sweep is exact); else
    ``XI_ROWS``.
    """
    K = A.shape[0]
    if K == 0:
        return kern.XI_ROWS
    A = sp.csr_matrix(A)
    counts = np.diff(A.indptr)
    if np.all(counts == 1) and np.unique(A.indices).size == K:
        return kern.XI_SEPARABLE
    if K + 1 <= A.shape[1] and np.all(counts == 2) and not np.any(b):
        rows = np.arange(K)
        cols = A.indices.reshape(K, 2)
        vals = A.data.reshape(K, 2)
        if (
            np.array_equal(cols[:, 0], rows)
            and np.array_equal(cols[:, 1], rows + 1)
            and np.all(vals[:, 0] == -1.0)
            and np.all(vals[:, 1] == 1.0)
        ):
            return kern.XI_CHAIN
    return kern.XI_ROWS


#: Interleaved xi blocks cost about this fraction of the sample visits between them.
XI_COST_SHARE = 1.0


def xi_schedule(A: sp.csr_matrix, b: np.ndarray, X: Any, every: int = 0) -> tuple[int, int, int]:
    """``(kind, every, sweeps)``: how the xi block is solved and how often it runs.

    Coordinate descent that moves the constraint duals once per epoch lets thousands of
    sample steps pull ``beta`` off the constraints between two xi updates, and converges
    very slowly when the constraints bind (ALGORITHMS.md D.5's order; measured on a9a with
    the fairness constraint: relative gap 4e-4 after 36 000 epochs). The block is
    therefore also solved after every ``every`` sample visits, with ``every`` chosen so that
    the blocks cost about :data:`XI_COST_SHARE` of the visits between them (``every`` > 0
    given: used as is).
    """
    K = A.shape[0]
    kind = constraint_kind(A, b)
    sweeps = 2
    if K == 0:
        return kind, 0, sweeps
    if every > 0:
        return kind, int(every), sweeps
    if kind == kern.XI_CHAIN:
        block = 12.0 * (K + 1)
    elif kind == kern.XI_SEPARABLE:
        block = 4.0 * K
    else:
        block = sweeps * (4.0 * A.nnz + 4.0 * K)
    if isinstance(X, tuple):
        n_rows = X[2].shape[0] - 1
        per_row = X[0].shape[0] / max(n_rows, 1)
    else:
        per_row = float(X.shape[1])
    visit = 2.0 * per_row + 10.0
    return kind, max(1, math.ceil(block / (XI_COST_SHARE * visit))), sweeps
