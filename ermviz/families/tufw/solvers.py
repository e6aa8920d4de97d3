"""Deprecated alias of :mod:`.adapters`: the TUFW family's solver adapters were renamed so
that no module of ermviz is called ``solvers`` besides the top-level kernel package."""

from __future__ import annotations

import warnings

from ermviz.families.tufw.adapters import (  # noqa: F401
    CsfwSolver,
    EstimatorSolver,
    GlmFrankWolfeSolver,
    SpiderFwSolver,
    TufwSolver,
)

warnings.warn(
    "ermviz.families.tufw.solvers is deprecated: import from ermviz.families.tufw.adapters",
    DeprecationWarning,
    stacklevel=2,
)
