"""Kept reference races: a finished race frozen so that the next one is drawn over it.

"Keep as reference" (:meth:`~ermviz.app.state.model.DashboardModel.keep_reference`) turns the
finished (or stopped) race into a :class:`Reference`: per run its label, colour and its
trace thinned on the live plots' geometric grid (:func:`~ermviz.app.plots.thinning.thin_rows`,
the points the plots drew, a few hundred rows rather than up to 100,000), copied, so the
reference holds no live object and costs little memory. It also records the race's
set-up, so the page can say which setting differs from the one racing now.

The model holds at most :data:`MAX_REFERENCES` (the oldest is dropped, with a
notification); Start and Reset leave them. The views draw them faded and dashed under
the live curves (:mod:`ermviz.app.plots.figures`) and the traces export includes their rows
with a ``race`` column (:func:`traces_with_references`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from ermviz.app.plots.thinning import thin_rows
from ermviz.app.state.race import Slot, with_settings

#: References kept at once (each adds a faded line per run to every plot).
MAX_REFERENCES = 3
#: Line dash of reference ``number`` (cycled), so kept races tell apart from each other.
REFERENCE_DASHES = ("dashed", "dotted", "dotdash")
#: The ``race`` value of the live race's rows in the traces export.
CURRENT_RACE = "current"


@dataclasses.dataclass(frozen=True)
class ReferenceRun:
    """One run of a kept race: its label and colour then, and its thinned trace frame."""

    label: str
    color: str
    run_id: str
    frame: pd.DataFrame


@dataclasses.dataclass(frozen=True)
class Reference:
    """A kept race: its ``number`` (1, 2, ... in the session: a reference keeps its name
    while it is on screen), its set-up (:func:`setup_of`) and its runs."""

    number: int
    setup: dict[str, str]
    runs: tuple[ReferenceRun, ...]

    @property
    def name(self) -> str:
        """``reference N``: the ``race`` value of its rows in the export."""
        return f"reference {self.number}"

    @property
    def dash(self) -> str:
        """The line dash of its curves."""
        return REFERENCE_DASHES[(self.number - 1) % len(REFERENCE_DASHES)]

    def legend_label(self, run: ReferenceRun) -> str:
        """The legend entry of one of its runs, e.g. ``FW exact (ref 1)``."""
        return f"{run.label} (ref {self.number})"


def thinned_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of a whole trace frame the live plots keep: the first row of each bin of
    the geometric grid in the iteration, and the last row (a copy)."""
    idx, _ = thin_rows(frame["iteration"].to_numpy(dtype=float), -1.0)
    return frame.iloc[idx].reset_index(drop=True).copy()


def freeze_race(slots: list[Slot], number: int, setup: dict[str, str]) -> Reference | None:
    """The race of ``slots`` as reference ``number``; None when no run has a trace row."""
    runs, best = [], np.inf
    for slot in slots:
        if slot.run is None or len(slot.run.trace) == 0:
            continue
        whole = slot.run.frame()
        objective = whole["objective"].to_numpy(dtype=float)
        if np.isfinite(objective).any():
            best = min(best, float(np.nanmin(objective[np.isfinite(objective)])))
        # Its settings travel with it into the traces export (race.SETTING_COLUMNS).
        frame = with_settings(thinned_frame(whole), slot, setup)
        runs.append(ReferenceRun(slot.label, slot.color, slot.run_id, frame))
    for run in runs:
        # The best objective of the whole race: the suboptimality plot's zero, then.
        run.frame.attrs["race_best"] = best if np.isfinite(best) else np.nan
    return Reference(number, dict(setup), tuple(runs)) if runs else None


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def setup_of(config: dict[str, Any], labels: list[str]) -> dict[str, str]:
    """A race's set-up as short texts, one per setting (``config``: the model's
    configuration values, problem settings under their own names; ``labels``: its runs)."""
    out = {k: _text(v) for k, v in config.items()}
    out["runs"] = ", ".join(labels)
    return out


def differences(before: dict[str, str], now: dict[str, str]) -> list[str]:
    """What changed from a reference's set-up to the current one, e.g. ``C 1000 → 10``."""
    keys = list(dict.fromkeys([*before, *now]))
    return [
        f"{k} {before.get(k, '—')} → {now.get(k, '—')}" for k in keys if before.get(k) != now.get(k)
    ]


def traces_with_references(current: pd.DataFrame, references: list[Reference]) -> pd.DataFrame:
    """The live race's traces and every kept race's thinned ones, in one frame whose first
    column ``race`` says which race a row belongs to (``current``, ``reference N``)."""
    frames = [current.assign(race=CURRENT_RACE)] if len(current) else []
    for ref in references:
        frames.extend(run.frame.assign(race=ref.name) for run in ref.runs)
    if not frames:
        return current.assign(race=np.array([], dtype=object))[["race", *current.columns]]
    out = pd.concat(frames, ignore_index=True)
    return out[["race", *(c for c in out.columns if c != "race")]]
