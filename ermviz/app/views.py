"""The dashboard's views: controls, live plots, results table, teaching view, export.

:class:`Dashboard` assembles them around one :class:`~ermviz.app.model.DashboardModel`
and one :class:`~ermviz.app.streaming.Streamer`. Served (``panel serve app.py``) it is a
:class:`panel.template.FastListTemplate` (:meth:`Dashboard.template`); in Jupyter
:meth:`Dashboard.panel` and each part (``controls``, ``toolbar``, ``plots``, ``teaching``,
``results``, ``export``) display after ``pn.extension()``.

Every widget callback is wrapped by :func:`guard`: an exception becomes a notification
(and, during a race, a run status) instead of a frozen page.

Size: over 800 lines because it holds every dashboard view; issue 12 (one home per
solver family) splits it along these jobs, and nothing here depends on the split.
"""

from __future__ import annotations

import asyncio
import functools
import html
import inspect
import math
import time
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import panel as pn
from bokeh.core.properties import value
from bokeh.embed import file_html
from bokeh.layouts import column, gridplot, row
from bokeh.models import (
    CDSView,
    ColumnDataSource,
    CustomJS,
    CustomJSTransform,
    DataRange1d,
    Div,
    GroupFilter,
    HoverTool,
    Legend,
    LegendItem,
    Range1d,
)
from bokeh.palettes import Blues256, linear_palette
from bokeh.plotting import figure
from bokeh.plotting.contour import contour_data
from bokeh.resources import INLINE
from bokeh.transform import transform

from ermviz import data as data_mod
from ermviz.app.model import (
    BUNDLED,
    MAX_UPLOAD_BYTES,
    PALETTE,
    RESULT_COLUMNS,
    THRESHOLDS,
    UPLOAD_PREFIX,
    DashboardModel,
    RunSpec,
    describe_dataset,
    is_teachable,
    one_line,
)
from ermviz.app.streaming import Geometry, RunSources, Streamer, geometry_for
from ermviz.app.upload import ChunkedUpload
from ermviz.errors import SettingError
from ermviz.methods import METHODS, STEP_RULES
from ermviz.problems import PROBLEMS
from ermviz.settings import Setting

#: Step types that can be marked on the certificate plots, with their marker.
STEP_MARKERS = {"away": "triangle", "pairwise": "diamond", "drop": "x"}
#: Height of each live plot (pixels).
PLOT_HEIGHT = 290
#: Seconds between two refreshes of the results table during a race.
TABLE_PERIOD = 1.0
_RACE_COLOURS = {"running": "#2ca02c", "paused": "#ff7f0e", "finished": "#1f77b4"}
#: Tab titles of the diagnostic plots (TracePlots' figures 3 to 5).
MORE_PLOTS = ("suboptimality", "step size", "active-set size")


def guard(model: DashboardModel, what: str) -> Callable:
    """Decorator: run a callback, turning any exception into a notification."""

    def wrap(fn: Callable) -> Callable:
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                try:
                    return await fn(*args, **kwargs)
                except Exception as exc:
                    model.notify(f"{what}: {one_line(exc)}")
                    return None

            return async_wrapper

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                model.notify(f"{what}: {one_line(exc)}")
                return None

        return wrapper

    return wrap


# ---------------------------------------------------------------------------------------
# Figures (plain Bokeh; the same builders serve the live page and the HTML export)


def _figure(title: str, x_label: str, y_label: str, log_x: bool, log_y: bool, **kw: Any):
    kw.setdefault("x_range", DataRange1d())
    kw.setdefault("y_range", DataRange1d())
    for rng in (kw["x_range"], kw["y_range"]):
        # Auto-ranged in the browser on every update; echoing each new start/end back to
        # the server (the default) cost ~100 websocket messages a second, measured.
        rng.syncable = False
    fig = figure(
        title=title,
        x_axis_type="log" if log_x else "linear",
        y_axis_type="log" if log_y else "linear",
        x_axis_label=x_label,
        y_axis_label=y_label,
        height=PLOT_HEIGHT,
        sizing_mode="stretch_width",
        min_width=360,
        tools="pan,wheel_zoom,box_zoom,reset,save",
        toolbar_location="above",
        **kw,
    )
    fig.title.text_font_size = "11pt"
    return fig


def _legend(fig, items: list[LegendItem]) -> Legend:
    legend = Legend(items=items, click_policy="hide", location="top_right")
    legend.label_text_font_size = "8pt"
    legend.spacing = 0
    legend.padding = 4
    legend.background_fill_alpha = 0.6
    fig.add_layout(legend)
    return legend


def _mirror_visible(renderers: list, attr: str, old: bool, new: bool) -> None:
    for r in renderers:
        if r.visible != new:
            r.visible = new


class TracePlots:
    """The five live plots of a race, one line per run in the run's colour.

    1. certificate vs iteration + 1 (log y), with away / pairwise / drop steps marked on
       demand; 2. certificate vs solver time (wall ``time_s`` or thread ``cpu_s``);
    3. suboptimality: objective minus the best objective seen by any run (computed in the
       browser, so it follows the best value as it improves); 4. step size; 5. active-set
       size. Iteration plots share their x range; hover shows the run and the values;
       clicking a legend entry hides that run's line (and its step markers).

    ``series`` holds one ``(label, colour, source)`` per place in the race; the figures
    keep their renderers from race to race and :meth:`show` relabels them, so Start sends
    the browser new data and labels rather than new figures.
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
    ) -> None:
        cert = certificate_kind.replace("_", " ")
        # Log axes need iteration + 1 (iteration 0 is the start point); linear ones do not.
        kx = "k1" if log_x else "iteration"
        it_label = "iteration + 1" if log_x else "iteration"
        tb = time_basis
        t_label = "solver wall time (s)" if tb == "time_s" else "solver thread CPU time (s)"
        it_range = DataRange1d()
        self.figures = [
            _figure(f"{cert} vs iteration", it_label, cert, log_x, True, x_range=it_range),
            _figure(f"{cert} vs solver time", t_label, cert, log_x, True),
            _figure(
                "suboptimality vs iteration",
                it_label,
                "objective − best seen",
                log_x,
                True,
                x_range=it_range,
            ),
            _figure("step size vs iteration", it_label, "step size", log_x, True, x_range=it_range),
            _figure(
                "active-set size vs iteration",
                it_label,
                "atoms in the active set",
                log_x,
                False,
                x_range=it_range,
            ),
        ]
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
                    args={"sources": [obj for _, _, _, obj in series]},
                    code="for (const s of sources) { s.change.emit(); }",
                )
            ]
        }
        columns = (
            (kx, "certificate"),
            (tb, "certificate"),
            (kx, transform("objective", subopt)),
            (kx, "step_size"),
            (kx, "active_size"),
        )
        # One legend, in the first plot: its entry for a run hides that run's lines (and
        # step markers) in all five plots. Measured: a legend re-renders whenever a source
        # of its items' renderers changes, i.e. on every stream. So each entry holds a
        # proxy renderer on a constant, empty source (it draws nothing, only gives the
        # entry its colour); a click toggles the proxy and a CustomJS mirrors its
        # visibility onto the run's real renderers, in the browser.
        self.items: list[LegendItem] = []
        self.proxies: list = []
        # One NaN point: nothing is drawn, but the legend has a row to draw its icon from.
        empty = ColumnDataSource({"x": [np.nan], "y": [np.nan]})
        self.renderers: list[list] = []
        hover_lines: list[list] = [[] for _ in self.figures]
        for label, color, cds, obj in series:
            mine = []
            for f, (fig, (x, y)) in enumerate(zip(self.figures, columns, strict=True)):
                source = obj if f == 2 else cds
                r = fig.line(x, y, source=source, color=color, line_width=2, name=label)
                mine.append(r)
                hover_lines[f].append(r)
                if show_steps and f < 2:
                    for step, marker in STEP_MARKERS.items():
                        mine.append(
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
            proxy = self.figures[0].line("x", "y", source=empty, color=color, line_width=2)
            # The targets go by id, not as CustomJS args: a legend rebuilds its items (new
            # canvases and DOM nodes) on every change of any model its items reach, and args
            # holding the lines reach their streaming sources, i.e. it rebuilt on each
            # stream (measured: ~10 % of chromium's CPU during a race).
            proxy.js_on_change(
                "visible",
                CustomJS(
                    args={"ids": [r.id for r in mine]},
                    code=(
                        "for (const id of ids) {"
                        "  const r = cb_obj.document.get_model_by_id(id);"
                        "  if (r != null) { r.visible = cb_obj.visible; } }"
                    ),
                ),
            )
            # ... and on the server: lines of a diagnostic tab not on the page yet get
            # the same visibility when that tab is drawn.
            proxy.on_change("visible", functools.partial(_mirror_visible, mine))
            self.proxies.append(proxy)
            self.items.append(LegendItem(label=value(label), renderers=[proxy]))
            self.renderers.append(mine)
        common = [("run", "$name"), ("iteration", "@iteration{0,0}"), ("time", f"@{tb}{{0.000}} s")]
        tips = [
            [*common, ("certificate", "@certificate{%.3e}")],
            [*common, ("certificate", "@certificate{%.3e}")],
            [
                ("run", "$name"),
                ("iteration", "@iteration{0,0}"),
                ("objective", "@objective{%.10g}"),
            ],
            [*common, ("step size", "@step_size{%.3e}")],
            [*common, ("active set", "@active_size")],
        ]
        hover_fmt = {"@certificate": "printf", "@objective": "printf", "@step_size": "printf"}
        for fig, lines, tip in zip(self.figures, hover_lines, tips, strict=True):
            if lines:
                fig.add_tools(HoverTool(renderers=lines, tooltips=tip, formatters=hover_fmt))
        self.legend = _legend(self.figures[0], [])
        self.show([label for label, *_ in series])

    @property
    def size(self) -> int:
        return len(self.renderers)

    def show(self, labels: list[str | None]) -> None:
        """Show series ``i`` under ``labels[i]``; hide the others (and ``None`` labels)."""
        labels = (list(labels) + [None] * self.size)[: self.size]
        for i, label in enumerate(labels):
            for r in [self.proxies[i], *self.renderers[i]]:
                if r.visible != (label is not None):
                    r.visible = label is not None
                if label is not None and r.name != label:
                    r.name = label
            if label is not None and self.items[i].label != value(label):
                self.items[i].label = value(label)
        items = [self.items[i] for i, label in enumerate(labels) if label]
        # Replacing the list changes the document's model graph: only when it differs.
        if [id(x) for x in self.legend.items] != [id(x) for x in items]:
            self.legend.items = items


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
    Diamond: the l1 ball of R^2 for l1-constrained logistic regression.
    """

    TITLES: ClassVar[dict[str, str]] = {
        "triangle": "SVM dual on 3 points: the simplex is a triangle",
        "tetrahedron": "SVM dual on 4 points: the tetrahedron seen from above e4",
        "diamond": "l1-constrained logistic regression: the l1 ball of radius {r:g}",
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
        self.sources = list(sources or [])
        xs, ys, Z = geometry.objective_grid(problem)
        self.levels = contour_levels(Z)
        title = self.TITLES[geometry.kind].format(r=geometry.radius)
        self.main, _ = self._figure(title, (xs, ys, Z), snapshot, width=560)
        self.zoom = None
        self.zoom_contour = None
        self._window: tuple[float, float, float, float] | None = None
        self._refined_at = -math.inf
        if self.sources:
            self.zoom, self.zoom_contour = self._figure(
                "zoom on the recent iterates (follows the race)",
                (xs, ys, Z),
                snapshot,
                width=480,
                zoom=True,
            )
            self.track(final=True)

    def _figure(self, title, grid, snapshot: bool, width: int, zoom: bool = False):
        g = self.geometry
        ranges = {"x_range": Range1d(0, 1), "y_range": Range1d(0, 1)} if zoom else {}
        fig = figure(
            title=title,
            match_aspect=not zoom,
            height=480,
            width=width,
            sizing_mode="fixed",
            tools="pan,wheel_zoom,box_zoom,reset,save",
            toolbar_location="above",
            **ranges,
        )
        fig.grid.visible = False
        if g.kind != "diamond":
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
        outline = g.atoms[g.outline + g.outline[:1]]
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
        labels = ColumnDataSource({"x": g.atoms[:, 0], "y": g.atoms[:, 1], "text": g.atom_labels})
        fig.text(
            "x", "y", text="text", source=labels, x_offset=6, y_offset=-6, text_font_size="10pt"
        )
        fig.scatter(g.atoms[:, 0], g.atoms[:, 1], size=6, color="black")
        items = []
        for k, src in enumerate(self.sources):
            color = src.slot.color
            path, current, active = src.path, src.current, src.active
            if snapshot:
                path = ColumnDataSource(dict(path.data))
                current = ColumnDataSource(dict(current.data))
                active = ColumnDataSource(dict(active.data))
            r_line = fig.line("x", "y", source=path, color=color, line_width=2, line_alpha=0.8)
            r_pts = fig.scatter("x", "y", source=path, color=color, size=4 if not zoom else 6)
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
            fig.add_tools(
                HoverTool(
                    renderers=[r_pts],
                    tooltips=[("run", src.slot.label), ("iteration", "@iteration")],
                )
            )
        if items:
            _legend(fig, items)
            fig.legend.location = "top_left"
        return fig, contour

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
        full = float(np.ptp(self.geometry.atoms, axis=0).max())
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


# ---------------------------------------------------------------------------------------
# Widgets built from Setting declarations


def setting_widget(
    s: Setting, value: Any, on_change: Callable[[str, Any], None], model: DashboardModel
) -> pn.widgets.Widget:
    """A widget for the declared setting ``s``; invalid input is reverted and notified."""
    default = "derived" if s.default is None else s.default
    tip = f"{s.help} (allowed: {s.range_text()}; default: {default})"
    common = {"label": s.name, "description": tip, "sizing_mode": "stretch_width"}
    if s.kind == "bool":
        # Checkboxes take no description: the help goes in the label's hover title.
        w = pn.widgets.Checkbox(value=bool(value), label=s.name, sizing_mode="stretch_width")
    elif s.kind == "choice":
        w = pn.widgets.Select(options=list(s.choices or ()), value=value, **common)
    elif s.kind == "int":
        w = pn.widgets.IntInput(value=value, **common)
    elif s.kind == "float":
        w = pn.widgets.FloatInput(
            value=value, placeholder="derived" if s.default is None else "", **common
        )
    else:
        w = pn.widgets.TextInput(value="" if value is None else str(value), **common)
    reverting = {"on": False}

    def changed(event: Any) -> None:
        if reverting["on"]:
            return
        try:
            on_change(s.name, event.new)
        except SettingError as exc:
            model.notify(str(exc))
            reverting["on"] = True
            try:
                w.value = event.old
            finally:
                reverting["on"] = False
        except Exception as exc:
            model.notify(f"{s.name}: {one_line(exc)}")

    w.param.watch(changed, "value")
    return w


# ---------------------------------------------------------------------------------------
# The dashboard


class Dashboard:
    """One session's dashboard: the model, the streamer and every view of them.

    Parameters
    ----------
    model : DashboardModel, optional
        Defaults to a fresh model on the default race (wdbc, FW vs AFW vs PFW).
    """

    def __init__(self, model: DashboardModel | None = None) -> None:
        self.model = model or DashboardModel()
        self.streamer = Streamer(self.model)
        self.streamer.listeners.append(self._after_pull)
        self._table_at = 0.0
        self._statuses: tuple = ()
        self._starting = False
        self._preview_key: tuple | None = None
        self._notebook_root: pn.viewable.Viewable | None = None
        self._plots_kind = ""
        self._told: set[str] = set()
        self._build_controls()
        self._build_toolbar()
        self._build_results()
        self._build_plots()
        self._build_teaching()
        self._build_export()
        from ermviz.app.results import ResultsModel, ResultsView

        # A sweep's results folder (never part of the URL: see ermviz.app.results).
        self.sweep_results = ResultsView(
            ResultsModel(notifier=lambda level, message: self.model.notify(message, level))
        )
        m = self.model
        m.param.watch(self._on_race_options, ["log_x", "time_basis", "show_steps"])
        m.param.watch(lambda *_: self._rebuild_runs(), ["specs", "problem"])
        m.param.watch(lambda *_: self._refresh_labels(), ["revision"])
        m.param.watch(lambda *_: self._rebuild_problem_settings(), ["problem"])
        m.param.watch(lambda *_: self._sync_problem_settings(), ["problem_settings"])
        m.param.watch(lambda *_: self._sync_dataset_widget(), ["dataset"])
        m.param.watch(lambda *_: self._sync_tol_widget(), ["tol"])
        m.param.watch(
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
        self._refresh_teaching_preview()
        self.refresh(force=True)

    # -- controls --------------------------------------------------------------------
    def _build_controls(self) -> None:
        m = self.model
        g = functools.partial(guard, m)
        self.dataset_select = pn.widgets.Select(
            label="Dataset",
            sizing_mode="stretch_width",
            description="Bundled sets, catalog files found on this server, and your uploads. "
            "Picking one applies its suggested problem, settings and budgets.",
        )
        self._sync_dataset_widget()
        self.dataset_select.param.watch(g("dataset")(self._on_dataset_widget), "value")
        self.upload = ChunkedUpload(
            on_file=g("upload")(self._on_upload),
            on_error=m.notify,
            max_bytes=MAX_UPLOAD_BYTES,
            accept=".svm,.libsvm,.txt,.dat,.data,.csv,.t,.scale",
            prompt="Drop a LIBSVM or CSV file here, or click to choose one",
            sizing_mode="stretch_width",
            margin=(5, 10),  # aligned with the widgets above and below
        )
        self.problem_select = pn.widgets.Select.from_param(
            m.param.problem,
            label="Problem",
            sizing_mode="stretch_width",
        )
        self.problem_select.options = {
            f"{name}: {cls.title}": name for name, cls in PROBLEMS.items()
        }
        self.problem_settings = pn.Column(sizing_mode="stretch_width", margin=0)
        self._rebuild_problem_settings()
        prep = pn.Column(
            pn.widgets.Checkbox.from_param(m.param.standardize, label="standardize features"),
            pn.widgets.Checkbox.from_param(m.param.normalize, label="normalize rows (unit l2)"),
            pn.Row(
                pn.widgets.FloatInput.from_param(
                    m.param.test_size,
                    label="test split (0 = none)",
                    step=0.05,
                    sizing_mode="stretch_width",
                ),
                pn.widgets.IntInput.from_param(
                    m.param.seed, label="seed", sizing_mode="stretch_width"
                ),
                sizing_mode="stretch_width",
            ),
            sizing_mode="stretch_width",
            margin=0,
        )
        self.tol_input = pn.widgets.TextInput(
            label="tol (certificate)",
            value=f"{m.tol:g}",
            sizing_mode="stretch_width",
            description="Stop a run when its certificate (FW gap) is at most tol",
        )
        self.tol_input.param.watch(g("tol")(self._on_tol), "value")
        budgets = pn.Row(
            self.tol_input,
            pn.widgets.IntInput.from_param(
                m.param.max_iter, label="max iter", sizing_mode="stretch_width"
            ),
            pn.widgets.FloatInput.from_param(
                m.param.max_time, label="max time (s)", sizing_mode="stretch_width"
            ),
            sizing_mode="stretch_width",
        )
        teaching = pn.Column(
            pn.widgets.Checkbox.from_param(
                m.param.animate, label="teaching mode: keep iterates, animate (toy problems)"
            ),
            pn.widgets.FloatSlider.from_param(
                m.param.step_delay,
                label="seconds per step (teaching)",
                step=0.01,
                sizing_mode="stretch_width",
            ),
            sizing_mode="stretch_width",
            margin=0,
        )
        self.runs_column = pn.Column(sizing_mode="stretch_width", margin=0)
        self.add_button = pn.widgets.Button(label="+ Add run", color="default")
        self.add_button.on_click(g("add run")(lambda e: m.add_run()))
        self._rebuild_runs()
        self.controls = pn.Column(
            "### Data",
            self.dataset_select,
            pn.pane.Markdown(
                f"Or upload a LIBSVM or CSV file (CSV: label in the last column; at most "
                f"{MAX_UPLOAD_BYTES // 2**20} MB):",
                margin=(0, 10),
            ),
            self.upload,
            "### Problem",
            self.problem_select,
            self.problem_settings,
            "### Preprocessing",
            prep,
            "### Budgets",
            budgets,
            teaching,
            "### Racing runs",
            self.runs_column,
            self.add_button,
            sizing_mode="stretch_width",
        )

    def _dataset_groups(self) -> dict[str, dict[str, str]]:
        m = self.model
        groups = {
            "Bundled": {describe_dataset(n): n for n in m.dataset_groups["bundled"]},
            "Catalog (on disk)": {describe_dataset(n): n for n in m.dataset_groups["catalog"]},
            "Uploaded": {describe_dataset(n): n for n in m.uploads},
        }
        return {k: v for k, v in groups.items() if v}

    def _sync_dataset_widget(self) -> None:
        groups = self._dataset_groups()
        if self.dataset_select.groups != groups:
            self.dataset_select.groups = groups
        if self.dataset_select.value != self.model.dataset:
            self.dataset_select.value = self.model.dataset

    def _on_dataset_widget(self, event: Any) -> None:
        if event.new is not None and event.new != self.model.dataset:
            self.model.dataset = event.new

    def _on_upload(self, filename: str, content: bytes) -> None:
        name = self.model.add_upload(filename, content)
        if name is not None:
            self._sync_dataset_widget()
            self.model.notify(f"loaded {name[len(UPLOAD_PREFIX) :]}; it is selected", "success")

    def _on_tol(self, event: Any) -> None:
        try:
            value = float(event.new)
            if not (math.isfinite(value) and value > 0):
                raise ValueError
        except (TypeError, ValueError):
            self.model.notify(f"tol={event.new!r} is not a number > 0 (e.g. 1e-8)")
            self.tol_input.value = f"{self.model.tol:g}"
            return
        self.model.tol = value

    def _sync_tol_widget(self) -> None:
        try:
            current = float(self.tol_input.value)
        except ValueError:
            current = None
        if current != self.model.tol:
            self.tol_input.value = f"{self.model.tol:g}"

    def _rebuild_problem_settings(self) -> None:
        """Widgets for the problem's declared settings (a new problem: new widgets)."""
        m = self.model
        self._problem_widgets = {
            s.name: setting_widget(s, m.problem_value(s.name), m.set_problem_setting, m)
            for s in m.problem_declared()
        }
        widgets = list(self._problem_widgets.values())
        self.problem_settings.objects = [
            pn.Row(*widgets[i : i + 2], sizing_mode="stretch_width")
            for i in range(0, len(widgets), 2)
        ]

    def _sync_problem_settings(self) -> None:
        """Show values set from elsewhere (a preset, a link) without rebuilding the widgets,
        which would take the focus from the one being edited."""
        for name, widget in self._problem_widgets.items():
            try:
                value = self.model.problem_value(name)
            except KeyError:  # the problem changes next; its widgets are rebuilt then
                continue
            if widget.value != value and not (value is None and widget.value in ("", None)):
                widget.value = value

    def _rebuild_runs(self) -> None:
        self.runs_column.objects = [
            self._run_card(i, spec) for i, spec in enumerate(self.model.specs)
        ]
        self._refresh_labels()

    def _run_card(self, index: int, spec: RunSpec) -> pn.Card:
        m = self.model
        g = functools.partial(guard, m)
        methods = m.methods_for_problem() or list(METHODS)
        if spec.method not in methods:
            # The model fits the race to a new problem; a run set directly (Python API) that
            # still does not solve it is shown as is, and Start reports why it cannot run.
            methods = [*methods, spec.method]
        method = pn.widgets.Select(
            label="method",
            options={f"{k}: {METHODS[k].title}": k for k in methods if k in METHODS},
            value=spec.method,
            sizing_mode="stretch_width",
        )
        step = pn.widgets.Select(
            label="step rule",
            options={
                f"{k}: {STEP_RULES[k].title}"[:60]: k for k in METHODS[spec.method].step_rules
            },
            value=spec.step,
            sizing_mode="stretch_width",
        )
        settings = pn.Column(sizing_mode="stretch_width", margin=0)

        def fill_settings() -> None:
            ws = [
                setting_widget(s, spec.value_of(s.name), spec.set_setting, m)
                for s in spec.declared()
            ]
            settings.objects = [
                pn.Row(*ws[i : i + 2], sizing_mode="stretch_width") for i in range(0, len(ws), 2)
            ]

        def on_method(event: Any) -> None:
            spec.method = event.new
            step.options = {
                f"{k}: {STEP_RULES[k].title}"[:60]: k for k in METHODS[spec.method].step_rules
            }
            step.value = spec.step
            fill_settings()

        def on_step(event: Any) -> None:
            if event.new is not None:
                spec.step = event.new
                fill_settings()

        method.param.watch(g("method")(on_method), "value")
        step.param.watch(g("step rule")(on_step), "value")
        fill_settings()
        dup = pn.widgets.Button(label="Duplicate", color="light", width=95)
        rem = pn.widgets.Button(label="Remove", color="light", width=95)
        dup.on_click(g("duplicate")(lambda e: m.duplicate_run(m.specs.index(spec))))
        rem.on_click(g("remove")(lambda e: m.remove_run(m.specs.index(spec))))
        color = PALETTE[index % len(PALETTE)]
        card = pn.Card(
            pn.Row(method, step, sizing_mode="stretch_width"),
            settings,
            pn.Row(dup, rem),
            title=f"run {index + 1}",
            header_background=color,
            header_color="white",
            sizing_mode="stretch_width",
            margin=(4, 0),
        )
        return card

    def _refresh_labels(self) -> None:
        labels = self.model.labels()
        for card, label in zip(self.runs_column.objects, labels, strict=False):
            if card.title != label:
                card.title = label

    # -- toolbar ---------------------------------------------------------------------
    def _build_toolbar(self) -> None:
        g = functools.partial(guard, self.model)
        self.start_button = pn.widgets.Button(label="Start", color="primary", width=110)
        self.pause_button = pn.widgets.Button(label="Pause", color="warning", width=110)
        self.stop_button = pn.widgets.Button(label="Stop", color="danger", width=110)
        self.reset_button = pn.widgets.Button(label="Reset", color="default", width=110)
        self.start_button.on_click(g("start")(self.start))
        self.pause_button.on_click(g("pause")(self.toggle_pause))
        self.stop_button.on_click(g("stop")(self.stop))
        self.reset_button.on_click(g("reset")(self.reset))
        self.race_text = pn.pane.HTML("", margin=(12, 6), css_classes=["race-status"])
        self.status_strip = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10))
        self.toolbar = pn.Column(
            pn.Row(
                self.start_button,
                self.pause_button,
                self.stop_button,
                self.reset_button,
                self.race_text,
                sizing_mode="stretch_width",
            ),
            self.status_strip,
            sizing_mode="stretch_width",
        )

    async def start(self, event: Any = None) -> None:
        """Start a new race: build the runs off the event loop, then launch and stream."""
        if self._starting:
            return
        if not self.model.specs:
            self.model.notify("add at least one run before starting", "warning")
            return
        self._starting = True
        self.start_button.disabled = True
        try:
            self.model.stop(wait=0.5)
            loop = asyncio.get_running_loop()
            # Loading data and compiling (or loading) kernels may take seconds on big
            # sets: a worker thread keeps the page responsive meanwhile.
            slots = await loop.run_in_executor(None, self.model.prepare)
            self.launch(slots)
        finally:
            self._starting = False
            self.start_button.disabled = False

    def start_sync(self) -> None:
        """Start a new race synchronously (notebooks, tests)."""
        self.model.stop(wait=0.5)
        if not self.model.specs:
            self.model.notify("add at least one run before starting", "warning")
            return
        self.launch(self.model.prepare())

    def launch(self, slots: list) -> None:
        """Show the new race, then start its runs (in that order: building figures holds
        the GIL, and a run started earlier would count that wait as solver time)."""
        with pn.io.hold(freeze=True):
            self.model.launch(slots, start=False)
            grew = self.streamer.attach(slots, self.model.problem_obj)
            if grew or self._plots_kind != self._certificate_kind():
                self._rebuild_plots()
            else:
                self._show_race()  # same figures: new labels, emptied sources
            self._rebuild_teaching()
            self.refresh(force=True)
        self.model.start_runs()
        self.streamer.start()

    def toggle_pause(self, event: Any = None) -> None:
        if self.model.paused:
            self.model.resume()
            self.streamer.start()
        else:
            self.model.pause()
        self.refresh(force=True)

    def stop(self, event: Any = None) -> None:
        self.model.stop(wait=0.5)
        # One more pull delivers every run's final row; the streamer then goes idle.
        self.streamer.start()
        self.refresh(force=True)

    def reset(self, event: Any = None) -> None:
        self.model.reset()
        self.streamer.stop()
        self.streamer.attach([])
        self._show_race()
        self._rebuild_teaching()
        self.refresh(force=True)

    def _after_pull(self) -> None:
        self.refresh()
        if self.teaching_plot is not None and self.streamer.geometry is not None:
            self.teaching_plot.track(final=not self.model.active)
        if self._notebook_root is not None and not _served():
            # In Jupyter, Bokeh models changed directly reach the page only when pushed.
            pn.io.push_notebook(self._notebook_root)

    def refresh(self, force: bool = False) -> None:
        """Update the race status, the per-run status strip, the buttons and (at most every
        TABLE_PERIOD seconds, or when a status changed) the results table."""
        m = self.model
        statuses = tuple((s.run_id, s.status) for s in m.slots)
        changed = statuses != self._statuses
        self._statuses = statuses
        race = m.race_status
        # A static coloured dot, not a spinner: an endless CSS animation keeps the browser
        # repainting (measured: it competes with the solvers for the same cores).
        dot = _RACE_COLOURS.get(race, "#999")
        self.race_text.object = (
            f'<span class="race-status-text" data-status="{race}">'
            f'<span style="color:{dot};font-size:1.3em">●</span> race: <b>{race}</b>'
            f"{f' ({len(m.slots)} runs)' if m.slots else ''}</span>"
        )
        self.pause_button.label = "Resume" if race == "paused" else "Pause"
        self.pause_button.disabled = race not in ("running", "paused")
        self.stop_button.disabled = race not in ("running", "paused")
        self.reset_button.disabled = race == "idle"
        if changed or force:
            self.status_strip.object = self._status_html()
            for slot in m.slots:
                # A run that failed while racing (solver error, NaN) is also notified once;
                # runs that could not be built were notified by the model already.
                if (
                    slot.status == "error"
                    and slot.run is not None
                    and slot.run_id not in self._told
                ):
                    self._told.add(slot.run_id)
                    m.notify(f"{slot.label}: {slot.message}")
        now = time.perf_counter()
        if changed or force or now - self._table_at >= TABLE_PERIOD:
            self._table_at = now
            self._update_table()

    def _status_html(self) -> str:
        parts = []
        for s in self.model.slots:
            msg = html.escape(s.message)
            parts.append(
                f'<span class="run-status" data-run-id="{html.escape(s.run_id)}" '
                f'data-label="{html.escape(s.label)}" data-status="{s.status}" '
                f'data-rows="{len(s.run.trace) if s.run is not None else 0}" title="{msg}" '
                f'style="display:inline-block;margin:2px 10px 2px 0;padding:2px 8px;'
                f'border-left:6px solid {s.color};background:#f5f5f5">'
                f"{html.escape(s.label)}: <b>{s.status}</b></span>"
            )
        return "".join(parts) or '<span class="run-status-empty">No race yet: press Start.</span>'

    # -- plots -----------------------------------------------------------------------
    def _build_plots(self) -> None:
        m = self.model
        self.plot_options = pn.Row(
            pn.widgets.Checkbox.from_param(m.param.log_x, label="log x axes"),
            pn.widgets.RadioButtonGroup.from_param(
                m.param.time_basis,
                options={"wall time": "time_s", "CPU time": "cpu_s"},
                color="primary",
            ),
            pn.widgets.Checkbox.from_param(
                m.param.show_steps, label="mark away ▲ / pairwise ◆ / drop ✕ steps"
            ),
            sizing_mode="stretch_width",
        )
        self.plot_box = pn.Row(sizing_mode="stretch_width")
        # The results table and the three diagnostic plots share one place: only the shown
        # tab is in the page (dynamic tabs), and the table is shown first, so the browser
        # repaints two live plots, not five. Measured on 2 cores with the browser beside
        # the server: each live plot cost chromium ~8 % of a core at ~3 refreshes a second,
        # CPU the solvers then lack. (A FlexBox holding fewer than five plots lost its
        # layout in chromium, hence the plain Row.)
        self.more_plots = pn.Tabs(dynamic=True, sizing_mode="stretch_width")
        self.streamer.ensure_pool(max(3, len(m.specs)))
        self._rebuild_plots()
        self.plots = pn.Column(
            self.plot_options, self.plot_box, self.more_plots, sizing_mode="stretch_width"
        )

    def _on_race_options(self, *events: Any) -> None:
        try:
            self._rebuild_plots()
        except Exception as exc:
            self.model.notify(f"plot options: {one_line(exc)}")

    def _certificate_kind(self) -> str:
        return PROBLEMS[self.model.problem].certificate_kind

    def _rebuild_plots(self) -> None:
        """New figures over every pooled source (first build, plot options, a bigger race)."""
        m = self.model
        series = [
            (f"run {src.index + 1}", PALETTE[src.index % len(PALETTE)], src.trace, src.objective)
            for src in self.streamer.pool
        ]
        self._plots_kind = self._certificate_kind()
        self.trace_plots = TracePlots(
            series,
            self.streamer.best,
            log_x=m.log_x,
            time_basis=m.time_basis,
            show_steps=m.show_steps,
            certificate_kind=self._plots_kind,
        )
        self.figures = self.trace_plots.figures
        self._show_race()
        self.plot_box.objects = [
            # Two plots per row on wide screens, one on narrow ones (flex-wrap); the
            # stylesheet is needed because stretch_width alone forces a full-width item.
            pn.pane.Bokeh(f, sizing_mode="stretch_width", min_width=380)
            for f in self.figures[:2]
        ]
        active = self.more_plots.active
        self.more_plots[:] = [
            ("summary", self.results),
            *(
                (title, pn.pane.Bokeh(f, sizing_mode="stretch_width", min_width=380))
                for title, f in zip(MORE_PLOTS, self.figures[2:], strict=True)
            ),
        ]
        self.more_plots.active = active

    def _show_race(self) -> None:
        """Label the plotted lines after the race's runs; hide lines without a run."""
        self.trace_plots.show(
            [
                src.slot.label if src.slot is not None and src.slot.run is not None else None
                for src in self.streamer.pool
            ]
        )

    # -- teaching view ---------------------------------------------------------------
    def _build_teaching(self) -> None:
        self.teaching_note = pn.pane.Markdown(sizing_mode="stretch_width")
        self.teaching_row = pn.Row(sizing_mode="stretch_width")
        self.teaching = pn.Column(
            self.teaching_note, self.teaching_row, sizing_mode="stretch_width"
        )
        self.teaching_plot: TeachingPlot | None = None

    def _teaching_help(self, live: bool) -> str:
        base = (
            "Each run's path of iterates over the feasible set, on contour lines of the "
            "objective; rings mark the vertices in each run's current active set. Vanilla FW "
            "can only move toward a vertex, so near a face it zig-zags; away steps (AFW) and "
            "pairwise steps (PFW) move weight off bad vertices and go straight in. The right "
            "plot zooms on the recent iterates."
        )
        if live:
            return base
        return (
            base + "\n\nPick `toy-simplex-3` (triangle), `toy-simplex-4` (tetrahedron) or "
            "`toy-2d` (l1 diamond): teaching mode turns on; then press Start."
        )

    def _show_teaching(self, plot: TeachingPlot | None, live: bool) -> None:
        self.teaching_plot = plot
        if plot is not None or self.teaching_row.objects:
            # (Setting an empty row again would still re-render it.)
            self.teaching_row.objects = [pn.pane.Bokeh(f) for f in plot.layout()] if plot else []
        self.teaching_note.object = self._teaching_help(live)

    def _maybe_teachable(self) -> bool:
        """Cheap test before building a preview: only tiny problems can be drawn, so a
        large dataset is never loaded on the event loop just to find that out."""
        m = self.model
        if not m.animate or m.dataset in m.uploads:
            return m.animate  # uploads are loaded already
        if m.dataset in BUNDLED:
            n, p = BUNDLED[m.dataset].n, BUNDLED[m.dataset].p
        else:
            entry = data_mod.catalog().get(m.dataset)
            if entry is None:
                return False
            n, p = entry.n, entry.p
        return (m.problem == "svm-dual" and n <= 4) or (m.problem == "logreg-l1" and p <= 2)

    def _refresh_teaching_preview(self) -> None:
        """Draw the feasible set and contours of the configured toy problem before a race."""
        m = self.model
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
        geometry = geometry_for(problem) if problem is not None and is_teachable(problem) else None
        self._show_teaching(TeachingPlot(geometry, problem) if geometry else None, live=False)

    def _rebuild_teaching(self) -> None:
        geometry = self.streamer.geometry
        problem = self.model.problem_obj
        if geometry is None or problem is None:
            self._preview_key = None
            self._refresh_teaching_preview()
            return
        self._show_teaching(TeachingPlot(geometry, problem, self.streamer.sources), live=True)

    # -- results ---------------------------------------------------------------------
    def _build_results(self) -> None:
        # A plain HTML table, rebuilt at most once a second: measured, a Tabulator update
        # cost ~0.2 s of the event loop (pandas Styler and string arrays), time the solver
        # threads then waited for the GIL.
        self.table = pn.pane.HTML(
            self._results_html(), sizing_mode="stretch_width", css_classes=["ermviz-results"]
        )
        self.results = pn.Column(
            pn.pane.Markdown(
                "**Results** — time columns: solver seconds until the certificate first fell to "
                "each threshold; test accuracy needs a test split.",
                margin=(0, 10),
            ),
            self.table,
            sizing_mode="stretch_width",
        )

    def _results_html(self) -> str:
        """The results table: one row per run, numbers formatted, NaN shown as "—"."""

        def fmt(v: Any, spec: str) -> str:
            if v is None or (isinstance(v, float) and math.isnan(v)):
                return "—"
            return format(v, spec)

        formats = {
            "time_s": ".3f",
            "cpu_s": ".3f",
            "certificate": ".3e",
            "objective": ".10g",
            "test_accuracy": ".4f",
            **{f"t<={eps:.0e}": ".3f" for eps in THRESHOLDS},
        }
        head = "".join(f"<th>{html.escape(c)}</th>" for c in RESULT_COLUMNS)
        body = []
        for result in self.model.result_rows():
            cells = []
            for c in RESULT_COLUMNS:
                v = result[c]
                text = fmt(v, formats[c]) if c in formats else html.escape(str(v))
                style = f' style="border-left:6px solid {result["color"]}"' if c == "run" else ""
                cells.append(f"<td{style}>{text}</td>")
            body.append("<tr>" + "".join(cells) + "</tr>")
        return (
            '<div style="overflow-x:auto"><table class="ermviz-results" '
            'style="border-collapse:collapse;font-size:0.85em;white-space:nowrap">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
            "<style>.ermviz-results th,.ermviz-results td{padding:3px 8px;"
            "border-bottom:1px solid #ddd;text-align:right}"
            ".ermviz-results td:nth-child(-n+3),.ermviz-results th:nth-child(-n+3),"
            ".ermviz-results td:last-child{text-align:left}</style>"
        )

    def _update_table(self) -> None:
        self.table.object = self._results_html()

    # -- export ----------------------------------------------------------------------
    def _build_export(self) -> None:
        m = self.model
        self.csv_download = pn.widgets.FileDownload(
            callback=guard(m, "CSV export")(m.export_csv),
            filename="ermviz-traces.csv",
            label="Traces (CSV)",
            color="primary",
            width=200,
        )
        self.parquet_download = pn.widgets.FileDownload(
            callback=guard(m, "Parquet export")(m.export_parquet),
            filename="ermviz-traces.parquet",
            label="Traces (Parquet)",
            color="primary",
            width=200,
        )
        self.html_download = pn.widgets.FileDownload(
            callback=guard(m, "HTML export")(self.export_html),
            filename="ermviz-figures.html",
            label="Figures (standalone HTML)",
            color="primary",
            width=220,
        )
        self.export = pn.Column(
            pn.pane.Markdown(
                "Download every run's whole trace (one row per recorded iterate; stopped runs "
                "keep theirs), or the current figures as one standalone HTML file that opens "
                "offline. Each plot's toolbar also saves it as PNG.",
                sizing_mode="stretch_width",
            ),
            pn.Row(self.csv_download, self.parquet_download, self.html_download),
            sizing_mode="stretch_width",
        )

    def export_html(self):
        """The current figures (and results) as one standalone HTML file (Bokeh inline)."""
        import io

        m = self.model
        snapshot = [
            (
                s.slot.label,
                s.slot.color,
                ColumnDataSource(dict(s.trace.data)),
                ColumnDataSource(dict(s.objective.data)),
            )
            for s in self.streamer.sources
            if s.slot.run is not None
        ]
        best = ColumnDataSource(dict(self.streamer.best.data))
        figs = TracePlots(
            snapshot,
            best,
            log_x=m.log_x,
            time_basis=m.time_basis,
            show_steps=m.show_steps,
            certificate_kind=self._certificate_kind(),
        ).figures
        for f in figs:
            f.sizing_mode = "fixed"
            f.width = 560
        parts = [
            Div(
                text=f"<h2>ermviz race on {html.escape(m.dataset)} ({html.escape(m.problem)})</h2>"
            ),
            gridplot([figs[i : i + 2] for i in range(0, len(figs), 2)], toolbar_location="right"),
        ]
        if self.streamer.geometry is not None and m.problem_obj is not None:
            plot = TeachingPlot(
                self.streamer.geometry, m.problem_obj, self.streamer.sources, snapshot=True
            )
            parts.append(row(*plot.layout()))
        parts.append(Div(text=m.results().to_html(index=False, float_format=lambda v: f"{v:.6g}")))
        page = file_html(column(*parts), resources=INLINE, title="ermviz figures")
        return io.BytesIO(page.encode("utf-8"))

    # -- assembly --------------------------------------------------------------------
    def tabs(self) -> pn.Tabs:
        return pn.Tabs(
            ("Race", self.plots),
            ("Teaching view", self.teaching),
            ("Export", self.export),
            ("Results", self.sweep_results.panel),
            dynamic=False,
            sizing_mode="stretch_width",
        )

    def panel(self) -> pn.viewable.Viewable:
        """The whole dashboard as one layout (for Jupyter; no template)."""
        self._notebook_root = pn.Row(
            pn.Column(self.controls, width=400),
            pn.Column(self.toolbar, self.tabs(), sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
        )
        return self._notebook_root

    def template(self) -> pn.template.FastListTemplate:
        """The served page: controls in the sidebar, toolbar and tabs in the main area."""
        return pn.template.FastListTemplate(
            title="ermviz · FW race lab",
            sidebar=[self.controls],
            main=[pn.Column(self.toolbar, self.tabs(), sizing_mode="stretch_width")],
            sidebar_width=420,
            accent="#1f77b4",
            main_layout=None,
        )


def _served() -> bool:
    """True inside a ``panel serve`` session (False in Jupyter or plain Python)."""
    return pn.state.curdoc is not None and pn.state.curdoc.session_context is not None


def build_dashboard(query: str | None = None) -> Dashboard:
    """A dashboard for the current session, configured from ``query`` (a URL query string).

    In a server session the query defaults to the page's URL, the URL follows every
    configuration change afterwards, and closing the session stops its runs.
    """
    from ermviz.app import urlstate

    dash = Dashboard()
    served = _served()
    location = pn.state.location if served else None
    if query is None and location is not None:
        query = location.search
    if query:
        # A toast sent before the page has rendered is lost: report a bad link on load.
        problem = urlstate.load(dash.model, query, report=not served)
        if problem is not None:

            def rejected() -> None:
                dash.model.notify(problem)
                urlstate.write(dash.model, location)  # the URL shows what the page shows

            pn.state.onload(rejected)
    if location is not None:
        urlstate.follow(dash.model, location)
    if served:

        def destroyed(_: Any) -> None:
            dash.streamer.stop()
            dash.model.shutdown()

        pn.state.on_session_destroyed(destroyed)
    return dash
