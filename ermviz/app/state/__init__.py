"""The session's state, no widgets: what the dashboard shows or does is decided here, so it
can be driven and tested without a browser.

* :mod:`~ermviz.app.state.model` - :class:`~ermviz.app.state.model.DashboardModel`, one
  per session: its uploads, results, kept references and exports, on top of
* :mod:`~ermviz.app.state.lifecycle` - the live race: build, start, pause, stop, end;
* :mod:`~ermviz.app.state.config` - the configuration: dataset, problem, settings, budgets,
  the racing runs;
* :mod:`~ermviz.app.state.runspec` - a racing run's spec (method, step rule, settings);
* :mod:`~ermviz.app.state.race` - the race's slots, results rows, traces, CSV/Parquet;
* :mod:`~ermviz.app.state.datasets` - the datasets offered, their presets, uploads;
* :mod:`~ermviz.app.state.messages` - one-line messages and notifications;
* :mod:`~ermviz.app.state.references` - finished races kept as faded references;
* :mod:`~ermviz.app.state.urlstate` - the configuration in the URL query string;
* :mod:`~ermviz.app.state.problem_cache` - problems built once per server process.
"""
