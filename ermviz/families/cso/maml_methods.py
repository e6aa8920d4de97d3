"""The methods of the meta-learning problem ``maml-sine``: BSGD, first-order MAML, the Adam
variant and BSpiderBoost (Hu, Chen & He, NeurIPS 2020, Section 5 and Appendix D).

* ``bsgd`` (Algorithm 1): each step draws ``meta_batch`` tasks, ``m`` support and ``mq``
  query samples of each, and follows the mean of the biased estimator (3),
  ``(I - alpha H_S(w)) grad L_Q(w - alpha grad L_S(w))`` (exact Hessian-vector products);
* ``fo-maml`` (Finn, Abbeel & Levine 2017, first-order approximation): the same samples,
  without the Hessian term;
* ``adam``: BSGD's estimator with Adam updates (Kingma & Ba 2015), the variant of Table 3;
* ``bspiderboost`` (Algorithm 2): ``n1`` tasks at each epoch start, recursive corrections
  from ``n2`` tasks (the same samples at the current and the previous weights) inside
  epochs of ``q`` steps.

The reported iterate is the last one (the non-convex output ``x_R`` of F.4 is a uniformly
drawn iterate; the last is what practice and the paper's plots use). Checkpoints are
evaluated on the held-out tasks outside the timed region, like the family's other methods.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ermviz.errors import SettingError
from ermviz.families.cso.maml_problem import MamlSineProblem
from ermviz.families.cso.solver import INNER_BATCH, ROW_SAMPLES, SEED, CsoSolver
from ermviz.families.lazy import kernel_module
from solvers.tags import STATUS_RUNNING

mk = kernel_module("solvers.maml", globals())

#: Checkpoints: every checkpoint costs one evaluation of F on the held-out tasks (tens of
#: milliseconds), so they are spaced more widely than on invariant-logreg.
MAML_ROW_RATIO = 1.15

#: Step rule -> the kernel's code (attribute names, read when a solver is built).
_RULES = {"fixed": "RULE_FIXED", "inv-sqrt": "RULE_INV_SQRT", "adam": "RULE_ADAM"}


class MamlSolver(CsoSolver):
    """BSGD (Hu, Chen & He 2020, Algorithm 1; ``second_order`` True) or first-order MAML
    on ``maml-sine``: the ``bsgd`` method class (:class:`.methods.BsgdSolver`) builds it
    on that problem."""

    name = "bsgd"
    second_order = True
    sample_word = "samples (x, y)"

    def __init__(self, problem: MamlSineProblem, step: str, settings: dict[str, Any], tol: float):
        super().__init__(problem, step, settings, tol)
        self.m = int(settings["inner_batch"])
        self.mq = problem.query_size(self.m)
        self.mom1 = np.zeros(problem.d)
        self.mom2 = np.zeros(problem.d)
        if float(settings.get("inner_growth", 0.0)) != 0.0:
            raise SettingError(
                "inner_growth is a setting of bsgd on invariant-logreg; on maml-sine the "
                "inner batch is fixed: drop inner_growth or set it to 0"
            )
        if settings.get("output", "auto") == "average":
            raise SettingError(
                "output=average is F.4's output for convex problems; maml-sine is not convex "
                "and reports the last iterate: drop output or set it to auto or last"
            )
        self._steps(0)  # compile or load the kernel outside the timed region
        self.istate[mk.I_STATUS] = STATUS_RUNNING

    def _inner_batch(self) -> float:
        return float(self.m)

    def _samples_per_step(self) -> int:
        return self.problem.meta_batch * (self.m + self.mq)

    def _first_step_samples(self) -> int:
        return self._samples_per_step()

    def _next_checkpoint(self, it: int) -> int:
        cap = int(ROW_SAMPLES // self._samples_per_step())
        return it + max(1, min(math.ceil(it * (MAML_ROW_RATIO - 1.0)), cap))

    def _steps(self, stop_at: int) -> None:
        p, s = self.problem, self.config
        rule = getattr(mk, _RULES[self.step_rule])
        gamma = float(s["gamma"]) if rule == mk.RULE_ADAM else self.step_size()
        mk.maml_advance(
            p.tasks, self.key, self.x, self.istate, self.fstate, self.mom1, self.mom2, p.hidden,
            p.alpha, p.x_low, p.x_high, self.m, self.mq, p.meta_batch, int(self.second_order),
            rule, gamma, float(s.get("beta1", 0.9)), float(s.get("beta2", 0.999)),
            float(s.get("eps", 1e-8)), stop_at,
        )  # fmt: skip
        self._last_step = float(self.fstate[1])


class FoMamlSolver(MamlSolver):
    """Method ``fo-maml``, first-order MAML (Finn, Abbeel & Levine, ICML 2017): the
    estimator without its Hessian term."""

    name = "fo-maml"
    title = "first-order MAML: the meta-gradient without its Hessian term"
    problems = (MamlSineProblem.name,)
    step_rules = ("fixed", "inv-sqrt")
    settings = (INNER_BATCH, SEED)
    reference = "Finn, Abbeel & Levine, ICML 2017 (first-order MAML)"
    second_order = False


class AdamSolver(MamlSolver):
    """Method ``adam``: BSGD's estimator with Adam updates (Kingma & Ba 2015; Hu, Chen &
    He 2020, Appendix D)."""

    name = "adam"
    title = "BSGD's biased meta-gradient with Adam updates"
    problems = (MamlSineProblem.name,)
    step_rules = ("adam",)
    settings = (INNER_BATCH, SEED)
    reference = "Hu, Chen & He, NeurIPS 2020, Appendix D (BSGD's estimator with Adam updates)"


class MamlSpiderSolver(CsoSolver):
    """BSpiderBoost (Hu, Chen & He 2020, Algorithm 2) on ``maml-sine``: the
    ``bspiderboost`` method class (:class:`.methods.SpiderSolver`) builds it on that
    problem."""

    name = "bspiderboost"
    sample_word = "samples (x, y)"

    def __init__(self, problem: MamlSineProblem, step: str, settings: dict[str, Any], tol: float):
        super().__init__(problem, step, settings, tol)
        self.m = int(settings["inner_batch"])
        self.mq = problem.query_size(self.m)
        self.wprev = self.x.copy()
        self.v = np.zeros(problem.d)
        self._steps(0)
        self.istate[mk.I_STATUS] = STATUS_RUNNING

    def _inner_batch(self) -> float:
        return float(self.m)

    def _first_step_samples(self) -> int:
        return int(self.config["n1"]) * (self.m + self.mq)

    def _next_checkpoint(self, it: int) -> int:
        s = self.config
        per_step = (self.m + self.mq) * (int(s["n1"]) / int(s["q"]) + int(s["n2"]))
        cap = int(ROW_SAMPLES // per_step)
        return it + max(1, min(math.ceil(it * (MAML_ROW_RATIO - 1.0)), cap))

    def _steps(self, stop_at: int) -> None:
        p, s = self.problem, self.config
        mk.spider_advance(
            p.tasks, self.key, self.x, self.wprev, self.v, self.istate, self.fstate, p.hidden,
            p.alpha, p.x_low, p.x_high, self.m, self.mq, int(s["q"]), int(s["n1"]),
            int(s["n2"]), self.step_size(), stop_at,
        )  # fmt: skip
        self._last_step = float(self.fstate[1])
