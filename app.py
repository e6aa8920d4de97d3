"""The ermviz dashboard: ``panel serve app.py`` from the repository root.

Warm numba's cache at server start (the first Start click is then immediate) with
``panel serve app.py --setup ermviz/app/warmup.py``.
"""

import panel as pn

from ermviz.app.page import build_dashboard

pn.extension("tabulator", notifications=True, sizing_mode="stretch_width")

build_dashboard().template().servable(title="ermviz")
