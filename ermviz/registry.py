"""The registry: every family's problems, methods, step rules and aliases, listed once.

``python -m ermviz methods``, ``--set`` validation, the dashboard's widgets, links and
sweep configs all read :data:`PROBLEMS`, :data:`METHODS` and :data:`STEP_RULES` from here.
A family is a module (usually a package under :mod:`ermviz.families`) that exports
``PROBLEMS``, ``METHODS``, ``STEP_RULES`` and ``ALIASES``; adding one is one line in
:data:`FAMILIES` (see "How to add a family" in ``docs/ARCHITECTURE.md``), or, for a family
kept outside this repository, its module name in the environment variable
``ERMVIZ_FAMILIES``. This module
imports the families; they import only :mod:`ermviz.base`, :mod:`ermviz.settings`, their
own modules and :mod:`solvers`, so nothing imports upward or in a circle.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ermviz import compile_notice
from ermviz.base import MethodAlias, MethodSpec, Problem, Solver, StepRuleSpec
from ermviz.errors import SettingError
from ermviz.settings import resolve_settings

#: The families, in the order their methods are listed. One line per family.
FAMILIES: tuple[str, ...] = (
    "ermviz.families.frank_wolfe",
    "ermviz.families.plq",
    "ermviz.families.tufw",
    "ermviz.families.cso",
    "ermviz.families.lssvm",
)

PROBLEMS: dict[str, type[Problem]] = {}
METHODS: dict[str, MethodSpec] = {}
STEP_RULES: dict[str, StepRuleSpec] = {}
ALIASES: dict[str, MethodAlias] = {}


def register_family(module_name: str) -> None:
    """Import the family ``module_name`` and add its declarations to the registry.

    All or nothing: a name another family already declared (or an alias that is also a
    listed name) is a :class:`~ermviz.errors.SettingError` naming both, and nothing of
    that family is registered, so two families cannot silently shadow each other.
    """
    family = importlib.import_module(module_name)
    tables = (
        (PROBLEMS, "problem", getattr(family, "PROBLEMS", {})),
        (METHODS, "method", getattr(family, "METHODS", {})),
        (STEP_RULES, "step rule", getattr(family, "STEP_RULES", {})),
        (ALIASES, "alias", getattr(family, "ALIASES", {})),
    )
    for table, kind, new in tables:
        for key, value in new.items():
            if key in table and table[key] is not value:
                raise SettingError(
                    f"{module_name}: {kind} {key!r} is already registered by another "
                    "family; rename it"
                )
    listed = set(METHODS) | set(PROBLEMS) | set(tables[0][2]) | set(tables[1][2])
    clash = sorted((set(ALIASES) | set(tables[3][2])) & listed)
    if clash:
        raise SettingError(f"{module_name}: alias {clash[0]!r} is also a listed name; rename it")
    for table, _, new in tables:
        table.update(new)


def _extra_families() -> tuple[str, ...]:
    """Family modules named in ``ERMVIZ_FAMILIES`` (comma-separated): families kept outside
    this repository, registered like the built-in ones, so the CLI, sweeps and dashboard
    list them without any edit here."""
    return tuple(n.strip() for n in os.environ.get("ERMVIZ_FAMILIES", "").split(",") if n.strip())


for _name in FAMILIES + _extra_families():
    try:
        register_family(_name)
    except ImportError as exc:
        if _name in FAMILIES:
            raise
        raise SettingError(
            f"ERMVIZ_FAMILIES names {_name!r}, which cannot be imported ({exc}); fix the "
            "module name or its PYTHONPATH, or unset ERMVIZ_FAMILIES"
        ) from exc


def get_problem(name: str) -> type[Problem]:
    """The problem class registered under ``name`` (any family's)."""
    try:
        return PROBLEMS[name]
    except KeyError:
        raise SettingError(
            f"unknown problem {name!r}; choose one of: {', '.join(PROBLEMS)}"
        ) from None


def build_problem(name: str, dataset: Any, **settings: Any) -> Problem:
    """Build problem ``name`` on ``dataset`` with validated ``settings`` (a problem that
    compiles kernels says so once: :mod:`ermviz.compile_notice`)."""
    with compile_notice.announce(name, "", compile_notice.storage_of(dataset)):
        return get_problem(name).build(dataset, **settings)


def get_method(name: str) -> MethodSpec:
    """The listed method ``name`` (aliases are resolved by :func:`resolve_alias`)."""
    try:
        return METHODS[name]
    except KeyError:
        hint = f" ({name!r} is an alias: {ALIASES[name].note})" if name in ALIASES else ""
        raise SettingError(
            f"unknown method {name!r}{hint}; choose one of: {', '.join(METHODS)}"
        ) from None


def resolve_alias(
    method: str, step: str | None, settings: Mapping[str, Any], problem: str | None = None
) -> tuple[str, str, dict[str, Any]]:
    """``(method, step, settings)`` with an alias replaced by the method it stands for.

    An empty ``step`` becomes the alias's step or the method's default. A step or setting
    given explicitly that contradicts what the alias fixes is an error naming both.
    """
    alias = ALIASES.get(method)
    if alias is None:
        return method, step or (METHODS[method].step if method in METHODS else ""), dict(settings)
    target = alias.target(problem)
    if alias.step and step and step != alias.step:
        raise SettingError(
            f"method {method!r} means {target} with step {alias.step!r}; step {step!r} "
            f"contradicts it: drop the step or use method {target!r} with step {step!r}"
        )
    fixed = dict(alias.settings)
    for key, value in fixed.items():
        if key in settings and str(settings[key]) != str(value):
            raise SettingError(
                f"method {method!r} means {target} with {key}={value}; {key}="
                f"{settings[key]} contradicts it: use method {target!r} with {key}={settings[key]}"
            )
    return target, step or alias.step or METHODS[target].step, {**settings, **fixed}


@dataclass(frozen=True)
class ResolvedMethod:
    """A method, step rule and settings resolved once, at the boundary, for one problem:
    an alias replaced by the method it stands for, the step rule checked against the
    method, every setting parsed and its default filled in (:func:`resolve_method`).
    :func:`build_solver` and the solvers trust it and check nothing again.

    Attributes
    ----------
    method : str
        A listed method (a key of :data:`METHODS`, never an alias).
    step : str
        One of the method's step rules.
    problem : str
        The problem it was resolved for (one the method solves).
    settings : Mapping[str, Any]
        The method's and step rule's settings, validated, with defaults (read-only).
    """

    method: str
    step: str
    problem: str
    settings: Mapping[str, Any]

    @property
    def spec(self) -> MethodSpec:
        return METHODS[self.method]


def resolve_method(
    method: str, step: str | None, problem_name: str, given: Mapping[str, Any]
) -> ResolvedMethod:
    """Resolve ``method`` (or an alias) with ``step`` and the settings ``given`` for
    problem ``problem_name``, checking each once; a bad name, step rule or setting raises
    a one-line :class:`~ermviz.errors.SettingError` that names the fix."""
    method, step, given = resolve_alias(method, step, given, problem_name)
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
    settings = resolve_settings(declared.values(), given, owner=f"{method} with step {step}")
    return ResolvedMethod(method, step, problem_name, MappingProxyType(settings))


def resolve_method_settings(
    method: str, step: str, problem_name: str, given: dict[str, Any]
) -> dict[str, Any]:
    """Check that ``method`` solves ``problem_name`` with ``step``; validate ``given``
    (the settings of :func:`resolve_method`, as a dict)."""
    return dict(resolve_method(method, step, problem_name, given).settings)


def build_solver(
    problem: Problem,
    method: str | ResolvedMethod,
    step: str | None = None,
    settings: Mapping[str, Any] | None = None,
    tol: float | None = None,
) -> Solver:
    """Bind a method to ``problem`` with certificate tolerance ``tol``.

    ``method`` is a :class:`ResolvedMethod` (resolved at the boundary: trusted, checked
    only to be for this problem), or a method name or alias with ``step`` and
    ``settings``, resolved here by :func:`resolve_method`."""
    if tol is None:
        raise TypeError("build_solver needs the certificate tolerance tol")
    if isinstance(method, ResolvedMethod):
        resolved = method
        if resolved.problem != problem.name:
            raise SettingError(
                f"{resolved.method} was resolved for problem {resolved.problem!r}, not "
                f"{problem.name!r}: resolve it again for {problem.name!r}"
            )
    else:
        resolved = resolve_method(method, step, problem.name, dict(settings or {}))
    storage = compile_notice.storage_of(problem)
    with compile_notice.announce(problem.name, resolved.method, storage):
        # (the solver compiles or loads its kernels now: one line if it compiles)
        return resolved.spec.factory(problem, resolved.step, dict(resolved.settings), float(tol))


__all__ = [
    "ALIASES",
    "FAMILIES",
    "METHODS",
    "PROBLEMS",
    "STEP_RULES",
    "ResolvedMethod",
    "build_problem",
    "build_solver",
    "get_method",
    "get_problem",
    "register_family",
    "resolve_alias",
    "resolve_method",
    "resolve_method_settings",
]
