"""The dashboard's Export tab: every run's trace as CSV or Parquet, the current figures
(and results) as one standalone HTML file that opens offline, and the figures as one PNG
(that page drawn by headless Chromium, :mod:`ermviz.app.plots.png`).

:class:`ExportView` is a Panel :class:`~panel.viewable.Viewer` over the session's
model and streamer; the HTML export redraws the race's figures from a snapshot of the
streamer's sources (:mod:`ermviz.app.plots.figures`, :mod:`ermviz.app.plots.teaching_plot`).
"""

from __future__ import annotations

import html
from typing import Any

import panel as pn
from bokeh.embed import file_html
from bokeh.layouts import column, gridplot, row
from bokeh.models import ColumnDataSource, Div
from bokeh.resources import INLINE

from ermviz.app.plots.boundary import BoundaryPlot
from ermviz.app.plots.figures import TracePlots
from ermviz.app.plots.png import PngError, layout_to_png, prewarm
from ermviz.app.plots.streaming import Streamer, reference_series
from ermviz.app.plots.teaching_plot import TeachingPlot
from ermviz.app.state.model import DashboardModel
from ermviz.app.views.widgets import GuardedDownload, guard
from ermviz.registry import PROBLEMS


class ExportView(pn.viewable.Viewer):
    """The export buttons and the standalone HTML and PNG exports of one session's race."""

    def __init__(self, model: DashboardModel, streamer: Streamer, **params: Any) -> None:
        super().__init__(**params)
        self.model = model
        self.streamer = streamer
        m = model
        self.csv_download = GuardedDownload(
            callback=guard(m, "CSV export")(m.export_csv),
            filename="ermviz-traces.csv",
            label="Traces (CSV)",
            color="primary",
            width=200,
        )
        self.parquet_download = GuardedDownload(
            callback=guard(m, "Parquet export")(m.export_parquet),
            filename="ermviz-traces.parquet",
            label="Traces (Parquet)",
            color="primary",
            width=200,
        )
        self.html_download = GuardedDownload(
            callback=guard(m, "HTML export")(self.export_html),
            filename="ermviz-figures.html",
            label="Figures (standalone HTML)",
            color="primary",
            width=220,
        )
        self.png_download = GuardedDownload(
            callback=guard(m, "PNG export")(self.export_png),
            filename="ermviz-figures.png",
            label="Figures (PNG)",
            color="primary",
            width=160,
        )
        self.layout = pn.Column(
            pn.pane.Markdown(
                "Download every run's whole trace (one row per recorded iterate; stopped runs "
                "keep theirs), or the current figures as one standalone HTML file that opens "
                "offline, or as one PNG to paste into slides (drawn by the server's "
                "Chromium). Kept reference races are in all of them: in the traces as the "
                "points their curves draw, with the column "
                "`race` (`current`, `reference 1`, ...).",
                sizing_mode="stretch_width",
            ),
            # Wrapping: at 1280 px the PNG button sat beyond the main area (x 1142-1302).
            pn.FlexBox(
                self.csv_download,
                self.parquet_download,
                self.html_download,
                self.png_download,
                flex_wrap="wrap",
                sizing_mode="stretch_width",
            ),
            sizing_mode="stretch_width",
        )

    def __panel__(self) -> pn.viewable.Viewable:
        return self.layout

    def shown(self) -> None:
        """The Export tab is shown on a served page: start the server's Chromium now, so
        that the PNG export takes about 1 s. (Not when the view is built: every fresh page
        builds it, and Chromium's start-up would cost the first page of a class.)"""
        if pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
            prewarm()

    def export_html(self):
        """The current figures (and results) as one standalone HTML file (Bokeh inline)."""
        import io

        page = file_html(self._export_layout(table=True), resources=INLINE, title="ermviz figures")
        return io.BytesIO(page.encode("utf-8"))

    def export_png(self):
        """The current figures as one PNG (the HTML export's figures, without the results
        table, drawn by headless Chromium: see :mod:`ermviz.app.plots.png`)."""
        import io

        if not self.streamer.sources:
            raise PngError("no figures to export yet: start a race first")
        # Drawn without toolbars in a Chromium kept warm between exports (png.py).
        return io.BytesIO(layout_to_png(self._export_layout(table=False)))

    def _export_layout(self, table: bool):
        """The exported figures as one Bokeh layout (and the results table if ``table``)."""
        m = self.model
        snapshot = [
            (
                s.slot.label,
                s.slot.color,
                ColumnDataSource(dict(s.trace.data)),
                ColumnDataSource(dict(s.objective.data)),
                ColumnDataSource(dict(s.band.data)),
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
            certificate_kind=PROBLEMS[m.problem].certificate_kind,
            work_label="" if m.x_axis == "iteration" else m.work_label(m.x_axis),
            references=reference_series(m.references, self.streamer.work_column),
            jumps=[
                m.x_axis in s.slot.run.solver.work_jumps
                for s in self.streamer.sources
                if s.slot.run is not None
            ],
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
        elif m.problem_obj is not None and self.streamer.sources:
            # The race's classifiers in the plane, when the problem draws one.
            plane = m.problem_obj.decision_plane()
            if plane is not None:
                boundary = BoundaryPlot(plane, self.streamer.sources, snapshot=True)
                parts.append(row(*boundary.layout()))
        if table:
            parts.append(
                Div(text=m.results().to_html(index=False, float_format=lambda v: f"{v:.6g}"))
            )
        return column(*parts)
