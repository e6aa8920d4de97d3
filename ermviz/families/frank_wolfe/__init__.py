"""The Frank-Wolfe family: FW, away-step FW and pairwise FW over the simplex and the l1 ball.

Problems ``svm-dual`` and ``logreg-l1`` (:mod:`.problems`), methods ``fw``, ``afw``,
``pfw`` and their step rules (:mod:`.methods`); kernels in :mod:`solvers.fw`,
:mod:`solvers.steps`, :mod:`solvers.lmo` and :mod:`solvers.active_set`. References:
Frank & Wolfe (1956); Lacoste-Julien & Jaggi, "On the global linear convergence of
Frank-Wolfe optimization variants" (NeurIPS 2015).
"""

from ermviz.families.frank_wolfe.methods import METHODS, STEP_RULES
from ermviz.families.frank_wolfe.problems import PROBLEMS

ALIASES: dict = {}

__all__ = ["ALIASES", "METHODS", "PROBLEMS", "STEP_RULES"]
