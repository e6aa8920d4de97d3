"""The ermviz dashboard: a Panel app racing solvers live on one dataset.

* :mod:`ermviz.app.model` - all session state (configuration and live race), no widgets;
* :mod:`ermviz.app.streaming` - the per-session pull of new trace rows into Bokeh sources;
* :mod:`ermviz.app.views` - controls, live plots, results, teaching view, export;
* :mod:`ermviz.app.results` - the Results tab: a sweep's results folder (table, profiles,
  curves), never in the URL;
* :mod:`ermviz.app.urlstate` - the configuration in the URL query string;
* :mod:`ermviz.app.upload` - the chunked file drop zone for users' own data;
* :mod:`ermviz.app.warmup` - fills numba's on-disk cache before the first click.

Serve it with ``panel serve app.py`` from the repository root; in Jupyter::

    import panel as pn
    from ermviz.app import Dashboard
    pn.extension("tabulator", notifications=True)
    Dashboard().panel()
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ermviz.app.model import DashboardModel, RunSpec, Slot

if TYPE_CHECKING:
    from ermviz.app.views import Dashboard

__all__ = ["Dashboard", "DashboardModel", "RunSpec", "Slot", "build_dashboard"]


def __getattr__(name: str) -> Any:
    # Panel is imported only when a view is asked for: the model works without it.
    if name in ("Dashboard", "build_dashboard"):
        from ermviz.app import views

        return getattr(views, name)
    raise AttributeError(name)
