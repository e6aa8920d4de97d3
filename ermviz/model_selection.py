"""Choosing the l1 radius of ``logreg-l1`` by k-fold cross-validation.

Xiong & Freund choose the radius lambda of problem (7.1) by cross-validation; their exact
protocol is not known (ALGORITHMS.md A.1, UNCONFIRMED), so grid, folds and score are
arguments here. Default: stratified 5-fold CV over ``10^-1 ... 10^3`` (9 points), highest
mean held-out accuracy, ties to the smaller radius (the sparser model).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ermviz.data import Dataset
from ermviz.errors import SettingError
from ermviz.families.frank_wolfe.problems import LogregL1
from ermviz.registry import build_solver
from ermviz.runner import Budget, Run


@dataclass
class RadiusCV:
    """Result of :func:`choose_radius_cv`.

    Attributes
    ----------
    radius : float
        The chosen radius.
    scores : pandas.DataFrame
        One row per (radius, fold): ``radius, fold, accuracy, gap, iterations``.
    """

    radius: float
    scores: pd.DataFrame

    def table(self) -> pd.DataFrame:
        """Mean and standard deviation of the held-out accuracy per radius."""
        return self.scores.groupby("radius")["accuracy"].agg(["mean", "std"]).reset_index()


def choose_radius_cv(
    dataset: Dataset,
    radii: Any = None,
    *,
    folds: int = 5,
    seed: int = 0,
    method: str = "pfw",
    step: str = "exact",
    tol: float = 1e-4,
    max_iter: int = 20_000,
    max_time: float = 30.0,
) -> RadiusCV:
    """Pick the l1 radius with the best mean held-out accuracy.

    Parameters
    ----------
    dataset : Dataset
        A binary dataset (labels -1/+1); only its training part is used.
    radii : array-like of float, optional
        Candidate radii (> 0); default ``np.logspace(-1, 3, 9)``.
    folds : int
        Number of stratified folds (2 <= folds <= smallest class size).
    seed : int
        Seed of the fold assignment.
    method, step, tol, max_iter, max_time
        How each fold is solved (FW gap ``tol``; the fit needs no more accuracy than the
        score resolves).
    """
    from sklearn.model_selection import StratifiedKFold

    grid = np.logspace(-1, 3, 9) if radii is None else np.asarray(radii, dtype=float)
    if grid.size == 0 or np.any(~np.isfinite(grid)) or np.any(grid <= 0):
        raise SettingError("radii must be finite and > 0; e.g. radii=[0.1, 1, 10, 100]")
    counts = np.unique(dataset.y, return_counts=True)[1]
    if not (2 <= folds <= counts.min()):
        raise SettingError(f"folds={folds} is out of range; allowed [2, {counts.min()}]")
    X, y = dataset.X, np.asarray(dataset.y)
    rows = []
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for f, (tr, te) in enumerate(splitter.split(np.zeros(len(y)), y)):
        train = Dataset(
            name=f"{dataset.name}[cv{f}]", X=X[tr], y=y[tr], task="binary", source=dataset.source
        )
        for radius in grid:
            pb = LogregL1.build(train, radius=float(radius))
            run = Run(
                build_solver(pb, method, step, {}, tol),
                Budget(tol=tol, max_iter=max_iter, max_time=max_time),
            ).run()
            x = run.solver.iterate()
            pred = np.where(np.asarray(X[te] @ x).ravel() >= 0, 1.0, -1.0)
            last = run.trace.last() or {}
            rows.append(
                {
                    "radius": float(radius),
                    "fold": f,
                    "accuracy": float(np.mean(pred == y[te])),
                    "gap": last.get("certificate", np.nan),
                    "iterations": int(last.get("iteration", 0)),
                }
            )
    scores = pd.DataFrame(rows)
    means = scores.groupby("radius")["accuracy"].mean()
    best = float(means.index[np.flatnonzero(means.to_numpy() >= means.max() - 1e-12)[0]])
    return RadiusCV(best, scores)
