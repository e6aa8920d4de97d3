"""The server's background warm-up (ermviz.app.warmup, issue 32): the plan compiles the
first lesson's kernels first; a race started before its kernels are compiled waits with a
"compiling" status (and stops waiting when they are); the server answers while the
kernels compile and exits on SIGTERM with its warm-up process; ``runner.stop_all`` ends
every running race.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from ermviz.app import warmup
from ermviz.app.lessons import FIRST_LESSON, get_lesson
from ermviz.app.model import DashboardModel

REPO = Path(__file__).resolve().parent.parent


def test_plan_compiles_the_first_lesson_first_and_nothing_twice() -> None:
    items = warmup.plan()
    model = DashboardModel(notifier=lambda level, message: None)
    from ermviz.app.lessons import apply_lesson

    assert apply_lesson(model, get_lesson(FIRST_LESSON)) is None
    first = [(model.problem, s.method, s.step) for s in model.new_slots()]
    assert [it.key for it in items[: len(first)]] == first
    assert {it.group for it in items[: len(first)]} == {FIRST_LESSON}
    assert all(it.dataset == model.dataset for it in items[: len(first)])
    labels = [it.label for it in items]
    assert len(labels) == len(set(labels)), "an item is compiled twice"
    # The Frank-Wolfe family's every step rule on dense and sparse data comes after.
    from ermviz.registry import METHODS

    assert any(it.group.startswith("fw:sparse:") for it in items)
    pfw_steps = {it.key[2] for it in items if it.key[:2] == ("svm-dual", "pfw")}
    assert pfw_steps == set(METHODS["pfw"].step_rules)


@pytest.fixture
def fake_state():
    """The module's state set to a warm-up in progress over three items."""
    saved = warmup._STATE
    state = warmup._State()
    key_fw, key_pfw = ("svm-dual", "fw", "exact"), ("svm-dual", "pfw", "exact")
    state.items = [
        warmup.Item("lesson", 0, "FW exact on svm-dual (wdbc)", key_fw, "wdbc"),
        warmup.Item("lesson", 1, "PFW exact on svm-dual (wdbc)", key_pfw, "wdbc"),
        warmup.Item("fw", 0, "FW exact on svm-dual (dense)", key_fw, "toy-2d"),
    ]
    state.phase = "compiling"
    state.current = state.items[0].label
    state.t0 = time.perf_counter()
    warmup._STATE = state
    try:
        yield state
    finally:
        warmup._STATE = saved


def test_a_race_waits_for_its_kernels_showing_compiling(fake_state) -> None:
    model = DashboardModel(notifier=lambda level, message: None)
    model.dataset = "wdbc"
    keys = [("svm-dual", "fw", "exact"), ("svm-dual", "pfw", "exact")]
    waiter = threading.Thread(target=warmup.wait_for_kernels, args=(model, keys), daemon=True)
    waiter.start()
    deadline = time.monotonic() + 30  # a bound against a hang, not a timing
    while not warmup.waiting_for(model) and time.monotonic() < deadline:
        time.sleep(0.01)
    # The race on wdbc waits for the two wdbc kernels, not for the toy-2d one.
    assert warmup.waiting_for(model) == [it.label for it in fake_state.items[:2]]
    line = warmup.status_line(model)
    assert line.startswith("race: compiling (waits for 2 kernels)")
    assert "compiling kernels 0/3: FW exact on svm-dual (wdbc)" in line
    assert warmup.progress()[:4] == (0, 3, "FW exact on svm-dual (wdbc)", False)
    with fake_state.cond:
        fake_state.compiled.add(0)
        fake_state.cond.notify_all()
    time.sleep(0.05)
    assert waiter.is_alive()
    assert warmup.waiting_for(model) == [fake_state.items[1].label]
    with fake_state.cond:
        fake_state.compiled.add(1)
        fake_state.cond.notify_all()
    waiter.join(30)
    assert not waiter.is_alive()
    assert warmup.waiting_for(model) == []
    assert not warmup.status_line(model).startswith("race:")


def test_a_key_on_other_data_waits_for_its_first_item_only(fake_state) -> None:
    assert warmup._needed({("svm-dual", "fw", "exact")}, "blobs") == [0]
    assert warmup._needed({("svm-dual", "fw", "exact")}, "toy-2d") == [2]
    assert warmup._needed({("logreg-l1", "fw", "exact")}, "wdbc") == []


def test_a_race_far_down_the_plan_compiles_itself_instead_of_waiting(fake_state) -> None:
    # Items beyond WAIT_AHEAD of the child's position: the race does not wait for them.
    key = ("svm-dual", "afw", "exact")
    far = len(fake_state.items) + warmup.WAIT_AHEAD
    fake_state.items += [
        warmup.Item("fw", k, f"filler {k}", ("svm-dual", "bpcg", "exact"), "toy-2d")
        for k in range(far - len(fake_state.items))
    ]
    fake_state.items.append(warmup.Item("fw", far, "AFW exact on svm-dual (dense)", key, "toy-2d"))
    model = DashboardModel(notifier=lambda level, message: None)
    model.dataset = "toy-2d"
    done = threading.Event()
    waiter = threading.Thread(
        target=lambda: (warmup.wait_for_kernels(model, [key]), done.set()), daemon=True
    )
    waiter.start()
    assert done.wait(30)  # returns at once; the bound is against a hang
    assert warmup.waiting_for(model) == []
    # Once the child is within WAIT_AHEAD of it, the same race waits.
    with fake_state.cond:
        fake_state.compiled.update(range(far - warmup.WAIT_AHEAD))
    done.clear()
    waiter = threading.Thread(
        target=lambda: (warmup.wait_for_kernels(model, [key]), done.set()), daemon=True
    )
    waiter.start()
    deadline = time.monotonic() + 30
    while not warmup.waiting_for(model) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert warmup.waiting_for(model) == ["AFW exact on svm-dual (dense)"]
    with fake_state.cond:
        fake_state.compiled.add(far)
        fake_state.cond.notify_all()
    assert done.wait(30)


def test_a_stopped_warm_up_releases_waiting_races(fake_state) -> None:
    model = DashboardModel(notifier=lambda level, message: None)
    model.dataset = "wdbc"
    waiter = threading.Thread(
        target=warmup.wait_for_kernels, args=(model, [("svm-dual", "fw", "exact")]), daemon=True
    )
    waiter.start()
    warmup.stop()
    waiter.join(30)
    assert not waiter.is_alive()
    p = warmup.progress()
    assert p.finished and p.phase == "stopped"
    assert warmup.status_line(model) == ""


def test_stop_all_ends_every_running_race() -> None:
    from ermviz.data import load_dataset
    from ermviz.registry import build_problem, build_solver
    from ermviz.runner import Budget, Run, stop_all

    problem = build_problem("svm-dual", load_dataset("toy-2d"))
    runs = [
        # One step per call and 5 s between calls: running, far from any budget.
        Run(build_solver(problem, m, "exact", {}, 1e-12), Budget(tol=1e-12, max_time=600),
            keep_iterates=True, step_delay=5.0).start()
        for m in ("fw", "pfw")
    ]  # fmt: skip
    finished = Run(build_solver(problem, "fw", "exact", {}, 1e-12), Budget(max_iter=1)).start()
    assert finished.join(60)
    assert all(not r.done for r in runs)
    assert stop_all(wait=30) == len(runs)
    assert all(r.done and r.status == "stopped" for r in runs)
    assert all(r.message == "stopped: the server is shutting down" for r in runs)
    assert finished.status == "max_iter"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


@pytest.mark.long(seconds=60)
def test_a_fresh_server_answers_while_compiling_and_exits_on_sigterm(tmp_path: Path) -> None:
    port = _free_port()
    log = tmp_path / "server.log"
    env = {
        **os.environ,
        "ERMVIZ_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",
        "PYTHONFAULTHANDLER": "1",  # a crash at exit prints every thread's stack in the log
        "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache"),  # a fresh install: nothing compiled
    }
    cmd = [sys.executable, "-m", "panel", "serve", "app.py", "--address", "127.0.0.1",
           "--port", str(port), "--allow-websocket-origin", f"127.0.0.1:{port}",
           "--setup", "ermviz/app/warmup.py"]  # fmt: skip
    with open(log, "w") as fh:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=fh, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 240  # a bound against a hang, not a timing
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/app", timeout=120) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        # The page answered at once; the warm-up's child starts compiling meanwhile (its
        # first line can follow the first page by a second or two under load).
        while "ermviz: compiling kernels 1/" not in (text := log.read_text()):
            assert proc.poll() is None and time.monotonic() < deadline, text
            time.sleep(0.2)
        # ...and compiles on long after it (158 kernels take minutes cold).
        assert "kernels ready" not in text, text
        children = [
            c for c in _children(proc.pid) if b"--child" in Path(f"/proc/{c}/cmdline").read_bytes()
        ]
        assert len(children) == 1, "one warm-up process compiles"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0, log.read_text()
        gone = time.monotonic() + 30
        while Path(f"/proc/{children[0]}").exists() and time.monotonic() < gone:
            time.sleep(0.1)
        state = Path(f"/proc/{children[0]}/stat")
        assert not state.exists() or ") Z" in state.read_text(), (
            "the warm-up process outlived the server"
        )
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_status_pane_shows_progress_and_hides_when_idle(fake_state) -> None:
    model = DashboardModel(notifier=lambda level, message: None)
    pane = warmup.status_view(model)
    assert pane.visible
    assert 'data-phase="compiling" data-done="0" data-total="3"' in pane.object
    assert "compiling kernels 0/3: FW exact on svm-dual (wdbc)" in pane.object
    fake_state.phase = "ready"
    assert not warmup.status_view(model).visible
