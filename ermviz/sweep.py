"""Sweeps: a grid of runs on Dask distributed, stored as Parquet, resumable.

A sweep config (TOML) lists one or more grids; each grid is the product of its datasets,
problems, methods, step rules, list-valued settings and seeds, with its own budget and
preprocessing. Every cell runs headless through the same runner as the dashboard and the
CLI (:func:`ermviz.experiment.execute`) on a Dask worker: an embedded ``LocalCluster``
sized to the cores, or an existing cluster (``--scheduler tcp://host:8786``).

Storage in the output folder (a Parquet dataset, one file per cell and kind)::

    DIR/traces/<cell_id>.parquet     one row per checkpoint (trace schema + cell labels)
    DIR/summaries/<cell_id>.parquet  one row per run: config, status, final measures,
                                     package versions and machine information
    DIR/config.toml                  the config the sweep was started with

Each file is written to a temporary name and renamed (atomic); the summary is written
last, so a cell counts as finished exactly when its summary exists. Re-running the same
command skips finished cells and redoes unfinished ones: no duplicates, nothing lost when a
worker dies (Dask re-runs its task) or the whole sweep is interrupted. A cell that fails is
recorded with status ``error`` and its message, and the sweep goes on (``--retry-failed``
re-runs those). A caller may follow the cells as they finish (``on_progress``) and stop the
sweep (``cancel``: the unfinished cells are cancelled, nothing is recorded for them, and an
embedded cluster is shut down with its worker processes; :class:`SweepCancelled`).

Example config::

    name = "fw-family"
    [[grid]]
    datasets = ["a1a", "w1a"]
    problems = ["logreg-l1"]
    methods = ["fw", "pfw"]
    steps = ["adaptive", "exact"]
    seeds = [0]
    settings = { radius = [10.0] }           # list values become grid axes
    budget = { tol = 1e-4, max_iter = 100000, max_time = 60 }
    preprocessing = { standardize = false }
    [report]
    eps = [1e-2, 1e-4]
    baselines = ["fw-adaptive"]
    chosen = ["pfw-exact"]
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import platform
import socket
import sys
import threading
import time
import tomllib
import warnings
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ermviz.errors import ErmvizError, SettingError
from ermviz.io import write_frame_atomic, write_text_atomic

GRID_KEYS = {
    "datasets",
    "problems",
    "methods",
    "steps",
    "seeds",
    "settings",
    "budget",
    "preprocessing",
    "label",
}


@dataclass(frozen=True)
class Cell:
    """One run of a sweep, fully described by plain values (picklable, hashable)."""

    dataset: str
    problem: str
    method: str
    step: str
    seed: int = 0
    settings: tuple[tuple[str, Any], ...] = ()
    budget: tuple[tuple[str, Any], ...] = ()
    preprocessing: tuple[tuple[str, Any], ...] = ()
    label: str = ""

    @property
    def cell_id(self) -> str:
        """Stable id of the configuration (the label is not part of it)."""
        key = asdict(self)
        key.pop("label")
        blob = json.dumps(key, sort_keys=True, default=str)
        return hashlib.sha1(blob.encode()).hexdigest()[:16]

    def run_config(self) -> Any:
        from ermviz.experiment import Preprocessing, RunConfig
        from ermviz.runner import Budget

        prep = dict(self.preprocessing)
        prep.setdefault("seed", self.seed)
        return RunConfig(
            self.dataset,
            self.problem,
            self.method,
            self.step,
            dict(self.settings),
            Budget(**dict(self.budget)),
            Preprocessing(**prep),
            label=self.label,
        )


@dataclass
class SweepConfig:
    """A parsed sweep config: its cells and report options."""

    name: str
    cells: list[Cell]
    report: dict[str, Any] = field(default_factory=dict)
    text: str = ""


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def _grid_cells(grid: dict[str, Any], where: str) -> list[Cell]:
    unknown = sorted(set(grid) - GRID_KEYS)
    if unknown:
        raise SettingError(
            f"{where}: unknown key {unknown[0]!r}; allowed: {', '.join(sorted(GRID_KEYS))}"
        )
    for key in ("datasets", "problems", "methods", "steps"):
        if not grid.get(key):
            raise SettingError(f"{where}: {key!r} is missing or empty")
    settings = grid.get("settings", {})
    names = sorted(settings)
    combos = list(itertools.product(*[_as_list(settings[k]) for k in names])) or [()]
    budget = tuple(sorted(grid.get("budget", {}).items()))
    prep = tuple(sorted(grid.get("preprocessing", {}).items()))
    cells = []
    for ds, pb, m, st, seed, combo in itertools.product(
        _as_list(grid["datasets"]),
        _as_list(grid["problems"]),
        _as_list(grid["methods"]),
        _as_list(grid["steps"]),
        _as_list(grid.get("seeds", [0])),
        combos,
    ):
        s = tuple(zip(names, combo, strict=True))
        label = grid.get("label") or f"{m}-{st}"
        cells.append(Cell(ds, pb, m, st, int(seed), s, budget, prep, label))
    return cells


def load_config(path: str | Path) -> SweepConfig:
    """Parse and validate a sweep config; every cell's names and settings are checked."""
    path = Path(path)
    try:
        text = path.read_text()
        raw = tomllib.loads(text)
    except FileNotFoundError:
        raise SettingError(f"sweep config {path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingError(f"{path}: not valid TOML ({exc})") from None
    grids = raw.get("grid")
    if not isinstance(grids, list) or not grids:
        raise SettingError(f"{path}: needs at least one [[grid]] table")
    cells: list[Cell] = []
    for i, grid in enumerate(grids):
        cells += _grid_cells(grid, f"{path} [[grid]] #{i + 1}")
    _validate(cells, path)
    unique = list(dict.fromkeys(cells))
    return SweepConfig(str(raw.get("name", path.stem)), unique, raw.get("report", {}), text)


def _validate(cells: Iterable[Cell], path: Path) -> None:
    from ermviz.experiment import split_settings
    from ermviz.registry import get_problem, resolve_method_settings
    from ermviz.settings import resolve_settings

    for c in cells:
        try:
            cfg = c.run_config()  # aliases resolved; budget and preprocessing ranges
            ps, ms = split_settings(cfg.problem, cfg.method, cfg.step, cfg.settings)
            resolve_method_settings(cfg.method, cfg.step, cfg.problem, ms)
            resolve_settings(get_problem(cfg.problem).settings_decl, ps, owner=cfg.problem)
        except TypeError as exc:
            raise SettingError(f"{path}: cell {c.label} on {c.dataset}: {exc}") from None
        except ErmvizError as exc:
            raise SettingError(f"{path}: cell {c.label} on {c.dataset}: {exc}") from None


def machine_info() -> dict[str, Any]:
    """Where a cell ran (recorded with every summary)."""
    return {
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "cpu_count": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
    }


def run_cell(cell: Cell, out_dir: str, sweep_name: str = "") -> dict[str, Any]:
    """Run one cell and store its trace, then its summary (runs on a Dask worker)."""
    from ermviz.experiment import execute

    out = Path(out_dir)
    started = time.time()
    labels = {"cell_id": cell.cell_id, "sweep": sweep_name, "label": cell.label, "seed": cell.seed}
    try:
        frame, summary = execute(cell.run_config(), run_id=cell.cell_id)
    except Exception as exc:  # recorded, and the sweep goes on
        frame, summary = pd.DataFrame(), _error_summary(cell, exc)
    if len(frame):
        for key, value in labels.items():
            frame.insert(0, key, value)
    write_frame_atomic(frame, out / "traces" / f"{cell.cell_id}.parquet")
    row = {**labels, **summary}
    row["settings"] = json.dumps(dict(cell.settings), sort_keys=True)
    row["budget"] = json.dumps(dict(cell.budget), sort_keys=True)
    row["preprocessing"] = json.dumps(dict(cell.preprocessing), sort_keys=True)
    row["versions"] = json.dumps(summary.get("versions", {}), sort_keys=True)
    row["machine"] = json.dumps(machine_info(), sort_keys=True)
    row["started_at"] = started
    row["finished_at"] = time.time()
    write_frame_atomic(pd.DataFrame([row]), out / "summaries" / f"{cell.cell_id}.parquet")
    return row


def _error_summary(cell: Cell, exc: BaseException) -> dict[str, Any]:
    return {
        "dataset": cell.dataset,
        "problem": cell.problem,
        "method": cell.method,
        "step": cell.step,
        "status": "error",
        "message": f"{type(exc).__name__}: {exc}",
        "iterations": 0,
        "time_s": float("nan"),
        "objective": float("nan"),
        "gap": float("nan"),
    }


def _record_failure(cell: Cell, out_dir: str, sweep_name: str, exc: BaseException) -> None:
    """Store an error summary for a cell whose task never returned (its worker kept dying)."""
    row = {
        "cell_id": cell.cell_id,
        "sweep": sweep_name,
        "label": cell.label,
        "seed": cell.seed,
        **_error_summary(cell, exc),
    }
    for key in ("settings", "budget", "preprocessing"):
        row[key] = json.dumps(dict(getattr(cell, key)), sort_keys=True)
    row["versions"] = "{}"
    row["machine"] = json.dumps(machine_info(), sort_keys=True)
    row["started_at"] = row["finished_at"] = time.time()
    write_frame_atomic(pd.DataFrame([row]), Path(out_dir) / "summaries" / f"{cell.cell_id}.parquet")


def finished_cells(out_dir: str | Path, *, include_failed: bool = True) -> set[str]:
    """Ids of the cells whose summary exists (optionally not counting failed ones)."""
    folder = Path(out_dir) / "summaries"
    if not folder.is_dir():
        return set()
    ids = {p.stem for p in folder.glob("*.parquet")}
    if include_failed or not ids:
        return ids
    summ = load_summaries(out_dir)
    return set(summ.loc[summ["status"] != "error", "cell_id"])


class UnreadableResultWarning(UserWarning):
    """A results file was skipped because it could not be read (see :func:`read_result`)."""


def _warn_skipped(message: str) -> None:
    warnings.warn(message, UnreadableResultWarning, stacklevel=4)


def read_result(path: Path, on_skip: Callable[[str], None] | None = None) -> pd.DataFrame | None:
    """The Parquet file ``path``, or None after telling ``on_skip`` (default: a
    :class:`UnreadableResultWarning`) one line naming the file and why.

    The sweep never leaves a partial file under a result's name, but a results folder
    travels: a copy cut short, a disk error or a stray file named ``*.parquet`` must cost
    its own cell in a report or the Results tab, not the whole folder.
    """
    try:
        return pd.read_parquet(path)
    except Exception as exc:  # whatever pyarrow raises on a damaged file
        text = " ".join(str(exc).split())
        (on_skip or _warn_skipped)(
            f"skipped {path}: not a readable Parquet file ({type(exc).__name__}: {text})"
        )
        return None


def load_summaries(
    out_dir: str | Path, on_skip: Callable[[str], None] | None = None
) -> pd.DataFrame:
    """All summary rows of a results folder (one per finished cell); unreadable files
    are skipped and named to ``on_skip`` (see :func:`read_result`)."""
    files = sorted((Path(out_dir) / "summaries").glob("*.parquet"))
    if not files:
        raise SettingError(f"{out_dir}: no finished cells (no summaries/*.parquet)")
    frames = [f for f in (read_result(path, on_skip) for path in files) if f is not None]
    if not frames:
        raise SettingError(
            f"{out_dir}: no readable summary (all {len(files)} summaries/*.parquet are damaged)"
        )
    return pd.concat(frames, ignore_index=True)


def load_traces(
    out_dir: str | Path,
    cell_ids: Iterable[str] | None = None,
    on_skip: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Trace rows of finished cells (all, or those in ``cell_ids``); unreadable files
    are skipped and named to ``on_skip`` (see :func:`read_result`)."""
    done = finished_cells(out_dir)
    wanted = done if cell_ids is None else done & set(cell_ids)
    frames = []
    for cid in sorted(wanted):
        f = Path(out_dir) / "traces" / f"{cid}.parquet"
        if f.exists():
            t = read_result(f, on_skip)
            if t is not None and len(t):
                frames.append(t)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _client(scheduler: str | None, workers: int | None) -> tuple[Any, Any]:
    from dask.distributed import Client, LocalCluster

    if scheduler:
        try:
            return Client(scheduler, timeout="10s"), None
        except OSError as exc:
            raise SettingError(f"--scheduler {scheduler}: cannot connect ({exc})") from None
    n = workers or os.cpu_count() or 1
    cluster = LocalCluster(
        n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None
    )
    return Client(cluster), cluster


def sweep(
    config: str | Path | SweepConfig,
    out_dir: str | Path,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    retry_failed: bool = False,
    progress: bool = True,
    client: Any = None,
    on_progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
) -> pd.DataFrame:
    """Run every unfinished cell of ``config``; return the summaries of all its cells.

    Parameters
    ----------
    config : path or SweepConfig
    out_dir : path
        Results folder (created if missing).
    scheduler : str, optional
        Address of an existing Dask scheduler; default: an embedded LocalCluster with one
        single-threaded worker process per core (``workers`` overrides the count).
    retry_failed : bool
        Also re-run cells recorded with status ``error``.
    client : dask.distributed.Client, optional
        Use this client (tests; the caller owns it).
    on_progress : callable, optional
        Called as ``on_progress(done, total)`` (cells with a summary, cells of the config)
        once before the cells are submitted and after each cell, on the calling thread.
    cancel : threading.Event, optional
        Set it (from another thread) to stop: :class:`SweepCancelled` is raised within
        about :data:`POLL_S` s; cells finished before stay recorded, so a re-run resumes.
    """
    cfg = config if isinstance(config, SweepConfig) else load_config(config)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if cfg.text:
        write_text_atomic(cfg.text, out / "config.toml")
    done = finished_cells(out, include_failed=not retry_failed)
    todo = [c for c in cfg.cells if c.cell_id not in done]
    _remove_partial_writes(out, todo)
    total = len(cfg.cells)
    if on_progress is not None:
        on_progress(total - len(todo), total)
    owned = None
    if todo:
        if client is None:
            client, owned = _client(scheduler, workers)
            own_client = True
        else:
            own_client = False
        try:
            before = total - len(todo)
            report = None if on_progress is None else lambda k: on_progress(before + k, total)
            _submit_all(client, todo, str(out.resolve()), cfg.name, progress, report, cancel)
        finally:
            if own_client:
                client.close()
                if owned is not None:
                    owned.close()
    summ = load_summaries(out)
    ids = {c.cell_id for c in cfg.cells}
    return summ[summ["cell_id"].isin(ids)].reset_index(drop=True)


class SweepCancelled(ErmvizError):
    """The sweep was stopped through its ``cancel`` event before every cell finished."""


def _remove_partial_writes(out: Path, cells: list[Cell]) -> None:
    """Delete temporary files a killed sweep left behind for cells about to run again
    (write_frame_atomic names them ``.<cell_id>.parquet.<random>``); they never were results."""
    for cell in cells:
        for sub in ("summaries", "traces"):
            for tmp in (out / sub).glob(f".{cell.cell_id}.parquet.*"):
                tmp.unlink(missing_ok=True)


#: Seconds between two looks at a sweep's ``cancel`` event while no cell finishes.
POLL_S = 0.1


def _submit_all(
    client: Any,
    cells: list[Cell],
    out: str,
    name: str,
    progress: bool,
    on_done: Callable[[int], None] | None = None,
    cancel: threading.Event | None = None,
) -> None:
    from dask.distributed import as_completed

    by_key = {}
    futures = []
    for c in cells:
        fut = client.submit(run_cell, c, out, name, key=f"cell-{c.cell_id}", pure=False, retries=2)
        by_key[fut.key] = c
        futures.append(fut)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(futures), unit="cell", file=sys.stderr, desc="sweep")
    finished = 0
    try:
        pending = as_completed(futures)
        while not pending.is_empty():
            if cancel is not None and cancel.is_set():
                # Before recording anything: a cancelled cell is unfinished, not failed.
                client.cancel(futures)
                raise SweepCancelled(f"sweep stopped with {len(cells) - finished} cells unfinished")
            if not pending.has_ready():
                time.sleep(POLL_S)
                continue
            fut = next(pending)
            try:
                row = fut.result()
                if bar is not None:
                    bar.set_postfix_str(f"{row['label']} {row['dataset']}: {row['status']}")
            except Exception as exc:  # the task itself died (its worker kept dying)
                _record_failure(by_key[fut.key], out, name, exc)
                if bar is not None:
                    bar.write(f"cell {fut.key} failed: {exc}")
            finished += 1
            if bar is not None:
                bar.update(1)
            if on_done is not None:
                on_done(finished)
    finally:
        if bar is not None:
            bar.close()
