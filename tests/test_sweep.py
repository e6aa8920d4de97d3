"""Sweeps on a Dask LocalCluster: stored rows vs single CLI runs, a worker killed mid-sweep,
an interrupted sweep resumed, and the report's numbers vs the traces."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ermviz.cli import main
from ermviz.report import write_report
from ermviz.sweep import load_config, load_summaries, load_traces, sweep

distributed = pytest.importorskip("dask.distributed")

GRID = """
name = "{name}"
[[grid]]
datasets = ["toy-2d", "blobs"]
problems = ["logreg-l1"]
methods = ["fw", "afw", "pfw"]
steps = {steps}
settings = {{ radius = [2.0] }}
budget = {{ tol = {tol}, max_iter = {max_iter}, max_time = {max_time} }}
[report]
eps = [1e-2, 1e-4, 1e-6]
baselines = ["fw-armijo", "fw-exact"]
chosen = ["pfw-exact", "afw-exact"]
"""


def _config(
    tmp_path: Path, name: str, tol="1e-6", max_iter=5000, max_time=10.0, steps='["armijo", "exact"]'
) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(
        GRID.format(name=name, tol=tol, max_iter=max_iter, max_time=max_time, steps=steps)
    )
    return path


# Open-loop steps never converge or stall, so these cells run their full time budget.
SLOW = dict(tol="1e-300", max_iter=10**9, steps='["diminishing", "nonconvex"]')


@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def finished_sweep(client, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sweep")
    cfg = _config(tmp, "grid")
    out = tmp / "res"
    summ = sweep(cfg, out, client=client, progress=False)
    return cfg, out, summ


@pytest.mark.slow
def test_sweep_rows_match_single_cli_runs(finished_sweep, tmp_path, capsys):
    cfg, out, summ = finished_sweep
    assert len(summ) == 12 and set(summ["status"]) == {"converged"}
    traces = load_traces(out)
    for cell in load_config(cfg).cells:
        csv = tmp_path / f"{cell.cell_id}.csv"
        code = main(
            [
                "run",
                "--dataset",
                cell.dataset,
                "--problem",
                cell.problem,
                "--method",
                cell.method,
                "--step",
                cell.step,
                "--radius",
                "2",
                "--tol",
                "1e-6",
                "--max-iter",
                "5000",
                "--max-time",
                "10",
                "--out",
                str(csv),
                "--no-progress",
            ]
        )
        capsys.readouterr()
        assert code == 0
        single = pd.read_csv(csv)
        stored = traces[traces["cell_id"] == cell.cell_id]
        # Deterministic kernels: the same iterates, objectives and certificates.
        np.testing.assert_array_equal(stored["iteration"].to_numpy(), single["iteration"])
        np.testing.assert_allclose(stored["objective"], single["objective"], rtol=1e-12)
        np.testing.assert_allclose(
            stored["certificate"], single["certificate"], rtol=1e-9, atol=1e-15
        )
        assert list(stored["step_type"].astype(str)) == list(single["step_type"])
        row = summ[summ["cell_id"] == cell.cell_id].iloc[0]
        assert row["iterations"] == single["iteration"].iloc[-1]
        assert json.loads(row["machine"])["cpu_count"] == os.cpu_count()
        assert "numba" in json.loads(row["versions"])


@pytest.mark.slow
def test_rerun_skips_finished_cells(finished_sweep, client):
    cfg, out, _ = finished_sweep
    before = {p.name: p.stat().st_mtime_ns for p in (out / "summaries").iterdir()}
    summ = sweep(cfg, out, client=client, progress=False)
    after = {p.name: p.stat().st_mtime_ns for p in (out / "summaries").iterdir()}
    assert before == after and len(summ) == 12


@pytest.mark.slow
def test_report_numbers_match_the_traces(finished_sweep):
    _, out, summ = finished_sweep
    result = write_report(
        out, (1e-2, 1e-4, 1e-6), "md", ["fw-armijo", "fw-exact"], ["pfw-exact", "afw-exact"]
    )
    table = result["table"]
    traces = load_traces(out)
    for _, s in summ.iterrows():
        t = traces[traces["cell_id"] == s["cell_id"]]
        for eps in (1e-2, 1e-4, 1e-6):
            first = t.loc[t["certificate"] <= eps, "time_s"].iloc[0]
            inst = f"{s['dataset']} logreg-l1 radius=2"
            assert table.loc[(inst, eps), s["label"]] == pytest.approx(first)
    for key in table.index:
        base = min(table.loc[key, "fw-armijo"], table.loc[key, "fw-exact"])
        best = min(table.loc[key, "pfw-exact"], table.loc[key, "afw-exact"])
        assert float(table.loc[key, "speed-up"]) == pytest.approx(base / best, rel=1e-2)
    names = {p.name for p in result["files"].values()}
    assert {
        "table.md",
        "profile.png",
        "profile.html",
        "curves_blobs.png",
        "curves_toy-2d.html",
    } <= names
    assert all(p.stat().st_size > 0 for p in result["files"].values())
    assert "| instance | eps |" in result["text"]


@pytest.mark.slow
def test_a_killed_worker_loses_no_cell(client, tmp_path):
    # Cells that run ~0.4 s each, so a worker dies while it holds one.
    cfg = _config(tmp_path, "kill", max_time=0.4, **SLOW)
    out = tmp_path / "res"
    result: dict[str, object] = {}
    th = threading.Thread(
        target=lambda: result.update(summ=sweep(cfg, out, client=client, progress=False))
    )
    th.start()
    deadline = time.time() + 60
    while not list((out / "summaries").glob("*.parquet")) and time.time() < deadline:
        time.sleep(0.05)
    victim = next(iter(client.scheduler_info()["workers"]))
    try:
        client.run(os._exit, 1, workers=[victim])
    except Exception:  # the worker died before it could answer, as intended
        pass
    th.join(180)
    assert not th.is_alive()
    summ = result["summ"]
    assert len(summ) == 12 and summ["cell_id"].is_unique
    assert "error" not in set(summ["status"]) and "max_time" in set(summ["status"])
    traces = load_traces(out)
    assert not traces.duplicated(["cell_id", "seq"]).any()
    for _, t in traces.groupby("cell_id"):
        # Nothing lost: each stored trace is complete, from its first row to its final row.
        assert t["seq"].iloc[0] == 0 and (np.diff(t["seq"]) > 0).all()
        assert t["step_type"].astype(str).iloc[-1] == "none"
    assert set(traces["cell_id"]) == set(summ["cell_id"])


@pytest.mark.slow
def test_interrupted_sweep_resumes(tmp_path):
    cfg = _config(tmp_path, "resume", max_time=0.5, **SLOW)
    out = tmp_path / "res"
    cmd = [
        sys.executable,
        "-m",
        "ermviz",
        "sweep",
        str(cfg),
        "--out",
        str(out),
        "--workers",
        "2",
        "--no-progress",
    ]
    proc = subprocess.Popen(
        cmd, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.time() + 90
    while time.time() < deadline:
        if len(list((out / "summaries").glob("*.parquet"))) >= 3:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the whole sweep, scheduler and workers
    proc.wait(30)
    done = {p.name: p.stat().st_mtime_ns for p in (out / "summaries").glob("*.parquet")}
    assert 3 <= len(done) < 12
    # what a kill in the middle of write_frame_atomic leaves (the kill above may or may not)
    pending = [c.cell_id for c in load_config(cfg).cells if f"{c.cell_id}.parquet" not in done]
    (out / "summaries" / f".{pending[0]}.parquet.x1y2z3").write_bytes(b"PAR1 half")
    rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(rerun.stdout.strip().splitlines()[-1])["cells"] == 12
    after = {p.name: p.stat().st_mtime_ns for p in (out / "summaries").glob("*.parquet")}
    assert all(after[name] == mtime for name, mtime in done.items())  # skipped, not redone
    summ = load_summaries(out)
    assert len(summ) == 12 and summ["cell_id"].is_unique
    traces = load_traces(out)
    assert not traces.duplicated(["cell_id", "seq"]).any()
    assert not list((out / "summaries").glob(".*"))  # no temporary files left as results
    assert not list((out / "traces").glob(".*"))


@pytest.mark.slow
def test_failed_cell_is_recorded_and_the_sweep_goes_on(client, tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(
        'name = "bad"\n[[grid]]\ndatasets = ["toy-2d", "sk-diabetes"]\n'
        'problems = ["logreg-l1"]\nmethods = ["pfw"]\nsteps = ["exact"]\n'
        "budget = { tol = 1e-6, max_time = 5 }\n"
    )
    summ = sweep(cfg, tmp_path / "res", client=client, progress=False)
    by_ds = summ.set_index("dataset")
    assert by_ds.loc["toy-2d", "status"] == "converged"
    assert by_ds.loc["sk-diabetes", "status"] == "error"
    assert "binary" in by_ds.loc["sk-diabetes", "message"]


def test_config_errors_are_one_line(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[[grid]]\ndatasets = ["toy-2d"]\nproblems = ["logreg-l1"]\n'
        'methods = ["fw"]\nsteps = ["exact"]\nsettings = { radius = [-1.0] }\n'
    )
    code = main(["sweep", str(cfg), "--out", str(tmp_path / "o"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "radius=-1 is out of range" in err and len(err.splitlines()) == 1
