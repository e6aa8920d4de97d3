"""The teaching view's drawing, plain Bokeh (no Panel): a toy problem's feasible set with
contours of its objective and each run's path of iterates, with a zoom that follows the
race (:class:`TeachingPlot`); the same builder serves the live page and the standalone
HTML export.

Its vertex labels sit outside the set, beyond the largest active-set ring the race draws
on a vertex (:func:`ring_radius`), and the figure keeps room around the set for them: at
a laptop's 1280 px they were hidden under the rings and the top one cut by the frame
(issue 42; tests/test_first_screen_browser.py measures them drawn).
"""

from __future__ import annotations

import math
import time
from typing import Any, ClassVar

import numpy as np
from bokeh.core.properties import value
from bokeh.models import ColumnDataSource, HoverTool, Legend, LegendItem, Range1d
from bokeh.palettes import Blues256, linear_palette
from bokeh.plotting import figure
from bokeh.plotting.contour import contour_data
from bokeh.transform import factor_mark

from ermviz.app.plots.figure_style import (
    PATH_MARKERS,
    TEXT_STYLES,
    TOOLBAR,
    readable_axes,
    set_presentation,
    style_text,
    wrap_title,
)
from ermviz.app.plots.streaming import Geometry, RunSources

#: Screen pixels between a vertex label and the largest ring on its vertex.
LABEL_GAP = 5.0
#: Room left around the set for its vertex labels, a fraction of the set's size on each
#: side.
LABEL_ROOM = 0.35
#: Diameter (px) of the first run's active-set ring on a vertex, and how much larger each
#: next run's is (they nest); their line width.
RING_SIZE, RING_STEP, RING_LINE = 18, 7, 3


def ring_radius(runs: int) -> float:
    """Screen radius (px) of the largest active-set ring ``runs`` runs draw on a vertex,
    its line included."""
    return (RING_SIZE + RING_STEP * max(0, runs - 1) + RING_LINE) / 2.0


def _vertex_labels(xy: np.ndarray, text: list[str], gap: float = 8.0) -> dict[str, list]:
    """Each vertex label set outside the drawn set: offset ``gap`` screen pixels and
    anchored away from the vertices' centre, so it covers neither the set, nor its edges,
    nor the rings drawn on the vertex (``gap`` beyond the largest)."""
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

    #: Title by geometry kind, formatted with ``r`` (radius), ``lo`` and ``hi`` (box): the
    #: set drawn (the problem is in the sidebar), short enough for two lines in a room.
    TITLES: ClassVar[dict[str, str]] = {
        "triangle": "SVM dual, 3 points: a triangle",
        "tetrahedron": "SVM dual, 4 points: tetrahedron from above e4",
        "diamond": "l1 ball of radius {r:g}: logistic regression",
        "disc": "l2 disc of radius {r:g} (strongly convex)",
        "box": "box [{lo:g}, {hi:g}]^2: logistic regression",
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
            "zoom on the recent iterates", self._grid, width=480, zoom=True
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
            height=520,
            width=width,
            sizing_mode="fixed",
            tools="pan,wheel_zoom,box_zoom,reset,save",
            toolbar_location=TOOLBAR,
            **ranges,
        )
        style_text(fig)
        if not zoom:
            # Room around the set for the vertex labels drawn beside its corners, rings
            # and all: the ranges take in an invisible frame a third of the set's size
            # beyond it (a fractional range_padding left the top label cut off, the
            # aspect matching widening x only).
            lo, hi = g.extent()
            pad = (hi - lo).max() * (LABEL_ROOM if len(g.atom_labels) else 0.05)
            fig.scatter([lo[0] - pad, hi[0] + pad], [lo[1] - pad, hi[1] + pad], size=0, alpha=0.0)
            fig.x_range.range_padding = fig.y_range.range_padding = 0.0
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
        if zoom:
            labels = self._labels  # the set figure's: they move out with its rings
        else:
            labels = self._labels = ColumnDataSource(
                _vertex_labels(g.atoms[:, :2], list(g.atom_labels), LABEL_GAP + ring_radius(1)),
                name="vertex-labels",
            )
        fig.text(
            "x",
            "y",
            text="text",
            source=labels,
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
                size=RING_SIZE + RING_STEP * k,
                fill_color=None,
                line_color=color,
                line_width=RING_LINE,
            )
            items.append(LegendItem(label=src.slot.label, renderers=[r_line, r_pts, r_cur, r_act]))
            hover = HoverTool(renderers=[r_pts], tooltips=_path_tooltips(src.slot.label))
            fig.add_tools(hover)
            hovers.append(hover)
        if not zoom and self.sources:
            # The vertex labels move out beyond the largest ring these runs draw.
            g = self.geometry
            self._labels.data = _vertex_labels(
                g.atoms[:, :2], list(g.atom_labels), LABEL_GAP + ring_radius(len(self.sources))
            )
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
