"""The dashboard's state: one :class:`DashboardModel` per browser session, no widgets.

Everything the dashboard shows or does is decided here, so it can be driven and tested
without a browser. The model is built in three layers, one job each:

* :class:`~ermviz.app.state.config.Configuration` (:mod:`ermviz.app.state.config`): the dataset, the
  problem and its settings, preprocessing, budgets, the seed and the racing runs;
* :class:`~ermviz.app.state.lifecycle.RaceLifecycle` (:mod:`ermviz.app.state.lifecycle`): the live
  race: build, start, pause, resume, stop, reset, end of the session;
* :class:`DashboardModel` (here): what goes in and out of a session: uploaded files, the
  results table, every run's trace, races kept as references, CSV and Parquet exports.

Errors a user can cause (bad data, a method that does not solve the chosen problem, an
out-of-range value) never escape as exceptions: they become the status ``error`` of the
runs they concern and a notification (:meth:`DashboardModel.notify`).

Its parts' names are importable from here too: ``config``, ``lifecycle``, ``runspec`` (run
specs, settings), ``race`` (slots, results, traces, exports), ``datasets`` (lists, presets,
uploads), ``messages`` (notifications) and ``references`` (races kept as references).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pandas as pd
import param

from ermviz.app.state.config import CONFIG_PARAMS, MAX_RUNS, Configuration, is_teachable
from ermviz.app.state.datasets import (
    BUNDLED,
    DATASET_PRESETS,
    MAX_UPLOAD_BYTES,
    UPLOAD_PREFIX,
    UploadFolder,
    available_datasets,
    describe_dataset,
    upload_file_name,
    upload_refusal,
)
from ermviz.app.state.lifecycle import CHUNK_SECONDS, SOLVER_NICENESS, RaceLifecycle
from ermviz.app.state.messages import dashboard_wording, one_line
from ermviz.app.state.race import (
    PALETTE,
    RESULT_COLUMNS,
    THRESHOLDS,
    Slot,
    csv_bytes,
    parquet_bytes,
    result_rows_of,
    traces_of,
)
from ermviz.app.state.references import (
    MAX_REFERENCES,
    Reference,
    freeze_race,
    traces_with_references,
)
from ermviz.app.state.runspec import RunSpec, default_specs, parse_settings, settings_of
from ermviz.errors import DataError

__all__ = [
    "BUNDLED",
    "CHUNK_SECONDS",
    "CONFIG_PARAMS",
    "DATASET_PRESETS",
    "MAX_RUNS",
    "MAX_UPLOAD_BYTES",
    "PALETTE",
    "RESULT_COLUMNS",
    "SOLVER_NICENESS",
    "THRESHOLDS",
    "UPLOAD_PREFIX",
    "Configuration",
    "DashboardModel",
    "RaceLifecycle",
    "RunSpec",
    "Slot",
    "available_datasets",
    "dashboard_wording",
    "default_specs",
    "describe_dataset",
    "is_teachable",
    "one_line",
    "parse_settings",
    "settings_of",
]


class DashboardModel(RaceLifecycle):
    """All the state of one dashboard session: its configuration
    (:class:`~ermviz.app.state.config.Configuration`), its live race
    (:class:`~ermviz.app.state.lifecycle.RaceLifecycle`), and its uploads, results, kept
    references and exports (here).
    """

    references = param.List(
        default=[], item_type=Reference, doc="Kept races drawn faded (oldest first)"
    )

    def __init__(self, notifier: Callable[[str, str], None] | None = None, **params: Any) -> None:
        super().__init__(notifier, **params)
        self._upload_folder = UploadFolder()
        self._kept_race = -1  # race_revision of the race last kept as a reference
        self._references_made = 0

    def shutdown(self) -> None:
        """End of the session: stop every run, start none from now on (a Start still
        building its race), and delete uploaded files."""
        super().shutdown()
        self._upload_folder.close()

    # -- uploads ---------------------------------------------------------------------
    def add_upload(self, filename: str, content: bytes | str) -> str | None:
        """Store an uploaded LIBSVM/CSV file, check that it parses, and select it.

        Returns the dataset name it gets (``upload:<file name>``), or None after notifying
        the reason (too large, empty, unparsable: the parser's one-line message).
        """
        if isinstance(content, str):
            content = content.encode("utf-8")
        safe = upload_file_name(filename)
        refusal = upload_refusal(safe, content)
        if refusal is not None:
            self.notify(refusal)
            return None
        try:
            path = self._upload_folder.store(safe, content)
        except DataError as exc:
            self.notify(str(exc))
            return None
        name = f"{UPLOAD_PREFIX}{safe}"
        self.uploads[name] = path
        objects = list(self.param.dataset.objects)
        if name not in objects:
            self.param.dataset.objects = [*objects, name]
        self.dataset = name
        return name

    # -- results ---------------------------------------------------------------------
    def results(self) -> pd.DataFrame:
        """One row per run: label, status, iterations, trace rows kept, times, final
        certificate and objective, time to reach each threshold, test accuracy (when there is
        a test split), message."""
        return pd.DataFrame(self.result_rows(), columns=list(RESULT_COLUMNS))

    def result_rows(self) -> list[dict[str, Any]]:
        """:meth:`results` as plain dicts (what the live table shows, without pandas)."""
        return result_rows_of(self.slots)

    def traces(self) -> pd.DataFrame:
        """Every run's whole trace (``run.frame()``), with its label, and each kept
        reference's thinned one, in one tidy frame; its ``race`` column says which race."""
        return traces_with_references(traces_of(self.slots, self._race_setup), self.references)

    # -- references ------------------------------------------------------------------
    @property
    def can_keep_reference(self) -> bool:
        """True when the race has ended (finished or stopped), has trace rows and is not
        kept yet."""
        return (
            self.race_status == "finished"
            and self._kept_race != self.race_revision
            and any(s.run is not None and len(s.run.trace) for s in self.slots)
        )

    def keep_reference(self) -> Reference | None:
        """Keep the ended race as a reference (dropping the oldest beyond MAX_REFERENCES)."""
        if self.race_status != "finished":
            self.notify("keep a race as reference once it has finished or been stopped", "warning")
            return None
        if self._kept_race == self.race_revision:
            self.notify("this race is kept already; start a new one to compare", "warning")
            return None
        ref = freeze_race(self.slots, self._references_made + 1, self._race_setup)
        if ref is None:
            self.notify("no run of this race has a trace to keep; start a race first", "warning")
            return None
        self._references_made += 1
        self._kept_race = self.race_revision
        kept = [*self.references, ref]
        if len(kept) > MAX_REFERENCES:
            self.notify(
                f"at most {MAX_REFERENCES} references are kept: {kept[0].name} was dropped",
                "info",
            )
        self.references = kept[-MAX_REFERENCES:]
        return ref

    def clear_references(self) -> None:
        """Drop every kept reference."""
        self.references = []

    def export_csv(self) -> io.BytesIO:
        return csv_bytes(self.traces())

    def export_parquet(self) -> io.BytesIO:
        return parquet_bytes(self.traces())
