"""The dashboard's figures, plain Bokeh (no Panel): the same builders serve the live page
and the standalone HTML export.

:class:`TracePlots` - the five live plots of a race (certificate vs iteration and vs
solver time, suboptimality, step size, active-set size), one line per run;
:class:`TeachingPlot` - a toy problem's feasible set with contours of its objective and
each run's path of iterates, with a zoom that follows the race.
"""

from __future__ import annotations

import functools
import math
import time
from typing import Any, ClassVar

import numpy as np
from bokeh.core.properties import value
from bokeh.models import (
    CDSView,
    ColumnDataSource,
    CustomJS,
    CustomJSTransform,
    DataRange1d,
    GroupFilter,
    HoverTool,
    Legend,
    LegendItem,
    Range1d,
    VArea,
)
from bokeh.palettes import Blues256, linear_palette
from bokeh.plotting import figure
from bokeh.plotting.contour import contour_data
from bokeh.transform import factor_mark, transform

from ermviz.app.figure_style import (
    PATH_MARKERS,
    STEP_LABELS,
    STEP_MARKERS,
    TEXT_STYLES,
    add_legend,
    glyph_alone,
    glyph_line,
    legend_proxy,
    readable_axes,
    retarget_proxy,
    set_presentation,
    style_text,
    styled_figure,
    wrap_title,
)
from ermviz.app.streaming import Geometry, RunSources

#: Line alpha of a kept reference race's curves (the live ones are opaque).
REF_ALPHA = 0.35


class TracePlots:
    """The five live plots of a race, one line per run in the run's colour.

    1. certificate vs iteration + 1 (log y), with the steps of :data:`STEP_MARKERS` (away,
       pairwise, drop, lazy, local, boosted) marked on demand, their legend in plot 2;
    2. certificate vs solver time (wall ``time_s`` or thread ``cpu_s``);
    3. suboptimality: objective minus the best objective seen by any run (computed in the
       browser, so it follows the best value as it improves); 4. step size; 5. active-set
       size. Iteration plots share their x range; hover shows the run and the values;
       clicking a legend entry hides that run's line (and its step markers).

    ``series`` holds one ``(label, colour, source)`` per place in the race; the figures
    keep their renderers from race to race and :meth:`show` relabels them, so Start sends
    the browser new data and labels rather than new figures. ``references`` holds one
    ``(label, colour, dash, static source)`` per run of a kept race
    (:func:`~ermviz.app.streaming.reference_series`): drawn faded and dashed under the
    live lines in all five plots, each with its legend entry.
    """

    def __init__(
        self,
        series: list[tuple[str, str, ColumnDataSource, ColumnDataSource]],
        best: ColumnDataSource,
        *,
        log_x: bool = True,
        time_basis: str = "time_s",
        show_steps: bool = False,
        certificate_kind: str = "fw_gap",
        work_label: str = "",
        references: list[tuple[str, str, str, ColumnDataSource]] = (),
        lazy: bool = False,
    ) -> None:
        cert = certificate_kind.replace("_", " ")
        # Log axes need iteration + 1 (iteration 0 is the start point); linear ones do not.
        # With a work counter (``work_label``), the sources' ``work`` column is the x.
        if work_label:
            kx = "w1" if log_x else "work"
            it_label = f"{work_label} + 1" if log_x else work_label
            vs = work_label
        else:
            kx = "k1" if log_x else "iteration"
            it_label = "iteration + 1" if log_x else "iteration"
            vs = "iteration"
        tb = time_basis
        t_label = "solver wall time" if tb == "time_s" else "solver thread CPU time"
        self._log_x, self._show_steps = log_x, show_steps
        self._it_range = DataRange1d()
        # (title, x label, y label, log y, shares the iteration range) of each plot.
        self._specs = (
            (f"{cert} vs {vs}", it_label, cert, True, True),
            (f"{cert} vs solver time", t_label, cert, True, False),
            (f"suboptimality vs {vs}", it_label, "objective − best seen", True, True),
            (f"step size vs {vs}", it_label, "step size", True, True),
            (f"active-set size vs {vs}", it_label, "atoms in the active set", False, True),
        )
        subopt = CustomJSTransform(
            args={"best": best},
            v_func=(
                "const b = best.data.best[0];"
                "const out = new Float64Array(xs.length);"
                "for (let i = 0; i < xs.length; i++) {"
                "  const d = xs[i] - b; out[i] = (d > 0) ? d : NaN; }"
                "return out;"
            ),
        )
        # When the best objective improves, every run's suboptimality must be recomputed:
        # emitting a change on each source makes its renderers re-apply the transform.
        best.js_property_callbacks = {
            "change:data": [
                CustomJS(
                    args={"sources": [entry[3] for entry in series]},
                    code="for (const s of sources) { s.change.emit(); }",
                )
            ]
        }
        self._columns = (
            (kx, "certificate"),
            (tb, "certificate"),
            (kx, transform("objective", subopt)),
            (kx, "step_size"),
            (kx, "active_size"),
        )
        common = [("run", "$name"), ("iteration", "@iteration{0,0}"), ("time", f"@{tb}{{%.3g}} s")]
        self._tips = (
            [*common, ("certificate", "@certificate{%.3e}")],
            [*common, ("certificate", "@certificate{%.3e}")],
            [
                ("run", "$name"),
                ("iteration", "@iteration{0,0}"),
                ("objective", "@objective{%.10g}"),
            ],
            [*common, ("step size", "@step_size{%.3e}")],
            [*common, ("active set", "@active_size")],
        )
        self._hover_fmt = {
            "@certificate": "printf",
            "@objective": "printf",
            "@step_size": "printf",
            f"@{tb}": "printf",
        }
        self._series = [(*entry[:4], entry[4] if len(entry) > 4 else None) for entry in series]
        self._references = list(references)
        self._figures: list[Any] = [None] * len(self._specs)
        self._presentation = False
        # Per run (and per kept run): its renderers in every plot drawn so far.
        self.renderers: list[list] = [[] for _ in self._series]
        self.ref_renderers: list[list] = [[] for _ in self._references]
        self._markers: dict[str, list] = {step: [] for step in STEP_MARKERS}
        self._draw(0)
        self._draw(1)
        # One legend, in the first plot: its entry for a run hides that run's lines (and
        # step markers) in all five plots. Measured: a legend re-renders whenever a source
        # of its items' renderers changes, i.e. on every stream. So each entry holds a
        # proxy renderer on a constant, empty source (it draws nothing, only gives the
        # entry its colour); a click toggles the proxy and a CustomJS mirrors its
        # visibility onto the run's real renderers, in the browser.
        # One NaN point: nothing is drawn, but the legend has a row to draw its icon from.
        empty = ColumnDataSource({"x": [np.nan], "y": [np.nan]})
        self.ref_items: list[LegendItem] = []
        self._ref_proxies: list = []
        for (label, color, dash, _), mine in zip(self._references, self.ref_renderers, strict=True):
            style = {"color": color, "line_width": 2, "line_alpha": REF_ALPHA, "line_dash": dash}
            proxy = legend_proxy(self._figures[0], empty, mine, **style)
            self._ref_proxies.append(proxy)
            self.ref_items.append(LegendItem(label=value(label), renderers=[proxy]))
        self.items: list[LegendItem] = []
        self.proxies: list = []
        #: Per series leading a group of seeds (see show): the other members' indices.
        self._members: dict[int, list[int]] = {}
        for i, ((label, color, *_), mine) in enumerate(
            zip(self._series, self.renderers, strict=True)
        ):
            proxy = legend_proxy(self._figures[0], empty, mine, color=color, line_width=2)
            # A click on a group's entry hides its other members too (on the server).
            proxy.on_change("visible", functools.partial(self._follow_leader, i))
            self.proxies.append(proxy)
            self.items.append(LegendItem(label=value(label), renderers=[proxy]))
        # Where the curves are not: they fall from the top left, so on log axes the
        # bottom left is empty; on linear ones they drop at once and run along the bottom.
        corner = "bottom_left" if log_x else "top_right"
        self.legend = add_legend(self._figures[0], [], corner)
        # Which marker is which step (e.g. which steps were lazy), in the second plot; a
        # click on an entry hides that step's markers of every run.
        self.step_items: list[LegendItem] = []
        if show_steps and series:
            for step, marker in STEP_MARKERS.items():
                proxy = legend_proxy(
                    self._figures[1],
                    empty,
                    self._markers[step],
                    marker=marker,
                    size=7,
                    line_color="#444444",
                    fill_color="#444444" if marker != "x" else None,
                    fill_alpha=0.5,
                )
                self.step_items.append(
                    LegendItem(label=value(STEP_LABELS[step]), renderers=[proxy])
                )
            add_legend(self._figures[1], self.step_items, corner)
        self.show([entry[0] for entry in series])
        if not lazy:
            self.figures  # noqa: B018  (draws the other three)

    @property
    def figures(self) -> list:
        """The five figures (each drawn now if it was not yet)."""
        return [self.figure(f) for f in range(len(self._specs))]

    @property
    def figures_drawn(self) -> list:
        """The figures drawn so far (None for a plot not drawn yet)."""
        return list(self._figures)

    def figure(self, f: int) -> Any:
        """Plot ``f`` (0-4), drawn the first time it is asked for: a page shows the last
        three in tabs, and most pages never open them (each costs the server ~0.06 s)."""
        if self._figures[f] is None:
            self._draw(f)
            # Drawn after the legend: its lines take the state of their entries' proxies
            # (label, colour, hidden by a click), and the proxies' callbacks reach them.
            for proxy, mine in zip(self.proxies, self.renderers, strict=True):
                for r in mine:
                    if r.visible != proxy.visible:
                        r.visible = proxy.visible
                    if r.name != proxy.name:
                        r.name = proxy.name
                    _recolor(r.glyph, proxy.glyph.line_color)
            for i, proxy in enumerate(self.proxies):
                retarget_proxy(proxy, self._targets(i))
            for proxy, mine in zip(self._ref_proxies, self.ref_renderers, strict=True):
                for r in mine:
                    if r.visible != proxy.visible:
                        r.visible = proxy.visible
                retarget_proxy(proxy, mine)
            if self._presentation:
                set_presentation(self._figures[f], True)
        return self._figures[f]

    def _draw(self, f: int) -> None:
        """Draw plot ``f``: the kept races' faded lines, then each run's line (and, in the
        first plot, its seeds' band; in the first two, its step markers)."""
        title, x_label, y_label, log_y, shared = self._specs[f]
        kw = {"x_range": self._it_range} if shared else {}
        fig = styled_figure(title, x_label, y_label, self._log_x, log_y, **kw)
        # Plot 2's x is solver time; the others' an iteration (or work) count.
        readable_axes(fig, "seconds" if f == 1 else "count")
        x, y = self._columns[f]
        hover = []
        for (label, color, dash, src), mine in zip(
            self._references, self.ref_renderers, strict=True
        ):
            style = {"line_color": color, "line_width": 2, "line_alpha": REF_ALPHA}
            ry = (x, "subopt") if f == 2 else (x, y)
            mine.append(glyph_line(fig, *ry, src, name=label, line_dash=dash, **style))
            hover.append(mine[-1])
        for (label, color, cds, obj, band), mine in zip(self._series, self.renderers, strict=True):
            if band is not None and f == 0:
                # A group of seeds: their min-max band and mean, under the runs' own lines.
                mine.append(
                    glyph_alone(
                        fig, VArea(x=x, y1="lo", y2="hi", fill_color=color, fill_alpha=0.18), band
                    )
                )
                mine.append(
                    glyph_line(
                        fig, x, "mean", band, line_color=color, line_width=3, line_dash="dashed"
                    )
                )
            mine.append(
                glyph_line(
                    fig, x, y, obj if f == 2 else cds, name=label, line_color=color, line_width=2
                )
            )
            hover.append(mine[-1])
            if self._show_steps and f < 2:
                for step, marker in STEP_MARKERS.items():
                    self._markers[step].append(
                        fig.scatter(
                            x,
                            "certificate",
                            source=cds,
                            view=CDSView(filter=GroupFilter(column_name="step", group=step)),
                            marker=marker,
                            size=7,
                            line_color=color,
                            fill_color=color if marker != "x" else None,
                            fill_alpha=0.5,
                        )
                    )
                    mine.append(self._markers[step][-1])
        if hover:
            fig.add_tools(
                HoverTool(renderers=hover, tooltips=self._tips[f], formatters=self._hover_fmt)
            )
        self._figures[f] = fig

    @property
    def size(self) -> int:
        return len(self.renderers)

    def set_presentation(self, on: bool = True) -> None:
        """Larger text and lines for a room (:func:`set_presentation`), or back."""
        self._presentation = on
        set_presentation([fig for fig in self._figures if fig is not None], on)

    def _targets(self, i: int) -> list:
        """What series ``i``'s legend entry hides: its lines, and when it leads a group of
        seeds, the other members' proxies (whose own callbacks hide their lines)."""
        return [*self.renderers[i], *(self.proxies[j] for j in self._members.get(i, []))]

    def _follow_leader(self, i: int, attr: str, old: bool, new: bool) -> None:
        for j in self._members.get(i, []):
            if self.proxies[j].visible != new:
                self.proxies[j].visible = new

    def show(
        self,
        labels: list[str | None],
        colors: list[str] | None = None,
        groups: list[str | None] | None = None,
    ) -> None:
        """Show series ``i`` under ``labels[i]`` (in ``colors[i]``, when given: the seeds of
        one run spec share its colour); hide the others (and ``None`` labels).

        Series with the same ``groups[i]`` (the seeds of one run spec) share one legend
        entry under that text, which hides them all: six seeds' entries covered the curves
        where they part. Their lines keep their own names (the hover says which seed)."""
        labels = (list(labels) + [None] * self.size)[: self.size]
        colors = (list(colors or []) + [None] * self.size)[: self.size]
        groups = (list(groups or []) + [None] * self.size)[: self.size]
        leaders: dict[str, int] = {}
        members: dict[int, list[int]] = {}
        for i, (label, group) in enumerate(zip(labels, groups, strict=True)):
            if label is None or group is None:
                continue
            if group in leaders:
                members[leaders[group]].append(i)
            else:
                leaders[group] = i
                members[i] = []
        self._members = {i: others for i, others in members.items() if others}
        entry = {i: groups[i] for i in self._members}
        followers = {j for others in self._members.values() for j in others}
        for i, label in enumerate(labels):
            for r in [self.proxies[i], *self.renderers[i]]:
                if r.visible != (label is not None):
                    r.visible = label is not None
                if label is not None and r.name != label:
                    r.name = label
                if label is not None and colors[i] is not None:
                    _recolor(r.glyph, colors[i])
            text = entry.get(i, label)
            if text is not None and self.items[i].label != value(text):
                self.items[i].label = value(text)
            retarget_proxy(self.proxies[i], self._targets(i))
        items = [
            self.items[i] for i, label in enumerate(labels) if label and i not in followers
        ] + self.ref_items
        # Replacing the list changes the document's model graph: only when it differs.
        if [id(x) for x in self.legend.items] != [id(x) for x in items]:
            self.legend.items = items


def _recolor(glyph: Any, color: str) -> None:
    """Give ``glyph`` the colour ``color`` where it has one (hollow markers stay hollow)."""
    for attr in ("line_color", "fill_color"):
        current = getattr(glyph, attr, None)
        if current is not None and current != color:
            setattr(glyph, attr, color)


def _vertex_labels(xy: np.ndarray, text: list[str], gap: float = 8.0) -> dict[str, list]:
    """Each vertex label set outside the drawn set: offset (screen pixels) and anchored
    away from the vertices' centre, so it covers neither the set nor its edges."""
    xy = np.asarray(xy, dtype=float).reshape(-1, 2)
    if xy.shape[0] == 0:  # no vertex (e.g. a set drawn without corners): no label
        return {k: [] for k in ("x", "y", "text", "dx", "dy", "align", "baseline")}
    d = xy - xy.mean(axis=0)
    norm = np.linalg.norm(d, axis=1, keepdims=True)
    d = np.divide(d, norm, out=np.zeros_like(d), where=norm > 0)
    return {
        "x": xy[:, 0].tolist(),
        "y": xy[:, 1].tolist(),
        "text": list(text),
        "dx": (gap * d[:, 0]).tolist(),
        "dy": (-gap * d[:, 1]).tolist(),  # screen y points down
        "align": ["left" if u > 0.3 else "right" if u < -0.3 else "center" for u in d[:, 0]],
        "baseline": ["bottom" if v > 0.3 else "top" if v < -0.3 else "middle" for v in d[:, 1]],
    }


def _runs_legend(items: list) -> Legend:
    """The runs' legend of a teaching figure, set below it (not over the set nor over its
    vertex labels)."""
    legend = Legend(items=items, click_policy="hide", orientation="horizontal", ncols=2)
    legend.label_text_font_size = TEXT_STYLES["normal"]["legend"]
    legend.spacing, legend.padding, legend.border_line_alpha = 4, 4, 0.0
    return legend


def _path_tooltips(label: str) -> list[tuple[str, str]]:
    return [("run", label), ("iteration", "@iteration"), ("step from here", "@step")]


def contour_levels(Z: np.ndarray, n: int = 16) -> np.ndarray:
    """Contour levels denser near the minimum (quantiles of the grid values)."""
    finite = Z[np.isfinite(Z)]
    if finite.size == 0:
        return np.zeros(0)
    return np.unique(np.quantile(finite, np.linspace(0.0, 1.0, n) ** 1.5))


class TeachingPlot:
    """The feasible set of a toy problem with contour lines of its objective, and each
    run's path of iterates (line + points), its current iterate and the vertices of its
    current active set (rings in the run's colour), growing live; beside it a zoom that
    follows the runs' recent iterates, where vanilla FW's zig-zag is plain to see.

    Triangle: the SVM dual on 3 points, in barycentric coordinates. Tetrahedron: the dual
    on 4 points seen from above vertex e4 (contours on the three faces through e4).
    Diamond: the l1 ball of R^2 for l1-constrained logistic regression. Disc: the l2 ball
    of R^2 (no atoms, so no active set is drawn). Box: ``[lo, hi]^2``, its 4 corners the
    atoms. The last three are drawn in the iterates' own coordinates, with axes.
    """

    #: Title by geometry kind, formatted with ``r`` (radius), ``lo`` and ``hi`` (box).
    TITLES: ClassVar[dict[str, str]] = {
        "triangle": "SVM dual on 3 points: the simplex is a triangle",
        "tetrahedron": "SVM dual on 4 points: the tetrahedron seen from above e4",
        "diamond": "l1-constrained logistic regression: the l1 ball of radius {r:g}",
        "disc": "logistic regression over the l2 disc of radius {r:g}: a strongly convex set",
        "box": "logistic regression over the box [{lo:g}, {hi:g}]^2",
    }
    #: Seconds between two recomputations of the zoom's contours during a race.
    ZOOM_REFINE_PERIOD = 1.0

    def __init__(
        self,
        geometry: Geometry,
        problem: Any,
        sources: list[RunSources] | None = None,
        *,
        snapshot: bool = False,
    ) -> None:
        self.geometry = geometry
        self.problem = problem
        self.sources: list[RunSources] = []
        self.snapshot = snapshot
        self._grid = geometry.objective_grid(problem)
        self.levels = contour_levels(self._grid[2])
        title = self.TITLES[geometry.kind].format(r=geometry.radius, lo=geometry.lo, hi=geometry.hi)
        self.main, _ = self._figure(title, self._grid, width=560)
        self.zoom = None
        self.zoom_contour = None
        self._window: tuple[float, float, float, float] | None = None
        self._refined_at = -math.inf
        #: Per figure, the legend items and hover tools of the runs drawn on it.
        self._drawn: list[tuple[list[LegendItem], list[HoverTool]]] = []
        if sources:
            self.host(list(sources))

    def add_zoom(self) -> None:
        """Create the zoom on the recent iterates (once the plot hosts runs); the next
        :meth:`track` places it."""
        if self.zoom is not None or not self.sources:
            return
        self.zoom, self.zoom_contour = self._figure(
            "zoom on the recent iterates (follows the race)", self._grid, width=480, zoom=True
        )

    def hosts(self, geometry: Geometry, problem: Any, sources: list[RunSources]) -> bool:
        """Whether :meth:`host` can show ``sources`` on this plot: the same problem object
        and set, and either no runs drawn yet (a preview) or these very sources (the
        streamer's pooled sources of a previous race)."""
        if self.snapshot or problem is not self.problem or geometry.kind != self.geometry.kind:
            return False
        if not self.sources:
            return bool(sources)
        return len(sources) == len(self.sources) and all(
            a is b for a, b in zip(sources, self.sources, strict=True)
        )

    def host(self, sources: list[RunSources], defer_zoom: bool = False) -> None:
        """Show a race's runs on this plot (see :meth:`hosts`).

        On a preview the runs' renderers are added to the existing set figure and the zoom
        is created: Start then sends the browser the new renderers and the zoom, not the
        set and its contours again (measured, rebuilding both was most of the time from
        Start to the first point of a teaching lesson). On a plot already showing these
        sources only the labels are refreshed and the zoom recentred.
        """
        if not self.sources:
            self.sources = list(sources)
            self._drawn.append(self._draw_runs(self.main, zoom=False))
            if not defer_zoom:
                self.add_zoom()
        else:
            for items, hovers in self._drawn:
                for src, item, hover in zip(self.sources, items, hovers, strict=True):
                    if item.label not in (src.slot.label, value(src.slot.label)):
                        item.label = value(src.slot.label)
                    hover.tooltips = _path_tooltips(src.slot.label)
        self._window = None
        self._refined_at = -math.inf
        self.track(final=True)

    def _figure(self, title, grid, width: int, zoom: bool = False):
        g = self.geometry
        ranges = {"x_range": Range1d(0, 1), "y_range": Range1d(0, 1)} if zoom else {}
        fig = figure(
            title=wrap_title(title),
            match_aspect=not zoom,
            height=480,
            width=width,
            sizing_mode="fixed",
            tools="pan,wheel_zoom,box_zoom,reset,save",
            toolbar_location="above",
            **ranges,
        )
        style_text(fig)
        if not zoom:
            # Room around the set for the vertex labels drawn beside its corners.
            fig.x_range.range_padding = fig.y_range.range_padding = 0.2
        else:
            readable_axes(fig)
        fig.grid.visible = False
        if not g.cartesian:
            fig.axis.visible = False
        contour = None
        if self.levels.size >= 3:
            fill = linear_palette(Blues256[40:][::-1], self.levels.size - 1)
            contour = fig.contour(
                *grid,
                levels=self.levels,
                fill_color=fill,
                fill_alpha=0.55,
                line_color="#4a6fa5",
                line_alpha=0.6,
                line_width=1,
            )
        outline = g.outline_xy()
        fig.line(outline[:, 0], outline[:, 1], color="black", line_width=2)
        for i, j in g.edges:
            a, b = g.atoms[i], g.atoms[j]
            dashed = g.kind == "tetrahedron" and 3 in (i, j)
            fig.line(
                [a[0], b[0]],
                [a[1], b[1]],
                color="black",
                line_width=1.2,
                line_dash="dashed" if dashed else "solid",
            )
        fig.text(
            "x",
            "y",
            text="text",
            source=ColumnDataSource(_vertex_labels(g.atoms[:, :2], list(g.atom_labels))),
            x_offset="dx",
            y_offset="dy",
            text_align="align",
            text_baseline="baseline",
            text_font_size="11pt",
        )
        fig.scatter(g.atoms[:, 0], g.atoms[:, 1], size=6, color="black")
        if not zoom and not self.sources:
            # A preview keeps an empty legend below the set for the runs a Start adds: a
            # legend panel added to a shown figure later sent BokehJS's layout of the page
            # into an endless loop (seen: the Results tab after a teaching race).
            fig.add_layout(_runs_legend([]), "below")
        if zoom and self.sources:
            self._drawn.append(self._draw_runs(fig, zoom=True))
        return fig, contour

    def _draw_runs(self, fig: Any, zoom: bool) -> tuple[list[LegendItem], list[HoverTool]]:
        """Each run's path, current iterate and active-set rings on ``fig``, with hover
        and a legend below the set; returns the legend items and hover tools."""
        items, hovers = [], []
        for k, src in enumerate(self.sources):
            color = src.slot.color
            path, current, active = src.path, src.current, src.active
            if self.snapshot:
                path = ColumnDataSource(dict(path.data))
                current = ColumnDataSource(dict(current.data))
                active = ColumnDataSource(dict(active.data))
            r_line = fig.line("x", "y", source=path, color=color, line_width=2, line_alpha=0.8)
            # Each point's marker says the step taken from it (lazy, local, away, ...).
            r_pts = fig.scatter(
                "x",
                "y",
                source=path,
                color=color,
                size=5 if not zoom else 8,
                marker=factor_mark("step", list(PATH_MARKERS.values()), list(PATH_MARKERS)),
            )
            r_cur = fig.scatter("x", "y", source=current, color=color, size=12, line_color="black")
            r_act = fig.scatter(
                "x",
                "y",
                source=active,
                marker="circle",
                size=18 + 7 * k,
                fill_color=None,
                line_color=color,
                line_width=3,
            )
            items.append(LegendItem(label=src.slot.label, renderers=[r_line, r_pts, r_cur, r_act]))
            hover = HoverTool(renderers=[r_pts], tooltips=_path_tooltips(src.slot.label))
            fig.add_tools(hover)
            hovers.append(hover)
        if items:
            below = [x for x in fig.below if isinstance(x, Legend)]
            if below:
                below[0].items = items  # the preview's empty legend (see _figure)
            else:
                fig.add_layout(_runs_legend(items), "below")
        return items, hovers

    def _tail_window(self) -> tuple[float, float, float, float] | None:
        """A square around the runs' recent iterates (each path minus its first fifth)."""
        pts = []
        for src in self.sources:
            x = np.asarray(src.path.data["x"], dtype=float)
            y = np.asarray(src.path.data["y"], dtype=float)
            if x.size >= 3:
                start = max(2, x.size // 5)
                pts.append(np.column_stack([x[start:], y[start:]]))
        if not pts:
            return None
        P = np.vstack(pts)
        lo, hi = P.min(axis=0), P.max(axis=0)
        lo_all, hi_all = self.geometry.extent()
        full = float((hi_all - lo_all).max())
        half = max(float((hi - lo).max()) * 0.65, 0.01 * full)
        cx, cy = (lo + hi) / 2.0
        return (cx - half, cx + half, cy - half, cy + half)

    def track(self, final: bool = False) -> None:
        """Move the zoom to the recent iterates; refine its contours now and then."""
        if self.zoom is None:
            return
        window = self._tail_window()
        if window is None:
            return
        if self._window is not None:
            span = self._window[1] - self._window[0]
            moved = max(abs(a - b) for a, b in zip(window, self._window, strict=True))
            if moved < 0.1 * span and not final:
                return
        self._window = window
        self.zoom.x_range.start, self.zoom.x_range.end = window[0], window[1]
        self.zoom.y_range.start, self.zoom.y_range.end = window[2], window[3]
        now = time.perf_counter()
        if self.zoom_contour is not None and (
            final or now - self._refined_at > self.ZOOM_REFINE_PERIOD
        ):
            # A fine grid over the zoom only (~1,600 objective evaluations).
            self._refined_at = now
            xs, ys, Z = self.geometry.objective_grid(self.problem, resolution=41, window=window)
            # Levels spread over the zoom's own values (the global ones are too coarse
            # there), as many as the global ones so the fill colours stay in order.
            local = contour_levels(Z)
            levels = local if local.size == self.levels.size else self.levels
            if np.isfinite(Z).any():
                self.zoom_contour.set_data(contour_data(xs, ys, Z, levels))

    def layout(self) -> list:
        return [self.main] if self.zoom is None else [self.main, self.zoom]

    def set_presentation(self, on: bool = True) -> None:
        """Larger text and lines for a room (:func:`set_presentation`), or back."""
        set_presentation(self.layout(), on)
