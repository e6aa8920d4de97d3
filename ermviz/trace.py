"""Traces: one row per recorded iterate, in preallocated columnar arrays.

Schema (every family; documented in README "Trace schema"):

=============== =========================================================================
``seq``         append counter (monotone, survives thinning; readers poll ``since(seq)``)
``iteration``   index ``k`` of the iterate ``x_k`` the row describes (0 = start point)
``time_s``      solver wall time in seconds when ``x_k``'s certificate was known; time
                spent recording and evaluating is excluded
``cpu_s``       CPU time of the solver thread (honest when runs outnumber cores)
``objective``   the objective being minimized, at ``x_k``
``certificate`` the certificate at ``x_k`` (its kind is in the run's summary, e.g. fw_gap)
``step_size``   size of the step taken from ``x_k`` (0 on a final row)
``step_type``   fw / away / pairwise / drop / cd / cg / sgd / smo / newton / none (final row)
``active_size`` number of atoms (or nonzeros) in the active set at ``x_k``
extra columns   the family's own counters (``grad_evals``, ``fun_evals``, ``epoch``,
                ``kernel_evals``, ``samples``, ``dual_objective`` ...)
=============== =========================================================================

Memory is bounded: past ``max_rows`` rows the trace is thinned geometrically in the
iteration count (rows stay evenly spaced on a log axis), always keeping the first row,
the last row and every row that reaches a new best certificate level (20 levels per
decade by default), so the time to reach any such threshold stays exact.
"""

from __future__ import annotations

import math
import threading
from typing import TYPE_CHECKING

import numpy as np

from solvers.tags import STEP_NAMES

if TYPE_CHECKING:  # pandas is imported when a frame is built: it costs start-up
    import pandas as pd

BASE_COLUMNS = (
    "seq",
    "iteration",
    "time_s",
    "cpu_s",
    "objective",
    "certificate",
    "step_size",
    "step_type",
    "active_size",
)
INT_COLUMNS = {
    "seq",
    "iteration",
    "active_size",
    "grad_evals",
    "fun_evals",
    "epoch",
    "kernel_evals",
    "samples",
    "refreshes",
}


class Trace:
    """Columnar, thread-safe, bounded record of one run.

    Parameters
    ----------
    extra_columns : tuple of str
        Family-specific columns after the base ones.
    max_rows : int
        Thinning threshold (memory bound: about ``max_rows * n_columns * 8`` bytes).
    levels_per_decade : int
        Resolution of the certificate levels whose first hit is always kept.
    """

    def __init__(
        self,
        extra_columns: tuple[str, ...] = (),
        max_rows: int = 100_000,
        levels_per_decade: int = 20,
    ) -> None:
        if max_rows < 16:
            raise ValueError("max_rows must be at least 16")
        self.columns = BASE_COLUMNS + tuple(extra_columns)
        self._index = {c: i for i, c in enumerate(self.columns)}
        self.max_rows = int(max_rows)
        self.levels_per_decade = int(levels_per_decade)
        self._data = np.empty((min(1024, self.max_rows), len(self.columns)))
        self._n = 0
        self._seq = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._n

    @property
    def appended(self) -> int:
        """How many rows were ever appended (the ``seq`` of the next row)."""
        return self._seq

    def append(
        self,
        solver_columns: tuple[str, ...],
        rows: np.ndarray,
        time_s: np.ndarray,
        cpu_s: np.ndarray,
    ) -> None:
        """Append ``rows`` (shape (k, len(solver_columns))) with their times, shape (k,)."""
        k = rows.shape[0]
        if k == 0:
            return
        with self._lock:
            self._reserve(self._n + k)
            block = self._data[self._n : self._n + k]
            block[:, 0] = np.arange(self._seq, self._seq + k)
            block[:, self._index["time_s"]] = time_s
            block[:, self._index["cpu_s"]] = cpu_s
            for j, name in enumerate(solver_columns):
                block[:, self._index[name]] = rows[:, j]
            self._n += k
            self._seq += k
            if self._n > self.max_rows:
                self._thin()

    def _reserve(self, rows: int) -> None:
        if rows <= self._data.shape[0]:
            return
        cap = self._data.shape[0]
        while cap < rows:
            cap *= 2
        grown = np.empty((cap, len(self.columns)))
        grown[: self._n] = self._data[: self._n]
        self._data = grown

    def _thin(self) -> None:
        data = self._data[: self._n]
        it = data[:, self._index["iteration"]]
        cert = data[:, self._index["certificate"]]
        keep = np.zeros(self._n, dtype=bool)
        keep[0] = keep[-1] = True
        # First row at or below each new level 10^(m/20): time-to-threshold stays exact there.
        with np.errstate(divide="ignore", invalid="ignore"):
            level = np.ceil(np.log10(np.maximum(cert, 1e-300)) * self.levels_per_decade)
        level = np.where(np.isfinite(level), level, np.inf)
        running = np.minimum.accumulate(level)
        keep[1:] |= running[1:] < running[:-1]
        # Log-spaced bins in the iteration count: first row of each bin.
        # Aim at half the cap, accept up to three quarters: compaction stays amortized O(1).
        span = math.log1p(max(it[-1], 1.0))
        width = span / max(self.max_rows // 2, 8)
        while True:
            bins = np.floor(np.log1p(it) / width)
            first = np.ones(self._n, dtype=bool)
            first[1:] = bins[1:] != bins[:-1]
            mask = keep | first
            if mask.sum() <= (3 * self.max_rows) // 4 or width > span:
                break
            width *= 1.5
        kept = data[mask]
        self._data[: kept.shape[0]] = kept
        self._n = kept.shape[0]

    def since(self, seq: int) -> dict[str, np.ndarray]:
        """Copies of the columns of rows with ``seq`` >= the given one."""
        with self._lock:
            data = self._data[: self._n]
            start = int(np.searchsorted(data[:, 0], seq, side="left"))
            block = data[start:].copy()
        return {c: block[:, i] for i, c in enumerate(self.columns)}

    def last(self) -> dict[str, float] | None:
        """The most recent row, or None if the trace is empty."""
        with self._lock:
            if self._n == 0:
                return None
            row = self._data[self._n - 1].copy()
        return {c: float(row[i]) for i, c in enumerate(self.columns)}

    def to_frame(self, **constants: object) -> pd.DataFrame:
        """The trace as a tidy DataFrame; ``constants`` become columns (run_id, method ...)."""
        import pandas as pd

        cols = self.since(0)
        frame: dict[str, object] = {}
        for name, value in constants.items():
            frame[name] = [value] * len(cols["seq"])
        for name in self.columns:
            v = cols[name]
            if name == "step_type":
                frame[name] = pd.Categorical(
                    [STEP_NAMES.get(int(c), "none") for c in v],
                    categories=list(STEP_NAMES.values()),
                )
            elif name in INT_COLUMNS:
                frame[name] = v.astype(np.int64)
            else:
                frame[name] = v
        return pd.DataFrame(frame)
