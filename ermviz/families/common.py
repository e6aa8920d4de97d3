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
    ones = np.ones((X.shape[0], 1))
    if sp.issparse(X):
        return sp.hstack([X, sp.csr_matrix(ones)], format="csr")
    return np.hstack([X, ones])


def binary_metrics(y_true: np.ndarray, scores: np.ndarray) -> dict[str, float]:
    pred = np.where(scores >= 0.0, 1.0, -1.0)
    tp = float(np.sum((pred == 1) & (y_true == 1)))
    fp = float(np.sum((pred == 1) & (y_true == -1)))
    fn = float(np.sum((pred == -1) & (y_true == 1)))
    acc = float(np.mean(pred == y_true))
    f1 = 2 * tp / (2 * tp + fp + fn) if tp > 0 else 0.0
    return {"test_accuracy": acc, "test_f1": f1}
