"""The PLQ family: piecewise linear-quadratic losses with linear constraints.

Problem ``plq`` (:mod:`.problem`, losses in :mod:`.losses`), methods ``rehline`` (dual
coordinate descent, :mod:`.rehline`) and ``ipm`` (structured interior-point method,
:mod:`.ipm`), both certified by the duality gap of :mod:`.certificate` on arrays laid out by
:mod:`.packing`; kernels in :mod:`solvers.rehline` and :mod:`solvers.plq_ipm`. Reference:
Dai & Qiu, "ReHLine: Regularized Composite ReLU-ReHU Loss Minimization with Linear
Computation and Linear Convergence" (NeurIPS 2023).
"""

from ermviz.families.plq import ipm, rehline
from ermviz.families.plq.problem import PROBLEMS

METHODS = {**rehline.METHODS, **ipm.METHODS}
STEP_RULES = {**rehline.STEP_RULES, **ipm.STEP_RULES}
ALIASES: dict = {}

__all__ = ["ALIASES", "METHODS", "PROBLEMS", "STEP_RULES"]
