"""The warm-up's scheduler: its compiling processes, their queue and the estimates.

:mod:`ermviz.app.serving.warmup` (the server's side) keeps one :class:`State`; these functions
work on it under ``state.cond``: :func:`spawn` starts a compiling process
(:func:`ermviz.app.serving.warmup_plan.child_main`), :func:`read` follows its reports,
:func:`take_plan` orders the queue (the first lesson, then the other lessons' items
longest first, so that the slowest lesson does not start last, then the family's),
:func:`dispatch` hands idle processes their next item (never two items of one kind at
once, no new item to an extra process while races run), :func:`to_front` moves what a
page asks for to the front, and :func:`simulate` predicts when each item will be done
from the measured estimates (:data:`ermviz.compile_estimates.WARMUP_ITEM`) scaled by this
machine's observed speed.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from ermviz.app.serving.warmup_plan import Item
from ermviz.app.serving.warmup_terminal import Terminal

#: Compiling processes at most (each a few hundred MB; one per free core up to this).
MAX_PROCESSES = 2
#: Expected seconds of an item the estimate table does not list.
DEFAULT_ITEM_SECONDS = 1.0
#: Expected seconds of an item whose kernels load from the cache.
LOAD_ITEM_SECONDS = 0.3


class Child:
    """One compiling process and what it is on."""

    def __init__(self, proc: Any, planner: bool, follower: bool = False) -> None:
        self.proc = proc  # a subprocess.Popen, or ermviz.workers' follower of worker 0's
        self.planner = planner
        self.follower = follower  # (worker 0 hands out the items: never send it one)
        self.item: int | None = None  # the item it builds now
        self.started = 0.0  # when it started that item
        self.lock = threading.Lock()  # its stdin
        self.reader: threading.Thread | None = None

    def send(self, msg: dict) -> bool:
        with self.lock:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(json.dumps(msg) + "\n")
                self.proc.stdin.flush()
                return True
            except (OSError, ValueError):
                return False

    def close(self) -> None:
        stdin = getattr(self.proc, "stdin", None)
        if stdin is None:
            return
        with self.lock, contextlib.suppress(OSError, ValueError):
            stdin.close()


class State:
    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.items: list[Item] = []
        self.compiled: set[int] = set()  # done by a process (in the on-disk cache now)
        self.queue: list[int] = []  # items not started, in the order they will be
        self.kinds: dict[int, str] = {}  # item -> kind, known from the estimates or done
        self.warm_kinds: set[str] = set()  # kinds with an item done (their kernels cached)
        self.spent: dict[int, float] = {}  # item -> wall seconds it took (done items)
        self.compiled_any = False  # a process compiled something (not all from the cache)
        self.children: list[Child] = []
        self.to_load: list[int] = []  # lesson items compiled, to load into the server
        self.current = ""
        self.phase = "idle"
        self.error = ""
        self.t0 = 0.0
        self.t_end = 0.0
        self.thread: threading.Thread | None = None
        self.child: subprocess.Popen | None = None  # the first process (for tests)
        self.stop = threading.Event()
        # Sessions whose Start waits for kernels: model -> labels / when it began waiting.
        self.waiting: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.since: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        # Worker 0 of a multi-process server: the processes' messages, appended for the
        # other workers to follow (ermviz.workers.publisher).
        self.publish: Callable[[str], None] | None = None


def lesson_groups(s: State) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for i, it in enumerate(s.items):
        if not it.group.startswith("fw:"):
            groups.setdefault(it.group, []).append(i)
    return groups


def estimate(s: State, i: int) -> float:
    """Expected wall seconds of item ``i`` on this machine now."""
    from ermviz.compile_estimates import WARMUP_ITEM

    if s.compiled and not s.compiled_any:
        return LOAD_ITEM_SECONDS  # everything so far came from the cache
    base = WARMUP_ITEM.get(s.items[i].label, DEFAULT_ITEM_SECONDS)
    return base * speed(s)


def speed(s: State) -> float:
    """This machine's seconds per reference second, from the items done (1 until a few
    seconds' worth are)."""
    from ermviz.compile_estimates import WARMUP_ITEM

    ref = sum(WARMUP_ITEM.get(s.items[i].label, 0.0) for i in s.spent)
    if ref < 3.0:
        return 1.0
    return min(10.0, max(0.3, sum(s.spent.values()) / ref))


def simulate(s: State) -> dict[int, float]:
    """Expected seconds from now until each pending or running item is done: the
    processes take the queue in order (list scheduling over the estimates)."""
    now = time.perf_counter()
    workers = [c for c in s.children if c.proc.poll() is None]
    if not workers:
        return {}
    free = []
    finish: dict[int, float] = {}
    for c in workers:
        if c.item is not None:
            left = max(0.2, estimate(s, c.item) - (now - c.started))
            finish[c.item] = left
            free.append(left)
        else:
            free.append(0.0)
    # While races run only the first process takes new items.
    takers = len(free) if racing() == 0 else 1
    free = sorted(free)[:takers]
    for i in s.queue:
        k = min(range(len(free)), key=free.__getitem__)
        free[k] += estimate(s, i)
        finish[i] = free[k]
    return finish


def racing() -> int:
    """Races running in this process now (they have the cores first)."""
    from ermviz.runner import running

    return running()


def free_cores() -> int:
    from ermviz.cores import default_limit

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, default_limit())


def spawn(planner: bool) -> Child:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "ermviz.app.serving.warmup", "--child"] + ["--plan"] * planner
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True, env=env, bufsize=1
    )
    return Child(proc, planner)


def assign(s: State, child: Child) -> None:
    """Hand ``child`` its next item (under ``s.cond``): the first of the queue whose kind
    no other process is compiling for the first time; an extra process takes none while
    races run."""
    if child.follower or child.item is not None or s.stop.is_set() or not s.queue:
        return
    if child.proc.poll() is not None:
        return
    if not child.planner and racing():
        return
    busy = {s.kinds.get(c.item) for c in s.children if c is not child and c.item is not None}
    busy.discard(None)
    for pos, i in enumerate(s.queue):
        kind = s.kinds.get(i)
        if kind is not None and kind in busy and kind not in s.warm_kinds:
            continue
        s.queue.pop(pos)
        child.item, child.started = i, time.perf_counter()
        if child.planner or not s.current:
            s.current = s.items[i].label
        if not child.send({"build": i, "item": s.items[i]._asdict()}):
            child.item = None
            s.queue.insert(pos, i)
        return


def dispatch(s: State) -> None:
    """Give every idle process an item (under ``s.cond``)."""
    for child in s.children:
        assign(s, child)


def to_front(s: State, ids: Sequence[int]) -> None:
    wanted = [i for i in s.queue if i in set(ids)]
    if wanted:
        s.queue = wanted + [i for i in s.queue if i not in set(wanted)]
        dispatch(s)


def read(s: State, child: Child, echo: Callable[[str], None], out: Terminal) -> None:
    """A process's reporting thread: its messages update the state."""
    assert child.proc.stdout is not None
    for line in child.proc.stdout:
        if s.stop.is_set():
            return
        try:
            msg = json.loads(line)
        except ValueError:
            continue  # (a library's stray print)
        if s.publish is not None:
            s.publish(line)
        with s.cond:
            if "plan" in msg:
                take_plan(s, msg["plan"])
                out.started(len(s.items))
            elif "start" in msg and child.follower and 0 <= msg["start"] < len(s.items):
                s.current = s.items[msg["start"]].label  # (worker 0 handed it out)
            elif "compiling" in msg:
                if not s.compiled_any:
                    s.compiled_any = True
                    out.compiling()
            elif "done" in msg or "failed" in msg:
                i = msg.get("done", msg.get("failed"))
                if "failed" in msg:
                    echo(f"warm-up of {s.items[i].label} failed: {msg.get('error', '')}")
                else:
                    s.spent[i] = float(msg.get("seconds", 0.0))
                    if msg.get("kind"):
                        s.kinds[i] = msg["kind"]
                        s.warm_kinds.add(msg["kind"])
                s.compiled.add(i)
                child.item = None
                if not s.items[i].group.startswith("fw:"):
                    s.to_load.append(i)
                dispatch(s)
                s.cond.notify_all()
    with s.cond:  # the process ended (closed, crashed or killed): its item is not coming
        if child.item is not None:
            s.compiled.add(child.item)
            child.item = None
        s.cond.notify_all()


def take_plan(s: State, plan_dicts: list[dict]) -> None:
    from ermviz.compile_estimates import WARMUP_KIND

    s.items = [
        Item(d["group"], d["index"], d["label"], tuple(d["key"]), d["dataset"]) for d in plan_dicts
    ]
    s.kinds = {i: WARMUP_KIND[it.label] for i, it in enumerate(s.items) if it.label in WARMUP_KIND}
    s.queue = [i for i in order(s) if i not in s.compiled]
    dispatch(s)


def order(s: State) -> list[int]:
    """The queue's first order: the first lesson's items (the page opens on it), then the
    other lessons' items longest first (the slowest lesson, not the last one listed, sets
    when every lesson is ready; with two processes the long items then run beside the
    short ones), then the family's items in plan order."""
    from ermviz.compile_estimates import WARMUP_ITEM

    first = s.items[0].group if s.items else ""
    head = [i for i, it in enumerate(s.items) if it.group == first]
    lessons = [
        i for i, it in enumerate(s.items) if it.group != first and not it.group.startswith("fw:")
    ]
    lessons.sort(key=lambda i: -WARMUP_ITEM.get(s.items[i].label, DEFAULT_ITEM_SECONDS))
    family = [i for i, it in enumerate(s.items) if it.group.startswith("fw:")]
    return head + lessons + family


def needed(s: State, wanted: set[tuple[str, str, str]], dataset: str) -> list[int]:
    """Indices of the plan's items a race of ``wanted`` keys on ``dataset`` waits for: per
    key, the items on that dataset, else the key's first item (the same kernels, perhaps
    for other data: the race then compiles what differs itself)."""
    needed: dict[tuple[str, str, str], list[int]] = {}
    for i, it in enumerate(s.items):
        if it.key not in wanted:
            continue
        have = needed.setdefault(it.key, [])
        if it.dataset == dataset:
            if have and s.items[have[0]].dataset != dataset:
                have.clear()
            have.append(i)
        elif not have:
            have.append(i)
    return [i for ids in needed.values() for i in ids]
