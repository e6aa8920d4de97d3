"""TUFW (Taylor-approximated-gradient Frank-Wolfe) and its baselines: the family's
``METHODS``, step rules and aliases.

Xiong & Freund, "Using Taylor-approximated gradients to improve the Frank-Wolfe method for
empirical risk minimization" (SIAM J. Optim.): FW whose gradient is the average of
first-order Taylor expansions of the per-sample gradients around per-sample points ``b_i``,
which are moved to the current iterate by a batch rule. The numerics are in
:mod:`solvers.tufw`; the method classes, each carrying its declaration, are in
:mod:`.adapters`:

* ``tufw`` (Taylor-point rule by the setting ``rule``: ``sbd-sqrtk``, ``dbd-sqrtk``,
  ``sbd-k4``, ``dbd-k4``), ``spider-fw`` (Yurtsever, Sra & Cevher, ICML 2019), ``csfw``
  (Negiar et al., ICML 2020) and ``fw-nc`` (plain FW with the exact gradient for any of
  the losses: the "FW" baseline of the non-convex table), on ``nonconvex-l1``
  (:mod:`.problem`, problem (7.2) of the paper) and ``logreg-l1`` ((7.1), from the
  Frank-Wolfe family).

This module declares :data:`METHODS` from those classes and

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

from ermviz.base import MethodAlias, MethodSpec, StepRuleSpec, methods_from
from ermviz.families.tufw.adapters import (  # noqa: F401 (the settings: public names here too)
    EVAL_SETTINGS,
    K_SETTING,
    RULE_SETTING,
    TAYLOR_SETTINGS,
    XF,
    CsfwSolver,
    GlmFrankWolfeSolver,
    SpiderFwSolver,
    TufwSolver,
)
from ermviz.families.tufw.problem import NonconvexL1
from ermviz.settings import Setting
from solvers.tags import OPEN_LOOP_CODES

# -- step rules ---------------------------------------------------------------------------
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

_RULE_TITLES = {
    "sbd-sqrtk": "random ceil(n/sqrt(k)) Taylor points reset per iteration",
    "dbd-sqrtk": "all Taylor points reset when k is a perfect square",
    "sbd-k4": "random ceil(n/K^(1/4)) Taylor points reset per iteration",
    "dbd-k4": "all Taylor points reset every floor(K^(1/4)) iterations",
}

METHODS: dict[str, MethodSpec] = methods_from(
    TufwSolver, SpiderFwSolver, CsfwSolver, GlmFrankWolfeSolver
)

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
