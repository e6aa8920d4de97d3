"""The dashboard's Results tab: a sweep's results folder, shown interactively.

:class:`ResultsModel` holds the state (the open folder, its summaries and traces, the
thresholds, the baseline and chosen method labels, the dataset whose curves are shown) and
computes every number with :mod:`ermviz.report`, so the tab shows what ``python -m ermviz
report DIR`` writes: the time-to-threshold table (blank where the budget ran out, with the
speed-up column), the Dolan-More performance profiles and the certificate-vs-time curves
per dataset. :class:`ResultsView` draws them: the table in a
:class:`panel.widgets.Tabulator` (sortable, filterable, downloadable as CSV or Markdown),
the profiles and curves as HoloViews/Bokeh plots (hover, one colour per method label,
click a legend entry to hide a label).

Which folder: a path typed in (a folder on the server, holding ``summaries/``), or one of
the results folders found under the roots named by ``ERMVIZ_RESULTS`` (``os.pathsep``-
separated; default ``results/`` and ``benchmarks/results/`` under the server's working
directory), searched to :data:`SCAN_DEPTH` levels. The thresholds and the baseline and
chosen labels default to the ``[report]`` table of the folder's ``config.toml``.

The folder is never part of the URL: :mod:`ermviz.app.urlstate` carries only the race
configuration of :class:`~ermviz.app.model.DashboardModel`, so a link cannot make the
server read a folder of its choosing.
"""

from __future__ import annotations

import io
import math
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import param

from ermviz.app.model import PALETTE, DashboardModel, _panel_notifier, one_line
from ermviz.errors import ErmvizError, SettingError
from ermviz.report import (
    curves,
    format_table,
    performance_profile,
    report_options,
    threshold_table,
    times_from_frames,
)
from ermviz.sweep import load_summaries, load_traces

#: Thresholds when the folder's config names none (those of ``python -m ermviz report``).
DEFAULT_EPS: tuple[float, ...] = (1e-2, 1e-4, 1e-6)
#: Environment variable naming the folders searched for results (``os.pathsep``-separated).
RESULTS_ENV = "ERMVIZ_RESULTS"
#: Default roots, relative to the server's working directory.
DEFAULT_ROOTS = ("results", os.path.join("benchmarks", "results"))
#: Levels below each root searched for results folders (0: the root itself only).
SCAN_DEPTH = 2
#: Most results folders offered in the list.
MAX_FOUND = 200
#: Points per cell drawn on the curves (evenly spaced rows, first and last kept).
MAX_CURVE_POINTS = 2000
#: Line dashes for labels beyond the palette's ten colours.
DASHES = ("solid", "dashed", "dotted", "dotdash")
_SKIP_DIRS = {"summaries", "traces", "report", "__pycache__", "node_modules"}


def results_roots() -> list[Path]:
    """The folders searched for results: ``ERMVIZ_RESULTS`` or the defaults."""
    env = os.environ.get(RESULTS_ENV, "")
    names = [p for p in env.split(os.pathsep) if p.strip()] if env.strip() else DEFAULT_ROOTS
    return [Path(p).expanduser() for p in names]


def is_results_folder(path: Path) -> bool:
    """A folder a sweep wrote to (it has ``summaries/``)."""
    try:
        return (path / "summaries").is_dir()
    except OSError:
        return False


def find_results_folders(roots: Iterable[Path] | None = None, depth: int = SCAN_DEPTH) -> list[str]:
    """Results folders at most ``depth`` levels below each root (sorted, at most
    :data:`MAX_FOUND`); unreadable folders are skipped."""
    found: list[str] = []
    seen: set[str] = set()

    def visit(folder: Path, level: int) -> None:
        if len(found) >= MAX_FOUND:
            return
        if is_results_folder(folder):
            key = str(folder.resolve())
            if key not in seen:
                seen.add(key)
                found.append(str(folder))
            return  # a results folder's sub-folders are its own (traces, report)
        if level >= depth:
            return
        try:
            children = sorted(
                e.path
                for e in os.scandir(folder)
                if e.is_dir() and not e.name.startswith(".") and e.name not in _SKIP_DIRS
            )
        except OSError:
            return
        for child in children:
            visit(Path(child), level + 1)

    for root in results_roots() if roots is None else roots:
        if root.is_dir():
            visit(root, 0)
    return sorted(found)


def parse_eps(text: str) -> list[float]:
    """Thresholds from text such as ``"1e-2 1e-4, 1e-6"`` (positive, largest first)."""
    parts = [p for p in re.split(r"[\s,;]+", text.strip()) if p]
    values = []
    for p in parts:
        try:
            v = float(p)
        except ValueError:
            raise SettingError(f"threshold {p!r} is not a number (e.g. 1e-2 1e-4 1e-6)") from None
        if not (math.isfinite(v) and v > 0):
            raise SettingError(f"threshold {p!r} must be a number > 0 (e.g. 1e-2 1e-4 1e-6)")
        values.append(v)
    if not values:
        raise SettingError("give at least one threshold, e.g. 1e-2 1e-4 1e-6")
    return sorted(set(values), reverse=True)


def eps_text(eps: Iterable[float]) -> str:
    return " ".join(f"{e:g}" for e in eps)


def label_styles(labels: Iterable[str]) -> dict[str, tuple[str, str]]:
    """(colour, line dash) of each method label, the same in every plot of the tab."""
    return {
        lab: (PALETTE[i % len(PALETTE)], DASHES[(i // len(PALETTE)) % len(DASHES)])
        for i, lab in enumerate(sorted(labels))
    }


def _names(value: Any) -> list[str]:
    """Method labels from a config value (a list of names, or one name)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(x) for x in value] if isinstance(value, list | tuple) else []


def _decimate(n: int, limit: int) -> np.ndarray:
    if n <= limit:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, limit).round().astype(np.int64))


class ResultsModel(param.Parameterized):
    """The state of the Results tab (no widgets): a results folder and what it shows.

    ``loads`` increases when a folder is read (the curves are redrawn), ``revision`` when
    the data or the thresholds change (the profile), ``table_revision`` when the table
    changes (also on a new baseline or chosen set); ``loading`` is True while a read is
    being installed. A refresh keeps the thresholds and the baseline and chosen sets the
    user picked; sets still as the config gave them follow the config (labels whose first
    cells arrived since join them). Errors a user can cause (a folder that does not exist
    or holds no finished cell, a bad threshold) become ``status`` and a notification; the
    folder shown before stays.
    """

    folder = param.String(default="", doc="The open results folder (a path on the server)")
    eps = param.List(default=list(DEFAULT_EPS), item_type=float, doc="Certificate thresholds")
    baselines = param.ListSelector(default=[], objects=[], doc="Baseline method labels")
    chosen = param.ListSelector(default=[], objects=[], doc="Labels of the chosen methods")
    dataset = param.Selector(default=None, objects=[], allow_None=True, doc="Curves of")
    log_x = param.Boolean(default=False, doc="Logarithmic time axis on the curves")
    found = param.List(default=[], doc="Results folders found under the roots")
    status = param.String(default="", doc="One line on what is shown, or what went wrong")
    status_level = param.Selector(default="info", objects=["info", "success", "error"])
    loads = param.Integer(default=0, doc="Bumped when a folder is read (open or refresh)")
    revision = param.Integer(default=0, doc="Bumped when the data or the thresholds change")
    table_revision = param.Integer(default=0, doc="Bumped when the table changes")

    def __init__(
        self,
        notifier: Callable[[str, str], None] | None = None,
        roots: Iterable[Path | str] | None = None,
        **params: Any,
    ) -> None:
        super().__init__(**params)
        self.notifier = notifier if notifier is not None else _panel_notifier
        self.messages: list[tuple[str, str]] = []
        self._roots = None if roots is None else [Path(r) for r in roots]
        self.loading = False
        self.summaries = pd.DataFrame()
        self.traces = pd.DataFrame()
        self.times = pd.DataFrame()
        self.table = pd.DataFrame()
        self.profile = pd.DataFrame()
        self.options: dict[str, Any] = {}
        # The baseline and chosen sets the config gave, while the user has not changed them.
        self._config_sets: tuple[list[str], list[str]] | None = None
        self.param.watch(self._on_eps, ["eps"])
        self.param.watch(self._on_sets, ["baselines", "chosen"])
        self.rescan()
        self._set_status(self._idle_text(), "info")

    # -- folders ---------------------------------------------------------------------
    @property
    def roots(self) -> list[Path]:
        return results_roots() if self._roots is None else list(self._roots)

    def rescan(self) -> list[str]:
        """Search the roots again for results folders (a sweep may have started)."""
        self.found = find_results_folders(self.roots)
        return self.found

    def _idle_text(self) -> str:
        where = ", ".join(str(r) for r in self.roots)
        n = len(self.found)
        return (
            f"No results folder open: type a path or pick one of the {n} found under {where}."
            if n
            else f"No results folder open: type a path (none found under {where})."
        )

    @property
    def labels(self) -> list[str]:
        return sorted(self.summaries["label"].astype(str).unique()) if len(self.summaries) else []

    @property
    def datasets(self) -> list[str]:
        if not len(self.traces):
            return []
        return sorted(str(d) for d in self.traces["dataset"].unique())

    # -- messages --------------------------------------------------------------------
    # Same contract as the dashboard's (``messages`` and ``notifier`` set in __init__).
    notify = DashboardModel.notify

    def _set_status(self, text: str, level: str) -> None:
        self.param.update(status=text, status_level=level)

    def _fail(self, message: str) -> bool:
        self._set_status(message, "error")
        self.notify(message)
        return False

    # -- loading ---------------------------------------------------------------------
    def _read(self, path: Path) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
        if not path.exists():
            raise SettingError(f"results folder {path} does not exist")
        if not path.is_dir():
            raise SettingError(f"{path} is not a folder (a results folder holds summaries/)")
        summaries = load_summaries(path)  # one-line SettingError when there is no summary
        return summaries, load_traces(path), report_options(path)

    def open(self, path: str | Path) -> bool:
        """Open a results folder: its summaries, traces and ``[report]`` defaults.

        Returns whether it worked; on failure the status names the reason and the folder
        shown before stays.
        """
        text = str(path).strip()
        if not text:
            return self._fail("type the path of a results folder (it holds summaries/)")
        folder = Path(text).expanduser().resolve()
        try:
            summaries, traces, options = self._read(folder)
        except ErmvizError as exc:
            return self._fail(str(exc))
        except Exception as exc:  # unreadable files: say so, keep what was shown
            return self._fail(f"{folder}: {one_line(exc)}")
        eps = options.get("eps")
        try:
            eps = parse_eps(eps_text(eps)) if eps else list(DEFAULT_EPS)
        except (SettingError, TypeError, ValueError):
            eps = list(DEFAULT_EPS)
        self._install(str(folder), summaries, traces, options, eps, from_config=True)
        return True

    def refresh(self) -> bool:
        """Read the open folder again (a running sweep keeps adding cells) and rescan."""
        self.rescan()
        if not self.folder:
            self._set_status(self._idle_text(), "info")
            return True
        try:
            summaries, traces, options = self._read(Path(self.folder))
        except ErmvizError as exc:
            return self._fail(str(exc))
        except Exception as exc:
            return self._fail(f"{self.folder}: {one_line(exc)}")
        self._install(self.folder, summaries, traces, options, list(self.eps), from_config=False)
        return True

    def _install(
        self,
        folder: str,
        summaries: pd.DataFrame,
        traces: pd.DataFrame,
        options: dict[str, Any],
        eps: list[float],
        *,
        from_config: bool,
    ) -> None:
        """Show freshly read data; selections come from the config (a new folder) or are
        kept where their labels and dataset still exist (a refresh)."""
        self.summaries, self.traces, self.options = summaries, traces, options
        labels = self.labels
        if from_config or (list(self.baselines), list(self.chosen)) == self._config_sets:
            # A new folder, or a refresh before the user changed the config's sets: the
            # config's labels, including those whose first cells have arrived since.
            wanted_b, wanted_c = _names(options.get("baselines")), _names(options.get("chosen"))
        else:
            wanted_b, wanted_c = list(self.baselines), list(self.chosen)
        baselines = [x for x in wanted_b if x in labels]
        chosen = [x for x in wanted_c if x in labels]
        missing = sorted((set(wanted_b) | set(wanted_c)) - set(labels))
        datasets = self.datasets
        dataset = self.dataset if self.dataset in datasets else (datasets[0] if datasets else None)
        self.loading = True
        try:
            self.param.baselines.objects = labels
            self.param.chosen.objects = labels
            self.param.dataset.objects = datasets
            self.param.update(
                folder=folder, eps=eps, baselines=baselines, chosen=chosen, dataset=dataset
            )
        finally:
            self.loading = False
        self._config_sets = (
            (list(baselines), list(chosen))
            if wanted_b == _names(options.get("baselines"))
            and wanted_c == _names(options.get("chosen"))
            else None
        )
        self._compute()
        self.loads += 1
        n = len(summaries)
        errors = int((summaries["status"] == "error").sum())
        text = (
            f"{folder}: {n} finished cell{'s' * (n != 1)}"
            + (f" ({errors} failed)" if errors else "")
            + f", {len(labels)} method label{'s' * (len(labels) != 1)}, "
            f"{len(datasets)} dataset{'s' * (len(datasets) != 1)}"
        )
        if missing:
            text += f"; not in the results, so not used: {', '.join(missing)}"
        self._set_status(text, "success")

    # -- derived frames ---------------------------------------------------------------
    def _compute(self) -> None:
        if not len(self.summaries):
            return
        self.times = times_from_frames(self.summaries, self.traces, self.eps)
        self.profile = performance_profile(self.times)
        self._table()
        self.revision += 1

    def _table(self) -> None:
        self.table = threshold_table(self.times, self.baselines, self.chosen)
        self.table_revision += 1

    def _on_eps(self, *_: Any) -> None:
        if not self.loading:
            self._compute()

    def _on_sets(self, *_: Any) -> None:
        if not self.loading and len(self.times):
            self._table()

    def set_eps_text(self, text: str) -> bool:
        """Set the thresholds from text; a bad value is notified and changes nothing."""
        try:
            eps = parse_eps(text)
        except SettingError as exc:
            self.notify(str(exc))
            return False
        if eps != list(self.eps):
            self.eps = eps
        return True

    # -- what the view shows ---------------------------------------------------------
    def table_frame(self) -> pd.DataFrame:
        """The table as flat columns: instance, eps, one per label (seconds, NaN where the
        budget ran out) and ``speed-up`` when baselines and chosen labels are set."""
        if not len(self.table):
            return pd.DataFrame({"instance": [], "eps": []})
        frame = self.table.reset_index()
        frame.columns = [str(c) for c in frame.columns]
        return frame

    def table_text(self, fmt: str) -> str:
        """The table as ``python -m ermviz report`` writes it (``csv``, ``md``, ``html``)."""
        if not len(self.table):
            raise SettingError("open a results folder first")
        return format_table(self.table, fmt)

    def export_csv(self) -> io.StringIO:
        return io.StringIO(self.table_text("csv"))

    def export_md(self) -> io.StringIO:
        return io.StringIO(self.table_text("md"))

    def curve_lines(self, dataset: str | None = None) -> pd.DataFrame:
        """:func:`ermviz.report.curves` of ``dataset`` (default: the selected one), each
        cell's line thinned to at most :data:`MAX_CURVE_POINTS` evenly spaced rows."""
        ds = self.dataset if dataset is None else dataset
        if ds is None or not len(self.traces):
            return curves(self.summaries, self.traces.iloc[:0], "")
        lines = curves(self.summaries, self.traces, ds)
        keep = []
        for idx in lines.groupby("line", sort=False).indices.values():
            keep.append(idx[_decimate(idx.size, MAX_CURVE_POINTS)])
        return lines.iloc[np.sort(np.concatenate(keep))] if keep else lines

    def styles(self) -> dict[str, tuple[str, str]]:
        return label_styles(self.labels)


# ---------------------------------------------------------------------------------------
# The view


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


class ResultsView:
    """The Results tab: folder chooser, status, table with downloads, profile, curves.

    ``panel`` is the tab's layout; it displays in a served page and in Jupyter after
    ``pn.extension("tabulator")``.
    """

    def __init__(self, model: ResultsModel | None = None) -> None:
        import panel as pn
        from bokeh.models.widgets.tables import ScientificFormatter

        self.model = m = model or ResultsModel()
        self._pn = pn
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
        self._sync_found()
        self.found_select.param.watch(self._on_found, "value")
        self.refresh_button = pn.widgets.Button(label="↻ Refresh", width=110)
        self.refresh_button.on_click(lambda e: self._guard("refresh", m.refresh))
        self.status = pn.pane.HTML(sizing_mode="stretch_width", margin=(0, 10))
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
        self.csv_download = pn.widgets.FileDownload(
            callback=lambda: self._guard("CSV export", m.export_csv) or io.StringIO(""),
            filename="results-table.csv",
            label="Table (CSV)",
            width=160,
        )
        self.md_download = pn.widgets.FileDownload(
            callback=lambda: self._guard("Markdown export", m.export_md) or io.StringIO(""),
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
        self._show_status()
        self._show_table()
        self._show_profile()
        self._show_curves()
        self.panel = pn.Column(
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

    # -- callbacks -------------------------------------------------------------------
    def _guard(self, what: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception as exc:
            self.model.notify(f"{what}: {one_line(exc)}")
            return None

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
        pn = self._pn
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
        pn = self._pn
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
