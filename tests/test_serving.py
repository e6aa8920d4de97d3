"""Serving safely: the defaults a teacher relies on when the dashboard is served to a class.

* ``make serve`` binds the loopback interface only, accepts websocket origins of this
  machine only, and discards a closed page's session within seconds;
* ``ERMVIZ_RESULTS`` set empty turns the Results tab's folder access off (nothing listed,
  a typed path refused, the inputs disabled), while unset keeps the defaults;
* the per-session limits hold: at most ``MAX_RUNS`` runs per race, uploads above
  ``MAX_UPLOAD_BYTES`` refused before they are stored, ``repeat`` bounded.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from ermviz.sweep import load_config, run_cell

REPO = Path(__file__).resolve().parent.parent

SWEEP = """
name = "serving"
[[grid]]
datasets = ["toy-2d"]
problems = ["logreg-l1"]
methods = ["pfw"]
steps = ["exact"]
settings = { radius = [2.0] }
budget = { tol = 1e-6, max_iter = 200, max_time = 5 }
"""


def _serve_command(*overrides: str) -> str:
    """The server command ``make serve`` runs: make's recipe (``ermviz serve ...``) run
    with ``--print-command``, which prints the environment and the ``panel serve`` line."""
    out = subprocess.run(
        ["make", "-n", "-W", "pyproject.toml", "serve", *overrides],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = [ln for ln in out.replace("\\\n", " ").splitlines() if "ermviz serve" in ln]
    assert len(lines) == 1, out
    printed = subprocess.run(
        ["bash", "-c", lines[0] + " --print-command"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    served = [ln for ln in printed.splitlines() if "panel serve" in ln]
    assert len(served) == 1, printed
    # make's own environment prefix, then what ermviz serve adds (it sets only what is unset)
    recipe_env = [w for w in lines[0][: lines[0].index("ermviz serve")].split() if "=" in w]
    return " ".join([*recipe_env, *served[0].split()])


def test_make_serve_binds_loopback_and_accepts_this_machine_only():
    cmd = _serve_command()
    assert "--address 127.0.0.1" in cmd
    origins = re.findall(r"--allow-websocket-origin (\S+)", cmd)
    assert sorted(origins) == ["127.0.0.1:5006", "localhost:5006"]
    # A closed page's session (and its memory) is discarded within 1 + 5 s, not 32 s.
    assert "--check-unused-sessions 1000" in cmd and "--unused-session-lifetime 5000" in cmd
    # The allocator settings that give a closed session's memory back (bench_load.py), set
    # in the server's environment.
    env = [word for word in cmd[: cmd.index(" -m panel serve")].split() if "=" in word]
    assert {"PYTHONMALLOC=malloc", "MALLOC_ARENA_MAX=2"} <= set(env), cmd
    classroom = _serve_command("ADDRESS=0.0.0.0", "ORIGINS=10.1.2.3:5006", "PORT=5006")
    assert "--address 0.0.0.0" in classroom
    assert re.findall(r"--allow-websocket-origin (\S+)", classroom) == ["10.1.2.3:5006"]


def test_the_load_benchmark_runs_what_make_serve_runs():
    # benchmarks/bench_load.py reads make serve's recipe; it once looked for a
    # ``panel serve`` line that the recipe no longer has, and could not start a server.
    import sys

    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from bench_load import serve_command
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    env, cmd = serve_command(5123)
    assert cmd[0].endswith("ermviz") and cmd[1] == "serve", cmd
    assert cmd[cmd.index("--port") + 1] == "5123" and "--show" not in cmd
    assert {"PYTHONMALLOC": "malloc", "MALLOC_ARENA_MAX": "2"}.items() <= env.items()


@pytest.fixture(scope="module")
def results_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("serving")
    (tmp / "sweep.toml").write_text(SWEEP)
    cfg = load_config(tmp / "sweep.toml")
    out = tmp / "res"
    for cell in cfg.cells:
        run_cell(cell, str(out), cfg.name)
    (out / "config.toml").write_text(cfg.text)
    return out


def test_an_empty_ermviz_results_turns_folder_access_off(results_folder, monkeypatch):
    from ermviz.app.results_model import OFF_TEXT, ResultsModel
    from ermviz.app.results_view import ResultsView

    notes: list[tuple[str, str]] = []
    monkeypatch.setenv("ERMVIZ_RESULTS", str(results_folder.parent))
    model = ResultsModel(notifier=lambda level, msg: notes.append((level, msg)))
    assert model.found == [str(results_folder)]
    assert model.open(results_folder) and len(model.summaries) == 1

    monkeypatch.setenv("ERMVIZ_RESULTS", "")
    model = ResultsModel(notifier=lambda level, msg: notes.append((level, msg)))
    view = ResultsView(model)
    assert model.found == [] and model.roots == []
    assert model.status == OFF_TEXT
    assert not model.open(results_folder)
    assert notes[-1] == ("error", OFF_TEXT) and len(model.summaries) == 0
    assert view.path_input.disabled and view.open_button.disabled and view.found_select.disabled

    monkeypatch.delenv("ERMVIZ_RESULTS")  # unset: the defaults again
    model = ResultsModel(notifier=lambda level, msg: None)
    assert model.open(results_folder)


def test_per_session_limits_hold():
    from ermviz.app.datasets import MAX_UPLOAD_BYTES
    from ermviz.app.model import MAX_RUNS, DashboardModel

    notes: list[tuple[str, str]] = []
    m = DashboardModel(notifier=lambda level, msg: notes.append((level, msg)))
    while len(m.specs) < MAX_RUNS:
        assert m.add_run() is not None
    assert m.add_run() is None and len(m.specs) == MAX_RUNS
    assert f"at most {MAX_RUNS} runs" in notes[-1][1]
    # An upload above the limit is refused before anything is stored or parsed.
    big = b"+1 1:1\n" * (MAX_UPLOAD_BYTES // 7 + 1)
    assert m.add_upload("big.svm", big) is None
    assert "MB" in notes[-1][1] and m.dataset != "upload:big.svm"
    bounds = m.param.repeat.bounds
    assert bounds is not None and bounds[1] is not None and bounds[1] <= 100
