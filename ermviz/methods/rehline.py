"""The ReHLine family: PLQ empirical risk minimization by dual coordinate descent.

Dai & Qiu (2023), "ReHLine: Regularized Composite ReLU-ReHU Loss Minimization with Linear
Computation and Linear Convergence", NeurIPS.

Problem ``plq``
---------------
``P(beta) = C * sum_i c_i loss(y_i, x_i^T beta) + l1 * ||beta||_1 + 0.5 ||beta||^2``
subject to ``A beta + b >= 0``, where ``c_i`` are sample weights (1 by default; divided by
``n`` when ``average=true``), and every loss is written in the ReLU-ReHU form of the paper
(ALGORITHMS.md D.1-D.2; the weight enters through ``c ReLU(z) = ReLU(c z)`` and
``c ReHU_tau(z) = ReHU_{sqrt(c) tau}(sqrt(c) z)``):

=========  ======================================  =========================================
loss       ``loss(y, z)``                          pieces (before weighting)
=========  ======================================  =========================================
svm        ``(1 - y z)_+``                         ReLU ``u = -y, v = 1``
ssvm       ``ReHU_1(1 - y z)`` (smoothed hinge)    ReHU ``s = -y, t = 1, tau = 1``
svm2       ``((1 - y z)_+)^2``                     ReHU ``s = -sqrt2 y, t = sqrt2, tau = inf``
lad        ``|y - z|``                             ReLU ``(1, -y)``, ``(-1, y)``
svr        ``(|y - z| - epsilon)_+``               ReLU ``(1, -(y + eps))``, ``(-1, y - eps)``
qr         ``rho_kappa(y - z)`` (check loss)       ReLU ``(-k, k y)``, ``(1 - k, -(1 - k) y)``
huber      ``H_kappa(y - z)``                      ReHU ``(-1, y)``, ``(1, -y)``, ``tau = kappa``
mse        ``(y - z)^2``                           ReHU ``(sqrt2, -sqrt2 y)``, ``(-sqrt2, sqrt2 y)``
custom     raw ``U, V, S, T, tau`` (Python API)    as given, then weighted by ``C c_i``
=========  ======================================  =========================================

(``k`` is ``quantile``; svm, ssvm and svm2 need labels -1/+1, the others take any target.)
The l1 term is the paper's ElasticQR device: one fake sample ``e_j`` per coordinate with two
ReLU pieces ``u = +-l1, v = 0``. ``intercept=true`` appends a constant-1 column (penalized
like every coefficient, as in the paper's benchmark).

Constraints (``constraint``): ``fairness``: ``|(1/n) sum_i z_i x_i^T beta| <= rho`` for the
centred column ``z`` of feature ``sensitive`` (two rows of ``A``; the column stays in ``X``);
``nonnegative``: ``beta_j >= 0`` for every feature (not the intercept); ``monotone``:
``beta_1 <= beta_2 <= ... <= beta_p`` (features, not the intercept). Custom ``A, b`` are
added through the Python API (:meth:`PlqProblem.build`), checked for feasibility by a
linear program at set-up.

Presets (``preset``, the set-ups of the paper's benchmark, ALGORITHMS.md D.6; each fills in
the settings it names unless they are given explicitly; run them on standardized features,
``--standardize``, as the paper does):

* ``svm``: ``loss=svm, C=1, average=true`` (``(1/n) sum hinge + 0.5 ||beta||^2``);
* ``ssvm``: ``loss=ssvm, C=1, average=true``;
* ``fairsvm``: ``svm`` plus ``constraint=fairness, rho=0.01`` (``sensitive`` column 0 unless
  set);
* ``elasticqr``: ``loss=qr, quantile=0.1, C=1, average=true, l1=1, intercept=true``
  (lambda_1 = lambda_2 = 1);
* ``ridgehuber``: ``loss=huber, kappa=1, C=1, average=true``.

CLI examples::

    python -m ermviz run --dataset ijcnn1 --problem plq --set loss=svm --C 1 \\
        --method rehline --step cd --tol 1e-6
    python -m ermviz run --dataset a9a --standardize --problem plq --set preset=fairsvm \\
        --set sensitive=3 --method rehline
    python -m ermviz run --dataset kin8nm --standardize --problem plq \\
        --set preset=elasticqr --method rehline

Method ``rehline`` (step rule ``cd``, exact coordinate minimization)
--------------------------------------------------------------------
The coordinate updates of ALGORITHMS.md D.4 with ``beta`` maintained (kernels in
:mod:`solvers.rehline`); one epoch = all ``xi``, then all ``lambda`` (fake l1 samples after
the real ones), then all ``gamma`` (D.5). Settings:

* ``shrink`` (default on, as in the reference code): working-set shrinking (D.5);
* ``order``: cyclic or random permutation per epoch; ``auto`` = random with shrinking,
  cyclic without (the reference code's rule); ``seed`` seeds the permutations;
* ``start``: ``zero`` (all duals 0, ``beta = 0``; the start of the installed ``rehline``
  0.1.4 package, whose cyclic iterates ours reproduce to rounding) or ``legacy``
  (``xi = 1, Lambda = 0.5, Gamma = min(tau/2, 1)``, ALGORITHMS.md D.4, the older reference
  code); any dual point through :meth:`ReHLineSolver.warm_start` (clipped into the boxes);
* ``gap``: ``tol`` applies to the absolute duality gap (default) or to the relative one;
  ``feas_tol``: largest constraint violation accepted at convergence;
* ``check_work``: one trace row (one certificate evaluation) per group of epochs worth at
  least this many full passes of coordinate updates (default 1). Without shrinking every
  epoch is a full pass, so there is one row per epoch; with shrinking, epochs over small
  working sets are grouped (``check_work=0`` gives one row per epoch always). The
  ``iteration`` column counts rows, ``epoch`` counts epochs.

Certificate and columns. The certificate is the duality gap ``P(beta) - D(mu)`` with
``D = -L`` the dual objective in maximization form (ALGORITHMS.md D.3), computed term by
term (no cancellation). Weak duality makes it an upper bound on ``P(beta) - P*`` at every
iterate, but it certifies ``beta`` only when ``beta`` is feasible: with constraints the
maintained ``beta`` is feasible only in the limit. The certificate column therefore holds
``gap + sum_k xi_k max(0, -(a_k^T beta + b_k))`` (never negative, equal to the gap when
``beta`` is feasible, still an upper bound on ``P(beta) - P*``) and the column
``infeasibility`` holds ``max_k max(0, -(a_k^T beta + b_k))``; the run converges when the
certificate is at most ``tol`` **and** the infeasibility at most ``feas_tol`` (so a
converged ``beta`` is ``feas_tol``-feasible and within ``tol`` of ``P*`` in objective).
With ``gap=relative`` the certificate column is divided by ``D`` when ``D > 0`` (by
``|P|`` when ``P < 0``), so it bounds the relative suboptimality ``(P(beta) - P*) / |P*|``;
when ``D <= 0 <= P`` (first rows only) it is divided by ``max(|P|, |D|)`` and is not a bound;
when ``P*`` may be 0 use the absolute gap. The absolute gap is always
``objective - dual_objective`` (for feasible ``beta``). Extra columns: ``dual_objective``
(``D``, a lower bound on ``P*`` at every row, for the primal/dual curves), ``epoch``,
``infeasibility`` and ``coord_updates`` (cumulative coordinate visits, the work measure
under shrinking). ``step_size`` is ``||beta_{k+1} - beta_k||_2`` over the row's epochs and
``active_size`` the number of coordinates they visited. Evaluating the certificate (one pass
over the data per row) is not needed by the method and is reported through
``eval_seconds``, so it is excluded from solver time (the trace's ``time_s``).

Size: over 800 lines because it holds the PLQ problem, its loss table, packing,
certificate and the ReHLine adapter; issue 12 (one home per solver family) splits it
along these jobs, and nothing here depends on the split.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from ermviz.errors import DataError, SettingError
from ermviz.methods.base import MethodSpec, Solver, StepRuleSpec
from ermviz.problems import Problem, _append_ones, _binary_metrics, _check_binary, spectral_norm_sq
from ermviz.settings import Setting, resolve_settings
from solvers import rehline as kern
from solvers.linalg import as_kernel_matrix
from solvers.tags import (
    STATUS_CONVERGED,
    STATUS_MAX_ITER,
    STATUS_NONFINITE,
    STATUS_RUNNING,
    STATUS_STALLED,
    STEP_CD,
    STEP_NONE,
)

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


def _as_2d(name: str, a: Any, n: int, *, allow_inf: bool = False) -> np.ndarray:
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


@dataclass
class PlqProblem(Problem):
    """PLQ ERM in ReHLine form (see the module docstring).

    Variable: ``beta``, shape (d,) (``d = p + 1`` with ``intercept``). Objective units:
    those of ``C * sum of losses + l1 ||beta||_1 + 0.5 ||beta||^2``.

    Python-only inputs (keyword arguments of :meth:`build`): ``sample_weight`` (n,) >= 0;
    ``U, V`` (L, n) and ``S, T, tau`` (H, n) for a custom loss (``loss=custom``; ``tau`` may
    hold ``inf``, never negative values); ``A`` (K, d) and ``b`` (K,) for extra constraints
    ``A beta + b >= 0`` in terms of the final ``beta`` (intercept included).
    """

    name: ClassVar[str] = "plq"
    title: ClassVar[str] = "PLQ ERM: ReLU-ReHU loss, ridge (+ l1), linear constraints"
    certificate_kind: ClassVar[str] = "duality_gap"
    # Coordinate descent against interior point: cheap epochs and a rate that depends on
    # the data's scaling, against few expensive Newton steps that do not care.
    default_race: ClassVar[tuple[tuple[str, str], ...]] = (("rehline", "cd"), ("ipm", "newton"))
    settings_decl: ClassVar[tuple[Setting, ...]] = (
        Setting(
            "preset",
            "choice",
            "none",
            "paper set-up filling in the other settings: svm, ssvm, fairsvm, elasticqr, "
            "ridgehuber (Dai & Qiu 2023; use --standardize)",
            choices=("none", *PRESETS),
        ),
        Setting(
            "loss",
            "choice",
            "svm",
            "svm (hinge), ssvm (smoothed hinge), svm2 (squared hinge), lad, svr, qr (check), "
            "huber, mse; custom = raw U,V,S,T,tau (Python API)",
            choices=(*NAMED_LOSSES, "custom"),
        ),
        Setting("C", "float", 1.0, "weight of the loss sum", low=0.0, low_open=True),
        Setting("average", "bool", False, "divide the loss sum by n (C/n per sample)"),
        Setting("epsilon", "float", 0.1, "svr: width of the insensitive zone", low=0.0),
        Setting(
            "quantile",
            "float",
            0.5,
            "qr: quantile level kappa",
            low=0.0,
            high=1.0,
            low_open=True,
            high_open=True,
        ),
        Setting("kappa", "float", 1.0, "huber: threshold kappa", low=0.0, low_open=True),
        Setting("intercept", "bool", False, "append a constant-1 column (penalized)"),
        Setting(
            "constraint",
            "choice",
            "none",
            "none, fairness (|cov(z, x^T beta)| <= rho), nonnegative (beta >= 0), "
            "monotone (beta_1 <= ... <= beta_p)",
            choices=("none", "fairness", "nonnegative", "monotone"),
        ),
        Setting("rho", "float", 0.01, "fairness: bound on |(1/n) z^T X beta|", low=0.0),
        Setting("sensitive", "int", 0, "fairness: index of the sensitive column z", low=0),
        Setting("l1", "float", 0.0, "weight of l1 * ||beta||_1 (elastic net)", low=0.0),
    )

    sample_weight: Any = None
    custom_loss: Any = None
    custom_A: Any = None
    custom_b: Any = None

    @classmethod
    def build(
        cls,
        dataset: Any,
        *,
        sample_weight: Any = None,
        U: Any = None,
        V: Any = None,
        S: Any = None,
        T: Any = None,
        tau: Any = None,
        A: Any = None,
        b: Any = None,
        **given: Any,
    ) -> PlqProblem:
        """Validate settings (a ``preset`` fills in those not given) and build the problem.

        ``U, V, S, T, tau`` make a custom loss (``loss`` must then be ``custom`` or unset);
        ``A, b`` add constraints ``A beta + b >= 0``; ``sample_weight`` weights the samples.
        """
        given = dict(given)
        if "preset" in given and isinstance(given["preset"], str):
            given["preset"] = given["preset"].strip().lower()
        preset = resolve_settings(
            [cls.settings_decl[0]], {k: v for k, v in given.items() if k == "preset"}, owner="plq"
        )["preset"]
        for key, value in PRESETS.get(preset, {}).items():
            given.setdefault(key, value)
        arrays = {"U": U, "V": V, "S": S, "T": T, "tau": tau}
        custom = {k: v for k, v in arrays.items() if v is not None}
        if custom:
            if given.get("loss", "custom") != "custom":
                raise SettingError(
                    f"loss={given['loss']!r} contradicts the custom U, V, S, T, tau arrays; "
                    "leave loss unset (or set loss=custom) with custom arrays"
                )
            given["loss"] = "custom"
        if (A is None) != (b is None):
            raise SettingError("custom constraints need both A and b (A beta + b >= 0)")
        settings = resolve_settings(cls.settings_decl, given, owner=cls.name)
        return cls(
            dataset,
            settings,
            sample_weight=sample_weight,
            custom_loss=custom or None,
            custom_A=A,
            custom_b=b,
        )

    # -- set-up --------------------------------------------------------------------------
    def __post_init__(self) -> None:
        st = self.settings
        ds = self.dataset
        loss = st["loss"]
        if loss in CLASSIFICATION_LOSSES:
            _check_binary(ds, f"plq with loss={loss}")
        vals = ds.X.data if sp.issparse(ds.X) else ds.X
        if not (np.all(np.isfinite(vals)) and np.all(np.isfinite(ds.y))):
            raise DataError(
                f"dataset {ds.name!r} has non-finite values (NaN or inf) in X or y; "
                "clean or impute them first"
            )
        X = _append_ones(ds.X) if st["intercept"] else ds.X
        if sp.issparse(X):
            X = sp.csr_matrix(X)
        self.X = X
        self.y = np.ascontiguousarray(ds.y, dtype=np.float64)
        self.n, self.d = X.shape
        self.p = ds.X.shape[1]
        weights = self._weights()
        if loss == "custom":
            U, V, S, T, tau = self._custom_pieces(weights)
        else:
            U, V, S, T, tau = named_loss_pieces(
                loss,
                self.y,
                weights,
                epsilon=st["epsilon"],
                quantile=st["quantile"],
                kappa=st["kappa"],
            )
        # Kernel layout: sample i's pieces in row i.
        self.U = np.ascontiguousarray(U.T)
        self.V = np.ascontiguousarray(V.T)
        self.S = np.ascontiguousarray(S.T)
        self.T = np.ascontiguousarray(T.T)
        self.tau = np.ascontiguousarray(tau.T)
        self.L = self.U.shape[1]
        self.H = self.S.shape[1]
        self.l1w = np.full(self.d, float(st["l1"])) if st["l1"] > 0 else np.zeros(0)
        self.A, self.b = self._constraints()
        self.asq = np.asarray(self.A.multiply(self.A).sum(axis=1)).ravel()
        self.K = self.A.shape[0]

    def _weights(self) -> np.ndarray:
        st = self.settings
        if self.sample_weight is None:
            sw = np.ones(self.n)
        else:
            sw = np.asarray(self.sample_weight, dtype=np.float64).ravel()
            if sw.shape != (self.n,):
                raise DataError(
                    f"sample_weight has {sw.shape[0]} entries but the data has {self.n} rows"
                )
            if not np.all(np.isfinite(sw)) or np.any(sw < 0):
                raise DataError("sample_weight must be finite and >= 0")
        c = st["C"] * sw
        return c / self.n if st["average"] else c

    def _custom_pieces(self, weights: np.ndarray) -> tuple[np.ndarray, ...]:
        cl = self.custom_loss or {}
        if not cl:
            raise SettingError(
                "loss=custom needs the U, V (ReLU) and/or S, T, tau (ReHU) arrays: "
                "PlqProblem.build(dataset, U=..., V=..., S=..., T=..., tau=...)"
            )
        n = self.n
        U = _as_2d("U", cl.get("U", np.zeros((0, n))), n)
        V = _as_2d("V", cl.get("V", np.zeros((0, n))), n)
        S = _as_2d("S", cl.get("S", np.zeros((0, n))), n)
        T = _as_2d("T", cl.get("T", np.zeros((0, n))), n)
        tau = _as_2d("tau", cl.get("tau", np.full(S.shape, np.inf)), n, allow_inf=True)
        if U.shape != V.shape:
            raise SettingError(f"custom loss: U {U.shape} and V {V.shape} must have one shape")
        if not (S.shape == T.shape == tau.shape):
            raise SettingError(
                f"custom loss: S {S.shape}, T {T.shape} and tau {tau.shape} must have one shape"
            )
        if np.any(tau < 0):
            raise SettingError("custom loss: tau < 0 is not allowed (ReHU needs tau in [0, inf])")
        if U.shape[0] + S.shape[0] == 0:
            raise SettingError("custom loss: give at least one ReLU (U, V) or ReHU (S, T) piece")
        rc = np.sqrt(weights)
        return U * weights, V * weights, S * rc, T * rc, np.where(rc > 0, tau * rc, 0.0)

    def _constraints(self) -> tuple[sp.csr_matrix, np.ndarray]:
        st = self.settings
        d, p, n = self.d, self.p, self.n
        blocks: list[sp.csr_matrix] = []
        offs: list[np.ndarray] = []
        kind = st["constraint"]
        if kind == "fairness":
            j = st["sensitive"]
            if j >= p:
                raise SettingError(
                    f"sensitive={j} is out of range; the dataset has {p} columns (0 to {p - 1})"
                )
            col = self.dataset.X[:, [j]]
            zc = (col.toarray() if sp.issparse(col) else np.asarray(col)).ravel()
            zc = zc - zc.mean()
            if not np.any(zc):
                raise SettingError(
                    f"fairness: column sensitive={j} is constant, so the constraint is void; "
                    "choose another sensitive column"
                )
            a = np.asarray(self.X.T @ zc).ravel() / n
            blocks.append(sp.csr_matrix(np.vstack([-a, a])))
            offs.append(np.full(2, st["rho"]))
        elif kind == "nonnegative":
            blocks.append(sp.eye(p, d, format="csr"))
            offs.append(np.zeros(p))
        elif kind == "monotone" and p > 1:
            rows = np.arange(p - 1)
            data = np.concatenate([-np.ones(p - 1), np.ones(p - 1)])
            M = sp.csr_matrix(
                (data, (np.concatenate([rows, rows]), np.concatenate([rows, rows + 1]))),
                shape=(p - 1, d),
            )
            blocks.append(M)
            offs.append(np.zeros(p - 1))
        if self.custom_A is not None:
            Ac = self.custom_A
            Ac = (
                sp.csr_matrix(Ac, dtype=np.float64)
                if sp.issparse(Ac)
                else np.atleast_2d(np.asarray(Ac, dtype=np.float64))
            )
            bc = np.atleast_1d(np.asarray(self.custom_b, dtype=np.float64)).ravel()
            if Ac.shape[1] != d or Ac.shape[0] != bc.shape[0]:
                raise SettingError(
                    f"custom constraints: A must be (K, d={d}) and b (K,); got A {Ac.shape}, "
                    f"b {bc.shape}"
                )
            dense_vals = Ac.data if sp.issparse(Ac) else Ac
            if not (np.all(np.isfinite(dense_vals)) and np.all(np.isfinite(bc))):
                raise SettingError("custom constraints: A and b must be finite")
            blocks.append(sp.csr_matrix(Ac))
            offs.append(bc)
        if not blocks:
            return sp.csr_matrix((0, d)), np.zeros(0)
        A = sp.vstack(blocks, format="csr")
        A.sum_duplicates()
        A.eliminate_zeros()
        b = np.concatenate(offs)
        norms = np.asarray(A.multiply(A).sum(axis=1)).ravel()
        zero = norms == 0
        if np.any(zero & (b < 0)):
            k = int(np.flatnonzero(zero & (b < 0))[0])
            raise SettingError(
                f"constraints are infeasible: row {k} of A is zero and b[{k}] = {b[k]:g} < 0"
            )
        A, b = A[~zero], b[~zero]
        if self.custom_A is not None and A.shape[0]:
            _check_feasible(A, b)
        return sp.csr_matrix(A), np.ascontiguousarray(b)

    # -- reference math (numpy) -----------------------------------------------------------
    @property
    def dim(self) -> int:
        return self.d

    def margins(self, beta: np.ndarray) -> np.ndarray:
        return np.asarray(self.X @ beta).ravel()

    def losses(self, beta: np.ndarray) -> np.ndarray:
        """Per-sample weighted losses (ReLU-ReHU form), shape (n,)."""
        return plq_value(self.U.T, self.V.T, self.S.T, self.T.T, self.tau.T, self.margins(beta))

    def objective(self, beta: np.ndarray) -> float:
        """``P(beta)`` (constraints not included; see :meth:`infeasibility`)."""
        beta = np.asarray(beta, dtype=np.float64)
        out = 0.5 * float(beta @ beta) + float(self.losses(beta).sum())
        if self.l1w.size:
            out += float(self.l1w @ np.abs(beta))
        return out

    def gradient(self, beta: np.ndarray) -> np.ndarray:
        """A subgradient of ``P`` (the objective is not differentiable at the kinks)."""
        z = self.margins(beta)
        r = np.zeros(self.n)
        if self.L:
            r += (self.U * (self.U * z[:, None] + self.V > 0)).sum(axis=1)
        if self.H:
            w = self.S * z[:, None] + self.T
            r += (self.S * np.clip(w, 0.0, self.tau)).sum(axis=1)
        g = beta + np.asarray(self.X.T @ r).ravel()
        if self.l1w.size:
            g += self.l1w * np.sign(beta)
        return g

    def infeasibility(self, beta: np.ndarray) -> float:
        """``max_k max(0, -(a_k^T beta + b_k))`` (0 without constraints)."""
        if self.K == 0:
            return 0.0
        r = np.asarray(self.A @ beta).ravel() + self.b
        return float(max(0.0, -r.min()))

    def initial_duals(self, start: str = "zero") -> dict[str, np.ndarray]:
        """All zeros (``beta = 0``; the start of the installed ``rehline`` 0.1.4 package) or
        the older reference code's ``xi = 1, Lambda = 0.5, Gamma = min(tau/2, 1)``
        (``start='legacy'``, ALGORITHMS.md D.4). Shapes: xi (K,), Lambda (L, n),
        Gamma (H, n), l1 (2, d) (duals of the fake samples, ``+w`` then ``-w``; empty
        without l1)."""
        nl1 = self.l1w.shape[0]
        if start == "zero":
            return {
                "xi": np.zeros(self.K),
                "Lambda": np.zeros((self.L, self.n)),
                "Gamma": np.zeros((self.H, self.n)),
                "l1": np.zeros((2, nl1)),
            }
        return {
            "xi": np.ones(self.K),
            "Lambda": np.full((self.L, self.n), 0.5),
            "Gamma": np.minimum(self.tau.T / 2.0, 1.0),
            "l1": np.full((2, nl1), 0.5),
        }

    def clip_duals(self, duals: dict[str, Any]) -> dict[str, np.ndarray]:
        """Duals with the expected shapes, clipped into their boxes (missing keys: zeros)."""
        base = self.initial_duals()
        out = {}
        for key, upper in (("xi", np.inf), ("Lambda", 1.0), ("Gamma", self.tau.T), ("l1", 1.0)):
            value = duals.get(key)
            if value is None:
                out[key] = base[key]
                continue
            arr = np.asarray(value, dtype=np.float64).reshape(base[key].shape)
            if not np.all(np.isfinite(arr)):
                raise SettingError(f"warm start {key} has non-finite entries")
            out[key] = np.clip(arr, 0.0, upper)
        return out

    def beta_of(self, duals: dict[str, np.ndarray]) -> np.ndarray:
        """The primal-dual map ``A^T xi - sum_i x_i (Lambda_i . u_i + Gamma_i . s_i)``."""
        r = np.zeros(self.n)
        if self.L:
            r += (duals["Lambda"].T * self.U).sum(axis=1)
        if self.H:
            r += (duals["Gamma"].T * self.S).sum(axis=1)
        # Skip the pass over X when no sample contributes (the zero start).
        beta = -np.asarray(self.X.T @ r).ravel() if np.any(r) else np.zeros(self.d)
        if self.K:
            beta += np.asarray(self.A.T @ duals["xi"]).ravel()
        if self.l1w.size:
            beta -= self.l1w * (duals["l1"][0] - duals["l1"][1])
        return beta

    def dual_objective(self, duals: dict[str, np.ndarray]) -> float:
        """``D(mu) = -L(mu)`` (ALGORITHMS.md D.3), a lower bound on ``P*``."""
        beta = self.beta_of(duals)
        val = 0.5 * float(beta @ beta)
        if self.H:
            G = duals["Gamma"]
            val += 0.5 * float((G * G).sum()) - float((G * self.T.T).sum())
        if self.L:
            val -= float((duals["Lambda"] * self.V.T).sum())
        if self.K:
            val += float(duals["xi"] @ self.b)
        return -val

    def implied_duals(self, beta: np.ndarray) -> dict[str, np.ndarray]:
        """Duals maximizing each piece's Fenchel term at ``beta`` (``xi = 0``)."""
        z = self.margins(beta)
        out = {"xi": np.zeros(self.K)}
        out["Lambda"] = (self.U * z[:, None] + self.V > 0).astype(float).T
        out["Gamma"] = np.clip(self.S * z[:, None] + self.T, 0.0, self.tau).T
        w = self.l1w * beta
        out["l1"] = np.vstack([(w > 0).astype(float), (w < 0).astype(float)])
        return out

    def certificate(self, beta: np.ndarray, duals: dict[str, np.ndarray] | None = None) -> float:
        """``P(beta) - D(mu) + sum_k xi_k max(0, -(a_k beta + b_k))`` (the kernel's).

        Without ``duals``, the duals implied by ``beta`` (:meth:`implied_duals`, ``xi = 0``)
        are used: still an upper bound on ``P(beta) - P*`` for feasible ``beta``, but loose.
        """
        if duals is None:
            duals = self.implied_duals(beta)
        gap = self.objective(beta) - self.dual_objective(duals)
        if self.K:
            r = np.asarray(self.A @ beta).ravel() + self.b
            gap += float(duals["xi"] @ np.maximum(-r, 0.0))
        return gap

    def initial_point(self) -> np.ndarray:
        return self.beta_of(self.initial_duals())

    def lipschitz(self) -> float:
        """Lipschitz constant of the gradient of the smooth part (ridge + ReHU pieces):
        ``1 + ||X||_2^2 max_i sum_h s_hi^2`` (ReLU pieces are not smooth)."""
        if self.H == 0:
            return 1.0
        return 1.0 + spectral_norm_sq(self.X) * float((self.S**2).sum(axis=1).max())

    def decision_function(self, X: np.ndarray | sp.spmatrix, beta: np.ndarray) -> np.ndarray:
        """``x^T beta`` for raw feature rows (the constant column is appended here)."""
        Xa = _append_ones(X) if self.settings["intercept"] else X
        return np.asarray(Xa @ beta).ravel()

    def test_metrics(self, beta: np.ndarray) -> dict[str, float]:
        ds = self.dataset
        if getattr(ds, "X_test", None) is None or self.settings["loss"] == "custom":
            return {}
        f = self.decision_function(ds.X_test, beta)
        if self.settings["loss"] in CLASSIFICATION_LOSSES:
            return _binary_metrics(ds.y_test, f)
        r = ds.y_test - f
        return {"test_rmse": float(np.sqrt(np.mean(r * r))), "test_mae": float(np.mean(abs(r)))}


# ---- feature scales ---------------------------------------------------------------------
#: Coordinate descent is warned about features whose column norms span more than this
#: factor, or whose largest magnitude exceeds SCALE_MAX_ABS (measured: every unscaled case
#: of benchmarks/plq_constrained.py exceeds one of them and needs > 1e5 epochs or never
#: reaches a relative gap of 1e-6; every standardized or [0, 1]-valued case stays below
#: both and converges in seconds).
SCALE_SPREAD = 1e3
SCALE_MAX_ABS = 1e2


def feature_scales(X: Any) -> tuple[float, float, float]:
    """``(smallest, largest non-zero column norm, largest |x_ij|)`` of a data matrix."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=0)).ravel())
        big = float(np.abs(X.data).max()) if X.nnz else 0.0
    else:
        norms = np.sqrt(np.einsum("ij,ij->j", X, X))
        big = float(np.abs(X).max()) if X.size else 0.0
    norms = norms[norms > 0]
    if norms.size == 0:
        return 0.0, 0.0, big
    return float(norms.min()), float(norms.max()), big


def scaling_notices(pb: PlqProblem) -> list[str]:
    """One warning when the features' scales make coordinate descent slow (see
    :data:`SCALE_SPREAD`), naming the two ways out; empty otherwise."""
    low, high, big = feature_scales(pb.dataset.X)
    spread = high / low if low > 0 else 1.0
    if spread <= SCALE_SPREAD and big <= SCALE_MAX_ABS:
        return []
    return [
        f"features of {pb.dataset.name!r} are badly scaled for coordinate descent (column "
        f"norms {low:.3g} to {high:.3g}, largest |x| {big:.3g}): rehline may need "
        "very many epochs; --standardize rescales the features (this changes the problem), "
        "--method ipm solves the problem as posed"
    ]


# ---- the certificate both methods of the family stream ---------------------------------
#: The computed duality gap is exact to about this many eps times the size of the terms
#: it is computed from (``solvers.rehline.E_MAG``).
ROUNDING = 4.0 * float(np.finfo(np.float64).eps)


def relative_scale(primal: float, dual: float) -> float:
    """What a relative gap divides by: ``D`` when ``D > 0`` (then ``gap / D`` bounds the
    relative suboptimality ``(P - P*) / P*``), ``|P|`` when ``P < 0``, else
    ``max(|P|, |D|)`` (first rows only; not a bound) or 1."""
    if dual > 0.0:
        return dual
    if primal < 0.0:
        return -primal
    scale = max(abs(primal), abs(dual))
    return scale if scale > 0.0 else 1.0


@dataclass
class GapReading:
    """One evaluation of the certificate, in the units ``tol`` applies to.

    ``certificate`` is ``max(computed gap, 0) + resolution`` (divided by
    :func:`relative_scale` for a relative gap): an upper bound on the suboptimality of the
    (feasible) primal point that also covers the rounding of its own computation, whose
    size is ``resolution``.
    """

    primal: float
    dual: float
    certificate: float
    infeasibility: float
    resolution: float
    #: False for a relative gap whose dual value is not positive: ``gap / max(|P|, |D|)``
    #: is then only a scale, not a bound on ``(P - P*) / P*``.
    bound: bool = True

    @property
    def finite(self) -> bool:
        return math.isfinite(self.primal) and math.isfinite(self.certificate)


def read_gap(out: np.ndarray, relative: bool) -> GapReading:
    """The :class:`GapReading` of a :func:`solvers.rehline.evaluate` output."""
    primal = float(out[kern.E_PRIMAL])
    dual = primal - float(out[kern.E_GAP])
    res = ROUNDING * float(out[kern.E_MAG])
    cert = max(float(out[kern.E_CERT]), 0.0) + res
    if relative:
        scale = relative_scale(primal, dual)
        cert /= scale
        res /= scale
    bound = not relative or dual > 0.0 or primal < 0.0
    return GapReading(primal, dual, cert, float(out[kern.E_INFEAS]), res, bound)


class BestPoint:
    """The best certified point a run has seen: the feasible row with the smallest
    certificate, with its coefficients (reported when a run ends unconverged). Rows whose
    certificate is a bound rank before rows whose relative certificate is only a scale
    (dual value <= 0: the start, or a run on badly scaled data whose dual barely moves)."""

    def __init__(self, feas_tol: float) -> None:
        self.feas_tol = feas_tol
        self.reading: GapReading | None = None
        self.iteration = -1
        self.beta: np.ndarray | None = None

    def rank(self, reading: GapReading) -> tuple[bool, bool, float]:
        """Sort key, smaller is better: feasible first, then rows whose certificate is a
        bound, then the smaller certificate."""
        return (reading.infeasibility > self.feas_tol, not reading.bound, reading.certificate)

    def offer(self, reading: GapReading, iteration: int, beta: np.ndarray) -> None:
        if not reading.finite or reading.infeasibility > self.feas_tol:
            return
        if self.reading is None or self.rank(reading) < self.rank(self.reading):
            self.reading = reading
            self.iteration = iteration
            self.beta = beta.copy()


def gap_status(reading: GapReading, tol: float, feas_tol: float) -> tuple[int, str]:
    """``(status, message)`` for a reading: converged, at the float64 resolution of the
    certificate (stalled: ``tol`` is below what can be certified), non-finite, or running."""
    if not reading.finite:
        return STATUS_NONFINITE, ""
    if reading.infeasibility <= feas_tol:
        if reading.certificate <= tol:
            return STATUS_CONVERGED, ""
        if reading.certificate <= 2.0 * reading.resolution:
            return STATUS_STALLED, (
                f"the certificate {reading.certificate:.3g} is at the float64 resolution of "
                f"the duality gap on this problem ({reading.resolution:.3g}); tol={tol:g} "
                "cannot be certified (use gap=relative or a larger tol)"
            )
    return STATUS_RUNNING, ""


def end_row_values(best: BestPoint, reading: GapReading) -> GapReading:
    """What a final row reports: ``reading``, or the best certified point when that is
    better (an unconverged run ends on the best point it saw)."""
    if best.reading is not None and best.rank(best.reading) < best.rank(reading):
        return best.reading
    return reading


#: The size of the gap's terms (for its rounding resolution) is reused from the last
#: evaluation that computed it while this many times that resolution stays below both the
#: certificate and tol (see ``ReHLineSolver._evaluate``) ...
MAG_FRESH = 1e3
#: ... for at most this many evaluations in a row (the size drifts as the duals grow).
MAG_REUSE_MAX = 16


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
    """X as the kernels take it: dense C-contiguous ``float64`` when X is dense, or a CSR
    matrix of density >= :data:`KERNEL_DENSE_MIN_DENSITY` whose dense copy has at most
    :data:`KERNEL_DENSE_MAX_ENTRIES` entries; otherwise the CSR triple of
    :func:`_kernel_csr32`."""
    if not sp.issparse(X):
        return as_kernel_matrix(X)
    entries = X.shape[0] * X.shape[1]
    if entries <= KERNEL_DENSE_MAX_ENTRIES and X.nnz >= KERNEL_DENSE_MIN_DENSITY * entries:
        return np.ascontiguousarray(X.toarray(), dtype=np.float64)
    return _kernel_csr32(X)


def _kernel_csr32(M: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR triple with int32 indices when they fit (less memory traffic per row visit)."""
    if isinstance(M, sp.csr_matrix) and M.dtype == np.float64 and M.has_canonical_format:
        # The problem's own matrix: scipy caches the canonical-format check on it.
        data = np.ascontiguousarray(M.data)
        indices = np.ascontiguousarray(M.indices)
        indptr = np.ascontiguousarray(M.indptr)
    else:
        data, indices, indptr = as_kernel_matrix(sp.csr_matrix(M))
    if indptr[-1] < 2**31 - 1 and M.shape[1] < 2**31 - 1:
        return data, indices.astype(np.int32, copy=False), indptr.astype(np.int32, copy=False)
    return data, indices, indptr


#: Kernel argument types whose kernels this process has compiled or loaded already (the
#: other arguments are allocated by the solver with fixed dtypes and layouts).
_LOADED: set[tuple] = set()


def _kernel_type_key(M: Any) -> tuple:
    """What numba's dispatch distinguishes in a kernel matrix: dense layout or CSR index
    dtypes."""
    if isinstance(M, tuple):
        return ("csr", M[0].dtype.str, M[1].dtype.str, M[2].dtype.str)
    return ("dense", M.dtype.str, M.ndim, M.flags.c_contiguous, M.flags.f_contiguous)


def _pack_pieces(pb: PlqProblem, X: Any) -> tuple[np.ndarray, np.ndarray]:
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


def _check_feasible(A: sp.csr_matrix, b: np.ndarray) -> None:
    """Raise SettingError when ``{beta : A beta + b >= 0}`` is empty (one LP, HiGHS)."""
    from scipy.optimize import linprog

    d = A.shape[1]
    res = linprog(np.zeros(d), A_ub=-A, b_ub=b, bounds=[(None, None)] * d, method="highs")
    if res.status == 2:
        raise SettingError(
            f"constraints A beta + b >= 0 are infeasible ({A.shape[0]} rows; linprog: "
            f"{res.message.strip()}); check the custom A and b"
        )


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


# ---- the method ------------------------------------------------------------------------
STEP_RULES: dict[str, StepRuleSpec] = {
    "cd": StepRuleSpec("cd", "exact coordinate minimization", (), REFERENCE),
}

#: How ``tol`` applies to the duality gap: settings of every method of the family.
CERTIFICATE_SETTINGS = (
    Setting(
        "gap",
        "choice",
        "absolute",
        "tol applies to the absolute duality gap or to the relative one (gap / D)",
        choices=("absolute", "relative"),
    ),
    Setting(
        "feas_tol",
        "float",
        1e-8,
        "converge only when max constraint violation <= feas_tol",
        low=0.0,
        low_open=True,
    ),
)

REHLINE_SETTINGS = (
    Setting("shrink", "bool", True, "shrink the working sets (reference code's default)"),
    Setting(
        "order",
        "choice",
        "auto",
        "coordinate order in each block: cyclic, random (new permutation every epoch), "
        "auto = random with shrinking, cyclic without",
        choices=("auto", "cyclic", "random"),
    ),
    Setting("seed", "int", 0, "seed of the random permutations", low=0),
    *CERTIFICATE_SETTINGS,
    Setting(
        "xi_block",
        "choice",
        "interleaved",
        "constraint duals: interleaved (solved exactly at the start of each epoch and "
        "after every xi_every sample visits) or epoch (one coordinate sweep at the start "
        "of each epoch, the reference code's order)",
        choices=("interleaved", "epoch"),
    ),
    Setting(
        "xi_every",
        "int",
        0,
        "with constraints: solve the constraint duals' block after this many sample visits "
        "(0 = auto, from the relative costs of that block and of a sample visit)",
        low=0,
    ),
    Setting(
        "check_work",
        "float",
        1.0,
        "evaluate the certificate (one trace row) after epochs worth this many full passes "
        "of coordinate updates; 0 = after every epoch (matters only with shrinking)",
        low=0.0,
    ),
    Setting(
        "start",
        "choice",
        "zero",
        "initial duals: zero (beta = 0, as the rehline 0.1.4 package) or legacy "
        "(xi=1, Lambda=0.5, Gamma=min(tau/2,1), the older reference code)",
        choices=("zero", "legacy"),
    ),
)

RECORD_COLUMNS = (
    "iteration",
    "objective",
    "certificate",
    "step_size",
    "step_type",
    "active_size",
    "dual_objective",
    "epoch",
    "infeasibility",
    "coord_updates",
)


class ReHLineSolver(Solver):
    """ReHLine coordinate descent on a :class:`PlqProblem` (see the module docstring).

    Parameters
    ----------
    problem : PlqProblem
    step : str
        ``"cd"``.
    settings : dict
        Validated method settings (:data:`REHLINE_SETTINGS`).
    tol : float
        Stop when the certificate is at most ``tol`` (and the infeasibility at most
        ``feas_tol``).
    warm_start : dict, optional
        Dual point to start from (keys ``xi``, ``Lambda``, ``Gamma``, ``l1``; shapes as
        :meth:`PlqProblem.initial_duals`); clipped into the boxes.
    """

    columns = RECORD_COLUMNS
    certificate_kind = "duality_gap"

    def __init__(
        self,
        problem: PlqProblem,
        step: str = "cd",
        settings: dict[str, Any] | None = None,
        tol: float = 1e-6,
        warm_start: dict[str, Any] | None = None,
    ) -> None:
        if not isinstance(problem, PlqProblem):
            raise TypeError(f"rehline solves the plq problem, not {problem.name}")
        settings = resolve_settings(REHLINE_SETTINGS, settings or {}, owner="rehline")
        self.problem = pb = problem
        self.tol = float(tol)
        self.relative = settings["gap"] == "relative"
        self.feas_tol = float(settings["feas_tol"])
        self._X = kernel_rows(pb.X)
        self._A = _kernel_csr32(pb.A)
        self._b = np.ascontiguousarray(pb.b, dtype=np.float64)
        self._asq = np.ascontiguousarray(pb.asq, dtype=np.float64)
        self._pieces = _pack_pieces(pb, self._X)
        self._l1w = np.ascontiguousarray(pb.l1w, dtype=np.float64)
        n, d = pb.n, pb.d
        nl1 = self._l1w.shape[0]
        self.istate = np.zeros(kern.N_ISTATE, dtype=np.int64)
        self.fstate = np.zeros(kern.N_FSTATE)
        shrink = bool(settings["shrink"])
        order = settings["order"]
        self.istate[kern.I_SHRINK] = int(shrink)
        self.istate[kern.I_RANDOM] = int(order == "random" or (order == "auto" and shrink))
        if settings["xi_block"] == "epoch":
            # The reference code's schedule (ALGORITHMS.md D.5): one sweep per epoch.
            kind, every, sweeps, exact = kern.XI_ROWS, 0, 1, 0
        else:
            kind, every, sweeps = xi_schedule(pb.A, pb.b, self._X, int(settings["xi_every"]))
            exact = 1
        self.istate[kern.I_XI_KIND] = kind
        self.istate[kern.I_XI_EVERY] = every
        self.istate[kern.I_XI_SWEEPS] = sweeps
        self.istate[kern.I_XI_EXACT] = exact
        seed = (int(settings["seed"]) * 0x9E3779B97F4A7C15 + 1) % 2**64
        self.rng = np.array([seed], dtype=np.uint64)
        lam_idx = [np.arange(n, dtype=np.int64)] if pb.L else []
        if nl1:
            lam_idx.append(n + np.arange(nl1, dtype=np.int64))
        self._idx_lam = np.concatenate(lam_idx) if lam_idx else np.zeros(0, dtype=np.int64)
        self._idx_gam = np.arange(n if pb.H else 0, dtype=np.int64)
        self._buf = np.zeros(4 * (pb.K + 1) + 5)
        self._reset_working_sets()
        self.beta = np.zeros(d)
        self.xi = np.zeros(pb.K)
        self.lam = np.zeros((n, pb.L))
        self.lam1 = np.zeros((nl1, 2))
        self.gam = np.zeros((n, pb.H))
        self._beta_start = np.zeros(d)
        total = pb.K + self._idx_lam.shape[0] + self._idx_gam.shape[0]
        self._min_visits = math.ceil(float(settings["check_work"]) * total)
        self._k = 0
        self._eval = np.zeros(kern.N_EVAL)
        self._mag = -1.0  # size of the gap's terms at the last sized evaluation
        self._mag_reused = 0  # evaluations since then
        self._last_reading: GapReading | None = None
        self._reading_before: GapReading | None = None  # the one before that
        self._rec = np.empty((256, len(self.columns)))
        self._start = settings["start"]
        self._at_origin = True  # beta = 0 and every dual 0, until a step or a warm start
        self._fixed_point = False
        self.best = BestPoint(self.feas_tol)
        self._reported: np.ndarray | None = None
        self._notices: tuple[str, ...] | None = None
        if warm_start is not None or self._start != "zero":
            self._set_duals(pb.initial_duals(self._start) if warm_start is None else warm_start)
        # (the zero start is the state as allocated: all duals 0, beta = 0)
        key = (_kernel_type_key(self._X), _kernel_type_key(self._A))
        if key in _LOADED:
            return
        _LOADED.add(key)
        # Compile (or load from numba's cache) now, so solver time excludes compilation:
        # an epoch over empty working sets and no constraint rows (which reads the state
        # and writes only the scratch, the integer and float state and the generator:
        # copies of those), and an
        # evaluation over no samples (the same argument types, none of the work).
        dummy_i = self.istate.copy()
        dummy_i[kern.I_N_LAM] = dummy_i[kern.I_N_GAM] = 0
        self._epochs(
            1,
            min_visits=0,
            istate=dummy_i,
            fstate=self.fstate.copy(),
            rng=self.rng.copy(),
            warmup=True,
        )
        PL, PH = self._pieces
        for evaluate in (kern.evaluate, kern.evaluate_sized):
            evaluate(
                self._X,
                PL[:0],
                PH[:0],
                self._A,
                self._b[:0],
                self._l1w[:0],
                self.beta,
                self.beta,
                self.xi,
                self.lam,
                self.lam1,
                self.gam,
                np.zeros(kern.N_EVAL),
            )

    # -- state ---------------------------------------------------------------------------
    @property
    def notices(self) -> tuple[str, ...]:
        """Set-up warnings (badly scaled features, :func:`scaling_notices`), computed on
        first use: a pass over the data that the solver itself does not need (it was ~60 %
        of the set-up on ijcnn1)."""
        if self._notices is None:
            self._notices = tuple(scaling_notices(self.problem))
        return self._notices

    def _reset_working_sets(self) -> None:
        kern.reset_shrinking(
            self.istate, self.fstate, self._idx_lam.shape[0], self._idx_gam.shape[0]
        )
        self.fstate[kern.F_EPS_SHRINK] = -1.0

    def _set_duals(self, duals: dict[str, Any]) -> None:
        self._at_origin = False
        pb = self.problem
        clipped = pb.clip_duals(duals)
        self.xi[:] = clipped["xi"]
        self.lam[:] = clipped["Lambda"].T
        self.gam[:] = clipped["Gamma"].T
        self.lam1[:] = clipped["l1"].T
        self.beta[:] = pb.beta_of(clipped)

    def warm_start(self, duals: dict[str, Any]) -> None:
        """Start from the dual point ``duals`` (clipped into its boxes); before the first
        step only. Keys: ``xi`` (K,), ``Lambda`` (L, n), ``Gamma`` (H, n), ``l1`` (2, d)."""
        if self.iteration > 0:
            raise SettingError("warm_start must be called before the first step")
        self._set_duals(duals)
        self._reset_working_sets()

    def duals(self) -> dict[str, np.ndarray]:
        """Copies of the dual variables, in the shapes :meth:`warm_start` takes."""
        return {
            "xi": self.xi.copy(),
            "Lambda": self.lam.T.copy(),
            "Gamma": self.gam.T.copy(),
            "l1": self.lam1.T.copy(),
        }

    # -- kernels -------------------------------------------------------------------------
    def _evaluate(self, decide: bool = False) -> GapReading:
        """The certificate of the current point. The size of its terms (``E_MAG``, for the
        rounding resolution; ~40 % of an evaluation on 8-feature data) is reused from the
        last sized evaluation while :data:`MAG_FRESH` times the resolution stays below both
        the certificate and ``tol``, for at most :data:`MAG_REUSE_MAX` evaluations in a
        row. A reading that would end the run, or lands near the resolution, or is asked
        for with ``decide`` (the caller ends the run on it), is sized afresh; at the zero
        start the size is the primal value, without the sized kernel, and the next
        evaluation is sized."""
        prev, before = self._last_reading, self._reading_before
        # The next certificate, extrapolated geometrically from the last two: when it is
        # expected at tol, this evaluation is sized at once rather than evaluated twice.
        end_expected = (
            prev is not None
            and before is not None
            and 0.0 < prev.certificate < before.certificate
            and prev.certificate * (prev.certificate / before.certificate) <= self.tol
        )
        reuse = (
            not decide
            and not end_expected
            and prev is not None
            and self._mag >= 0.0
            and self._mag_reused < MAG_REUSE_MAX
            and MAG_FRESH * prev.resolution <= min(prev.certificate, self.tol)
        )
        args = (
            self._X,
            *self._pieces,
            self._A,
            self._b,
            self._l1w,
            self.beta,
            self.beta,
            self.xi,
            self.lam,
            self.lam1,
            self.gam,
            self._eval,
        )
        reading = None
        if self._at_origin:
            # beta = 0 and every dual 0 (the zero start): every size term but the losses
            # vanishes, so the size is the primal value, exactly as the sized kernel sums it.
            # It says nothing of the sizes to come (the duals' terms grow from 0), so the
            # next evaluation is sized.
            kern.evaluate(*args)
            self._eval[kern.E_MAG] = self._eval[kern.E_PRIMAL]
            self._mag = -1.0
            reading = read_gap(self._eval, self.relative)
        elif reuse:
            kern.evaluate(*args)
            self._eval[kern.E_MAG] = self._mag
            reading = read_gap(self._eval, self.relative)
            near = MAG_FRESH * reading.resolution > min(reading.certificate, self.tol)
            ends = gap_status(reading, self.tol, self.feas_tol)[0] != STATUS_RUNNING
            if near or ends:
                reading = None
            else:
                self._mag_reused += 1
        if reading is None:
            kern.evaluate_sized(*args)
            self._mag = float(self._eval[kern.E_MAG])
            self._mag_reused = 0
            reading = read_gap(self._eval, self.relative)
        self._reading_before, self._last_reading = prev, reading
        return reading

    def _epochs(
        self,
        max_epochs: int = 2**62,
        *,
        min_visits: int | None = None,
        istate: np.ndarray | None = None,
        fstate: np.ndarray | None = None,
        rng: np.ndarray | None = None,
        warmup: bool = False,
    ) -> None:
        """One kernel call on the solver's state (the warm-up passes copies to leave it be,
        and no constraint rows, so that the xi block does not run either)."""
        K = 0 if warmup else self.problem.K
        self._at_origin = self._at_origin and warmup
        kern.epochs(
            self._X,
            *self._pieces,
            self._A,
            self._b[:K],
            self._asq[:K],
            self._l1w,
            self.beta,
            self.xi[:K],
            self.lam,
            self.lam1,
            self.gam,
            self._idx_lam,
            self._idx_gam,
            self._buf,
            self._beta_start,
            self._min_visits if min_visits is None else min_visits,
            max_epochs,
            self.istate if istate is None else istate,
            self.fstate if fstate is None else fstate,
            self.rng if rng is None else rng,
        )

    def run_epochs(self, n_epochs: int) -> None:
        """Run exactly ``n_epochs`` epochs in one kernel call, without recording rows or
        evaluating the certificate (the benchmark's time-to-target runs; the trace-driven
        path is :meth:`advance`). ``iteration`` does not move; ``istate[I_K]`` does."""
        if n_epochs > 0:
            saved = self._min_visits
            self._min_visits = np.iinfo(np.int64).max
            try:
                self._epochs(int(n_epochs))
            finally:
                self._min_visits = saved

    def _working_set_size(self) -> int:
        return int(self.problem.K + self.istate[kern.I_N_LAM] + self.istate[kern.I_N_GAM])

    def advance(self, max_rows: int, stop_at: int) -> tuple[np.ndarray, int]:
        if max_rows > self._rec.shape[0]:
            self._rec = np.empty((max(max_rows, 2 * self._rec.shape[0]), len(self.columns)))
        rec = self._rec
        ist = self.istate
        for row in range(max_rows):
            k = self._k
            t0, c0 = time.perf_counter(), time.thread_time()
            reading = self._evaluate(decide=self._fixed_point or k >= stop_at)
            self.eval_seconds += time.perf_counter() - t0
            self.eval_cpu_seconds += time.thread_time() - c0
            self.best.offer(reading, k, self.beta)
            updates = float(ist[kern.I_UPDATES])
            status, note = gap_status(reading, self.tol, self.feas_tol)
            if status == STATUS_RUNNING:
                if self._fixed_point:
                    status = STATUS_STALLED
                    note = (
                        f"a full epoch changed no dual variable at certificate "
                        f"{reading.certificate:.3g}: a fixed point of coordinate descent in "
                        "float64"
                    )
                elif k >= stop_at:
                    status = STATUS_MAX_ITER
            if status != STATUS_RUNNING:
                if status != STATUS_CONVERGED:
                    reading = self._end_on_best(reading, k)
                self.end_note = note or self.end_note
                rec[row] = (
                    k,
                    reading.primal,
                    reading.certificate,
                    0.0,
                    STEP_NONE,
                    self._working_set_size(),
                    reading.dual,
                    ist[kern.I_K],
                    reading.infeasibility,
                    updates,
                )
                ist[kern.I_STATUS] = status
                return rec[: row + 1], status
            epochs_before = int(ist[kern.I_K])
            self._epochs()
            # A full sweep that moved nothing is a fixed point of coordinate descent: if the
            # certificate is still above tol there, float64 cannot do better.
            self._fixed_point = bool(ist[kern.I_CHANGED] == 0 and ist[kern.I_FULL] == 1)
            rec[row] = (
                k,
                reading.primal,
                reading.certificate,
                self.fstate[kern.F_STEP],
                STEP_CD,
                ist[kern.I_VISITED],
                reading.dual,
                epochs_before,
                reading.infeasibility,
                updates,
            )
            self._k = k + 1
        ist[kern.I_STATUS] = STATUS_RUNNING
        return rec[:max_rows], STATUS_RUNNING

    def _end_on_best(self, reading: GapReading, k: int) -> GapReading:
        """Switch the reported point to the best certified one when it beats ``reading``."""
        final = end_row_values(self.best, reading)
        if final is not reading:
            self._reported = self.best.beta
            self.end_note = (
                f"reporting the best certified point, from iteration {self.best.iteration} "
                f"(certificate {final.certificate:.3g}; the last iterate's: "
                f"{reading.certificate:.3g})"
            )
        return final

    def iterate(self) -> np.ndarray:
        """The reported coefficients: the current ``beta``, or the best certified point
        when the run ended unconverged on a worse one."""
        if self._reported is not None:
            return self._reported.copy()
        return self.beta.copy()

    @property
    def iteration(self) -> int:
        return self._k


def _build(problem: Problem, step: str, settings: dict[str, Any], tol: float) -> Solver:
    return ReHLineSolver(problem, step, settings, tol)


PROBLEMS: dict[str, type[Problem]] = {PlqProblem.name: PlqProblem}

METHODS: dict[str, MethodSpec] = {
    "rehline": MethodSpec(
        "rehline",
        "ReHLine: dual coordinate descent with beta maintained",
        "rehline",
        (PlqProblem.name,),
        ("cd",),
        REHLINE_SETTINGS,
        REFERENCE,
        _build,
        default_step="cd",
        advise=lambda problem: scaling_notices(problem),
    ),
}
