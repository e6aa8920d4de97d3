"""The conditional stochastic optimization family's method declarations: which problems
each method solves, its step rules and settings (:mod:`.methods` and :mod:`.maml_methods`
hold the solvers)."""

from __future__ import annotations

from typing import Any

from ermviz.base import MethodSpec, Solver
from ermviz.families.cso.maml_methods import (
    AdamSolver,
    FoMamlSolver,
    MamlSolver,
    MamlSpiderSolver,
)
from ermviz.families.cso.maml_problem import MamlSineProblem
from ermviz.families.cso.methods import (
    _INNER,
    DEFAULT_OUTER,
    REFERENCES,
    BsgdSolver,
    SaaSolver,
    SpiderSolver,
)
from ermviz.families.cso.problem import InvariantLogregProblem
from ermviz.settings import Setting

LOGREG, MAML = InvariantLogregProblem.name, MamlSineProblem.name
#: SAA's default inner batch: the paper's m at invariant-logreg's default noise ratio 10
#: (Appendix Table 4: 100, 464, 1000 at the ratios 1, 10, 100).
SAA_INNER = 464


def _by_problem(**classes: type) -> Any:
    """A factory building the solver class that implements the method on the problem."""
    by_name = {name.replace("_", "-"): cls for name, cls in classes.items()}

    def build(problem: Any, step: str, settings: dict[str, Any], tol: float) -> Solver:
        return by_name[problem.name](problem, step, settings, tol)

    return build


_SEED = Setting("seed", "int", 0, "seed of the run's sample stream", low=0)
_MAML_REFS = {
    "fo-maml": "Finn, Abbeel & Levine, ICML 2017 (first-order MAML)",
    "adam": "Hu, Chen & He, NeurIPS 2020, Appendix D (BSGD's estimator with Adam updates)",
}
METHODS: dict[str, MethodSpec] = {
    "bsgd": MethodSpec(
        "bsgd",
        "biased SGD: m inner samples per outer sample, the biased gradient estimator",
        "cso",
        (LOGREG, MAML),
        ("fixed", "inv-sqrt"),
        (
            _INNER,
            Setting(
                "inner_growth",
                "float",
                0.0,
                "time-varying inner batch m_t = ceil(m (t + 1)^growth); 0 = fixed m "
                "(invariant-logreg)",
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
            _SEED,
        ),
        REFERENCES["bsgd"],
        _by_problem(invariant_logreg=BsgdSolver, maml_sine=MamlSolver),
    ),
    "bspiderboost": MethodSpec(
        "bspiderboost",
        "biased SpiderBoost: variance-reduced recursive estimator",
        "cso",
        (LOGREG, MAML),
        ("fixed",),
        (
            _INNER,
            Setting("q", "int", 20, "epoch length q (steps)", low=1, high=1e9),
            Setting("n1", "int", 200, "outer samples at each epoch start", low=1, high=1e9),
            Setting("n2", "int", 10, "outer samples per step inside an epoch", low=1, high=1e9),
            _SEED,
        ),
        REFERENCES["bspiderboost"],
        _by_problem(invariant_logreg=SpiderSolver, maml_sine=MamlSpiderSolver),
    ),
    "saa": MethodSpec(
        "saa",
        "sample average approximation: draw n x m samples, solve by Newton",
        "cso",
        (LOGREG,),
        ("newton-ls",),
        (
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
            _SEED,
        ),
        REFERENCES["saa"],
        _by_problem(invariant_logreg=SaaSolver),
    ),
    "fo-maml": MethodSpec(
        "fo-maml",
        "first-order MAML: the meta-gradient without its Hessian term",
        "cso",
        (MAML,),
        ("fixed", "inv-sqrt"),
        (_INNER, _SEED),
        _MAML_REFS["fo-maml"],
        _by_problem(maml_sine=FoMamlSolver),
    ),
    "adam": MethodSpec(
        "adam",
        "BSGD's biased meta-gradient with Adam updates",
        "cso",
        (MAML,),
        ("adam",),
        (_INNER, _SEED),
        _MAML_REFS["adam"],
        _by_problem(maml_sine=AdamSolver),
    ),
}
