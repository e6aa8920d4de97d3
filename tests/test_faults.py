"""Faults: a solver that raises or turns NaN mid-race, a session closed mid-race, a damaged
Parquet file in a results folder, a full disk while exporting.

Each test drives the product's own path (the runner, the CLI's ``main``, the dashboard's
Start handler and periodic pull, the session-destroyed hook Bokeh calls, the Results tab,
the download buttons) and checks what a user would see: statuses, one-line messages,
notifications, files on disk, thread liveness. A Dask worker killed mid-sweep is
``tests/test_sweep.py::test_a_killed_worker_loses_no_cell``.
"""

from __future__ import annotations

import asyncio
import errno
import json
import math
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ermviz import experiment
from ermviz.base import Solver
from ermviz.cli import main
from ermviz.data import load_dataset, preprocess
from ermviz.registry import build_problem, build_solver
from ermviz.runner import Budget, Run
from ermviz.sweep import load_config, run_cell
from solvers.tags import STATUS_RUNNING

pn = pytest.importorskip("panel")

from bokeh.application.handlers.document_lifecycle import (  # noqa: E402
    _on_session_destroyed as bokeh_destroys_session,
)
from bokeh.document import Document  # noqa: E402
from bokeh.server.contexts import BokehSessionContext, _RequestProxy  # noqa: E402
from panel.io.state import set_curdoc  # noqa: E402

from ermviz.app.results.model import ResultsModel  # noqa: E402
from ermviz.app.results.view import ResultsView  # noqa: E402
from ermviz.app.state.model import DashboardModel, RunSpec  # noqa: E402
from ermviz.app.views import export_view  # noqa: E402
from ermviz.app.views.page import Dashboard, build_dashboard  # noqa: E402

#: The message of the injected exception: two lines, as numba's and scipy's often are.
BOOM = "overflow in the line search\nat iteration 12"


def make_faulty(solver: Solver, kind: str, at: int = 3) -> Solver:
    """Make ``solver`` fail from its ``at``-th ``advance`` call.

    ``raise``: the call raises (message :data:`BOOM`). ``nan``: it returns the real rows
    with the objective set to NaN and status running, as an adapter that forgot the
    kernel's finiteness check would: only the runner can catch it.
    """
    real = solver.advance
    objective = solver.columns.index("objective")
    calls = [0]

    def advance(max_rows: int, stop_at: int) -> tuple[np.ndarray, int]:
        calls[0] += 1
        rows, status = real(max_rows, stop_at)
        if calls[0] < at:
            return rows, status
        if kind == "raise":
            raise FloatingPointError(BOOM)
        rows = np.array(rows, copy=True)
        rows[:, objective] = np.nan
        return rows, STATUS_RUNNING

    solver.advance = advance
    return solver


def wait_until(predicate: Callable[[], bool], timeout: float) -> bool:
    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


async def await_until(predicate: Callable[[], bool], timeout: float) -> bool:
    """:func:`wait_until` on the event loop: the dashboard's periodic pull runs meanwhile."""
    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        if predicate():
            return True
        await asyncio.sleep(0.02)
    return predicate()


def alive_threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.is_alive()}


# -- 1. a solver that raises, one that turns NaN ------------------------------------------


@pytest.fixture(scope="module")
def wdbc_svm():
    return build_problem("svm-dual", preprocess(load_dataset("wdbc"), standardize=True), C=1.0)


def test_runner_race_a_raising_and_a_nan_solver_error_and_the_others_finish(wdbc_svm) -> None:
    budget = Budget(tol=1e-12, max_time=1.0)
    raising, nan = (
        Run(make_faulty(build_solver(wdbc_svm, "fw", "exact", {}, 1e-12), kind), budget)
        for kind in ("raise", "nan")
    )
    healthy = [Run(build_solver(wdbc_svm, m, "exact", {}, 1e-12), budget) for m in ("fw", "pfw")]
    for run in (raising, nan, *healthy):
        run.start()
    assert all(run.join(60) for run in (raising, nan, *healthy))
    assert raising.status == "error"
    assert raising.message == "FloatingPointError: overflow in the line search at iteration 12"
    assert nan.status == "error" and "NaN/inf" in nan.message and "\n" not in nan.message
    # The run ends at the first NaN row (as a kernel does), not at its time budget.
    objective = nan.trace.since(0)["objective"]
    assert math.isnan(objective[-1]) and np.isfinite(objective[:-1]).all()
    assert nan.time_s < budget.max_time
    for run in healthy:
        assert run.status in ("converged", "max_time", "stalled"), run.message
        assert np.isfinite(run.trace.since(0)["objective"]).all()


@pytest.mark.parametrize("kind", ["raise", "nan"])
def test_cli_run_of_a_failing_solver_exits_1_with_a_one_line_message(
    kind: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = experiment.build_solver
    monkeypatch.setattr(
        experiment, "build_solver", lambda *a, **k: make_faulty(real(*a, **k), kind)
    )
    argv = ["run", "--dataset", "wdbc", "--standardize", "--problem", "svm-dual"]
    argv += ["--method", "fw", "--tol", "1e-12", "--max-time", "2", "--no-progress"]
    code = main(argv)
    out, err = capsys.readouterr()
    summary = json.loads(out.strip().splitlines()[-1])
    assert code == 1 and summary["status"] == "error", summary
    assert "\n" not in summary["message"]
    expected = "overflow in the line search at iteration 12" if kind == "raise" else "NaN/inf"
    assert expected in summary["message"]
    assert "Traceback" not in err  # the message is in the summary


def test_dashboard_race_with_failing_solvers_keeps_streaming_and_starts_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    notes: list[tuple[str, str]] = []
    m = DashboardModel(notifier=lambda level, msg: notes.append((level, msg)))
    m.specs = [RunSpec(method="fw", step="exact") for _ in range(3)]
    m.max_time = 1.5  # FW crawls on this set: the healthy run uses its whole budget
    dash = Dashboard(m)
    real_prepare = m.prepare
    built: list[list] = []

    def prepare() -> list:
        slots = real_prepare()
        if not built:  # the first race only: run 1 raises, run 2 turns NaN
            make_faulty(slots[0].run.solver, "raise")
            make_faulty(slots[1].run.solver, "nan")
        built.append(slots)
        return slots

    monkeypatch.setattr(m, "prepare", prepare)

    async def races() -> dict[str, int]:
        seen: dict[str, int] = {}
        await dash.start()  # the Start button's handler: build off the loop, launch, stream
        bad, nan, good = first = built[0]
        assert await await_until(lambda: bad.done and nan.done, 30)
        assert not good.done and dash.streamer.running
        seen["ticks"], seen["sent"] = dash.streamer.ticks, dash.streamer.sources[2].sent
        assert await await_until(lambda: good.done, 60)
        assert await await_until(lambda: not dash.streamer.running, 10)  # idle after the race
        seen["ticks_after"] = dash.streamer.ticks
        seen["sent_after"] = dash.streamer.sources[2].sent
        assert [s.status for s in first] == ["error", "error", "max_time"]
        # The page still takes a new Start: a new race runs and streams to its end.
        m.max_time = 0.3
        assert not dash.start_button.disabled
        await dash.start()
        second = built[1]
        assert await await_until(lambda: all(s.done for s in second), 60)
        assert await await_until(lambda: not dash.streamer.running, 10)
        seen["second_sent"] = min(src.sent for src in dash.streamer.sources)
        return seen

    seen = asyncio.run(races())
    first, second = built
    # The periodic pull went on after two of three runs failed, and delivered the third's rows.
    assert seen["ticks_after"] > seen["ticks"] and seen["sent_after"] > seen["sent"]
    assert not any("live update failed" in msg for _, msg in notes)
    texts = ("overflow in the line search at iteration 12", "NaN/inf")
    for slot, text in zip(first[:2], texts, strict=True):
        assert text in slot.message and "\n" not in slot.message
        told = [msg for lvl, msg in notes if lvl == "error" and msg.startswith(f"{slot.label}: ")]
        assert told == [f"{slot.label}: {slot.message}"]  # once, one line
    assert [s.status for s in second] == ["max_time"] * 3
    assert seen["second_sent"] > 0 and m.race_status == "finished"


# -- 2. a session closed mid-race ---------------------------------------------------------


@pytest.fixture
def served_session() -> Iterator[BokehSessionContext]:
    """A Bokeh document with a session context, as ``panel serve`` gives each page, made
    the current document (so :func:`build_dashboard` sees a served session)."""
    doc = Document()
    ctx = BokehSessionContext("faults-session", None, doc)
    ctx._request = _RequestProxy(None, arguments={}, cookies={}, headers={})
    doc._session_context = weakref.ref(ctx)
    with set_curdoc(doc):
        yield ctx


#: FW only: it never reaches this tolerance, so each run would race its whole minute.
LONG_RACE = "?dataset=wdbc&tol=1e-14&max_time=60&run=fw:exact&run=fw:exact&run=fw:exact"


def test_closing_a_session_mid_race_ends_its_solver_threads_within_a_second(
    served_session: BokehSessionContext,
) -> None:
    dash = build_dashboard(LONG_RACE)
    assert pn.state.curdoc is served_session._document
    assert served_session._document.session_destroyed_callbacks  # the hook is registered
    dash.start_sync()
    slots = list(dash.model.slots)
    try:
        assert len(slots) == 3
        assert wait_until(lambda: all(len(s.run.trace) > 2 for s in slots), 30)
        names = {f"ermviz-{s.run_id}" for s in slots}
        assert names <= alive_threads() and all(s.status == "running" for s in slots)
        slots[1].run.pause()  # a paused run waits for a resume that will never come
        # What Bokeh's DocumentLifeCycleHandler does when the server discards the session.
        bokeh_destroys_session(served_session)
        assert wait_until(lambda: not names & alive_threads(), 1.0), names & alive_threads()
        assert [s.status for s in slots] == ["stopped"] * 3
        assert not dash.streamer.running
    finally:
        for slot in slots:
            slot.run.stop()


class _Connections:
    """Stands for Bokeh's ServerSession: only the count of connected browsers is read."""

    connection_count = 1


def test_a_page_whose_browser_left_stops_its_runs_before_bokeh_ends_the_session(
    served_session: BokehSessionContext,
) -> None:
    from ermviz.app.plots.streaming import DISCONNECT_GRACE

    dash = build_dashboard(LONG_RACE)
    browser = _Connections()
    served_session._set_session(browser)
    dash.start_sync()
    slots = list(dash.model.slots)
    try:
        assert wait_until(lambda: all(len(s.run.trace) > 2 for s in slots), 30)
        names = {f"ermviz-{s.run_id}" for s in slots}
        asyncio.run(dash.streamer._tick())  # a browser is connected: the race goes on
        browser.connection_count = 0  # the tab closed; Bokeh keeps the session 15-32 s
        asyncio.run(dash.streamer._tick())
        assert [s.status for s in slots] == ["running"] * 3  # a blip is forgiven
        time.sleep(DISCONNECT_GRACE)
        asyncio.run(dash.streamer._tick())
        assert wait_until(lambda: not names & alive_threads(), 1.0), names & alive_threads()
        assert [s.status for s in slots] == ["stopped"] * 3
        assert {s.message for s in slots} == {"stopped: the page was closed"}
        assert all(len(s.run.trace) > 2 for s in slots)  # the traces are kept
        assert not dash.streamer.running
    finally:
        for slot in slots:
            slot.run.stop()


@pytest.mark.slow
def test_a_session_closed_while_its_race_is_built_starts_no_run(
    served_session: BokehSessionContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    dash = build_dashboard(LONG_RACE)
    building, release = threading.Event(), threading.Event()
    built: list = []
    real_prepare = dash.model.prepare

    def prepare() -> list:
        slots = real_prepare()
        built.extend(slots)
        building.set()
        release.wait(30)  # the page closes now, while Start waits for this worker
        return slots

    monkeypatch.setattr(dash.model, "prepare", prepare)

    async def close_during_start() -> None:
        start = asyncio.ensure_future(dash.start())
        assert await await_until(building.is_set, 60)
        bokeh_destroys_session(served_session)
        release.set()
        await start

    try:
        asyncio.run(close_during_start())
        names = {f"ermviz-{s.run_id}" for s in built}
        assert len(built) == 3 and not names & alive_threads()
        assert [s.started for s in built] == [False] * 3
        assert [s.run.status for s in built] == ["ready"] * 3
        assert not dash.streamer.running
    finally:
        for slot in built:
            slot.run.stop()


# -- 3. a damaged Parquet file in a results folder ----------------------------------------

SWEEP = """
name = "faults"
[[grid]]
datasets = ["toy-2d", "blobs"]
problems = ["logreg-l1"]
methods = ["fw", "pfw"]
steps = ["exact"]
settings = { radius = [2.0] }
budget = { tol = 1e-6, max_iter = 300, max_time = 5 }
"""


@pytest.fixture(scope="module")
def damaged_results(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """A finished sweep (written cell by cell, as Dask workers do) with a truncated copy of
    a summary and a trace file replaced by random bytes; returns the folder and the two
    damaged files."""
    tmp = tmp_path_factory.mktemp("faults-results")
    (tmp / "sweep.toml").write_text(SWEEP)
    cfg = load_config(tmp / "sweep.toml")
    out = tmp / "res"
    for cell in cfg.cells:
        run_cell(cell, str(out), cfg.name)
    (out / "config.toml").write_text(cfg.text)
    ids = sorted(c.cell_id for c in cfg.cells)
    whole = (out / "summaries" / f"{ids[0]}.parquet").read_bytes()
    truncated = out / "summaries" / "copy-cut-short.parquet"
    truncated.write_bytes(whole[: len(whole) // 2])
    garbage = out / "traces" / f"{ids[1]}.parquet"
    garbage.write_bytes(np.random.default_rng(0).bytes(4096))
    return out, [truncated, garbage]


def test_results_tab_skips_damaged_files_with_a_warning_naming_each(
    damaged_results: tuple[Path, list[Path]],
) -> None:
    out, damaged = damaged_results
    notes: list[tuple[str, str]] = []
    model = ResultsModel(notifier=lambda level, msg: notes.append((level, msg)), roots=())
    view = ResultsView(model)
    view.path_input.value = str(out)
    view._open_typed()  # what Enter in the folder box does
    assert model.folder == str(out.resolve()) and model.status_level == "success", model.status
    assert "skipped 2 unreadable files" in model.status
    warnings = [msg for level, msg in notes if level == "warning"]
    assert len(warnings) == 2 and all("\n" not in msg for msg in warnings)
    for path in damaged:
        assert any(str(path.resolve()) in msg for msg in warnings), (path, warnings)
    # The four real cells are shown; the cell whose trace is garbage has no times.
    assert len(model.summaries) == 4 and len(model.table_frame()) > 0
    garbage_cell = damaged[1].stem
    assert garbage_cell in set(model.summaries["cell_id"])
    assert set(model.traces["cell_id"]) == set(model.summaries["cell_id"]) - {garbage_cell}
    notes.clear()
    assert model.refresh()  # a refresh reads the folder again: same skips, same warnings
    assert len([msg for level, msg in notes if level == "warning"]) == 2


def test_report_cli_skips_damaged_files_with_one_warning_line_each(
    damaged_results: tuple[Path, list[Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    out, damaged = damaged_results
    code = main(["report", str(out), "--eps", "1e-2", "1e-4", "--format", "md"])
    stdout, err = capsys.readouterr()
    assert code == 0, err
    lines = err.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("ermviz: warning: skipped") for line in lines)
    for path in damaged:
        assert sum(str(path) in line for line in lines) == 1, (path, lines)
    assert "| instance | eps |" in stdout
    assert (out / "report" / "table.md").stat().st_size > 0
    assert (out / "report" / "profile.html").stat().st_size > 0


# -- 4. a full disk while exporting ------------------------------------------------------


def no_space(*_: object) -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def raise_no_space(*_: object, **__: object) -> None:
    raise no_space()


def fill_the_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make pandas' CSV and Parquet writers fail half-way: some bytes reach the file (or
    the buffer), then ENOSPC, as a write on a full disk does."""

    def write_then_fail(self: pd.DataFrame, target: object = None, *args: object, **kw: object):
        if isinstance(target, str | os.PathLike):
            Path(target).write_bytes(b"PAR1 half a file")
        elif target is not None and hasattr(target, "write"):
            target.write(b"half a file" if not hasattr(target, "encoding") else "half a file")
        raise no_space()

    monkeypatch.setattr(pd.DataFrame, "to_csv", write_then_fail)
    monkeypatch.setattr(pd.DataFrame, "to_parquet", write_then_fail)


@pytest.mark.parametrize("existing", [False, True], ids=["new-file", "over-an-old-file"])
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_cli_trace_export_on_a_full_disk_fails_in_one_line_and_leaves_no_file(
    suffix: str,
    existing: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / f"trace{suffix}"
    if existing:
        target.write_bytes(b"the previous trace")
    fill_the_disk(monkeypatch)
    argv = ["run", "--dataset", "toy-2d", "--problem", "logreg-l1", "--radius", "2"]
    argv += ["--method", "pfw", "--max-iter", "50", "--no-progress", "--out", str(target)]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ermviz: error: --out"), err
    assert str(target) in lines[0] and "No space left on device" in lines[0]
    summary = json.loads(out.strip().splitlines()[-1])  # the run's result is not lost
    assert summary["status"] in ("converged", "max_iter") and "out" not in summary
    # Neither a partial target nor the writer's temporary file is left in the folder.
    assert sorted(p.name for p in folder.iterdir()) == ([target.name] if existing else [])
    if existing:
        assert target.read_bytes() == b"the previous trace"


def click(button: pn.widgets.FileDownload) -> None:
    """What a click on the download button in the browser sets on the server."""
    button._clicks += 1


@pytest.mark.slow
def test_dashboard_downloads_on_a_full_disk_notify_and_send_nothing(
    damaged_results: tuple[Path, list[Path]], monkeypatch: pytest.MonkeyPatch
) -> None:
    notes: list[tuple[str, str]] = []
    m = DashboardModel(notifier=lambda level, msg: notes.append((level, msg)))
    m.dataset = "toy-2d"
    m.animate = False  # the preset animates the teaching view: 0.03 s a step
    dash = Dashboard(m)
    dash.start_sync()
    assert wait_until(lambda: all(s.done for s in m.slots), 30)
    dash.streamer.pull()
    results = ResultsView(
        ResultsModel(notifier=lambda level, msg: notes.append((level, msg)), roots=())
    )
    assert results.model.open(str(damaged_results[0]))
    buttons = {
        "CSV export": dash.export_view.csv_download,
        "Parquet export": dash.export_view.parquet_download,
        "HTML export": dash.export_view.html_download,
        "results CSV export": results.csv_download,
        "results Markdown export": results.md_download,
    }
    fill_the_disk(monkeypatch)
    monkeypatch.setattr(export_view, "file_html", raise_no_space)  # the HTML page
    monkeypatch.setattr(ResultsModel, "table_text", raise_no_space)  # both results tables
    for what, button in buttons.items():
        notes.clear()
        click(button)  # no exception escapes to Panel, which would log a traceback
        assert button.data is None and button._transfers == 0, what  # nothing sent
        assert len(notes) == 1 and notes[0][0] == "error", (what, notes)
        assert notes[0][1].endswith("OSError: [Errno 28] No space left on device"), notes
        assert notes[0][1].split(":")[0] in what
    monkeypatch.undo()  # space again: the same buttons send their files
    for what, button in buttons.items():
        click(button)
        assert button._transfers == 1 and button.data.startswith("data:"), what
