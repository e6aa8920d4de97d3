"""The LS-SVM family's problem ``lssvm``: least-squares SVM with a Gaussian kernel.

Suykens & Vandewalle (1999), "Least squares support vector machine classifiers": with
``Q = K + I / C`` and ``K_ij = exp(-||x_i - x_j||^2 / (2 sigma2))``, training solves
``[[Q, 1], [1^T, 0]] [alpha; b] = [y; 0]`` (ALGORITHMS.md E.1). The variable of the
methods is ``alpha`` (n,) with ``1^T alpha = 0``; the bias is the ``b`` that minimizes
the duality gap, ``b = mean(y - Q alpha)`` (E.6), exact at the optimum.

Measures (the paper's sign convention, E.6): the dual objective
``D(alpha) = y^T alpha - alpha^T Q alpha / 2`` (positive near the optimum, equal to the
optimal primal value there) and the relative duality gap ``(P - D) / D`` with
``P - D = C/2 sum (F_i - b)^2``, ``F = y - Q alpha``; Chu, Ong & Keerthi stop at
``P - D <= tol D``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from ermviz.base import Problem
from ermviz.errors import DataError
from ermviz.families.common import binary_metrics, check_binary
from ermviz.families.lazy import kernel_module
from ermviz.geometry import DecisionPlane
from ermviz.settings import Setting

lk = kernel_module("solvers.lssvm", globals())
linalg = kernel_module("solvers.linalg", globals())

#: Rows sampled (seeded) for the median-distance heuristic of ``sigma2``.
MEDIAN_SAMPLE = 1000
#: Biases remembered per problem (one per run of a race is plenty).
MAX_REMEMBERED = 16


def _key(alpha: np.ndarray) -> bytes:
    """A key for ``alpha``'s exact values (a digest: alpha may have 10^5 entries)."""
    import hashlib

    a = np.ascontiguousarray(alpha, dtype=np.float64)
    return hashlib.blake2b(a.tobytes(), digest_size=16).digest()


def _sq_norms(X: Any) -> np.ndarray:
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def _inner(A: Any, B: Any) -> np.ndarray:
    G = A @ B.T
    return G.toarray() if sp.issparse(G) else np.asarray(G)


def median_sigma2(X: Any, seed: int = 0) -> float:
    """The median-distance heuristic: ``sigma2`` = the median of ``||x_i - x_j||^2`` over
    pairs of up to :data:`MEDIAN_SAMPLE` seeded rows, so ``sigma`` is the median distance
    (Schölkopf & Smola 2002; Gretton et al. 2012)."""
    n = X.shape[0]
    rows = np.random.default_rng(seed).permutation(n)[: min(n, MEDIAN_SAMPLE)]
    S = X[np.sort(rows)]
    d = (
        _sq_norms(S)[:, None]
        + _sq_norms(S)[None, :]
        - 2.0 * np.asarray((S @ S.T).todense() if sp.issparse(S) else S @ S.T)
    )
    iu = np.triu_indices(S.shape[0], k=1)
    med = float(np.median(np.maximum(d[iu], 0.0))) if iu[0].size else 0.0
    return med if med > 0.0 else 1.0


@dataclass
class LssvmProblem(Problem):
    """LS-SVM, Gaussian kernel (module docstring); variable ``alpha`` of shape (n,)."""

    name: ClassVar[str] = "lssvm"
    title: ClassVar[str] = "LS-SVM with a Gaussian kernel (classification or regression)"
    certificate_kind: ClassVar[str] = "rel_duality_gap"
    default_race: ClassVar[tuple[tuple[str, str], ...]] = (
        ("cg-reduced", "cg"),
        ("cg-two-system", "cg"),
        ("smo", "smo"),
    )
    work_axes: ClassVar[tuple[tuple[str, str], ...]] = (
        ("kernel_evals", "kernel evaluations"),
        ("kernel_computed", "kernel values computed"),
    )
    settings_decl: ClassVar[tuple[Setting, ...]] = (
        Setting("C", "float", 1.0, "regularization C (Q = K + I / C)", low=0.0, low_open=True),
        Setting(
            "sigma2",
            "float",
            0.0,
            "Gaussian kernel width sigma^2 in exp(-||x - x'||^2 / (2 sigma^2)); 0 = the "
            "median-distance heuristic (the value used is reported as the setting)",
            low=0.0,
        ),
        Setting(
            "task",
            "choice",
            "auto",
            "classification (labels -1/+1) or regression; auto = from the dataset",
            choices=("auto", "classification", "regression"),
        ),
        Setting(
            "kernel_cache_mb",
            "float",
            256.0,
            "the kernel matrix is precomputed when its n^2 float64 entries fit in this many "
            "MB; otherwise kernel columns are computed on the fly",
            low=0.0,
        ),
    )

    def __post_init__(self) -> None:
        ds = self.dataset
        task = self.settings["task"]
        if task == "auto":
            task = "classification" if getattr(ds, "task", "binary") == "binary" else "regression"
        if task == "classification":
            check_binary(ds, self.name)
        elif not np.all(np.isfinite(ds.y)):
            raise DataError(f"lssvm: dataset {ds.name!r} has non-finite targets")
        X = ds.X
        self.X = X.tocsr() if sp.issparse(X) else np.ascontiguousarray(X, dtype=np.float64)
        self.y = np.ascontiguousarray(ds.y, dtype=np.float64)
        self.n, self.p = self.X.shape
        if self.n < 2:
            raise DataError(f"lssvm needs at least 2 samples; {ds.name!r} has {self.n}")
        self.task = task
        self.C = float(self.settings["C"])
        if float(self.settings["sigma2"]) == 0.0:
            self.settings["sigma2"] = median_sigma2(self.X)
        self.sigma2 = float(self.settings["sigma2"])
        self.settings["task"] = task
        self.sq = np.ascontiguousarray(_sq_norms(self.X), dtype=np.float64)
        self._Xk = linalg.as_kernel_matrix(self.X)
        self._biases: dict[bytes, float] = {}
        self._gram: np.ndarray | None = None
        self._gram_lock = threading.Lock()

    # -- reference math (memory-bounded kernel sums) -----------------------------------------
    def kernel_times(self, Xq: Any, alpha: np.ndarray) -> np.ndarray:
        """``sum_i alpha_i K(x_i, xq)`` for each row ``xq`` of ``Xq`` (dense or CSR),
        computed row by row in numba (:func:`solvers.lssvm.kernel_times`): no kernel block
        is formed, so predictions on 10^5 rows against 5 x 10^4 take no extra memory."""
        Xq = Xq.tocsr() if sp.issparse(Xq) else Xq
        if Xq is self.X:
            Xk, sqq = self._Xk, self.sq
        else:
            Xk, sqq = linalg.as_kernel_matrix(Xq), np.ascontiguousarray(_sq_norms(Xq), dtype=float)
        out = np.empty(Xq.shape[0])
        alpha = np.ascontiguousarray(alpha, dtype=np.float64)
        lk.kernel_times(
            Xk, sqq, self._Xk, self.sq, 1.0 / (2.0 * self.sigma2), alpha, np.zeros(self.p), out
        )
        return out

    def kernel_matrix(self) -> np.ndarray:
        """The n x n kernel matrix K (row j = column j), formed on first use (numba,
        :func:`solvers.lssvm.gram`) and shared read-only by every solver of this problem;
        the methods form it only when it fits ``kernel_cache_mb``."""
        with self._gram_lock:
            if self._gram is None:
                K = np.empty((self.n, self.n))
                lk.gram(self._Xk, self.sq, 1.0 / (2.0 * self.sigma2), np.zeros(self.p), K)
                K.flags.writeable = False
                self._gram = K
            return self._gram

    def q_times(self, v: np.ndarray) -> np.ndarray:
        """``Q v = K v + v / C``."""
        return self.kernel_times(self.X, v) + v / self.C

    def residual(self, alpha: np.ndarray) -> np.ndarray:
        """``F = y - Q alpha`` (minus the dual gradient)."""
        return self.y - self.q_times(alpha)

    def bias(self, alpha: np.ndarray) -> float:
        """``b = mean(F)``: the bias that minimizes the duality gap at ``alpha`` (E.6).

        A solver's ``iterate()`` remembers the bias of the iterate it returns
        (:meth:`remember_bias`; the kernels keep ``F``), so reporting it and predicting
        from it cost no O(n^2) product; any other ``alpha`` is computed."""
        key = _key(alpha)
        if key in self._biases:
            return self._biases[key]
        return float(np.mean(self.residual(alpha)))

    def remember_bias(self, alpha: np.ndarray, bias: float) -> None:
        """Remember ``mean(y - Q alpha)`` for this ``alpha`` (a few most recent ones)."""
        self._biases[_key(alpha)] = float(bias)
        while len(self._biases) > MAX_REMEMBERED:
            self._biases.pop(next(iter(self._biases)))

    def objective(self, x: np.ndarray) -> float:
        """The dual objective ``D = y^T alpha - alpha^T Q alpha / 2`` (paper's sign)."""
        return float(self.y @ x - 0.5 * x @ self.q_times(x))

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """Gradient of ``D``: ``y - Q alpha``."""
        return self.residual(x)

    def primal(self, x: np.ndarray, b: float | None = None) -> float:
        """``P(w, b, xi) = ||w||^2 / 2 + C/2 ||xi||^2`` at ``w = sum alpha_i phi(x_i)``,
        ``xi = y - K alpha - b`` (default ``b``: :meth:`bias`), computed directly."""
        Ka = self.q_times(x) - x / self.C
        b = self.bias(x) if b is None else b
        xi = self.y - Ka - b
        return float(0.5 * x @ Ka + 0.5 * self.C * xi @ xi)

    def certificate(self, x: np.ndarray) -> float:
        """The relative duality gap ``(P - D) / D`` (inf while ``D <= 0``)."""
        F = self.residual(x)
        gap = 0.5 * self.C * float(np.sum((F - F.mean()) ** 2))
        dual = float(self.y @ x - 0.5 * x @ (self.y - F))
        return gap / dual if dual > 0.0 else float("inf")

    def initial_point(self) -> np.ndarray:
        return np.zeros(self.n)

    def lipschitz(self) -> float:
        """An upper bound on the largest eigenvalue of ``Q``: ``n + 1 / C`` (``K_ij <= 1``)."""
        return self.n + 1.0 / self.C

    def decision_function(self, X: Any, x: np.ndarray) -> np.ndarray:
        """``f(x) = sum_i alpha_i K(x_i, x) + b`` for the rows of ``X``."""
        return self.kernel_times(X, x) + self.bias(x)

    @classmethod
    def draws_plane(cls, n: int, p: int) -> bool:
        """Two features: the teaching view draws the classifier in the plane."""
        return p == 2

    def decision_plane(self) -> DecisionPlane | None:
        """Classification on two features: the decision function ``f`` over the plane,
        from each solver's ``(alpha, b)``, and the points sized by ``|alpha_i|``."""
        if self.p != 2 or self.task != "classification":
            return None
        points = self.X.toarray() if sp.issparse(self.X) else np.array(self.X)
        inv2s = 1.0 / (2.0 * self.sigma2)
        sq = np.einsum("ij,ij->i", points, points)

        def values(grid: np.ndarray, state: tuple[np.ndarray, float]) -> np.ndarray:
            alpha, b = state
            out = np.empty(grid.shape[0])
            sqq = np.einsum("ij,ij->i", grid, grid)
            lk.kernel_times(grid, sqq, points, sq, inv2s, alpha, np.zeros(2), out)
            return out + b

        return DecisionPlane(
            points,
            self.y.copy(),
            values,
            lambda state: np.abs(state[0]),
            title=f"LS-SVM, sigma2 = {self.sigma2:.4g}, C = {self.C:g}",
        )

    def solution_summary(self, x: np.ndarray) -> dict[str, float]:
        """The bias ``b`` and the kernel width used (``sigma2``, from the heuristic when
        the setting was 0)."""
        return {"bias": self.bias(x), "sigma2": self.sigma2}

    def test_metrics(self, x: np.ndarray) -> dict[str, float]:
        ds = self.dataset
        if getattr(ds, "X_test", None) is None:
            return {}
        f = self.decision_function(ds.X_test, x)
        if self.task == "classification":
            return binary_metrics(ds.y_test, f)
        r = ds.y_test - f
        return {"test_rmse": float(np.sqrt(np.mean(r * r))), "test_mae": float(np.mean(abs(r)))}


PROBLEMS: dict[str, type[Problem]] = {LssvmProblem.name: LssvmProblem}
