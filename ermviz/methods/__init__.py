"""The method registry: every method and step rule, declared once.

``python -m ermviz methods``, ``--set`` validation, the dashboard's widgets and sweep
configs all read :data:`METHODS` and :data:`STEP_RULES`. A new family adds its module
here and registers its :class:`~ermviz.methods.base.MethodSpec` objects.
"""

from __future__ import annotations

import importlib
from typing import Any

from ermviz.errors import SettingError
from ermviz.methods.base import MethodSpec, Solver, StepRuleSpec
from ermviz.problems import PROBLEMS, Problem
from ermviz.settings import resolve_settings

# Each family module exports METHODS and, if it brings them, STEP_RULES and PROBLEMS.
# A new family is one module here and one line in this tuple.
FAMILIES = (
    "ermviz.methods.frank_wolfe",
    "ermviz.methods.rehline",
    "ermviz.methods.plq_ipm",
    "ermviz.methods.tufw",
)

METHODS: dict[str, MethodSpec] = {}
STEP_RULES: dict[str, StepRuleSpec] = {}
for _name in FAMILIES:
    _family = importlib.import_module(_name)
    METHODS.update(_family.METHODS)
    STEP_RULES.update(getattr(_family, "STEP_RULES", {}))
    PROBLEMS.update(getattr(_family, "PROBLEMS", {}))

__all__ = [
    "METHODS",
    "STEP_RULES",
    "MethodSpec",
    "Solver",
    "StepRuleSpec",
    "build_solver",
    "get_method",
    "resolve_method_settings",
]


def get_method(name: str) -> MethodSpec:
    """The method registered under ``name``."""
    try:
        return METHODS[name]
    except KeyError:
        raise SettingError(
            f"unknown method {name!r}; choose one of: {', '.join(METHODS)}"
        ) from None


def resolve_method_settings(
    method: str, step: str, problem_name: str, given: dict[str, Any]
) -> dict[str, Any]:
    """Check that ``method`` solves ``problem_name`` with ``step``; validate ``given``."""
    spec = get_method(method)
    if problem_name not in spec.problems:
        raise SettingError(
            f"method {method!r} does not solve problem {problem_name!r}; it solves: "
            f"{', '.join(spec.problems)}"
        )
    if step not in STEP_RULES:
        raise SettingError(
            f"unknown step rule {step!r}; choose one of: {', '.join(spec.step_rules)}"
        )
    if step not in spec.step_rules:
        raise SettingError(
            f"method {method!r} does not take step rule {step!r}; it takes: "
            f"{', '.join(spec.step_rules)}"
        )
    declared = {s.name: s for s in (*spec.settings, *STEP_RULES[step].settings)}
    return resolve_settings(declared.values(), given, owner=f"{method} with step {step}")


def build_solver(
    problem: Problem, method: str, step: str, settings: dict[str, Any] | None, tol: float
) -> Solver:
    """Bind ``method`` with ``step`` to ``problem``; ``settings`` are validated here."""
    resolved = resolve_method_settings(method, step, problem.name, dict(settings or {}))
    return get_method(method).factory(problem, step, resolved, tol)
