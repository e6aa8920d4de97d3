"""The Results tab's view: folder chooser, status, table with downloads, profile, curves.

:class:`ResultsView` draws a :class:`~ermviz.app.results.model.ResultsModel`: the table
in a :class:`panel.widgets.Tabulator` (sortable, filterable, downloadable as CSV or
Markdown), the profiles and curves as HoloViews/Bokeh plots (:func:`profile_plot`,
:func:`curves_plot`: hover, one colour per method label, click a legend entry to hide a
label). HoloViews is imported only when a plot is built.

"Run a small sweep" runs the bundled sweep (see :mod:`ermviz.app.results.model`) on a
thread of its own, so the page stays live; each finished cell is handed to the page's
thread with the document's ``add_next_tick_callback`` (the one Bokeh document method that
is safe from another thread) and moves the progress bar; the sweep's folder then opens.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import panel as pn

from ermviz.app.results.model import SMALL_SWEEP, ResultsModel, eps_text
from ermviz.app.state.messages import one_line
from ermviz.app.views.background import in_thread


def _holoviews() -> Any:
    """HoloViews with its Bokeh backend registered (options are validated against it)."""
    import holoviews as hv
    import holoviews.plotting.bokeh

    return hv


def profile_plot(model: ResultsModel) -> Any:
    """The performance profiles: one step line per label (fraction solved vs tau)."""
    hv = _holoviews()

    styles = model.styles()
    items = []
    for lab, g in model.profile.groupby("label", sort=True):
        color, dash = styles[str(lab)]
        items.append(
            hv.Curve(
                g[["tau", "fraction"]],
                hv.Dimension("tau", label="tau (time / best time)"),
                hv.Dimension("fraction", label="fraction solved"),
                label=str(lab),
            ).opts(
                color=color,
                line_dash=dash,
                line_width=2,
                interpolation="steps-post",
                tools=["hover"],
                backend="bokeh",
            )
        )
    n = model.times.groupby(["instance", "eps"]).ngroups if len(model.times) else 0
    return hv.Overlay(items).opts(
        title=f"Performance profile (Dolan & More 2002): {n} (instance, threshold) pairs",
        logx=True,
        ylim=(0, 1.04),
        legend_position="bottom_right",
        click_policy="hide",
        responsive=True,
        min_height=360,
        backend="bokeh",
    )


def curves_plot(model: ResultsModel) -> Any:
    """Certificate vs solver time on the selected dataset: one line per method label
    (its cells, seeds and instances joined with gaps), log y."""
    hv = _holoviews()

    lines = model.curve_lines()
    styles = model.styles()
    items = []
    for lab, g in lines.groupby("label", sort=True):
        parts = []
        for _, cell in g.groupby("line", sort=False):
            parts.append(cell[["time_s", "certificate", "line", "instance"]])
            # A NaN row between cells: Bokeh breaks the line there.
            parts.append(
                pd.DataFrame(
                    {"time_s": [np.nan], "certificate": [np.nan], "line": [""], "instance": [""]}
                )
            )
        data = pd.concat(parts[:-1], ignore_index=True)
        color, dash = styles[str(lab)]
        items.append(
            hv.Curve(
                data,
                hv.Dimension("time_s", label="solver time (s)"),
                [hv.Dimension("certificate"), hv.Dimension("line", label="run"), "instance"],
                label=str(lab),
            ).opts(color=color, line_dash=dash, line_width=2, tools=["hover"], backend="bokeh")
        )
    return hv.Overlay(items).opts(
        title=f"Certificate vs solver time: {model.dataset}",
        logx=model.log_x,
        logy=True,
        legend_position="top_right",
        click_policy="hide",
        responsive=True,
        min_height=360,
        backend="bokeh",
    )


class ResultsView(pn.viewable.Viewer):
    """The Results tab: folder chooser, status, table with downloads, profile, curves.

    A Panel :class:`~panel.viewable.Viewer` that owns its widgets, drawn on a
    :class:`~ermviz.app.results.model.ResultsModel`: it displays (its ``layout``) in a
    served page and in Jupyter after ``pn.extension("tabulator")``.
    """

    def __init__(self, model: ResultsModel | None = None, **params: Any) -> None:
        from bokeh.models.widgets.tables import ScientificFormatter

        super().__init__(**params)

        self.model = m = model or ResultsModel()
        self.path_input = pn.widgets.TextInput(
            label="Results folder (a path on this server)",
            placeholder="e.g. results/fw-family (a folder with summaries/)",
            sizing_mode="stretch_width",
        )
        self.path_input.param.watch(lambda e: self._open_typed(), "enter_pressed")
        self.open_button = pn.widgets.Button(label="Open", color="primary", width=90)
        self.open_button.on_click(lambda e: self._open_typed())
        self.found_select = pn.widgets.Select(
            label="Results folders found", sizing_mode="stretch_width"
        )
        if not m.access:  # folder access off, or not for this session
            for widget in (self.path_input, self.open_button, self.found_select):
                widget.disabled = True
        self._sync_found()
        self.found_select.param.watch(self._on_found, "value")
        self.refresh_button = pn.widgets.Button(label="↻ Refresh", width=110)
        self.refresh_button.on_click(lambda e: self._guard("refresh", m.refresh))
        self.status = pn.pane.HTML(sizing_mode="stretch_width", margin=(0, 10))
        self.sweep_button = pn.widgets.Button(
            label="▶ Run a small sweep", color="success", width=190
        )
        self.sweep_button.on_click(self._run_small_sweep)
        # Determinate only: an animated (indeterminate) bar keeps the browser repainting.
        self.sweep_progress = pn.indicators.Progress(
            value=0, max=1, width=240, visible=False, css_classes=["ermviz-sweep-progress"]
        )
        self.eps_input = pn.widgets.TextInput(
            label="Thresholds (certificate ≤ eps)",
            value=eps_text(m.eps),
            width=240,
        )
        self.eps_input.param.watch(self._on_eps_widget, "value")
        self.baselines_input = pn.widgets.MultiChoice.from_param(
            m.param.baselines, label="Baselines", sizing_mode="stretch_width"
        )
        self.chosen_input = pn.widgets.MultiChoice.from_param(
            m.param.chosen, label="Chosen methods", sizing_mode="stretch_width"
        )
        from ermviz.app.views.widgets import GuardedDownload

        # A failed export is notified and sends nothing (not an empty file).
        self.csv_download = GuardedDownload(
            callback=lambda: self._guard("CSV export", m.export_csv),
            filename="results-table.csv",
            label="Table (CSV)",
            width=160,
        )
        self.md_download = GuardedDownload(
            callback=lambda: self._guard("Markdown export", m.export_md),
            filename="results-table.md",
            label="Table (Markdown)",
            width=180,
        )
        self._time_format = ScientificFormatter(
            precision=3, power_limit_low=-2, power_limit_high=4, nan_format="", null_format=""
        )
        self._eps_format = ScientificFormatter(
            precision=1, power_limit_low=1, power_limit_high=1, nan_format="", null_format=""
        )
        self.table = pn.widgets.Tabulator(
            m.table_frame(),
            disabled=True,
            show_index=False,
            layout="fit_data_table",
            pagination="local",
            page_size=30,
            header_filters={"instance": {"type": "input", "func": "like", "placeholder": "filter"}},
            frozen_columns=["instance"],
            css_classes=["ermviz-results-table"],
            sizing_mode="stretch_width",
        )
        self.dataset_select = pn.widgets.Select.from_param(
            m.param.dataset, label="Curves of dataset", width=260
        )
        self.log_x_box = pn.widgets.Checkbox.from_param(m.param.log_x, label="log time axis")
        self.profile_box = pn.Column(sizing_mode="stretch_width", min_height=20)
        self.curves_box = pn.Column(sizing_mode="stretch_width", min_height=20)
        self._profile_pane = None
        self._curves_pane = None
        m.param.watch(lambda *_: self._show_status(), ["status", "status_level"])
        m.param.watch(lambda *_: self._sync_found(), ["found"])
        m.param.watch(lambda *_: self._show_table(), ["table_revision"])
        m.param.watch(lambda *_: self._show_profile(), ["revision"])
        m.param.watch(lambda *_: self._show_curves(), ["loads", "log_x"])
        m.param.watch(self._on_dataset, ["dataset"])
        m.param.watch(lambda *_: self._sync_eps(), ["eps"])
        m.param.watch(lambda *_: self._sync_path(), ["folder"])
        m.param.watch(lambda *_: self._show_sweep(), ["sweep_state", "sweep_done", "sweep_total"])
        if pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
            # A page closed mid-sweep cancels it and deletes its folders.
            pn.state.on_session_destroyed(lambda _: m.shutdown())
        self._show_status()
        self._show_table()
        self._show_profile()
        self._show_curves()
        self.layout = pn.Column(
            pn.pane.Markdown(
                "**Sweep results** — open a folder written by `python -m ermviz sweep`: the "
                "table of solver seconds until the certificate first fell to each threshold "
                "(blank: the budget ran out first; speed-up = best baseline time / best "
                "chosen time), performance profiles and certificate-vs-time curves, as "
                "`python -m ermviz report` writes them. Refresh reads a running sweep's new "
                "cells.",
                sizing_mode="stretch_width",
                margin=(0, 10),
            ),
            pn.Row(
                self.sweep_button,
                pn.pane.Markdown(
                    "No results yet? Run the bundled sweep `datasets/sweeps/"
                    f"{SMALL_SWEEP.name}`: FW, away-step and pairwise FW with exact and "
                    "Armijo line searches on the SVM dual of `wdbc` and `blobs` (12 cells, "
                    "2 s budget each, about half a minute on two local Dask workers), into "
                    "a temporary folder of this page, then shown here.",
                    sizing_mode="stretch_width",
                    margin=(0, 10),
                ),
                sizing_mode="stretch_width",
            ),
            self.sweep_progress,
            pn.Row(
                self.path_input,
                pn.Column(pn.Spacer(height=18), self.open_button, margin=0),
                sizing_mode="stretch_width",
            ),
            pn.Row(
                self.found_select,
                pn.Column(pn.Spacer(height=18), self.refresh_button, margin=0),
                sizing_mode="stretch_width",
            ),
            self.status,
            pn.Row(self.eps_input, self.baselines_input, self.chosen_input),
            pn.Row(self.csv_download, self.md_download),
            self.table,
            self.profile_box,
            pn.Row(self.dataset_select, pn.Column(pn.Spacer(height=18), self.log_x_box)),
            self.curves_box,
            sizing_mode="stretch_width",
        )

    def __panel__(self) -> pn.Column:
        return self.layout

    @property
    def panel(self) -> pn.Column:
        """The tab's layout (its name before the view was a Viewer: ``layout``)."""
        return self.layout

    # -- callbacks -------------------------------------------------------------------
    def _guard(self, what: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception as exc:
            self.model.notify(f"{what}: {one_line(exc)}")
            return None

    async def _run_small_sweep(self, event: Any = None) -> None:
        """Run the bundled small sweep off the page's thread, then show its folder."""
        m = self.model
        folder = m.begin_small_sweep()
        if folder is None:
            return
        push = self._progress_pusher()
        error: BaseException | None = None
        try:
            await in_thread(lambda: m.run_small_sweep(folder, push))
        except Exception as exc:  # told in one line by end_small_sweep
            error = exc
        self._guard("small sweep", lambda: m.end_small_sweep(folder, error))

    def _progress_pusher(self) -> Callable[[int, int], None]:
        """A progress callback the sweep's thread may call: served, it schedules the update
        on the page's thread; elsewhere (Jupyter, tests) it updates at once."""
        doc = pn.state.curdoc
        m = self.model
        if doc is None or doc.session_context is None:
            return m.set_sweep_progress

        def push(done: int, total: int) -> None:
            try:
                doc.add_next_tick_callback(functools.partial(m.set_sweep_progress, done, total))
            except Exception:  # the session has gone: nobody to show it to
                pass

        return push

    def _show_sweep(self) -> None:
        m = self.model
        running = m.sweep_state == "running"
        self.sweep_button.disabled = running
        self.sweep_button.label = "Sweep running ..." if running else "▶ Run a small sweep"
        self.sweep_progress.visible = running
        self.sweep_progress.param.update(value=0, max=max(m.sweep_total, 1))
        self.sweep_progress.value = min(m.sweep_done, self.sweep_progress.max)

    def _open_typed(self) -> None:
        text = self.path_input.value_input or self.path_input.value or ""
        self._guard("open", lambda: self.model.open(text))

    def _on_found(self, event: Any) -> None:
        if event.new and event.new != self.model.folder:
            self._guard("open", lambda: self.model.open(event.new))

    def _on_dataset(self, event: Any) -> None:
        if not self.model.loading:  # a read redraws the curves once it is installed
            self._show_curves()

    def _on_eps_widget(self, event: Any) -> None:
        if not self.model.set_eps_text(event.new or ""):
            self.eps_input.value = eps_text(self.model.eps)

    # -- syncing ---------------------------------------------------------------------
    def _sync_found(self) -> None:
        m = self.model
        options = {"(choose a results folder)": ""}
        cwd = Path.cwd()
        for f in m.found:
            try:
                shown = str(Path(f).resolve().relative_to(cwd))
            except ValueError:
                shown = f
            options[shown] = str(Path(f).resolve())
        self.found_select.options = options
        current = m.folder if m.folder in options.values() else ""
        if self.found_select.value != current:
            self.found_select.value = current

    def _sync_eps(self) -> None:
        text = eps_text(self.model.eps)
        if self.eps_input.value != text:
            self.eps_input.value = text

    def _sync_path(self) -> None:
        m = self.model
        if m.folder and self.path_input.value != m.folder:
            self.path_input.value = m.folder
        self._sync_found()

    def _show_status(self) -> None:
        import html

        m = self.model
        colour = {"error": "#b00020", "success": "#1b5e20", "info": "#555"}[m.status_level]
        self.status.object = (
            f'<span class="results-status" data-level="{m.status_level}" '
            f'style="color:{colour}">{html.escape(m.status)}</span>'
        )

    def _show_table(self) -> None:
        frame = self.model.table_frame()
        fmt = {c: self._time_format for c in frame.columns if c not in ("instance", "speed-up")}
        fmt["eps"] = self._eps_format
        self.table.formatters = fmt
        self.table.value = frame
        for button in (self.csv_download, self.md_download):
            button.disabled = not len(frame)

    def _show_profile(self) -> None:
        m = self.model
        if not len(m.profile):
            return
        plot = profile_plot(m)
        if self._profile_pane is None:
            self._profile_pane = pn.pane.HoloViews(
                plot, backend="bokeh", sizing_mode="stretch_width"
            )
            self.profile_box.objects = [self._profile_pane]
        else:
            self._profile_pane.object = plot

    def _show_curves(self) -> None:
        m = self.model
        if m.dataset is None:
            return
        plot = curves_plot(m)
        if self._curves_pane is None:
            self._curves_pane = pn.pane.HoloViews(
                plot, backend="bokeh", sizing_mode="stretch_width"
            )
            self.curves_box.objects = [self._curves_pane]
        else:
            self._curves_pane.object = plot
