"""From names to a ready run: the one place that wires dataset, problem, method and budget.

The CLI, the dashboard, the notebooks and the sweep engine all call :func:`make_run`
with plain values (names, numbers, ``KEY=VALUE`` settings), so a configuration means the
same thing everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ermviz import data as data_mod
from ermviz.base import Problem
from ermviz.errors import SettingError
from ermviz.registry import (
    ResolvedMethod,
    build_problem,
    build_solver,
    get_method,
    get_problem,
    resolve_alias,
)
from ermviz.runner import Budget, Run, RunInfo
from ermviz.settings import Setting


@dataclass
class Preprocessing:
    """Optional preprocessing; the default is the data exactly as read.

    Parameters
    ----------
    standardize : bool
        Scale features to unit variance (and centre them when dense), with training
        statistics only.
    normalize : bool
        Scale each row to unit l2 norm.
    test_size : float or None
        Hold out this fraction (0 < test_size < 1) as a seeded, stratified test split;
        None keeps the dataset's own test file, if any.
    seed : int
        Seed of the split.
    """

    standardize: bool = False
    normalize: bool = False
    test_size: float | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.test_size is not None and not (0.0 < float(self.test_size) < 1.0):
            raise SettingError(
                f"test-size={self.test_size!r} is out of range; allowed range (0, 1)"
            )


@dataclass
class RunConfig:
    """Everything that defines one run, by name and value."""

    dataset: str
    problem: str
    method: str
    step: str
    settings: dict[str, Any] = field(default_factory=dict)
    budget: Budget = field(default_factory=Budget)
    preprocessing: Preprocessing = field(default_factory=Preprocessing)
    label: str = ""

    def __post_init__(self) -> None:
        # An alias (an older method name) becomes the listed method with the choices it
        # fixes; the run keeps the name it was asked for as its label, so tables of runs
        # made with old names read as before.
        asked = self.method
        self.method, self.step, self.settings = resolve_alias(
            self.method, self.step, self.settings, self.problem
        )
        if self.method != asked and not self.label:
            self.label = f"{asked}-{self.step}"


def split_settings(
    problem: str, method: str, step: str, given: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split ``given`` into (problem settings, method + step-rule settings) by declaration.

    A key declared by neither raises :class:`SettingError` listing every valid key.
    """
    from ermviz.registry import STEP_RULES

    pdecl = {s.name for s in get_problem(problem).settings_decl}
    spec = get_method(method)
    mdecl = {s.name for s in spec.settings}
    if step in STEP_RULES:
        mdecl |= {s.name for s in STEP_RULES[step].settings}
    unknown = sorted(set(given) - pdecl - mdecl)
    if unknown:
        raise SettingError(
            f"unknown setting {unknown[0]!r} for problem {problem} with method {method} and "
            f"step {step}; valid settings: {', '.join(sorted(pdecl | mdecl)) or 'none'}"
        )
    return (
        {k: v for k, v in given.items() if k in pdecl},
        {k: v for k, v in given.items() if k in mdecl},
    )


def load_data(name: str, prep: Preprocessing) -> Any:
    """Load ``name`` (catalog, bundled or path) and apply ``prep``."""
    ds = data_mod.load_dataset(name)
    return data_mod.preprocess(
        ds,
        standardize=prep.standardize,
        normalize=prep.normalize,
        test_size=prep.test_size,
        seed=prep.seed,
    )


def make_problem(cfg: RunConfig, dataset: Any = None) -> Problem:
    """The problem of ``cfg`` (on ``dataset`` if given, else loaded by name)."""
    psettings, _ = split_settings(cfg.problem, cfg.method, cfg.step, cfg.settings)
    ds = dataset if dataset is not None else load_data(cfg.dataset, cfg.preprocessing)
    return build_problem(cfg.problem, ds, **psettings)


def validate_method_side(cfg: RunConfig) -> ResolvedMethod:
    """Check the method, step rule and their settings of ``cfg`` (no data needed); the
    resolution, which :func:`make_run` then trusts."""
    from ermviz.registry import resolve_method

    _, msettings = split_settings(cfg.problem, cfg.method, cfg.step, cfg.settings)
    return resolve_method(cfg.method, cfg.step, cfg.problem, msettings)


def make_run(
    cfg: RunConfig,
    *,
    problem: Problem | None = None,
    run_id: str | None = None,
    chunk_seconds: float = 0.02,
    resolved: ResolvedMethod | None = None,
) -> Run:
    """Build (not start) the run ``cfg`` describes. Its method side is resolved first
    (before any data are loaded: bad names fail fast) unless ``resolved``, the result of
    :func:`validate_method_side` on this ``cfg``, is given."""
    _, msettings = split_settings(cfg.problem, cfg.method, cfg.step, cfg.settings)
    if resolved is None:
        resolved = validate_method_side(cfg)
    if problem is None:
        problem = make_problem(cfg)
    solver = build_solver(problem, resolved, tol=cfg.budget.tol)
    info = RunInfo(
        dataset=cfg.dataset,
        problem=cfg.problem,
        method=cfg.method,
        step=cfg.step,
        settings={**problem.settings, **msettings},
        label=cfg.label or f"{cfg.method}-{cfg.step}",
    )
    return Run(solver, cfg.budget, info, run_id=run_id, chunk_seconds=chunk_seconds)


def declared_settings(problem: str, method: str, step: str) -> list[Setting]:
    """All settings a (problem, method, step) combination accepts, problem first."""
    from ermviz.registry import STEP_RULES

    out = list(get_problem(problem).settings_decl)
    out += list(get_method(method).settings)
    out += list(STEP_RULES[step].settings) if step in STEP_RULES else []
    return out


def execute(cfg: RunConfig, *, run_id: str | None = None) -> tuple[Any, dict[str, Any]]:
    """Run ``cfg`` to completion in this thread; return (trace DataFrame, summary).

    A plain, picklable entry point: a process pool or a Dask worker ships a
    :class:`RunConfig` and gets back plain data, with the same runner and the same trace
    schema as the dashboard and the CLI.
    """
    run = make_run(cfg, run_id=run_id)
    run.run()
    summary = run.summary()
    summary.update(run.solver.problem.test_metrics(run.solver.iterate()))
    return run.frame(), summary
