"""The figures, plain Bokeh (no Panel widgets): the same builders serve the live page, a
notebook and the standalone HTML export.

* :mod:`~ermviz.app.plots.figures` - the race's certificate and diagnostic plots;
* :mod:`~ermviz.app.plots.teaching_plot` - a toy problem's feasible set and iterates;
* :mod:`~ermviz.app.plots.boundary` - a classifier's decision boundary in the plane;
* :mod:`~ermviz.app.plots.figure_style` - text sizes, ticks, titles and legends;
* :mod:`~ermviz.app.plots.streaming` - the per-session pull of new trace rows into the
  figures' sources, thinned by :mod:`~ermviz.app.plots.thinning`;
* :mod:`~ermviz.app.plots.png` - figures as PNG, drawn by headless Chromium.
"""
