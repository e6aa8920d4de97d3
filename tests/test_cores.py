"""The process-wide gate on solver threads (ermviz/cores.py) and how runs use it: at most
``slots`` chunks compute at once, cores are handed over first come first served, waiting
is not solver time, a queued run shows as waiting and a stop ends it without a chunk."""

from __future__ import annotations

import threading
import time

import pytest

from ermviz import cores
from ermviz.data import load_dataset
from ermviz.data.preprocessing import standardize
from ermviz.registry import build_problem, build_solver
from ermviz.runner import Budget, Run


@pytest.fixture(autouse=True)
def _restore_gate():
    yield
    cores.configure(cores.default_limit())


class _Counting:
    """A solver wrapper that counts how many ``advance`` calls overlap in time."""

    lock = threading.Lock()
    active = 0
    peak = 0

    def __init__(self, solver):
        self._solver = solver

    def __getattr__(self, name):
        return getattr(self._solver, name)

    def advance(self, max_rows, stop_at):
        cls = type(self)
        with cls.lock:
            cls.active += 1
            cls.peak = max(cls.peak, cls.active)
        try:
            return self._solver.advance(max_rows, stop_at)
        finally:
            with cls.lock:
                cls.active -= 1


def _fw_run(chunk_seconds: float, max_time: float) -> Run:
    pb = build_problem("svm-dual", standardize(load_dataset("wdbc")), C=1000.0)
    solver = build_solver(pb, "fw", "diminishing", {}, 1e-300)
    return Run(_Counting(solver), Budget(1e-300, max_time=max_time), chunk_seconds=chunk_seconds)


def test_the_gate_bounds_concurrency_and_serves_in_arrival_order():
    g = cores.CoreGate(2)
    inside, peak, lock = [0], [0], threading.Lock()

    def worker():
        for _ in range(30):
            assert g.acquire()
            with lock:
                inside[0] += 1
                peak[0] = max(peak[0], inside[0])
            time.sleep(0.001)
            with lock:
                inside[0] -= 1
            g.release()

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert peak[0] == 2 and g.busy == 0 and g.waiting == 0

    # FIFO: five callers queue behind a held core, in a known order.
    g = cores.CoreGate(1)
    assert g.acquire()
    order = []

    def queued(i):
        assert g.acquire()
        order.append(i)
        g.release()

    threads = []
    for i in range(5):
        threads.append(threading.Thread(target=queued, args=(i,)))
        threads[-1].start()
        end = time.perf_counter() + 5
        while g.waiting < i + 1 and time.perf_counter() < end:
            time.sleep(0.001)
    g.release()
    for t in threads:
        t.join(5)
    assert order == [0, 1, 2, 3, 4]


def test_a_cancelled_wait_leaves_the_queue_without_a_core():
    g = cores.CoreGate(1)
    assert g.acquire()
    ticket = cores.Ticket()
    got, woke = [], []

    def wait():
        got.append(g.acquire(ticket))
        woke.append(time.perf_counter())

    t = threading.Thread(target=wait)
    t.start()
    while g.waiting == 0:
        time.sleep(0.001)
    t0 = time.perf_counter()
    ticket.cancel()
    t.join(2)
    assert got == [False] and g.waiting == 0
    assert woke[0] - t0 < 0.5  # woken by the cancel itself, not by a release
    assert not g.acquire(ticket)  # a cancelled ticket never gets a core
    g.release()
    assert g.acquire() and g.busy == 1  # the core went back to the pool, not to the quitter


def test_runs_share_one_core_and_waiting_is_not_solver_time():
    cores.configure(1)
    _Counting.peak = 0
    runs = [_fw_run(chunk_seconds=0.3, max_time=1.0) for _ in range(3)]
    t0 = time.perf_counter()
    for r in runs:
        r.start()
    seen_waiting = False
    while not all(r.done for r in runs) and time.perf_counter() - t0 < 60:
        seen_waiting |= any(r.waiting for r in runs)
        time.sleep(0.02)
    wall = time.perf_counter() - t0
    assert all(r.join(5) for r in runs)
    assert [r.status for r in runs] == ["max_time"] * 3, [r.message for r in runs]
    assert _Counting.peak == 1
    # One core at a time: the runs' solver times cannot add up to more than the race's
    # wall time (they would, about threefold, if queueing counted as solver time).
    assert sum(r.time_s for r in runs) <= wall
    assert seen_waiting


def test_a_run_stopped_while_queued_ends_at_once_and_keeps_its_trace():
    cores.configure(1)
    hog = _fw_run(chunk_seconds=0.5, max_time=30.0).start()
    while len(hog.trace) == 0:
        time.sleep(0.01)
    queued = _fw_run(chunk_seconds=0.5, max_time=30.0).start()
    end = time.perf_counter() + 10
    while not queued.waiting and time.perf_counter() < end:
        time.sleep(0.01)
    assert queued.waiting
    queued.stop()
    assert queued.join(1.0)
    assert queued.status == "stopped" and len(queued.trace) >= 1
    assert not hog.done
    hog.stop()
    assert hog.join(5) and hog.status == "stopped"


def test_the_limit_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("ERMVIZ_SOLVER_THREADS", "3")
    assert cores.default_limit() == 3
    monkeypatch.setenv("ERMVIZ_SOLVER_THREADS", "0")
    assert cores.default_limit() == 0 and cores.CoreGate(0).acquire()
    for bad in ("x", "-1"):
        monkeypatch.setenv("ERMVIZ_SOLVER_THREADS", bad)
        with pytest.raises(ValueError, match="ERMVIZ_SOLVER_THREADS"):
            cores.default_limit()
