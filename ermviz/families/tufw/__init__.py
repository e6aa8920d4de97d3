"""The TUFW family: Taylor-approximated-gradient Frank-Wolfe and its stochastic baselines.

Problem ``nonconvex-l1`` (:mod:`.problem`; it also solves the Frank-Wolfe family's
``logreg-l1``), methods ``tufw``, ``spider-fw``, ``csfw`` and ``fw-nc`` (method classes
in :mod:`.adapters`) with their step rules and the aliases of older names
(:mod:`.methods`); kernels in :mod:`solvers.tufw`. Reference: Xiong & Freund, "Using
Taylor-approximated gradients to improve the Frank-Wolfe method for empirical risk
minimization" (SIAM J. Optim.).
"""

from ermviz.families.tufw.methods import ALIASES, METHODS, STEP_RULES
from ermviz.families.tufw.problem import PROBLEMS

__all__ = ["ALIASES", "METHODS", "PROBLEMS", "STEP_RULES"]
