"""The scaling check several families share: warn, before a run, about badly scaled features.

First-order and coordinate methods slow down by orders of magnitude when the features'
scales differ widely (the problem's curvature is then that of the largest scale, its
progress limited by the smallest), while ``--standardize`` removes exactly that. A problem
declares that it has this failure mode with a class attribute ``scaling``, a
:class:`ScalingCheck` (which methods suffer, what makes the unit scale matter, the method
that copes, if any); the CLI (at set-up, on stderr) and the dashboard (once per race, in
its own words, see :func:`ermviz.app.state.messages.dashboard_wording`) both ask
:func:`scaling_notices` and print the same one line; the scikit-learn estimators
(:mod:`ermviz.estimators`) word :func:`scaling_issue` as a ``UserWarning`` naming
``StandardScaler``.

The criterion (:data:`SCALE_SPREAD`): the scale of a feature is its largest magnitude
``max_i |x_ij|`` (insensitive to how many rows use the feature, so binary sparse sets such
as a1a or w8a have scale 1 everywhere). The check fires when the largest scale exceeds the
smallest by more than :data:`SCALE_SPREAD`; problems whose conditioning also depends on the
features' size against 1 (a ridge ``1/C``, a fixed radius, a constant-1 feature: svm-dual,
logreg-l1, plq) count 1 among the scales. It never fires on data whose every non-constant
feature already has unit standard deviation (standardized: ``--standardize`` would change
nothing; standardized sparse sets such as a9a reach spreads of 180 from their rare features).

Measured (PFW exact, 2 s budgets, iterations to a gap of 1e-8 times the initial one):
rescaling every feature of standardized wdbc by ``s`` multiplies svm-dual's iterations by
5, 25 and 100 at ``s`` = 3, 10 and 30 and runs out of the budget at 100 (logreg-l1 with
radius 10: 15 and 60 at 3 and 10); rescaling one feature or half of them (least squares on
kin8nm and friedman) multiplies them by 20-40 at 30, 200-500 at 100, 1000-5000 at 300. On
the data as shipped, the scaled catalog and bundled sets have spreads of at most 60
(svmguide3, whose raw features PFW solves faster than standardized ones), the unscaled ones
255 (skin_nonskin) and up, and those are far slower raw than standardized to an absolute
gap of 1e-6 (svm-dual on liver-disorders: unconverged after 1.3e6 iterations against 1e4;
logreg-l1 on it: 7e3 against 143; least squares on cadata and house_8L: unconverged after
4e4 against 434 and 46).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

#: The check fires when the features' largest magnitudes span more than this factor
#: (1 counted among them where the problem says so); see the module docstring.
SCALE_SPREAD = 1e2
#: A feature whose standard deviation is within this of 1 counts as standardized.
_UNIT_STD_TOL = 1e-4


@dataclass(frozen=True)
class ScalingCheck:
    """A problem's declaration that badly scaled features slow its methods down.

    Parameters
    ----------
    slow : str
        The methods that slow down, in words ("Frank-Wolfe methods").
    methods : tuple of str or None
        The methods the warning concerns (None: every method solving the problem).
    copes : str
        A method that solves the problem as posed whatever the scaling ("" when none).
    unit : str
        What makes the features' size against 1 matter, in words ("the constant-1
        feature"); "" when only their spread matters (a problem invariant under a common
        rescaling of the features, e.g. least squares with its data-derived radius).
    """

    slow: str
    methods: tuple[str, ...] | None = None
    copes: str = ""
    unit: str = ""

    def concerns(self, method: str) -> bool:
        return self.methods is None or method in self.methods


@dataclass(frozen=True)
class FeatureScales:
    """The per-feature scales of a data matrix (see :func:`feature_scales`)."""

    low: float  # smallest max |x_ij| over the features that are not all zero
    high: float  # largest
    standardized: bool  # every non-constant feature has unit standard deviation

    def spread(self, unit: bool) -> float:
        """``high / low``, with 1 counted among the scales when ``unit``; 1 for no data."""
        low, high = self.low, self.high
        if unit:
            low, high = min(low, 1.0) if low > 0 else 1.0, max(high, 1.0)
        return high / low if low > 0 else 1.0


def feature_scales(X: Any) -> FeatureScales:
    """The scales of the columns of ``X`` (dense or sparse, shape (n, p)) in one pass,
    without a copy of a dense ``X``."""
    with np.errstate(over="ignore", invalid="ignore"):  # inf or huge values: no warning
        return _feature_scales(X)


def _feature_scales(X: Any) -> FeatureScales:
    n, p = X.shape
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        big = np.zeros(p)
        np.maximum.at(big, X.indices, np.abs(X.data))
        s1 = np.bincount(X.indices, weights=X.data, minlength=p)
        s2 = np.bincount(X.indices, weights=X.data * X.data, minlength=p)
    else:
        X = np.asarray(X)
        if n == 0:
            return FeatureScales(0.0, 0.0, False)
        big = np.maximum(X.max(axis=0), -X.min(axis=0))
        s1 = X.sum(axis=0)
        s2 = np.einsum("ij,ij->j", X, X)
    mean = s1 / max(n, 1)
    msq = s2 / max(n, 1)
    var = np.maximum(msq - mean * mean, 0.0)
    varying = var > 1e-12 * np.maximum(msq, 1e-300)
    std = np.sqrt(var[varying])
    standardized = bool(std.size) and bool(np.all(np.abs(std - 1.0) <= _UNIT_STD_TOL))
    used = big[big > 0]
    if used.size == 0:
        return FeatureScales(0.0, 0.0, standardized)
    return FeatureScales(float(used.min()), float(used.max()), standardized)


def problem_scales(problem: Any) -> FeatureScales:
    """:func:`feature_scales` of the matrix the problem's methods use (``problem.X``: with
    its appended constant-1 column, if any), computed once per problem."""
    cached = getattr(problem, "_feature_scales", None)
    if cached is None:
        X = getattr(problem, "X", None)
        cached = feature_scales(problem.dataset.X if X is None else X)
        try:
            problem._feature_scales = cached
        except AttributeError:  # pragma: no cover - a problem with __slots__
            pass
    return cached


@dataclass(frozen=True)
class ScalingIssue:
    """Badly scaled features for a method, as :func:`scaling_issue` finds them: the facts
    each caller words in its own terms (the CLI's ``--standardize``, the dashboard's
    checkbox, scikit-learn's ``StandardScaler`` for the estimators)."""

    check: ScalingCheck
    scales: FeatureScales
    spread: float

    def describe(self) -> str:
        """The facts in words: the scale range, against what, and the spread."""
        against = f", against the unit scale of {self.check.unit}" if self.check.unit else ""
        return (
            f"largest |x| per feature from {self.scales.low:.3g} to {self.scales.high:.3g}"
            f"{against}: a spread of {self.spread:.3g} > {SCALE_SPREAD:g}"
        )


def scaling_issue(problem: Any, method: str) -> ScalingIssue | None:
    """The badly scaled features of ``problem`` for ``method``, or None: when the problem
    declares no :class:`ScalingCheck`, the check does not concern ``method``, the features
    are standardized or their scales span at most :data:`SCALE_SPREAD`."""
    check: ScalingCheck | None = getattr(type(problem), "scaling", None)
    if check is None or not check.concerns(method):
        return None
    scales = problem_scales(problem)
    spread = scales.spread(bool(check.unit))
    if scales.standardized or spread <= SCALE_SPREAD:
        return None
    return ScalingIssue(check, scales, spread)


def scaling_notices(problem: Any, method: str) -> list[str]:
    """The one-line warning about ``problem``'s feature scales for ``method`` (CLI wording:
    the dashboard translates the options), or nothing (see :func:`scaling_issue`)."""
    issue = scaling_issue(problem, method)
    if issue is None:
        return []
    copes = (
        f", --method {issue.check.copes} solves the problem as posed" if issue.check.copes else ""
    )
    return [
        f"features of {problem.dataset.name!r} are badly scaled for {issue.check.slow} "
        f"({issue.describe()}), which may need very many iterations; "
        f"--standardize rescales the features (this changes the problem){copes}"
    ]
