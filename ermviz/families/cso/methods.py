"""The conditional stochastic optimization family's methods: BSGD, BSpiderBoost and SAA.

* ``bsgd``: biased SGD (Hu, Chen & He, NeurIPS 2020, Algorithm 1; ALGORITHMS.md F.4):
  one outer sample and ``m`` inner samples per step, the biased estimator (3); fixed or
  growing inner batch, step ``gamma`` (``fixed``) or ``gamma / sqrt(t + 1)``
  (``inv-sqrt``); reports the step-weighted average of the iterates (the convex output
  of F.4) or the last iterate;
* ``bspiderboost``: biased SpiderBoost (Algorithm 2, F.5): a large batch ``n1`` at each
  epoch start, recursive corrections from ``n2`` pairs inside epochs of ``q`` steps;
* ``saa``: sample average approximation (F.6): ``outer x inner_batch`` samples drawn at
  once, then the deterministic problem (logistic regression on the averaged features)
  solved by damped Newton, one trace row per Newton step.

Every method counts its inner samples and records checkpoints as the family's solver base
does (:mod:`ermviz.families.cso.solver`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ermviz.base import MethodSpec, Solver, StepRuleSpec, methods_from
from ermviz.families.cso.maml_methods import (
    AdamSolver,
    FoMamlSolver,
    MamlSolver,
    MamlSpiderSolver,
)
from ermviz.families.cso.maml_problem import MamlSineProblem
from ermviz.families.cso.problem import InvariantLogregProblem
from ermviz.families.cso.solver import INNER_BATCH, ROW_RATIO, ROW_SAMPLES, SEED, CsoSolver
from ermviz.families.lazy import kernel_module
from ermviz.settings import Setting
from solvers.tags import (
    STATUS_RUNNING,
    STEP_NEWTON,
)

k = kernel_module("solvers.cso", globals())

REFERENCES = {
    "bsgd": "Hu, Chen & He, NeurIPS 2020, Algorithm 1 (BSGD)",
    "bspiderboost": "Hu, Chen & He, NeurIPS 2020, Algorithm 2 (BSpiderBoost)",
    "saa": "Hu, Chen & He, NeurIPS 2020 (SAA baseline; Hu, Chen & He 2019, arXiv:1905.11957)",
}

#: SAA's outer samples when neither ``outer`` nor a samples budget gives them.
DEFAULT_OUTER = 20_000

_GAMMA = Setting(
    "gamma",
    "float",
    0.0,
    "step size gamma; 0 = the problem's suggested step (invariant-logreg 0.03, maml-sine 0.01)",
    low=0.0,
)
_ADAM = (
    Setting("gamma", "float", 1e-3, "Adam's step size (Kingma & Ba: 1e-3)", low=0.0,
            low_open=True),
    Setting("beta1", "float", 0.9, "decay of the first moment", low=0.0, high=1.0, high_open=True),
    Setting("beta2", "float", 0.999, "decay of the second moment", low=0.0, high=1.0,
            high_open=True),
    Setting("eps", "float", 1e-8, "added to the root of the second moment", low=0.0,
            low_open=True),
)  # fmt: skip
STEP_RULES: dict[str, StepRuleSpec] = {
    "fixed": StepRuleSpec(
        name="fixed", title="constant step gamma", settings=(_GAMMA,), reference=REFERENCES["bsgd"]
    ),
    "inv-sqrt": StepRuleSpec(
        name="inv-sqrt",
        title="gamma / sqrt(t + 1) (the convex schedule of F.4)",
        settings=(_GAMMA,),
        reference=REFERENCES["bsgd"],
    ),
    "adam": StepRuleSpec(
        name="adam",
        title="Adam update of the biased estimate (bias-corrected moments)",
        settings=_ADAM,
        reference=(
            "Kingma & Ba, ICLR 2015; Hu, Chen & He, NeurIPS 2020, Appendix D (the Adam variant)"
        ),
    ),
    "newton-ls": StepRuleSpec(
        name="newton-ls",
        title="Newton step with backtracking (Armijo 1e-4) on the sample-average objective",
        settings=(),
        reference="Boyd & Vandenberghe 2004, Algorithm 9.5",
    ),
}

LOGREG, MAML = InvariantLogregProblem.name, MamlSineProblem.name
#: SAA's default inner batch: the paper's m at invariant-logreg's default noise ratio 10
#: (Appendix Table 4: 100, 464, 1000 at the ratios 1, 10, 100).
SAA_INNER = 464


class BsgdSolver(CsoSolver):
    """Method ``bsgd``, BSGD (Hu, Chen & He 2020, Algorithm 1): one outer and ``m_t``
    inner samples per step; on ``maml-sine`` it is :class:`.maml_methods.MamlSolver`."""

    name = "bsgd"
    title = "biased SGD: m inner samples per outer sample, the biased gradient estimator"
    problems = (LOGREG, MAML)
    step_rules = ("fixed", "inv-sqrt")
    settings = (
        INNER_BATCH,
        Setting(
            "inner_growth",
            "float",
            0.0,
            "time-varying inner batch m_t = ceil(m (t + 1)^growth); 0 = fixed m (invariant-logreg)",
            low=0.0,
            high=2.0,
        ),
        Setting(
            "output",
            "choice",
            "auto",
            "iterate reported: the step-weighted average (F.4, convex) or the last; auto "
            "= the average on invariant-logreg, the last on maml-sine",
            choices=("auto", "average", "last"),
        ),
        SEED,
    )
    reference = REFERENCES["bsgd"]

    @classmethod
    def build(cls, problem: Any, step: str, settings: dict[str, Any], tol: float) -> Solver:
        if problem.name == MAML:
            return MamlSolver(problem, step, settings, tol)
        return cls(problem, step, settings, tol)

    def __init__(self, problem, step, settings, tol):
        super().__init__(problem, step, settings, tol)
        self.xavg = self.x.copy()
        self._gamma = self.step_size()
        self._decay = 1 if step == "inv-sqrt" else 0
        self._growth = float(settings["inner_growth"])
        self._steps(0)  # compile or load the kernel outside the timed region
        self.istate[k.I_STATUS] = STATUS_RUNNING

    def _inner_batch(self) -> float:
        m, t = int(self.config["inner_batch"]), int(self.istate[k.I_K])
        return float(m if self._growth == 0.0 else math.ceil(m * (t + 1.0) ** self._growth))

    def _reported(self) -> np.ndarray:
        if self.config["output"] in ("auto", "average") and self.istate[k.I_K] > 0:
            return self.xavg
        return self.x

    def _steps(self, stop_at: int) -> None:
        p = self.problem
        k.bsgd_advance(
            p.A, p.y, self.key, self.x, self.xavg, self.eta, self.istate, self.fstate,
            int(self.config["inner_batch"]), self._growth, self._gamma, self._decay, p.l2,
            stop_at,
        )  # fmt: skip
        self._last_step = float(self.fstate[1])


class SpiderSolver(CsoSolver):
    """Method ``bspiderboost``, BSpiderBoost (Hu, Chen & He 2020, Algorithm 2): SPIDER
    estimator with biased inner batches; on ``maml-sine`` it is
    :class:`.maml_methods.MamlSpiderSolver`."""

    name = "bspiderboost"
    title = "biased SpiderBoost: variance-reduced recursive estimator"
    problems = (LOGREG, MAML)
    step_rules = ("fixed",)
    settings = (
        INNER_BATCH,
        Setting("q", "int", 20, "epoch length q (steps)", low=1, high=1e9),
        Setting("n1", "int", 200, "outer samples at each epoch start", low=1, high=1e9),
        Setting("n2", "int", 10, "outer samples per step inside an epoch", low=1, high=1e9),
        SEED,
    )
    reference = REFERENCES["bspiderboost"]

    @classmethod
    def build(cls, problem: Any, step: str, settings: dict[str, Any], tol: float) -> Solver:
        if problem.name == MAML:
            return MamlSpiderSolver(problem, step, settings, tol)
        return cls(problem, step, settings, tol)

    def _first_step_samples(self) -> int:
        return int(self.config["n1"]) * int(self.config["inner_batch"])

    def __init__(self, problem, step, settings, tol):
        super().__init__(problem, step, settings, tol)
        self.xprev = self.x.copy()
        self.v = np.zeros(problem.d)
        self._steps(0)
        self.istate[k.I_STATUS] = STATUS_RUNNING

    def _next_checkpoint(self, it: int) -> int:
        s = self.config
        per_step = int(s["inner_batch"]) * (int(s["n1"]) / int(s["q"]) + int(s["n2"]))
        gap = max(1, min(math.ceil(it * (ROW_RATIO - 1.0)), int(ROW_SAMPLES // per_step)))
        return it + gap

    def _steps(self, stop_at: int) -> None:
        p, s = self.problem, self.config
        k.spider_advance(
            p.A, p.y, self.key, self.x, self.xprev, self.v, self.eta, self.istate, self.fstate,
            int(s["inner_batch"]), int(s["q"]), int(s["n1"]), int(s["n2"]), self.step_size(),
            p.l2, stop_at,
        )  # fmt: skip
        self._last_step = float(self.fstate[1])


class SaaSolver(CsoSolver):
    """Method ``saa``, sample average approximation (Hu, Chen & He 2019, arXiv:1905.11957;
    ALGORITHMS.md F.6): draw ``outer x inner_batch`` samples, then Newton on their
    average."""

    step_kind = STEP_NEWTON
    name = "saa"
    # Its whole samples budget is drawn before the first Newton step: from 0 to n x m at
    # once, then constant.
    work_jumps = ("samples",)
    title = "sample average approximation: draw n x m samples, solve by Newton"
    problems = (LOGREG,)
    step_rules = ("newton-ls",)
    settings = (
        Setting(
            "inner_batch",
            "int",
            SAA_INNER,
            "inner samples m per outer sample (the paper's at noise ratio 10; 100 at "
            "ratio 1, 1000 at ratio 100)",
            low=1,
            high=1e7,
        ),
        Setting(
            "outer",
            "int",
            0,
            "outer samples n; 0 = the samples budget (--max-samples) // inner_batch, "
            f"or {DEFAULT_OUTER:,} without one",
            low=0,
            high=1e8,
        ),
        SEED,
    )
    reference = REFERENCES["saa"]

    def __init__(self, problem, step, settings, tol):
        super().__init__(problem, step, settings, tol)
        self.outer = int(settings["outer"])
        self.E: np.ndarray | None = None
        self.b: np.ndarray | None = None
        self._done = False
        # Compile or load the sampling kernel outside the timed region (no draw).
        scratch = np.zeros(k.N_ISTATE, dtype=np.int64)
        k.saa_draw(problem.A, problem.y, self.key, scratch, 1, 1.0, np.empty((0, problem.d)),
                   np.empty(0))  # fmt: skip

    def set_budget(self, budget: Any) -> bool:
        work = getattr(budget, "max_work", None)
        m = int(self.config["inner_batch"])
        if self.outer == 0:
            samples = work is not None and work[0] == "samples"
            self.outer = int(work[1] // m) if samples else DEFAULT_OUTER
        return super().set_budget(budget)

    def _first_step_samples(self) -> int:
        return max(self.outer, 1) * int(self.config["inner_batch"])

    def _next_checkpoint(self, it: int) -> int:
        return it + 1  # a row per Newton step

    def _draw(self) -> None:
        m = int(self.config["inner_batch"])
        self.outer = self.outer or DEFAULT_OUTER  # (a solver used without a runner)
        self.E = np.empty((self.outer, self.problem.d))
        self.b = np.empty(self.outer)
        p = self.problem
        k.saa_draw(p.A, p.y, self.key, self.istate, m, float(self.fstate[2]), self.E, self.b)

    def _steps(self, stop_at: int) -> None:
        if self.E is None:
            self._draw()
        if self.istate[k.I_K] >= stop_at:
            return
        if self._done:
            return
        E, b, l2, x = self.E, self.b, self.problem.l2, self.x
        n = E.shape[0]
        z = E @ x
        p = 0.5 * (1.0 - np.tanh(0.5 * b * z))
        grad = -(E.T @ (b * p)) / n + l2 * x
        if float(np.linalg.norm(grad)) <= 1e-12:
            self._done = True  # solved on its sample: the samples are its whole budget
            return
        w = p * (1.0 - p) / n
        H = E.T @ (E * w[:, None])
        H[np.diag_indices_from(H)] += l2 + 1e-14
        step = np.linalg.solve(H, -grad)
        f0 = _saa_value(E, b, x, l2)
        t = 1.0
        while t > 1e-12 and _saa_value(E, b, x + t * step, l2) > f0 + 1e-4 * t * (grad @ step):
            t *= 0.5
        self.x = x + t * step
        self._last_step = t * float(np.linalg.norm(step))
        self.istate[k.I_K] += 1
        self.istate[k.I_STATUS] = STATUS_RUNNING


def _saa_value(E: np.ndarray, b: np.ndarray, x: np.ndarray, l2: float) -> float:
    s = -b * (E @ x)
    return float(np.mean(np.logaddexp(0.0, s)) + 0.5 * l2 * (x @ x))


METHODS: dict[str, MethodSpec] = methods_from(
    BsgdSolver, SpiderSolver, SaaSolver, FoMamlSolver, AdamSolver
)
