"""The live race's lifecycle: build its runs, start, pause, resume, stop, reset, end.

:class:`RaceLifecycle` adds the race to a :class:`~ermviz.app.state.config.Configuration`: the
race lives in ``slots`` (one :class:`~ermviz.app.state.race.Slot` per run, holding the
:class:`~ermviz.runner.Run` or the error that prevented it) and ``race_revision`` increases
when a new race replaces it. A Start is two parts: :meth:`~RaceLifecycle.prepare` (slow:
data, problem, numba; safe in a worker thread) and :meth:`~RaceLifecycle.launch` (on the
event loop). Errors a user can cause (bad data, a run that cannot be built) never escape as
exceptions: they become the status ``error`` of the runs they concern and a notification.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from typing import Any

import param

from ermviz.app.state.config import Configuration, is_teachable
from ermviz.app.state.messages import dashboard_wording, one_line
from ermviz.app.state.problem_cache import shared_problem
from ermviz.app.state.race import Slot
from ermviz.base import Problem
from ermviz.experiment import load_data, make_run
from ermviz.families.scaling import scaling_notices
from ermviz.registry import build_problem
from ermviz.runner import Run

#: Target duration of one solver chunk: small, so curves grow smoothly and pause/stop
#: react within ~10 ms.
CHUNK_SECONDS = 0.01
#: Niceness of the solver threads against the event loop (``Run.thread_niceness``): on 2
#: cores with chromium beside the server, equal priority left ~20 % of the CPU idle in a
#: race (threads waiting for the GIL of a descheduled event loop), +5 about half of that.
SOLVER_NICENESS = 5
#: Set by the server's background warm-up (:func:`ermviz.app.serving.warmup.wait_for_kernels`):
#: a race's (problem, method, step) keys wait, shown as "compiling", for kernels compiled
#: in the background, not compiled twice. None (default): build at once.
KERNELS_GATE: Callable[[Any, list[tuple[str, str, str]]], None] | None = None


class RaceLifecycle(Configuration):
    """A session's configuration and its live race (see the module docstring)."""

    slots = param.List(default=[], doc="The live race: one Slot per run")
    race_revision = param.Integer(default=0, doc="Bumped when a new race replaces the old one")

    def __init__(self, notifier: Callable[[str, str], None] | None = None, **params: Any) -> None:
        super().__init__(notifier, **params)
        self._closed = False
        self._lock = threading.Lock()
        self.problem_obj: Problem | None = None
        self._built_problem: tuple[str, Problem] | None = None  # (its key, it)
        self._race_setup: dict[str, str] = {}

    def build_problem(self) -> Problem:
        """The problem every run of the race shares: the one built last while its data and
        settings are unchanged; a catalog dataset's shared by every session
        (:mod:`ermviz.app.state.problem_cache`; an upload's is its session's alone)."""
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
        """End of the session: stop every run and start none from now on (a Start still
        building its race)."""
        self._closed = True
        for slot in self.slots:
            if slot.run is not None:
                slot.run.stop()
