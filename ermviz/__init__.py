"""ermviz: an interactive laboratory for empirical-risk-minimization solvers.

The numerical core lives in the separate package :mod:`solvers` (numpy + numba only).
This package holds everything around it: data loading, problem definitions, the method
registry, the runner (threads, chunked stepping, traces), the CLI and the dashboard.
"""

from ermviz.errors import DataError, ErmvizError, SettingError

__version__ = "0.1.0"

__all__ = ["DataError", "ErmvizError", "SettingError", "__version__"]
