"""The dashboard's Teaching view tab: a toy problem's feasible set and the runs' paths, or
a classifier's decision boundary in the plane.

Before a race it previews the configured problem when it can be drawn (3 or 4 points for
the SVM dual, 2 features for logistic regression over the l1 ball, the l2 ball or a
box, in teaching mode; LS-SVM classification on 2 features, always; tested cheaply
first, so no large dataset is loaded just to find out); during a race it shows each run's
iterates growing live (:class:`~ermviz.app.plots.teaching_plot.TeachingPlot`) or each run's decision
boundary forming (:class:`~ermviz.app.plots.boundary.BoundaryPlot`).

:class:`TeachingView` is a Panel :class:`~panel.viewable.Viewer` over the session's
model and streamer: it owns its widgets and figures, watches the model itself, and draws
nothing until it is first shown (:meth:`TeachingView.build`).
"""

from __future__ import annotations

from typing import Any

import panel as pn

from ermviz import data as data_mod
from ermviz.app.compat import frozen_graph
from ermviz.app.plots.boundary import BoundaryPlot
from ermviz.app.plots.figure_style import set_presentation
from ermviz.app.plots.streaming import Streamer, geometry_for
from ermviz.app.plots.teaching_plot import TeachingPlot
from ermviz.app.state.datasets import BUNDLED
from ermviz.app.state.model import DashboardModel, is_teachable
from ermviz.registry import get_problem

#: Narrowest a teaching figure gets (two fit beside each other from a ~700 px wide tab).
TEACHING_MIN_WIDTH = 320


class TeachingView(pn.viewable.Viewer):
    """The teaching view's preview and live plot, over one model and its streamer."""

    def __init__(self, model: DashboardModel, streamer: Streamer, **params: Any) -> None:
        super().__init__(**params)
        self.model = model
        self.streamer = streamer
        self._preview_key: tuple | None = None
        self.built = False
        self.teaching_note = pn.pane.Markdown(sizing_mode="stretch_width")
        self.teaching_row = pn.FlexBox(sizing_mode="stretch_width")
        # The drawing first, how to read it under it: on a 1280 x 800 laptop the help
        # above (six lines) pushed the drawing below the first screen.
        self.layout = pn.Column(self.teaching_row, self.teaching_note, sizing_mode="stretch_width")
        self.teaching_plot: TeachingPlot | None = None
        # A hosted race's zoom is created on the pull after its first points were sent.
        self._zoom_after_first_point = False
        self._first_point_sent = False
        self.boundary_plot: BoundaryPlot | None = None
        model.param.watch(
            lambda *_: self._refresh_teaching_preview(),
            [
                "dataset",
                "problem",
                "problem_settings",
                "standardize",
                "normalize",
                "test_size",
                "seed",
                "animate",
            ],
        )

        model.param.watch(lambda *_: self._style_figures(), ["presentation"])

    def __panel__(self) -> pn.viewable.Viewable:
        return self.layout

    def _style_figures(self) -> None:
        """The shown plot's text and lines, for a desk or for a room (the model's
        ``presentation``)."""
        figures = (
            self.teaching_plot.layout()
            if self.teaching_plot is not None
            else self.boundary_plot.figures
            if self.boundary_plot is not None
            else []
        )
        if figures:
            with pn.io.hold():
                set_presentation(figures, self.model.presentation)

    def build(self) -> TeachingView:
        """Draw the view (once): it is about to show. Until then the model's changes
        build no preview (a preview may load the data). Returns the view."""
        if not self.built:
            self.built = True
            self.rebuild()
        return self

    def track(self, final: bool) -> None:
        """Follow the runs after a pull of new rows."""
        plot = self.teaching_plot
        if plot is not None and self.streamer.geometry is not None:
            if self._zoom_after_first_point and (self._first_point_sent or final):
                self._zoom_after_first_point = False
                with frozen_graph():
                    plot.add_zoom()
                    self._add_zoom_pane(plot)
                    if self.model.presentation:
                        self._style_figures()
            self._first_point_sent = self.streamer.first_point_at is not None
            plot.track(final=final)
        if self.boundary_plot is not None:
            self.boundary_plot.update(final=final)

    def _boundary_help(self, live: bool) -> str:
        base = (
            "Each run's classifier in the plane: the sign of its decision function "
            "(blue > 0 > red) on a coarse grid, the decision boundary (black) and the "
            "training points (dark blue +1, dark red -1), each sized by its weight "
            "|alpha_i|. An LS-SVM weighs every point (no sparsity), most of all the "
            "misclassified and those near the boundary."
        )
        if live:
            return base + " The figures follow the runs while they go."
        return base + "\n\nPress Start: the boundary forms as the runs advance."

    def _teaching_help(self, live: bool) -> str:
        base = (
            "Each run's path of iterates over the feasible set, on contour lines of the "
            "objective; rings mark the vertices in each run's current active set. Vanilla FW "
            "can only move toward a vertex, so near a face it zig-zags; away steps (AFW) and "
            "pairwise steps (PFW) move weight off bad vertices and go straight in. The right "
            "plot zooms on the recent iterates. A disc (the l2 ball) has no vertices, so no "
            "active set is drawn on it; FW goes fast there, the set being strongly convex. "
            "Each point's marker is the step taken from it: a circle for a FW step, a "
            "triangle away, a diamond pairwise, an x a drop, a square lazy (an active vertex, "
            "no LMO call), a hexagon a BPCG local step, a star boosted (hover for its name; "
            "the Race tab's step marks have a legend)."
        )
        if live:
            return base
        return (
            base + "\n\nPick `toy-simplex-3` (triangle), `toy-simplex-4` (tetrahedron) or "
            "`toy-2d` (l1 diamond; with constraint l2: a disc, with constraint box: the "
            "box [lo, hi]^2): teaching mode turns on; then press Start."
        )

    def _show_teaching(self, plot: TeachingPlot | BoundaryPlot | None, live: bool) -> None:
        self._zoom_after_first_point = False
        self.teaching_plot = plot if isinstance(plot, TeachingPlot) else None
        self.boundary_plot = plot if isinstance(plot, BoundaryPlot) else None
        if plot is not None and self.model.presentation:
            self._style_figures()
        if plot is not None or self.teaching_row.objects:
            # (Setting an empty row again would still re-render it.)
            self.teaching_row.objects = _teaching_panes(plot) if plot else []
        if self.boundary_plot is not None:
            self.teaching_note.object = self._boundary_help(live)
        else:
            self.teaching_note.object = self._teaching_help(live)

    def _maybe_teachable(self) -> bool:
        """Cheap test before building a preview: only tiny problems can be drawn, so a
        large dataset is never loaded on the event loop just to find that out."""
        m = self.model
        cls = get_problem(m.problem)
        if m.dataset in m.uploads:
            return True  # loaded already
        if m.dataset in BUNDLED:
            n, p = BUNDLED[m.dataset].n, BUNDLED[m.dataset].p
        else:
            entry = data_mod.catalog().get(m.dataset)
            if entry is None:
                return False
            n, p = entry.n, entry.p
        return (m.animate and cls.teachable(n, p)) or cls.draws_plane(n, p)

    def _refresh_teaching_preview(self) -> None:
        """Draw the feasible set and contours of the configured toy problem before a race."""
        m = self.model
        if not self.built:
            return
        if m.slots and self.streamer.geometry is not None:
            return  # a live teaching race is on screen
        key = (
            m.dataset,
            m.problem,
            tuple(sorted(m.problem_settings.items())),
            m.standardize,
            m.normalize,
            m.test_size,
            m.seed,
            m.animate,
        )
        if key == self._preview_key:
            return
        self._preview_key = key
        problem = None
        try:
            if self._maybe_teachable():
                problem = m.build_problem()
        except Exception:
            problem = None  # reported when the user starts; a preview stays silent
        geometry = (
            geometry_for(problem)
            if problem is not None and m.animate and is_teachable(problem)
            else None
        )
        if geometry is not None:
            self._show_teaching(TeachingPlot(geometry, problem), live=False)
            return
        plane = problem.decision_plane() if problem is not None else None
        self._show_teaching(BoundaryPlot(plane) if plane is not None else None, live=False)

    def rebuild(self) -> None:
        """Show the race (live paths or boundaries), or else the configured problem's
        preview: after a new race, a reset, or when first shown."""
        if not self.built:
            return
        geometry = self.streamer.geometry
        problem = self.model.problem_obj
        plane = problem.decision_plane() if problem is not None and geometry is None else None
        if problem is not None and geometry is not None:
            plot, sources = self.teaching_plot, self.streamer.sources
            if plot is not None and plot.hosts(geometry, problem, sources):
                # The preview (or the last race's plot) shows this problem already: the
                # runs join it in place, and only the zoom is new.
                # The zoom follows on a later pull (track), so the first points reach
                # the page without waiting for a new figure.
                plot.host(sources, defer_zoom=True)
                self._zoom_after_first_point = plot.zoom is None
                self._first_point_sent = False
                if self.model.presentation:
                    self._style_figures()
                self.teaching_note.object = self._teaching_help(live=True)
                return
            self._show_teaching(TeachingPlot(geometry, problem, sources), live=True)
        elif plane is not None and self.streamer.sources:
            self._show_teaching(BoundaryPlot(plane, self.streamer.sources), live=True)
        else:
            self._preview_key = None
            self._refresh_teaching_preview()

    def _add_zoom_pane(self, plot: TeachingPlot) -> None:
        """Put ``plot``'s new zoom beside its set figure (the row :func:`_teaching_panes`
        built for the preview)."""
        row = self.teaching_row.objects[0] if self.teaching_row.objects else None
        if not isinstance(row, pn.Row) or plot.zoom is None:
            self.teaching_row.objects = _teaching_panes(plot)
            return
        row.append(_teaching_pane(plot.zoom))


def _teaching_pane(fig: Any) -> pn.pane.Bokeh:
    fig.sizing_mode = "scale_width"
    fig.min_width = TEACHING_MIN_WIDTH
    return pn.pane.Bokeh(fig, sizing_mode="stretch_width", min_width=TEACHING_MIN_WIDTH)


def _teaching_panes(plot: TeachingPlot | BoundaryPlot) -> list:
    """The plot's figures as panes that fit the tab's width.

    The feasible set and its zoom share one row and scale with it (keeping their aspect):
    at fixed widths (560 + 480 px) the zoom was cut off or pushed below by a 1280-1440 px
    window. Boundary figures, one per run, keep their size and wrap (the FlexBox).
    """
    if isinstance(plot, BoundaryPlot):
        return [pn.pane.Bokeh(f) for f in plot.layout()]
    return [pn.Row(*(_teaching_pane(f) for f in plot.layout()), sizing_mode="stretch_width")]
