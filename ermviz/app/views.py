"""The dashboard's views, one module each; this module re-exports their public names
(``app.py`` imports :func:`build_dashboard` from here).

* :mod:`ermviz.app.page` - :class:`Dashboard` (the page: toolbar, tabs, template) and
  :func:`build_dashboard` (one per session, its configuration in the URL);
* :mod:`ermviz.app.controls` - the sidebar: data, problem, preprocessing, budgets, runs;
* :mod:`ermviz.app.race_view` - the Race tab: live plots and the results table;
* :mod:`ermviz.app.teaching_view` - the Teaching view tab;
* :mod:`ermviz.app.export_view` - the Export tab (CSV, Parquet, standalone HTML);
* :mod:`ermviz.app.figures` - the plain Bokeh figures (:class:`TracePlots`,
  :class:`TeachingPlot`) the live page and the HTML export share;
* :mod:`ermviz.app.widgets` - :func:`guard` (a callback's exception becomes a
  notification) and :func:`setting_widget` (a widget per declared setting).

The Results tab (a sweep's results folder) is :mod:`ermviz.app.results`. Names are looked
up in the module that defines them: patch them there, not here.
"""

from __future__ import annotations

from ermviz.app.figures import PLOT_HEIGHT, STEP_MARKERS, TeachingPlot, TracePlots, contour_levels
from ermviz.app.page import TABLE_PERIOD, Dashboard, build_dashboard
from ermviz.app.race_view import MORE_PLOTS
from ermviz.app.widgets import guard, setting_widget

__all__ = [
    "MORE_PLOTS",
    "PLOT_HEIGHT",
    "STEP_MARKERS",
    "TABLE_PERIOD",
    "Dashboard",
    "TeachingPlot",
    "TracePlots",
    "build_dashboard",
    "contour_levels",
    "guard",
    "setting_widget",
]
