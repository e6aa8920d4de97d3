"""Result files get the permissions the user's umask gives, like any file the user writes.

Issue 42: the atomic writes renamed ``mkstemp``'s 0600 file over the result, so on a
shared server or results folder other accounts (Dask workers, colleagues) could not read
``--out``, sweep results, reports or exported PNGs.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from ermviz.cli import main


@pytest.fixture(params=[0o022, 0o027], ids=["umask022", "umask027"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_cli_out_honours_the_umask(tmp_path: Path, umask: int, suffix: str, capsys) -> None:
    out = tmp_path / f"t{suffix}"
    code = main(
        ["run", "--dataset", "toy-2d", "--problem", "svm-dual", "--method", "pfw",
         "--max-iter", "20", "--out", str(out), "--no-progress"]
    )  # fmt: skip
    capsys.readouterr()
    assert code == 0
    assert _mode(out) == 0o666 & ~umask
    # The write left no temporary file behind.
    assert [p.name for p in tmp_path.iterdir()] == [out.name]


def test_sweep_cells_and_report_honour_the_umask(tmp_path: Path, umask: int) -> None:
    from ermviz.report import write_report
    from ermviz.sweep import Cell, run_cell

    out = tmp_path / "res"
    for method in ("fw", "pfw"):
        cell = Cell(
            dataset="toy-2d",
            problem="svm-dual",
            method=method,
            step="exact",
            budget=(("tol", 1e-6), ("max_iter", 200)),
        )
        run_cell(cell, str(out), "modes")
    files = sorted(p for p in out.rglob("*") if p.is_file())
    assert {p.parent.name for p in files} == {"traces", "summaries"}
    rep = write_report(out, eps=[1e-2, 1e-4], fmt="md", on_skip=lambda message: None)
    files += list(rep["files"].values())
    wanted = 0o666 & ~umask
    assert {str(p.relative_to(tmp_path)): oct(_mode(p)) for p in files} == {
        str(p.relative_to(tmp_path)): oct(wanted) for p in files
    }
    frame = pd.concat(pd.read_parquet(p) for p in (out / "summaries").iterdir())
    assert set(frame["status"]) <= {"converged", "max_iter"}


def test_png_export_file_honours_the_umask(tmp_path: Path, umask: int) -> None:
    from ermviz.app.plots.png import write_atomically

    path = write_atomically(tmp_path / "fig.png", b"\x89PNG\r\n\x1a\n")
    assert _mode(path) == 0o666 & ~umask
    assert path.read_bytes() == b"\x89PNG\r\n\x1a\n"
