"""What the dashboard's warm-up compiles, and the process that compiles it.

:func:`plan` lists the runs whose kernels a fresh install compiles before anyone asks (the
first lesson's, every other available lesson's, then the Frank-Wolfe family on a small
dense and a small sparse problem); :class:`Builder` builds and advances one of them, which
compiles its kernels (or loads them from numba's on-disk cache). :func:`child_main` is the
compiling process the server starts (``python -m ermviz.app.serving.warmup --child``): it builds the
items the server hands it on stdin, one at a time, and reports on stdout
(:mod:`ermviz.app.serving.warmup` schedules them, several such processes at once when cores are
free). The server's side is :mod:`ermviz.app.serving.warmup`, which re-exports the names here.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any, NamedTuple

#: The per-item steps each kernel is advanced by (enough to run every code path once).
STEPS = 5


class Item(NamedTuple):
    """One run to build and advance a few steps: its kernels are then compiled.

    ``group`` names the problem the items of a group share (a lesson, or one of the
    family's small problems), ``index`` the run within it; ``key`` is (problem, method,
    step), what a race waiting for its kernels compares
    (:func:`ermviz.app.serving.warmup.wait_for_kernels`)."""

    group: str
    index: int
    label: str
    key: tuple[str, str, str]
    dataset: str = ""


def _lesson_models() -> list[tuple[str, Any]]:
    """(lesson name, a DashboardModel set to it) for every lesson available on this
    server, the first lesson first."""
    from ermviz.app.lessons import FIRST_LESSON, LESSONS, apply_lesson
    from ermviz.app.state.model import DashboardModel

    ordered = sorted(LESSONS, key=lambda lesson: lesson.name != FIRST_LESSON)
    out = []
    for lesson in ordered:
        model = DashboardModel(notifier=lambda level, message: None)
        if apply_lesson(model, lesson) is None:  # (None: applied; else its data is absent)
            out.append((lesson.name, model))
    return out


#: The family's small problems warmed after the lessons: (group, dataset kind, problem,
#: problem settings). Uploaded or catalog data then starts without compiling too.
FAMILY_GROUPS = (
    ("fw:dense:svm-dual", "dense", "svm-dual", {}),
    ("fw:dense:logreg-l1", "dense", "logreg-l1", {"radius": 3.0}),
    ("fw:sparse:svm-dual", "sparse", "svm-dual", {}),
    ("fw:sparse:logreg-l1", "sparse", "logreg-l1", {"radius": 3.0}),
)


def _family_dataset(kind: str) -> Any:
    from ermviz.data import load_dataset

    if kind == "dense":
        return load_dataset("toy-2d")
    return load_dataset("sparse-synthetic", n=40, p=60, density=0.2)


def _family_runs(problem: str) -> list[tuple[str, str]]:
    from ermviz.registry import METHODS

    # The dashboard's races start with the Frank-Wolfe family; other families compile
    # on their first use outside the lessons.
    return [
        (method, step)
        for method, spec in METHODS.items()
        if problem in spec.problems and spec.family == "frank-wolfe"
        for step in spec.step_rules
    ]


def plan() -> list[Item]:
    """Every kernel the warm-up compiles, in order: the first lesson's runs, the other
    available lessons' runs, then the Frank-Wolfe methods with every step rule on a small
    dense and a small sparse problem; a (problem, method, step, data) seen before is not
    repeated."""
    items: list[Item] = []
    seen: set[tuple[str, ...]] = set()
    for name, model in _lesson_models():
        for i, (slot, label) in enumerate(zip(model.new_slots(), model.labels(), strict=False)):
            key = (model.problem, slot.method, slot.step)
            if (*key, model.dataset, repr(sorted(slot.settings.items()))) in seen:
                continue
            seen.add((*key, model.dataset, repr(sorted(slot.settings.items()))))
            label = f"{label} on {model.problem} ({model.dataset})"
            items.append(Item(name, i, label, key, model.dataset))
    for group, kind, problem, _ in FAMILY_GROUPS:
        for i, (method, step) in enumerate(_family_runs(problem)):
            if (problem, method, step, kind) in seen:
                continue
            seen.add((problem, method, step, kind))
            label = f"{method.upper()} {step} on {problem} ({kind})"
            dataset = "toy-2d" if kind == "dense" else "sparse-synthetic"
            items.append(Item(group, i, label, (problem, method, step), dataset))
    return items


def kind_of(solver: Any) -> str:
    """The kernels an item compiles, roughly: its solver's class and its data's storage
    (two items of one kind share their kernels; the warm-up does not compile one kind in
    two processes at once)."""
    from ermviz.compile_notice import storage_of

    return f"{type(solver).__name__}:{storage_of(solver.problem) or 'none'}"


class Builder:
    """Builds the items of :func:`plan` one at a time, sharing each group's problem."""

    def __init__(self) -> None:
        self._group: str | None = None
        self._problem: Any = None
        self._model: Any = None
        self._lessons: dict[str, Any] | None = None

    def _enter(self, group: str) -> None:
        if group == self._group:
            return
        from ermviz.registry import build_problem

        self._group, self._model, self._problem = group, None, None
        if group.startswith("fw:"):
            _, kind, problem, settings = next(g for g in FAMILY_GROUPS if g[0] == group)
            self._problem = build_problem(problem, _family_dataset(kind), **settings)
        else:
            if self._lessons is None:
                self._lessons = dict(_lesson_models())
            # (kept: a process may come back to a lesson after others, the queue follows
            # the pages; its problem comes from the shared problem cache then)
            self._model = self._lessons[group]
            self._problem = self._model.build_problem()

    def build(self, item: Item) -> Any:
        """Build ``item``'s run and advance it :data:`STEPS` steps (compiles or loads its
        kernels); returns its solver."""
        from ermviz.registry import build_solver

        self._enter(item.group)
        if self._model is None:
            _, method, step = item.key
            solver = build_solver(self._problem, method, step, {}, 1e-6)
        else:
            from ermviz.app.state.model import CHUNK_SECONDS
            from ermviz.experiment import make_run

            cfg = self._model.run_configs()[item.index]
            solver = make_run(cfg, problem=self._problem, chunk_seconds=CHUNK_SECONDS).solver
        solver.advance(STEPS, STEPS)
        return solver


def warm_up(verbose: bool = False, items: Sequence[Item] | None = None) -> float:
    """Build and advance every run of :func:`plan` (or ``items``) in this process;
    returns the seconds it took. ``verbose`` prints each step."""
    t0 = time.perf_counter()
    items = plan() if items is None else list(items)
    builder = Builder()
    for n, item in enumerate(items, 1):
        if verbose:
            print(f"ermviz: warming kernels {n}/{len(items)}: {item.label}", flush=True)
        try:
            builder.build(item)
        except Exception as exc:  # one failing kernel must not stop the others
            if verbose:
                print(f"ermviz: warm-up of {item.label} failed: {one_line(exc)}", flush=True)
    return time.perf_counter() - t0


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# -- the compiling process -------------------------------------------------------------
def child_main(send_plan: bool) -> int:
    """Build the items the server sends on stdin (one JSON object a line,
    ``{"build": i, "item": {...}}``), telling it on stdout (one JSON object a line):
    ``{"plan": [...]}`` first when ``send_plan``, then per item ``{"start": i}``,
    ``{"compiling": i}`` when numba starts compiling for it (not sent when every kernel
    loads from the cache), and ``{"done": i, "seconds": wall, "cpu": cpu, "compiled":
    bool, "kind": ...}`` or ``{"failed": i, "error": ...}``. Ends at the end of stdin
    (the server closed it, or is gone)."""
    from ermviz import compile_notice

    with contextlib.suppress(OSError):
        os.nice(5)  # pages being built first: the server's event loop is what users wait on

    out = sys.stdout

    def say(**msg: Any) -> None:
        out.write(json.dumps(msg) + "\n")
        out.flush()

    # The notices of compile_notice go to the server as "compiling" messages; nothing
    # else of this process's own printing may reach the protocol on stdout.
    sys.stdout = sys.stderr
    current = {"i": -1, "compiled": False}

    def on_compile(line: str) -> None:
        if not current["compiled"]:
            current["compiled"] = True
            say(compiling=current["i"])

    compile_notice.set_sink(on_compile)
    if send_plan:
        say(plan=[it._asdict() for it in plan()])
    builder = Builder()
    for line in sys.stdin:
        try:
            msg = json.loads(line)
            i = int(msg["build"])
            d = msg["item"]
            item = Item(d["group"], d["index"], d["label"], tuple(d["key"]), d["dataset"])
        except (ValueError, KeyError, TypeError):
            continue
        current.update(i=i, compiled=False)
        say(start=i)
        t, c = time.perf_counter(), time.process_time()
        try:
            solver = builder.build(item)
        except Exception as exc:
            say(failed=i, error=one_line(exc))
        else:
            say(
                done=i,
                seconds=round(time.perf_counter() - t, 3),
                cpu=round(time.process_time() - c, 3),
                compiled=current["compiled"],
                kind=kind_of(solver),
            )
    return 0
