"""The package as shipped (issue 34): what the wheel holds, where the product finds its
bundled data, and the ``ermviz serve`` command line.

Building and installing the wheel in a fresh virtual environment is
``tests/wheel_check.py``, which ``.ci/run`` runs once after the suite (a few minutes: not
repeated here).
"""

from __future__ import annotations

import fnmatch
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from setuptools import find_packages

import ermviz
from ermviz import serve as serving
from ermviz.cli import main
from ermviz.data import sources

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def test_the_wheel_lists_every_package():
    """The explicit package list (needed to map datasets/ into the package) holds every
    package setuptools finds, and the bundled data's two."""
    found = set(find_packages(str(REPO), include=["ermviz*", "solvers*"]))
    assert found, "setuptools found no package"
    assert set(SETUPTOOLS["packages"]) == found | {"ermviz._bundled", "ermviz._bundled.sweeps"}
    assert SETUPTOOLS["package-dir"] == {"ermviz._bundled": "datasets"}


def test_package_data_covers_every_bundled_file():
    data = REPO / "datasets"
    patterns = SETUPTOOLS["package-data"]
    files = [p.relative_to(data) for p in data.rglob("*") if p.is_file()]
    assert {"catalog.toml", "README.md", "a1a.bz2", "sweeps/small.toml"} <= {str(f) for f in files}
    for rel in files:
        package = ".".join(["ermviz._bundled", *rel.parts[:-1]])
        assert any(fnmatch.fnmatch(rel.name, pat) for pat in patterns.get(package, [])), rel


def test_project_metadata_is_complete():
    project = PYPROJECT["project"]
    assert project["license"] == "BSD-3-Clause"
    assert project["readme"] == "README.md"
    assert project["requires-python"] == ">=3.11"
    assert f"{sys.version_info.major}.{sys.version_info.minor}" in " ".join(project["classifiers"])
    assert project["scripts"] == {"ermviz": "ermviz.cli:main"}


def test_a_checkout_reads_the_repository_datasets_folder():
    assert sources.REPO_DATASETS == REPO / "datasets"
    assert sources.CATALOG_PATH == REPO / "datasets" / "catalog.toml"
    assert sources.PACKAGE_DATASETS == Path(ermviz.__file__).resolve().parent / "_bundled"


def test_an_install_reads_the_package_copy(monkeypatch, tmp_path):
    """Without a checkout's datasets/ (installed from the wheel), the bundled copy."""
    monkeypatch.setattr(sources, "CHECKOUT_DATASETS", tmp_path / "datasets")
    assert sources._bundled_folder() == sources.PACKAGE_DATASETS
    (tmp_path / "datasets").mkdir()  # a folder named datasets is not enough (HF datasets)
    assert sources._bundled_folder() == sources.PACKAGE_DATASETS
    (tmp_path / "datasets" / "catalog.toml").write_text("")
    assert sources._bundled_folder() == tmp_path / "datasets"


def _printed(capsys, *args: str) -> tuple[dict[str, str], list[str]]:
    assert main(["serve", "--print-command", *args]) == 0
    words = shlex.split(capsys.readouterr().out.strip())
    env = {}
    while "=" in words[0] and not words[0].startswith("/"):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    return env, words


def test_serve_defaults_are_make_serves(capsys, monkeypatch):
    for key in ("PYTHONMALLOC", "MALLOC_ARENA_MAX", "ERMVIZ_SOLVER_THREADS"):
        monkeypatch.delenv(key, raising=False)
    env, argv = _printed(capsys)
    assert env == {"PYTHONMALLOC": "malloc", "MALLOC_ARENA_MAX": "2"}
    app = REPO / "ermviz" / "app" / "served" / "app.py"
    assert argv[:5] == [sys.executable, "-m", "panel", "serve", str(app)]
    assert app.name == "app.py"  # the page's address is /app
    flags = " ".join(argv[5:])
    assert flags == (
        "--address 127.0.0.1 --port 5006 --allow-websocket-origin localhost:5006 "
        "--allow-websocket-origin 127.0.0.1:5006 "
        f"--setup {REPO / 'ermviz' / 'app' / 'serving' / 'warmup.py'} "
        "--check-unused-sessions 1000 --unused-session-lifetime 5000 --show"
    )


def test_serve_options(capsys, monkeypatch):
    monkeypatch.setenv("PYTHONMALLOC", "pymalloc")  # a value already set is kept
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    env, argv = _printed(
        capsys,
        *("--address", "0.0.0.0", "--port", "6001", "--threads", "3", "--no-show"),
        *("--allow-websocket-origin", "pc.local:6001", "--allow-websocket-origin", "10.0.0.2:6001"),
        *("--procs", "1", "--no-password"),  # (beyond loopback: test_serving.py has the rest)
    )
    assert env == {
        "MALLOC_ARENA_MAX": "2",
        "ERMVIZ_SOLVER_THREADS": "3",
        "NUMBA_NUM_THREADS": "3",
        "ERMVIZ_RESULTS_ACCESS": "off",
    }
    flags = " ".join(argv[5:])
    assert "--address 0.0.0.0 --port 6001 " in flags
    assert flags.count("--allow-websocket-origin") == 2
    assert "pc.local:6001" in flags and "10.0.0.2:6001" in flags and "localhost" not in flags
    assert "--show" not in argv
    # A named host is accepted as an origin by default.
    assert serving.default_origins("teacher.local", 80) == [
        "localhost:80",
        "127.0.0.1:80",
        "teacher.local:80",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--port", "70000"], "--port 70000: a port is 0-65535"),
        (["--threads", "-1"], "--threads -1: give 1 or more"),
        (["--port", "x"], "'x' is not an integer"),
    ],
)
def test_serve_bad_settings_are_one_line(args, message, capsys):
    try:
        status = main(["serve", "--print-command", *args])
    except SystemExit as exc:  # argparse's own errors
        status = exc.code
    assert status == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_python_m_ermviz_serve_does_not_import_panel():
    code = (
        "import sys, runpy; sys.argv = ['ermviz', 'serve', '--print-command', '--no-show'];"
        "from ermviz.cli import main; main(sys.argv[1:]);"
        "assert 'panel' not in sys.modules and 'bokeh' not in sys.modules, 'imported'"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout
    assert "-m panel serve" in out
    proc = subprocess.run(
        [sys.executable, "-m", "ermviz", "serve", "--print-command"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONMALLOC": "malloc", "MALLOC_ARENA_MAX": "2"},
    )
    assert proc.returncode == 0 and proc.stdout.startswith(sys.executable), proc.stderr
