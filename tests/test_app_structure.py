"""How ``ermviz.app`` is put together (issue 46): the dashboard composes its views without
forwarding their widgets, every view is a Panel Viewer that owns its widgets, and the
package states its public names."""

from __future__ import annotations

import panel as pn

import ermviz.app
from ermviz.app.views.page import Dashboard

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
