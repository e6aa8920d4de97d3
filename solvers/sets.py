"""Deprecated alias of :mod:`solvers.lmo`, where the feasible sets' LMOs now live.

Every LMO of the kernels is in :mod:`solvers.lmo` (issue 33: one home per kernel
concept); this module re-exports the names it used to define, so old imports keep working.
"""

from __future__ import annotations

import warnings

from solvers.lmo import (  # noqa: F401
    N_SET_PARAMS,
    P_HI,
    P_K,
    P_LO,
    P_RADIUS,
    SET_BOX,
    SET_CODES,
    SET_KSPARSE,
    SET_L1,
    SET_L2,
    SET_SIMPLEX,
    _ksparse_select,
    atom_dot,
    atom_equal,
    contains,
    lmo,
    max_nnz,
    set_params,
)

warnings.warn(
    "solvers.sets is deprecated: import the feasible sets' LMOs from solvers.lmo",
    DeprecationWarning,
    stacklevel=2,
)
