"""The process-wide gate on solver threads computing at once.

Every :class:`~ermviz.runner.Run` takes a core from the gate before each chunk (one
``Solver.advance`` call, about 20 ms) and hands it back after, first come first served.
However many runs exist (thirty dashboard sessions racing three runs each), at most
:func:`limit` solvers compute at once and the others wait their turn between chunks, so
the machine's cores are shared round-robin instead of ninety threads thrashing two cores
and starving the server's event loop. Waiting is not solver time: the runner times only
inside ``advance``, so a run's ``time_s`` is what its method cost, not how busy the
server was. A run waiting longer than :data:`WAITING_AFTER` seconds shows as "waiting for
a core" in the dashboard.

``ERMVIZ_SOLVER_THREADS`` sets the limit (default: the CPUs this process may run on;
``0`` turns the gate off); :func:`configure` changes it at run time (tests, benchmarks).
"""

from __future__ import annotations

import collections
import os
import threading

#: A run blocked on the gate longer than this (seconds) counts as waiting for a core.
WAITING_AFTER = 0.25


def default_limit() -> int:
    """``ERMVIZ_SOLVER_THREADS`` if set (0 = no gate), else the usable CPUs."""
    raw = os.environ.get("ERMVIZ_SOLVER_THREADS", "").strip()
    if raw:
        try:
            value = int(raw)
        except ValueError:
            raise ValueError(
                f"ERMVIZ_SOLVER_THREADS={raw!r} is not an integer; set it to the number of "
                "solver threads allowed to compute at once (0 = no limit)"
            ) from None
        if value < 0:
            raise ValueError(f"ERMVIZ_SOLVER_THREADS={value} must be >= 0 (0 = no limit)")
        return value
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class Ticket:
    """One caller's place in the gate's queue; :meth:`cancel` takes it out at once."""

    def __init__(self) -> None:
        self._wake = threading.Event()
        self.granted = False
        self.cancelled = False

    def cancel(self) -> None:
        """Leave the queue (or never enter it): the waiting :meth:`CoreGate.acquire`
        returns False now, not after a polling period."""
        self.cancelled = True
        self._wake.set()


class CoreGate:
    """A counting semaphore that hands cores over in arrival order (FIFO), so that no run
    of a busy server is starved by faster-cycling ones.

    Parameters
    ----------
    slots : int
        Cores handed out at once; 0 = unlimited (``acquire`` never blocks).
    """

    def __init__(self, slots: int) -> None:
        self.slots = int(slots)
        self._lock = threading.Lock()
        self._free = self.slots
        self._waiters: collections.deque[Ticket] = collections.deque()
        self.busy = 0  # cores handed out now (for tests and the load benchmark)

    def acquire(self, ticket: Ticket | None = None) -> bool:
        """Take a core, waiting behind earlier callers if none is free. Returns False,
        without a core, if ``ticket`` is cancelled (:meth:`Ticket.cancel`: a run stopped
        while queued) before or while it waits."""
        if self.slots <= 0:
            return True
        ticket = ticket if ticket is not None else Ticket()
        with self._lock:
            if ticket.cancelled:
                return False
            if self._free > 0 and not self._waiters:
                self._free -= 1
                self.busy += 1
                return True
            self._waiters.append(ticket)
        ticket._wake.wait()  # release() hands a core over; cancel() wakes us without one
        with self._lock:
            if not ticket.granted:
                self._waiters.remove(ticket)
                return False
        if ticket.cancelled:  # granted and cancelled at once: pass the core on
            self.release()
            return False
        return True

    def release(self) -> None:
        """Give a core back (to the oldest waiter, if any)."""
        if self.slots <= 0:
            return
        with self._lock:
            if self._waiters:
                ticket = self._waiters.popleft()
                ticket.granted = True
                ticket._wake.set()
            else:
                self._free += 1
                self.busy -= 1

    @property
    def waiting(self) -> int:
        """Callers blocked in :meth:`acquire` now."""
        return len(self._waiters)


_GATE: CoreGate | None = None
_GATE_LOCK = threading.Lock()


def gate() -> CoreGate:
    """The process's gate (created on first use from :func:`default_limit`)."""
    global _GATE
    if _GATE is None:
        with _GATE_LOCK:
            if _GATE is None:
                _GATE = CoreGate(default_limit())
    return _GATE


def configure(slots: int) -> CoreGate:
    """Replace the process's gate by one of ``slots`` cores (0 = none); runs already
    waiting on the old gate finish their wait there. Returns the new gate."""
    global _GATE
    if slots < 0:
        raise ValueError(f"slots must be >= 0 (0 = no limit), got {slots}")
    with _GATE_LOCK:
        _GATE = CoreGate(slots)
    return _GATE


def limit() -> int:
    """Solver threads allowed to compute at once (0 = no limit)."""
    return gate().slots
