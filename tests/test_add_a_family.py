"""The add-a-family recipe of docs/ARCHITECTURE.md, followed for a demo family.

``tests/demo_family`` is a tiny family (projected gradient for least squares on a box)
written by the recipe: its kernel module, its family module and this test; it is named in
the registry through ``ERMVIZ_FAMILIES`` (the one line a family kept outside ermviz adds).
The CLI, sweeps and dashboard are not edited for it, and must still run it; its results are
checked against scipy's bounded least squares (``scipy.optimize.lsq_linear``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import lsq_linear

from ermviz.data import load_dataset

TESTS = Path(__file__).resolve().parent
LO, HI = -20.0, 20.0


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["ERMVIZ_FAMILIES"] = "demo_family"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), env.get("PYTHONPATH", "")]))
    return env


def _ermviz(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ermviz", *argv],
        env=_env(),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _reference_objective() -> float:
    ds = load_dataset("sk-diabetes")
    X, y = np.asarray(ds.X, dtype=float), np.asarray(ds.y, dtype=float)
    n = X.shape[0]
    ref = lsq_linear(X / np.sqrt(n), y / np.sqrt(n), bounds=(LO, HI), tol=1e-12, method="bvls")
    return float(ref.cost)  # 0.5 ||A w - b||^2 = ||X w - y||^2 / (2 n)


@pytest.mark.slow
def test_the_demo_family_runs_from_the_cli_and_matches_scipy(tmp_path):
    listed = _ermviz("methods", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert [ln.split()[0] for ln in listed.stdout.splitlines() if ln.startswith("  pgd ")] == [
        "pgd"
    ]
    assert "  box-lsq " in listed.stdout and "  inverse-lipschitz " in listed.stdout

    tol = 1e-9
    out = _ermviz(
        "run", "--dataset", "sk-diabetes", "--problem", "box-lsq", "--set", f"lo={LO}",
        "--set", f"hi={HI}", "--method", "pgd", "--tol", str(tol), "--max-time", "60",
        "--out", str(tmp_path / "trace.parquet"), "--no-progress",
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["method"] == "pgd" and summary["status"] == "converged"
    ref = _reference_objective()
    # The FW gap bounds f(w) - f*, so the objective is within tol above scipy's optimum.
    assert ref - 1e-9 * max(1.0, ref) <= summary["objective"] <= ref + tol + 1e-9 * ref
    import pandas as pd

    frame = pd.read_parquet(tmp_path / "trace.parquet")
    assert set(frame["step_type"].astype(str)) <= {"projected", "none"}
    assert (frame["certificate"].iloc[-1] <= tol) and frame["iteration"].is_monotonic_increasing


def test_the_demo_family_reaches_the_dashboard_and_the_sweep_engine(tmp_path):
    config = tmp_path / "demo.toml"
    config.write_text(
        'name = "demo"\n[[grid]]\ndatasets = ["sk-diabetes"]\nproblems = ["box-lsq"]\n'
        f'methods = ["pgd"]\nsteps = ["inverse-lipschitz"]\nsettings = {{ lo = {LO}, hi = {HI} }}\n'
        "budget = { tol = 1e-8, max_time = 30 }\n"
    )
    script = f"""
import json
from ermviz.app.state.model import DashboardModel
from ermviz.sweep import load_config

m = DashboardModel(dataset="sk-diabetes", problem="box-lsq")
cfg = load_config({str(config)!r})
print(json.dumps({{
    "methods": m.methods_for_problem(),
    "race": [(s.method, s.step) for s in m.specs],
    "cells": [(c.problem, c.method, c.step) for c in cfg.cells],
}}))
"""
    out = subprocess.run(
        [sys.executable, "-c", script], env=_env(), cwd=tmp_path, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["methods"] == ["pgd"]
    assert seen["race"] == [["pgd", "inverse-lipschitz"]]
    assert seen["cells"] == [["box-lsq", "pgd", "inverse-lipschitz"]]


def test_a_misspelled_extra_family_is_one_clear_error(tmp_path):
    env = _env()
    env["ERMVIZ_FAMILIES"] = "demo_familly"
    out = subprocess.run(
        [sys.executable, "-m", "ermviz", "methods"], env=env, cwd=tmp_path,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode != 0
    assert "ERMVIZ_FAMILIES names 'demo_familly'" in out.stderr


@pytest.mark.parametrize("name", ["tufw-sbd-sqrtk", "fw-ada"])
def test_aliases_are_not_listed_as_methods(name):
    from ermviz.registry import ALIASES, METHODS

    assert name in ALIASES and name not in METHODS


def test_a_family_that_reuses_a_name_is_refused_whole(monkeypatch):
    import types

    from ermviz import registry
    from ermviz.errors import SettingError

    clash = types.ModuleType("clash_family")
    clash.PROBLEMS = {"clash-problem": registry.PROBLEMS["svm-dual"]}
    clash.METHODS = {"fw": registry.METHODS["pfw"]}  # another family's name
    monkeypatch.setitem(sys.modules, "clash_family", clash)
    before = {k: dict(t) for k, t in (("p", registry.PROBLEMS), ("m", registry.METHODS))}
    with pytest.raises(SettingError, match="method 'fw' is already registered"):
        registry.register_family("clash_family")
    assert dict(registry.PROBLEMS) == before["p"] and dict(registry.METHODS) == before["m"]
    alias = types.ModuleType("alias_family")
    alias.ALIASES = {"pfw": registry.ALIASES["fw-ada"]}
    monkeypatch.setitem(sys.modules, "alias_family", alias)
    with pytest.raises(SettingError, match="alias 'pfw' is also a listed name"):
        registry.register_family("alias_family")
    assert "pfw" not in registry.ALIASES
