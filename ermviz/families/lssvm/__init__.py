"""The LS-SVM family: least-squares SVMs with a Gaussian kernel, certified by the
relative duality gap.

Problem ``lssvm`` (:mod:`.problem`), methods ``cg-two-system``, ``cg-reduced`` and ``smo``
with step rules ``cg`` and ``smo`` (:mod:`.methods`); kernels in :mod:`solvers.lssvm`.
References: Suykens & Vandewalle (1999); Chu, Ong & Keerthi (2005); Keerthi & Shevade
(2003).
"""

from ermviz.families.lssvm.methods import METHODS, STEP_RULES
from ermviz.families.lssvm.problem import PROBLEMS

ALIASES: dict = {}

__all__ = ["ALIASES", "METHODS", "PROBLEMS", "STEP_RULES"]
