"""Where the dashboard runs: a served process and a Jupyter notebook.

* :mod:`~ermviz.app.serving.warmup` - numba's kernels compiled in the background while the
  server already answers (``panel serve --setup``), with its plan
  (:mod:`~ermviz.app.serving.warmup_plan`), schedule
  (:mod:`~ermviz.app.serving.warmup_schedule`) and terminal lines
  (:mod:`~ermviz.app.serving.warmup_terminal`);
* :mod:`~ermviz.app.serving.login` - the login page (``panel serve --auth-module``);
* :mod:`~ermviz.app.serving.memory` - the served process's memory between sessions;
* :mod:`~ermviz.app.serving.notebook` - the dashboard in a notebook, offline;
* :mod:`~ermviz.app.serving.live` - a live fit in a notebook cell.

The app file ``panel serve`` runs is :data:`ermviz.app.served.APP` (a folder of its own:
Bokeh puts the app file's folder on ``sys.path``).
"""
