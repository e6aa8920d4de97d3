"""Every notebook in ``notebooks/`` runs top to bottom, headless and offline."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds no notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The kernel inherits the environment: no download, ever.
    monkeypatch.setenv("ERMVIZ_OFFLINE", "1")
    nb = nbformat.read(path, as_version=4)
    # "python3" is ipykernel's own kernel: jupyter_client starts it with this interpreter.
    client = nbclient.NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(REPO)}},
    )
    client.execute()
    errors = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]
    assert not errors
    # Nor a warning: Python's warnings (and any other complaint) land on stderr.
    warnings = [
        (i, out.get("text", "")[:300])
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "stream" and out.get("name") == "stderr"
    ]
    assert not warnings, warnings
    # Every code cell ran and the last ones displayed something (plots, the dashboard).
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.get("execution_count") for c in code)
    assert sum(1 for c in code if c.get("outputs")) >= len(code) - 2
    assert os.environ.get("ERMVIZ_OFFLINE") == "1"
