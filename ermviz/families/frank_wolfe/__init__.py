"""The Frank-Wolfe family: FW and its variants over the simplex, l1 / l2 balls, boxes,
K-sparse polytopes and the nuclear-norm ball.

Problems ``svm-dual``, ``logreg-l1``, ``least-squares`` (:mod:`.problems`) and
``matrix-completion`` (:mod:`.completion`); method classes ``fw``, ``afw``, ``pfw``,
``bpcg``, ``boosted`` and ``dicg`` and the step rules (:mod:`.methods`), over the solvers
of :mod:`.methods`, :mod:`.variants` and :mod:`.completion`, and ``face-newton``
(second-order steps on the current face, :mod:`.face_newton`); kernels in
:mod:`solvers.fw`, :mod:`solvers.fw_variants`, :mod:`solvers.face_newton`,
:mod:`solvers.nuclear`, :mod:`solvers.steps`, :mod:`solvers.lmo` and
:mod:`solvers.active_set`. References: Frank & Wolfe (1956);
Lacoste-Julien & Jaggi, "On the global linear convergence of Frank-Wolfe optimization
variants" (NeurIPS 2015) and each method class's docstring.
"""

from ermviz.families.frank_wolfe.methods import METHODS, STEP_RULES
from ermviz.families.frank_wolfe.problems import PROBLEMS

ALIASES: dict = {}

__all__ = ["ALIASES", "METHODS", "PROBLEMS", "STEP_RULES"]
