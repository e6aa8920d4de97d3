"""TUFW (Taylor-approximated-gradient Frank-Wolfe) and its baselines, bound to problems.

Xiong & Freund, "Using Taylor-approximated gradients to improve the Frank-Wolfe method for
empirical risk minimization" (SIAM J. Optim.): FW whose gradient is the average of
first-order Taylor expansions of the per-sample gradients around per-sample points ``b_i``,
which are moved to the current iterate by a batch rule. The numerics are in
:mod:`solvers.tufw`; this module declares

* the methods ``tufw`` (Taylor-point rule by the setting ``rule``: ``sbd-sqrtk``,
  ``dbd-sqrtk``, ``sbd-k4``, ``dbd-k4``), ``spider-fw`` (Yurtsever, Sra & Cevher, ICML
  2019), ``csfw`` (Negiar et al., ICML 2020) and ``fw-nc`` (plain FW with the exact gradient
  for any of the losses: the "FW" baseline of the non-convex table), on ``nonconvex-l1``
  (:mod:`.problem`, problem (7.2) of the paper) and ``logreg-l1`` ((7.1), from the
  Frank-Wolfe family);
* the aliases of older names: ``tufw-sbd-sqrtk``, ``tufw-dbd-sqrtk``, ``tufw-sbd-k4``,
  ``tufw-dbd-k4`` (``tufw`` with that ``rule``) and ``fw-ada`` (FW with the backtracking
  step of Pedregosa, Negiar, Askari & Jaggi, AISTATS 2020: ``fw --step adaptive`` on
  ``logreg-l1``, ``fw-nc --step adaptive`` on ``nonconvex-l1``);
* the step rules ``constant-sqrt`` (``1/sqrt(K+1)``, K fixed in advance),
  ``taylor-adaptive`` (the paper's (B-6): ``min(gamma_k, g^T(x - s) / d^T H d)``, i.e.
  the minimizer of the Taylor quadratic model over ``[0, gamma_k]``) and ``taylor-exact``
  (the same with ``gamma_k = 1``: exact line search on the Taylor model).

Timing and checkpoints: see :mod:`ermviz.families.tufw.adapters`.
"""

from __future__ import annotations

from ermviz.base import MethodAlias, MethodSpec, StepRuleSpec
from ermviz.families.common import solver_factory
from ermviz.families.frank_wolfe.methods import FW_SETTINGS
from ermviz.families.frank_wolfe.problems import LogregL1
from ermviz.families.tufw.adapters import (
    CsfwSolver,
    GlmFrankWolfeSolver,
    SpiderFwSolver,
    TufwSolver,
)
from ermviz.families.tufw.problem import NonconvexL1
from ermviz.settings import Setting
from solvers.tags import OPEN_LOOP_CODES, TAYLOR_CODES

# -- settings and step rules --------------------------------------------------------------
K_SETTING = Setting(
    "K",
    "int",
    10000,
    "horizon K fixed in advance (constant step 1/sqrt(K+1), K-rules of TUFW)",
    low=1,
    high=10**12,
)

STEP_RULES: dict[str, StepRuleSpec] = {
    "constant-sqrt": StepRuleSpec(
        name="constant-sqrt",
        title="constant 1/sqrt(K+1), K fixed in advance (non-convex theory)",
        settings=(K_SETTING,),
        reference="Xiong & Freund, Theorem A.2",
    ),
    "taylor-adaptive": StepRuleSpec(
        name="taylor-adaptive",
        title="min(gamma_k, g^T (x - s) / d^T H d): the Taylor-model minimizer capped by gamma_k",
        settings=(
            Setting(
                "cap",
                "choice",
                "auto",
                "the open-loop gamma_k capping the step: 2/(k+2), 1/sqrt(k+1), 1/sqrt(K+1) "
                "or 1; auto = 2/(k+2) on convex problems, 1/sqrt(k+1) on non-convex ones",
                choices=("auto", *OPEN_LOOP_CODES),
            ),
        ),
        reference="Xiong & Freund, (B-6)",
    ),
    "taylor-exact": StepRuleSpec(
        name="taylor-exact",
        title=(
            "exact line search on the Taylor quadratic model over [0, 1] ((B-6) with gamma_k = 1)"
        ),
        settings=(),
        reference="Xiong & Freund, (B-6)",
    ),
}

EVAL_SETTINGS = (
    Setting(
        "eval_every",
        "int",
        1,
        "checkpoint (trace row, exact gap) spacing in iterations, at least",
        low=1,
        high=10**9,
    ),
    Setting(
        "eval_growth",
        "float",
        0.01,
        "checkpoint spacing also grows like k * eval_growth (0 = fixed spacing); "
        "non-convex runs still evaluate every iterate for the running average",
        low=0.0,
        high=10.0,
    ),
    Setting("seed", "int", 0, "seed of the sampling", low=0, high=2**62),
)

TAYLOR_SETTINGS = (
    K_SETTING,
    Setting(
        "rounding",
        "choice",
        "ceil",
        "round batch sizes n/sqrt(k), n/K^(1/4) and the period K^(1/4) up or down",
        choices=("ceil", "floor"),
    ),
    Setting("offset", "int", 0, "use k + offset in the rule formulas", low=0, high=1),
    Setting(
        "replace",
        "bool",
        False,
        "SBD rules: draw the batch with replacement (default: without)",
    ),
    Setting(
        "rebuild_h_every",
        "int",
        1000,
        "rebuild h = H x and x^T H x from H every this many iterations (0 = never)",
        low=0,
        high=10**9,
    ),
    Setting(
        "rebuild_H_passes",
        "int",
        20,
        "rebuild q and H from the stored t_i after this many n partial resets (0 = never); "
        "full resets always rebuild",
        low=0,
        high=10**6,
    ),
    *EVAL_SETTINGS,
)

RULE_SETTING = Setting(
    "rule",
    "choice",
    "dbd-sqrtk",
    "Taylor-point rule: sbd-sqrtk, dbd-sqrtk, sbd-k4, dbd-k4",
    choices=tuple(TAYLOR_CODES),
)


def _sampling_settings(replace_default: bool, epoch: bool) -> tuple[Setting, ...]:
    out = [
        Setting(
            "batch",
            "int",
            0,
            "samples per iteration (0 = ceil(sqrt(n)))",
            low=0,
            high=10**9,
        ),
        Setting("replace", "bool", replace_default, "draw the batch with replacement"),
    ]
    if epoch:
        out.append(
            Setting(
                "epoch",
                "int",
                0,
                "iterations per epoch: a full gradient starts each (0 = ceil(sqrt(n)))",
                low=0,
                high=10**9,
            )
        )
    return (*out, *EVAL_SETTINGS)


# -- registry -----------------------------------------------------------------------------
_PROBLEMS = (LogregL1.name, NonconvexL1.name)
_OPEN = ("diminishing", "nonconvex", "constant-sqrt")
_TUFW_STEPS = ("taylor-adaptive", "taylor-exact", *_OPEN)
XF = "Xiong & Freund, SIAM J. Optim. (Algorithm 2.1)"


_RULE_TITLES = {
    "sbd-sqrtk": "random ceil(n/sqrt(k)) Taylor points reset per iteration",
    "dbd-sqrtk": "all Taylor points reset when k is a perfect square",
    "sbd-k4": "random ceil(n/K^(1/4)) Taylor points reset per iteration",
    "dbd-k4": "all Taylor points reset every floor(K^(1/4)) iterations",
}

METHODS: dict[str, MethodSpec] = {
    "tufw": MethodSpec(
        name="tufw",
        title="Taylor-approximated-gradient Frank-Wolfe (TUFW)",
        family="tufw",
        problems=_PROBLEMS,
        step_rules=_TUFW_STEPS,
        settings=(RULE_SETTING, *TAYLOR_SETTINGS),
        reference=XF,
        factory=solver_factory(TufwSolver),
    ),
    "spider-fw": MethodSpec(
        name="spider-fw",
        title="SPIDER Frank-Wolfe (recursive variance-reduced gradient estimator)",
        family="tufw",
        problems=_PROBLEMS,
        step_rules=_OPEN,
        settings=_sampling_settings(True, epoch=True),
        reference="Yurtsever, Sra & Cevher, ICML 2019",
        factory=solver_factory(SpiderFwSolver),
    ),
    "csfw": MethodSpec(
        name="csfw",
        title="constant-batch stochastic Frank-Wolfe (SAG-type memory)",
        family="tufw",
        problems=_PROBLEMS,
        step_rules=_OPEN,
        settings=_sampling_settings(True, epoch=False),
        reference="Negiar et al., ICML 2020",
        factory=solver_factory(CsfwSolver),
    ),
    "fw-nc": MethodSpec(
        name="fw-nc",
        title="Frank-Wolfe with the exact gradient for any GLM loss (incl. non-convex)",
        family="tufw",
        problems=_PROBLEMS,
        step_rules=(*_OPEN, "adaptive"),
        settings=FW_SETTINGS,
        reference="Frank & Wolfe 1956; Xiong & Freund (baseline FW)",
        factory=solver_factory(GlmFrankWolfeSolver),
    ),
}

#: Old names: the fixed-rule TUFW variants (sweep tables of earlier versions compare them
#: by name) and FW-ada, which is FW with the backtracking step of Pedregosa, Negiar, Askari
#: & Jaggi (AISTATS 2020): ``fw`` on ``logreg-l1``, ``fw-nc`` on ``nonconvex-l1``.
ALIASES: dict[str, MethodAlias] = {
    **{
        f"tufw-{rule}": MethodAlias(
            f"tufw-{rule}",
            "tufw",
            f"tufw with --set rule={rule} ({title})",
            settings=(("rule", rule),),
        )
        for rule, title in _RULE_TITLES.items()
    },
    "fw-ada": MethodAlias(
        "fw-ada",
        "fw",
        "fw --step adaptive (fw-nc --step adaptive on nonconvex-l1)",
        step="adaptive",
        method_by_problem=((NonconvexL1.name, "fw-nc"),),
    ),
}
