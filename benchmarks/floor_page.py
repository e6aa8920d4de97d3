"""The floor page of ``bench_sessions.py``: the least a page can cost that shows what
issue 32 asks of the first screen, built with plain Panel and Bokeh and no ermviz code
beyond the offline design and font. It has the same template, Start and the race status,
the lesson's title and what to watch, and two live log-scale figures (three empty lines
each, a legend and a hover tool) side by side. It has no sidebar, no tabs and no
teaching or export views, so it is a lower bound for the dashboard, not a copy of it.
``bench_sessions`` divides the dashboard's figures by this page's, measured in the same
run on the same machine (``panel serve benchmarks/floor_page.py``)."""

import panel as pn
from bokeh.models import ColumnDataSource, HoverTool
from bokeh.plotting import figure

from ermviz.app.serving.notebook import PAGE_FONT, OfflineFast

pn.extension("tabulator", notifications=True, sizing_mode="stretch_width")

METHODS = (("FW", "#1f77b4"), ("AFW", "#ff7f0e"), ("PFW", "#2ca02c"))


def live_figure(title: str, x_label: str) -> pn.pane.Bokeh:
    """A log-scale figure with one empty line per method, as a race starts."""
    fig = figure(
        title=title,
        x_axis_label=x_label,
        y_axis_label="Frank-Wolfe gap",
        y_axis_type="log",
        height=340,
        sizing_mode="stretch_width",
    )
    for name, color in METHODS:
        source = ColumnDataSource({"x": [], "y": []})
        fig.line("x", "y", source=source, color=color, legend_label=name, line_width=2)
    fig.add_tools(HoverTool(tooltips=[("gap", "@y")]))
    return pn.pane.Bokeh(fig, sizing_mode="stretch_width")


pn.template.FastListTemplate(
    title="floor page",
    main=[
        pn.Row(
            pn.widgets.Button(label="Start", color="primary", width=110),
            pn.pane.HTML('<span class="race-status-text">race: <b>idle</b></span>'),
        ),
        pn.pane.Markdown(
            "### Lesson 1: away steps and pairwise steps\n"
            "**What to watch:** the gap of FW stalls while AFW and PFW fall linearly."
        ),
        pn.Row(
            live_figure("gap against iterations", "iteration"),
            live_figure("gap against wall time", "seconds"),
        ),
    ],
    design=OfflineFast,
    font=PAGE_FONT,
    main_layout=None,
).servable(title="floor")
