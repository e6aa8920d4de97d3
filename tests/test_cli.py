"""The command line: JSON summary, trace export, listings, and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ermviz.cli import main

REPO = Path(__file__).resolve().parent.parent
SUMMARY_KEYS = {
    "dataset",
    "problem",
    "method",
    "step",
    "status",
    "iterations",
    "time_s",
    "objective",
    "gap",
}


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_run_prints_json_summary_last_and_writes_traces(capsys, tmp_path):
    csv = tmp_path / "trace.csv"
    code, out, err = _run(
        capsys,
        "run",
        "--dataset",
        "toy-2d",
        "--problem",
        "logreg-l1",
        "--method",
        "pfw",
        "--step",
        "exact",
        "--radius",
        "2",
        "--tol",
        "1e-9",
        "--out",
        str(csv),
        "--no-progress",
    )
    assert code == 0, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert SUMMARY_KEYS <= set(summary)
    assert summary["status"] == "converged" and summary["gap"] <= 1e-9
    frame = pd.read_csv(csv)
    assert frame["iteration"].iloc[-1] == summary["iterations"]
    assert frame["certificate"].iloc[-1] == pytest.approx(summary["gap"])
    assert set(frame["step_type"]) <= {"fw", "away", "pairwise", "drop", "none"}
    pq = tmp_path / "trace.parquet"
    code, out, _ = _run(
        capsys,
        "run",
        "--dataset",
        "toy-2d",
        "--problem",
        "logreg-l1",
        "--method",
        "fw",
        "--step",
        "armijo",
        "--max-iter",
        "50",
        "--tol",
        "1e-12",
        "--out",
        str(pq),
        "--no-progress",
    )
    assert code == 0
    back = pd.read_parquet(pq)
    assert len(back) == 51 and back["iteration"].iloc[-1] == 50
    assert json.loads(out.splitlines()[-1])["status"] == "max_iter"
    # Atomic write: no temporary files left behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace.csv", "trace.parquet"]


def test_set_passes_declared_settings_and_rejects_others(capsys):
    code, _, err = _run(
        capsys,
        "run",
        "--dataset",
        "toy-2d",
        "--problem",
        "logreg-l1",
        "--method",
        "fw",
        "--step",
        "armijo",
        "--set",
        "armijo_c=0.2",
        "--set",
        "radius=1.5",
        "--max-iter",
        "10",
        "--no-progress",
    )
    assert code == 0, err
    code, _, err = _run(
        capsys,
        "run",
        "--dataset",
        "toy-2d",
        "--problem",
        "logreg-l1",
        "--method",
        "fw",
        "--step",
        "armijo",
        "--set",
        "armijo_c=2",
    )
    assert code == 2 and "armijo_c=2 is out of range" in err and "(0, 1)" in err
    code, _, err = _run(
        capsys,
        "run",
        "--dataset",
        "toy-2d",
        "--problem",
        "logreg-l1",
        "--method",
        "fw",
        "--set",
        "colour=blue",
    )
    assert code == 2 and "unknown setting 'colour'" in err and "radius" in err


def _bad_file(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


BAD = {
    "missing dataset": (
        ["--dataset", "no-such-set", "--problem", "svm-dual", "--method", "fw"],
        "unknown dataset 'no-such-set'",
    ),
    "radius <= 0": (
        ["--dataset", "toy-2d", "--problem", "logreg-l1", "--method", "fw", "--radius", "0"],
        "radius=0 is out of range; allowed range [1e-150, 1e+150]",
    ),
    "C <= 0": (
        ["--dataset", "toy-2d", "--problem", "svm-dual", "--method", "fw", "--C", "-1"],
        "C=-1 is out of range; allowed range (0, inf)",
    ),
    "unknown method": (
        ["--dataset", "toy-2d", "--problem", "svm-dual", "--method", "sgd"],
        "unknown method 'sgd'; choose one of: fw, afw, pfw",
    ),
    "unknown step": (
        ["--dataset", "toy-2d", "--problem", "svm-dual", "--method", "fw", "--step", "wolfe"],
        "unknown step rule 'wolfe'",
    ),
    "unknown problem": (
        ["--dataset", "toy-2d", "--problem", "lasso", "--method", "fw"],
        "unknown problem 'lasso'",
    ),
    "max-time <= 0": (
        ["--dataset", "toy-2d", "--problem", "svm-dual", "--method", "fw", "--max-time", "0"],
        "max-time=0.0 is out of range; allowed range (0, inf) seconds",
    ),
    "tol <= 0": (
        ["--dataset", "toy-2d", "--problem", "svm-dual", "--method", "fw", "--tol", "-1"],
        "tol=-1.0 is out of range",
    ),
    "bad out suffix": (
        ["--dataset", "toy-2d", "--problem", "svm-dual", "--method", "fw", "--out", "t.xlsx"],
        "must end in .csv or .parquet",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_arguments_exit_2_with_one_line(capsys, case):
    argv, expected = BAD[case]
    code, out, err = _run(capsys, "run", *argv, "--no-progress")
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ermviz: error: ")
    assert expected in lines[0]


@pytest.mark.parametrize(
    "case,text,expected",
    [
        ("malformed", "+1 1:0.5 2:1\n-1 1:0.1 2:0.3\n+1 1:0.2 two:7\n", "line 3"),
        ("nan", "+1 1:0.5 2:1\n-1 1:nan 2:0.3\n+1 1:0.2 2:0.1\n", "line 2"),
        ("inf", "+1 1:0.5 2:1\n-1 1:0.4 2:0.3\n+1 1:inf 2:0.1\n", "line 3"),
        ("single class", "+1 1:0.5 2:1\n+1 1:0.4 2:0.3\n+1 1:0.2 2:0.1\n", "label"),
    ],
)
def test_bad_data_files_exit_2_with_one_line(capsys, tmp_path, case, text, expected):
    path = _bad_file(tmp_path, f"{case.replace(' ', '_')}.svm", text)
    code, out, err = _run(
        capsys, "run", "--dataset", path, "--problem", "svm-dual", "--method", "fw", "--no-progress"
    )
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert expected in lines[0] and Path(path).name in lines[0]
    if case == "single class":
        assert "both classes" in lines[0] or "single" in lines[0] or "only" in lines[0]


def test_regression_data_is_refused_by_classification_problems(capsys):
    code, _, err = _run(
        capsys,
        "run",
        "--dataset",
        "sk-diabetes",
        "--problem",
        "svm-dual",
        "--method",
        "fw",
        "--no-progress",
    )
    assert code == 2 and "binary" in err and len(err.strip().splitlines()) == 1


def test_methods_lists_every_setting_with_range(capsys):
    code, out, _ = _run(capsys, "methods")
    assert code == 0
    for word in (
        "svm-dual",
        "logreg-l1",
        "fw",
        "afw",
        "pfw",
        "diminishing",
        "nonconvex",
        "armijo",
        "exact",
        "short",
        "adaptive",
        "armijo_delta",
        "(0, 1)",
        "radius",
    ):
        assert word in out


@pytest.mark.requires_data("a1a")
def test_datasets_lists_catalog_with_locations(capsys, real_data):
    code, out, _ = _run(capsys, "datasets")
    assert code == 0
    lines = {ln.split()[0]: ln for ln in out.splitlines()[1:] if ln.strip()}
    assert "not found" in lines["w2a"]
    assert "1605" in lines["a1a"] and "123" in lines["a1a"]


@pytest.mark.parametrize("with_data", [True, False])
def test_datasets_lists_the_folders_searched_and_the_variable(
    capsys, monkeypatch, tmp_path, with_data
):
    # Nothing is found here, and the command still says where it looked and how to point
    # it at the files: the ERMVIZ_DATA folders, the cache, the repository's datasets/.
    from ermviz.data.sources import REPO_DATASETS

    data, cache = tmp_path / "data", tmp_path / "cache"
    data.mkdir()
    cache.mkdir()
    monkeypatch.setenv("ERMVIZ_CACHE", str(cache))
    if with_data:
        monkeypatch.setenv("ERMVIZ_DATA", f"{data}{os.pathsep}{tmp_path / 'nope'}")
    else:
        monkeypatch.delenv("ERMVIZ_DATA", raising=False)
    code, out, _ = _run(capsys, "datasets")
    assert code == 0
    table, _, tail = out.partition("\nCatalog files are looked for in these folders, in order")
    # a2a: a LIBSVM file that does not ship in datasets/ (a1a does, for the lessons)
    a2a = [ln for ln in table.splitlines() if ln.split()[:1] == ["a2a"]]
    assert len(a2a) == 1 and "not found" in a2a[0]
    folders = [ln.split()[1] for ln in tail.splitlines() if ln.startswith("  ")]
    expected = [str(data), str(tmp_path / "nope")] if with_data else []
    assert folders == [*expected, str(cache), str(REPO_DATASETS)]
    assert (f"{tmp_path / 'nope'} - from ERMVIZ_DATA; does not exist" in tail) == with_data
    setting = f"is {os.environ['ERMVIZ_DATA']!r}" if with_data else "is not set"
    assert f"ERMVIZ_DATA {setting}: set it to the folder(s) that hold the LIBSVM files" in tail


@pytest.mark.slow
def test_module_entry_point_end_to_end(tmp_path):
    """`python -m ermviz run` in a fresh process: exit 0 and a JSON last line."""
    env = {**os.environ, "ERMVIZ_OFFLINE": "1"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ermviz",
            "run",
            "--dataset",
            "toy-simplex-3",
            "--problem",
            "svm-dual",
            "--method",
            "afw",
            "--step",
            "exact",
            "--tol",
            "1e-10",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["status"] == "converged"
    # The 3-point dual on the triangle: compare with a brute-force grid minimum.
    from ermviz.data import load_dataset
    from ermviz.registry import build_problem

    pb = build_problem("svm-dual", load_dataset("toy-simplex-3"))
    g = np.linspace(0, 1, 801)
    a, b = np.meshgrid(g, g)
    mask = a + b <= 1
    pts = np.stack([a[mask], b[mask], 1 - a[mask] - b[mask]], axis=1)
    vals = [pb.objective(p) for p in pts]
    assert summary["objective"] <= min(vals) + 1e-12
    assert summary["objective"] >= min(vals) - 1e-3


def test_help_names_the_command_as_typed_and_its_examples_parse() -> None:
    """``ermviz --help`` says ``ermviz`` (``python -m ermviz`` when started so), shows no
    reStructuredText markup, and every example it prints is a valid command line."""
    import shlex

    script = Path(sys.executable).with_name("ermviz")
    for argv, prog in (
        ([str(script)], "ermviz"),
        ([sys.executable, "-m", "ermviz"], "python -m ermviz"),
    ):
        out = subprocess.run([*argv, "--help"], capture_output=True, text=True, check=True).stdout
        assert out.startswith(f"usage: {prog} "), out[:80]
        assert "``" not in out and ":func:" not in out and ":class:" not in out
        lines = [line.strip() for line in out.splitlines() if line.startswith(f"  {prog} ")]
        assert len(lines) >= 4, out
        from ermviz.cli import build_parser

        for line in lines:
            command = line.split("  ")[0]  # (two spaces start an example's comment)
            args = shlex.split(command)[len(prog.split()) :]
            build_parser().parse_args(args)  # a bad example exits 2 (SystemExit)
