"""The PLQ family: piecewise linear-quadratic losses with linear constraints.

Problem ``plq`` (:mod:`.problem`, losses in :mod:`.losses`), methods ``rehline`` (dual
coordinate descent, :mod:`.rehline`), ``ipm`` (structured interior-point method,
:mod:`.ipm`) and ``primal-newton`` (Newton-CG on the primal of the smooth, unconstrained
problems, :mod:`.newton`), all certified by the duality gap (:mod:`.certificate`) on arrays
laid out by :mod:`.packing`; kernels in :mod:`solvers.rehline`, :mod:`solvers.plq_ipm` and
:mod:`solvers.plq_primal`. Reference:
Dai & Qiu, "ReHLine: Regularized Composite ReLU-ReHU Loss Minimization with Linear
Computation and Linear Convergence" (NeurIPS 2023).
"""

from ermviz.families.plq import ipm, newton, rehline
from ermviz.families.plq.problem import PROBLEMS

METHODS = {**rehline.METHODS, **ipm.METHODS, **newton.METHODS}
STEP_RULES = {**rehline.STEP_RULES, **ipm.STEP_RULES, **newton.STEP_RULES}
ALIASES: dict = {}

__all__ = ["ALIASES", "METHODS", "PROBLEMS", "STEP_RULES"]
