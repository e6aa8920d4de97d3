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
"""

from __future__ import annotations

import gc
import threading
from typing import Any

#: Seconds after the last closed page before its memory is collected and trimmed: a class
#: closing thirty tabs pays one collection, not thirty.
RELEASE_DELAY = 2.0

_lock = threading.Lock()
_open_sessions = 0
_pending: Any = None  # the IOLoop timeout of the scheduled release


def freeze_imports() -> None:
    """Collect, then freeze what the process holds now (call before any session: module
    objects live as long as the process anyway)."""
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
    global _pending
    with _lock:
        _pending = None
        idle = _open_sessions == 0
    gc.collect()
    if idle:
        gc.freeze()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to trim
        pass
