"""Kept reference races ("Keep as reference"): the model's frozen copies, the faded curves
and legend entries of the plots, clearing, the limit, the exports, and one browser check
that a second Start draws the kept race faded under the live one."""

from __future__ import annotations

import importlib.util
import io
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ermviz.app.plots.streaming import FLOOR
from ermviz.app.plots.thinning import thin_rows
from ermviz.app.state.model import DashboardModel
from ermviz.app.state.references import MAX_REFERENCES, differences

BROWSER = Path("/usr/bin/chromium").exists() and importlib.util.find_spec("playwright")
if BROWSER:
    # The served-app fixtures and helpers of the browser tests (one server per module).
    from test_app_browser import ARTIFACTS, _open, _statuses, _wait, page, server  # noqa: F401


def make_model(**params) -> DashboardModel:
    notes: list[tuple[str, str]] = []
    m = DashboardModel(notifier=lambda level, msg: notes.append((level, msg)), **params)
    m.notes = notes
    m.max_time = 0.3  # the default wdbc race, short
    return m


def finish(m: DashboardModel, dash=None) -> None:
    """Race to the end (and, with a dashboard, pull every row into its sources)."""
    if dash is None:
        m.start()
    else:
        dash.start_sync()
    end = time.perf_counter() + 30
    while not all(s.done for s in m.slots) and time.perf_counter() < end:
        time.sleep(0.05)
    assert all(s.done for s in m.slots)
    if dash is not None:
        dash.streamer.pull()
        dash.streamer.pull()


def expected_thinned(frame: pd.DataFrame) -> pd.DataFrame:
    """What a reference must hold of a run's whole trace: the live plots' grid."""
    idx, _ = thin_rows(frame["iteration"].to_numpy(dtype=float), -1.0)
    return frame.iloc[idx].reset_index(drop=True)


# -- the model --------------------------------------------------------------------------


def test_a_kept_race_is_a_frozen_thinned_copy_that_survives_start_and_reset():
    m = make_model()
    assert not m.can_keep_reference and m.keep_reference() is None  # no race yet
    finish(m)
    first = {s.run_id: (s.label, s.color, s.run.frame()) for s in m.slots}
    assert m.can_keep_reference
    ref = m.keep_reference()
    assert ref is not None and m.references == [ref] and ref.name == "reference 1"
    assert not m.can_keep_reference  # kept once
    assert m.keep_reference() is None and "kept already" in m.notes[-1][1]
    assert [r.run_id for r in ref.runs] == list(first)
    for run in ref.runs:
        label, color, whole = first[run.run_id]
        assert (run.label, run.color) == (label, color)
        want = expected_thinned(whole)
        # A few hundred points of tens of thousands of rows, ending at the last iterate.
        assert 20 < len(run.frame) == len(want) < len(whole) / 50
        np.testing.assert_array_equal(run.frame["iteration"], want["iteration"])
        np.testing.assert_array_equal(run.frame["certificate"], want["certificate"])
        assert run.frame["iteration"].iloc[-1] == whole["iteration"].iloc[-1]
        assert set(run.frame["label"]) == {label}
    assert ref.setup["C"] == "1000" and ref.setup["runs"] == "FW exact, AFW exact, PFW exact"

    # One setting changed, a new race: the reference stays, unchanged (not live objects).
    m.set_problem_setting("C", 10.0)
    assert differences(ref.setup, m.current_setup()) == ["C 1000 → 10"]
    finish(m)
    assert not {s.run_id for s in m.slots} & set(first)
    assert m.references == [ref]
    for run in ref.runs:
        np.testing.assert_array_equal(
            run.frame["iteration"], expected_thinned(first[run.run_id][2])["iteration"]
        )
    m.reset()
    assert m.slots == [] and m.references == [ref]
    m.clear_references()
    assert m.references == []


def test_at_most_max_references_are_kept_the_oldest_dropped_with_a_notice():
    m = make_model()
    m.specs = m.specs[2:]  # PFW alone: four short races
    for _ in range(MAX_REFERENCES + 1):
        finish(m)
        assert m.keep_reference() is not None
    assert [r.name for r in m.references] == [
        f"reference {k}" for k in range(2, MAX_REFERENCES + 2)
    ]
    assert ("info", f"at most {MAX_REFERENCES} references are kept: reference 1 was dropped") in (
        m.notes
    )
    # A running race cannot be kept.
    m.max_time = 30.0
    m.start()
    try:
        assert not m.can_keep_reference and m.keep_reference() is None
        assert "finished or been stopped" in m.notes[-1][1]
    finally:
        m.stop(wait=5.0)
    assert m.keep_reference() is not None  # a stopped race can
    assert len(m.references) == MAX_REFERENCES


@pytest.mark.slow
def test_the_traces_export_labels_each_race():
    m = make_model()
    finish(m)
    m.keep_reference()
    kept = {r.run_id: r.frame for r in m.references[0].runs}
    m.set_problem_setting("C", 10.0)
    finish(m)
    for frame in (pd.read_csv(m.export_csv()), pd.read_parquet(m.export_parquet())):
        assert frame.columns[0] == "race"
        assert set(frame["race"]) == {"current", "reference 1"}
        current = frame[frame["race"] == "current"]
        assert set(current["run_id"]) == {s.run_id for s in m.slots}
        assert len(current) == sum(len(s.run.trace) for s in m.slots)
        refs = frame[frame["race"] == "reference 1"]
        assert set(refs["run_id"]) == set(kept)
        for run_id, want in kept.items():
            rows = refs[refs["run_id"] == run_id]
            np.testing.assert_array_equal(rows["iteration"], want["iteration"])
            np.testing.assert_allclose(rows["certificate"], want["certificate"])
            assert set(rows["label"]) == set(want["label"])
    m.reset()  # only the references are left to export
    assert set(pd.read_csv(m.export_csv())["race"]) == {"reference 1"}


# -- the views, without a server --------------------------------------------------------


def _reference_renderers(figures) -> list:
    return [
        r
        for f in figures
        for r in f.renderers
        if (r.data_source.name or "").startswith("reference:")
    ]


@pytest.mark.slow
def test_the_plots_draw_the_kept_race_faded_with_legend_entries_until_cleared():
    pytest.importorskip("panel")
    from ermviz.app.views.page import Dashboard

    m = make_model()
    dash = Dashboard(m)
    assert dash.race_view.keep_button.disabled and dash.race_view.clear_refs_button.disabled
    finish(m, dash)
    assert not dash.race_view.keep_button.disabled
    first = {s.run_id: s.run.frame() for s in m.slots}
    dash.race_view.keep_button.clicks += 1
    assert len(m.references) == 1 and dash.race_view.keep_button.disabled
    assert not dash.race_view.clear_refs_button.disabled
    assert "C 1000" not in dash.race_view.build().reference_note.object  # same set-up so far
    m.set_problem_setting("C", 10.0)
    assert "differs now in C 1000 → 10" in dash.race_view.build().reference_note.object
    finish(m, dash)

    labels = [item.label.value for item in dash.race_view.trace_plots.legend.items]
    assert labels == [
        "FW exact",
        "AFW exact",
        "PFW exact",
        "FW exact (ref 1)",
        "AFW exact (ref 1)",
        "PFW exact (ref 1)",
    ]
    refs = _reference_renderers(dash.race_view.figures)
    assert len(refs) == 3 * len(dash.race_view.figures)  # every run in all five plots
    live = [
        r
        for f in dash.race_view.figures
        for r in f.renderers
        if r.name == "FW exact" and type(r.glyph).__name__ == "Line"
    ]
    assert live and all(r.glyph.line_alpha == 1.0 for r in live)
    for r in refs:
        assert r.glyph.line_alpha < 0.5 and r.glyph.line_dash == [6]  # "dashed"
        assert r.name.endswith("(ref 1)")
    # Drawn under the live lines: every figure lists its reference lines first.
    cert = dash.race_view.figures[0].renderers
    assert max(cert.index(r) for r in refs if r in cert) < cert.index(live[0])
    # Their sources hold exactly the first race's thinned traces (clipped for log axes).
    sources = {r.data_source.name: r.data_source for r in refs}
    assert set(sources) == {f"reference:1:{run_id}" for run_id in first}
    for run_id, whole in first.items():
        data = sources[f"reference:1:{run_id}"].data
        want = expected_thinned(whole)
        np.testing.assert_array_equal(data["iteration"], want["iteration"])
        np.testing.assert_array_equal(data["k1"], want["iteration"] + 1.0)
        np.testing.assert_allclose(data["certificate"], np.maximum(want["certificate"], FLOOR))
        np.testing.assert_allclose(data["time_s"], want["time_s"])
        best = min(f["objective"].min() for f in first.values())
        gap = want["objective"].to_numpy() - best
        np.testing.assert_allclose(data["subopt"], np.where(gap > 0, gap, np.nan))

    html_page = dash.export_view.export_html().getvalue().decode()
    assert "PFW exact (ref 1)" in html_page and "reference:1:" in html_page
    csv = pd.read_csv(io.BytesIO(dash.export_view.csv_download.callback().getvalue()))
    assert set(csv["race"]) == {"current", "reference 1"}

    dash.reset()  # clears the live race only
    assert [i.label.value for i in dash.race_view.trace_plots.legend.items][
        -1
    ] == "PFW exact (ref 1)"
    dash.race_view.clear_refs_button.clicks += 1
    assert m.references == [] and dash.race_view.clear_refs_button.disabled
    assert _reference_renderers(dash.race_view.figures) == []
    assert not any("(ref" in i.label.value for i in dash.race_view.trace_plots.legend.items)
    assert dash.race_view.build().reference_note.object == ""


# -- in the browser ---------------------------------------------------------------------

# Per reference / live renderer of the page's figures: [source name, points, line alpha].
LINES_JS = """() => {
  const out = [];
  for (const m of Bokeh.documents[0].all_models) {
    if (m.type !== "GlyphRenderer" || !m.data_source || !m.data_source.name) continue;
    const name = m.data_source.name;
    if (name.startsWith("reference:") || name.startsWith("trace:"))
      out.push([name, m.data_source.get_length() ?? 0, m.glyph.line_alpha.value]);
  }
  return out;
}"""


@pytest.mark.browser
@pytest.mark.skipif(not BROWSER, reason="needs /usr/bin/chromium and playwright")
def test_a_kept_race_is_drawn_faded_after_a_second_start(server: str, page) -> None:
    _open(page, server + "?max_time=0.3")
    start = page.locator("button", has_text="Start").first
    keep = page.locator("button", has_text="Keep as reference").first
    assert keep.is_disabled()
    start.click()

    def done() -> list[dict] | None:
        s = _statuses(page)
        return s if s and all(x["status"] != "running" for x in s) else None

    first = _wait(done, 30, "the first race to end")
    _wait(lambda: keep.is_enabled(), 10, "Keep as reference to be enabled")
    keep.click()
    _wait(lambda: keep.is_disabled(), 10, "the race to be kept")
    start.click()
    _wait(
        lambda: {x["id"] for x in _statuses(page)}.isdisjoint(x["id"] for x in first),
        30,
        "the second race",
    )
    _wait(done, 30, "the second race to end")
    lines = _wait(
        lambda: (
            (v := page.evaluate(LINES_JS))
            and any(n.startswith("trace:") and k > 0 for n, k, _ in v)
            and v
        ),
        10,
        "the live curves",
    )
    refs = [(n, k, a) for n, k, a in lines if n.startswith("reference:")]
    live = [(n, k, a) for n, k, a in lines if n.startswith("trace:") and k > 0]
    # The first race's three runs, faded, on both certificate plots on the page.
    assert {n for n, _, _ in refs} == {f"reference:1:{x['id']}" for x in first}
    assert all(k > 10 for _, k, _ in refs)
    assert max(a for _, _, a in refs) < min(a for _, _, a in live)
    legend = page.evaluate(
        """() => Array.from(Bokeh.documents[0].all_models)
          .filter((m) => m.type === "LegendItem").map((m) => m.label.value)"""
    )
    assert {"FW exact (ref 1)", "AFW exact (ref 1)", "PFW exact (ref 1)"} <= set(legend)
    page.get_by_text("Race", exact=True).first.click()
    time.sleep(1.0)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "reference.png"), full_page=True)
