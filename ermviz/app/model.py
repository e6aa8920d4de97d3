"""The dashboard's state: one :class:`DashboardModel` per browser session, no widgets.

Everything the dashboard shows or does is decided here, so it can be driven and tested
without a browser: the dataset (a bundled name, a catalog name found on disk, or a file
the user uploaded), the problem and its settings, preprocessing, budgets, the seed, the
list of racing runs (:class:`~ermviz.app.runspec.RunSpec`: method + step rule + that
method's settings) and the live race itself (:class:`~ermviz.app.race.Slot`: one per run,
holding the :class:`~ermviz.runner.Run` or the error that prevented it).

Errors a user can cause (bad data, a method that does not solve the chosen problem, an
out-of-range value) never escape as exceptions: they become the status ``error`` of the
runs they concern and a notification (:meth:`DashboardModel.notify`).

Its parts live beside it, their names importable from here too: ``runspec`` (run specs,
settings), ``race`` (slots, results, traces, exports), ``datasets`` (lists, presets,
uploads), ``messages`` (notifications) and ``references`` (races kept as references).
"""

from __future__ import annotations

import functools
import io
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import param

from ermviz.app.datasets import (
    BUNDLED,
    DATASET_PRESETS,
    MAX_UPLOAD_BYTES,
    UPLOAD_PREFIX,
    UploadFolder,
    available_datasets,
    describe_dataset,
    preset_for,
    upload_file_name,
    upload_refusal,
)
from ermviz.app.messages import _panel_notifier, dashboard_wording, one_line
from ermviz.app.problem_cache import shared_problem
from ermviz.app.race import (
    PALETTE,
    RESULT_COLUMNS,
    THRESHOLDS,
    Slot,
    csv_bytes,
    expand_repeats,
    parquet_bytes,
    result_rows_of,
    traces_of,
)
from ermviz.app.references import (
    MAX_REFERENCES,
    Reference,
    freeze_race,
    setup_of,
    traces_with_references,
)
from ermviz.app.runspec import (
    RunSpec,
    default_specs,
    parse_settings,
    settings_of,
    valid_settings,
    with_setting,
)
from ermviz.base import Problem
from ermviz.errors import DataError
from ermviz.experiment import Preprocessing, RunConfig, load_data, make_run
from ermviz.families.scaling import scaling_notices
from ermviz.registry import METHODS, PROBLEMS, build_problem, get_problem
from ermviz.runner import Budget, Run
from ermviz.settings import Setting

__all__ = [
    "BUNDLED",
    "CHUNK_SECONDS",
    "CONFIG_PARAMS",
    "DATASET_PRESETS",
    "MAX_RUNS",
    "MAX_UPLOAD_BYTES",
    "PALETTE",
    "RESULT_COLUMNS",
    "SOLVER_NICENESS",
    "THRESHOLDS",
    "UPLOAD_PREFIX",
    "DashboardModel",
    "RunSpec",
    "Slot",
    "available_datasets",
    "dashboard_wording",
    "default_specs",
    "describe_dataset",
    "is_teachable",
    "one_line",
    "parse_settings",
    "settings_of",
]

#: Runs a race may hold (one colour each).
MAX_RUNS = len(PALETTE)
#: Target duration of one solver chunk: small, so curves grow smoothly and pause/stop
#: react within ~10 ms.
CHUNK_SECONDS = 0.01
#: Niceness of the solver threads against the event loop (``Run.thread_niceness``): on 2
#: cores with chromium beside the server, equal priority left ~20 % of the CPU idle in a
#: race (threads waiting for the GIL of a descheduled event loop), +5 about half of that.
SOLVER_NICENESS = 5
#: Set by the server's background warm-up (:func:`ermviz.app.warmup.wait_for_kernels`):
#: a race's (problem, method, step) keys wait, shown as "compiling", for kernels compiled
#: in the background, not compiled twice. None (default): build at once.
KERNELS_GATE: Callable[[Any, list[tuple[str, str, str]]], None] | None = None

#: Parameters that make up the shareable configuration (see :mod:`ermviz.app.urlstate`).
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


class DashboardModel(param.Parameterized):
    """All the state of one dashboard session (configuration and live race).

    The configuration parameters (:data:`CONFIG_PARAMS`) are what a shared link carries;
    ``revision`` increases on every change of them, including a change inside a
    :class:`RunSpec`. The race lives in ``slots`` (one :class:`Slot` per run);
    ``race_revision`` increases when a new race replaces it.
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

    slots = param.List(default=[], doc="The live race: one Slot per run")
    race_revision = param.Integer(default=0, doc="Bumped when a new race replaces the old one")
    references = param.List(
        default=[], item_type=Reference, doc="Kept races drawn faded (oldest first)"
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
        self.uploads: dict[str, Path] = {}
        self._upload_folder = UploadFolder()
        self._quiet = False
        self._closed = False
        self._lock = threading.Lock()
        self.problem_obj: Problem | None = None
        self._built_problem: tuple[str, Problem] | None = None  # (its key, it)
        self._race_setup: dict[str, str] = {}
        self._kept_race = -1  # race_revision of the race last kept as a reference
        self._references_made = 0
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

    def build_problem(self) -> Problem:
        """The problem every run of the race shares: the one built last while its data and
        settings are unchanged; a catalog dataset's shared by every session
        (:mod:`ermviz.app.problem_cache`; an upload's is its session's alone)."""
        source = self.dataset_source()
        stamp = os.stat(source).st_mtime_ns if self.dataset in self.uploads else 0
        key = repr((source, stamp, self.preprocessing(), self.problem, self.problem_settings))
        if self._built_problem is not None and self._built_problem[0] == key:
            return self._built_problem[1]
        data = functools.partial(load_data, source, self.preprocessing())
        build = functools.partial(build_problem, self.problem, **self.problem_settings)
        problem = shared_problem(key, lambda: build(data()), self.dataset not in self.uploads)
        self._built_problem = (key, problem)
        return problem

    # -- the race --------------------------------------------------------------------
    def prepare(self) -> list[Slot]:
        """Build (not start) the runs of a new race; slow part (data, problem, numba).

        Safe to call from a worker thread: it touches no widget and notifies nobody;
        :meth:`launch` reports the errors it recorded in the slots.
        """
        slots = self.new_slots()
        if not slots:
            return slots
        gate = KERNELS_GATE
        if gate is not None:
            gate(self, [(self.problem, slot.method, slot.step) for slot in slots])
        try:
            configs = self.run_configs(slots)
            problem = self.build_problem()
        except Exception as exc:  # bad data or settings: every run of the race fails alike
            for slot in slots:
                slot.error = one_line(exc)
            self.problem_obj = None
            return slots
        self.problem_obj = problem
        keep = bool(self.animate) and is_teachable(problem)
        for slot, cfg in zip(slots, configs, strict=True):
            try:
                run = make_run(cfg, problem=problem, chunk_seconds=CHUNK_SECONDS)
                if keep:
                    # make_run has no keep_iterates switch: re-wrap its solver in a Run that
                    # keeps every iterate and waits step_delay between steps.
                    run = Run(
                        run.solver,
                        run.budget,
                        run.info,
                        run_id=run.run_id,
                        chunk_seconds=CHUNK_SECONDS,
                        keep_iterates=True,
                        step_delay=float(self.step_delay),
                    )
                run.info.dataset = self.dataset
                run.thread_niceness = SOLVER_NICENESS
                slot.run = run
            except Exception as exc:  # one bad run must not stop the others
                slot.error = one_line(exc)
        return slots

    def launch(self, slots: list[Slot], start: bool = True) -> None:
        """Replace the race by ``slots``, start their runs (unless ``start`` is False: then
        :meth:`start_runs` does), report their build errors."""
        self.stop(wait=0.2)
        with self._lock:
            self.slots = slots
            self.race_revision += 1
            self._race_setup = self.current_setup()
        if start:
            self.start_runs()
        errors = [s for s in slots if s.error]
        if errors:
            if all(s.error == errors[0].error for s in errors) and len(errors) == len(slots):
                self.notify(f"no run could start: {errors[0].error}")
            else:
                for slot in errors:
                    self.notify(f"{slot.label}: {slot.error}")
        # Set-up warnings (e.g. badly scaled features for coordinate descent), once each
        # even when several runs of the race raise the same one.
        # The problem's scaling check (ermviz.families.scaling) reads for each run's method
        # but words its warning alike for all of them: one per race.
        notices = (
            n
            for s in slots
            if s.run is not None
            for n in (
                *scaling_notices(getattr(s.run.solver, "problem", None), s.run.info.method),
                *s.run.solver.notices,
            )
        )
        for notice in dict.fromkeys(notices):
            self.notify(dashboard_wording(notice), "warning")

    def start_runs(self) -> None:
        """Start every built run of the race that has not started yet (none once the
        session has ended: a race being built when its page closed must not run on with
        nobody to stop it)."""
        if self._closed:
            return
        for slot in self.slots:
            if slot.run is not None and not slot.started:
                slot.started = True
                slot.run.start()

    def start(self) -> list[Slot]:
        """Build and start a new race (synchronously; the dashboard splits the two parts)."""
        if not self.specs:
            self.notify("add at least one run before starting", "warning")
            return []
        slots = self.prepare()
        self.launch(slots)
        return slots

    @property
    def active(self) -> bool:
        """True while at least one run is advancing."""
        return any(s.active for s in self.slots)

    @property
    def paused(self) -> bool:
        return any(s.run is not None and s.run.status == "paused" for s in self.slots)

    @property
    def race_status(self) -> str:
        """``idle`` (no race), ``running``, ``paused`` or ``finished``."""
        if not self.slots:
            return "idle"
        if self.active:
            return "running"
        if self.paused:
            return "paused"
        return "finished"

    def pause(self) -> None:
        for slot in self.slots:
            if slot.run is not None:
                slot.run.pause()

    def resume(self) -> None:
        for slot in self.slots:
            if slot.run is not None and slot.run.status == "paused":
                slot.run.resume()

    def stop(self, wait: float = 1.0) -> None:
        """Stop every run; each keeps its trace (ending with its last iterate)."""
        runs = [s.run for s in self.slots if s.run is not None and not s.run.done]
        for run in runs:
            run.stop()
        for run in runs:
            run.join(wait)

    def reset(self) -> None:
        """Stop the race and clear it (the configuration stays)."""
        self.stop()
        with self._lock:
            self.slots = []
            self.race_revision += 1

    @property
    def closed(self) -> bool:
        """True once :meth:`shutdown` ended the session: no run starts any more."""
        return self._closed

    def shutdown(self) -> None:
        """End of the session: stop every run, start none from now on (a Start still
        building its race), and delete uploaded files."""
        self._closed = True
        for slot in self.slots:
            if slot.run is not None:
                slot.run.stop()
        self._upload_folder.close()

    # -- uploads ---------------------------------------------------------------------
    def add_upload(self, filename: str, content: bytes | str) -> str | None:
        """Store an uploaded LIBSVM/CSV file, check that it parses, and select it.

        Returns the dataset name it gets (``upload:<file name>``), or None after notifying
        the reason (too large, empty, unparsable: the parser's one-line message).
        """
        if isinstance(content, str):
            content = content.encode("utf-8")
        safe = upload_file_name(filename)
        refusal = upload_refusal(safe, content)
        if refusal is not None:
            self.notify(refusal)
            return None
        try:
            path = self._upload_folder.store(safe, content)
        except DataError as exc:
            self.notify(str(exc))
            return None
        name = f"{UPLOAD_PREFIX}{safe}"
        self.uploads[name] = path
        objects = list(self.param.dataset.objects)
        if name not in objects:
            self.param.dataset.objects = [*objects, name]
        self.dataset = name
        return name

    # -- results ---------------------------------------------------------------------
    def results(self) -> pd.DataFrame:
        """One row per run: label, status, iterations, trace rows kept, times, final
        certificate and objective, time to reach each threshold, test accuracy (when there is
        a test split), message."""
        return pd.DataFrame(self.result_rows(), columns=list(RESULT_COLUMNS))

    def result_rows(self) -> list[dict[str, Any]]:
        """:meth:`results` as plain dicts (what the live table shows, without pandas)."""
        return result_rows_of(self.slots)

    def traces(self) -> pd.DataFrame:
        """Every run's whole trace (``run.frame()``), with its label, and each kept
        reference's thinned one, in one tidy frame; its ``race`` column says which race."""
        return traces_with_references(traces_of(self.slots, self._race_setup), self.references)

    # -- references ------------------------------------------------------------------
    def current_setup(self) -> dict[str, str]:
        """The race configuration as short texts (what a kept reference records)."""
        skip = ("specs", "problem_settings", "animate", "step_delay")
        config = {p: getattr(self, p) for p in CONFIG_PARAMS if p not in skip}
        config.update({s.name: self.problem_value(s.name) for s in self.problem_declared()})
        return setup_of(config, self.labels())

    @property
    def can_keep_reference(self) -> bool:
        """True when the race has ended (finished or stopped), has trace rows and is not
        kept yet."""
        return (
            self.race_status == "finished"
            and self._kept_race != self.race_revision
            and any(s.run is not None and len(s.run.trace) for s in self.slots)
        )

    def keep_reference(self) -> Reference | None:
        """Keep the ended race as a reference (dropping the oldest beyond MAX_REFERENCES)."""
        if self.race_status != "finished":
            self.notify("keep a race as reference once it has finished or been stopped", "warning")
            return None
        if self._kept_race == self.race_revision:
            self.notify("this race is kept already; start a new one to compare", "warning")
            return None
        ref = freeze_race(self.slots, self._references_made + 1, self._race_setup)
        if ref is None:
            self.notify("no run of this race has a trace to keep; start a race first", "warning")
            return None
        self._references_made += 1
        self._kept_race = self.race_revision
        kept = [*self.references, ref]
        if len(kept) > MAX_REFERENCES:
            self.notify(
                f"at most {MAX_REFERENCES} references are kept: {kept[0].name} was dropped",
                "info",
            )
        self.references = kept[-MAX_REFERENCES:]
        return ref

    def clear_references(self) -> None:
        """Drop every kept reference."""
        self.references = []

    def export_csv(self) -> io.BytesIO:
        return csv_bytes(self.traces())

    def export_parquet(self) -> io.BytesIO:
        return parquet_bytes(self.traces())


class _Quiet:
    def __init__(self, model: DashboardModel) -> None:
        self.model = model
        self.saved = False

    def __enter__(self) -> DashboardModel:
        self.saved = self.model._quiet
        self.model._quiet = True
        return self.model

    def __exit__(self, *exc: object) -> None:
        self.model._quiet = self.saved
