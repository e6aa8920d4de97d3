"""Helpers that several families' problems share: label checks, norms, metrics.

Kept apart from :mod:`ermviz.base` (the contracts) so that a family's problem module
imports only what it uses; nothing here knows any family.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ermviz.errors import DataError


def log1pexp(t: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, t)


def sigmoid(t: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -t))


def spectral_norm_sq(X: np.ndarray | sp.spmatrix) -> float:
    """Largest eigenvalue of ``X^T X`` (squared spectral norm), to ~1e-8 relative."""
    if not sp.issparse(X) and X.size <= 4_000_000:
        return float(np.linalg.norm(X, 2) ** 2)
    if min(X.shape) <= 2:
        G = (X.T @ X) if X.shape[0] >= X.shape[1] else (X @ X.T)
        G = G.toarray() if sp.issparse(G) else G
        return float(np.linalg.eigvalsh(G)[-1])
    from scipy.sparse.linalg import svds

    s = svds(X, k=1, tol=1e-10, return_singular_vectors=False, random_state=0)
    return float(s[0] ** 2)


def check_binary(ds: Any, problem: str) -> None:
    if getattr(ds, "task", "binary") != "binary":
        raise DataError(
            f"{problem} needs a binary classification dataset; {ds.name!r} is a "
            f"{ds.task} dataset (pick a binary one, e.g. a1a or wdbc)"
        )
    labels = np.unique(ds.y)
    if labels.size != 2 or not np.all(np.isin(labels, (-1.0, 1.0))):
        raise DataError(
            f"{problem} needs labels -1/+1 with both classes present; {ds.name!r} has "
            f"labels {labels[:5].tolist()}"
        )


def append_ones(X: np.ndarray | sp.csr_matrix) -> np.ndarray | sp.csr_matrix:
    """``[X, 1]``: a constant-1 column appended (CSR stays CSR, one copy of the data)."""
    if not sp.issparse(X):
        return np.hstack([X, np.ones((X.shape[0], 1))])
    X = sp.csr_matrix(X)
    n, p = X.shape
    # Each row gains one entry at its end (column p, the largest index: sorted rows stay
    # sorted). Built directly: scipy's hstack goes through COO, 5x slower on a1a.
    wide = X.nnz + n >= 2**31 or p + 1 >= 2**31
    itype = np.int64 if wide else np.int32
    indptr = X.indptr.astype(itype) + np.arange(n + 1, dtype=itype)
    ones_at = indptr[1:] - 1
    keep = np.ones(X.nnz + n, dtype=bool)
    keep[ones_at] = False
    data = np.empty(X.nnz + n)
    indices = np.empty(X.nnz + n, dtype=itype)
    data[keep], data[ones_at] = X.data, 1.0
    indices[keep], indices[ones_at] = X.indices, p
    return sp.csr_matrix((data, indices, indptr), shape=(n, p + 1))


def binary_metrics(y_true: np.ndarray, scores: np.ndarray) -> dict[str, float]:
    pred = np.where(scores >= 0.0, 1.0, -1.0)
    tp = float(np.sum((pred == 1) & (y_true == 1)))
    fp = float(np.sum((pred == 1) & (y_true == -1)))
    fn = float(np.sum((pred == -1) & (y_true == 1)))
    acc = float(np.mean(pred == y_true))
    f1 = 2 * tp / (2 * tp + fp + fn) if tp > 0 else 0.0
    return {"test_accuracy": acc, "test_f1": f1}
