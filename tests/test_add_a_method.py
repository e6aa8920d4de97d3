"""The add-a-method recipe of docs/ARCHITECTURE.md, followed for a demo Frank-Wolfe method.

``tests/demo_method`` declares ``mdm`` (Mitchell, Dem'yanov & Malozemov 1974: pairwise FW
on the simplex) by the recipe: one row of kernel facts and one method class, registered
through ``ERMVIZ_FAMILIES``. Nothing else is edited for it: the CLI lists and runs it (its
result checked against cvxpy + Clarabel on the L2-SVM dual), its ``supports`` facts keep
it off the sets it does not declare, and the existing contract test
(``tests/test_method_contract.py``) and kernel-facts test (``tests/test_fw_methods.py``)
cover it unedited: they collect it from the registry.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ermviz.data import load_dataset

cp = pytest.importorskip("cvxpy")

TESTS = Path(__file__).resolve().parent
DATASET = "toy-2d"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["ERMVIZ_FAMILIES"] = "demo_method"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), env.get("PYTHONPATH", "")]))
    return env


def _run(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *argv], env=_env(), cwd=cwd, capture_output=True, text=True,
        timeout=900,
    )  # fmt: skip


def _svm_dual_optimum() -> float:
    """The L2-SVM dual's optimum on DATASET by cvxpy + Clarabel (an independent solver)."""
    from ermviz.registry import build_problem

    pb = build_problem("svm-dual", load_dataset(DATASET))
    X = np.asarray(pb.X.toarray() if hasattr(pb.X, "toarray") else pb.X)
    a = cp.Variable(pb.n)
    obj = cp.sum_squares((X * pb.y[:, None]).T @ a) + pb.inv_c * cp.sum_squares(a)
    prob = cp.Problem(cp.Minimize(obj), [a >= 0, cp.sum(a) == 1])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return float(prob.value)


def test_the_demo_method_runs_from_the_cli_and_matches_cvxpy(tmp_path):
    listed = _run("-m", "ermviz", "methods", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert any(ln.split()[:1] == ["mdm"] for ln in listed.stdout.splitlines()), listed.stdout

    tol = 1e-9
    out = _run(
        "-m", "ermviz", "run", "--dataset", DATASET, "--problem", "svm-dual", "--method",
        "mdm", "--tol", str(tol), "--max-time", "60", "--out", str(tmp_path / "t.parquet"),
        "--no-progress", cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["method"] == "mdm" and summary["status"] == "converged", summary
    ref = _svm_dual_optimum()
    # The FW gap bounds f - f*: the objective lies within tol above cvxpy's optimum.
    assert ref - 1e-8 * ref <= summary["objective"] <= ref + tol + 1e-8 * ref
    import pandas as pd

    tags = set(pd.read_parquet(tmp_path / "t.parquet")["step_type"].astype(str))
    assert tags <= {"pairwise", "drop", "none"}, tags

    # Not on a set it does not declare: one line naming what it solves.
    off = _run(
        "-m", "ermviz", "run", "--dataset", DATASET, "--problem", "logreg-l1", "--method",
        "mdm", "--max-iter", "3", "--no-progress", cwd=tmp_path,
    )  # fmt: skip
    assert off.returncode != 0 and "does not solve problem 'logreg-l1'" in off.stderr


def test_the_contract_and_kernel_facts_tests_cover_the_demo_method_unedited(tmp_path):
    out = _run(
        "-m", "pytest", "-n0", "-q", "-p", "no:cacheprovider", "-k", "mdm",
        str(TESTS / "test_method_contract.py"), str(TESTS / "test_fw_methods.py"),
        cwd=TESTS.parent,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout[-3000:]
    passed = int(out.stdout.strip().splitlines()[-1].split(" passed")[0].split()[-1])
    assert passed >= 5, out.stdout[-2000:]  # the contract, step types, sets, columns
