"""How the dashboard's figures look: text sizes (a desk's and a presentation's), tick
labels that never overlap, wrapped titles and legends placed off the curves; and the
pieces they are drawn with (a styled figure, a line or a step curve with its glyph alone,
legend proxies, the step markers); plain Bokeh, used by :mod:`ermviz.app.plots.figures`."""

from __future__ import annotations

import functools
import textwrap
import weakref
from typing import Any

from bokeh.models import (
    ColumnDataSource,
    CustomJS,
    CustomJSTickFormatter,
    DataRange1d,
    GlyphRenderer,
    Legend,
    LegendItem,
    Line,
    NoOverlap,
    Step,
)
from bokeh.plotting import figure

#: Text sizes of the figures (title, axis labels, tick labels, legend) and the factor on
#: line widths: ``normal`` reads at a desk, ``presentation`` from the back of a room
#: (:func:`set_presentation`).
TEXT_STYLES: dict[str, dict[str, Any]] = {
    "normal": {
        "title": "12pt",
        "axis": "11pt",
        "ticks": "10pt",
        "legend": "10pt",
        "lines": 1.0,
        "wrap": 30,
    },
    "presentation": {
        "title": "16pt",
        "axis": "15pt",
        "ticks": "14pt",
        "legend": "13pt",
        "lines": 2.0,
        "wrap": 22,
    },
}
#: Characters per line of a title before it wraps (titles are never cut at the edge): 30
#: characters of a 12pt bold title (9-11 px each) fit the narrowest figure's frame (two
#: figures beside each other in a 1280 px window: ~335 px), 22 at Presentation's 16pt
#: (``wrap`` of each text style; tests/test_first_screen_browser.py measures them drawn).
TITLE_WRAP = TEXT_STYLES["normal"]["wrap"]
#: Where each figure's tools go: beside the plot, never in the title's row (above, a
#: title of a narrow figure ran into the tools).
TOOLBAR = "right"

#: What each certificate kind (``Problem.certificate_kind``, ``Solver.certificate_kind``)
#: is called on the plots.
CERTIFICATE_NAMES = {
    "fw_gap": "FW gap",
    "primal_dual_gap": "primal-dual gap",
    "duality_gap": "duality gap",
    "rel_duality_gap": "relative duality gap",
    "opt_gap_estimate": "optimality gap (estimate)",
    "meta_test_loss": "meta-test loss",
    "fw_gap (stationarity)": "FW gap (stationarity)",
    "avg_fw_gap (stationarity)": "running-average FW gap",
}


def certificate_name(kinds: str | list[str] | tuple[str, ...]) -> str:
    """The plots' name of a certificate kind, or of several (a race whose runs certify
    differently, e.g. a lazified run's primal-dual gap beside FW gaps): "FW gap /
    primal-dual gap"."""
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    names = [CERTIFICATE_NAMES.get(k, k.replace("_", " ")) for k in dict.fromkeys(kinds)]
    return " / ".join(names)


#: Major ticks wanted on an x axis (Bokeh's default, 6, crowds a half-width plot).
X_TICKS = 5

# Seconds as short text: 250 µs, 1.5 ms, 2 s (ticks of the time axes). Bokeh's default
# wrote 0.000125, 0.000250, ... that ran into each other on a race of a millisecond.
_SECONDS_JS = """
const a = Math.abs(tick);
if (a === 0) { return "0"; }
const units = [[1, "s"], [1e-3, "ms"], [1e-6, "\u00b5s"], [1e-9, "ns"]];
let k = 0;
while (k < units.length - 1 && a < units[k][0]) { k += 1; }
const v = tick / units[k][0];
return `${parseFloat(v.toPrecision(3))} ${units[k][1]}`;
"""
# Counts as short text: 500, 1.5k, 20k, 3M (ticks of the iteration and work axes).
_COUNT_JS = """
const a = Math.abs(tick);
const units = [[1e9, "G"], [1e6, "M"], [1e3, "k"]];
for (const [scale, suffix] of units) {
  if (a >= scale) { return `${parseFloat((tick / scale).toPrecision(3))}${suffix}`; }
}
return `${parseFloat(tick.toPrecision(3))}`;
"""


def seconds_formatter() -> CustomJSTickFormatter:
    """Tick labels of a time axis in s, ms, µs or ns with 3 significant digits."""
    return CustomJSTickFormatter(code=_SECONDS_JS)


def count_formatter() -> CustomJSTickFormatter:
    """Tick labels of an iteration (or work) axis: 500, 1.5k, 20k, 3M."""
    return CustomJSTickFormatter(code=_COUNT_JS)


def wrap_title(text: str, width: int = TITLE_WRAP) -> str:
    """``text`` on lines of at most ``width`` characters (Bokeh draws each line), as few as
    that takes and of even lengths (no last line of one word); a text wrapped before is
    wrapped anew."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    wrap = functools.partial(textwrap.wrap, break_long_words=False, break_on_hyphens=False)
    lines = wrap(text, width)
    for narrower in range(-(-len(text) // len(lines)), width):
        even = wrap(text, narrower)
        if len(even) == len(lines):
            return "\n".join(even)
    return "\n".join(lines)


def readable_axes(fig: Any, x_kind: str = "") -> None:
    """Axes whose tick labels never overlap: fewer x ticks, labels that would run into
    each other are dropped (Bokeh's ``NoOverlap`` policy), and ``x_kind`` ``"seconds"``
    or ``"count"`` writes the x ticks short (:func:`seconds_formatter`,
    :func:`count_formatter`)."""
    for axis in (*fig.xaxis, *fig.yaxis):
        axis.major_label_policy = NoOverlap(min_distance=6)
    for axis in fig.xaxis:
        if hasattr(axis.ticker, "desired_num_ticks"):
            axis.ticker.desired_num_ticks = X_TICKS
        if x_kind == "seconds":
            axis.formatter = seconds_formatter()
        elif x_kind == "count":
            axis.formatter = count_formatter()


# Each glyph's own line width, before set_presentation scaled it.
_BASE_WIDTHS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def set_presentation(figures: Any, on: bool = True) -> None:
    """Style ``figures`` (a figure or a list of them) for a room (``on``: larger titles,
    axis and tick labels and legends, lines twice as wide) or for a desk (``on`` False,
    the default style); callable again at any time, e.g. from a page's toggle."""
    style = TEXT_STYLES["presentation" if on else "normal"]
    figs = list(figures) if isinstance(figures, list | tuple) else [figures]
    for fig in figs:
        fig.title.text_font_size = style["title"]
        # Larger letters, fewer of them on a line: the title stays within the figure.
        title = wrap_title(fig.title.text or "", style["wrap"])
        if fig.title.text != title:
            fig.title.text = title
        for axis in (*fig.xaxis, *fig.yaxis):
            axis.axis_label_text_font_size = style["axis"]
            axis.major_label_text_font_size = style["ticks"]
        for legend in fig.legend:
            legend.label_text_font_size = style["legend"]
            legend.glyph_width = int(20 * style["lines"])
        for r in fig.renderers:
            glyph = getattr(r, "glyph", None) if isinstance(r, GlyphRenderer) else None
            width = getattr(glyph, "line_width", None)
            if glyph is None or not isinstance(width, int | float):
                continue
            base = _BASE_WIDTHS.setdefault(glyph, float(width))
            if glyph.line_width != base * style["lines"]:
                glyph.line_width = base * style["lines"]


def style_text(fig: Any) -> None:
    """The desk-size text style on ``fig``'s title and axes."""
    style = TEXT_STYLES["normal"]
    fig.title.text_font_size = style["title"]
    for axis in (*fig.xaxis, *fig.yaxis):
        axis.axis_label_text_font_size = style["axis"]
        axis.major_label_text_font_size = style["ticks"]


def add_legend(fig: Any, items: list[LegendItem], location: str = "bottom_left") -> Legend:
    """A legend in ``fig``; a click on an entry hides its lines. Bottom left by default:
    the certificate curves start high and fall, so that corner is where they are not
    (top right, they may stall or separate, e.g. maml-bias)."""
    legend = Legend(items=items, click_policy="hide", location=location)
    legend.label_text_font_size = TEXT_STYLES["normal"]["legend"]
    legend.spacing = 0
    legend.padding = 4
    legend.background_fill_alpha = 0.75
    legend.border_line_alpha = 0.4
    fig.add_layout(legend)
    return legend


#: Step types that can be marked on the certificate plots, with their marker.
STEP_MARKERS = {
    "away": "triangle",
    "pairwise": "diamond",
    "drop": "x",
    "lazy": "square",
    "local": "hex",
    "boosted": "star",
}
#: Markers of the teaching view's path points, by the step taken from the point (any
#: other tag, e.g. fw or none, is a circle).
PATH_MARKERS = {"fw": "circle", "none": "circle", **STEP_MARKERS}
#: What each marked step type is, for the legend of the step markers.
STEP_LABELS = {
    "away": "away step",
    "pairwise": "pairwise step",
    "drop": "drop step (atom removed)",
    "lazy": "lazy step (active atom, no LMO call)",
    "local": "local step (BPCG, between active atoms)",
    "boosted": "boosted step",
}
#: Height of each live plot (pixels).
PLOT_HEIGHT = 290


def styled_figure(title: str, x_label: str, y_label: str, log_x: bool, log_y: bool, **kw: Any):
    kw.setdefault("x_range", DataRange1d())
    kw.setdefault("y_range", DataRange1d())
    for rng in (kw["x_range"], kw["y_range"]):
        # Auto-ranged in the browser on every update; echoing each new start/end back to
        # the server (the default) cost ~100 websocket messages a second, measured.
        rng.syncable = False
    fig = figure(
        title=wrap_title(title),
        x_axis_type="log" if log_x else "linear",
        y_axis_type="log" if log_y else "linear",
        x_axis_label=x_label,
        y_axis_label=y_label,
        height=PLOT_HEIGHT,
        sizing_mode="stretch_width",
        min_width=360,
        tools="pan,wheel_zoom,box_zoom,reset,save",
        toolbar_location=TOOLBAR,
        **kw,
    )
    style_text(fig)
    return fig


def glyph_alone(fig: Any, glyph: Any, source: ColumnDataSource, name: str | None = None):
    """``glyph`` drawn on ``fig`` from ``source`` with the glyph alone. ``fig.line`` (and
    ``varea``, ...) also make a nonselection and a muted copy of the glyph: two more Bokeh
    models per renderer that nothing here uses (no tool selects, legends hide rather than
    mute), each built, sent and kept per page."""
    r = GlyphRenderer(data_source=source, glyph=glyph, name=name)
    fig.renderers.append(r)
    return r


def glyph_line(
    fig: Any, x: Any, y: Any, source: ColumnDataSource, name: str | None = None, **visuals: Any
):
    """A line on ``fig`` (:func:`glyph_alone`); ``visuals`` are :class:`Line`'s."""
    return glyph_alone(fig, Line(x=x, y=y, **visuals), source, name)


def glyph_step(
    fig: Any, x: Any, y: Any, source: ColumnDataSource, name: str | None = None, **visuals: Any
):
    """A step curve on ``fig`` (:func:`glyph_alone`): each point's ``y`` holds until the next
    point's ``x`` (Bokeh's :class:`Step`, mode ``after``); ``visuals`` are its line's."""
    return glyph_alone(fig, Step(x=x, y=y, mode="after", **visuals), source, name)


def retarget_proxy(proxy: Any, targets: list) -> None:
    """Point a legend proxy's browser callback at ``targets`` (grown by a plot drawn
    later)."""
    ids = [r.id for r in targets]
    for cb in proxy.js_property_callbacks.get("change:visible", []):
        if cb.args.get("ids") != ids:
            cb.args = {**cb.args, "ids": ids}


def _mirror_visible(renderers: list, attr: str, old: bool, new: bool) -> None:
    for r in renderers:
        if r.visible != new:
            r.visible = new


def legend_proxy(fig, empty: ColumnDataSource, targets: list, marker: str = "", **line: Any):
    """A line (a ``marker``, when given) on the constant ``empty`` source for a legend
    entry; hiding it (a click on the entry) hides ``targets`` too, in the browser and on
    the server."""
    if marker:
        proxy = fig.scatter("x", "y", source=empty, marker=marker, **line)
    else:
        if "color" in line:
            line["line_color"] = line.pop("color")
        proxy = glyph_line(fig, "x", "y", empty, **line)
    # The targets go by id, not as CustomJS args: a legend rebuilds its items (new
    # canvases and DOM nodes) on every change of any model its items reach, and args
    # holding the lines reach their streaming sources, i.e. it rebuilt on each
    # stream (measured: ~10 % of chromium's CPU during a race).
    proxy.js_on_change(
        "visible",
        CustomJS(
            args={"ids": [r.id for r in targets]},
            code=(
                "for (const id of ids) {"
                "  const r = cb_obj.document.get_model_by_id(id);"
                "  if (r != null) { r.visible = cb_obj.visible; } }"
            ),
        ),
    )
    # ... and on the server: lines of a diagnostic tab not on the page yet get the same
    # visibility when that tab is drawn.
    proxy.on_change("visible", functools.partial(_mirror_visible, targets))
    return proxy
