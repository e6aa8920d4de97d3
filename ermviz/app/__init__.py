"""The ermviz dashboard: a Panel app racing solvers live on one dataset.

Public API (what users may import from here; the subpackages below are the app's inner
structure, and may change):

* :class:`Dashboard` (one session's page; ``Dashboard().panel()`` in Jupyter) and
  :func:`build_dashboard` (one per served session, its configuration in the URL);
* :class:`DashboardModel` (a session's state, no widgets: drive a race headless),
  :class:`RunSpec` (one racing run) and :class:`Slot` (a run of the live race);
* :class:`Streamer` (new trace rows into Bokeh sources), :func:`thin_rows` (the rows the
  live plots draw) and :class:`TeachingPlot` (a toy problem's feasible set and paths),
  for notebooks that draw a race themselves;
* :func:`notebook_extension` (load what a notebook needs, offline) and :func:`live_fit` (an
  estimator fitting in a notebook cell while the dashboard's plots show it).

Layout, one subpackage per job (``docs/ARCHITECTURE.md``, "Layout"):

* :mod:`ermviz.app.state` - the session's state, no widgets: configuration, race
  lifecycle, uploads and exports, run specs, datasets, references, the URL;
* :mod:`ermviz.app.plots` - the figures, plain Bokeh (live page, notebook, HTML export),
  and the streaming of trace rows into them;
* :mod:`ermviz.app.views` - the page's Panel views: the dashboard, sidebar, tabs, toolbar
  status, widgets;
* :mod:`ermviz.app.lessons` - the lessons: data, declaration, claims, loading, their tab;
* :mod:`ermviz.app.results` - the Results tab: a sweep's results folder, model and view;
* :mod:`ermviz.app.serving` - where it runs: the server's warm-up, login page and memory,
  and a Jupyter notebook;
* :mod:`ermviz.app.compat` - every Panel and Bokeh internal relied on, with the versions
  checked (``pyproject.toml`` bounds them);
* :mod:`ermviz.app.served` - the app file ``panel serve`` runs.

The other modules of this folder (``ermviz/app/figures.py``, ``model.py``, ...) are the
old import paths of the modules moved into the subpackages: each is a deprecated alias of
its new home (:mod:`ermviz.app._moved`).

Serve it with ``panel serve app.py`` from the repository root (or ``ermviz serve``); in
Jupyter::

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
    from ermviz.app.plots.streaming import Streamer, thin_rows
    from ermviz.app.plots.teaching_plot import TeachingPlot
    from ermviz.app.serving.live import live_fit
    from ermviz.app.serving.notebook import notebook_extension
    from ermviz.app.views.page import Dashboard, build_dashboard

__all__ = [
    "Dashboard",
    "DashboardModel",
    "RunSpec",
    "Slot",
    "Streamer",
    "TeachingPlot",
    "build_dashboard",
    "live_fit",
    "notebook_extension",
    "thin_rows",
]

#: The public names imported on first use (Panel and Bokeh only when a view is asked
#: for: the model works without them): name -> its module.
_LAZY = {
    "Dashboard": "ermviz.app.views.page",
    "build_dashboard": "ermviz.app.views.page",
    "Streamer": "ermviz.app.plots.streaming",
    "thin_rows": "ermviz.app.plots.streaming",
    "TeachingPlot": "ermviz.app.plots.teaching_plot",
    "live_fit": "ermviz.app.serving.live",
    "notebook_extension": "ermviz.app.serving.notebook",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'ermviz.app' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
