"""A run's method side is resolved once, at the boundary (issue 33): the registry turns
(method or alias, step rule, settings, problem) into a frozen ``ResolvedMethod``; building
the solver, the CLI, the estimators and the runner trust it and check nothing again."""

from __future__ import annotations

import dataclasses

import pytest

import ermviz.registry as registry
from ermviz.data import load_dataset
from ermviz.errors import SettingError
from ermviz.experiment import RunConfig, make_run, validate_method_side
from ermviz.registry import ALIASES, METHODS, ResolvedMethod, build_problem, resolve_method
from ermviz.runner import Budget


@pytest.fixture(scope="module")
def svm_dual():
    return build_problem("svm-dual", load_dataset("toy-2d"))


def test_an_alias_resolves_to_its_method_with_every_default_filled() -> None:
    name, alias = next((k, a) for k, a in ALIASES.items() if not a.method_by_problem)
    problem = METHODS[alias.method].problems[0]
    r = resolve_method(name, None, problem, {})
    assert r.method == alias.target(problem) and r.method in METHODS
    assert r.step in METHODS[r.method].step_rules
    for key, value in alias.settings:
        assert str(r.settings[key]) == str(value)
    declared = {s.name for s in METHODS[r.method].settings}
    assert declared <= set(r.settings), "every declared setting has its value"
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.method = "fw"  # type: ignore[misc]
    with pytest.raises(TypeError):
        r.settings["seed"] = 1  # type: ignore[index]


def test_bad_input_is_one_line_naming_the_fix() -> None:
    with pytest.raises(SettingError, match="does not solve problem 'plq'; it solves"):
        resolve_method("pfw", "exact", "plq", {})
    with pytest.raises(SettingError, match="unknown setting 'bogus' for pfw"):
        resolve_method("pfw", "exact", "svm-dual", {"bogus": 1})
    with pytest.raises(SettingError, match="does not take step rule"):
        resolve_method("rehline", "exact", "plq", {})


def test_building_from_a_resolution_checks_nothing_again(svm_dual, monkeypatch) -> None:
    r = resolve_method("pfw", "exact", "svm-dual", {"lmo_tol": "1e-9"})
    assert r.settings["lmo_tol"] == 1e-9  # parsed once, at the boundary

    def refuse(*args, **kwargs):
        raise AssertionError("validated a second time")

    monkeypatch.setattr(registry, "resolve_settings", refuse)
    monkeypatch.setattr(registry, "resolve_alias", refuse)
    solver = registry.build_solver(svm_dual, r, tol=1e-6)
    assert solver.problem is svm_dual
    # A resolution made for another problem is refused, naming both problems.
    other = dataclasses.replace(r, problem="logreg-l1")
    with pytest.raises(SettingError, match="resolved for problem 'logreg-l1', not 'svm-dual'"):
        registry.build_solver(svm_dual, other, tol=1e-6)


def test_make_run_resolves_once_and_trusts_a_given_resolution(svm_dual, monkeypatch) -> None:
    calls: list[tuple] = []
    real = registry.resolve_method

    def counting(*args, **kwargs) -> ResolvedMethod:
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(registry, "resolve_method", counting)
    cfg = RunConfig("toy-2d", "svm-dual", "afw", "exact", budget=Budget(max_iter=3))
    make_run(cfg, problem=svm_dual)
    assert len(calls) == 1, calls
    resolved = validate_method_side(cfg)  # (the CLI and the estimators do this first)
    assert len(calls) == 2
    run = make_run(cfg, problem=svm_dual, resolved=resolved)
    assert len(calls) == 2, "make_run resolved a given resolution again"
    run.run()
    assert run.status in ("max_iter", "converged")
