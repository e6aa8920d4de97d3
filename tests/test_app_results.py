"""The dashboard's Results tab: a small sweep's folder opened in the ResultsModel / view.

Every number shown is checked against a computation straight from the stored traces
(first solver time at which the certificate is at most eps, median over seeds), not
against :mod:`ermviz.report`, which the tab reuses.
"""

from __future__ import annotations

import io
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ermviz.app.results import model as results_model
from ermviz.app.results.model import ResultsModel
from ermviz.app.results.view import ResultsView, curves_plot, profile_plot
from ermviz.app.state import urlstate
from ermviz.report import write_report
from ermviz.sweep import load_config, load_summaries, load_traces, run_cell

pn = pytest.importorskip("panel")
hv = pytest.importorskip("holoviews")

CONFIG = """
name = "results-tab"
[[grid]]
datasets = ["toy-2d", "blobs"]
problems = ["logreg-l1"]
methods = ["fw"]
steps = ["diminishing"]
seeds = [0, 1]
settings = { radius = [2.0] }
budget = { tol = 1e-6, max_iter = 300, max_time = 5 }
[[grid]]
datasets = ["toy-2d", "blobs"]
problems = ["logreg-l1"]
methods = ["afw", "pfw"]
steps = ["exact"]
seeds = [0, 1]
settings = { radius = [2.0] }
budget = { tol = 1e-6, max_iter = 300, max_time = 5 }
[[grid]]
datasets = ["sk-diabetes"]
problems = ["logreg-l1"]
methods = ["pfw"]
steps = ["exact"]
settings = { radius = [2.0] }
budget = { tol = 1e-6, max_iter = 300, max_time = 5 }
[report]
eps = [1e-2, 1e-4, 1e-6]
baselines = ["fw-diminishing", "not-in-this-sweep"]
chosen = ["afw-exact", "pfw-exact"]
"""
LABELS = ["afw-exact", "fw-diminishing", "pfw-exact"]
EPS = (1e-2, 1e-4, 1e-6)


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished sweep written cell by cell (run_cell, as a Dask worker would)."""
    tmp = tmp_path_factory.mktemp("results-tab")
    cfg_path = tmp / "sweep.toml"
    cfg_path.write_text(CONFIG)
    cfg = load_config(cfg_path)
    out = tmp / "res"
    for cell in cfg.cells:
        run_cell(cell, str(out), cfg.name)
    (out / "config.toml").write_text(cfg.text)
    return out


def expected_times(out: Path, eps_list) -> dict[tuple[str, float, str], float]:
    """(instance, eps, label) -> median over seeds of the first time certificate <= eps."""
    summ = load_summaries(out)
    traces = load_traces(out)
    per_seed: dict[tuple[str, float, str], list[float]] = {}
    for _, s in summ.iterrows():
        t = traces[traces["cell_id"] == s["cell_id"]] if len(traces) else traces
        inst = f"{s['dataset']} logreg-l1 radius=2"
        for eps in eps_list:
            hit = math.nan
            for cert, tim in zip(t.get("certificate", []), t.get("time_s", []), strict=True):
                if cert <= eps:
                    hit = float(tim)
                    break
            per_seed.setdefault((inst, eps, s["label"]), []).append(hit)
    out_times = {}
    for key, values in per_seed.items():
        finite = [v for v in values if not math.isnan(v)]
        out_times[key] = float(np.median(finite)) if finite else math.nan
    return out_times


def make(roots=()) -> tuple[ResultsModel, ResultsView, list[tuple[str, str]]]:
    notes: list[tuple[str, str]] = []
    model = ResultsModel(notifier=lambda level, msg: notes.append((level, msg)), roots=roots)
    return model, ResultsView(model), notes


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12)


def test_table_numbers_equal_the_traces_first_hitting_times(sweep_dir: Path) -> None:
    model, view, notes = make()
    assert model.open(str(sweep_dir)), model.status
    assert model.status_level == "success" and "13 finished cells (1 failed)" in model.status
    # The [report] table of config.toml sets the defaults; an unknown label is dropped.
    assert list(model.eps) == list(EPS)
    assert model.baselines == ["fw-diminishing"] and model.chosen == ["afw-exact", "pfw-exact"]
    assert "not-in-this-sweep" in model.status
    shown = view.table.value  # what the Tabulator holds
    assert list(shown.columns) == ["instance", "eps", *LABELS, "speed-up"]
    want = expected_times(sweep_dir, EPS)
    instances = {k[0] for k in want}
    assert len(shown) == len(instances) * len(EPS)
    blanks = 0
    for row in shown.itertuples(index=False):
        for i, lab in enumerate(LABELS):
            got = float(row[2 + i])
            exp = want.get((row.instance, row.eps, lab), math.nan)
            assert same(got, exp), (row.instance, row.eps, lab, got, exp)
            blanks += math.isnan(got)
        base = want.get((row.instance, row.eps, "fw-diminishing"), math.nan)
        best = min(
            want.get((row.instance, row.eps, lab), math.nan) for lab in ("afw-exact", "pfw-exact")
        )
        speed = row[-1]
        if math.isnan(best):
            assert speed == ""
        elif math.isnan(base):
            assert speed == f">= {5.0 / best:.3g}"  # the baselines' max_time over best
        else:
            assert speed == f"{base / best:.3g}"
    # FW with the open-loop step stops at 300 iterations before 1e-6; the failed cell
    # (a regression set for a classification problem) has no time at all.
    assert not math.isnan(want[("blobs logreg-l1 radius=2", 1e-2, "fw-diminishing")])
    assert math.isnan(want[("blobs logreg-l1 radius=2", 1e-6, "fw-diminishing")])
    assert shown["speed-up"].str.startswith(">=").any()
    assert blanks >= 2 + 3 * len(EPS)
    # Blank cells are drawn blank, not "NaN".
    formats = view.table.formatters
    assert all(formats[lab].nan_format == formats[lab].null_format == "" for lab in LABELS)
    assert not notes


def test_downloads_are_the_report_cli_tables(sweep_dir: Path, tmp_path: Path) -> None:
    model, view, _ = make()
    model.open(sweep_dir)
    copy = tmp_path / "copy"
    shutil.copytree(sweep_dir, copy)
    csv = view.csv_download.callback().getvalue()
    # What `python -m ermviz report DIR --format csv` writes for the same labels.
    cli = write_report(copy, list(EPS), "csv", ["fw-diminishing"], ["afw-exact", "pfw-exact"])
    assert csv == cli["text"]
    rows = pd.read_csv(io.StringIO(csv), dtype=str, keep_default_na=False)
    md = view.md_download.callback().getvalue().splitlines()
    assert md[0] == "| " + " | ".join(rows.columns) + " |"
    assert md[1] == "|" + "---|" * len(rows.columns)
    assert md[2:] == ["| " + " | ".join(r) + " |" for r in rows.itertuples(index=False)]
    assert rows.loc[rows["eps"] == "1e-06", "fw-diminishing"].eq("").all()  # blank, not NaN
    want = expected_times(sweep_dir, EPS)
    for r in rows.itertuples(index=False):
        got = r[3]  # fw-diminishing, 4 significant digits
        exp = want.get((r.instance, float(r.eps), "fw-diminishing"), math.nan)
        assert got == ("" if math.isnan(exp) else f"{exp:.4g}")


def test_thresholds_and_method_sets_recompute_the_table(sweep_dir: Path) -> None:
    model, view, notes = make()
    model.open(sweep_dir)
    view.eps_input.value = "1e-3, 1e-5"
    assert list(model.eps) == [1e-3, 1e-5]
    want = expected_times(sweep_dir, (1e-3, 1e-5))
    shown = view.table.value
    assert sorted(set(shown["eps"])) == [1e-5, 1e-3]
    for row in shown.itertuples(index=False):
        for i, lab in enumerate(LABELS):
            assert same(float(row[2 + i]), want.get((row.instance, row.eps, lab), math.nan))
    view.eps_input.value = "1e-3 oops"
    assert notes[-1][0] == "error" and "'oops' is not a number" in notes[-1][1]
    assert list(model.eps) == [1e-3, 1e-5] and view.eps_input.value == "0.001 1e-05"
    model.baselines = []
    assert "speed-up" not in view.table.value.columns
    model.baselines = ["afw-exact"]
    model.chosen = ["pfw-exact"]
    row = view.table.value.iloc[0]
    assert row["speed-up"] == f"{row['afw-exact'] / row['pfw-exact']:.3g}"


def test_profile_at_tau_one_is_the_fraction_where_each_method_is_fastest(
    sweep_dir: Path,
) -> None:
    model, view, _ = make()
    model.open(sweep_dir)
    want = expected_times(sweep_dir, EPS)
    pairs = sorted({(inst, eps) for inst, eps, _ in want})
    fastest = dict.fromkeys(LABELS, 0)
    for inst, eps in pairs:
        times = {lab: want.get((inst, eps, lab), math.nan) for lab in LABELS}
        finite = [v for v in times.values() if not math.isnan(v)]
        for lab, v in times.items():
            fastest[lab] += bool(finite) and v == min(finite)
    overlay = view._profile_pane.object
    curves = {c.label: c for c in overlay}
    assert sorted(curves) == LABELS
    for lab in LABELS:
        data = curves[lab].data
        assert data["tau"].iloc[0] == 1.0
        assert data["fraction"].iloc[0] == pytest.approx(fastest[lab] / len(pairs))
        assert data["fraction"].is_monotonic_increasing
    # At a large tau every method solves exactly the pairs it ever solves.
    for lab in LABELS:
        solved = sum(not math.isnan(want.get((i, e, lab), math.nan)) for i, e in pairs)
        assert curves[lab].data["fraction"].iloc[-1] == pytest.approx(solved / len(pairs))
    fig = hv.render(profile_plot(model), backend="bokeh")
    assert fig.legend[0].click_policy == "hide"
    assert type(fig.x_scale).__name__ == "LogScale"
    assert any(type(t).__name__ == "HoverTool" for t in fig.tools)


def test_curves_one_line_per_label_with_the_trace_points(
    sweep_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(results_model, "MAX_CURVE_POINTS", 50)
    model, view, _ = make()
    model.open(sweep_dir)
    assert model.param.dataset.objects == ["blobs", "toy-2d"]  # the failed cell has no trace
    traces = load_traces(sweep_dir)
    for dataset in ("blobs", "toy-2d"):
        model.dataset = dataset
        overlay = view._curves_pane.object
        assert sorted(c.label for c in overlay) == LABELS
        for curve in overlay:
            data = curve.data.dropna(subset=["time_s"])
            cells = traces[(traces["dataset"] == dataset) & (traces["label"] == curve.label)]
            assert cells["cell_id"].nunique() == 2  # two seeds, one line with a gap
            assert curve.data["time_s"].isna().sum() == 1
            for _, cell in cells.groupby("cell_id"):
                pts = data[data["line"].str.contains(f"seed {cell['seed'].iloc[0]}")]
                assert len(pts) == min(len(cell), 50)
                # Drawn points are trace rows (thinned), the first and the last kept.
                rows = set(zip(cell["time_s"], np.maximum(cell["certificate"], 1e-16), strict=True))
                assert set(zip(pts["time_s"], pts["certificate"], strict=True)) <= rows
                assert pts["time_s"].iloc[0] == cell["time_s"].iloc[0]
                assert pts["time_s"].iloc[-1] == cell["time_s"].iloc[-1]
        fig = hv.render(curves_plot(model), backend="bokeh")
        lines = [r for r in fig.renderers if type(r.glyph).__name__ == "Line"]
        assert len(lines) == len(LABELS)
        assert len({r.glyph.line_color for r in lines}) == len(LABELS)
        assert [i.label.value for i in fig.legend[0].items] == LABELS
        assert fig.legend[0].click_policy == "hide"
        assert type(fig.y_scale).__name__ == "LogScale"
        assert type(fig.x_scale).__name__ == "LinearScale"
    model.log_x = True
    fig = hv.render(view._curves_pane.object, backend="bokeh")
    assert type(fig.x_scale).__name__ == "LogScale"


def test_missing_and_empty_folders_are_one_line_errors(sweep_dir: Path, tmp_path: Path) -> None:
    model, view, notes = make()
    assert view.csv_download.disabled and view.md_download.disabled  # nothing to export yet
    missing = tmp_path / "nowhere"
    assert not model.open(missing)
    assert model.status == f"results folder {missing} does not exist"
    assert model.status_level == "error" and notes[-1] == ("error", model.status)
    assert 'data-level="error"' in view.status.object
    empty = tmp_path / "empty"
    empty.mkdir()
    assert not model.open(empty)
    assert model.status == f"{empty}: no finished cells (no summaries/*.parquet)"
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    assert not model.open(a_file) and "is not a folder" in model.status
    assert not model.open("  ") and "type the path" in model.status
    assert all("\n" not in msg for _, msg in notes) and len(notes) == 4
    # A good folder, then a bad one: the good one stays on screen.
    assert model.open(sweep_dir)
    assert not view.csv_download.disabled
    before = view.table.value.copy()
    assert not model.open(missing)
    assert model.folder == str(sweep_dir.resolve())
    pd.testing.assert_frame_equal(view.table.value, before)
    # The text box opens what is typed in it (Enter).
    view.path_input.value_input = str(empty)
    view.path_input.param.trigger("enter_pressed")
    assert "no finished cells" in model.status


def test_refresh_reads_the_cells_a_running_sweep_added(sweep_dir: Path, tmp_path: Path) -> None:
    partial = tmp_path / "running"
    (partial / "summaries").mkdir(parents=True)
    (partial / "traces").mkdir()
    shutil.copy(sweep_dir / "config.toml", partial / "config.toml")
    summaries = sorted((sweep_dir / "summaries").glob("*.parquet"))
    first = [
        p for p in summaries if pd.read_parquet(p)["label"].iloc[0] != "pfw-exact"
    ]  # pfw-exact cells arrive later
    for p in summaries:
        src = sweep_dir / "traces" / p.name
        shutil.copy(src, partial / "traces" / p.name)
        if p in first:
            shutil.copy(p, partial / "summaries" / p.name)
    model, view, _ = make()
    model.open(partial)
    assert "pfw-exact" not in view.table.value.columns
    assert model.chosen == ["afw-exact"]
    model.eps = [1e-4]
    for p in summaries:
        shutil.copy(p, partial / "summaries" / p.name)
    view.refresh_button.clicks += 1
    shown = view.table.value
    assert [c for c in shown.columns if c in LABELS] == LABELS
    assert list(model.eps) == [1e-4]  # the user's thresholds survive a refresh
    want = expected_times(sweep_dir, (1e-4,))
    for row in shown.itertuples(index=False):
        assert same(float(row[4]), want.get((row.instance, 1e-4, "pfw-exact"), math.nan))
    assert "13 finished cells" in model.status
    # The config's chosen set, untouched by the user, now includes the late label.
    assert model.chosen == ["afw-exact", "pfw-exact"] and "speed-up" in shown.columns
    # A set the user picked survives a refresh.
    model.chosen = ["pfw-exact"]
    assert model.refresh() and model.chosen == ["pfw-exact"]


def test_results_folders_are_found_under_the_configured_roots(
    sweep_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    (root / "group").mkdir(parents=True)
    shutil.copytree(sweep_dir, root / "group" / "fw")
    (root / "notes").mkdir()
    (root / "a" / "b" / "too-deep" / "summaries").mkdir(parents=True)
    other = tmp_path / "other"
    (other / "summaries").mkdir(parents=True)
    monkeypatch.setenv("ERMVIZ_RESULTS", f"{root}:{other}")
    model, view, _ = make(roots=None)
    assert model.found == sorted([str(root / "group" / "fw"), str(other)])
    target = str((root / "group" / "fw").resolve())
    assert target in view.found_select.options.values()
    view.found_select.value = target
    assert model.folder == target and model.status_level == "success"
    assert len(view.table.value) == 9
    monkeypatch.delenv("ERMVIZ_RESULTS")
    monkeypatch.chdir(tmp_path)
    shutil.copytree(sweep_dir, tmp_path / "results" / "x")
    assert ResultsModel(notifier=lambda *a: None).found == [str(Path("results") / "x")]


def test_the_dashboard_has_a_results_tab_outside_the_url(sweep_dir: Path) -> None:
    from ermviz.app.views.page import Dashboard

    dash = Dashboard()
    tabs = dash.tabs()
    assert "Results" in tabs._names
    dash.show_tab("results")  # built and drawn when first shown (dynamic tabs)
    assert tabs[tabs._names.index("Results")].objects == [dash.sweep_results.layout]
    before = urlstate.encode(dash.model)
    assert dash.sweep_results.model.open(sweep_dir)
    after = urlstate.encode(dash.model)
    assert after == before and str(sweep_dir) not in after and "res" not in after
    # A link cannot name a results folder: the key is unknown and the link is ignored.
    problem = urlstate.load(dash.model, f"?results={sweep_dir}&folder={sweep_dir}")
    assert problem is not None and "unknown key" in problem
    # The tab renders to Bokeh models (what a served page or a notebook displays).
    from bokeh.models import Plot
    from panel.models.tabulator import DataTabulator

    root = dash.panel().get_root()
    (table,) = root.select({"type": DataTabulator})
    assert {"instance", "eps", *LABELS, "speed-up"} <= set(table.source.data)
    titles = [p.title.text for p in root.select({"type": Plot}) if p.title is not None]
    assert any(t.startswith("Performance profile") for t in titles)
    assert "Certificate vs solver time: blobs" in titles
    # Errors of the tab reach the dashboard's notifications.
    dash.sweep_results.model.open(sweep_dir / "missing")
    assert dash.model.messages[-1] == (
        "error",
        f"results folder {sweep_dir / 'missing'} does not exist",
    )
