"""The served process's memory between sessions: one collection per burst of closed pages.

A full ``gc.collect()`` walks every object the process tracks: 0.2-0.3 s here once Panel,
Bokeh, pandas and numba are loaded (about 300 000 objects), and a collection ran for every
closed page (ours, to hand memory back, and Panel's own). Measured with py-spy on
``bench_sessions.py``'s idle pages: 0.57 s of the 2.2-2.9 s of server CPU each page cost.
So the long-lived objects are moved out of the collector's sight (``gc.freeze``, CPython's
permanent generation, the remedy CPython's documentation gives for pre-fork servers): the
imports once before any session exists, and the rest (kernels loaded by the warm-up,
caches) whenever no session is open, since a live session's objects frozen then would never
be collected. The closed pages' memory goes back to the system (glibc's ``malloc_trim``)
once per burst of closes, not once per page.

Two more costs measured the same way (py-spy on a served page at a time, after the
warm-up):

* Panel schedules its own full collection 5 s after each destroyed session; with ours that
  made two per burst (0.1-0.2 s each). :func:`release` now drops Panel's pending one.
* The lessons' kernels, which the warm-up loads after the imports were frozen, are about
  130 000 tracked objects; while any page was open they were never frozen, and every
  collection walked them (0.11-0.20 s a collection instead of 0.04 s).
  :func:`freeze_long_lived` freezes them once the warm-up ends, open sessions or not; the
  objects of sessions open then are frozen with them, so the next release that finds no
  session open unfreezes and collects everything once (a one-time, bounded hold).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from typing import Any

#: Seconds after the last closed page before its memory is collected and trimmed: a class
#: closing thirty tabs pays one collection, not thirty.
RELEASE_DELAY = 2.0

_lock = threading.Lock()
_open_sessions = 0
_pending: Any = None  # the IOLoop timeout of the scheduled release
_loop: Any = None  # the server's IOLoop (set before any session by freeze_imports)
#: Sessions' objects may be frozen (see freeze_long_lived): unfreeze at the next idle release.
_frozen_sessions = False


def freeze_imports() -> None:
    """Collect, then freeze what the process holds now (call before any session: module
    objects live as long as the process anyway)."""
    global _loop
    from tornado.ioloop import IOLoop

    gc.collect()
    gc.freeze()
    # The server's loop: the set-up module runs on its thread before it starts. Without
    # one, the kernels are frozen at the next idle release instead (the server still starts).
    with contextlib.suppress(RuntimeError):  # (what IOLoop.current raises without one)
        _loop = IOLoop.current()


def freeze_long_lived() -> None:
    """The process made long-lived objects (the warm-up's loaded kernels): freeze them now,
    on the server's IOLoop. Any thread may call this; a no-op outside a server."""
    if _loop is not None:
        _loop.add_callback(_freeze_now)


def _freeze_now() -> None:
    global _frozen_sessions
    with _lock:
        open_now = _open_sessions > 0
        _frozen_sessions = _frozen_sessions or open_now
    gc.collect()
    gc.freeze()


def session_opened() -> None:
    global _open_sessions
    with _lock:
        _open_sessions += 1


def session_closed() -> None:
    """A page's session was destroyed: schedule (or push back) the release on the server's
    IOLoop (Bokeh calls this on it)."""
    global _open_sessions, _pending
    from tornado.ioloop import IOLoop

    loop = IOLoop.current()
    with _lock:
        _open_sessions = max(0, _open_sessions - 1)
        if _pending is not None:
            loop.remove_timeout(_pending)
        _pending = loop.call_later(RELEASE_DELAY, release)


def open_sessions() -> int:
    return _open_sessions


def release() -> None:
    """Collect the closed sessions' objects and return the freed heap to the system; with
    no session open, freeze what survives (it is the process's own)."""
    global _pending, _frozen_sessions
    with _lock:
        _pending = None
        idle = _open_sessions == 0
        thaw = idle and _frozen_sessions
        if thaw:
            _frozen_sessions = False
    with contextlib.suppress(Exception):  # (no Panel task pending: nothing to drop)
        import panel as pn

        pn.state.cancel_task("gc.collect")  # Panel's own collection: this one suffices
    if thaw:
        gc.unfreeze()  # closed sessions frozen by freeze_long_lived become collectable
    gc.collect()
    if idle:
        gc.freeze()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to trim
        pass
