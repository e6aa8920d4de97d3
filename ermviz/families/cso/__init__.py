"""The conditional stochastic optimization family: invariant logistic regression solved by
biased SGD, biased SpiderBoost and sample average approximation, with inner samples as
the budget.

Problem ``invariant-logreg`` (:mod:`.problem`), methods ``bsgd``, ``bspiderboost`` and
``saa`` with step rules ``fixed``, ``inv-sqrt`` and ``newton-ls`` (:mod:`.methods`);
kernels in :mod:`solvers.cso`. Reference: Hu, Chen & He, "Biased stochastic first-order
methods for conditional stochastic optimization and applications in meta learning"
(NeurIPS 2020).
"""

from ermviz.families.cso.methods import METHODS, STEP_RULES
from ermviz.families.cso.problem import PROBLEMS

ALIASES: dict = {}

__all__ = ["ALIASES", "METHODS", "PROBLEMS", "STEP_RULES"]
