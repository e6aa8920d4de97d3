"""How ``ermviz.app`` is put together (issue 46): the dashboard composes its views without
forwarding their widgets, every view is a Panel Viewer that owns its widgets, and the
package states its public names."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import panel as pn

import ermviz.app
from ermviz.app.views.page import Dashboard

ROOT = Path(__file__).resolve().parent.parent

#: Widgets and plots the dashboard used to forward from its views (issue 46: twenty, and a
#: docstring naming a ``FORWARDED`` that did not exist).
ONCE_FORWARDED = (
    "dataset_select",
    "problem_select",
    "_problem_widgets",
    "runs_column",
    "upload",
    "tol_input",
    "trace_plots",
    "figures",
    "table",
    "reference_note",
    "keep_button",
    "clear_refs_button",
    "teaching_plot",
    "boundary_plot",
    "csv_download",
    "parquet_download",
    "html_download",
    "png_download",
    "export_html",
    "export_png",
)


def test_the_dashboard_forwards_no_view_attribute():
    assert [name for name in ONCE_FORWARDED if hasattr(Dashboard, name)] == []
    assert "FORWARDED" not in (Dashboard.__doc__ or "")


def test_each_view_is_a_viewer_that_owns_what_the_dashboard_once_forwarded():
    dash = Dashboard()
    views = {
        "controls_view": dash.controls_view,
        "race_view": dash.race_view,
        "teaching_view": dash.teaching_view.build(),
        "export_view": dash.export_view,
        "lessons_view": dash.lessons_view,
        "lesson_banner": dash.lesson_banner,
        "sweep_results": dash.sweep_results,
    }
    assert {k: v for k, v in views.items() if not isinstance(v, pn.viewable.Viewer)} == {}
    dash.race_view.build()
    owned = {name for name in ONCE_FORWARDED for v in views.values() if name in dir(v)} | {
        "_problem_widgets"
    }
    assert owned == set(ONCE_FORWARDED)
    assert dash.controls_view.problem_widgets  # public now: the problem's setting widgets
    results = dash.sweep_results
    assert pn.Column(results).objects == [results.layout]


def test_the_public_names_of_ermviz_app_resolve_and_are_stated():
    doc = ermviz.app.__doc__ or ""
    for name in ermviz.app.__all__:
        assert getattr(ermviz.app, name) is not None
        assert name in doc, f"{name} is in ermviz.app.__all__ but not in its docstring"


def test_every_old_module_path_still_imports_as_its_new_module():
    """The modules moved into subpackages keep their old import paths: each old path
    warns (DeprecationWarning, naming the new one) and is the new module itself, however
    it is imported. Run in a fresh interpreter: the warning is raised on first import."""
    code = (
        "import importlib, sys, warnings\n"
        "from ermviz.app._moved import MOVED\n"
        "bad = []\n"
        "for old, new in sorted(MOVED.items()):\n"
        "    with warnings.catch_warnings(record=True) as seen:\n"
        "        warnings.simplefilter('always')\n"
        "        got = importlib.import_module('ermviz.app.' + old)\n"
        "    module = importlib.import_module('ermviz.app.' + new)\n"
        "    said = [str(w.message) for w in seen if w.category is DeprecationWarning]\n"
        "    if got is not module or not any('ermviz.app.' + new in s for s in said):\n"
        "        bad.append((old, got.__name__, said))\n"
        "    exec(f'from ermviz.app import {old} as again')\n"
        "    if again is not module:\n"
        "        bad.append((old, 'from-import', again.__name__))\n"
        "from ermviz.app.figures import TracePlots\n"
        "from ermviz.app.model import DashboardModel\n"
        "from ermviz.app.teaching_plot import TeachingPlot\n"
        "assert TracePlots.__module__ == 'ermviz.app.plots.figures'\n"
        "assert DashboardModel is importlib.import_module('ermviz.app').DashboardModel\n"
        "print(bad)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_the_old_module_files_are_exactly_the_aliases():
    """Every module left directly in ermviz/app/ (but the package's own, compat and the
    alias machinery) is an alias listed in ``MOVED``, and every listed one has its file;
    a file path the old docs name (``--auth-module ermviz/app/login.py``) loaded under
    another name holds the new module's names."""
    import runpy

    from ermviz.app._moved import MOVED

    own = {"__init__", "compat", "_moved"}
    files = {p.stem for p in (ROOT / "ermviz" / "app").glob("*.py")} - own
    assert files == set(MOVED)
    for old in MOVED:
        text = (ROOT / "ermviz" / "app" / f"{old}.py").read_text()
        assert "alias(globals())" in text and f":mod:`ermviz.app.{MOVED[old]}`" in text
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        names = runpy.run_path(str(ROOT / "ermviz" / "app" / "login.py"), run_name="bokeh_auth")
    from ermviz.app.serving import login

    assert names["get_user"] is login.get_user and names["login_url"] == login.login_url
