"""Preprocessing, only when asked: split, standardize, normalize rows, add an intercept.

Loading never scales or centres; these functions return new read-only datasets in the same
storage (CSR stays CSR) and leave the targets unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ermviz.data.dataset import Dataset, Matrix, _make_dataset
from ermviz.data.generators import _int_arg
from ermviz.errors import DataError


def _derived(ds: Dataset, X: Any, X_test: Any, what: str) -> Dataset:
    return _make_dataset(
        ds.name,
        X,
        ds.y,
        ds.task,
        ds.source,
        f"{ds.description} [{what}]".strip(),
        X_test=X_test,
        y_test=ds.y_test,
        dense=not ds.is_sparse,
    )


def add_intercept(ds: Dataset) -> Dataset:
    """Append a constant-1 feature as the last column (to train and test parts).

    Parameters
    ----------
    ds : Dataset
        Data with ``X`` of shape (n, p).

    Returns
    -------
    Dataset
        ``X`` of shape (n, p + 1) in the same storage (CSR stays CSR).
    """

    def widen(X: Matrix) -> Matrix:
        ones = np.ones((X.shape[0], 1))
        if sp.issparse(X):
            return sp.hstack([X, sp.csr_matrix(ones)], format="csr")
        return np.hstack([X, ones])

    X_test = None if ds.X_test is None else widen(ds.X_test)
    return _derived(ds, widen(ds.X), X_test, "intercept column appended")


def standardize(ds: Dataset) -> Dataset:
    """Scale features to unit variance; dense data are also centred to zero mean.

    The means and standard deviations come from the training part only and are applied
    unchanged to the test part. Sparse data are **not centred** (centring would fill in
    every zero); each column is only divided by its standard deviation. Constant columns
    are left unscaled (scikit-learn's ``StandardScaler`` convention). The targets ``y``
    are never changed.

    Parameters
    ----------
    ds : Dataset
        Data with ``X`` of shape (n, p).

    Returns
    -------
    Dataset
        Same shapes and storage.
    """
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler(with_mean=not ds.is_sparse).fit(ds.X)
    X_test = None if ds.X_test is None else scaler.transform(ds.X_test)
    what = "scaled to unit variance (train statistics, not centred: sparse)"
    if not ds.is_sparse:
        what = "standardized with train mean and standard deviation"
    return _derived(ds, scaler.transform(ds.X), X_test, what)


def normalize_rows(ds: Dataset) -> Dataset:
    """Scale every row (train and test) to unit Euclidean norm; all-zero rows stay zero.

    Parameters
    ----------
    ds : Dataset
        Data with ``X`` of shape (n, p).

    Returns
    -------
    Dataset
        Same shapes and storage.
    """
    from sklearn.preprocessing import normalize

    X_test = None if ds.X_test is None else normalize(ds.X_test, norm="l2")
    return _derived(ds, normalize(ds.X, norm="l2"), X_test, "rows scaled to unit l2 norm")


def train_test_split(ds: Dataset, test_size: float | int = 0.25, seed: int = 0) -> Dataset:
    """Split the rows into a training and a test part, reproducibly.

    Binary sets are split stratified, so both parts keep the class proportions.

    Parameters
    ----------
    ds : Dataset
        Data without a test split, ``X`` of shape (n, p).
    test_size : float in (0, 1) or int in [1, n - 1], default=0.25
        Fraction or number of rows that go to the test part.
    seed : int, default=0
        Seed of the shuffle; the same seed gives the same split.

    Returns
    -------
    Dataset
        ``X`` of shape (n - n_test, p) and ``X_test`` of shape (n_test, p).

    Raises
    ------
    DataError
        If ``ds`` already has a test split or the sizes do not allow a split.
    """
    from sklearn.model_selection import train_test_split as sk_split

    if ds.X_test is not None:
        raise DataError(
            f"{ds.name} already has a test split ({ds.n_test} rows); load it with "
            "with_test=False to make your own split"
        )
    if isinstance(test_size, bool) or not isinstance(test_size, int | float | np.integer):
        raise DataError(f"test_size must be a fraction or a row count, got {test_size!r}")
    if isinstance(test_size, int | np.integer):
        if not 1 <= test_size <= ds.n - 1:
            raise DataError(f"test_size={test_size} rows must be between 1 and n - 1 = {ds.n - 1}")
    elif not 0.0 < test_size < 1.0:
        raise DataError(f"test_size={test_size} must be a fraction strictly between 0 and 1")
    seed = _int_arg("seed", seed, 0)
    stratify = ds.y if ds.task == "binary" else None
    try:
        X_tr, X_te, y_tr, y_te = sk_split(
            ds.X, ds.y, test_size=test_size, random_state=seed, stratify=stratify
        )
    except ValueError as exc:
        raise DataError(
            f"{ds.name}: cannot split {ds.n} rows with test_size={test_size} "
            f"({' '.join(str(exc).split())}); use a larger data set or another test_size"
        ) from None
    return _make_dataset(
        ds.name,
        X_tr,
        y_tr,
        ds.task,
        ds.source,
        f"{ds.description} [split: test_size={test_size}, seed={seed}]".strip(),
        X_test=X_te,
        y_test=y_te,
        dense=not ds.is_sparse,
    )


def preprocess(
    ds: Dataset,
    *,
    intercept: bool = False,
    standardize: bool = False,
    normalize: bool = False,
    test_size: float | int | None = None,
    seed: int = 0,
) -> Dataset:
    """Apply the requested steps in a fixed order: split, standardize, normalize, intercept.

    Splitting first keeps test rows out of the standardization statistics; the intercept
    comes last so that its column stays exactly 1.

    Parameters
    ----------
    ds : Dataset
        Data with ``X`` of shape (n, p).
    intercept : bool, default=False
        Append a constant-1 column (:func:`add_intercept`).
    standardize : bool, default=False
        :func:`standardize` with training statistics.
    normalize : bool, default=False
        :func:`normalize_rows`.
    test_size : float or int, optional
        Make a seeded split (:func:`train_test_split`); ``None`` keeps the data as is.
    seed : int, default=0
        Seed of the split.

    Returns
    -------
    Dataset
        The processed data; ``ds`` itself when no step is requested.
    """
    for flag, value in (
        ("intercept", intercept),
        ("standardize", standardize),
        ("normalize", normalize),
    ):
        if not isinstance(value, bool):
            raise DataError(f"preprocess: {flag} must be True or False, got {value!r}")
    out = ds
    if test_size is not None:
        out = train_test_split(out, test_size=test_size, seed=seed)
    if standardize:
        out = _standardize(out)
    if normalize:
        out = normalize_rows(out)
    if intercept:
        out = add_intercept(out)
    return out


# ``preprocess`` has a parameter called ``standardize``; keep a handle on the function.
_standardize = standardize
