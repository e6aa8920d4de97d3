"""The dashboard's Race tab: the live plots and the results table.

Two certificate plots are always on the page; the results table and the three diagnostic
plots (:data:`MORE_PLOTS`) share one place below them, as dynamic tabs (only the shown one
is in the page). The figures are :class:`~ermviz.app.plots.figures.TracePlots` over the
streamer's pooled sources: they are rebuilt only when the plot options, the certificate
or the pool's size change; otherwise a new race relabels them.

:class:`RaceView` is a Panel :class:`~panel.viewable.Viewer` over the session's
:class:`~ermviz.app.state.model.DashboardModel` and
:class:`~ermviz.app.plots.streaming.Streamer`: it owns its widgets and figures, and builds
them when first shown (:meth:`RaceView.build`; ``figures`` and ``trace_plots`` build on
first use). It also draws the kept reference
races (:mod:`ermviz.app.state.references`) under the live curves, says above the plots what
differs between each and the current set-up, and owns the toolbar's "Keep as reference" /
"Clear references" buttons (``reference_buttons``).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from typing import Any

import panel as pn

from ermviz.app import compat
from ermviz.app.plots.figures import TracePlots
from ermviz.app.plots.streaming import Streamer, reference_series
from ermviz.app.serving.notebook import LiveHTML
from ermviz.app.state.messages import one_line
from ermviz.app.state.model import DashboardModel
from ermviz.app.state.race import PALETTE, RESULT_COLUMNS, THRESHOLDS, group_entries
from ermviz.app.state.references import MAX_REFERENCES, differences
from ermviz.app.views.widgets import Select, guard
from ermviz.registry import PROBLEMS

#: Tab titles of the diagnostic plots (TracePlots' figures 3 to 5).
MORE_PLOTS = ("suboptimality", "step size", "active-set size")


class RaceView(pn.viewable.Viewer):
    """The live plots and the results table of one session's race.

    Parameters
    ----------
    model, streamer
        The session's model and the streamer that fills the plotted sources.
    shown
        Returns the notebook outputs the page shows in (their stylesheets are inlined
        when figures are rebuilt); none outside a notebook.
    """

    def __init__(
        self,
        model: DashboardModel,
        streamer: Streamer,
        shown: Callable[[], list] | None = None,
        **params: Any,
    ) -> None:
        super().__init__(**params)
        self.model = model
        self.streamer = streamer
        self._shown = shown or list
        self._plots_kind: list[str] = []
        self._trace_plots: TracePlots | None = None
        self.layout = pn.Column(sizing_mode="stretch_width")
        self._build_results()
        self.reference_buttons = self._build_reference_buttons()
        model.param.watch(self._on_race_options, ["log_x", "time_basis", "show_steps", "x_axis"])
        model.param.watch(self._on_references, ["references"])
        model.param.watch(self._on_presentation, ["presentation"])
        model.param.watch(lambda *_: self._update_reference_note(), ["revision"])
        # The certificate plots name the certificate of the problem set up, before a Start
        # too (a lesson loaded over another problem's race).
        model.param.watch(lambda *_: self._follow_certificate(), ["problem", "problem_settings"])

    def __panel__(self) -> pn.viewable.Viewable:
        return self.layout

    @property
    def built(self) -> bool:
        """Whether the plots exist (the view was shown, or its figures asked for)."""
        return self._trace_plots is not None

    @property
    def trace_plots(self) -> TracePlots:
        self.build()
        return self._trace_plots

    @property
    def figures(self) -> list:
        return self.trace_plots.figures

    # -- results table ---------------------------------------------------------------
    def _build_results(self) -> None:
        # A plain HTML table, rebuilt at most once a second: measured, a Tabulator update
        # cost ~0.2 s of the event loop (pandas Styler and string arrays), time the solver
        # threads then waited for the GIL.
        self.table = LiveHTML(
            self._results_html(), sizing_mode="stretch_width", css_classes=["ermviz-results"]
        )
        self.results = pn.Column(
            pn.pane.Markdown(
                "**Results** — `time_s`: the solver's wall-clock seconds, `cpu_s`: its "
                "thread's CPU seconds; `t<=` columns: wall-clock seconds until the certificate "
                "first fell to each threshold; test accuracy needs a test split.",
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
            "certificate_dev": ".2e",
            "objective": ".10g",
            "test_accuracy": ".4f",
            **{f"t<={eps:.0e}": ".3f" for eps in THRESHOLDS},
        }
        # Fits the main area at 1280 px (16 columns cut beyond the scroll box before): a
        # small font, headers that break after "_" and "<=", and each run's message on a
        # full-width line of its own under its row (it wraps there).
        columns = [c for c in RESULT_COLUMNS if c != "message"]

        def header(c: str) -> str:
            text = html.escape(c)
            return text.replace("_", "_<wbr>").replace("&lt;=", "&lt;=<wbr>")

        head = "".join(f"<th>{header(c)}</th>" for c in columns)
        body = []
        for result in self.model.result_rows():
            cells = []
            for c in columns:
                v = result[c]
                text = fmt(v, formats[c]) if c in formats else html.escape(str(v))
                style = f' style="border-left:6px solid {result["color"]}"' if c == "run" else ""
                cells.append(f"<td{style}>{text}</td>")
            body.append("<tr>" + "".join(cells) + "</tr>")
            message = str(result.get("message") or "")
            if message:
                body.append(
                    f'<tr class="ermviz-message"><td colspan="{len(columns)}" '
                    f'style="border-left:6px solid {result["color"]}">'
                    f"message: {html.escape(message)}</td></tr>"
                )
        return (
            '<div style="overflow-x:auto"><table class="ermviz-results" '
            'style="border-collapse:collapse;font-size:0.75em">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
            "<style>.ermviz-results th,.ermviz-results td{padding:2px 4px;"
            "border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}"
            ".ermviz-results th{white-space:normal;vertical-align:bottom}"
            ".ermviz-results td:nth-child(-n+3),.ermviz-results th:nth-child(-n+3)"
            "{text-align:left}"
            ".ermviz-results tr.ermviz-message td{text-align:left;white-space:normal;"
            "overflow-wrap:anywhere;color:#555}</style>"
        )

    def update_table(self) -> None:
        self.table.object = self._results_html()

    # -- plots -----------------------------------------------------------------------
    def build(self) -> RaceView:
        """Build the plots (once): the view is about to show. Returns the view."""
        if self._trace_plots is not None:
            return self
        m = self.model
        # One row (a 1280 px laptop shows the plots under it on the first screen): the
        # labels beside their widgets, not above; explicit widths (a FlexBox stretches an
        # item without one to the whole row).
        label = {"align": "center", "margin": (0, 2, 0, 6)}
        box = {"align": "center", "margin": (4, 4)}
        self.plot_options = pn.FlexBox(
            pn.widgets.Checkbox.from_param(m.param.log_x, label="log x axes", width=92, **box),
            pn.pane.HTML("time plot:", width=64, **label),
            # The clock shown: filled when picked, outlined when not (two shades of one
            # fill hid which one was picked).
            pn.widgets.RadioButtonGroup.from_param(
                m.param.time_basis,
                options={"wall time": "time_s", "CPU time": "cpu_s"},
                color="primary",
                variant="outline",
                css_classes=["ermviz-clock"],
                width=160,
                margin=(4, 4),
            ),
            pn.widgets.Checkbox.from_param(
                m.param.show_steps, label="mark steps ▲◆✕", width=140, **box
            ),
            pn.pane.HTML(
                f"<span title='{html.escape(m.param.x_axis.doc, quote=True)}'>iteration "
                "plots' x:</span>",
                width=118,
                **label,
            ),
            Select.from_param(m.param.x_axis, name="", width=150, margin=(4, 4)),
            sizing_mode="stretch_width",
            align_items="center",
        )
        self.plot_box = pn.Row(sizing_mode="stretch_width")
        # The results table and the three diagnostic plots share one place: only the shown
        # tab is in the page (dynamic tabs), and the table is shown first, so the browser
        # repaints two live plots, not five. Measured on 2 cores with the browser beside
        # the server: each live plot cost chromium ~8 % of a core at ~3 refreshes a second,
        # CPU the solvers then lack. (A FlexBox holding fewer than five plots lost its
        # layout in chromium, hence the plain Row.)
        self.more_plots = pn.Tabs(dynamic=True, sizing_mode="stretch_width")
        # Each diagnostic plot is drawn when its tab is first opened (TracePlots.figure).
        self.more_plots.param.watch(lambda event: self._fill_diagnostic(event.new), "active")
        self.streamer.ensure_pool(max(3, len(m.specs)))
        self.reference_note = LiveHTML(
            "", sizing_mode="stretch_width", margin=(0, 10), css_classes=["ermviz-references"]
        )
        self._rebuild_plots()
        self._update_reference_note()
        self.layout.objects = [
            self.plot_options,
            self.reference_note,
            self.plot_box,
            self.more_plots,
        ]
        return self

    def _on_race_options(self, *events: Any) -> None:
        try:
            self.streamer.set_work_column(self.model.x_axis)
            if self.built:
                with pn.io.hold():  # one message, its stylesheets inlined
                    self._rebuild_plots()
        except Exception as exc:
            self.model.notify(f"plot options: {one_line(exc)}")

    def _on_presentation(self, *events: Any) -> None:
        if self.built:
            with pn.io.hold():  # one message for every figure's text and lines
                self._trace_plots.set_presentation(self.model.presentation)

    def certificate_kind(self) -> list[str]:
        """What the certificate plots show: the race's runs' certificate kinds (a lazified
        run certifies a primal-dual gap beside the others' FW gaps), else the kind of the
        problem set up with its settings."""
        m = self.model
        kinds = [s.run.solver.certificate_kind for s in m.slots if s.run is not None]
        if kinds:
            return list(dict.fromkeys(kinds))
        return [PROBLEMS[m.problem].certificate_kind_for(m.problem_settings)]

    def _follow_certificate(self) -> None:
        """Name the set-up problem's certificate on the plots (no race shows)."""
        if self.built and not self.model.slots:
            kind = self.certificate_kind()
            if kind != self._plots_kind:
                self._plots_kind = kind
                self._trace_plots.set_certificate(kind)

    def after_launch(self, grew: bool) -> None:
        """Show a new race: new figures when the pool grew or the certificate changed,
        else the same figures relabelled (their sources emptied by the streamer)."""
        if not self.built:
            return  # built when shown, over the pool as it is then
        kind = self.certificate_kind()
        if grew:
            self._rebuild_plots()
            return
        if self._plots_kind != kind:
            self._plots_kind = kind
            self._trace_plots.set_certificate(kind)
        self._show_race()

    def after_reset(self) -> None:
        if self.built:
            self._follow_certificate()
            self._show_race()

    def _rebuild_plots(self) -> None:
        """New figures over every pooled source (first build, plot options, a bigger race)."""
        m = self.model
        series = [
            (
                f"run {src.index + 1}",
                PALETTE[src.index % len(PALETTE)],
                src.trace,
                src.objective,
                src.band,
            )
            for src in self.streamer.pool
        ]
        self._plots_kind = self.certificate_kind()
        refs = reference_series(m.references, self.streamer.work_column)
        self._trace_plots = TracePlots(
            series,
            self.streamer.best,
            log_x=m.log_x,
            time_basis=m.time_basis,
            show_steps=m.show_steps,
            certificate_kind=self._plots_kind,
            work_label="" if m.x_axis == "iteration" else m.work_label(m.x_axis),
            references=refs,
            lazy=True,
        )
        if m.presentation:
            self._trace_plots.set_presentation(True)
        self._show_race()
        self.plot_box.objects = [
            # Two plots per row on wide screens, one on narrow ones (flex-wrap); the
            # stylesheet is needed because stretch_width alone forces a full-width item.
            _plot_pane(self._trace_plots.figure(f))
            for f in (0, 1)
        ]
        active = self.more_plots.active
        self._diagnostics = [pn.Column(sizing_mode="stretch_width", margin=0) for _ in MORE_PLOTS]
        self.more_plots[:] = [
            ("summary", self.results),
            *zip(MORE_PLOTS, self._diagnostics, strict=True),
        ]
        self.more_plots.active = active
        self._fill_diagnostic(active)
        self._inline_stylesheets()

    def _fill_diagnostic(self, tab: int) -> None:
        """Put the diagnostic plot of ``more_plots`` tab ``tab`` in its place (drawn now if
        it was not): a fresh page draws two plots, not five."""
        if tab < 1 or self._trace_plots is None:
            return  # (the summary)
        holder = self._diagnostics[tab - 1]
        if not holder.objects:
            holder.objects = [_plot_pane(self._trace_plots.figure(tab + 1))]
            self._inline_stylesheets()

    def _inline_stylesheets(self) -> None:
        """In a notebook with inline resources (:func:`ermviz.app.notebook_extension`), the
        stylesheets of the figures just built inline too: Panel links them to its CDN when
        they are added to a displayed layout (an offline page then lost their styling)."""
        if not pn.config.inline:
            return
        from bokeh.models import UIElement
        from panel.io.notebook import patch_inline_stylesheets

        for part in self._shown():
            for model in compat.displayed_models(part):
                for element in model.select({"type": UIElement}):
                    patch_inline_stylesheets(element)

    def _show_race(self) -> None:
        """Label the plotted lines after the race's runs; hide lines without a run; one
        legend entry for the seeds of a run spec; steps for a run whose method spends the
        x axis's work counter in jumps."""
        pool = self.streamer.pool
        live = [src.slot is not None and src.slot.run is not None for src in pool]
        bound = [src.slot for src in pool if src.slot is not None]
        shared = dict(zip(map(id, bound), group_entries(bound), strict=True))
        x_axis = self.model.x_axis
        self._trace_plots.show(
            [src.slot.label if ok else None for src, ok in zip(pool, live, strict=True)],
            [src.slot.color if ok else None for src, ok in zip(pool, live, strict=True)],
            [shared[id(src.slot)] if ok else None for src, ok in zip(pool, live, strict=True)],
            [
                ok and x_axis in src.slot.run.solver.work_jumps
                for src, ok in zip(pool, live, strict=True)
            ],
        )

    # -- kept references -------------------------------------------------------------
    def _build_reference_buttons(self) -> list[pn.widgets.Button]:
        """The toolbar's "Keep as reference" and "Clear references" buttons."""
        m = self.model
        self.keep_button = pn.widgets.Button(
            label="Keep as reference",
            color="default",
            width=150,
            description=f"draw this ended race faded under the next ones (up to {MAX_REFERENCES})",
        )
        self.clear_refs_button = pn.widgets.Button(
            label="Clear references", color="default", width=140
        )
        self.keep_button.on_click(guard(m, "keep as reference")(lambda _: m.keep_reference()))
        self.clear_refs_button.on_click(
            guard(m, "clear references")(lambda _: m.clear_references())
        )
        self.refresh_reference_buttons()
        return [self.keep_button, self.clear_refs_button]

    def refresh_reference_buttons(self) -> None:
        keep = not self.model.can_keep_reference
        clear = not self.model.references
        if self.keep_button.disabled != keep:
            self.keep_button.disabled = keep
        if self.clear_refs_button.disabled != clear:
            self.clear_refs_button.disabled = clear

    def _on_references(self, *events: Any) -> None:
        # Keeping or clearing happens between races (nothing streams): new figures with
        # the kept races' static sources are cheap then.
        try:
            if self.built:
                self._rebuild_plots()
        except Exception as exc:
            self.model.notify(f"references: {one_line(exc)}")
        self._update_reference_note()
        self.refresh_reference_buttons()

    def _update_reference_note(self) -> None:
        """One line per kept race: its number, line style, runs and what differs now."""
        if not self.built:
            return  # written when the view is built
        m = self.model
        now = m.current_setup() if m.references else {}
        lines = []
        for ref in m.references:
            changed = differences(
                {k: v for k, v in ref.setup.items() if k != "runs"},
                {k: v for k, v in now.items() if k != "runs"},
            )
            what = "; differs now in " + ", ".join(changed) if changed else "; same set-up now"
            if ref.setup.get("runs") != now.get("runs"):
                what += f"; its runs: {ref.setup.get('runs', '')}"
            lines.append(
                f'<div class="ermviz-reference" data-number="{ref.number}">'
                f"<b>{html.escape(ref.name)}</b> ({ref.dash}, faded, "
                f"{len(ref.runs)} runs){html.escape(what)}</div>"
            )
        text = "".join(lines)
        if self.reference_note.object != text:
            self.reference_note.object = text


def _plot_pane(fig: Any) -> pn.pane.Bokeh:
    """A live plot's pane: full width, two beside each other on a wide tab."""
    return pn.pane.Bokeh(fig, sizing_mode="stretch_width", min_width=380)
