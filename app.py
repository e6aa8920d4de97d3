"""The ermviz dashboard: ``panel serve app.py`` from the repository root (``ermviz serve``
does the same with safe serving defaults).

This file runs the app file shipped in the package, :data:`ermviz.app.served.APP`.
Warm numba's cache at server start (the first Start click is then immediate) with
``panel serve app.py --setup ermviz/app/serving/warmup.py``.
"""

import runpy

from ermviz.app.served import APP

runpy.run_path(str(APP))
