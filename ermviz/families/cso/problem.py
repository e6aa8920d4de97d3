"""The conditional stochastic optimization family's problem ``invariant-logreg``.

Hu, Chen & He (NeurIPS 2020), problem (11) (ALGORITHMS.md F.2):
``F(x) = E_(a,b) log(1 + exp(-b E[eta | a]^T x)) + l2/2 ||x||^2`` with a noisy
observation ``eta | a ~ N(a, sigma2^2 I)`` of the feature vector ``a``. The outer
distribution is the dataset's rows (uniform): the bundled ``cso-synthetic`` generator
(F.2's model: ``a ~ N(0, I_d)``, labels from a logistic model with a hidden ``x_true``)
or any binary catalog set. ``sigma2^2 = noise_ratio * sigma1^2``, with
``sigma1^2`` = :data:`NOISE_UNIT` (1e-3) times the mean per-feature variance of the data
(1e-3 for ``cso-synthetic``) unless the setting ``sigma1_sq`` gives it.

The defaults are the calibration under which ``benchmarks/cso_table4.py`` reproduces the
paper's Appendix Table 4 (BSGD with a good inner batch below SAA at every noise ratio; at
ratio 100, m = 1 stalls on its bias while m >= 5 keep falling); the paper fixes neither
value (its noise unit and step grid were lost, ALGORITHMS.md F.2 and F.4):

* noise unit 1e-3 of the feature variance, not the whole of it (the literal reading of
  ``sigma2^2 / sigma1^2``): under the literal one the noise swamps the signal and every m
  stalls alike at ratio 100; 1e-3 is the largest of the benchmark's candidates (1, 0.1,
  0.01, 0.003, 0.001) under which the paper's pattern held;
* constant step 0.03 (:attr:`InvariantLogregProblem.suggested_step`, the step rules'
  ``gamma = 0``): the value the benchmark's grid search (seeds disjoint from the reported
  ones) picked for 12 of its 18 (ratio, m) cells, and for every m >= 5 at ratio 100 (the
  paper tuned the step per m; a default is one value for all);
* SAA's inner batch 464: the paper's m at the default noise ratio 10 (100 at ratio 1,
  1000 at ratio 100; ``saa`` in :mod:`.specs`).

Since ``E[eta | a] = a``, ``F`` is plain logistic regression on the rows (F.2): it is
evaluated on a fixed evaluation sample (F.7; ``eval_size`` seeded rows, all by default),
outside the timed region, and ``F(x*)`` comes from a damped Newton solve of that same
estimate. Certificate ``opt_gap_estimate = F(x) - F(x*)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from ermviz.base import Problem
from ermviz.errors import DataError
from ermviz.families.common import check_binary
from ermviz.families.lazy import kernel_module
from ermviz.settings import Setting

k = kernel_module("solvers.cso", globals())
linalg = kernel_module("solvers.linalg", globals())

#: Largest feature count: inner samples are dense d-vectors and Newton needs a d x d system.
MAX_FEATURES = 5000
#: The default ``sigma1^2`` as a fraction of the data's mean feature variance: the noise
#: unit of ``noise_ratio`` calibrated on the paper's Table 4 (module docstring).
NOISE_UNIT = 1e-3
#: Newton's stopping rules on the evaluation sample: ||grad F|| <= NEWTON_TOL, or a Newton
#: decrement -grad^T step (about twice F - F*) at most DECREMENT_TOL * max(1, |F|), below
#: which float64 cannot resolve a further decrease of F (the line search would stall).
NEWTON_TOL = 1e-12
DECREMENT_TOL = 1e-15


def _feature_variance(X: Any) -> float:
    """Mean over features of the per-feature variance (dense or CSR)."""
    n = X.shape[0]
    if sp.issparse(X):
        mean = np.asarray(X.mean(axis=0)).ravel()
        sq = np.asarray(X.multiply(X).sum(axis=0)).ravel() / n
    else:
        mean = X.mean(axis=0)
        sq = np.einsum("ij,ij->j", X, X) / n
    return float(np.mean(np.maximum(sq - mean * mean, 0.0)))


def logistic_newton(X: Any, y: np.ndarray, l2: float, max_iter: int = 100) -> np.ndarray:
    """The minimizer of ``mean log(1 + exp(-y_i x_i^T w)) + l2/2 ||w||^2`` by damped
    Newton (backtracking on the objective) to ``||grad|| <= NEWTON_TOL`` or a Newton
    decrement at the resolution of float64 (:data:`DECREMENT_TOL`).

    Raises DataError when no minimizer exists (separable data with ``l2 = 0``: the
    iterates run off to infinity)."""
    n, d = X.shape
    w = np.zeros(d)
    A = linalg.as_kernel_matrix(X)

    def value(v: np.ndarray) -> float:
        return float(k.logistic_value(A, y, v, l2))

    f = value(w)
    for _ in range(max_iter):
        z = np.asarray(X @ w).ravel()
        p = 0.5 * (1.0 - np.tanh(0.5 * y * z))  # sigma(-y z), without overflow
        grad = -np.asarray(X.T @ (y * p)).ravel() / n + l2 * w
        # A loss fallen to 0 without l2: separable data, the infimum is not attained.
        separable = l2 == 0.0 and f < 1e-10
        if np.linalg.norm(grad) <= NEWTON_TOL:
            if separable:
                break
            return w
        s = p * (1.0 - p) / n
        XS = X.multiply(s[:, None]) if sp.issparse(X) else X * s[:, None]
        H = np.asarray((X.T @ XS).todense() if sp.issparse(XS) else X.T @ XS)
        H[np.diag_indices(d)] += l2 + 1e-14
        step = np.linalg.solve(H, -grad)
        if -float(grad @ step) <= DECREMENT_TOL * max(1.0, abs(f)):
            if separable:
                break
            return w  # F is within float64 resolution of its minimum
        t = 1.0
        while t > 1e-12:
            cand = w + t * step
            fc = value(cand)
            if fc <= f + 1e-4 * t * float(grad @ step):
                break
            t *= 0.5
        w, f = cand, fc
        if np.linalg.norm(w) > 1e8:
            break
    raise DataError(
        "invariant-logreg: logistic regression on this dataset has no minimizer (the "
        "classes are linearly separable, or Newton did not converge in "
        f"{max_iter} steps); set l2 > 0 (e.g. --set l2=1e-4)"
    )


@dataclass
class InvariantLogregProblem(Problem):
    """Invariant logistic regression (module docstring); variable ``x`` of shape (d,)."""

    name: ClassVar[str] = "invariant-logreg"
    title: ClassVar[str] = "invariant logistic regression (conditional stochastic optimization)"
    certificate_kind: ClassVar[str] = "opt_gap_estimate"
    default_race: ClassVar[tuple[tuple[str, str], ...]] = (
        ("bsgd", "fixed"),
        ("bspiderboost", "fixed"),
        ("saa", "newton-ls"),
    )
    work_axes: ClassVar[tuple[tuple[str, str], ...]] = (("samples", "inner samples"),)
    #: The constant step the step rules use when their ``gamma`` is 0 (auto): calibrated on
    #: the paper's Table 4 (module docstring).
    suggested_step: ClassVar[float] = 0.03
    settings_decl: ClassVar[tuple[Setting, ...]] = (
        Setting(
            "noise_ratio",
            "float",
            10.0,
            "sigma2^2 / sigma1^2: variance of the inner samples eta | a over the noise "
            "unit sigma1^2 (the setting sigma1_sq; the paper: 1, 10, 100)",
            low=0.0,
        ),
        Setting(
            "sigma1_sq",
            "float",
            0.0,
            "the sigma1^2 of noise_ratio (inner-sample variance = noise_ratio * sigma1^2); "
            f"0 = {NOISE_UNIT:g} x the data's mean feature variance (calibrated on the "
            "paper's Table 4, which does not fix it; the literal reading is the variance)",
            low=0.0,
        ),
        Setting("l2", "float", 0.0, "l2 regularization l2/2 ||x||^2 (F.2: none)", low=0.0),
        Setting(
            "eval_size",
            "int",
            0,
            "rows of the fixed evaluation sample of F (seeded); 0 = every row",
            low=0,
        ),
        Setting("eval_seed", "int", 0, "seed of the evaluation sample", low=0),
    )

    def __post_init__(self) -> None:
        ds = self.dataset
        check_binary(ds, self.name)
        X = ds.X
        n, d = X.shape
        if d > MAX_FEATURES:
            raise DataError(
                f"invariant-logreg draws dense noisy copies of the {d} features and solves a "
                f"{d} x {d} Newton system; pick a dataset with at most {MAX_FEATURES} features"
            )
        self.X = X.tocsr() if sp.issparse(X) else np.ascontiguousarray(X, dtype=np.float64)
        self.A = linalg.as_kernel_matrix(self.X)
        self.y = np.ascontiguousarray(ds.y, dtype=np.float64)
        self.n, self.d = n, d
        self.l2 = float(self.settings["l2"])
        given = float(self.settings["sigma1_sq"])
        self.sigma1_sq = given if given > 0.0 else NOISE_UNIT * _feature_variance(self.X)
        self.noise_var = float(self.settings["noise_ratio"]) * self.sigma1_sq
        size = int(self.settings["eval_size"])
        if 0 < size < n:
            rows = np.sort(
                np.random.default_rng(int(self.settings["eval_seed"])).choice(n, size, False)
            )
            self.X_eval, self.y_eval = self.X[rows], self.y[rows]
        else:
            self.X_eval, self.y_eval = self.X, self.y
        self.A_eval = linalg.as_kernel_matrix(self.X_eval)
        self.x_star = logistic_newton(self.X_eval, self.y_eval, self.l2)
        self.f_star = self.objective(self.x_star)

    # -- reference math ------------------------------------------------------------------
    def objective(self, x: np.ndarray) -> float:
        """``F(x)`` estimated on the evaluation sample (F.7)."""
        return float(k.logistic_value(self.A_eval, self.y_eval, np.ascontiguousarray(x), self.l2))

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """Gradient of the evaluation-sample estimate of ``F``."""
        z = np.asarray(self.X_eval @ x).ravel()
        p = 0.5 * (1.0 - np.tanh(0.5 * self.y_eval * z))
        return -np.asarray(self.X_eval.T @ (self.y_eval * p)).ravel() / z.size + self.l2 * x

    def certificate(self, x: np.ndarray) -> float:
        """``F(x) - F(x*)`` on the evaluation sample."""
        return self.objective(x) - self.f_star

    def initial_point(self) -> np.ndarray:
        return np.zeros(self.d)

    def lipschitz(self) -> float:
        """``max ||a_i||^2 / 4 + l2`` bounds the curvature of each sample's loss."""
        X = self.X
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else (X * X).sum(1)
        return 0.25 * float(sq.max()) + self.l2

    def solution_summary(self, x: np.ndarray) -> dict[str, float]:
        """``F(x*)`` of the evaluation sample and the inner-sample variance used."""
        return {"f_star": self.f_star, "noise_var": self.noise_var}


PROBLEMS: dict[str, type[Problem]] = {InvariantLogregProblem.name: InvariantLogregProblem}
