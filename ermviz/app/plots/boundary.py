"""The teaching view of a classifier on two features: each run's decision boundary, live.

For a problem with a :class:`~ermviz.geometry.DecisionPlane` (LS-SVM classification on
2-D data: banana, blobs, toy-2d), :class:`BoundaryPlot` draws one small figure per run of
the race: the decision function's sign on a coarse grid (red < 0 < blue), its zero level
(the boundary) and the training points, each sized by its weight in the model
(``|alpha_i|``). While the race goes the figures follow each run's
``Solver.decision_state()``.

Cost, the reason for the throttle: a grid of ``m`` points against ``n`` training points
is ``m n`` kernel values (about 7 ns each on the 2-core test machine, in numba outside
the GIL but on the event loop). The grid is sized to about :data:`GRID_EVALS` kernel
values (24 x 24 on banana's 5300 points, at most 48 x 48), one run is redrawn per pull,
and the next redraw waits :data:`REDRAW_FACTOR` times the last one's cost (at least
:data:`REDRAW_PERIOD`): the view takes a few percent of a core, not the solvers' share.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from bokeh.models import ColumnDataSource, LinearColorMapper
from bokeh.palettes import RdBu11
from bokeh.plotting import figure
from bokeh.plotting.contour import contour_data

from ermviz.app.plots.streaming import RunSources
from ermviz.geometry import DecisionPlane

#: Kernel values per grid evaluation: the grid is about sqrt(GRID_EVALS / n) a side.
GRID_EVALS = 3.0e6
#: Grid sides allowed.
MIN_SIDE, MAX_SIDE = 16, 48
#: Seconds between two redraws at least, and the multiple of the last redraw's cost.
REDRAW_PERIOD = 0.5
REDRAW_FACTOR = 12.0
#: Colour range of the decision function (LS-SVM targets are -1 and +1).
F_RANGE = 1.5
LABEL_COLORS = {1.0: "#08306b", -1.0: "#8b0000"}
#: Point sizes (screen px): the smallest weight, and what the largest one adds.
SIZE_MIN, SIZE_SPAN = 3.0, 11.0


def grid_side(n: int) -> int:
    """Grid points per side for ``n`` training points (:data:`GRID_EVALS`)."""
    side = int(math.sqrt(GRID_EVALS / max(n, 1)))
    return min(MAX_SIDE, max(MIN_SIDE, side))


def point_sizes(weights: np.ndarray) -> np.ndarray:
    """Screen sizes growing with ``sqrt(w / max w)`` (all small while every w is 0); the
    span shrinks with more points (``sqrt(400 / n)``, at least a third), so that
    thousands of points do not hide the boundary."""
    w = np.abs(np.asarray(weights, dtype=float))
    top = float(w.max()) if w.size else 0.0
    if not np.isfinite(top) or top <= 0.0:
        return np.full(w.size, SIZE_MIN)
    span = SIZE_SPAN * min(1.0, max(1.0 / 3.0, math.sqrt(400.0 / max(w.size, 1))))
    return SIZE_MIN + span * np.sqrt(np.nan_to_num(w / top))


class BoundaryPlot:
    """One figure per run (or a preview of the data before a race).

    Parameters
    ----------
    plane : DecisionPlane
    sources : list of RunSources, optional
        The race's runs (their slots give labels, colours and runs); none: a preview.
    snapshot : bool
        Draw each run's current state once, with no live updates (the HTML export).
    """

    def __init__(
        self,
        plane: DecisionPlane,
        sources: list[RunSources] | None = None,
        *,
        snapshot: bool = False,
    ) -> None:
        self.plane = plane
        self.sources = [s for s in (sources or []) if s.slot is not None]
        self.side = grid_side(plane.points.shape[0])
        self.xs, self.ys, self.grid = plane.grid(self.side)
        self.window = plane.window()
        self.mapper = LinearColorMapper(palette=RdBu11, low=-F_RANGE, high=F_RANGE)
        self.figures: list[Any] = []
        self.images: list[ColumnDataSource] = []
        self.contours: list[Any] = []
        self.points: list[ColumnDataSource] = []
        self._drawn: list[tuple[int, bool] | None] = []
        self._next = 0
        self._free_at = -math.inf
        #: Redraws done and their seconds (diagnostics, the throughput benchmark).
        self.redraws = 0
        self.redraw_seconds = 0.0
        if not self.sources:
            self._add_figure(plane.title or "the data (press Start)", None, "preview")
            return
        for src in self.sources:
            self._add_figure(src.slot.label, src.slot.color, src.slot.run_id)
        if snapshot:
            for i in range(len(self.sources)):
                if self._state_key(i) is not None:  # (a run that failed to build: no model)
                    self._redraw(i)
        else:
            self.update(final=True)

    # -- figures -------------------------------------------------------------------
    def _add_figure(self, title: str, color: str | None, key: str) -> None:
        """One figure; its models are named ``boundary:<key>``, ``boundary-image:<key>``
        and ``boundary-points:<key>`` (``key``: the run id) for page scripts and tests."""
        x0, x1, y0, y1 = self.window
        fig = figure(
            title=title,
            width=380,
            height=360,
            x_range=(x0, x1),
            y_range=(y0, y1),
            match_aspect=True,
            tools="pan,wheel_zoom,box_zoom,reset,save",
            toolbar_location="above",
            sizing_mode="fixed",
            name=f"boundary:{key}",
        )
        if color is not None:
            fig.outline_line_color = color
            fig.outline_line_width = 4
            fig.title.text_color = color
        fig.grid.visible = False
        image = ColumnDataSource(
            {"image": [], "x": [], "y": [], "dw": [], "dh": []},
            name=f"boundary-image:{key}",
        )
        fig.image(
            image="image",
            x="x",
            y="y",
            dw="dw",
            dh="dh",
            source=image,
            color_mapper=self.mapper,
            alpha=0.45,
        )
        # The zero level; it starts from an all-positive grid (no line) and gets its data
        # on the run's first redraw.
        contour = fig.contour(
            self.xs,
            self.ys,
            np.ones((self.side, self.side)),
            levels=[0.0],
            line_color="black",
            line_width=2.5,
        )
        pts = self.plane.points
        labels = self.plane.labels
        points = ColumnDataSource(
            {
                "x": pts[:, 0],
                "y": pts[:, 1],
                "color": [LABEL_COLORS.get(float(v), "#555555") for v in labels],
                "size": np.full(pts.shape[0], SIZE_MIN + 1.0),
                "weight": np.zeros(pts.shape[0]),
            },
            name=f"boundary-points:{key}",
        )
        fig.scatter(
            "x",
            "y",
            size="size",
            source=points,
            fill_color="color",
            line_color="white",
            line_width=0.4,
            fill_alpha=0.75,
        )
        self.figures.append(fig)
        self.images.append(image)
        self.contours.append(contour)
        self.points.append(points)
        self._drawn.append(None)

    def layout(self) -> list:
        return list(self.figures)

    # -- live updates --------------------------------------------------------------
    def _state_key(self, i: int) -> tuple[int, bool] | None:
        run = self.sources[i].slot.run
        if run is None:
            return None
        return int(run.solver.iteration), bool(run.done)

    def update(self, final: bool = False) -> int:
        """Redraw runs whose state moved: one per call while the race goes (throttled),
        every pending one when ``final`` (the race has ended). Returns redraws done."""
        pending = [
            i
            for i in range(len(self.sources))
            if (key := self._state_key(i)) is not None and key != self._drawn[i]
        ]
        if not pending:
            return 0
        if final:
            for i in pending:
                self._redraw(i)
            return len(pending)
        now = time.perf_counter()
        if now < self._free_at:
            return 0
        # Round robin from the run after the last one drawn.
        i = min(pending, key=lambda j: (j - self._next) % len(self.sources))
        cost = self._redraw(i)
        self._next = (i + 1) % len(self.sources)
        self._free_at = time.perf_counter() + max(REDRAW_PERIOD, REDRAW_FACTOR * cost)
        return 1

    def _redraw(self, i: int) -> float:
        t0 = time.perf_counter()
        key = self._state_key(i)
        solver = self.sources[i].slot.run.solver
        state = solver.decision_state()
        if state is None:
            self._drawn[i] = key
            return 0.0
        Z = self.plane.values(self.grid, state).reshape(self.side, self.side)
        x0, x1, y0, y1 = self.window
        self.images[i].data = {
            "image": [Z],
            "x": [x0],
            "y": [y0],
            "dw": [x1 - x0],
            "dh": [y1 - y0],
        }
        if np.isfinite(Z).all():
            self.contours[i].set_data(contour_data(self.xs, self.ys, Z, [0.0]))
        weights = self.plane.weights(state)
        weights = np.asarray(weights, dtype=float)
        # One patch, two columns: the positions are never sent again.
        self.points[i].patch(
            {
                "size": [(slice(None), point_sizes(weights))],
                "weight": [(slice(None), weights)],
            }
        )
        self._drawn[i] = key
        dt = time.perf_counter() - t0
        self.redraws += 1
        self.redraw_seconds += dt
        return dt
