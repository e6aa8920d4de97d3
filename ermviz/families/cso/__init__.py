"""The conditional stochastic optimization family: invariant logistic regression and
MAML on sine-wave tasks, solved by biased SGD, biased SpiderBoost, sample average
approximation, first-order MAML and the Adam variant, with samples as the budget.

Problems ``invariant-logreg`` (:mod:`.problem`) and ``maml-sine`` (:mod:`.maml_problem`);
method classes ``bsgd``, ``bspiderboost``, ``saa`` (:mod:`.methods`), ``fo-maml`` and
``adam`` (:mod:`.maml_methods`) over the shared base of :mod:`.solver`, each carrying its
declaration, listed in :mod:`.methods`' ``METHODS`` with step rules ``fixed``,
``inv-sqrt``, ``adam`` and ``newton-ls``; kernels in :mod:`solvers.cso` and :mod:`solvers.maml`.
Reference: Hu, Chen & He, "Biased stochastic first-order
methods for conditional stochastic optimization and applications in meta learning"
(NeurIPS 2020).
"""

from ermviz.families.cso import maml_problem, problem
from ermviz.families.cso.methods import METHODS, STEP_RULES

PROBLEMS = {**problem.PROBLEMS, **maml_problem.PROBLEMS}

ALIASES: dict = {}

__all__ = ["ALIASES", "METHODS", "PROBLEMS", "STEP_RULES"]
