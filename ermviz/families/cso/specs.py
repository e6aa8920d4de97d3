"""Deprecated alias: the family's method declarations now live in :mod:`.methods`, beside
the solvers they build (issue 33: one family shape)."""

from __future__ import annotations

import warnings

from ermviz.families.cso.methods import METHODS, SAA_INNER  # noqa: F401

warnings.warn(
    "ermviz.families.cso.specs is deprecated: import METHODS from ermviz.families.cso",
    DeprecationWarning,
    stacklevel=2,
)
