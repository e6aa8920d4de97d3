"""Problems built once per server process and shared by its sessions.

Thirty students on one lesson each pressed Start on the same data and settings, and each
Start built the same problem again: LS-SVM's kernel matrix on banana (0.37 s, 70 MB), the
PLQ fairness problem (0.19 s), the conditional stochastic problem; on a loaded server the
build was most of the wait for the first point. A built problem is read only (every run
of a race already shares one, from several threads), so the sessions can share it too: the
first to ask builds it, the others asking meanwhile wait for it, and the server's warm-up
builds the lessons' problems before anyone asks (:mod:`ermviz.app.serving.warmup`).
"""

from __future__ import annotations

import queue
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

#: Problems kept (the least recently used goes first): every lesson's, and a few more,
#: within :data:`MAX_BYTES` of arrays (the lessons' take about 140 MB).
MAX_PROBLEMS = 16
MAX_BYTES = 1 << 30

_lock = threading.Lock()
_problems: OrderedDict[str, tuple[Any, int]] = OrderedDict()
_building: dict[str, threading.Lock] = {}


def shared_problem(key: str, build: Callable[[], Any], shared: bool = True) -> Any:
    """The problem stored under ``key``, built by ``build()`` if no session has built it
    (one build per key at a time: a second caller waits for the first's); built and not
    stored when ``shared`` is False."""
    if not shared:
        return build()
    with _lock:
        if key in _problems:
            return _take(key)
        building = _building.setdefault(key, threading.Lock())
    with building:
        with _lock:
            if key in _problems:  # built while this caller waited
                return _take(key)
        try:
            problem = build()
        except BaseException:
            with _lock:
                _building.pop(key, None)  # the next caller tries again
            raise
        size = array_bytes(problem)
        with _lock:
            # Stored before its build lock goes: a caller arriving in between finds it.
            _problems[key] = (problem, size)
            _building.pop(key, None)
            while len(_problems) > 1 and (
                len(_problems) > MAX_PROBLEMS or sum(n for _, n in _problems.values()) > MAX_BYTES
            ):
                _problems.popitem(last=False)
        return problem


def _take(key: str) -> Any:
    """The stored problem under ``key``, now the most recently used (``_lock`` held)."""
    _problems.move_to_end(key)
    return _problems[key][0]


def array_bytes(obj: Any, depth: int = 0, seen: set[int] | None = None) -> int:
    """Bytes of the numpy arrays and scipy sparse matrices ``obj`` holds, looking three
    levels into its attributes, dicts, lists and tuples (an estimate: what dominates)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return obj.nbytes if obj.base is None else 0  # (a view's memory is its base's)
    if sp.issparse(obj):
        parts = ("data", "indices", "indptr", "row", "col", "offsets")
        return sum(getattr(obj, a).nbytes for a in parts if hasattr(obj, a))
    if depth >= 3:
        return 0
    if isinstance(obj, dict):
        items = list(obj.values())
    elif isinstance(obj, list | tuple):
        items = list(obj)
    elif hasattr(obj, "__dict__"):
        items = list(vars(obj).values())
    else:
        return 0
    return sum(array_bytes(v, depth + 1, seen) for v in items)


def prebuild(model: Any) -> None:
    """Build ``model``'s problem in the background (a lesson was just opened or loaded:
    Start then finds it built). A failure is left for Start to build again and report."""
    global _worker
    with _lock:
        if _worker is None:
            # A daemon thread: a server told to stop does not wait for a build.
            _worker = threading.Thread(target=_work, name="ermviz-prebuild", daemon=True)
            _worker.start()
    _queue.put(model.build_problem)


_queue: queue.SimpleQueue = queue.SimpleQueue()
_worker: threading.Thread | None = None


def _work() -> None:
    while True:
        build = _queue.get()
        try:
            build()
        except Exception:
            pass
        del build  # (the model: its session may close)


def clear() -> None:
    """Forget every shared problem (tests; a server keeps them)."""
    with _lock:
        _problems.clear()
