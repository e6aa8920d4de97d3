"""The dashboard's race figures, plain Bokeh (no Panel): the same builders serve the live
page and the standalone HTML export.

:class:`TracePlots` - the five live plots of a race (certificate vs iteration and vs
solver time, suboptimality, step size, active-set size), one line per run. The teaching
view's drawing of a toy problem is :mod:`ermviz.app.plots.teaching_plot`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

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
    LegendItem,
    VArea,
)
from bokeh.transform import transform

from ermviz.app.plots.figure_style import (
    STEP_LABELS,
    STEP_MARKERS,
    TEXT_STYLES,
    add_legend,
    certificate_name,
    glyph_alone,
    glyph_line,
    glyph_step,
    legend_proxy,
    readable_axes,
    retarget_proxy,
    set_presentation,
    styled_figure,
    wrap_title,
)

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

    Against a work counter (``work_label``), a run whose method spends that work in jumps
    (:attr:`ermviz.base.Solver.work_jumps`, e.g. SAA's samples, all drawn before its first
    step) is drawn as steps: its certificate holds until the count is spent, where a line
    would show it falling all along the way. Each run has both curves in those plots, one
    of them transparent (:meth:`show` says which: a race's runs change, its figures stay).

    ``series`` holds one ``(label, colour, source)`` per place in the race; the figures
    keep their renderers from race to race and :meth:`show` relabels them, so Start sends
    the browser new data and labels rather than new figures. ``references`` holds one
    ``(label, colour, dash, static source)`` per run of a kept race
    (:func:`~ermviz.app.plots.streaming.reference_series`): drawn faded and dashed under the
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
        certificate_kind: str | list[str] = "fw_gap",
        work_label: str = "",
        references: list[tuple[str, str, str, ColumnDataSource]] = (),
        lazy: bool = False,
        jumps: Sequence[bool] = (),
    ) -> None:
        cert = certificate_name(certificate_kind)
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
        t_label = "solver wall time" if tb == "time_s" else "solver CPU time (its thread's)"
        self._log_x, self._show_steps = log_x, show_steps
        self._it_range = DataRange1d()
        self._vs = vs
        # (title, x label, y label, log y, shares the iteration range) of each plot.
        self._specs = (
            (f"{cert} vs {vs}", it_label, cert, True, True),
            (f"{cert} vs {'wall' if tb == 'time_s' else 'CPU'} time", t_label, cert, True, False),
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
        # Per run: its (line, step curve) in each plot against a work counter, and whether
        # the step curve is the one drawn (see show).
        self._work_x = bool(work_label)
        self._curves: list[list[tuple[Any, Any]]] = [[] for _ in self._series]
        self._jumps = [False] * len(self._series)
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
        self.show([entry[0] for entry in series], jumps=list(jumps))
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
        for i, ((label, color, cds, obj, band), mine) in enumerate(
            zip(self._series, self.renderers, strict=True)
        ):
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
            src = obj if f == 2 else cds
            mine.append(glyph_line(fig, x, y, src, name=label, line_color=color, line_width=2))
            hover.append(mine[-1])  # (a step curve has no hit test in BokehJS)
            if self._work_x and f != 1:
                step = glyph_step(fig, x, y, src, name=label, line_color=color, line_width=2)
                self._curves[i].append((mine[-1], step))
                mine.append(step)
                self._draw_as_steps(i)
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

    def _draw_as_steps(self, i: int) -> None:
        """Make run ``i``'s step curves opaque and its lines transparent (against a work
        counter) when its work count jumps, else the other way round. (Transparent, not
        hidden: a click on the legend shows or hides both, and the line keeps its hover.)"""
        for line, step in self._curves[i]:
            for glyph, drawn in ((line.glyph, not self._jumps[i]), (step.glyph, self._jumps[i])):
                alpha = 1.0 if drawn else 0.0
                if glyph.line_alpha != alpha:
                    glyph.line_alpha = alpha

    def set_presentation(self, on: bool = True) -> None:
        """Larger text and lines for a room (:func:`set_presentation`), or back."""
        self._presentation = on
        set_presentation([fig for fig in self._figures if fig is not None], on)

    def set_certificate(self, certificate_kind: str | list[str]) -> None:
        """Name another certificate (a new problem, a race's runs) in the two certificate
        plots' titles and y axes, in place: new figures would cost the page a rebuild."""
        cert = certificate_name(certificate_kind)
        specs = list(self._specs)
        for f in (0, 1):
            title, x_label, _, log_y, shared = specs[f]
            title = f"{cert} vs {title.split(' vs ', 1)[1]}" if " vs " in title else cert
            specs[f] = (title, x_label, cert, log_y, shared)
            fig = self._figures[f]
            if fig is not None:
                style = TEXT_STYLES["presentation" if self._presentation else "normal"]
                wrapped = wrap_title(title, style["wrap"])
                if fig.title.text != wrapped:
                    fig.title.text = wrapped
                for axis in fig.yaxis:
                    if axis.axis_label != cert:
                        axis.axis_label = cert
        self._specs = tuple(specs)

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
        jumps: Sequence[bool] | None = None,
    ) -> None:
        """Show series ``i`` under ``labels[i]`` (in ``colors[i]``, when given: the seeds of
        one run spec share its colour); hide the others (and ``None`` labels). ``jumps[i]``:
        its run spends the plots' work counter in jumps (drawn as steps against it).

        Series with the same ``groups[i]`` (the seeds of one run spec) share one legend
        entry under that text, which hides them all: six seeds' entries covered the curves
        where they part. Their lines keep their own names (the hover says which seed)."""
        labels = (list(labels) + [None] * self.size)[: self.size]
        colors = (list(colors or []) + [None] * self.size)[: self.size]
        groups = (list(groups or []) + [None] * self.size)[: self.size]
        self._jumps = [bool(j) for j in (list(jumps or []) + [False] * self.size)[: self.size]]
        for i in range(self.size):
            self._draw_as_steps(i)
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
