"""The server's background warm-up (ermviz.app.serving.warmup, issues 32 and 43): the plan compiles
the first lesson's kernels first; a race started before its kernels are compiled waits with
a "compiling" status (and stops waiting when they are), its items moved to the front of the
queue, as a lesson loaded in a page moves its own; the compiling processes never take two
items of one kind at once and the extra one takes none while races run; the estimates
follow the measured table scaled by the observed speed; the terminal gets one rewritten
line (a few lines in a log); a compiling process reports "compiling" only when numba
compiles; the server answers while the kernels compile and exits on SIGTERM with its
warm-up processes; ``runner.stop_all`` ends every running race.
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

from ermviz.app.lessons import FIRST_LESSON, get_lesson
from ermviz.app.serving import warmup
from ermviz.app.state.model import DashboardModel

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


def test_a_race_far_down_the_queue_moves_its_items_to_the_front_and_waits(fake_state) -> None:
    key = ("svm-dual", "afw", "exact")
    fake_state.items += [
        warmup.Item("fw", k, f"filler {k}", ("svm-dual", "bpcg", "exact"), "toy-2d")
        for k in range(3, 10)
    ]
    fake_state.items.append(warmup.Item("fw", 10, "AFW exact on svm-dual (dense)", key, "toy-2d"))
    fake_state.queue = list(range(len(fake_state.items)))
    model = DashboardModel(notifier=lambda level, message: None)
    model.dataset = "toy-2d"
    done = threading.Event()
    waiter = threading.Thread(
        target=lambda: (warmup.wait_for_kernels(model, [key]), done.set()), daemon=True
    )
    waiter.start()
    deadline = time.monotonic() + 30
    while not warmup.waiting_for(model) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert warmup.waiting_for(model) == ["AFW exact on svm-dual (dense)"]
    assert fake_state.queue[0] == 10, "the race's item is compiled next"
    assert warmup.waiting_since(model) is not None
    with fake_state.cond:
        fake_state.compiled.add(10)
        fake_state.cond.notify_all()
    assert done.wait(30)
    assert warmup.waiting_since(model) is None


def test_a_loaded_lesson_moves_its_items_to_the_front(fake_state) -> None:
    fake_state.queue = [0, 1, 2]
    model = DashboardModel(notifier=lambda level, message: None)
    model.dataset = "toy-2d"
    warmup.prioritize(model, [("svm-dual", "fw", "exact")])
    assert fake_state.queue == [2, 0, 1]
    model.dataset = "wdbc"
    warmup.prioritize(model, [("svm-dual", "pfw", "exact")])
    assert fake_state.queue == [1, 2, 0]


class _Proc:
    """A compiling process that is alive and swallows what it is sent."""

    def __init__(self) -> None:
        self.stdin = open(os.devnull, "w")

    def poll(self) -> None:
        return None


def _fake_processes(state, n):
    from ermviz.app.serving import warmup_schedule as sched

    state.children = [sched.Child(_Proc(), planner=(k == 0)) for k in range(n)]
    return state.children


def test_two_processes_never_compile_one_kind_at_once(fake_state, monkeypatch) -> None:
    from ermviz.app.serving import warmup_schedule as sched

    monkeypatch.setattr(sched, "racing", lambda: 0)
    fake_state.items.append(warmup.Item("fw", 1, "BPCG exact on svm-dual (dense)",
                                        ("svm-dual", "bpcg", "exact"), "toy-2d"))  # fmt: skip
    dense_fw = "FrankWolfeSolver:dense"
    fake_state.kinds = {0: dense_fw, 1: dense_fw, 2: dense_fw, 3: "VariantsSolver:dense"}
    fake_state.queue = [0, 1, 2, 3]
    first, second = _fake_processes(fake_state, 2)
    with fake_state.cond:
        sched.dispatch(fake_state)
    # The second process skips the kind the first compiles for the first time.
    assert (first.item, second.item) == (0, 3)
    assert fake_state.queue == [1, 2]
    # Once one item of a kind is done its kernels are cached: both may then load them.
    with fake_state.cond:
        fake_state.compiled.add(3)
        fake_state.warm_kinds.add("FrankWolfeSolver:dense")
        second.item = None
        sched.dispatch(fake_state)
    assert second.item == 1


def test_the_extra_process_takes_no_item_while_a_race_runs(fake_state, monkeypatch) -> None:
    from ermviz.app.serving import warmup_schedule as sched

    races = [1]
    monkeypatch.setattr(sched, "racing", lambda: races[0])
    fake_state.queue = [0, 1, 2]
    first, second = _fake_processes(fake_state, 2)
    with fake_state.cond:
        sched.dispatch(fake_state)
    assert (first.item, second.item) == (0, None)
    races[0] = 0  # the races ended: both cores compile again
    with fake_state.cond:
        sched.dispatch(fake_state)
    assert second.item == 1


def test_estimates_scale_the_table_by_the_observed_speed(fake_state, monkeypatch) -> None:
    from ermviz import compile_estimates
    from ermviz.app.serving import warmup_schedule as sched

    monkeypatch.setattr(sched, "racing", lambda: 0)
    table = {it.label: 4.0 for it in fake_state.items}
    monkeypatch.setattr(compile_estimates, "WARMUP_ITEM", table)
    (first,) = _fake_processes(fake_state, 1)
    fake_state.queue = [1, 2]
    first.item, first.started = 0, time.perf_counter()
    model = DashboardModel(notifier=lambda level, message: None)
    model.dataset = "wdbc"
    # Nothing done yet: the table as measured (one process: 4 s for item 0, then 4 for 1).
    assert 7.5 <= warmup.expected_seconds(model, [("svm-dual", "pfw", "exact")]) <= 8.0
    # Item 0 took twice what the table says: this machine is twice as slow; item 1 is
    # next (8 s), the whole plan ends after item 2 (16 s).
    fake_state.compiled.update({0})
    fake_state.spent = {0: 8.0}
    fake_state.compiled_any = True  # (it compiled: an item loaded from the cache is quick)
    first.item = None
    assert 7.5 <= warmup.expected_seconds(model, [("svm-dual", "pfw", "exact")]) <= 8.0
    assert warmup.progress().eta == pytest.approx(16.0, abs=0.5)
    assert warmup.expected_seconds(model, [("svm-dual", "fw", "exact")]) is None  # done


def test_the_queue_starts_with_the_first_lesson_then_the_longest_items(monkeypatch) -> None:
    from ermviz import compile_estimates
    from ermviz.app.serving import warmup_schedule as sched

    state = warmup._State()
    items = [
        warmup.Item("first", 0, "a", ("p", "m", "s"), "d"),
        warmup.Item("short", 0, "b", ("p", "m", "s"), "d"),
        warmup.Item("long", 0, "c", ("p", "m", "s"), "d"),
        warmup.Item("fw:dense:svm-dual", 0, "e", ("p", "m", "s"), "d"),
    ]
    monkeypatch.setattr(
        compile_estimates, "WARMUP_ITEM", {"a": 1.0, "b": 2.0, "c": 30.0, "e": 50.0}
    )
    with state.cond:
        sched.take_plan(state, [it._asdict() for it in items])
    assert state.queue == [0, 2, 1, 3]


def test_the_terminal_rewrites_one_line_or_logs_a_few(monkeypatch, capsys) -> None:
    from ermviz.app.serving.warmup_terminal import Terminal

    progress = warmup.Progress(
        3, 160, "PFW exact on svm-dual (wdbc)", False, "compiling",
        seconds=9.0, lessons_ready=1, lessons_total=13, eta=70.0,
    )  # fmt: skip
    logged: list[str] = []
    log = Terminal(logged.append, tty=False)
    log.started(160)
    log.compiling()
    for k in range(50):
        log.update(progress._replace(done=3 + k))
    log.update(progress._replace(lessons_ready=13, seconds=41.0))
    assert logged == [
        "warming 160 kernels in the background, the first lesson's first; the page answers "
        "meanwhile",
        "compiling (first launch after an install: numba's cache is empty)",
        "a first lesson is ready (9 s): its race starts at once",
        "every lesson is ready (13 lessons, 41 s)",
    ]
    tty = Terminal(logged.append, tty=True)
    tty.update(progress)
    shown = capsys.readouterr().out
    assert shown.startswith("\r\x1b[2Kermviz: compiling kernels 3/160, lessons 1/13 ready, ~70 s")
    assert "\n" not in shown, "one line, rewritten in place"
    tty.last = 0.0
    tty.update(progress._replace(action="loading", done=4, lessons_ready=0))
    assert "loading cached kernels 4/160" in capsys.readouterr().out


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
           "--setup", "ermviz/app/serving/warmup.py"]  # fmt: skip
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
        # The page answered at once; the warm-up's processes start compiling meanwhile
        # (their first line can follow the first page by a second or two under load).
        while "ermviz: compiling (first launch" not in (text := log.read_text()):
            assert proc.poll() is None and time.monotonic() < deadline, text
            time.sleep(0.2)
        # ...and compile on long after it (160 items take a minute or more cold); in a log
        # (no terminal) a few lines say so, not one per kernel.
        assert "kernels ready" not in text, text
        assert "ermviz: warming " in text and text.count("ermviz: ") < 10, text
        children = [
            c for c in _children(proc.pid) if b"--child" in Path(f"/proc/{c}/cmdline").read_bytes()
        ]
        assert 1 <= len(children) <= warmup.MAX_PROCESSES, "one process per free core"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0, log.read_text()
        gone = time.monotonic() + 30
        for child in children:
            while Path(f"/proc/{child}").exists() and time.monotonic() < gone:
                time.sleep(0.1)
            state = Path(f"/proc/{child}/stat")
            assert not state.exists() or ") Z" in state.read_text(), (
                "a warm-up process outlived the server"
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
    # (no compiling process in the fake state: no estimate to quote)
    fake_state.phase = "ready"
    assert not warmup.status_view(model).visible


def _child_reports(cache: Path, item: warmup.Item) -> list[dict]:
    import json

    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "ERMVIZ_OFFLINE": "1"}
    order = json.dumps({"build": 0, "item": item._asdict()}) + "\n"
    proc = subprocess.run(
        [sys.executable, "-m", "ermviz.app.serving.warmup", "--child"],
        input=order, env=env, capture_output=True, text=True, cwd=REPO, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


@pytest.mark.long(seconds=60)
def test_a_compiling_process_says_compiling_only_when_numba_compiles(tmp_path: Path) -> None:
    item = warmup.Item(
        "fw:dense:svm-dual", 0, "FW diminishing on svm-dual (dense)",
        ("svm-dual", "fw", "diminishing"), "toy-2d",
    )  # fmt: skip
    cold = _child_reports(tmp_path, item)
    assert [next(iter(m)) for m in cold] == ["start", "compiling", "done"], cold
    assert cold[-1]["compiled"] is True and cold[-1]["kind"] == "FrankWolfeSolver:dense", cold
    warm = _child_reports(tmp_path, item)  # a later launch: the kernels load from the cache
    assert [next(iter(m)) for m in warm] == ["start", "done"], warm
    assert warm[-1]["compiled"] is False, warm


# -- with --procs N: worker 0 compiles and publishes, the other workers follow -------------
def _serve_as_worker(task: int, shared: Path, monkeypatch) -> tuple[list, list, list]:
    """Run the warm-up's server thread body as worker ``task`` of a multi-process server
    with fake compiling processes; returns (processes spawned, kernels loaded, lines)."""
    import json

    from ermviz import workers
    from ermviz.app.serving import memory
    from ermviz.app.serving import warmup_schedule as sched
    from ermviz.app.state import lifecycle

    monkeypatch.setattr(workers, "task_id", lambda: task)
    monkeypatch.setattr(workers, "share_path", lambda master=None: shared)
    monkeypatch.setattr(workers, "FOLLOW_PERIOD", 0.02)
    monkeypatch.setattr(lifecycle, "KERNELS_GATE", lifecycle.KERNELS_GATE)
    monkeypatch.setattr(memory, "freeze_long_lived", lambda: None)
    monkeypatch.setattr(sched, "free_cores", lambda: 1)
    monkeypatch.setattr(warmup, "_STATE", warmup._State())
    monkeypatch.setattr(warmup, "Builder", lambda: None)
    loaded: list[str] = []
    monkeypatch.setattr(warmup, "_load", lambda builder, item: loaded.append(item.label))
    plan = [
        warmup.Item("lesson", 0, "FW exact on svm-dual (wdbc)", ("svm-dual", "fw", "exact"),
                    "wdbc")._asdict(),
        warmup.Item("fw:dense:svm-dual", 0, "PFW exact on svm-dual (dense)",
                    ("svm-dual", "pfw", "exact"), "toy-2d")._asdict(),
    ]  # fmt: skip

    class Process:  # a compiling process that builds what it is sent
        def __init__(self) -> None:
            self.sent: list[int] = []
            self.returncode: int | None = None
            lines = [json.dumps({"plan": plan})]
            self.stdout = self._lines(lines)
            self.stdin = self

        def _lines(self, first: list[str]):
            yield from (ln + "\n" for ln in first)
            while self.returncode is None:
                if self.sent:
                    i = self.sent.pop(0)
                    yield json.dumps({"start": i}) + "\n"
                    yield json.dumps({"done": i, "seconds": 0.1, "compiled": True}) + "\n"
                else:
                    time.sleep(0.01)

        def write(self, text: str) -> None:
            self.sent.append(json.loads(text)["build"])

        def flush(self) -> None:
            pass

        def close(self) -> None:
            self.returncode = 0

        def poll(self) -> int | None:
            return self.returncode

        def wait(self, timeout: float | None = None) -> int:
            return 0

        def kill(self) -> None:
            self.returncode = -9

    spawned: list[bool] = []

    def spawn(planner: bool) -> sched.Child:
        spawned.append(planner)
        return sched.Child(Process(), planner)

    monkeypatch.setattr(sched, "spawn", spawn)
    lines: list[str] = []
    warmup._serve(lines.append, False)
    return spawned, loaded, lines


def test_worker_0_publishes_and_the_other_workers_follow_without_compiling(
    tmp_path, monkeypatch
) -> None:
    import json

    shared = tmp_path / "warmup.jsonl"
    follower_result: list = []
    with monkeypatch.context() as m1:
        spawned, loaded, lines = _serve_as_worker(0, shared, m1)
        assert spawned == [True] and loaded == ["FW exact on svm-dual (wdbc)"]
        assert warmup.progress().phase == "ready" and lines and "ready" in lines[-1]
        messages = [json.loads(ln) for ln in shared.read_text().splitlines()]
        assert "plan" in messages[0] and messages[-1] == {"exit": 0}
        assert {m["done"] for m in messages if "done" in m} == {0, 1}
    with monkeypatch.context() as m2:
        follower_result = _serve_as_worker(1, shared, m2)
        spawned, loaded, lines = follower_result
        # No compiling process of its own: it loads the lesson's kernel worker 0 compiled,
        # ends ready, and prints nothing (worker 0 speaks for all).
        assert spawned == [] and loaded == ["FW exact on svm-dual (wdbc)"]
        assert warmup.progress().phase == "ready" and warmup.progress().done == 2
