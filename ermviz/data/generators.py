"""Bundled datasets: scikit-learn's small sets and seeded generators, no data file.

**Bundled names** (``wdbc``, ``blobs``, ``sparse-synthetic``, ``toy-2d``, ``moons``,
``cso-synthetic``, ``fairness-synthetic``, ``sine-tasks``,
``toy-simplex-3``, ``toy-simplex-4``, ``sk-diabetes``, ``friedman``) never touch a data
file: they come from scikit-learn or from seeded generators. Each result is cached in
memory per name and arguments.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ermviz.data.dataset import Dataset, _make_dataset
from ermviz.data.lowrank import make_lowrank_ratings_xy
from ermviz.errors import DataError


def _int_arg(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise DataError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _float_arg(name: str, value: Any, low: float, high: float, *, open_low: bool = False) -> float:
    ok = isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)
    if ok:
        value = float(value)
        ok = math.isfinite(value) and (value > low if open_low else value >= low) and value <= high
    if not ok:
        bracket = "(" if open_low else "["
        raise DataError(f"{name} must be a number in {bracket}{low}, {high}], got {value!r}")
    return value


def _rng(seed: Any) -> np.random.Generator:
    return np.random.default_rng(_int_arg("seed", seed, 0))


def _make_blobs(
    n: int = 200, p: int = 2, separation: float = 3.0, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Two Gaussian blobs with identity covariance; ``ceil(n/2)`` points are +1.

    The class means are ``±(separation / 2) * (1, ..., 1) / sqrt(p)``, so ``separation``
    is the distance between them in units of the within-class standard deviation
    (0: the classes coincide; about 4: nearly separable).
    """
    n = _int_arg("n", n, 2)
    p = _int_arg("p", p, 1)
    separation = _float_arg("separation", separation, 0.0, 1e6)
    rng = _rng(seed)
    n_pos = (n + 1) // 2
    y = np.concatenate([np.ones(n_pos), -np.ones(n - n_pos)])
    direction = np.full(p, 1.0 / math.sqrt(p))
    X = rng.standard_normal((n, p)) + 0.5 * separation * y[:, None] * direction
    order = rng.permutation(n)
    return X[order], y[order]


def _make_sparse_synthetic(
    n: int = 1000,
    p: int = 5000,
    density: float = 0.01,
    n_informative: int | None = None,
    noise: float = 0.1,
    seed: int = 0,
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Sparse high-dimensional binary classification with a sparse true weight vector.

    Each of the ``n * p`` entries is non-zero with probability ``density`` (standard
    normal values). The label is ``sign(X @ w + noise * N(0, 1))`` where ``w`` has
    ``n_informative`` standard-normal non-zeros (default ``max(1, p // 10)``).
    """
    n = _int_arg("n", n, 2)
    p = _int_arg("p", p, 1)
    density = _float_arg("density", density, 0.0, 1.0, open_low=True)
    k = max(1, p // 10) if n_informative is None else _int_arg("n_informative", n_informative, 1)
    if k > p:
        raise DataError(f"n_informative must be at most p = {p}, got {k}")
    noise = _float_arg("noise", noise, 0.0, 1e6)
    rng = _rng(seed)
    nnz = int(rng.binomial(n * p, density))
    flat = rng.choice(n * p, size=nnz, replace=False)
    X = sp.csr_matrix(
        (rng.standard_normal(nnz), (flat // p, flat % p)), shape=(n, p), dtype=np.float64
    )
    w = np.zeros(p)
    w[rng.choice(p, size=k, replace=False)] = rng.standard_normal(k)
    score = X @ w + noise * rng.standard_normal(n)
    y = np.where(score > 0, 1.0, -1.0)
    ties = score == 0  # rows with no informative feature and no noise: fair coin
    y[ties] = rng.choice([-1.0, 1.0], size=int(ties.sum()))
    return X, y


def _make_toy_2d(
    n: int = 40, separation: float = 3.0, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Two Gaussian blobs in the plane (see ``blobs``), small enough to see every point."""
    return _make_blobs(n=n, p=2, separation=separation, seed=seed)


def _make_moons(n: int = 300, noise: float = 0.2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaving half circles (``sklearn.datasets.make_moons``), labels -1/+1: no
    line separates them, a Gaussian kernel does (the LS-SVM teaching set)."""
    from sklearn.datasets import make_moons

    n = _int_arg("n", n, 4)
    noise = _float_arg("noise", noise, 0.0, 1e3)
    X, y = make_moons(n_samples=n, noise=noise, random_state=_int_arg("seed", seed, 0))
    return X, np.where(y == 1, 1.0, -1.0)


def _make_cso_synthetic(
    n: int = 1_000_000, d: int = 10, sigma1_sq: float = 1.0, x_scale: float = 1.0, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """The invariant logistic regression model of Hu, Chen & He (NeurIPS 2020; ALGORITHMS.md
    F.2): ``a ~ N(0, sigma1_sq I_d)``, a hidden ``x_true ~ N(0, x_scale^2 I_d)``, ``b = +1``
    with probability ``sigma(a^T x_true)``, else -1 (``x_scale`` sets the signal strength,
    UNCONFIRMED in the paper). The rows are the outer distribution of the problem
    ``invariant-logreg`` (its noisy inner samples are drawn by the solvers)."""
    n = _int_arg("n", n, 2)
    d = _int_arg("d", d, 1)
    sigma1_sq = _float_arg("sigma1_sq", sigma1_sq, 0.0, 1e6)
    x_scale = _float_arg("x_scale", x_scale, 0.0, 1e6)
    rng = _rng(seed)
    x_true = x_scale * rng.standard_normal(d)
    A = math.sqrt(sigma1_sq) * rng.standard_normal((n, d))
    prob = 0.5 * (1.0 + np.tanh(0.5 * (A @ x_true)))
    b = np.where(rng.random(n) < prob, 1.0, -1.0)
    return A, b


def _make_fairness_synthetic(
    n: int = 100_000, p: int = 40, bias: float = 1.0, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Binary classification with a sensitive attribute (column 0, ``z ~ N(0, 1)``) that
    the labels depend on, directly (weight ``bias``) and through the other ``p - 1``
    Gaussian features, each a noisy proxy of ``z``: the label is the sign of ``bias * z +
    F w + N(0, 1)``. An SVM fitted to it correlates its scores with ``z``, so a fairness
    constraint on that correlation (the ``plq`` problem's ``constraint=fairness``) binds;
    dropping column 0 would not remove the correlation (the proxies carry it): standardized,
    with ``C = 0.1``, the unconstrained SVM's ``|(1/n) z^T X beta|`` is 1.30, the
    constrained one's 0.01 = rho. Large enough (100 000 rows) that ReHLine takes over a
    second of solver time to close the duality gap, live (the rehline-fairness lesson)."""
    n = _int_arg("n", n, 2)
    p = _int_arg("p", p, 2)
    bias = _float_arg("bias", bias, 0.0, 1e6)
    rng = _rng(seed)
    z = rng.standard_normal(n)
    loading = rng.standard_normal(p - 1) / math.sqrt(p - 1)
    F = rng.standard_normal((n, p - 1)) + z[:, None] * loading
    w = rng.standard_normal(p - 1) / math.sqrt(p - 1)
    score = bias * z + F @ w + rng.standard_normal(n)
    return np.column_stack([z, F]), np.where(score > 0, 1.0, -1.0)


def _make_sine_tasks(
    n: int = 100_000,
    amp_low: float = 0.1,
    amp_high: float = 5.0,
    phase_high: float = math.pi,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """A pool of sine-wave regression tasks (Finn, Abbeel & Levine, ICML 2017; the
    meta-learning task of Hu, Chen & He, NeurIPS 2020): row ``t`` is a task
    ``(amplitude, phase)`` with ``amplitude ~ U[amp_low, amp_high]`` and ``phase ~
    U[0, phase_high]``; its samples are ``(x, amplitude * sin(x - phase))``, drawn by the
    solvers of the problem ``maml-sine``. The target column is the amplitude (the rows
    are tasks, not a regression sample)."""
    n = _int_arg("n", n, 2)
    amp_low = _float_arg("amp_low", amp_low, 0.0, 1e6)
    amp_high = _float_arg("amp_high", amp_high, amp_low, 1e6)
    phase_high = _float_arg("phase_high", phase_high, 0.0, 2.0 * math.pi)
    rng = _rng(seed)
    amp = rng.uniform(amp_low, amp_high, n)
    phase = rng.uniform(0.0, phase_high, n)
    return np.column_stack([amp, phase]), amp.copy()


# Canonical simplex toys: separable, both classes present, easy to draw.
_SIMPLEX_POINTS = {
    3: ([[1.0, 2.0], [2.0, 0.5], [-1.0, -1.0]], [1.0, 1.0, -1.0]),
    4: ([[1.0, 2.0], [2.0, 0.5], [-1.0, -1.5], [-2.0, 0.0]], [1.0, 1.0, -1.0, -1.0]),
}


def _make_simplex(k: int, seed: int | None) -> tuple[np.ndarray, np.ndarray]:
    points, labels = _SIMPLEX_POINTS[k]
    X, y = np.array(points), np.array(labels)
    if seed is not None:
        # Random points around (+1, +1) and (-1, -1), with the same labels.
        X = y[:, None] * np.ones(2) + 0.75 * _rng(seed).standard_normal((k, 2))
    return X, y


def _make_toy_simplex_3(seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exactly 3 points in the plane (two +1, one -1): the SVM dual lives on a triangle.

    ``seed=None`` gives fixed points; an integer seed draws random ones.
    """
    return _make_simplex(3, seed)


def _make_toy_simplex_4(seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exactly 4 points in the plane (two per class): the dual lives on a tetrahedron.

    ``seed=None`` gives fixed points; an integer seed draws random ones.
    """
    return _make_simplex(4, seed)


def _make_wdbc() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's Wisconsin diagnostic breast cancer set; benign (target 1) is +1."""
    from sklearn.datasets import load_breast_cancer

    X, target = load_breast_cancer(return_X_y=True)
    return X, np.where(target == 1, 1.0, -1.0)


def _make_sk_diabetes() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's diabetes regression set as shipped (features centred and scaled)."""
    from sklearn.datasets import load_diabetes

    return load_diabetes(return_X_y=True)


def _make_friedman(
    n: int = 500, p: int = 10, noise: float = 1.0, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Friedman #1 regression (``sklearn.datasets.make_friedman1``); needs ``p >= 5``."""
    from sklearn.datasets import make_friedman1

    n = _int_arg("n", n, 2)
    p = _int_arg("p", p, 5)
    noise = _float_arg("noise", noise, 0.0, 1e6)
    return make_friedman1(
        n_samples=n, n_features=p, noise=noise, random_state=_int_arg("seed", seed, 0)
    )


@dataclass(frozen=True)
class _Bundled:
    task: str
    n: int  # with default arguments
    p: int
    description: str
    make: Callable[..., tuple[Any, np.ndarray]]


_BUNDLED: dict[str, _Bundled] = {
    "wdbc": _Bundled(
        "binary",
        569,
        30,
        "Wisconsin diagnostic breast cancer as bundled with scikit-learn; benign = +1.",
        _make_wdbc,
    ),
    "blobs": _Bundled(
        "binary",
        200,
        2,
        "Two Gaussian blobs (n, p, separation, seed).",
        _make_blobs,
    ),
    "sparse-synthetic": _Bundled(
        "binary",
        1000,
        5000,
        "Sparse random features, labels from a sparse linear model "
        "(n, p, density, n_informative, noise, seed).",
        _make_sparse_synthetic,
    ),
    "toy-2d": _Bundled(
        "binary",
        40,
        2,
        "Two small Gaussian blobs in the plane (n, separation, seed).",
        _make_toy_2d,
    ),
    "moons": _Bundled(
        "binary",
        300,
        2,
        "Two interleaving half circles in the plane, not linearly separable (n, noise, seed).",
        _make_moons,
    ),
    "cso-synthetic": _Bundled(
        "binary",
        1_000_000,
        10,
        "Invariant logistic regression's model (Hu, Chen & He 2020): Gaussian features, "
        "logistic labels from a hidden x_true (n, d, sigma1_sq, x_scale, seed).",
        _make_cso_synthetic,
    ),
    "fairness-synthetic": _Bundled(
        "binary",
        100_000,
        40,
        "Labels that depend on a sensitive attribute (column 0) directly and through "
        "39 proxy features, for fairness-constrained SVMs (n, p, bias, seed).",
        _make_fairness_synthetic,
    ),
    "sine-tasks": _Bundled(
        "regression",
        100_000,
        2,
        "Sine-wave few-shot regression tasks (amplitude, phase) for meta-learning (Finn et "
        "al. 2017): n, amp_low, amp_high, phase_high, seed.",
        _make_sine_tasks,
    ),
    "toy-simplex-3": _Bundled(
        "binary", 3, 2, "Three points: the SVM dual is a triangle (seed).", _make_toy_simplex_3
    ),
    "toy-simplex-4": _Bundled(
        "binary", 4, 2, "Four points: the SVM dual is a tetrahedron (seed).", _make_toy_simplex_4
    ),
    "lowrank-ratings": _Bundled(
        "regression",
        2453,
        2,
        "Synthetic ratings: a rank-3 100 x 80 matrix plus noise, 30% of its entries "
        "observed, as (row, col) -> value triplets for matrix-completion (m, n, rank, "
        "density, noise, seed).",
        make_lowrank_ratings_xy,
    ),
    "sk-diabetes": _Bundled(
        "regression",
        442,
        10,
        "Diabetes progression as bundled with scikit-learn (Efron et al. 2004).",
        _make_sk_diabetes,
    ),
    "friedman": _Bundled(
        "regression", 500, 10, "Friedman #1 regression (n, p, noise, seed).", _make_friedman
    ),
}


def bundled_names() -> list[str]:
    """Names of the datasets that need no file (scikit-learn's and generated ones)."""
    return list(_BUNDLED)


def _load_bundled(name: str, task: str | None, label_map: Any, kwargs: dict[str, Any]) -> Dataset:
    spec = _BUNDLED[name]
    if label_map is not None:
        raise DataError(f"{name} is a bundled set with fixed -1/+1 labels; drop label_map")
    if task is not None and task != spec.task:
        raise DataError(f"{name} is a {spec.task} set; drop task={task!r} or pick another set")
    accepted = list(inspect.signature(spec.make).parameters)
    unknown = sorted(set(kwargs) - set(accepted))
    if unknown:
        takes = ", ".join(accepted) if accepted else "no arguments"
        raise DataError(f"{name} does not take {', '.join(unknown)}; it takes {takes}")
    key = tuple(sorted(kwargs.items()))
    try:
        hash(key)
    except TypeError:
        raise DataError(f"arguments of {name} must be plain numbers, got {kwargs!r}") from None
    return _bundled_cached(name, key)


@functools.lru_cache(maxsize=32)
def _bundled_cached(name: str, key: tuple[tuple[str, Any], ...]) -> Dataset:
    spec = _BUNDLED[name]
    X, y = spec.make(**dict(key))
    if spec.task == "binary" and np.unique(y).size < 2:
        raise DataError(
            f"{name} with {dict(key)} produced only one class; change the seed or make n larger"
        )
    description = spec.description
    if key:
        description += " Arguments: " + ", ".join(f"{k}={v!r}" for k, v in key) + "."
    return _make_dataset(name, X, y, spec.task, f"bundled:{name}", description)
