"""Compile the lessons' numba kernels in the background while the server already answers.

numba compiles a kernel per argument type (dense or CSR matrix, per problem) and keeps it
in an on-disk cache (``NUMBA_CACHE_DIR``, else ``__pycache__`` beside the sources). On a
fresh install nothing is cached and compiling every kernel the lessons use takes minutes
on a 2-core machine; a cached kernel still takes a fraction of a second to load into a
new process. ``make serve`` runs::

    panel serve app.py --setup ermviz/app/warmup.py

and the set-up returns at once (the page answers within seconds) after starting
:func:`start_background`:

* a **child process** (``python -m ermviz.app.warmup --child``) compiles the kernels of
  :func:`plan` in order, the first lesson's (:data:`~ermviz.app.lessons.FIRST_LESSON`)
  first, then every other available lesson's, then the Frank-Wolfe family on small dense
  and sparse problems, and fills the on-disk cache. A process rather than a thread:
  compiling holds the GIL most of the time, and in the server's process it would slow
  every page being built (measured: the event loop's p95 wake-up lag 9.3 ms with a
  compiling thread, 2.7 ms with a compiling child; README, "Set-up");
* a **daemon thread** in the server reads the child's progress, prints it on the
  terminal (``ermviz: compiling kernels 3/158: PFW exact on svm-dual (wdbc)``), and loads
  each lesson's kernels into the server as soon as the child has compiled them (from the
  cache, a fraction of a second each), so that the first Start of a lesson is quick.

:func:`progress` tells how far it is (the page's status line reads it,
:func:`status_line`). A race started before its kernels are compiled waits for the
child (:func:`wait_for_kernels`, installed as :data:`ermviz.app.lifecycle.KERNELS_GATE`)
and the page says "compiling" meanwhile, instead of compiling them again in the server.
:func:`stop` (also at exit) ends the child and the thread at once.

It also runs as ``python -m ermviz.app.warmup`` (compiles in this process and fills the
on-disk cache after an install, printing each step) and :func:`warm_up` can be called
from any process.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from ermviz import workers

#: The per-item steps each kernel is advanced by (enough to run every code path once).
STEPS = 5


class Item(NamedTuple):
    """One run to build and advance a few steps: its kernels are then compiled.

    ``group`` names the problem the items of a group share (a lesson, or one of the
    family's small problems), ``index`` the run within it; ``key`` is (problem, method,
    step), what a race waiting for its kernels compares (:func:`wait_for_kernels`)."""

    group: str
    index: int
    label: str
    key: tuple[str, str, str]
    dataset: str = ""


class Progress(NamedTuple):
    """How far the background warm-up is.

    ``done`` of ``total`` kernels compiled (by the child), ``current`` the one being
    compiled, ``finished`` once every one is compiled and loaded into the server (or the
    warm-up ended early: ``error`` then says why), ``phase`` one of ``idle`` (never
    started), ``compiling``, ``ready``, ``failed`` or ``stopped``.
    """

    done: int
    total: int
    current: str
    finished: bool
    phase: str = "idle"
    error: str = ""
    seconds: float = 0.0


# -- the plan ------------------------------------------------------------------------
def _lesson_models() -> list[tuple[str, Any]]:
    """(lesson name, a DashboardModel set to it) for every lesson available on this
    server, the first lesson first."""
    from ermviz.app.lessons import FIRST_LESSON, LESSONS, apply_lesson
    from ermviz.app.model import DashboardModel

    ordered = sorted(LESSONS, key=lambda lesson: lesson.name != FIRST_LESSON)
    out = []
    for lesson in ordered:
        model = DashboardModel(notifier=lambda level, message: None)
        if apply_lesson(model, lesson) is None:  # (None: applied; else its data is absent)
            out.append((lesson.name, model))
    return out


#: The family's small problems warmed after the lessons: (group, dataset kind, problem,
#: problem settings). Uploaded or catalog data then starts without compiling too.
_FAMILY_GROUPS = (
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
    for group, kind, problem, _ in _FAMILY_GROUPS:
        for i, (method, step) in enumerate(_family_runs(problem)):
            if (problem, method, step, kind) in seen:
                continue
            seen.add((problem, method, step, kind))
            label = f"{method.upper()} {step} on {problem} ({kind})"
            dataset = "toy-2d" if kind == "dense" else "sparse-synthetic"
            items.append(Item(group, i, label, (problem, method, step), dataset))
    return items


class _Builder:
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
            _, kind, problem, settings = next(g for g in _FAMILY_GROUPS if g[0] == group)
            self._problem = build_problem(problem, _family_dataset(kind), **settings)
        else:
            if self._lessons is None:
                self._lessons = dict(_lesson_models())
            self._model = self._lessons.pop(group)
            self._problem = self._model.build_problem()

    def build(self, item: Item) -> None:
        """Build ``item``'s run and advance it :data:`STEPS` steps (compiles or loads its
        kernels)."""
        from ermviz.registry import build_solver

        self._enter(item.group)
        if self._model is None:
            _, method, step = item.key
            solver = build_solver(self._problem, method, step, {}, 1e-6)
        else:
            from ermviz.app.model import CHUNK_SECONDS
            from ermviz.experiment import make_run

            cfg = self._model.run_configs()[item.index]
            solver = make_run(cfg, problem=self._problem, chunk_seconds=CHUNK_SECONDS).solver
        solver.advance(STEPS, STEPS)


def warm_up(verbose: bool = False, items: Sequence[Item] | None = None) -> float:
    """Build and advance every run of :func:`plan` (or ``items``) in this process;
    returns the seconds it took. ``verbose`` prints each step."""
    t0 = time.perf_counter()
    items = plan() if items is None else list(items)
    builder = _Builder()
    for n, item in enumerate(items, 1):
        if verbose:
            print(f"ermviz: compiling kernels {n}/{len(items)}: {item.label}", flush=True)
        try:
            builder.build(item)
        except Exception as exc:  # one failing kernel must not stop the others
            if verbose:
                print(f"ermviz: warm-up of {item.label} failed: {_one_line(exc)}", flush=True)
    return time.perf_counter() - t0


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# -- the child process -----------------------------------------------------------------
def _child_main() -> int:
    """Compile :func:`plan`'s items in order, telling the parent on stdout (one JSON
    object a line: ``{"plan": n}``, ``{"start": i}``, ``{"done": i}`` or
    ``{"failed": i, "error": ...}``); ends when the parent has gone."""
    parent = os.getppid()
    with contextlib.suppress(OSError):
        os.nice(5)  # pages being built first: the server's event loop is what users wait on

    def say(**msg: Any) -> None:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()

    items = plan()
    say(plan=[it._asdict() for it in items])
    builder = _Builder()
    for i, item in enumerate(items):
        if os.getppid() != parent:
            return 0  # the server has gone: nobody needs these kernels now
        say(start=i)
        t = time.perf_counter()
        try:
            builder.build(item)
        except Exception as exc:
            say(failed=i, error=_one_line(exc))
        else:
            say(done=i, seconds=round(time.perf_counter() - t, 3))
    return 0


# -- the server's side -----------------------------------------------------------------
class _State:
    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.items: list[Item] = []
        self.compiled: set[int] = set()  # by the child (in the on-disk cache now)
        self.current = ""
        self.phase = "idle"
        self.error = ""
        self.t0 = 0.0
        self.t_end = 0.0
        self.thread: threading.Thread | None = None
        self.child: subprocess.Popen | None = None
        self.stop = threading.Event()
        # Sessions whose Start waits for kernels: model -> labels of what it waits for.
        self.waiting: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        # Compile seconds the child measured per item, and the item it is on since when
        # (for wait_estimate).
        self.seconds: dict[int, float] = {}
        self.on: tuple[int, float] = (-1, 0.0)


_STATE = _State()


def progress() -> Progress:
    """How far the background warm-up is (thread-safe, cheap: the page polls it)."""
    s = _STATE
    with s.cond:
        finished = s.phase in ("ready", "failed", "stopped")
        end = s.t_end if finished else time.perf_counter()
        return Progress(
            done=len(s.compiled),
            total=len(s.items),
            current=s.current,
            finished=finished,
            phase=s.phase,
            error=s.error,
            seconds=(end - s.t0) if s.t0 else 0.0,
        )


def waiting_for(model: Any) -> list[str]:
    """Labels of the kernels the Start of ``model``'s session waits for (empty: none)."""
    with _STATE.cond:
        return list(_STATE.waiting.get(model, ()))


def wait_estimate(model: Any) -> float | None:
    """Seconds the Start of ``model``'s session should still wait for its kernels (those of
    :func:`waiting_for`), from what the child measured: each waited kernel takes about as
    long as the same (problem, method, step) took on other data (the same code compiled
    for another array type), less what the child has spent on it so far. None when one of
    them has no such measure (the first of its kind) or has already taken longer."""
    s = _STATE
    with s.cond:
        labels = s.waiting.get(model)
        if not labels:
            return None
        index = {it.label: i for i, it in enumerate(s.items)}
        left = 0.0
        for label in labels:
            i = index.get(label, -1)
            if i < 0:
                return None
            same = [t for j, t in s.seconds.items() if j != i and s.items[j].key == s.items[i].key]
            if not same:
                return None
            spent = time.perf_counter() - s.on[1] if s.on[0] == i else 0.0
            if spent > max(same):
                return None
            left += max(same) - spent
        return left


def status_line(model: Any = None) -> str:
    """The page's one-line account of the warm-up (plain text; empty once ready):
    ``compiling kernels 3/40: PFW exact on svm-dual (wdbc)``, and for a session whose
    Start waits, what it waits for."""
    p = progress()
    if p.phase in ("idle", "ready", "stopped"):
        return ""
    if p.phase == "failed":
        return f"kernel warm-up ended early ({p.error}); races compile on their first Start"
    text = f"compiling kernels {p.done}/{p.total}: {p.current}"
    if model is not None:
        waits = waiting_for(model)
        if waits:
            text = f"race: compiling (waits for {len(waits)} kernels) — " + text
    return text


def status_view(model: Any = None, period_ms: int = 500) -> Any:
    """A one-line pane for the page's toolbar showing :func:`status_line` (``model``:
    the session's :class:`~ermviz.app.model.DashboardModel`, for its "compiling" wait);
    in a served session it updates itself every ``period_ms`` until the warm-up has
    finished, then hides. Hidden from the start when no warm-up is running."""
    import panel as pn

    def html() -> str:
        import html as _html

        p = progress()
        waits = bool(model is not None and waiting_for(model))
        return (
            f'<span class="warmup-status" data-phase="{p.phase}" data-done="{p.done}" '
            f'data-total="{p.total}" data-waiting="{int(waits)}" '
            'style="color:#8a5a00">&#9881; '
            f"{_html.escape(status_line(model))}</span>"
        )

    pane = pn.pane.HTML(
        html(), sizing_mode="stretch_width", margin=(0, 10), visible=bool(status_line(model))
    )
    if progress().finished or progress().phase == "idle":
        return pane
    callback: Any = None

    def update() -> None:
        line = status_line(model)
        pane.visible = bool(line)
        if line:
            pane.object = html()
        if progress().finished and callback is not None:
            callback.stop()

    if pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
        callback = pn.state.add_periodic_callback(update, period=period_ms)
    return pane


def _echo(line: str) -> None:
    if workers.task_id() in (None, 0):  # (with --procs N, worker 0 speaks for all)
        print(f"ermviz: {line}", flush=True)


def _finish(phase: str, error: str = "") -> None:
    with _STATE.cond:
        if _STATE.phase in ("ready", "failed", "stopped"):
            return
        _STATE.phase, _STATE.error, _STATE.current = phase, error, ""
        _STATE.t_end = time.perf_counter()
        _STATE.cond.notify_all()


def _serve(echo: Callable[[str], None]) -> None:
    """The server's warm-up thread: run the child, follow it, load what it compiled."""
    s = _STATE
    try:
        # Imported here, not in the server's set-up: the server starts listening first.
        from ermviz.app import lifecycle

        lifecycle.KERNELS_GATE = wait_for_kernels
        with s.cond:
            s.phase = "compiling"
            s.current = "listing the lessons' runs"
        items: list[Item] = []
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        # (ermviz.workers: with --procs N, worker 0 runs the child, the others follow it)
        s.child = workers.popen(
            [sys.executable, "-m", "ermviz.app.warmup", "--child"],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        builder = _Builder()
        to_load: list[int] = []
        assert s.child.stdout is not None
        for line in s.child.stdout:
            if s.stop.is_set():
                return
            try:
                msg = json.loads(line)
            except ValueError:
                continue  # (a library's stray print)
            if "plan" in msg:
                # The child lists the plan (the server's thread need not import and set up
                # every lesson while the first pages are being built).
                items = [
                    Item(d["group"], d["index"], d["label"], tuple(d["key"]), d["dataset"])
                    for d in msg["plan"]
                ]
                with s.cond:
                    s.items = items
                echo(
                    f"compiling {len(items)} kernels in the background, the first lesson's "
                    "first; the page answers meanwhile"
                )
            elif "start" in msg:
                i = msg["start"]
                with s.cond:
                    s.current = items[i].label
                    s.on = (i, time.perf_counter())
                echo(f"compiling kernels {i + 1}/{len(items)}: {items[i].label}")
            elif "done" in msg or "failed" in msg:
                i = msg.get("done", msg.get("failed"))
                if "failed" in msg:
                    echo(f"warm-up of {items[i].label} failed: {msg.get('error', '')}")
                with s.cond:
                    s.compiled.add(i)
                    if "seconds" in msg:
                        s.seconds[i] = float(msg["seconds"])
                    s.cond.notify_all()
                # Load the lessons' kernels the child has compiled while it compiles the
                # next one: the first lesson is ready in the server long before the last
                # kernel. The family's are left in the cache (loaded by their first race,
                # a fraction of a second each): loading all of them here would hold the
                # GIL for tens of seconds while the first pages are being built.
                if not items[i].group.startswith("fw:"):
                    to_load.append(i)
                while to_load and not s.stop.is_set():
                    _load(builder, items[to_load.pop(0)])
        rc = s.child.wait()
        if s.stop.is_set():
            return
        with s.cond:
            done = len(s.compiled)
            s.compiled.update(range(len(items)))  # (a crashed child: nothing to wait for)
            seconds = time.perf_counter() - s.t0
        if rc != 0 or not items:
            why = f"the warm-up process exited with status {rc} after {done} of {len(items)}"
            echo(f"{why} kernels; the others compile on their race's first Start")
            _finish("failed", why)
            return
        echo(f"kernels ready ({len(items)} compiled, the lessons' loaded, in {seconds:.0f} s)")
        _finish("ready")
        from ermviz.app import memory

        memory.freeze_long_lived()  # the loaded kernels: out of every collection's walk
    except Exception as exc:  # the server keeps serving: races compile on their Start
        echo(f"kernel warm-up failed ({_one_line(exc)}); races compile on their first Start")
        _finish("failed", _one_line(exc))
    finally:
        if s.stop.is_set():
            _finish("stopped")


def _load(builder: _Builder, item: Item) -> None:
    """Load ``item``'s kernels, compiled by the child, into this process."""
    with contextlib.suppress(Exception):  # told by the child already; its race shows it
        builder.build(item)


def start_background(echo: Callable[[str], None] = _echo) -> None:
    """Start the warm-up (child process + server thread) unless it has started; returns
    at once. Installs :func:`wait_for_kernels` as the model's kernel gate and :func:`stop`
    at exit."""
    s = _STATE
    with s.cond:
        if s.thread is not None:
            return
        s.t0 = time.perf_counter()
        s.thread = threading.Thread(target=_serve, args=(echo,), name="ermviz-warmup", daemon=True)
    atexit.register(_at_exit)
    s.thread.start()


def stop() -> None:
    """End the warm-up now: the child is killed (it only fills a cache), the thread ends
    after the kernel it is loading; waiting races go on (they compile what they need)."""
    s = _STATE
    s.stop.set()
    child = s.child
    if child is not None and child.poll() is None:
        child.kill()
        with contextlib.suppress(Exception):
            child.wait(1.0)
    _finish("stopped")


def _at_exit() -> None:
    """The server is exiting (Ctrl-C, SIGTERM): end the warm-up, stop the races still
    running, and spare the interpreter its final garbage collection of every session's
    objects (measured: it held a stopped server for 4-12 s; the memory goes back to the
    system with the process anyway)."""
    import gc

    from ermviz.runner import stop_all

    stop()
    stop_all(wait=0.3)
    # The warm-up thread ends after the kernel it is loading: let it, briefly, rather than
    # have a daemon thread inside numba while the interpreter tears down.
    thread = _STATE.thread
    if thread is not None and thread is not threading.current_thread():
        thread.join(5.0)
    gc.freeze()


def wait_for_kernels(model: Any, keys: Sequence[tuple[str, str, str]]) -> None:
    """Block (a Start's worker thread) until the child has compiled every kernel of
    :func:`plan` whose (problem, method, step) is in ``keys``, or the warm-up ended, or the
    session closed. Meanwhile :func:`waiting_for` names them (the page shows "compiling").
    Kernels outside the plan, or more than :data:`WAIT_AHEAD` items ahead of the child,
    are not waited for (the race compiles them itself)."""
    s = _STATE
    wanted = set(keys)
    dataset = getattr(model, "dataset", "")
    with s.cond:
        while True:
            if s.phase != "compiling" or s.stop.is_set() or getattr(model, "closed", False):
                break
            pending_ids = [i for i in _needed(wanted, dataset) if i not in s.compiled]
            # Wait only for kernels the child is on or about to reach: one far down the
            # plan (an LS-SVM race while the child is still on the lessons' FW runs) would
            # keep the race "compiling" for minutes; the race compiles it itself sooner.
            if not pending_ids or min(pending_ids) > _next_item() + WAIT_AHEAD:
                break
            pending = [s.items[i].label for i in pending_ids]
            s.waiting[model] = pending
            s.cond.wait(0.5)
        s.waiting.pop(model, None)


#: How many of the plan's items ahead of the child a race still waits for (beyond that
#: it compiles its kernels itself).
WAIT_AHEAD = 3


def _next_item() -> int:
    """Index of the first plan item the child has not finished (the one it is on)."""
    s = _STATE
    return next((i for i in range(len(s.items)) if i not in s.compiled), len(s.items))


def _needed(wanted: set[tuple[str, str, str]], dataset: str) -> list[int]:
    """Indices of the plan's items a race of ``wanted`` keys on ``dataset`` waits for: per
    key, the items on that dataset, else the key's first item (the same kernels, perhaps
    for other data: the race then compiles what differs itself)."""
    needed: dict[tuple[str, str, str], list[int]] = {}
    for i, it in enumerate(_STATE.items):
        if it.key not in wanted:
            continue
        have = needed.setdefault(it.key, [])
        if it.dataset == dataset:
            if have and _STATE.items[have[0]].dataset != dataset:
                have.clear()
            have.append(i)
        elif not have:
            have.append(i)
    return [i for ids in needed.values() for i in ids]


def _main(argv: Sequence[str]) -> int:
    if "--child" in argv:
        return _child_main()
    seconds = warm_up(verbose=True)
    print(f"ermviz: numba kernels warm ({seconds:.2f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
elif __name__ == "panel_setup_module":
    # `panel serve --setup` runs this file as a module of its own name: start the warm-up
    # of the importable module, whose progress the pages read.
    from ermviz.app import memory as _memory
    from ermviz.app import model as _model  # noqa: F401  (pandas, scipy, the registry...)
    from ermviz.app import warmup as _warmup

    # Before any session: the imports leave the garbage collector's sight for good.
    _memory.freeze_imports()
    _warmup.start_background()
