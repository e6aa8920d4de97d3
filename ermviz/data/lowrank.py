"""Ratings matrices: the :class:`RatingsData` container and a seeded low-rank generator.

A ratings matrix is an ``(m, n)`` matrix of which only the entries at ``Omega`` are known:
COO arrays ``rows``, ``cols`` (int64) and ``vals`` (float64), plus an optional held-out
set of entries in the same form. Two representations reach matrix completion:

* :class:`RatingsData`, made here (:func:`lowrank_ratings`) or by a reader, with the
  shape stated explicitly;
* a plain :class:`~ermviz.data.dataset.Dataset` in *triplet form*: ``task="regression"``,
  ``X`` dense of shape ``(N, 2)`` holding the (row, column) index of each entry as
  non-negative integer-valued floats and ``y`` the values (e.g. a ``user,item,rating``
  CSV file), with the test split, if any, in the same form. :func:`triplets_xy` builds
  those arrays; its function :func:`make_lowrank_ratings_xy` has the signature a bundled
  generator (``ermviz.data.generators._BUNDLED``) wants.

:func:`ratings_from_dataset` turns either into a :class:`RatingsData`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ermviz.errors import DataError


@dataclass(frozen=True, eq=False)
class RatingsData:
    """Observed entries of an ``(m, n)`` matrix, with an optional held-out part.

    Attributes
    ----------
    name : str
    shape : (m, n)
    rows, cols : (N,) int64 indices; vals : (N,) float64 values (the training entries).
    test_rows, test_cols, test_vals : held-out entries (length 0 when there are none).
    truth : (m, n) float64 or None, the noiseless matrix when it is known (synthetic).
    description, source : str
    """

    name: str
    shape: tuple[int, int]
    rows: np.ndarray
    cols: np.ndarray
    vals: np.ndarray
    test_rows: np.ndarray
    test_cols: np.ndarray
    test_vals: np.ndarray
    truth: np.ndarray | None = None
    description: str = ""
    source: str = ""
    task: str = "ratings"

    def __post_init__(self) -> None:
        m, n = self.shape
        for part, r, c, v in (
            ("train", self.rows, self.cols, self.vals),
            ("test", self.test_rows, self.test_cols, self.test_vals),
        ):
            if not (r.shape == c.shape == v.shape and r.ndim == 1):
                raise DataError(f"{self.name}: {part} rows, cols and values differ in length")
            if r.size and (r.min() < 0 or r.max() >= m or c.min() < 0 or c.max() >= n):
                raise DataError(f"{self.name}: {part} indices fall outside the {m} x {n} shape")
            if not np.all(np.isfinite(v)):
                raise DataError(f"{self.name}: {part} values must be finite")
        if self.rows.size == 0:
            raise DataError(f"{self.name}: no observed training entries")

    @property
    def n_obs(self) -> int:
        """Number of observed training entries ``|Omega|``."""
        return int(self.rows.size)

    @property
    def n_test(self) -> int:
        return int(self.test_rows.size)


def _check_int(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise DataError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def _check_float(name: str, value: Any, low: float, high: float, open_low: bool) -> float:
    ok = isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)
    if ok:
        value = float(value)
        ok = math.isfinite(value) and (value > low if open_low else value >= low)
        ok = ok and value <= high
    if not ok:
        raise DataError(f"{name} must be a number in {'(' if open_low else '['}{low}, {high}]")
    return value


def lowrank_ratings(
    m: int = 100,
    n: int = 80,
    rank: int = 3,
    density: float = 0.3,
    noise: float = 0.1,
    test_fraction: float = 0.2,
    seed: int = 0,
) -> RatingsData:
    """A seeded low-rank matrix with noisy entries observed uniformly at random.

    ``M = U V^T / sqrt(rank)`` with ``U`` (m, rank) and ``V`` (n, rank) standard normal
    (entries of ``M`` have unit variance whatever the rank). Each entry is observed with
    probability ``density`` (at least one entry); an observed value is
    ``M_ij + noise * N(0, 1)``. A fraction ``test_fraction`` of the observed entries,
    chosen uniformly, is held out (the train part keeps at least one entry).
    """
    m = _check_int("m", m, 1)
    n = _check_int("n", n, 1)
    rank = _check_int("rank", rank, 1)
    if rank > min(m, n):
        raise DataError(f"rank must be at most min(m, n) = {min(m, n)}, got {rank}")
    density = _check_float("density", density, 0.0, 1.0, True)
    noise = _check_float("noise", noise, 0.0, 1e6, False)
    test_fraction = _check_float("test_fraction", test_fraction, 0.0, 0.9, False)
    rng = np.random.default_rng(_check_int("seed", seed, 0))
    Uf = rng.standard_normal((m, rank))
    Vf = rng.standard_normal((n, rank))
    truth = Uf @ Vf.T / math.sqrt(rank)
    n_obs = max(1, int(rng.binomial(m * n, density)))
    flat = np.sort(rng.choice(m * n, size=n_obs, replace=False))
    rows = (flat // n).astype(np.int64)
    cols = (flat % n).astype(np.int64)
    vals = truth[rows, cols] + noise * rng.standard_normal(n_obs)
    n_test = min(round(test_fraction * n_obs), n_obs - 1)
    perm = rng.permutation(n_obs)
    test, train = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    args = f"m={m}, n={n}, rank={rank}, density={density}, noise={noise}, seed={seed}"
    return RatingsData(
        name="lowrank-ratings",
        shape=(m, n),
        rows=rows[train],
        cols=cols[train],
        vals=vals[train],
        test_rows=rows[test],
        test_cols=cols[test],
        test_vals=vals[test],
        truth=truth,
        description=f"Rank-{rank} matrix plus noise, entries observed at random ({args}).",
        source="generated:lowrank-ratings",
    )


def triplets_xy(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray) -> tuple:
    """``(X, y)`` of the triplet form: ``X[:, 0] = rows``, ``X[:, 1] = cols``, ``y = vals``."""
    X = np.column_stack([rows, cols]).astype(np.float64)
    return np.ascontiguousarray(X), np.asarray(vals, dtype=np.float64).copy()


def make_lowrank_ratings_xy(
    m: int = 100,
    n: int = 80,
    rank: int = 3,
    density: float = 0.3,
    noise: float = 0.1,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """All observed entries of :func:`lowrank_ratings` in triplet form (no held-out part:
    a bundled generator returns ``(X, y)``; the problem holds out its own test entries)."""
    data = lowrank_ratings(m, n, rank, density, noise, test_fraction=0.0, seed=seed)
    return triplets_xy(data.rows, data.cols, data.vals)


def _triplet_indices(name: str, X: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """(rows, cols) when ``X`` is a triplet index array, else None."""
    if not (isinstance(X, np.ndarray) and X.ndim == 2 and X.shape[1] == 2 and X.shape[0] > 0):
        return None
    if not (np.all(np.isfinite(X)) and np.all(X >= 0) and np.all(X == np.round(X))):
        return None
    return X[:, 0].astype(np.int64), X[:, 1].astype(np.int64)


def ratings_from_dataset(ds: Any, problem: str) -> RatingsData:
    """``ds`` as a :class:`RatingsData` (see the module docstring), or a one-line DataError.

    A triplet-form Dataset's shape is one more than the largest row and column index of
    its train and test parts.
    """
    if isinstance(ds, RatingsData):
        return ds
    name = getattr(ds, "name", "this dataset")
    msg = (
        f"{problem} needs a ratings matrix dataset (rows, cols, values); {name} is a feature matrix"
    )
    if getattr(ds, "task", None) != "regression":
        raise DataError(msg)
    train = _triplet_indices(name, getattr(ds, "X", None))
    if train is None:
        raise DataError(msg)
    empty = np.zeros(0, dtype=np.int64)
    test = (empty, empty)
    test_vals = np.zeros(0)
    if getattr(ds, "X_test", None) is not None and ds.X_test.shape[0] > 0:
        test = _triplet_indices(name, ds.X_test)
        if test is None:
            raise DataError(f"{name}: its test split is not in triplet form (row, col)")
        test_vals = np.asarray(ds.y_test, dtype=np.float64)
    m = int(max(train[0].max(), test[0].max(initial=0))) + 1
    n = int(max(train[1].max(), test[1].max(initial=0))) + 1
    return RatingsData(
        name=name,
        shape=(m, n),
        rows=train[0],
        cols=train[1],
        vals=np.asarray(ds.y, dtype=np.float64),
        test_rows=test[0],
        test_cols=test[1],
        test_vals=test_vals,
        description=getattr(ds, "description", ""),
        source=getattr(ds, "source", ""),
    )
