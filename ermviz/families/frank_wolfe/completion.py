"""Matrix completion over a nuclear-norm ball, solved by FW, AFW, PFW and BPCG.

Problem ``matrix-completion`` (:class:`MatrixCompletion`)::

    min_X f(X) = 1/(2 |Omega|) sum_{(i,j) in Omega} (X_ij - M_ij)^2   s.t. ||X||_* <= tau

on a ratings matrix (:mod:`ermviz.data.lowrank`: a :class:`RatingsData` or a Dataset in
triplet form). Certificate: the Frank-Wolfe gap ``<G, X> + tau sigma_1(G)``; the kernels
record a certified upper bound on it (:mod:`solvers.nuclear` explains which). Test
metric: the RMSE on the held-out entries.

Solver :class:`NuclearFWSolver` (methods ``fw``, ``afw``, ``pfw``, ``bpcg``; step rules
``exact``, ``diminishing``, ``short``, ``armijo``, ``adaptive``; ``nonconvex`` runs but is
sublinear and untested) runs :func:`solvers.nuclear.
completion_advance`. The variable handed to the problem's reference math is the dense
``X`` flattened (``dim = m n``); a run's iterate is kept factored (``factors()``,
``predict()``), so only :meth:`NuclearFWSolver.iterate` forms the dense matrix.

Registration: the family's ``PROBLEMS`` lists :class:`MatrixCompletion`; the method
classes of :mod:`.methods` for :data:`NUCLEAR_METHODS` list it among their problems,
declare :data:`NUCLEAR_SETTINGS` and build :class:`NuclearFWSolver` on it; the step rules
:data:`NUCLEAR_STEP_RULES` are the FW family's; the bundled generator
:func:`ermviz.data.lowrank.make_lowrank_ratings_xy` as task ``regression`` with ``p = 2``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ermviz.base import Problem, Solver
from ermviz.data.lowrank import RatingsData, lowrank_ratings, ratings_from_dataset
from ermviz.errors import SettingError
from ermviz.families.frank_wolfe.constraints import check_margin_scale, radius_setting
from ermviz.families.lazy import KernelConstant, kernel_module
from ermviz.settings import Setting
from solvers import fw_methods

nuclear = kernel_module("solvers.nuclear", globals())
steps = kernel_module("solvers.steps", globals())

__all__ = [
    "NUCLEAR_METHODS",
    "NUCLEAR_SETTINGS",
    "NUCLEAR_STEP_RULES",
    "MatrixCompletion",
    "NuclearFWSolver",
    "RatingsData",
    "compress_atoms",
    "lowrank_ratings",
    "nuclear_factory",
]

#: Methods and step rules of :class:`NuclearFWSolver`.
NUCLEAR_METHODS: tuple[str, ...] = fw_methods.names(lambda m: "nuclear" in m.kernels)
NUCLEAR_STEP_RULES: tuple[str, ...] = ("exact", "diminishing", "short", "armijo", "adaptive")

#: Method settings (besides the step rules' own).
NUCLEAR_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "lmo_tol",
        "float",
        1e-9,
        "matrix-completion: relative accuracy of the LMO's top singular pair (change of "
        "sigma and residual / sigma)",
        low=0.0,
        high=1e-2,
        low_open=True,
    ),
    Setting(
        "max_lmo_iters",
        "int",
        500,
        "matrix-completion: cap on Lanczos products G v per LMO call (an unconverged "
        "call certifies with the looser Frobenius-tail bound)",
        low=1,
        high=10**6,
    ),
    Setting(
        "refresh_every",
        "int",
        1000,
        "rebuild X on the observed entries from the atoms every this many steps; 0 = never",
        low=0,
        high=10**9,
    ),
)

#: Krylov dimension of the LMO's Lanczos cycles (capped at min(m, n)).
LMO_KRYLOV = 40
#: Atom slots allocated at first; the solver re-factors or doubles them when full.
INITIAL_ATOMS = 32


@dataclass
class MatrixCompletion(Problem):
    """Least squares on the observed entries over the nuclear-norm ball (module docstring).

    Variable: ``X`` of shape ``(m, n)``, passed flattened (``x = X.ravel()``).
    Objective units: half the mean squared error on the training entries.
    """

    name: ClassVar[str] = "matrix-completion"
    title: ClassVar[str] = "matrix completion over a nuclear-norm ball"
    default_race: ClassVar[tuple[tuple[str, str], ...]] = (
        ("fw", "exact"),
        ("afw", "exact"),
        ("pfw", "exact"),
        ("bpcg", "exact"),
    )
    work_axes: ClassVar[tuple[tuple[str, str], ...]] = (("lmo_iters", "LMO products G v"),)
    settings_decl: ClassVar[tuple[Setting, ...]] = (
        radius_setting(
            None,
            "nuclear-norm radius tau (default: sqrt(m n / N) ||M_Omega||_F, the Frobenius "
            "norm of the full matrix estimated from its N observed entries)",
        ),
        Setting(
            "holdout",
            "float",
            0.2,
            "fraction of the observed entries held out for the test RMSE, used only when "
            "the dataset brings no held-out entries",
            low=0.0,
            high=0.9,
        ),
        Setting("split_seed", "int", 0, "seed of that hold-out split", low=0, high=2**31),
    )

    def __post_init__(self) -> None:
        data = ratings_from_dataset(self.dataset, self.name)
        if data.n_test == 0 and self.settings["holdout"] > 0 and data.n_obs >= 2:
            data = _hold_out(data, self.settings["holdout"], self.settings["split_seed"])
        self.data = data
        self.m, self.n = data.shape
        self.rows = np.ascontiguousarray(data.rows, dtype=np.int64)
        self.cols = np.ascontiguousarray(data.cols, dtype=np.int64)
        self.vals = np.ascontiguousarray(data.vals, dtype=np.float64)
        self.n_obs = int(self.vals.size)
        radius = self.settings["radius"]
        if radius is None:
            fro = float(np.linalg.norm(self.vals)) * math.sqrt(self.m * self.n / self.n_obs)
            radius = fro if fro > 0.0 else 1.0
        self.radius = float(radius)
        # |X_ij| <= ||X||_2 <= tau: every entry the ball allows, squared over N entries.
        check_margin_scale(self.name, "radius", self.radius, 1.0, self.n_obs)

    @property
    def dim(self) -> int:
        return self.m * self.n

    # Reference math (numpy); x is the dense X, flat or (m, n).
    def _dense(self, x: np.ndarray) -> np.ndarray:
        X = np.asarray(x, dtype=np.float64)
        if X.size != self.m * self.n:
            raise SettingError(f"{self.name}: x has {X.size} entries, not m n = {self.dim}")
        return X.reshape(self.m, self.n)

    def residual(self, x: np.ndarray) -> np.ndarray:
        """``X_ij - M_ij`` on the training entries."""
        return self._dense(x)[self.rows, self.cols] - self.vals

    def objective(self, x: np.ndarray) -> float:
        r = self.residual(x)
        return float(0.5 * (r @ r) / self.n_obs)

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """Dense flat gradient ``P_Omega(X - M) / N`` (duplicated entries add up)."""
        G = np.zeros((self.m, self.n))
        np.add.at(G, (self.rows, self.cols), self.residual(x) / self.n_obs)
        return G.ravel()

    def certificate(self, x: np.ndarray) -> float:
        """Exact FW gap ``<G, X> + tau sigma_1(G)`` (dense SVD; sparse svds when large)."""
        X = self._dense(x)
        g = self.residual(x) / self.n_obs
        return float(g @ X[self.rows, self.cols] + self.radius * self.sigma_max(g))

    def sigma_max(self, g: np.ndarray) -> float:
        """``sigma_1`` of the matrix with entries ``g`` on the training entries."""
        import scipy.sparse as sp

        G = sp.coo_matrix((g, (self.rows, self.cols)), shape=(self.m, self.n)).tocsr()
        if self.m * self.n <= 4_000_000 or min(self.m, self.n) <= 2:
            return float(np.linalg.norm(G.toarray(), 2))
        from scipy.sparse.linalg import svds

        s = svds(G, k=1, tol=1e-12, return_singular_vectors=False, random_state=0)
        return float(s[0])

    def initial_atom(self) -> tuple[np.ndarray, np.ndarray]:
        """``(u, v)`` of the start atom ``-tau u v^T``: the LMO vertex at ``X = 0``."""
        u = np.zeros(self.m)
        v = np.zeros(self.n)
        Ub, Vb, B = nuclear.new_lmo_work(self.m, self.n, LMO_KRYLOV)
        g0 = -self.vals / self.n_obs
        nuclear.top_singular_pair(self.rows, self.cols, g0, u, v, Ub, Vb, B, 1e-12, 2000, 0)
        return u, v

    def initial_point(self) -> np.ndarray:
        u, v = self.initial_atom()
        return (-self.radius * np.outer(u, v)).ravel()

    def lipschitz(self) -> float:
        """Lipschitz constant of the gradient in the Frobenius norm: ``1 / N``."""
        return 1.0 / self.n_obs

    def baseline_rmse(self) -> float:
        """Held-out RMSE of predicting the mean training value (nan without a test set)."""
        if self.data.n_test == 0:
            return math.nan
        return float(np.sqrt(np.mean((self.data.test_vals - self.vals.mean()) ** 2)))

    def test_metrics(self, x: np.ndarray) -> dict[str, float]:
        d = self.data
        if d.n_test == 0:
            return {}
        pred = self._dense(x)[d.test_rows, d.test_cols]
        return {"rmse": float(np.sqrt(np.mean((pred - d.test_vals) ** 2)))}


def _hold_out(data: RatingsData, fraction: float, seed: int) -> RatingsData:
    rng = np.random.default_rng(seed)
    n_test = min(round(fraction * data.n_obs), data.n_obs - 1)
    perm = rng.permutation(data.n_obs)
    test, train = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    return RatingsData(
        name=data.name,
        shape=data.shape,
        rows=data.rows[train],
        cols=data.cols[train],
        vals=data.vals[train],
        test_rows=data.rows[test],
        test_cols=data.cols[test],
        test_vals=data.vals[test],
        truth=data.truth,
        description=data.description,
        source=data.source,
    )


def compress_atoms(U: np.ndarray, V: np.ndarray, mu: np.ndarray) -> int:
    """Rewrite the active set in place as at most ``rank(X) + 1`` atoms; return their count.

    ``X / (-tau) = U_A^T diag(mu) V_A`` is re-factored by two QRs and an SVD of the small
    core: ``sum_i s_i p_i q_i^T`` with ``sum s_i = ||X||_* / tau <= 1``. The slack
    ``1 - sum s_i`` is split evenly between ``p_1 q_1^T`` and ``-p_1 q_1^T`` (they cancel),
    so the weights stay an exact convex combination of unit atoms, as away and pairwise
    steps need. ``X`` is unchanged up to rounding.
    """
    act = np.flatnonzero(mu > 0.0)
    if act.size == 0:
        return 0
    Qu, Ru = np.linalg.qr(U[act].T)
    Qv, Rv = np.linalg.qr(V[act].T)
    P, S, QT = np.linalg.svd((Ru * mu[act]) @ Rv.T)
    keep = max(1, int(np.sum(S > S[0] * 1e-15)))
    slack = max(1.0 - float(S[:keep].sum()), 0.0)
    need = keep + (1 if slack > 0.0 else 0)
    newU = (Qu @ P[:, :keep]).T
    newV = (Qv @ QT[:keep].T).T
    mu[:] = 0.0
    U[:keep] = newU
    V[:keep] = newV
    mu[:keep] = S[:keep]
    if slack > 0.0:
        mu[0] += 0.5 * slack
        U[keep] = -U[0]
        V[keep] = V[0]
        mu[keep] = 0.5 * slack
    mu /= mu.sum()  # exact convexity despite rounding
    return need


class NuclearFWSolver(Solver):
    """FW / AFW / PFW / BPCG on :class:`MatrixCompletion` (see :mod:`solvers.nuclear`).

    The lower-level API: it takes the method's name too. The registry builds it through
    the method classes of :mod:`.methods` (:meth:`.methods.FrankWolfeMethod.build`).

    Parameters
    ----------
    problem : MatrixCompletion
    method : {"fw", "afw", "pfw", "bpcg"}
    step : a key of ``solvers.steps.RULE_CODES`` (tested: :data:`NUCLEAR_STEP_RULES`)
    settings : dict
        Validated method and step-rule settings (``lmo_tol``, ``max_lmo_iters``,
        ``refresh_every``; ``armijo_delta``, ``armijo_c``, ``max_trials``; ``lipschitz``;
        ``eta``, ``tau``).
    tol : float
        Stop when the certified FW gap is at most ``tol``.
    """

    columns = KernelConstant("solvers.nuclear", "NUCLEAR_RECORD_COLUMNS")
    certificate_kind = "fw_gap"
    summary_columns = ("lmo_calls", "lmo_iters")

    def __init__(
        self,
        problem: MatrixCompletion,
        method: str | fw_methods.FWMethod,
        step: str,
        settings: dict[str, Any],
        tol: float,
    ) -> None:
        if not isinstance(problem, MatrixCompletion):
            raise TypeError(f"nuclear-norm FW methods do not solve {problem.name}")
        facts = fw_methods.BY_NAME.get(method) if isinstance(method, str) else method
        if facts is None or "nuclear" not in facts.kernels:
            raise SettingError(f"unknown method {method!r}; choose one of {NUCLEAR_METHODS}")
        if step not in steps.RULE_CODES:  # NUCLEAR_STEP_RULES are the tested ones
            raise SettingError(f"step rule {step!r} is not one of {tuple(steps.RULE_CODES)}")
        self.problem = problem
        self.method = facts.name
        self.tol = float(tol)
        pb = problem
        self.istate = np.zeros(nuclear.N_ISTATE, dtype=np.int64)
        self.istate[nuclear.I_METHOD] = facts.code
        self.istate[nuclear.I_RULE] = steps.RULE_CODES[step]
        self.istate[nuclear.I_REFRESH] = settings.get("refresh_every", 1000)
        self.istate[nuclear.I_MAX_LMO_ITERS] = settings.get("max_lmo_iters", 500)
        self.istate[nuclear.I_LOCAL_TAG] = nuclear.STEP_LOCAL
        self.fstate = np.zeros(nuclear.N_FSTATE)
        self.fstate[nuclear.F_LMO_TOL] = settings.get("lmo_tol", 1e-9)
        lipschitz = settings.get("lipschitz") or pb.lipschitz()
        self.step_params = steps.default_step_params(
            armijo_delta=settings.get("armijo_delta", 0.5),
            armijo_c=settings.get("armijo_c", 0.01),
            lipschitz=lipschitz,
            eta=settings.get("eta", 0.9),
            tau=settings.get("tau", 2.0),
            max_trials=settings.get("max_trials", 60),
        )
        self.lstate = np.array([lipschitz])
        u0, v0 = pb.initial_atom()
        self._alloc(INITIAL_ATOMS)
        self.U[0] = u0
        self.V[0] = v0
        self.mu[0] = 1.0
        self.z = np.zeros(pb.n_obs)
        self._sync()
        self._g = np.zeros(pb.n_obs)
        self._dz = np.zeros(pb.n_obs)
        self._lmo = (u0.copy(), v0.copy(), *nuclear.new_lmo_work(pb.m, pb.n, LMO_KRYLOV))
        self._rec = np.empty((1024, len(self.columns)))
        self.compressions = 0
        # Compile (or load from numba's cache) now, so solver time excludes compilation.
        self._call(self._rec[:0])

    def _alloc(self, cap: int) -> None:
        pb = self.problem
        self.U = np.zeros((cap, pb.m))
        self.V = np.zeros((cap, pb.n))
        self.mu = np.zeros(cap)
        self._gatom = np.zeros(cap)

    def _sync(self) -> None:
        """Rebuild ``z`` and ``||X||_F^2`` from the atoms."""
        pb = self.problem
        nuclear.predict(self.U, self.V, self.mu, pb.radius, pb.rows, pb.cols, self.z)
        self.fstate[nuclear.F_XX] = nuclear.frobenius_sq(self.U, self.V, self.mu, pb.radius)

    def _call(self, rec: np.ndarray) -> int:
        pb = self.problem
        return nuclear.completion_advance(
            (pb.rows, pb.cols, pb.vals),
            pb.radius,
            (self.U, self.V, self.mu),
            self.z,
            (self._g, self._dz, self._gatom),
            self._lmo,
            self.fstate,
            self.istate,
            self.lstate,
            self.step_params,
            self.tol,
            rec,
        )

    def _make_room(self) -> None:
        """Re-factor the full active set; double the slots when that frees too few."""
        self.compressions += 1
        cap = self.mu.shape[0]
        # One spare slot: a full-rank set re-factors into cap atoms plus the slack pair.
        U = np.vstack([self.U, np.zeros((1, self.U.shape[1]))])
        V = np.vstack([self.V, np.zeros((1, self.V.shape[1]))])
        mu = np.append(self.mu, 0.0)
        count = compress_atoms(U, V, mu)
        self._alloc(cap if count <= cap // 2 else 2 * cap)
        self.U[:count] = U[:count]
        self.V[:count] = V[:count]
        self.mu[:count] = mu[:count]
        self._sync()

    def advance(self, max_rows: int, stop_at: int) -> tuple[np.ndarray, int]:
        if max_rows > self._rec.shape[0]:
            self._rec = np.empty((max(max_rows, 2 * self._rec.shape[0]), len(self.columns)))
        self.istate[nuclear.I_STOP_AT] = stop_at
        done = 0
        while True:
            done += self._call(self._rec[done:max_rows])
            if self.istate[nuclear.I_FULL] and done < max_rows:
                self._make_room()
                continue
            break
        return self._rec[:done], int(self.istate[nuclear.I_STATUS])

    def factors(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(weights, U, V)`` of the active atoms: ``X = -tau U^T diag(weights) V``."""
        act = self.mu > 0.0
        return self.mu[act].copy(), self.U[act].copy(), self.V[act].copy()

    def predict(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """``X[rows, cols]`` without forming ``X``."""
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        cols = np.ascontiguousarray(cols, dtype=np.int64)
        out = np.zeros(rows.shape[0])
        nuclear.predict(self.U, self.V, self.mu, self.problem.radius, rows, cols, out)
        return out

    def iterate(self) -> np.ndarray:
        """The dense ``X`` flattened (O(|A| m n): use ``factors`` or ``predict`` when large)."""
        w, U, V = self.factors()
        return (-self.problem.radius * (U.T * w) @ V).ravel()

    def active_weights(self) -> np.ndarray:
        """Weights of the atom slots (0 = free slot)."""
        return self.mu.copy()

    @property
    def iteration(self) -> int:
        return int(self.istate[nuclear.I_K])


def nuclear_factory(method: str) -> Callable[[Problem, str, dict[str, Any], float], Solver]:
    """Deprecated: the Frank-Wolfe method classes build :class:`NuclearFWSolver`
    (``ermviz.families.frank_wolfe.METHODS[method].factory``); this returns a factory
    ``(problem, step, settings, tol)`` that builds it for ``method``."""
    warnings.warn(
        "nuclear_factory is deprecated: use ermviz.families.frank_wolfe.METHODS[method].factory",
        DeprecationWarning,
        stacklevel=2,
    )

    def build(problem: Problem, step: str, settings: dict[str, Any], tol: float) -> Solver:
        return NuclearFWSolver(problem, method, step, settings, tol)  # type: ignore[arg-type]

    return build
