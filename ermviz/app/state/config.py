"""The dashboard's configuration: what a session races, set by the sidebar and a shared link.

:class:`Configuration` holds the dataset (a bundled name, a catalog name found on disk, or a
file the user uploaded), the problem and its settings, preprocessing, budgets, the seed and
the list of racing runs (:class:`~ermviz.app.state.runspec.RunSpec`: method + step rule + that
method's settings), with the view options of the plots; it turns them into what the runner
takes (:meth:`~Configuration.run_configs`, :meth:`~Configuration.budget`,
:meth:`~Configuration.new_slots`). No race and no widget: the race's lifecycle is
:mod:`ermviz.app.state.lifecycle`, the session's uploads, results and exports
:mod:`ermviz.app.state.model` (whose :class:`~ermviz.app.state.model.DashboardModel` is all three).

Errors a user can cause here (an out-of-range value, a method that does not solve the chosen
problem) never escape as exceptions: they become a notification (:meth:`Configuration.notify`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import param

from ermviz.app.state.datasets import DATASET_PRESETS, available_datasets, preset_for
from ermviz.app.state.messages import _panel_notifier
from ermviz.app.state.race import PALETTE, Slot, expand_repeats
from ermviz.app.state.references import setup_of
from ermviz.app.state.runspec import RunSpec, default_specs, valid_settings, with_setting
from ermviz.base import Problem
from ermviz.experiment import Preprocessing, RunConfig
from ermviz.registry import METHODS, PROBLEMS, get_problem
from ermviz.runner import Budget
from ermviz.settings import Setting

#: Runs a race may hold (one colour each).
MAX_RUNS = len(PALETTE)
#: Parameters that make up the shareable configuration (see :mod:`ermviz.app.state.urlstate`).
CONFIG_PARAMS = (
    "dataset",
    "problem",
    "problem_settings",
    "standardize",
    "normalize",
    "test_size",
    "seed",
    "tol",
    "max_iter",
    "max_time",
    "max_samples",
    "repeat",
    "animate",
    "step_delay",
    "specs",
)


def is_teachable(problem: Problem) -> bool:
    """Whether the teaching view can draw ``problem``'s feasible set (2-D or 3-D)."""
    return problem.teaching_geometry() is not None


class Configuration(param.Parameterized):
    """The configuration of one dashboard session (no race: see
    :class:`~ermviz.app.state.lifecycle.RaceLifecycle`).

    The configuration parameters (:data:`CONFIG_PARAMS`) are what a shared link carries;
    ``revision`` increases on every change of them, including a change inside a
    :class:`RunSpec`.
    """

    dataset = param.Selector(default="wdbc", objects=["wdbc"], doc="Dataset name")
    problem = param.Selector(default="svm-dual", objects=list(PROBLEMS), doc="Problem")
    problem_settings = param.Dict(default={}, doc="Validated non-default problem settings")
    standardize = param.Boolean(default=True, doc="Scale features to unit variance")
    normalize = param.Boolean(default=False, doc="Scale each row to unit l2 norm")
    test_size = param.Number(
        default=0.0, bounds=(0.0, 0.9), doc="Held-out test fraction (0: the dataset's own)"
    )
    seed = param.Integer(default=0, bounds=(0, 2**31 - 1), doc="Seed of the train/test split")
    tol = param.Number(default=1e-10, doc="Stop when the certificate is at most tol")
    max_iter = param.Integer(default=100_000_000, bounds=(1, None), doc="Maximum steps per run")
    max_time = param.Number(
        default=10.0,
        bounds=(0.0, None),
        inclusive_bounds=(False, True),
        doc="Maximum solver seconds per run",
    )
    max_samples = param.Number(
        default=0.0,
        bounds=(0.0, None),
        doc="Stochastic methods: stop before a step would exceed this many inner samples "
        "(0: no such budget); used on problems whose methods count samples",
    )
    repeat = param.Integer(
        default=1,
        bounds=(1, 10),
        doc="Runs per stochastic method (one per seed: its seed, seed + 1, ...); the race "
        "draws their mean and a min-max band",
    )
    animate = param.Boolean(
        default=False,
        doc="Keep every iterate and slow the runs down for the teaching view (2-D/3-D problems)",
    )
    step_delay = param.Number(0.03, bounds=(0.0, 1.0), doc="Seconds between teaching-view steps")
    specs = param.List(default=[], item_type=RunSpec, doc="The racing runs")

    # View options (not part of a shared link's meaning, but of the session's state).
    log_x = param.Boolean(default=True, doc="Logarithmic x axes")
    time_basis = param.Selector(
        default="time_s", objects=["time_s", "cpu_s"], doc="Solver wall time or thread CPU time"
    )
    show_steps = param.Boolean(default=False, doc="Mark away, pairwise and drop steps")
    presentation = param.Boolean(default=False, doc="Larger figure text and lines, for a room")
    x_axis = param.Selector(
        default="iteration",
        objects=["iteration"],
        doc="x of the iteration plots: iterations, or a work counter the problem's methods "
        "record (Problem.work_axes, e.g. kernel_evals)",
    )

    revision = param.Integer(default=0, doc="Bumped on every configuration change")

    def __init__(self, notifier: Callable[[str, str], None] | None = None, **params: Any) -> None:
        groups = available_datasets()
        names = groups["bundled"] + groups["catalog"]
        self.dataset_groups = groups
        specs = params.pop("specs", None)
        dataset = params.pop("dataset", None)
        super().__init__(**params)
        self.param.problem.objects = list(PROBLEMS)
        # The offered names depend on what is on this server's disk: set them per session.
        self.param.dataset.objects = names
        if dataset is not None:
            self.dataset = dataset  # an explicit choice: no preset on top (unlike the UI)
        elif self.dataset not in names:
            self.dataset = names[0]
        self._watched: set[int] = set()
        self.specs = list(specs) if specs is not None else default_specs(self.problem)
        if "problem_settings" not in params and dataset is None:
            self.problem_settings = dict(DATASET_PRESETS["wdbc"]["problem_settings"])
        self.notifier = notifier if notifier is not None else _panel_notifier
        self.messages: list[tuple[str, str]] = []
        #: Uploaded datasets offered in the list: name -> its file (see
        #: :meth:`~ermviz.app.state.model.DashboardModel.add_upload`).
        self.uploads: dict[str, Path] = {}
        self._quiet = False
        self.param.watch(self._on_config, [p for p in CONFIG_PARAMS if p != "specs"])
        self._offer_work_axes()

    # -- notifications ---------------------------------------------------------------
    def notify(self, message: str, level: str = "error") -> None:
        """Record ``message`` and show it to the user (a toast in a Panel session)."""
        self.messages.append((level, message))
        try:
            self.notifier(level, message)
        except Exception:  # a missing notification area must not turn into a failure
            pass

    # -- configuration ---------------------------------------------------------------
    def _watch_spec(self, spec: RunSpec) -> None:
        spec.param.watch(self._on_spec, ["method", "step", "settings"])

    def _on_spec(self, *_: Any) -> None:
        self.revision += 1

    @param.depends("specs", watch=True)
    def _on_specs(self) -> None:
        for spec in self.specs:
            if id(spec) not in self._watched:
                self._watch_spec(spec)
                self._watched.add(id(spec))
        self.revision += 1

    def _on_config(self, *events: Any) -> None:
        names = {e.name for e in events}
        if "problem" in names:
            self._drop_undeclared_problem_settings()
            self._fit_race_to_problem()
            self._offer_work_axes()
        if "dataset" in names and not self._quiet:
            self.apply_preset(self.dataset)
        self.revision += 1

    def _offer_work_axes(self) -> None:
        """Iterations, and the work counters of the current problem's methods."""
        options = ["iteration", *(c for c, _ in get_problem(self.problem).work_axes)]
        self.param.x_axis.objects = options
        if self.x_axis not in options:
            self.x_axis = "iteration"

    def work_label(self, column: str) -> str:
        """The axis label of an ``x_axis`` choice."""
        return dict(get_problem(self.problem).work_axes).get(column, column)

    def _drop_undeclared_problem_settings(self) -> None:
        # Also a value the new problem declares under the same name but does not accept
        # (svm-dual's start='uniform' on logreg-l1, whose starts are zero and vertex).
        kept = valid_settings(get_problem(self.problem).settings_decl, self.problem_settings)
        if kept != self.problem_settings:
            self.problem_settings = kept

    def _fit_race_to_problem(self) -> None:
        # A race with a run that cannot solve the new problem becomes that problem's own
        # comparison (not N copies of one method). A link sets its runs after its problem,
        # so its runs replace this default.
        solving = set(self.methods_for_problem())
        if any(spec.method not in solving for spec in self.specs):
            self.specs = default_specs(self.problem)

    def quietly(self) -> _Quiet:
        """Context manager: set parameters without applying dataset presets (links)."""
        return _Quiet(self)

    def apply_preset(self, name: str) -> None:
        """Apply the suggested set-up of dataset ``name`` (problem, settings, budgets)."""
        preset = preset_for(name)
        with self.quietly():
            self.param.update(**{k: v for k, v in preset.items() if k != "problem_settings"})
            self.problem_settings = dict(preset["problem_settings"])

    def problem_declared(self) -> list[Setting]:
        return list(get_problem(self.problem).settings_decl)

    def set_problem_setting(self, name: str, value: Any) -> None:
        """Set one declared problem setting (``None`` or the default removes the override)."""
        self.problem_settings = with_setting(
            self.problem_settings, self.problem_declared(), name, value, self.problem
        )

    def problem_value(self, name: str) -> Any:
        """The value the problem is built with: set, implied by another setting (a preset),
        or declared default."""
        if name in self.problem_settings:
            return self.problem_settings[name]
        declared = {s.name: s for s in self.problem_declared()}[name]
        implied = get_problem(self.problem).implied_settings(self.problem_settings)
        return implied.get(name, declared.default)

    def methods_for_problem(self) -> list[str]:
        return [m for m, spec in METHODS.items() if self.problem in spec.problems]

    def add_run(self, method: str | None = None, step: str | None = None) -> RunSpec | None:
        """Append a run (default: the first method solving the problem that is not racing)."""
        if len(self.specs) >= MAX_RUNS:
            self.notify(f"a race holds at most {MAX_RUNS} runs; remove one first", "warning")
            return None
        if method is None:
            racing = {s.method for s in self.specs}
            candidates = self.methods_for_problem() or list(METHODS)
            method = next((m for m in candidates if m not in racing), candidates[0])
        step = step or getattr(METHODS[method], "step", None) or METHODS[method].step_rules[0]
        spec = RunSpec(method=method, step=step)
        self.specs = [*self.specs, spec]
        return spec

    def duplicate_run(self, index: int) -> RunSpec | None:
        if len(self.specs) >= MAX_RUNS:
            self.notify(f"a race holds at most {MAX_RUNS} runs; remove one first", "warning")
            return None
        spec = self.specs[index].copy()
        self.specs = [*self.specs[: index + 1], spec, *self.specs[index + 1 :]]
        return spec

    def remove_run(self, index: int) -> None:
        self.specs = [s for i, s in enumerate(self.specs) if i != index]

    def budget(self) -> Budget:
        counts_samples = "samples" in dict(get_problem(self.problem).work_axes)
        return Budget(
            tol=float(self.tol),
            max_iter=int(self.max_iter),
            max_time=float(self.max_time),
            max_work=(
                ("samples", float(self.max_samples))
                if self.max_samples > 0 and counts_samples
                else None
            ),
        )

    def preprocessing(self) -> Preprocessing:
        return Preprocessing(
            standardize=bool(self.standardize),
            normalize=bool(self.normalize),
            test_size=float(self.test_size) if self.test_size else None,
            seed=int(self.seed),
        )

    def dataset_source(self) -> str:
        """What :func:`ermviz.data.load_dataset` is given: a name, or an upload's temp path."""
        if self.dataset in self.uploads:
            return str(self.uploads[self.dataset])
        return self.dataset

    def labels(self) -> list[str]:
        """One distinct label per run: ``FW exact``, and ``(2)`` ... for repeats."""
        out, seen = [], {}
        for spec in self.specs:
            base = f"{spec.method.upper()} {spec.step}"
            if spec.settings:
                base += " " + " ".join(f"{k}={v}" for k, v in sorted(spec.settings.items()))
            seen[base] = seen.get(base, 0) + 1
            out.append(base if seen[base] == 1 else f"{base} ({seen[base]})")
        return out

    def run_configs(self, slots: list[Slot] | None = None) -> list[RunConfig]:
        """One :class:`RunConfig` per slot of the race (default: :meth:`new_slots`);
        budgets and preprocessing are validated here."""
        budget = self.budget()
        prep = self.preprocessing()
        return [
            RunConfig(
                dataset=self.dataset_source(),
                problem=self.problem,
                method=slot.method,
                step=slot.step,
                settings={**self.problem_settings, **slot.settings},
                budget=budget,
                preprocessing=prep,
                label=slot.label,
            )
            for slot in (self.new_slots() if slots is None else slots)
        ]

    def new_slots(self) -> list[Slot]:
        """The race's places: one per run spec, or ``repeat`` per spec of a stochastic
        method (seeds ``seed``, ``seed + 1``, ...; one colour and one ``group``)."""
        return expand_repeats(self.specs, self.labels(), int(self.repeat), self.dataset)

    def current_setup(self) -> dict[str, str]:
        """The race configuration as short texts (what a kept reference records)."""
        skip = ("specs", "problem_settings", "animate", "step_delay")
        config = {p: getattr(self, p) for p in CONFIG_PARAMS if p not in skip}
        config.update({s.name: self.problem_value(s.name) for s in self.problem_declared()})
        return setup_of(config, self.labels())


class _Quiet:
    def __init__(self, model: Configuration) -> None:
        self.model = model
        self.saved = False

    def __enter__(self) -> Configuration:
        self.saved = self.model._quiet
        self.model._quiet = True
        return self.model

    def __exit__(self, *exc: object) -> None:
        self.model._quiet = self.saved
