"""The Results tab: a sweep's results folder (table, performance profiles, curves), never
in the URL.

* :mod:`~ermviz.app.results.model` - :class:`~ermviz.app.results.model.ResultsModel`, its
  state and every number it shows;
* :mod:`~ermviz.app.results.view` - :class:`~ermviz.app.results.view.ResultsView`, the
  tab's Panel view.
"""
