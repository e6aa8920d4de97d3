"""The PLQ family's loss table: named losses in ReLU-ReHU form, presets and their values.

Dai & Qiu (2023), "ReHLine" (NeurIPS), Table 1 and ALGORITHMS.md D.1-D.2, D.6; the table
of losses is in :mod:`ermviz.families.plq.problem`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ermviz.errors import SettingError

REFERENCE = (
    "Dai & Qiu (2023), ReHLine: Regularized Composite ReLU-ReHU Loss Minimization with "
    "Linear Computation and Linear Convergence, NeurIPS"
)

CLASSIFICATION_LOSSES = ("svm", "ssvm", "svm2")
REGRESSION_LOSSES = ("lad", "svr", "qr", "huber", "mse")
NAMED_LOSSES = CLASSIFICATION_LOSSES + REGRESSION_LOSSES

#: The paper's benchmark set-ups (ALGORITHMS.md D.6): settings each preset fills in.
PRESETS: dict[str, dict[str, Any]] = {
    "svm": {"loss": "svm", "C": 1.0, "average": True},
    "ssvm": {"loss": "ssvm", "C": 1.0, "average": True},
    "fairsvm": {
        "loss": "svm",
        "C": 1.0,
        "average": True,
        "constraint": "fairness",
        "rho": 0.01,
    },
    "elasticqr": {
        "loss": "qr",
        "quantile": 0.1,
        "C": 1.0,
        "average": True,
        "l1": 1.0,
        "intercept": True,
    },
    "ridgehuber": {"loss": "huber", "kappa": 1.0, "C": 1.0, "average": True},
}


def named_loss_pieces(
    loss: str,
    y: np.ndarray,
    weights: np.ndarray,
    *,
    epsilon: float = 0.1,
    quantile: float = 0.5,
    kappa: float = 1.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """ReLU-ReHU parameters of ``weights_i * loss(y_i, z)`` (ALGORITHMS.md D.2).

    Returns ``U, V`` of shape (L, n) and ``S, T, tau`` of shape (H, n) such that
    ``weights_i * loss(y_i, z) = sum_l ReLU(U[l, i] z + V[l, i])
    + sum_h ReHU_{tau[h, i]}(S[h, i] z + T[h, i])``.
    """
    y = np.asarray(y, dtype=np.float64)
    c = np.asarray(weights, dtype=np.float64)
    n = y.shape[0]
    rc = np.sqrt(c)
    empty = np.zeros((0, n))
    U = V = S = T = tau = empty
    if loss == "svm":
        U = (-c * y)[None, :]
        V = c[None, :].copy()
    elif loss == "ssvm":
        S = (-rc * y)[None, :]
        T = rc[None, :].copy()
        tau = rc[None, :].copy()
    elif loss == "svm2":
        r2 = np.sqrt(2.0 * c)
        S = (-r2 * y)[None, :]
        T = r2[None, :].copy()
        tau = np.full((1, n), np.inf)
    elif loss == "lad":
        U = np.vstack([c, -c])
        V = np.vstack([-c * y, c * y])
    elif loss == "svr":
        U = np.vstack([c, -c])
        V = np.vstack([-c * (y + epsilon), c * (y - epsilon)])
    elif loss == "qr":
        k = quantile
        U = np.vstack([-c * k, c * (1.0 - k)])
        V = np.vstack([c * k * y, -c * (1.0 - k) * y])
    elif loss == "huber":
        S = np.vstack([-rc, rc])
        T = np.vstack([rc * y, -rc * y])
        tau = np.vstack([rc * kappa, rc * kappa])
    elif loss == "mse":
        r2 = np.sqrt(2.0 * c)
        S = np.vstack([r2, -r2])
        T = np.vstack([-r2 * y, r2 * y])
        tau = np.full((2, n), np.inf)
    else:
        raise SettingError(f"unknown loss {loss!r}; choose one of: {', '.join(NAMED_LOSSES)}")
    return U, V, S, T, tau


def relu(w: np.ndarray) -> np.ndarray:
    return np.maximum(w, 0.0)


def rehu(w: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """``ReHU_tau(w)``: 0 for ``w <= 0``, ``w^2 / 2`` up to ``tau``, linear beyond."""
    w = np.asarray(w, dtype=np.float64)
    tau = np.broadcast_to(np.asarray(tau, dtype=np.float64), w.shape)
    out = np.where(w <= 0.0, 0.0, 0.5 * w * w)
    big = w > tau
    lin = tau * (w - 0.5 * tau)
    return np.where(big, lin, out)


def plq_value(U, V, S, T, tau, z: np.ndarray) -> np.ndarray:
    """Per-sample composite loss ``sum_l ReLU(U z + V) + sum_h ReHU_tau(S z + T)``.

    ``U, V``: (L, n); ``S, T, tau``: (H, n); ``z``: (n,). Returns (n,).
    """
    out = np.zeros(z.shape[0])
    if U.shape[0]:
        out += relu(U * z + V).sum(axis=0)
    if S.shape[0]:
        out += rehu(S * z + T, tau).sum(axis=0)
    return out


def as_2d(name: str, a: Any, n: int, *, allow_inf: bool = False) -> np.ndarray:
    arr = np.atleast_2d(np.asarray(a, dtype=np.float64))
    if arr.size == 0:
        return np.zeros((0, n))
    if arr.ndim != 2 or arr.shape[1] != n:
        raise SettingError(
            f"custom loss array {name} must have shape (pieces, n={n}); got {arr.shape}"
        )
    bad = ~np.isfinite(arr) if not allow_inf else np.isnan(arr) | (arr == -np.inf)
    if bad.any():
        raise SettingError(f"custom loss array {name} has non-finite entries (NaN or inf)")
    return arr
