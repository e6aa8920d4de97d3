"""The Results tab's state: a sweep's results folder and every number it shows.

:class:`ResultsModel` holds the state (the open folder, its summaries and traces, the
thresholds, the baseline and chosen method labels, the dataset whose curves are shown) and
computes every number with :mod:`ermviz.report`, so the tab shows what ``python -m ermviz
report DIR`` writes: the time-to-threshold table (blank where the budget ran out, with the
speed-up column), the Dolan-More performance profiles and the certificate-vs-time curves
per dataset. It holds no widget: :mod:`ermviz.app.results.view` draws it.

Which folder: a path typed in (a folder on the server, holding ``summaries/``), or one of
the results folders found under the roots named by ``ERMVIZ_RESULTS`` (``os.pathsep``-
separated; default ``results/`` and ``benchmarks/results/`` under the server's working
directory), searched to :data:`SCAN_DEPTH` levels. The thresholds and the baseline and
chosen labels default to the ``[report]`` table of the folder's ``config.toml``.

The folder is never part of the URL: :mod:`ermviz.app.state.urlstate` carries only the race
configuration of :class:`~ermviz.app.state.model.DashboardModel`, so a link cannot make the
server read a folder of its choosing.

On a fresh install there are no results: "Run a small sweep" runs the bundled sweep
:data:`SMALL_SWEEP` (bundled datasets only, no network) with :func:`ermviz.sweep.sweep` on
an embedded Dask ``LocalCluster`` of :data:`SMALL_SWEEP_WORKERS` worker processes, into a
fresh folder under the session's own temporary folder (a new one per run, so two runs never
mix; the previous one is deleted once the new one is shown, all of them when the session
ends), and then opens it. It works when ``ERMVIZ_RESULTS`` is set empty too: the page then
reads only the folder the server itself just wrote, never one a user names. One small sweep
runs at a time per server process (a classroom clicking at once would otherwise start two
worker processes per page); another page asking meanwhile is told so in one line. A session
that ends mid-sweep cancels it (:meth:`ResultsModel.shutdown`): its workers are shut down
and its folder deleted.
"""

from __future__ import annotations

import io
import math
import os
import re
import shutil
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import param

from ermviz.access import results_allowed, results_policy
from ermviz.app.state.messages import _panel_notifier, one_line
from ermviz.app.state.model import DashboardModel
from ermviz.app.state.race import PALETTE
from ermviz.data.sources import REPO_DATASETS
from ermviz.errors import ErmvizError, SettingError
from ermviz.report import (
    curves,
    format_table,
    performance_profile,
    report_options,
    threshold_table,
    times_from_frames,
)
from ermviz.sweep import SweepCancelled, load_config, load_summaries, load_traces, sweep

#: Thresholds when the folder's config names none (those of ``python -m ermviz report``).
DEFAULT_EPS: tuple[float, ...] = (1e-2, 1e-4, 1e-6)
#: Environment variable naming the folders searched for results (``os.pathsep``-separated).
RESULTS_ENV = "ERMVIZ_RESULTS"
#: What the tab says when ``ERMVIZ_RESULTS`` is set empty.
OFF_TEXT = (
    "Results folders are turned off on this server (ERMVIZ_RESULTS is set empty); run "
    "`python -m ermviz report DIR` where the results are"
)
#: What the tab says to a session that may not open folders (:mod:`ermviz.access`).
TEACHER_ONLY_TEXT = (
    "Results folders on this server are for the teacher (log in with the teacher's "
    "password); run `python -m ermviz report DIR` where the results are"
)
SERVED_OFF_TEXT = (
    "Results folders are turned off on this server (it serves a class: `ermviz serve "
    "--admin-password` opens them to the teacher); run `python -m ermviz report DIR` where "
    "the results are"
)
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
#: The bundled sweep behind "Run a small sweep" (its header says what it compares).
SMALL_SWEEP: Path = REPO_DATASETS / "sweeps" / "small.toml"
#: Worker processes of its embedded cluster: one single-threaded worker per core, at most
#: two (measured on this shared 2-core machine: the 12 cells in 11-24 s of wall time).
SMALL_SWEEP_WORKERS = max(1, min(2, os.cpu_count() or 1))
# One small sweep at a time in this server process, whatever the number of pages.
_SWEEP_SLOT = threading.Lock()


def folder_access() -> bool:
    """False when ``ERMVIZ_RESULTS`` is set and empty: the server's operator turned the
    Results tab's folder access off (no folder is listed, a typed path is refused)."""
    env = os.environ.get(RESULTS_ENV)
    return env is None or bool(env.strip())


def folder_denial(user: str | None) -> str:
    """Why a session of ``user`` may not open results folders (empty when it may): folder
    access turned off (:func:`folder_access`), or the server's rule for who may
    (:func:`ermviz.access.results_allowed`: the teacher only, or nobody, when serving a
    class)."""
    if not folder_access():
        return OFF_TEXT
    if results_allowed(user):
        return ""
    return TEACHER_ONLY_TEXT if results_policy() == "teacher" else SERVED_OFF_TEXT


def session_user() -> str | None:
    """The user logged in to the served session being built (``ermviz serve --password``;
    :mod:`ermviz.app.serving.login`), or None (no login, or no session)."""
    import panel as pn

    doc = pn.state.curdoc
    if doc is None or doc.session_context is None:
        return None
    return pn.state.user


def results_roots() -> list[Path]:
    """The folders searched for results: ``ERMVIZ_RESULTS`` or the defaults (none when
    folder access is off, see :func:`folder_access`)."""
    if not folder_access():
        return []
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
    sweep_state = param.Selector(
        default="idle",
        objects=["idle", "running", "done", "failed"],
        doc="The bundled small sweep of this page: not run, running, shown, or failed",
    )
    sweep_done = param.Integer(default=0, doc="Cells of the running small sweep finished")
    sweep_total = param.Integer(default=0, doc="Cells of the small sweep")

    def __init__(
        self,
        notifier: Callable[[str, str], None] | None = None,
        roots: Iterable[Path | str] | None = None,
        user: str | None = None,
        **params: Any,
    ) -> None:
        super().__init__(**params)
        # Decided once per session: who logged in does not change (None: the session's).
        self.denial = folder_denial(session_user() if user is None else user)
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
        # The small sweep: set by shutdown() to cancel a running one; its session folder.
        self._cancel = threading.Event()
        self._sweep_lock = threading.Lock()
        self._sweep_root: Path | None = None
        self._sweep_cleanup: weakref.finalize | None = None
        self._sweep_running = False
        self.param.watch(self._on_eps, ["eps"])
        self.param.watch(self._on_sets, ["baselines", "chosen"])
        self.rescan()
        self._set_status(self._idle_text(), "info")

    # -- folders ---------------------------------------------------------------------
    @property
    def access(self) -> bool:
        """Whether this session may open results folders (else :attr:`denial` says why)."""
        return not self.denial

    @property
    def roots(self) -> list[Path]:
        if not self.access:
            return []
        return results_roots() if self._roots is None else list(self._roots)

    def rescan(self) -> list[str]:
        """Search the roots again for results folders (a sweep may have started)."""
        self.found = find_results_folders(self.roots)
        return self.found

    def _idle_text(self) -> str:
        if not self.access:
            return self.denial
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
    def _read(
        self, path: Path, skipped: list[str]
    ) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
        """The folder's summaries, the traces of those summaries and its options; each
        file that cannot be read is left out and named in ``skipped``."""
        if not path.exists():
            raise SettingError(f"results folder {path} does not exist")
        if not path.is_dir():
            raise SettingError(f"{path} is not a folder (a results folder holds summaries/)")
        # One-line SettingError when there is no (readable) summary.
        summaries = load_summaries(path, skipped.append)
        traces = load_traces(path, summaries["cell_id"], skipped.append)
        return summaries, traces, report_options(path)

    def _tell_skipped(self, skipped: list[str]) -> None:
        """Warn about each file a read left out, and say how many in the status line."""
        for message in skipped:
            self.notify(message, "warning")
        if skipped:
            n = len(skipped)
            self._set_status(
                f"{self.status}; skipped {n} unreadable file{'s' * (n != 1)}", "success"
            )

    def open(self, path: str | Path) -> bool:
        """Open a results folder: its summaries, traces and ``[report]`` defaults.

        Returns whether it worked; on failure the status names the reason and the folder
        shown before stays.
        """
        text = str(path).strip()
        if not self.access:
            return self._fail(self.denial)
        if not text:
            return self._fail("type the path of a results folder (it holds summaries/)")
        return self._open_folder(Path(text).expanduser().resolve())

    def _open_folder(self, folder: Path) -> bool:
        """Read and show ``folder`` (whatever folder access says: see :meth:`open`)."""
        skipped: list[str] = []
        try:
            summaries, traces, options = self._read(folder, skipped)
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
        self._tell_skipped(skipped)
        return True

    def refresh(self) -> bool:
        """Read the open folder again (a running sweep keeps adding cells) and rescan."""
        self.rescan()
        if not self.folder:
            self._set_status(self._idle_text(), "info")
            return True
        skipped: list[str] = []
        try:
            summaries, traces, options = self._read(Path(self.folder), skipped)
        except ErmvizError as exc:
            return self._fail(str(exc))
        except Exception as exc:
            return self._fail(f"{self.folder}: {one_line(exc)}")
        self._install(self.folder, summaries, traces, options, list(self.eps), from_config=False)
        self._tell_skipped(skipped)
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

    # -- the bundled small sweep ------------------------------------------------------
    @property
    def closed(self) -> bool:
        """True once :meth:`shutdown` ended the session: no small sweep starts any more."""
        return self._cancel.is_set()

    def begin_small_sweep(self) -> Path | None:
        """Start a run of :data:`SMALL_SWEEP` (call on the page's thread): a fresh, empty
        folder for it, or None after notifying why not (one is running, the page closed)."""
        if self.closed:
            return None
        if self.sweep_state == "running":
            self.notify("the small sweep is already running: wait for it to finish", "warning")
            return None
        with self._sweep_lock:
            if self._sweep_root is None:
                self._sweep_root = Path(tempfile.mkdtemp(prefix="ermviz-sweeps-"))
                # Deleted by shutdown(), or when the model is collected or Python exits.
                self._sweep_cleanup = weakref.finalize(
                    self, shutil.rmtree, str(self._sweep_root), ignore_errors=True
                )
            folder = Path(tempfile.mkdtemp(prefix="small-", dir=self._sweep_root))
        self.param.update(sweep_state="running", sweep_done=0, sweep_total=0)
        self._set_status(f"Running the bundled small sweep ({SMALL_SWEEP.name}) ...", "info")
        return folder

    def run_small_sweep(self, folder: Path, on_progress: Callable[[int, int], None]) -> None:
        """Run :data:`SMALL_SWEEP` into ``folder`` on an embedded Dask cluster; blocks for
        the whole sweep, so call it off the page's thread. ``on_progress(done, total)`` is
        called on this thread as cells finish. Raises a one-line :class:`SettingError`
        when another page's small sweep holds the server's slot, and
        :class:`~ermviz.sweep.SweepCancelled` when :meth:`shutdown` stopped it."""
        if not _SWEEP_SLOT.acquire(blocking=False):
            raise SettingError(
                "another page is running the small sweep on this server; "
                "try again when it has finished (well under a minute)"
            )
        try:
            with self._sweep_lock:
                if self.closed:  # the page closed before the sweep got going
                    raise SweepCancelled("the page was closed before the sweep started")
                self._sweep_running = True
            config = load_config(SMALL_SWEEP)
            sweep(
                config,
                folder,
                workers=SMALL_SWEEP_WORKERS,
                progress=False,
                on_progress=on_progress,
                cancel=self._cancel,
            )
        finally:
            _SWEEP_SLOT.release()
            with self._sweep_lock:
                self._sweep_running = False
                if self.closed:  # the session ended meanwhile: nobody will read the folder
                    self._remove_sweep_folders()

    def end_small_sweep(self, folder: Path, error: BaseException | None = None) -> bool:
        """Finish a run begun by :meth:`begin_small_sweep` (call on the page's thread):
        show ``folder``, deleting the previous run's, or notify ``error`` in one line."""
        if self.closed:
            return False
        if error is None:
            shown_before = self.folder
            if self._open_folder(folder.resolve()):
                self.sweep_state = "done"
                root = self._sweep_root
                if shown_before and root and Path(shown_before).parent == root.resolve():
                    shutil.rmtree(shown_before, ignore_errors=True)  # an older small sweep
                return True
        else:
            self._fail(f"small sweep: {one_line(error)}")
        self.sweep_state = "failed"
        shutil.rmtree(folder, ignore_errors=True)
        return False

    def small_sweep(self) -> bool:
        """Run the bundled small sweep and show it, all on this thread (notebooks, tests;
        the Results tab runs the same three steps with the sweep off the page's thread)."""
        folder = self.begin_small_sweep()
        if folder is None:
            return False
        try:
            self.run_small_sweep(folder, self.set_sweep_progress)
        except Exception as exc:  # told in one line; the folder shown before stays
            return self.end_small_sweep(folder, exc)
        return self.end_small_sweep(folder)

    def set_sweep_progress(self, done: int, total: int) -> None:
        """Show that ``done`` of the small sweep's ``total`` cells have finished."""
        if self.sweep_state == "running":
            self.param.update(sweep_done=done, sweep_total=total)
            # The first cells take the longest: the workers start and load the kernels.
            starting = f"starting {SMALL_SWEEP_WORKERS} Dask workers, " if done == 0 else ""
            self._set_status(
                f"Running the bundled small sweep ({SMALL_SWEEP.name}): "
                f"{starting}{done} of {total} cells done",
                "info",
            )

    def _remove_sweep_folders(self) -> None:
        if self._sweep_cleanup is not None:
            self._sweep_cleanup()  # removes the session's whole sweep folder
            self._sweep_root = self._sweep_cleanup = None

    def shutdown(self) -> None:
        """End of the session: cancel a running small sweep (its workers are shut down)
        and delete the small sweeps' folders (a running one's once it has stopped)."""
        self._cancel.set()
        with self._sweep_lock:
            if not self._sweep_running:
                self._remove_sweep_folders()

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
