"""Radius selection by cross-validation against per-fold cvxpy + Clarabel fits."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from ermviz.data import load_dataset
from ermviz.errors import SettingError
from ermviz.model_selection import choose_radius_cv

cp = pytest.importorskip("cvxpy")


def _cvx_fit(X, y, radius):
    w = cp.Variable(X.shape[1])
    A = sp.csr_matrix(X).multiply(-y[:, None]).tocsr()
    prob = cp.Problem(cp.Minimize(cp.sum(cp.logistic(A @ w)) / X.shape[0]), [cp.norm1(w) <= radius])
    prob.solve(solver=cp.CLARABEL)
    return w.value


@pytest.mark.requires_data("breast-cancer_scale")
@pytest.mark.slow
def test_cv_accuracies_match_independent_fits(real_data):
    from sklearn.model_selection import StratifiedKFold

    ds = load_dataset("breast-cancer_scale")
    radii = [0.1, 1.0, 10.0]
    result = choose_radius_cv(ds, radii, folds=3, seed=4, tol=1e-7)
    X, y = ds.X, np.asarray(ds.y)
    folds = StratifiedKFold(3, shuffle=True, random_state=4).split(np.zeros(len(y)), y)
    for f, (tr, te) in enumerate(folds):
        for r in radii:
            w = _cvx_fit(X[tr], y[tr], r)
            acc = np.mean(np.where(np.asarray(X[te] @ w).ravel() >= 0, 1, -1) == y[te])
            sc = result.scores
            row = sc[(sc["fold"] == f) & (sc["radius"] == r)].iloc[0]
            assert row["gap"] <= 1e-7
            # Same optimum up to solver accuracy: at most one held-out point may flip.
            assert abs(row["accuracy"] - acc) <= 1.0 / len(te) + 1e-12
    table = result.table()
    assert result.radius == table.loc[table["mean"].idxmax(), "radius"]


def test_cv_rejects_bad_grids():
    ds = load_dataset("toy-2d")
    with pytest.raises(SettingError, match="radii"):
        choose_radius_cv(ds, [1.0, -2.0])
    with pytest.raises(SettingError, match="folds"):
        choose_radius_cv(ds, [1.0], folds=1)
