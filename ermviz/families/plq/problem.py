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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from ermviz.base import Problem
from ermviz.errors import DataError, SettingError
from ermviz.families.common import append_ones, binary_metrics, check_binary, spectral_norm_sq
from ermviz.families.plq.losses import (
    CLASSIFICATION_LOSSES,
    NAMED_LOSSES,
    PRESETS,
    as_2d,
    named_loss_pieces,
    plq_value,
)
from ermviz.families.scaling import ScalingCheck
from ermviz.settings import Setting, resolve_settings


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
    scaling: ClassVar[ScalingCheck] = ScalingCheck(
        "rehline's coordinate descent", ("rehline",), copes="ipm", unit="the ridge"
    )
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
    def implied_settings(cls, given: dict[str, Any]) -> dict[str, Any]:
        """The settings a ``preset`` fills in (those not given; validated preset name)."""
        preset = given.get("preset")
        if isinstance(preset, str):
            preset = preset.strip().lower()
        preset = resolve_settings(
            [cls.settings_decl[0]], {"preset": preset} if preset is not None else {}, owner="plq"
        )["preset"]
        return {k: v for k, v in PRESETS.get(preset, {}).items() if k not in given}

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
        for key, value in cls.implied_settings(given).items():
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
            check_binary(ds, f"plq with loss={loss}")
        vals = ds.X.data if sp.issparse(ds.X) else ds.X
        if not (np.all(np.isfinite(vals)) and np.all(np.isfinite(ds.y))):
            raise DataError(
                f"dataset {ds.name!r} has non-finite values (NaN or inf) in X or y; "
                "clean or impute them first"
            )
        X = append_ones(ds.X) if st["intercept"] else ds.X
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
        U = as_2d("U", cl.get("U", np.zeros((0, n))), n)
        V = as_2d("V", cl.get("V", np.zeros((0, n))), n)
        S = as_2d("S", cl.get("S", np.zeros((0, n))), n)
        T = as_2d("T", cl.get("T", np.zeros((0, n))), n)
        tau = as_2d("tau", cl.get("tau", np.full(S.shape, np.inf)), n, allow_inf=True)
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
        Xa = append_ones(X) if self.settings["intercept"] else X
        return np.asarray(Xa @ beta).ravel()

    def test_metrics(self, beta: np.ndarray) -> dict[str, float]:
        ds = self.dataset
        if getattr(ds, "X_test", None) is None or self.settings["loss"] == "custom":
            return {}
        f = self.decision_function(ds.X_test, beta)
        if self.settings["loss"] in CLASSIFICATION_LOSSES:
            return binary_metrics(ds.y_test, f)
        r = ds.y_test - f
        return {"test_rmse": float(np.sqrt(np.mean(r * r))), "test_mae": float(np.mean(abs(r)))}


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


PROBLEMS: dict[str, type[Problem]] = {PlqProblem.name: PlqProblem}
