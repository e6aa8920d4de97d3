"""The race's status in words (ermviz.app.views.race_status) and the plots' certificate names
(issue 42: one race status, consistent; the clock of every time the page states).

* While a Start waits for kernels the background warm-up compiles, the status line says
  so (which kernels, the seconds so far, how many are ready, "first launch only"), the
  runs' chips say which of them wait, and nothing on the toolbar says "idle" or "No race
  yet" (it did, over a second orange line saying "compiling"); the warm-up's own line
  hides meanwhile. Raced through a real Dashboard over a warm-up state held by the test.
* The race summary states every time on the page's clock ("s CPU", "s wall"), the plots'
  work counter beside the iteration, and the LMO calls when counted.
* The wait's estimate (warmup.wait_estimate) comes from the same kernel compiled for other
  data, or there is none.
* The certificate plots name the certificate of the problem set up, before a Start (a
  lesson loaded over another problem's race said "fw gap" on a PLQ race) and after it
  (a lazified run's primal-dual gap beside the others' FW gaps; the running-average gap of
  a non-convex race).
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from ermviz.app.plots.figure_style import certificate_name
from ermviz.app.serving import warmup
from ermviz.app.state import lifecycle
from ermviz.app.views.race_status import Starting, race_line, race_summary, run_chips


def test_race_summary_says_who_reached_what_on_the_page_clock() -> None:
    running = [
        {"label": "FW exact", "status": "running", "iteration": 9e5, "time_s": 2.1,
         "cpu_s": 0.7, "certificate": 3e-4},
        {"label": "PFW exact", "status": "running", "iteration": 400, "time_s": 0.2,
         "cpu_s": 0.05, "certificate": 1e-5},
    ]  # fmt: skip
    assert race_summary(running, tol=1e-8) == ""  # nothing to say yet
    running[1].update(
        status="converged", iteration=412, time_s=0.32, cpu_s=0.12, certificate=9.9e-9
    )
    assert race_summary(running, tol=1e-8) == (
        "PFW exact reached 9.9e-09 at iteration 412 (0.12 s CPU); FW exact at 3.0e-04 after "
        "0.7 s CPU"
    )
    assert race_summary(running, tol=1e-8, clock="time_s") == (
        "PFW exact reached 9.9e-09 at iteration 412 (0.32 s wall); FW exact at 3.0e-04 after "
        "2.1 s wall"
    )
    running[0].update(status="max_time", time_s=15.0, cpu_s=5.0, certificate=3.9e-6)
    assert race_summary(running, tol=1e-8).endswith("FW exact at 3.9e-06 after 5 s CPU, max_time")
    assert race_summary(running, tol=1e-8, clock="time_s").endswith("after 15 s wall, max_time")
    stalled = [{"label": "FW exact", "status": "stopped", "iteration": 10, "time_s": 1.0,
                "cpu_s": 0.004, "certificate": 0.5}]  # fmt: skip
    assert race_summary(stalled, tol=1e-8) == (
        "no run reached tol 1e-08; FW exact at 5.0e-01 after 4 ms CPU, stopped"
    )
    assert race_summary([{"label": "FW exact", "status": "error"}], tol=1e-8) == ""


def test_race_summary_counts_work_and_lmo_calls_and_orders_by_its_clock() -> None:
    runs = [
        {"label": "PFW exact", "status": "converged", "iteration": 417, "time_s": 0.01,
         "cpu_s": 0.06, "certificate": 9.8e-9, "data_passes": 425.0},
        {"label": "FACE-NEWTON armijo", "status": "converged", "iteration": 12,
         "time_s": 0.3, "cpu_s": 0.00016, "certificate": 2.5e-9, "data_passes": 77.0,
         "lmo_calls": 13.0},
    ]  # fmt: skip
    # The fastest first on the clock shown (CPU here: the wall times are the other way).
    assert race_summary(runs, tol=1e-8, work=("data_passes", "data passes")) == (
        "FACE-NEWTON armijo reached 2.5e-09 at iteration 12 (77 data passes, 160 µs CPU, 13 "
        "LMO calls); PFW exact reached 9.8e-09 at iteration 417 (425 data passes, 60 ms CPU)"
    )


def test_the_status_line_says_what_a_start_waits_for() -> None:
    starting = Starting(since=100.0, labels=["REHLINE cd", "IPM newton"])
    line = race_line("idle", 0, starting, now=102.4)
    assert 'data-status="starting"' in line and "idle" not in line
    assert "loading the data and building 2 runs, 2 s so far" in line
    assert "compiling" not in line
    starting.follow([], None, first_launch=True)  # a kernel the warm-up has not reached
    line = race_line("idle", 0, starting, now=112.0)
    assert "12 s so far; compiling their kernels, first launch only" in line
    assert 'data-status="starting"' in line
    starting.follow(["REHLINE cd on plq (fairness-synthetic)", "IPM newton on plq (x)"], None, True)
    line = race_line("idle", 0, starting, now=140.0)
    assert 'data-status="compiling"' in line and "idle" not in line
    assert (
        "compiling</b> the REHLINE cd and IPM newton kernels, 40 s so far; first launch only"
        in line
    )
    assert (
        "0 of 2 ready" in line and '<progress class="race-progress" value="0.0" max="2.0"' in line
    )
    starting.follow(["IPM newton on plq (x)"], 25.0, True)  # one ready; the warm-up estimates
    line = race_line("idle", 0, starting, now=150.0)
    assert "the IPM newton kernel, 50 s so far" in line and "1 of 2 ready · about 25 s left" in line
    assert 'value="50.0" max="75.0"' in line  # the bar follows the time when estimated
    chips = run_chips([], starting)
    assert (
        "REHLINE cd: <b>being built</b>" in chips and "IPM newton: <b>waits for its kernel" in chips
    )
    assert "No race yet" not in chips and 'class="run-status"' not in chips
    assert "No race yet: press Start." in run_chips([])
    assert "race: <b>running</b> (3 runs)" in race_line("running", 3)


@pytest.fixture
def warming(monkeypatch: pytest.MonkeyPatch):
    """A warm-up in progress (ermviz.app.serving.warmup) whose items the test marks compiled: the
    first lesson's FW, AFW and PFW kernels on wdbc."""
    state = warmup._State()
    keys = [("svm-dual", m, "exact") for m in ("fw", "afw", "pfw")]
    state.items = [
        warmup.Item("lesson", i, f"{k[1].upper()} exact on svm-dual (wdbc)", k, "wdbc")
        for i, k in enumerate(keys)
    ]
    state.phase, state.current, state.t0 = "compiling", state.items[0].label, time.perf_counter()
    monkeypatch.setattr(warmup, "_STATE", state)
    monkeypatch.setattr(lifecycle, "KERNELS_GATE", warmup.wait_for_kernels)
    yield state
    with state.cond:  # nobody waits on after the test
        state.phase = "stopped"
        state.cond.notify_all()


def test_a_start_waiting_for_kernels_says_compiling_and_nothing_else(warming) -> None:
    from ermviz.app.lessons import FIRST_LESSON
    from ermviz.app.views.page import build_dashboard

    dash = build_dashboard(f"lesson={FIRST_LESSON}&max_iter=200")
    dash.model.notifier = lambda level, message: None
    started = threading.Thread(target=lambda: asyncio.run(dash.start()), daemon=True)
    started.start()
    deadline = time.monotonic() + 60  # bounds against a hang, not timings
    while "compiling" not in dash.status_strip.object and time.monotonic() < deadline:
        time.sleep(0.05)
    text = dash.status_strip.object
    assert 'data-status="compiling"' in text, text
    assert "3 kernels (FW exact, AFW exact, PFW exact)" in text and "first launch only" in text
    assert "0 of 3 ready" in text
    for wrong in ("idle", "No race yet", "press Start"):
        assert wrong not in text, (wrong, text)
    assert dash.start_button.disabled and not dash.warmup_line.visible
    time.sleep(1.2)  # the seconds keep counting
    assert "1 s so far" in dash.status_strip.object or "2 s so far" in dash.status_strip.object
    with warming.cond:
        warming.compiled.add(0)
        warming.cond.notify_all()
    while "1 of 3 ready" not in dash.status_strip.object and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "the AFW exact and PFW exact kernels" in dash.status_strip.object
    with warming.cond:
        warming.compiled.update({1, 2})
        warming.cond.notify_all()
    started.join(60)
    assert not started.is_alive()
    assert dash.model.race_status in ("running", "finished")
    text = dash.status_strip.object
    assert "compiling" not in text and 'class="run-status"' in text, text
    assert dash.warmup_line.visible
    dash.model.stop(wait=5.0)


def test_certificate_names() -> None:
    assert certificate_name("duality_gap") == "duality gap"
    assert certificate_name("rel_duality_gap") == "relative duality gap"
    assert certificate_name(["fw_gap", "primal_dual_gap", "fw_gap"]) == "FW gap / primal-dual gap"
    assert certificate_name("some_new_gap") == "some new gap"


def _labels(dash) -> list[tuple[str, str]]:
    return [
        (" ".join(f.title.text.split()), f.yaxis[0].axis_label) for f in dash.race_view.figures[:2]
    ]


def test_the_plots_name_the_certificate_before_and_after_start() -> None:
    from ermviz.app.views.page import build_dashboard

    dash = build_dashboard("lesson=zigzag-toy")
    dash.model.notifier = lambda level, message: None
    dash.race_view.build()
    assert _labels(dash) == [("FW gap vs iteration", "FW gap"), ("FW gap vs CPU time", "FW gap")]
    figures = dash.race_view.figures
    dash.load_lesson("rehline-fairness")  # a PLQ problem, loaded over the FW one
    assert _labels(dash) == [
        ("duality gap vs iteration", "duality gap"),
        ("duality gap vs CPU time", "duality gap"),
    ]
    assert dash.race_view.figures[0] is figures[0]  # relabelled in place, not rebuilt
    # A setting that changes what the certificate holds (the running-average FW gap).
    dash.load_lesson("nonconvex-avg-gap")
    assert _labels(dash)[0] == ("running-average FW gap vs iteration", "running-average FW gap")
    # After Start: the runs' own certificates (a lazified run's is a primal-dual gap).
    dash.model.dataset = "toy-simplex-3"
    dash.model.problem = "svm-dual"
    from ermviz.app.state.runspec import RunSpec

    dash.model.specs = [RunSpec(method="pfw", step="exact"),
                        RunSpec(method="pfw", step="exact", settings={"lazy": True})]  # fmt: skip
    assert _labels(dash)[0] == ("FW gap vs iteration", "FW gap")
    dash.start_sync()
    title, label = _labels(dash)[0]
    assert label == "FW gap / primal-dual gap" and title.startswith(label)
    dash.model.stop(wait=5.0)


def test_the_wait_quoted_is_the_schedules_estimate_for_what_it_waits_for(
    warming, monkeypatch
) -> None:
    """warmup.wait_estimate, the time left the status line quotes: the measured compile
    seconds of the kernels the Start waits for (ermviz.compile_estimates), less what the
    compiling process has spent on the one it is on, then the queue before the others;
    None when the Start waits for nothing."""
    from ermviz import compile_estimates
    from ermviz.app.serving import warmup_schedule as sched
    from ermviz.app.state.model import DashboardModel

    monkeypatch.setattr(sched, "racing", lambda: 0)
    monkeypatch.setattr(compile_estimates, "WARMUP_ITEM", {it.label: 30.0 for it in warming.items})

    class Running:  # a compiling process that is alive
        stdin = None

        def poll(self) -> None:
            return None

    child = sched.Child(Running(), planner=True)
    child.item, child.started = 0, time.perf_counter() - 10.0  # on FW for 10 s
    warming.children = [child]
    warming.queue = [1, 2]
    model = DashboardModel(notifier=lambda level, message: None)
    assert warmup.wait_estimate(model) is None  # its Start waits for nothing
    warming.waiting[model] = [warming.items[0].label]
    assert warmup.wait_estimate(model) == pytest.approx(20.0, abs=0.5)
    warming.waiting[model] = [warming.items[2].label]  # PFW: after FW's 20 s and AFW's 30
    assert warmup.wait_estimate(model) == pytest.approx(80.0, abs=0.5)
