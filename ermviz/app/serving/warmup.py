"""Compile the lessons' numba kernels in the background while the server already answers.

numba compiles a kernel per argument type and keeps it in an on-disk cache
(``NUMBA_CACHE_DIR``, else ``__pycache__`` beside the sources). On a fresh install nothing
is cached; a cached kernel still takes a fraction of a second to load into a new process.
``make serve`` runs::

    panel serve app.py --setup ermviz/app/serving/warmup.py

and the set-up returns at once (the page answers within seconds) after starting
:func:`start_background`:

* **compiling processes** (``python -m ermviz.app.serving.warmup --child``,
  :func:`ermviz.app.serving.warmup_plan.child_main`, at nice 5) build the items of :func:`plan`
  the server hands them one at a time, which fills numba's on-disk cache. Processes rather
  than threads: compiling holds the GIL most of the time, and in the server's process it
  would slow every page being built (measured: the event loop's p95 wake-up lag 9.3 ms with
  a compiling thread, 2.7 ms with a compiling child). One process, plus one more per core
  that nothing else needs (up to :data:`MAX_PROCESSES`): while no race runs in the server
  the second core compiles too; once a race runs, the extra processes take no new item
  (they finish the one they are on) until the races end;
* the **schedule** follows what the open pages need: the plan's order (the first
  lesson's items first), except that a lesson loaded in a page (:func:`prioritize`, called
  by the page's lesson loader) or a race started (:func:`wait_for_kernels`) moves its
  items to the front of the queue; two processes never compile items of the same kind
  (solver and storage: the same kernels) at once;
* a **daemon thread** in the server starts the processes, loads each lesson's kernels into
  the server as soon as they are compiled (from the cache, a fraction of a second each) so
  that the first Start of a lesson is quick, and keeps the terminal informed: on a
  terminal one line that rewrites itself (``ermviz: compiling kernels 37/158, lessons 6/13
  ready, ~40 s left: PFW exact on svm-dual (wdbc)``; ``loading cached kernels`` when they
  come from the cache), in a log a few lines (started, first lesson ready, every lesson
  ready, done).

:func:`progress` tells how far it is (the page's status line reads it,
:func:`status_line`). A race started before its kernels are compiled waits for the
processes (:func:`wait_for_kernels`, installed as :data:`ermviz.app.state.lifecycle.KERNELS_GATE`),
its items moved to the front, and the page says "compiling" meanwhile, instead of
compiling them again in the server. :func:`stop` (also at exit) ends the processes and the
thread at once.

Estimates (for a status line such as "compiling the interior-point kernel, 40 s so far;
first launch only"): every item has an expected cost, its measured CPU seconds in plan
order on the project's reference machine (:data:`ermviz.compile_estimates.WARMUP_ITEM`)
scaled by the speed observed on this machine (the items done so far, their seconds over
their estimates). :func:`expected_seconds` gives the seconds until the items a session
waits for are compiled (simulating the processes working through the queue),
:attr:`Progress.eta` those until the whole plan is, :func:`waiting_since` when the
session's Start began to wait, and :attr:`Progress.action` whether the processes are
compiling or loading cached kernels.

It also runs as ``python -m ermviz.app.serving.warmup`` (builds the plan in this process, which
fills the on-disk cache after an install, printing each step) and :func:`warm_up` can be
called from any process.
"""

from __future__ import annotations

import atexit
import contextlib
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from ermviz import workers
from ermviz.app.serving import warmup_schedule as sched
from ermviz.app.serving.warmup_plan import (
    STEPS,
    Builder,
    Item,
    child_main,
    one_line,
    plan,
    warm_up,
)
from ermviz.app.serving.warmup_schedule import MAX_PROCESSES, State
from ermviz.app.serving.warmup_terminal import Terminal, seconds_text

_Builder = Builder  # (the name benchmarks/compile_times.py uses)
_one_line = one_line

__all__ = [
    "MAX_PROCESSES",
    "STEPS",
    "Item",
    "Progress",
    "expected_seconds",
    "plan",
    "prioritize",
    "progress",
    "start_background",
    "status_line",
    "status_view",
    "stop",
    "wait_for_kernels",
    "waiting_for",
    "waiting_since",
    "warm_up",
]


class Progress(NamedTuple):
    """How far the background warm-up is.

    ``done`` of ``total`` items compiled (by the processes), ``current`` the one being
    compiled (the first process's), ``finished`` once every one is compiled and loaded into
    the server (or the warm-up ended early: ``error`` then says why), ``phase`` one of
    ``idle`` (never started), ``compiling``, ``ready``, ``failed`` or ``stopped``;
    ``seconds`` since it started. ``action``: ``compiling`` while numba compiles,
    ``loading`` while every item so far came from the cache. ``lessons_ready`` of
    ``lessons_total`` lessons have all their items compiled; ``eta``: expected seconds until
    every item is (None when unknown or finished); ``processes``: compiling processes
    working now.
    """

    done: int
    total: int
    current: str
    finished: bool
    phase: str = "idle"
    error: str = ""
    seconds: float = 0.0
    action: str = "compiling"
    lessons_ready: int = 0
    lessons_total: int = 0
    eta: float | None = None
    processes: int = 0


_State = State  # (the name the tests use)
_STATE = State()


def progress() -> Progress:
    """How far the background warm-up is (thread-safe, cheap: the page polls it)."""
    s = _STATE
    with s.cond:
        finished = s.phase in ("ready", "failed", "stopped")
        end = s.t_end if finished else time.perf_counter()
        groups = sched.lesson_groups(s)
        ready = sum(1 for ids in groups.values() if all(i in s.compiled for i in ids))
        eta = None
        if s.phase == "compiling" and s.items:
            finish = sched.simulate(s)
            eta = max(finish.values()) if finish else None
        return Progress(
            done=len(s.compiled),
            total=len(s.items),
            current=s.current,
            finished=finished,
            phase=s.phase,
            error=s.error,
            seconds=(end - s.t0) if s.t0 else 0.0,
            action="loading" if (s.compiled and not s.compiled_any) else "compiling",
            lessons_ready=ready,
            lessons_total=len(groups),
            eta=eta,
            processes=sum(1 for c in s.children if c.item is not None),
        )


def waiting_for(model: Any) -> list[str]:
    """Labels of the kernels the Start of ``model``'s session waits for (empty: none)."""
    with _STATE.cond:
        return list(_STATE.waiting.get(model, ()))


def waiting_since(model: Any) -> float | None:
    """``time.perf_counter()`` when the Start of ``model``'s session began to wait for
    kernels (None: it does not wait)."""
    with _STATE.cond:
        return _STATE.since.get(model)


def expected_seconds(model: Any = None, keys: Sequence[tuple[str, str, str]] = ()) -> float | None:
    """Expected seconds until the items the Start of ``model``'s session waits for (or the
    items of ``keys`` on ``model``'s dataset) are compiled, from the estimate table scaled
    by this machine's observed speed; None when there is nothing to wait for."""
    s = _STATE
    with s.cond:
        if s.phase != "compiling":
            return None
        if keys:
            ids = sched.needed(s, set(keys), getattr(model, "dataset", ""))
        else:
            labels = set(s.waiting.get(model, ()))
            ids = [i for i, it in enumerate(s.items) if it.label in labels]
        pending = [i for i in ids if i not in s.compiled]
        if not pending:
            return None
        finish = sched.simulate(s)
        times = [finish[i] for i in pending if i in finish]
        return max(times) if times else None


def wait_estimate(model: Any) -> float | None:
    """Expected seconds the Start of ``model``'s session still waits for its kernels (those
    of :func:`waiting_for`; :func:`expected_seconds`), None when it waits for none or
    nothing is known about them (what the race status line quotes)."""
    return expected_seconds(model) if waiting_for(model) else None


def status_line(model: Any = None) -> str:
    """The page's one-line account of the warm-up (plain text; empty once ready):
    ``compiling kernels 3/40: PFW exact on svm-dual (wdbc) (~40 s left)``, and for a
    session whose Start waits, what it waits for."""
    p = progress()
    if p.phase in ("idle", "ready", "stopped"):
        return ""
    if p.phase == "failed":
        return f"kernel warm-up ended early ({p.error}); races compile on their first Start"
    verb = "loading cached kernels" if p.action == "loading" else "compiling kernels"
    text = f"{verb} {p.done}/{p.total}: {p.current}"
    if p.eta is not None:
        text += f" (~{seconds_text(p.eta)} left)"
    if model is not None:
        waits = waiting_for(model)
        if waits:
            text = f"race: compiling (waits for {len(waits)} kernels) — " + text
    return text


def status_view(model: Any = None, period_ms: int = 500) -> Any:
    """A one-line pane for the page's toolbar showing :func:`status_line` (``model``:
    the session's :class:`~ermviz.app.state.model.DashboardModel`, for its "compiling" wait);
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


def prioritize(model: Any, keys: Sequence[tuple[str, str, str]] | None = None) -> None:
    """Move the items of ``model``'s race (or of ``keys``) on ``model``'s dataset to the
    front of the warm-up's queue: a lesson was loaded in a page (its kernels are wanted
    next). Returns at once."""
    if keys is None:
        keys = [(model.problem, slot.method, slot.step) for slot in model.new_slots()]
    s = _STATE
    with s.cond:
        if s.phase != "compiling":
            return
        sched.to_front(s, sched.needed(s, set(keys), getattr(model, "dataset", "")))


def _serve(echo: Callable[[str], None], tty: bool) -> None:
    """The server's warm-up thread: run the processes, follow them, load what they
    compiled, keep the terminal informed."""
    s = _STATE
    out = Terminal(echo, tty)
    shared = None
    try:
        # Imported here, not in the server's set-up: the server starts listening first.
        from ermviz.app.state import lifecycle

        lifecycle.KERNELS_GATE = wait_for_kernels
        # With --procs N, worker 0 compiles and publishes; the others follow it.
        following = workers.follower()
        shared = None if following is not None else workers.publisher()
        with s.cond:
            s.phase = "compiling"
            s.current = "listing the lessons' runs"
            if following is not None:
                first = sched.Child(following, planner=True, follower=True)
            else:
                first = sched.spawn(planner=True)
                s.child = first.proc
                s.publish = shared.write if shared is not None else None
            s.children.append(first)
        _start_reader(s, first, echo, out)
        builder = Builder()
        extra_tried = False
        while not s.stop.is_set():
            with s.cond:
                if s.items and not extra_tried:
                    # The plan is known: a second process on a core nothing else needs.
                    extra_tried = True
                    if (
                        not first.follower
                        and sched.free_cores() >= 2
                        and MAX_PROCESSES >= 2
                        and len(s.queue) > 1
                    ):
                        extra = sched.spawn(planner=False)
                        s.children.append(extra)
                        _start_reader(s, extra, echo, out)
                sched.dispatch(s)  # (an extra process idle while races ran: the races ended?)
                alive = [c for c in s.children if c.proc.poll() is None]
                done = bool(s.items) and len(s.compiled) >= len(s.items)
                if not s.to_load and not done and alive:
                    s.cond.wait(0.25)
                load = s.to_load[:]
                s.to_load.clear()
                if s.items and not alive:
                    s.compiled.update(range(len(s.items)))  # (crashed: nothing to wait for)
            # Load the lessons' kernels the processes have compiled while they compile the
            # next ones: the first lesson is ready in the server long before the last
            # kernel. The family's are left in the cache (loaded by their first race, a
            # fraction of a second each): loading all of them here would hold the GIL for
            # tens of seconds while the first pages are being built.
            for i in load:
                if s.stop.is_set():
                    return
                _load(builder, s.items[i])
            out.update(progress())
            if done or not alive:
                break
        if s.stop.is_set():
            return
        for c in s.children:
            c.close()
        codes = [c.proc.wait() for c in s.children]
        if shared is not None:
            shared.close(next((rc for rc in codes if rc != 0), 0))
        with s.cond:
            seconds = time.perf_counter() - s.t0
            cached = not s.compiled_any
        rcs = [rc for rc in codes if rc != 0]
        if rcs or not s.items:
            why = f"the warm-up process exited with status {rcs[0] if rcs else '?'}"
            echo(f"{why}; the other kernels compile on their race's first Start")
            _finish("failed", why)
            return
        out.update(progress())
        how = "loaded from numba's cache" if cached else "compiled"
        out.line(f"kernels ready ({len(s.items)} {how}, the lessons' loaded, in {seconds:.0f} s)")
        _finish("ready")
        from ermviz.app.serving import memory

        memory.freeze_long_lived()  # the loaded kernels: out of every collection's walk
    except Exception as exc:  # the server keeps serving: races compile on their Start
        echo(f"kernel warm-up failed ({one_line(exc)}); races compile on their first Start")
        _finish("failed", one_line(exc))
        if shared is not None:
            shared.close(1)
    finally:
        if s.stop.is_set():
            _finish("stopped")


def _start_reader(s: State, child: sched.Child, echo: Callable[[str], None], out: Terminal) -> None:
    child.reader = threading.Thread(
        target=sched.read, args=(s, child, echo, out), name="ermviz-warmup-reader", daemon=True
    )
    child.reader.start()


def _load(builder: Builder, item: Item) -> None:
    """Load ``item``'s kernels, compiled by a process, into this one."""
    from ermviz import compile_notice

    previous = compile_notice.set_sink(None)  # (never compiles: a process did it)
    try:
        with contextlib.suppress(Exception):  # told by the process already; its race shows it
            builder.build(item)
    finally:
        compile_notice.set_sink(previous)


def start_background(echo: Callable[[str], None] = _echo) -> None:
    """Start the warm-up (processes + server thread) unless it has started; returns at
    once. Installs :func:`wait_for_kernels` as the model's kernel gate and :func:`stop` at
    exit. With the default ``echo`` on a terminal, the progress is one rewritten line."""
    s = _STATE
    with s.cond:
        if s.thread is not None:
            return
        s.t0 = time.perf_counter()
        tty = echo is _echo and sys.stdout.isatty()
        s.thread = threading.Thread(
            target=_serve, args=(echo, tty), name="ermviz-warmup", daemon=True
        )
    atexit.register(_at_exit)
    s.thread.start()


def stop() -> None:
    """End the warm-up now: the processes are killed (they only fill a cache), the thread
    ends after the kernel it is loading; waiting races go on (they compile what they
    need)."""
    s = _STATE
    s.stop.set()
    for c in list(s.children):
        if c.proc.poll() is None:
            c.proc.kill()
            with contextlib.suppress(Exception):
                c.proc.wait(1.0)
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
    """Block (a Start's worker thread) until the processes have compiled every item of
    :func:`plan` whose (problem, method, step) is in ``keys`` (on ``model``'s dataset, else
    the key's first item), or the warm-up ended, or the session closed. Those items move
    to the front of the queue; meanwhile :func:`waiting_for` names them (the page shows
    "compiling") and :func:`expected_seconds` says how long. Kernels outside the plan are
    not waited for (the race compiles them itself)."""
    s = _STATE
    wanted = set(keys)
    dataset = getattr(model, "dataset", "")
    with s.cond:
        moved = False
        while True:
            if s.phase != "compiling" or s.stop.is_set() or getattr(model, "closed", False):
                break
            pending_ids = [i for i in sched.needed(s, wanted, dataset) if i not in s.compiled]
            if not pending_ids:
                break
            if not moved:
                sched.to_front(s, pending_ids)
                moved = True
            s.waiting[model] = [s.items[i].label for i in pending_ids]
            s.since.setdefault(model, time.perf_counter())
            s.cond.wait(0.5)
        s.waiting.pop(model, None)
        s.since.pop(model, None)


def _needed(wanted: set[tuple[str, str, str]], dataset: str) -> list[int]:
    """:func:`ermviz.app.serving.warmup_schedule.needed` on the server's state."""
    return sched.needed(_STATE, wanted, dataset)


def _main(argv: Sequence[str]) -> int:
    if "--child" in argv:
        return child_main(send_plan="--plan" in argv)
    seconds = warm_up(verbose=True)
    print(f"ermviz: numba kernels warm ({seconds:.2f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
elif __name__ == "panel_setup_module":
    # `panel serve --setup` runs this file as a module of its own name: start the warm-up
    # of the importable module, whose progress the pages read.
    from ermviz.app.serving import memory as _memory
    from ermviz.app.serving import warmup as _warmup
    from ermviz.app.state import model as _model  # noqa: F401  (pandas, scipy, the registry...)

    # Before any session: the imports leave the garbage collector's sight for good.
    _memory.freeze_imports()
    _warmup.start_background()
