"""The :class:`Dataset` container, its validation and its read-only storage.

Every dataset reaches the rest of ermviz as a :class:`Dataset`: a design matrix ``X`` of
shape ``(n, p)`` (dense C-contiguous ``float64`` or canonical CSR), a target ``y`` of shape
``(n,)`` (``-1.0``/``+1.0`` for binary tasks, raw values for regression) and, when the data
comes with one, a test split. Its constructor checks exactly that.

Storage follows one rule: a sparse file stays CSR (``float64``, sorted indices, duplicates
summed, explicit zeros dropped) unless more than half of its entries are non-zero
(``nnz > DENSE_MIN_DENSITY * n * p``) and the dense matrix is small enough
(``n * p <= DENSE_MAX_ENTRIES``, 5e7 entries = 400 MB); then it becomes a dense C-contiguous
``float64`` array. The test split always uses the training part's storage. Datasets made
here (:func:`_make_dataset`) have **read-only** arrays (``flags.writeable = False``; for
CSR: ``data``, ``indices`` and ``indptr``), because loaded datasets are shared through a
cache: copy before changing them (``X = ds.X.copy()``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ermviz.errors import DataError

#: Learning tasks a dataset can carry.
TASKS: tuple[str, ...] = ("binary", "regression")

#: A sparse file becomes dense when its density exceeds this ...
DENSE_MIN_DENSITY: float = 0.5
#: ... and the dense matrix has at most this many entries (float64: 400 MB).
DENSE_MAX_ENTRIES: int = 50_000_000


class DataWarning(UserWarning):
    """A dataset loaded, but something about it deserves a look (row count, hash, split)."""


# ---------------------------------------------------------------------------------------
# The Dataset container


Matrix = np.ndarray | sp.csr_matrix


@dataclass(frozen=True, eq=False, repr=False)
class Dataset:
    """A learning problem's data: features, targets and an optional test split.

    Parameters
    ----------
    name : str
        Catalog or bundled name, or the file name for user files.
    X : ndarray of shape (n, p) or scipy.sparse.csr_matrix of shape (n, p)
        Features, ``float64``; dense arrays are C-contiguous, CSR matrices canonical
        (sorted indices, no duplicates).
    y : ndarray of shape (n,)
        Targets, ``float64``; exactly ``-1.0`` or ``+1.0`` when ``task == "binary"``.
    task : {"binary", "regression"}
        The learning task.
    source : str
        Path of the file read, or ``"bundled:<name>"``.
    X_test : ndarray or csr_matrix of shape (n_test, p), optional
        Test features, same storage as ``X``.
    y_test : ndarray of shape (n_test,), optional
        Test targets, coded like ``y``.
    description : str
        One or two sentences about the data and what was done to it.

    Notes
    -----
    Datasets made by this module have read-only arrays and are shared through an
    in-memory cache: copy an array before modifying it.
    """

    name: str
    X: Matrix
    y: np.ndarray
    task: str
    source: str
    X_test: Matrix | None = None
    y_test: np.ndarray | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise DataError(f"dataset {self.name!r}: task {self.task!r} is not one of {TASKS}")
        _check_matrix(self.name, "X", self.X)
        _check_target(self.name, "y", self.y, self.X.shape[0], self.task)
        if (self.X_test is None) != (self.y_test is None):
            raise DataError(
                f"dataset {self.name!r}: X_test and y_test must be given together (or neither)"
            )
        if self.X_test is not None:
            _check_matrix(self.name, "X_test", self.X_test)
            if self.X_test.shape[1] != self.X.shape[1]:
                raise DataError(
                    f"dataset {self.name!r}: X_test has {self.X_test.shape[1]} features but X "
                    f"has {self.X.shape[1]}; both parts must share the feature space"
                )
            _check_target(self.name, "y_test", self.y_test, self.X_test.shape[0], self.task)

    @property
    def n(self) -> int:
        """Number of training rows."""
        return int(self.X.shape[0])

    @property
    def p(self) -> int:
        """Number of features (columns of ``X``)."""
        return int(self.X.shape[1])

    @property
    def is_sparse(self) -> bool:
        """True when ``X`` is a CSR matrix, False when it is a dense array."""
        return sp.issparse(self.X)

    @property
    def n_test(self) -> int:
        """Number of test rows (0 without a test split)."""
        return 0 if self.X_test is None else int(self.X_test.shape[0])

    def __repr__(self) -> str:
        storage = f"CSR nnz={self.X.nnz}" if self.is_sparse else "dense"
        test = f", n_test={self.n_test}" if self.X_test is not None else ""
        return (
            f"Dataset(name={self.name!r}, task={self.task!r}, n={self.n}, p={self.p}, "
            f"{storage}{test}, source={self.source!r})"
        )


def _check_matrix(name: str, what: str, X: Any) -> None:
    if sp.issparse(X):
        if not isinstance(X, sp.csr_matrix) or X.dtype != np.float64:
            raise DataError(
                f"dataset {name!r}: sparse {what} must be a float64 scipy.sparse.csr_matrix, "
                f"got {type(X).__name__} of {X.dtype}"
            )
    elif not (isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype == np.float64):
        raise DataError(
            f"dataset {name!r}: {what} must be a 2-D float64 array or a CSR matrix, "
            f"got {type(X).__name__} {getattr(X, 'shape', '')} {getattr(X, 'dtype', '')}"
        )


def _check_target(name: str, what: str, y: Any, n: int, task: str) -> None:
    if not (isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype == np.float64):
        raise DataError(f"dataset {name!r}: {what} must be a 1-D float64 array")
    if y.shape[0] != n:
        raise DataError(f"dataset {name!r}: {what} has {y.shape[0]} entries for {n} rows")
    if task == "binary" and not np.all((y == 1.0) | (y == -1.0)):
        raise DataError(f"dataset {name!r}: binary {what} must hold only -1.0 and +1.0")


# ---------------------------------------------------------------------------------------
# Storage


def _canonical_csr(X: Any) -> sp.csr_matrix:
    X = sp.csr_matrix(X, dtype=np.float64)
    if not (X.data.flags.writeable and X.indices.flags.writeable and X.indptr.flags.writeable):
        X = X.copy()  # the canonicalisation below works in place
    X.sum_duplicates()  # also sorts the indices
    X.eliminate_zeros()  # explicit ":0" entries carry no information
    X.sort_indices()
    return X


def _wants_dense(X: sp.csr_matrix) -> bool:
    entries = X.shape[0] * X.shape[1]
    return entries <= DENSE_MAX_ENTRIES and X.nnz > DENSE_MIN_DENSITY * entries


def _store(X: Any, dense: bool) -> Matrix:
    """Return X in the chosen storage, read-only (X must be an array made by this module)."""
    if dense:
        out = np.ascontiguousarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
        out.flags.writeable = False
        return out
    out = _canonical_csr(X)
    for array in (out.data, out.indices, out.indptr):
        array.flags.writeable = False
    return out


def _frozen_vector(y: np.ndarray) -> np.ndarray:
    out = np.array(y, dtype=np.float64, copy=True)
    out.flags.writeable = False
    return out


def _make_dataset(
    name: str,
    X: Any,
    y: np.ndarray,
    task: str,
    source: str,
    description: str,
    X_test: Any = None,
    y_test: np.ndarray | None = None,
    dense: bool | None = None,
) -> Dataset:
    if dense is None:
        dense = not sp.issparse(X)
    return Dataset(
        name=name,
        X=_store(X, dense),
        y=_frozen_vector(y),
        task=task,
        source=source,
        X_test=None if X_test is None else _store(X_test, dense),
        y_test=None if y_test is None else _frozen_vector(y_test),
        description=description,
    )
