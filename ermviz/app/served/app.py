"""The ermviz dashboard as a Panel app file: ``ermviz serve`` (or ``panel serve`` on this
file) serves it at ``/app``. The repository's ``app.py`` runs this file."""

import panel as pn

from ermviz.app.views.page import build_dashboard

pn.extension("tabulator", notifications=True, sizing_mode="stretch_width")

build_dashboard().template().servable(title="ermviz")
