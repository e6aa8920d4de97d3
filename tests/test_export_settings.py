"""The traces export says how each race was set up (issue 32).

Every row of the CSV (and Parquet) export carries its run's dataset, problem and its
settings, method, step rule and their settings, budget, seed and preprocessing
(:data:`ermviz.app.state.race.SETTING_COLUMNS`). Read back with plain ``pandas.read_csv``, they
must equal what the race was set up with - for the live race and for a kept reference
race set up differently.
"""

from __future__ import annotations

import io
import json
import time

import pandas as pd
import pytest

from ermviz.app.state.model import DashboardModel
from ermviz.app.state.race import SETTING_COLUMNS
from ermviz.app.state.runspec import RunSpec


def _race(model: DashboardModel) -> None:
    model.launch(model.prepare())
    deadline = time.monotonic() + 120
    while not all(s.done for s in model.slots) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(s.done for s in model.slots)
    assert all(s.run is not None and len(s.run.trace) > 0 for s in model.slots)


def _check(rows: pd.DataFrame, C: float, spec: RunSpec, tol: float) -> None:
    """One run's rows carry exactly the set-up of the race below."""
    for column in ("dataset", "problem", "method", "step", *SETTING_COLUMNS):
        assert column in rows, column
        # One value per run (NaN for the empty seed of a deterministic method).
        assert rows[column].nunique(dropna=False) == 1, column
    row = rows.iloc[0]
    assert row["dataset"] == "wdbc" and row["problem"] == "svm-dual"
    assert (row["method"], row["step"]) == (spec.method, spec.step)
    problem_settings = json.loads(row["problem_settings"])
    assert problem_settings["C"] == C
    assert set(problem_settings) == {"C", "intercept", "start"}  # every problem setting
    assert json.loads(row["method_settings"]) == spec.settings
    assert pd.isna(row["seed"])  # FW variants are deterministic
    assert row["tol"] == tol and row["max_iter"] == 4000 and row["max_time"] == 5.0
    assert pd.isna(row["max_work"])
    assert bool(row["standardize"]) is True and bool(row["normalize"]) is False
    assert row["test_size"] == 0.25 and row["split_seed"] == 7


@pytest.mark.slow
def test_the_csv_export_carries_each_race_s_settings():
    model = DashboardModel(notifier=lambda level, msg: None, dataset="wdbc")
    specs = [
        RunSpec(method="fw", step="exact"),
        RunSpec(method="pfw", step="exact", settings={"lazy": True, "lazy_K": 3.0}),
    ]
    model.param.update(
        problem="svm-dual",
        problem_settings={"C": 10.0},
        specs=specs,
        standardize=True,
        normalize=False,
        test_size=0.25,
        seed=7,
        tol=1e-4,
        max_iter=4000,
        max_time=5.0,
    )
    assert specs[1].settings == {"lazy": True, "lazy_K": 3.0}
    _race(model)
    assert model.keep_reference() is not None
    # A second race, set up differently: C and the tolerance.
    model.param.update(problem_settings={"C": 100.0}, tol=1e-3, specs=specs)
    _race(model)
    try:
        csv = pd.read_csv(io.BytesIO(model.export_csv().getvalue()))
        parquet = pd.read_parquet(io.BytesIO(model.export_parquet().getvalue()))
    finally:
        model.stop(wait=1.0)
    assert list(csv.columns) == list(parquet.columns)
    assert set(csv["race"]) == {"current", "reference 1"}
    for race, C, tol in (("current", 100.0, 1e-3), ("reference 1", 10.0, 1e-4)):
        mine = csv[csv["race"] == race]
        labels = list(dict.fromkeys(mine["label"]))
        assert labels == ["FW exact", "PFW exact lazy=True lazy_K=3.0"], labels
        for label, spec in zip(labels, specs, strict=True):
            _check(mine[mine["label"] == label], C, spec, tol)
    # The live race's rows are its whole traces, settings on every row.
    current = csv[csv["race"] == "current"]
    assert len(current) == sum(len(s.run.trace) for s in model.slots)
    assert current[list(SETTING_COLUMNS[:2])].notna().all().all()
