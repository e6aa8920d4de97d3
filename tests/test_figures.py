"""Figures a room can read (issue 32): short tick labels that never overlap, legends away
from the curves, titles and vertex labels inside the figure, a presentation style.

The tick formatters are JavaScript: they are run in Debian's chromium on known ticks and
their labels compared with the expected text. The rest is checked on the Bokeh models.
"""

from __future__ import annotations

import numpy as np
import pytest
from bokeh.models import ColumnDataSource, CustomJSTickFormatter, NoOverlap

from ermviz.app.plots import figure_style as style_mod
from ermviz.app.plots import teaching_plot as teaching_mod
from ermviz.app.plots.figure_style import TEXT_STYLES, set_presentation
from ermviz.app.plots.figures import TracePlots
from ermviz.app.plots.teaching_plot import TeachingPlot


def _series(n: int = 3):
    out = []
    for k in range(n):
        it = np.arange(1.0, 50.0)
        data = {
            "iteration": it,
            "k1": it + 1,
            "time_s": it * 2e-5,
            "cpu_s": it * 2e-5,
            "certificate": 1.0 / it ** (1 + k),
            "objective": 1.0 + 1.0 / it,
            "step_size": 1.0 / (it + 2),
            "active_size": np.minimum(it, 10),
            "step": ["fw"] * it.size,
            "work": it,
            "w1": it + 1,
        }
        obj = {c: data[c] for c in ("iteration", "k1", "objective", "work", "w1")}
        out.append((f"run {k}", "#1f77b4", ColumnDataSource(data), ColumnDataSource(obj)))
    return out


def _plots(log_x: bool = True) -> TracePlots:
    return TracePlots(_series(), ColumnDataSource({"best": [1.0]}), log_x=log_x)


def _run_formatter(code: str, ticks: list[float]) -> list[str]:
    from test_png_export import CHROMIUM

    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
        try:
            tab = browser.new_page()
            return tab.evaluate(
                "([code, ticks]) => ticks.map((t) => new Function('tick', code)(t))",
                [code, ticks],
            )
        finally:
            browser.close()


@pytest.mark.browser
def test_time_and_count_ticks_are_short_text():
    seconds = _run_formatter(
        style_mod.seconds_formatter().code, [0.0, 1.25e-4, 2.5e-4, 1.5e-3, 0.0123456, 2.0, 45.0]
    )
    assert seconds == ["0", "125 µs", "250 µs", "1.5 ms", "12.3 ms", "2 s", "45 s"]
    counts = _run_formatter(style_mod.count_formatter().code, [0, 1, 10, 500, 1500, 2e4, 3e6])
    assert counts == ["0", "1", "10", "500", "1.5k", "20k", "3M"]


@pytest.mark.parametrize("log_x", [True, False])
def test_trace_axes_keep_their_labels_apart(log_x):
    plots = _plots(log_x)
    for f, fig in enumerate(plots.figures):
        for axis in (*fig.xaxis, *fig.yaxis):
            assert isinstance(axis.major_label_policy, NoOverlap)
        (xaxis,) = fig.xaxis
        assert isinstance(xaxis.formatter, CustomJSTickFormatter)
        want = style_mod.seconds_formatter() if f == 1 else style_mod.count_formatter()
        assert xaxis.formatter.code == want.code
        assert xaxis.ticker.desired_num_ticks == style_mod.X_TICKS
    # The legend sits in the corner the curves leave empty.
    assert plots.legend.location == ("bottom_left" if log_x else "top_right")
    assert [i.label.value for i in plots.legend.items] == ["run 0", "run 1", "run 2"]


def test_presentation_enlarges_text_and_lines_and_goes_back():
    plots = _plots()
    figs = plots.figures
    normal, room = TEXT_STYLES["normal"], TEXT_STYLES["presentation"]

    def widths() -> list[float]:
        return [r.glyph.line_width for f in figs for r in f.renderers]

    before = widths()
    assert all(f.title.text_font_size == normal["title"] for f in figs)
    plots.set_presentation(True)
    assert all(f.title.text_font_size == room["title"] for f in figs)
    assert all(a.major_label_text_font_size == room["ticks"] for f in figs for a in f.xaxis)
    assert all(a.axis_label_text_font_size == room["axis"] for f in figs for a in f.yaxis)
    assert plots.legend.label_text_font_size == room["legend"]
    assert widths() == [w * room["lines"] for w in before]
    set_presentation(figs, True)  # idempotent: widths are scaled from the originals
    assert widths() == [w * room["lines"] for w in before]
    plots.set_presentation(False)
    assert widths() == before
    assert all(f.title.text_font_size == normal["title"] for f in figs)


def test_long_titles_wrap_and_vertex_labels_point_outwards():
    title = TeachingPlot.TITLES["disc"].format(r=1.5)
    wrapped = style_mod.wrap_title(title)
    lines = wrapped.split("\n")
    assert len(lines) >= 2 and all(len(line) <= style_mod.TITLE_WRAP for line in lines)
    assert " ".join(lines) == title
    assert style_mod.wrap_title("short") == "short"
    # A triangle: each label is pushed away from the centre, and anchored on that side.
    xy = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, 0.9]])
    labels = teaching_mod._vertex_labels(xy, ["e1", "e2", "e3"])
    centre = xy.mean(axis=0)
    for k in range(3):
        out = xy[k] - centre
        # Screen offsets: x to the right, y downwards; along the outward direction.
        offset = np.array([labels["dx"][k], -labels["dy"][k]])
        cos = offset @ out / (np.linalg.norm(offset) * np.linalg.norm(out))
        assert cos == pytest.approx(1.0)
    assert labels["align"] == ["right", "left", "center"]
    assert labels["baseline"] == ["top", "top", "bottom"]


def test_the_dashboards_presentation_box_restyles_every_shown_figure():
    # The page's toggle (in the toolbar): the race's figures and the teaching
    # view's take the room's style at once, keep it when rebuilt, and go back.
    from ermviz.app import Dashboard

    dash = Dashboard()
    dash.model.dataset = "toy-2d"  # a teaching preset: the teaching view draws the set
    dash.race_view.build()
    dash.teaching_view.build()
    box = dash.presentation_toggle  # in the toolbar, beside Start
    assert box.name == "Presentation" and box in dash.toolbar_layout.objects[0].objects
    normal, room = TEXT_STYLES["normal"], TEXT_STYLES["presentation"]

    def titles() -> set[str]:
        teaching = dash.teaching_view.teaching_plot
        assert teaching is not None, "toy-2d draws its feasible set"
        figs = [*dash.race_view.figures, *teaching.layout()]
        return {f.title.text_font_size for f in figs}

    assert titles() == {normal["title"]}
    box.value = True
    assert dash.model.presentation
    assert titles() == {room["title"]}
    dash.model.log_x = not dash.model.log_x  # new figures: they keep the room's style
    assert titles() == {room["title"]}
    box.value = False
    assert titles() == {normal["title"]}


def test_lazy_plots_drawn_later_follow_the_legend_labels_colours_and_clicks():
    """A page draws the two plots on screen; a diagnostic plot drawn when its tab opens has
    the same lines as one drawn at once, with the race's current labels and colours, the
    runs hidden by a legend click hidden, and the legend's browser callback reaching it."""
    eager = _plots()
    lazy = TracePlots(_series(), ColumnDataSource({"best": [1.0]}), lazy=True)
    assert [f is not None for f in lazy.figures_drawn] == [True, True, False, False, False]
    lazy.show(["A", "B", None], ["#ff0000", "#00ff00", None])
    lazy.proxies[1].visible = False  # a click on B's legend entry (mirrored on the server)
    lazy.set_presentation(True)
    fig = lazy.figure(3)  # step size, drawn now
    assert lazy.figures_drawn[3] is fig and lazy.figures_drawn[2] is None
    lines = [r for r in fig.renderers if type(r.glyph).__name__ == "Line"]
    want = [r for r in eager.figures[3].renderers if type(r.glyph).__name__ == "Line"]
    assert [r.glyph.y for r in lines] == [r.glyph.y for r in want]
    assert [r.data_source for r in lines] == [lazy.renderers[i][-1].data_source for i in range(3)]
    assert [r.name for r in lines[:2]] == ["A", "B"]
    assert [r.visible for r in lines] == [True, False, False]
    assert [r.glyph.line_color for r in lines[:2]] == ["#ff0000", "#00ff00"]
    assert fig.title.text_font_size == TEXT_STYLES["presentation"]["title"]
    assert lines[0].glyph.line_width == 2 * TEXT_STYLES["presentation"]["lines"]
    for proxy, mine in zip(lazy.proxies, lazy.renderers, strict=True):
        (cb,) = proxy.js_property_callbacks["change:visible"]
        assert cb.args["ids"] == [r.id for r in mine] and mine[-1] in fig.renderers
    # Only the glyph itself: no unused nonselection and muted copies (two models a line).
    assert all(r.nonselection_glyph == "auto" and r.muted_glyph == "auto" for r in lines)


def test_the_seeds_of_one_run_share_a_legend_entry_that_hides_them_all():
    """Six seeds' six entries covered the curves where they part: the seeds of a run spec
    share one entry ("label · k seeds"); a click on it hides every seed's lines, on the
    server and (its callback reaches the other seeds' proxies) in the browser, and in a
    plot drawn later too. Each line keeps its seed's name for the hover."""
    from ermviz.app.state.race import Slot, group_entries

    slots = [
        Slot(0, "BSGD · seed 0", "#1f77b4", "bsgd", "fixed", {}, group=0),
        Slot(1, "BSGD · seed 1", "#1f77b4", "bsgd", "fixed", {}, group=0),
        Slot(2, "SAA", "#ff7f0e", "saa", "fixed", {}),
    ]
    assert group_entries(slots) == ["BSGD · 2 seeds", "BSGD · 2 seeds", None]
    plots = TracePlots(_series(4), ColumnDataSource({"best": [1.0]}), lazy=True)
    plots.show(
        [s.label for s in slots] + [None],
        [s.color for s in slots] + [None],
        [*group_entries(slots), None],
    )
    assert [i.label.value for i in plots.legend.items] == ["BSGD · 2 seeds", "SAA"]
    leader, follower = plots.proxies[0], plots.proxies[1]
    (cb,) = leader.js_property_callbacks["change:visible"]
    assert cb.args["ids"] == [r.id for r in plots.renderers[0]] + [follower.id]
    leader.visible = False  # a click on the group's entry (mirrored on the server)
    assert not follower.visible
    assert not any(r.visible for r in plots.renderers[0] + plots.renderers[1])
    assert all(r.visible for r in plots.renderers[2])
    fig = plots.figure(3)  # drawn after the click
    lines = [r for r in fig.renderers if type(r.glyph).__name__ == "Line"]
    assert [r.visible for r in lines] == [False, False, True, False]
    assert [r.name for r in lines[:3]] == ["BSGD · seed 0", "BSGD · seed 1", "SAA"]
    (cb,) = leader.js_property_callbacks["change:visible"]
    assert cb.args["ids"] == [r.id for r in plots.renderers[0]] + [follower.id]
    # A next race without seeds: every run has its own entry again.
    plots.show(["A", "B", "C", None])
    assert [i.label.value for i in plots.legend.items] == ["A", "B", "C"]
    assert all(p.visible for p in plots.proxies[:3])


def test_the_race_tab_draws_a_diagnostic_plot_when_its_tab_opens():
    from ermviz.app.state.model import DashboardModel
    from ermviz.app.views.page import Dashboard

    dash = Dashboard(DashboardModel())
    view = dash.race_view
    view.build()
    drawn = view.trace_plots.figures_drawn
    assert [f is not None for f in drawn] == [True, True, False, False, False]
    assert [p.object for p in view.plot_box.objects] == drawn[:2]
    view.more_plots.active = 3  # "active-set size"
    drawn = view.trace_plots.figures_drawn
    assert drawn[4] is not None and drawn[2] is None
    (pane,) = view.more_plots[3].objects
    assert pane.object is drawn[4] and "active-set size" in drawn[4].title.text
    dash.model.shutdown()
