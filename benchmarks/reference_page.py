"""The reference page of ``bench_sessions.py``: the least a Panel page like ermviz's can
cost, served by the same Panel, Bokeh and template (FastListTemplate with ermviz's offline
design and font), with one button and the element ``bench_sessions`` waits for. The
dashboard's figures are read as ratios to this page's, measured in the same run on the
same machine (``panel serve benchmarks/reference_page.py``)."""

import panel as pn

from ermviz.app.serving.notebook import PAGE_FONT, OfflineFast

pn.extension("tabulator", notifications=True, sizing_mode="stretch_width")

pn.template.FastListTemplate(
    title="reference page",
    main=[
        pn.widgets.Button(label="Start", color="primary", width=110),
        pn.pane.HTML('<span class="race-status-text">race: <b>idle</b></span>'),
    ],
    design=OfflineFast,
    font=PAGE_FONT,
    main_layout=None,
).servable(title="reference")
