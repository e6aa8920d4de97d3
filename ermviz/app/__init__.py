"""The ermviz dashboard: a Panel app racing solvers live on one dataset.

State (no widgets):

* :mod:`ermviz.app.state.model` - all session state (configuration and live race);
* :mod:`ermviz.app.state.runspec` - the racing runs' specs and their settings;
* :mod:`ermviz.app.state.race` - the live race's slots, results rows, traces and exports;
* :mod:`ermviz.app.state.datasets` - the datasets offered, their presets, uploaded files;
* :mod:`ermviz.app.state.messages` - one-line messages and notifications;
* :mod:`ermviz.app.state.references` - finished races kept as faded references;
* :mod:`ermviz.app.plots.streaming` - the per-session pull of new trace rows into Bokeh sources;
* :mod:`ermviz.app.state.urlstate` - the configuration in the URL query string;
* :mod:`ermviz.app.results.model` - the Results tab's state: a sweep's results folder
  (table, profiles, curves), never in the URL.

Views:

* :mod:`ermviz.app.views.page` - the page: toolbar, tabs, template, one dashboard per session;
* :mod:`ermviz.app.views.controls` - the sidebar's controls;
* :mod:`ermviz.app.views.race_view`, :mod:`ermviz.app.views.teaching_view`,
  :mod:`ermviz.app.views.export_view`, :mod:`ermviz.app.results.view` - the tabs;
* :mod:`ermviz.app.plots.figures` - the plain Bokeh race figures (live page and HTML export);
  :mod:`ermviz.app.plots.teaching_plot` - the teaching view's drawing (likewise);
* :mod:`ermviz.app.views.widgets` - callback guard and widgets built from declared settings;
* :mod:`ermviz.app.views.upload` - the chunked file drop zone for users' own data.

And :mod:`ermviz.app.serving.warmup` fills numba's on-disk cache before the first click.

And :mod:`ermviz.app.serving.notebook` loads what a notebook needs, offline;
:mod:`ermviz.app.serving.live` fits an estimator in a notebook cell while the dashboard's
plots show it.

Serve it with ``panel serve app.py`` from the repository root; in Jupyter::

    from ermviz.app import Dashboard, notebook_extension
    notebook_extension()
    Dashboard().panel()
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# narwhals is imported here, in the thread that imports the app, before the app starts any thread of
# its own: Bokeh imports narwhals on a page's first DataFrame source (the results table)
# and scikit-learn imports it on the first data load, which the app's threads do (the
# notebook's warm-up, a Start's preparation, a lesson's prebuild). narwhals' modules
# import each other, so two threads importing it for the first time at once can deadlock
# (seen in a test: _DeadlockError in narwhals.stable.v2). 0.05 s, once.
try:
    import narwhals.stable.v2  # noqa: F401
except ImportError:  # older Bokeh and scikit-learn do without it
    pass

from ermviz.app.state.model import DashboardModel, RunSpec, Slot

if TYPE_CHECKING:
    from ermviz.app.serving.live import live_fit
    from ermviz.app.serving.notebook import notebook_extension
    from ermviz.app.views.page import Dashboard

__all__ = [
    "Dashboard",
    "DashboardModel",
    "RunSpec",
    "Slot",
    "build_dashboard",
    "live_fit",
    "notebook_extension",
]


def __getattr__(name: str) -> Any:
    # Panel is imported only when a view is asked for: the model works without it.
    if name in ("Dashboard", "build_dashboard"):
        from ermviz.app.views import page

        return getattr(page, name)
    if name == "live_fit":
        from ermviz.app.serving.live import live_fit

        return live_fit
    if name == "notebook_extension":
        from ermviz.app.serving.notebook import notebook_extension

        return notebook_extension
    raise AttributeError(name)
