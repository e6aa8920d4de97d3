"""The dashboard without a browser: model, URL state, streaming pull, export, errors."""

from __future__ import annotations

import asyncio
import gc
import io
import itertools
import math
import time
from unittest import mock

import numpy as np
import pandas as pd
import pytest

from ermviz.app.plots import thinning
from ermviz.app.plots.streaming import FLOOR, Streamer, geometry_for
from ermviz.app.plots.thinning import thin_rows
from ermviz.app.state import datasets as datasets_mod
from ermviz.app.state import model as model_mod
from ermviz.app.state import urlstate
from ermviz.app.state.model import DashboardModel, RunSpec
from ermviz.errors import SettingError
from ermviz.registry import PROBLEMS


def make_model(**params) -> DashboardModel:
    notes: list[tuple[str, str]] = []
    m = DashboardModel(notifier=lambda level, msg: notes.append((level, msg)), **params)
    m.notes = notes  # what the user would have seen as toasts
    return m


def wait_until(predicate, timeout: float) -> bool:
    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


# -- building runs ------------------------------------------------------------------------


def test_default_model_is_the_fw_afw_pfw_race_on_wdbc():
    m = make_model()
    assert m.dataset == "wdbc" and m.problem == "svm-dual" and m.standardize
    assert [(s.method, s.step) for s in m.specs] == [
        ("fw", "exact"),
        ("afw", "exact"),
        ("pfw", "exact"),
    ]
    cfgs = m.run_configs()
    assert [c.method for c in cfgs] == ["fw", "afw", "pfw"]
    assert all(c.settings == {"C": 1000.0} and c.budget.tol == 1e-10 for c in cfgs)
    slots = m.prepare()
    assert [s.status for s in slots] == ["ready"] * 3
    # One problem (data loaded once) shared by every run of the race.
    problems = {id(s.run.solver.problem) for s in slots}
    assert len(problems) == 1
    assert len({s.run_id for s in slots}) == 3
    assert [s.color for s in slots] == list(model_mod.PALETTE[:3])


def test_add_duplicate_remove_and_settings_from_declarations():
    m = make_model()
    rev = m.revision
    spec = m.add_run("pfw", "armijo")
    assert m.revision > rev
    assert [s.name for s in spec.declared()] == [
        "refresh_every",
        "gram_cache_mb",
        "lazy",
        "lazy_K",
        "lmo_tol",
        "max_lmo_iters",
        "armijo_delta",
        "armijo_c",
        "max_trials",
    ]
    spec.set_setting("armijo_c", "0.02")
    assert spec.settings == {"armijo_c": 0.02}
    with pytest.raises(SettingError, match="armijo_c"):
        spec.set_setting("armijo_c", 2.0)
    spec.set_setting("armijo_c", 0.01)  # the default: no override left
    assert spec.settings == {}
    spec.set_setting("max_trials", 30)
    m.duplicate_run(3)
    assert len(m.specs) == 5 and m.specs[4].settings == {"max_trials": 30}
    assert m.specs[4] is not m.specs[3]
    assert m.labels()[3:] == ["PFW armijo max_trials=30", "PFW armijo max_trials=30 (2)"]
    m.remove_run(0)
    assert [s.method for s in m.specs] == ["afw", "pfw", "pfw", "pfw"]
    # Changing the step rule drops settings the new rule does not declare.
    m.specs[2].step = "exact"
    assert m.specs[2].settings == {}


def test_each_problem_races_its_declared_comparison():
    for name, cls in PROBLEMS.items():
        race = [(s.method, s.step) for s in model_mod.default_specs(name)]
        assert race == list(cls.default_race), name  # declared, and every run solves it
    assert [(s.method, s.step) for s in make_model(problem="plq").specs] == [
        ("rehline", "cd"),
        ("ipm", "newton"),
    ]


def test_switching_problem_replaces_a_race_that_cannot_solve_it():
    m = make_model()
    m.problem = "plq"  # FW runs do not solve plq: coordinate descent vs interior point
    assert [(s.method, s.step) for s in m.specs] == [("rehline", "cd"), ("ipm", "newton")]
    m.problem = "nonconvex-l1"
    assert [s.method for s in m.specs] == ["tufw", "fw-nc", "spider-fw"]
    m.problem = "svm-dual"
    assert [(s.method, s.step) for s in m.specs] == list(PROBLEMS["svm-dual"].default_race)
    # A race that solves the new problem is the user's: kept, settings included.
    m.specs = [RunSpec(method="pfw", step="armijo", settings={"armijo_c": 0.02})]
    m.problem = "logreg-l1"
    assert [s.as_tuple() for s in m.specs] == [("pfw", "armijo", (("armijo_c", 0.02),))]
    # A dataset preset that changes the problem fits the race too.
    m.problem = "plq"
    m.dataset = "toy-2d"
    assert m.problem == "logreg-l1" and [s.method for s in m.specs] == ["fw", "afw", "pfw"]


def test_dataset_presets_apply_on_selection():
    m = make_model()
    m.dataset = "toy-2d"
    assert (m.problem, m.problem_settings, m.animate) == ("logreg-l1", {"radius": 3.0}, True)
    m.dataset = "toy-simplex-3"
    assert (m.problem, m.problem_settings, m.max_iter) == ("svm-dual", {}, 400)
    m.dataset = "wdbc"
    assert m.problem_settings == {"C": 1000.0} and m.tol == 1e-10 and not m.animate


# -- URL state ----------------------------------------------------------------------------


def test_url_state_round_trip():
    m = make_model()
    m.dataset = "toy-2d"
    m.problem_settings = {"radius": 2.5, "intercept": False}
    m.param.update(tol=3e-7, max_iter=1234, max_time=2.5, seed=7, test_size=0.25, normalize=True)
    m.specs = [
        RunSpec(method="fw", step="diminishing"),
        RunSpec(method="pfw", step="armijo", settings={"armijo_c": 0.02, "max_trials": 30}),
        RunSpec(method="afw", step="short", settings={"lipschitz": 4.5}),
    ]
    query = urlstate.encode(m)
    assert "/" not in query.replace("%2F", "/").split("dataset=")[1].split("&")[0]
    other = make_model()
    assert urlstate.load(other, query) is None
    assert urlstate.config(other) == urlstate.config(m)
    assert urlstate.decode(urlstate.encode(other)) == urlstate.decode(query)
    # The default set-up survives a round trip too.
    d1, d2 = make_model(), make_model()
    d2.dataset = "blobs"
    urlstate.apply(d2, urlstate.decode(urlstate.encode(d1)))
    assert urlstate.config(d2) == urlstate.config(d1)


@pytest.mark.parametrize(
    "query",
    [
        "dataset=/etc/passwd",
        "dataset=../../etc/passwd",
        "dataset=datasets/catalog.toml",
        "dataset=upload:evil.csv",
        "dataset=no-such-dataset",
        "colour=blue",
        "run=fw:bogus",
        "run=rehline:cd",  # does not solve svm-dual (the default problem)
        "p.C=-1",
        "tol=0",
        "max_iter=ten",
    ],
)
def test_url_state_rejects_bad_links(query):
    with pytest.raises(urlstate.LinkError):
        urlstate.decode(query)
    # Its only element is bad: nothing is applied, one notification names the element.
    m = make_model()
    before = urlstate.config(m)
    assert urlstate.load(m, query) is not None
    assert urlstate.config(m) == before
    assert m.notes and m.notes[-1][0] == "error"
    assert m.notes[-1][1].startswith("link: dropped 1 element (")


def test_a_link_with_one_unknown_key_keeps_the_rest():
    m = make_model()
    message = urlstate.load(m, "dataset=toy-2d&colour=blue&tol=1e-7&run=fw:exact&run=pfw:exact")
    assert message is not None and "unknown key 'colour'" in message
    assert "dropped 1 element" in message and "the rest of the link is applied" in message
    assert m.dataset == "toy-2d" and m.problem == "logreg-l1" and m.tol == 1e-7
    assert [s.as_tuple()[:2] for s in m.specs] == [("fw", "exact"), ("pfw", "exact")]
    assert m.notes == [("error", message)]


def test_a_link_with_one_bad_run_keeps_the_other_runs():
    m = make_model()
    query = "problem=svm-dual&run=fw:exact&run=rehline:cd&run=pfw:bogus&run=afw:armijo"
    message = urlstate.load(m, query)
    assert [s.as_tuple()[:2] for s in m.specs] == [("fw", "exact"), ("afw", "armijo")]
    assert message.count("run=") == 2 and "dropped 2 elements" in message
    assert "'rehline' does not solve problem 'svm-dual'" in message
    assert "does not take step rule 'bogus'" in message


def test_a_link_with_a_bad_problem_setting_keeps_the_good_ones():
    m = make_model()
    message = urlstate.load(m, "dataset=toy-2d&p.radius=-2&p.start=vertex&p.colour=1&max_time=7")
    assert m.problem_settings == {"start": "vertex"} and m.max_time == 7.0
    assert "radius" in message and "'colour'" in message and "dropped 2 elements" in message
    # Not the preset's radius 3 either: a link that names its problem settings names all.
    assert m.problem_value("radius") == 1.0


def test_a_link_naming_a_path_is_applied_on_the_default_dataset(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("1,2,1\n3,4,-1\n")
    m = make_model()
    message = urlstate.load(m, f"dataset={path}&tol=1e-5&run=pfw:exact")
    assert m.dataset == "wdbc" and m.tol == 1e-5
    assert [s.as_tuple()[:2] for s in m.specs] == [("pfw", "exact")]
    assert "dataset '/" in message and "is not a catalog or bundled name" in message


def test_a_link_of_too_many_fields_is_not_read():
    m = make_model()
    before = urlstate.config(m)
    message = urlstate.load(m, "&".join(["tol=1e-3"] * (urlstate.MAX_LINK_FIELDS + 1)))
    assert "more than" in message and "ignored" in message
    assert urlstate.config(m) == before


def test_url_state_reads_links_made_with_older_method_names():
    # Old names are aliases: listed once, still accepted in links (as on the CLI).
    state = urlstate.decode("dataset=a1a&problem=nonconvex-l1&run=tufw-sbd-k4:taylor-exact")
    assert state["runs"] == [("tufw", "taylor-exact", {"rule": "sbd-k4"})]
    state = urlstate.decode("dataset=a1a&problem=logreg-l1&run=fw-ada:adaptive")
    assert [r[:2] for r in state["runs"]] == [("fw", "adaptive")]
    with pytest.raises(urlstate.LinkError, match="contradicts"):
        urlstate.decode("dataset=a1a&problem=logreg-l1&run=tufw-sbd-k4:taylor-exact:rule=dbd-k4")


def test_url_state_rejects_an_existing_file_path(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("1,2,1\n3,4,-1\n")
    with pytest.raises(urlstate.LinkError, match="catalog or bundled"):
        urlstate.decode(f"dataset={path}")


@pytest.mark.parametrize("link", ["?dataset=/etc/passwd", "?dataset=/etc/passwd&tol=1e-3"])
def test_the_address_bar_shows_the_applied_set_up_after_a_refusal(link):
    from panel.io.location import Location

    m = make_model()
    location = Location(search=link)  # what the browser asked for
    assert "dropped 1 element" in urlstate.load(m, link, report=False)
    urlstate.rewrite_refused(m, location)
    applied = "?" + urlstate.encode(m)
    assert location.search == applied and "passwd" not in location.search
    assert urlstate.decode(location.search) == urlstate.decode(applied)  # a valid link
    assert ("tol=0.001" in applied) == ("tol" in link) and "dataset=wdbc" in applied
    # The browser's own report of its address (which may reach the server after the
    # rewrite), or Back to the refused link: rewritten again. Any other address is kept.
    location.search = link
    assert location.search == applied
    location.search = "?dataset=blobs"
    assert location.search == "?dataset=blobs"
    location.search = link
    assert location.search == applied


def test_a_link_that_changes_the_problem_keeps_its_runs():
    # urlstate.apply sets the problem (which fits the race to it) before the link's runs.
    m = make_model()
    query = "dataset=wdbc&problem=plq&p.constraint=fairness&run=ipm:newton:gap=relative"
    assert urlstate.load(m, query) is None
    assert [s.as_tuple() for s in m.specs] == [("ipm", "newton", (("gap", "relative"),))]
    assert m.problem_settings == {"constraint": "fairness"}
    other = make_model()
    assert urlstate.load(other, urlstate.encode(m)) is None
    assert urlstate.config(other) == urlstate.config(m)
    # A link naming only the problem gets that problem's race.
    m = make_model()
    assert urlstate.load(m, "problem=plq") is None
    assert [s.method for s in m.specs] == ["rehline", "ipm"]


def test_url_state_never_carries_an_upload(tmp_path):
    m = make_model()
    name = m.add_upload("mine.csv", b"0.1,0.2,1\n0.3,0.1,-1\n0.5,0.9,1\n0.2,0.4,-1\n")
    assert name == "upload:mine.csv" and m.dataset == name
    assert "dataset=" not in urlstate.encode(m)


# -- streaming ------------------------------------------------------------------------------


def test_thin_rows_keeps_a_geometric_grid_and_the_newest_row():
    it = np.arange(0, 100_000, dtype=float)
    idx, last = thin_rows(it, -1.0)
    assert idx[0] == 0 and idx[-1] == it.size - 1
    assert np.all(np.diff(idx) > 0)
    # Every iteration while consecutive ones are a grid step apart (k + 1 < 1 / (r - 1)),
    # then one point per grid step: ln(10) / ln(r) per decade.
    r = thinning.GRID_RATIO
    early = int(1.0 / (r - 1.0))
    assert np.array_equal(idx[:early], np.arange(early))
    expected = early + math.log(it.size / early) / math.log(r)
    assert 0.8 * expected < idx.size < 1.2 * expected
    again, _ = thin_rows(np.arange(100_000, 100_010, dtype=float), last)
    assert again.tolist() == [9]  # nothing crosses the grid: only the newest row


def test_streaming_pull_delivers_growing_data_while_runs_go():
    m = make_model()
    m.max_time = 3.0
    slots = m.start()
    streamer = Streamer(m)
    streamer.attach(slots)
    # Pulls at a steady pace while the race goes; on a loaded machine a run may go a
    # pull or two without a new row, so the test asks for growth seen in several pulls,
    # never between two fixed instants.
    lengths = []
    try:
        deadline = time.monotonic() + 10.0
        while time.monotonic() < deadline:
            time.sleep(0.1)
            active = m.active
            streamer.pull()
            if not active:
                break
            lengths.append([len(src.trace.data["k1"]) for src in streamer.sources])
        assert len(lengths) >= 3, "the race ended before the pull was seen growing"
        for before, after in itertools.pairwise(lengths):
            assert all(a >= b for a, b in zip(after, before, strict=True)), lengths
        for column in zip(*lengths, strict=True):
            grew = sum(a > b for b, a in itertools.pairwise(column))
            assert grew >= 2, f"a run's rows grew in only {grew} of {len(lengths)} pulls: {lengths}"
    finally:
        m.stop()
    assert wait_until(lambda: all(s.done for s in slots), 5)
    streamer.pull()
    for src in streamer.sources:
        data = {k: np.asarray(v) for k, v in src.trace.data.items()}
        frame = src.slot.run.frame()
        assert 0 < len(data["k1"]) < len(frame)  # thinned, never empty
        np.testing.assert_array_equal(data["k1"], data["iteration"] + 1)
        assert np.all(np.diff(data["iteration"]) > 0)  # never a row twice
        assert data["iteration"][-1] == frame["iteration"].iloc[-1]  # ends at the last row
        assert np.min(data["certificate"]) >= FLOOR
        assert set(data["step"]) <= {"fw", "away", "pairwise", "drop", "none"}
        # Live thresholds agree with the core's time_to_threshold on the whole trace.
        final = src.slot.final_extras()["hits"]
        for eps, t in src.slot.hits.items():
            assert (np.isnan(t) and np.isnan(final[eps])) or t == pytest.approx(final[eps])


def test_streamer_goes_idle_when_no_run_is_active():
    m = make_model()
    m.dataset = "toy-simplex-3"
    m.animate = False
    slots = m.start()
    assert wait_until(lambda: all(s.done for s in slots), 5)
    streamer = Streamer(m)
    streamer.attach(slots)

    class FakeCallback:
        stopped = 0

        def stop(self):
            self.stopped += 1

    cb = FakeCallback()
    streamer._callback = cb
    asyncio.run(streamer._tick())
    assert streamer.running  # one idle tick is not enough (a paused run may still append)
    asyncio.run(streamer._tick())
    assert not streamer.running and cb.stopped == 1
    assert all(len(src.trace.data["k1"]) > 0 for src in streamer.sources)


def test_teaching_race_streams_paths_on_the_drawn_feasible_set():
    m = make_model()
    m.dataset = "toy-simplex-3"
    m.step_delay = 0.0
    slots = m.start()
    assert wait_until(lambda: all(s.done for s in slots), 10)
    assert all(s.run.keep_iterates for s in slots)
    streamer = Streamer(m)
    streamer.attach(slots, m.problem_obj)
    assert streamer.geometry is not None and streamer.geometry.kind == "triangle"
    streamer.pull()
    fw, afw, pfw = streamer.sources
    # Vanilla FW zig-zags: many more steps than the away-step and pairwise variants.
    assert len(fw.path.data["x"]) > 3 * max(len(afw.path.data["x"]), len(pfw.path.data["x"]))
    for src in streamer.sources:
        its, X, _ = src.slot.run.iterates()
        assert len(src.path.data["x"]) == its.size
        xy = np.column_stack([src.path.data["x"], src.path.data["y"]])
        np.testing.assert_allclose(xy, X @ streamer.geometry.atoms)
        assert 1 <= len(src.active.data["x"]) <= 3


@pytest.mark.parametrize(
    ("dataset", "kind"),
    [("toy-simplex-3", "triangle"), ("toy-simplex-4", "tetrahedron"), ("toy-2d", "diamond")],
)
def test_geometry_contours_cover_the_feasible_set(dataset, kind):
    m = make_model()
    m.dataset = dataset
    problem = m.build_problem()
    geometry = geometry_for(problem)
    assert geometry.kind == kind
    xs, ys, Z = geometry.objective_grid(problem, resolution=41)
    finite = np.isfinite(Z)
    assert 0.3 < finite.mean() < 0.95  # inside the set only
    # Values are the problem's own objective at the drawn points.
    i, j = np.argwhere(finite)[len(np.argwhere(finite)) // 2]
    point = geometry._point_at(np.array([xs[j], ys[i]]))
    assert Z[i, j] == pytest.approx(problem.objective(point))


# -- stop, export ---------------------------------------------------------------------------


def test_stop_keeps_traces_and_exports_match_the_runs():
    m = make_model()
    m.max_time = 30.0
    slots = m.start()
    assert wait_until(lambda: all(len(s.run.trace) > 20 for s in slots), 10)
    m.stop(wait=10.0)  # generous: a loaded CI machine may be slow to schedule the threads
    assert all(s.done for s in slots)
    assert {s.status for s in slots} <= {"stopped", "converged"}
    assert any(s.status == "stopped" for s in slots)
    csv = pd.read_csv(m.export_csv())
    parquet = pd.read_parquet(m.export_parquet())
    for frame in (csv, parquet):
        assert set(frame["run_id"]) == {s.run_id for s in slots}
        for s in slots:
            rows = frame[frame["run_id"] == s.run_id]
            ref = s.run.frame()
            assert len(rows) == len(ref) > 0
            np.testing.assert_array_equal(rows["iteration"].to_numpy(), ref["iteration"].to_numpy())
            np.testing.assert_allclose(
                rows["certificate"].to_numpy(), ref["certificate"].to_numpy()
            )
            assert set(rows["label"]) == {s.label}
    table = m.results()
    assert list(table["run_id"]) == [s.run_id for s in slots]
    assert list(table["status"]) == [s.status for s in slots]
    assert (table["iterations"] > 0).all()


# -- errors ---------------------------------------------------------------------------------


def test_errors_become_run_status_and_notification_not_exceptions():
    # A regression dataset for a classification problem: every run fails alike.
    m = make_model()
    m.dataset = "sk-diabetes"
    m.problem = "svm-dual"
    slots = m.start()
    assert [s.status for s in slots] == ["error"] * 3
    assert all("binary" in s.message for s in slots)
    assert m.notes[-1][0] == "error" and "binary" in m.notes[-1][1]
    assert len(m.results()) == 3 and set(m.results()["status"]) == {"error"}

    # One bad run does not stop the others.
    m = make_model()
    m.dataset = "toy-simplex-3"
    m.specs = [RunSpec(method="pfw", step="exact"), RunSpec(method="rehline", step="cd")]
    slots = m.start()
    assert slots[1].status == "error" and "does not solve" in slots[1].message
    assert wait_until(lambda: slots[0].done, 10) and slots[0].status == "converged"
    assert any("does not solve" in msg for _, msg in m.notes)

    # A budget out of range.
    m = make_model()
    m.tol = -1.0
    slots = m.start()
    assert {s.status for s in slots} == {"error"} and "tol" in slots[0].message
    assert "tol" in m.notes[-1][1]


def test_badly_scaled_plq_race_warns_once_naming_both_ways_out():
    # Bundled wdbc unscaled: column norms 0.1 to 2.5e4, slow for coordinate descent.
    m = make_model(dataset="wdbc", problem="plq", standardize=False, max_time=0.2)
    m.duplicate_run(0)  # two rehline runs raise the same notice: shown once
    m.start()
    warnings = [msg for level, msg in m.notes if level == "warning"]
    assert len(warnings) == 1 and m.messages.count(("warning", warnings[0])) == 1
    # Both ways out, named as the dashboard's controls rather than command-line options.
    assert "badly scaled" in warnings[0] and "--" not in warnings[0]
    assert "'standardize features' checkbox" in warnings[0]
    assert "a run with method ipm" in warnings[0]
    m.stop()
    # Standardized: no warning.
    m.notes.clear()
    m.standardize = True
    m.start()
    assert not [msg for level, msg in m.notes if level == "warning"]
    m.stop()


def test_upload_errors_are_notified_with_the_users_file_name(monkeypatch):
    m = make_model()
    assert m.add_upload("bad.csv", b"1.0,2.0,1\n3.0,oops,-1\n") is None
    level, msg = m.notes[-1]
    assert level == "error" and "bad.csv" in msg and "ermviz-upload-" not in msg
    assert m.add_upload("empty.txt", b"  \n") is None and "empty" in m.notes[-1][1]
    monkeypatch.setattr(datasets_mod, "MAX_UPLOAD_BYTES", 10)
    assert m.add_upload("big.csv", b"1,2,1\n3,4,-1\n5,6,1\n") is None
    assert "limit" in m.notes[-1][1]
    monkeypatch.undo()
    # A good LIBSVM upload becomes the selected dataset and races.
    text = "".join(
        f"{1 if i % 2 else -1} 1:{i % 7 / 7:.3f} 2:{(i * 3) % 5 / 5:.3f}\n" for i in range(40)
    )
    name = m.add_upload("../../etc/mine.svm", text)
    assert name == "upload:mine.svm" and m.dataset == name
    m.max_time = 0.5
    slots = m.start()
    assert wait_until(lambda: all(s.done for s in slots), 10)
    assert all(s.status in ("converged", "max_time", "max_iter") for s in slots)
    assert set(m.traces()["dataset"]) == {name}
    folder = m._upload_folder.path
    m.shutdown()
    assert not folder.exists()
    # A model dropped without shutdown (a notebook cell re-run) deletes its uploads too.
    m = make_model()
    assert m.add_upload("mine.svm", text) == "upload:mine.svm"
    folder = m._upload_folder.path
    assert folder.exists()
    del m
    gc.collect()
    assert not folder.exists()


def test_setting_widgets_revert_invalid_values_and_notify():
    pn = pytest.importorskip("panel")
    from ermviz.app.views.widgets import setting_widget

    m = make_model()
    spec = m.add_run("afw", "armijo")
    decl = {s.name: s for s in spec.declared()}
    w = setting_widget(decl["armijo_c"], spec.value_of("armijo_c"), spec.set_setting, m)
    assert isinstance(w, pn.widgets.FloatInput)
    w.value = 0.05
    assert spec.settings == {"armijo_c": 0.05}
    w.value = 3.0  # out of (0, 1): reverted, notified, model unchanged
    assert w.value == 0.05 and spec.settings == {"armijo_c": 0.05}
    assert "armijo_c" in m.notes[-1][1]


# -- the views without a server -------------------------------------------------------------


def test_dashboard_views_build_start_and_export_without_a_server():
    pytest.importorskip("panel")
    from ermviz.app.views.page import Dashboard

    m = make_model()
    dash = Dashboard(m)
    assert dash.controls_view.problem_widgets["C"].value == 1000.0
    m.dataset = "toy-2d"  # preset: another problem, its own setting widgets and values
    assert set(dash.controls_view.problem_widgets) == {
        "radius",
        "intercept",
        "start",
        "constraint",
        "lo",
        "hi",
        "K",
    }
    assert dash.controls_view.problem_widgets["radius"].value == 3.0
    m.dataset = "toy-simplex-4"
    assert (
        dash.teaching_view.build().teaching_plot is not None
    )  # preview of the tetrahedron before Start
    m.step_delay = 0.0
    dash.start_sync()
    assert wait_until(lambda: all(s.done for s in m.slots), 10)
    dash.streamer.pull()
    assert len(dash.race_view.figures) == 5
    assert dash.race_view.table.object.count("<tr>") == 4  # header + one row per run
    assert "converged" in dash.race_view.table.object
    assert "converged" in dash.status_strip.object
    page = dash.export_view.export_html().getvalue().decode()
    assert page.startswith("<!DOCTYPE html>") and "PFW exact" in page
    m.show_steps = True  # rebuilds with step markers
    n_renderers = sum(len(f.renderers) for f in dash.race_view.figures)
    m.show_steps = False
    assert sum(len(f.renderers) for f in dash.race_view.figures) < n_renderers
    csv = pd.read_csv(io.BytesIO(dash.export_view.csv_download.callback().getvalue()))
    assert set(csv["run_id"]) == {s.run_id for s in m.slots}
    dash.reset()
    assert m.race_status == "idle" and dash.streamer.sources == []


def test_a_run_failing_mid_race_becomes_an_error_status_and_one_notification():
    pytest.importorskip("panel")
    from ermviz.app.views.page import Dashboard

    m = make_model()
    m.max_time = 1.0
    dash = Dashboard(m)
    slots = m.prepare()
    solver = slots[1].run.solver
    real = solver.advance
    calls = {"n": 0}

    def failing(n, stop_at):
        calls["n"] += 1
        if calls["n"] > 3:
            raise FloatingPointError("overflow in the line search")
        return real(n, stop_at)

    solver.advance = failing
    dash.launch(slots)
    assert wait_until(lambda: all(s.done for s in slots), 10)
    dash.streamer.pull()
    dash.streamer.pull()
    assert [s.status for s in slots] == ["max_time", "error", "max_time"]
    told = [msg for level, msg in m.notes if "overflow in the line search" in msg]
    assert len(told) == 1 and told[0].startswith("AFW exact")
    assert 'data-status="error"' in dash.status_strip.object
    assert m.results()["message"][1] == "FloatingPointError: overflow in the line search"


def test_the_sidebar_shows_what_a_preset_fills_in_and_the_problem_is_built_with_it():
    # Issue 31: under preset=fairsvm the sidebar showed `constraint: none` while the
    # problem was built with the fairness constraint.
    m = make_model(dataset="wdbc", problem="plq")
    m.set_problem_setting("preset", "fairsvm")
    shown = {name: m.problem_value(name) for name in ("constraint", "rho", "loss", "C")}
    assert shown == {"constraint": "fairness", "rho": 0.01, "loss": "svm", "C": 1.0}
    built = m.build_problem().settings
    assert {k: built[k] for k in shown} == shown
    # Whatever is chosen next, the sidebar shows what the problem is built with.
    for name, value in (("rho", 0.05), ("constraint", "none"), ("preset", "none")):
        m.set_problem_setting(name, value)
        built = m.build_problem().settings
        assert all(m.problem_value(k) == built[k] for k in shown), (name, value)
    assert m.problem_value("rho") == 0.05


def test_start_over_the_lessons_gallery_shows_the_race_tab():
    # Issue 30: in a notebook, Start pressed on the opening Lessons tab left the moving
    # plots out of sight; a tab the user chose (teaching view, results) is kept.
    from ermviz.app import Dashboard
    from ermviz.app.lessons.view import TAB_INDEX

    dash = Dashboard(make_model(max_time=0.2, tol=1e-2))
    tabs = dash.tabs()
    assert tabs.active == TAB_INDEX["lessons"]
    dash.start_sync()
    assert tabs.active == TAB_INDEX["race"]
    dash.model.stop(wait=2.0)
    tabs.active = TAB_INDEX["teaching"]
    dash.start_sync()
    assert tabs.active == TAB_INDEX["teaching"]
    dash.model.stop(wait=2.0)


def _in_a_notebook_output() -> tuple:
    """A dashboard (3 runs, 0.3 s each) shown whole in a notebook output: the dashboard,
    its output's document (held, as an output's is) and the texts its open comm sends."""
    from bokeh.document import Document
    from pyviz_comms import Comm

    from ermviz.app import Dashboard

    sent: list[str] = []

    class OpenComm(Comm):  # a notebook output's comm, open, recording what it sends
        def send(self, data=None, metadata=None, buffers=None):
            if isinstance(data, str):
                sent.append(data)

    dash = Dashboard(make_model(max_time=0.3, tol=1e-12))
    comm = OpenComm()
    comm._comm = True
    doc = Document()
    doc.add_root(dash.panel().get_root(doc, comm=comm))
    doc.hold("combine")
    return dash, doc, sent


def test_notebook_start_over_the_lessons_gallery_sends_the_plotted_sources():
    # In a notebook, Start on the opening Lessons tab shows the Race tab; its figures must
    # be in the page (displayed with the output, or in a patch it is sent since), or the
    # streamed rows go to sources the page does not have (the plots stayed empty: a frozen
    # hold around launch in a notebook kept figures built on Start out of the patch).
    import json

    from panel.io.state import set_curdoc

    dash, doc, sent = _in_a_notebook_output()
    shown = {m.id for m in doc.models}  # what the output was rendered with
    with set_curdoc(doc):  # as during a notebook widget's callback
        dash.start_sync()
    for slot in dash.model.slots:
        slot.run.join(30)
    dash.streamer.pull()
    messages = [json.loads(text) for text in sent if text.startswith("{")]
    defined = set(shown)  # the ids of the models the page has: displayed or sent since

    def walk(node):
        if isinstance(node, dict):
            if node.get("type") == "object" and "id" in node:
                defined.add(node["id"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(messages)
    streamed = {
        e["model"]["id"]
        for m in messages
        for e in m.get("events", [])
        if e.get("kind") == "ColumnsStreamed"
    }
    traces = {src.trace.id for src in dash.streamer.sources}
    assert len(traces) == len(dash.model.slots) == 3
    assert traces <= defined, "the plotted sources never reached the page"
    assert traces <= streamed, "no rows streamed to the page's sources"


def test_notebook_changes_survive_a_page_message_before_their_push():
    # Panel handles each message from the page with hold, apply, unhold; that unhold hands
    # the output's waiting changes (made to Bokeh models directly, not pushed yet) to the
    # document's callbacks, where nothing sent them. Since ipykernel 7 such a message can
    # arrive on a second thread in the middle of a Start (CI: the page kept the sources'
    # idle names while their rows arrived, and drew nothing). A message is injected right
    # after the sources are renamed and right after new rows are streamed: the page must
    # still receive the names and the rows.
    import json

    from panel.io.state import set_curdoc

    dash, doc, sent = _in_a_notebook_output()
    messages_from_page = 0

    def page_message() -> None:  # what panel.viewable.MimeRenderMixin._on_msg does to doc
        nonlocal messages_from_page
        held = doc.callbacks.hold_value
        doc.hold()
        doc.unhold()
        doc.hold(held)
        messages_from_page += 1

    after_launch = dash.race_view.after_launch

    def renamed_then_message(*args):
        page_message()  # the sources were renamed (Streamer.attach) just before
        return after_launch(*args)

    dash.race_view.after_launch = renamed_then_message
    dash.streamer.listeners.insert(0, page_message)  # rows streamed, not pushed yet
    with set_curdoc(doc):
        dash.start_sync()
    for slot in dash.model.slots:
        slot.run.join(30)
    dash.streamer.pull()
    assert messages_from_page >= 2
    names: dict[str, str] = {}
    rows: dict[str, int] = {}
    for text in sent:
        if not text.startswith("{"):
            continue
        for e in json.loads(text).get("events", []):
            if e.get("kind") == "ModelChanged" and e.get("attr") == "name":
                names[e["model"]["id"]] = e["new"]
            if e.get("kind") == "ColumnsStreamed":
                data = e["data"]
                data = data.get("entries", data) if isinstance(data, dict) else data
                cols = dict(data) if isinstance(data, list) else data
                rows[e["model"]["id"]] = rows.get(e["model"]["id"], 0) + len(
                    next(iter(cols.values()))
                )
    assert len(dash.model.slots) == 3
    for src in dash.streamer.sources:
        assert names.get(src.trace.id) == f"trace:{src.slot.run_id}", names
        assert rows.get(src.trace.id, 0) == len(src.trace.data["iteration"]) > 0, rows


def _lesson_spec(name: str) -> dict:
    """What lesson ``name`` declares, read from its query string (not through urlstate)."""
    from urllib.parse import parse_qsl

    from ermviz.app.lessons import get_lesson

    pairs = parse_qsl(get_lesson(name).query)
    spec = {k: v for k, v in pairs if k != "run"}
    spec["runs"] = [v for k, v in pairs if k == "run"]
    return spec


def _race_of(dash) -> dict:
    """What the race that started actually runs, from its runs (not the configuration)."""
    infos = [s.run.info for s in dash.model.slots]
    budgets = {(s.run.budget.tol, s.run.budget.max_iter) for s in dash.model.slots}
    return {
        "datasets": {i.dataset for i in infos},
        "problems": {i.problem for i in infos},
        "settings": [i.settings for i in infos],
        "runs": [(i.method, i.step, i.settings) for i in infos],
        "budgets": budgets,
    }


def test_start_pressed_while_a_lesson_loads_races_the_whole_lesson():
    # Issue 32: Start pressed 1.5 s after Load raced toy-2d data with the previous
    # lesson's problem settings. Load is one transaction: a Start pressed meanwhile waits
    # for it, and the race it starts is the lesson's (data, problem, settings, runs).
    import asyncio

    pytest.importorskip("panel")
    from ermviz.app.views.page import Dashboard

    dash = Dashboard()
    assert dash.load_lesson("pairwise-wdbc")  # another lesson's set-up first (SVM dual)
    assert dash.model.problem == "svm-dual"
    seen = {}

    async def load_then_start() -> None:
        dash._on_lesson_click("zigzag-toy")  # the lesson applies on the next tick
        seen["disabled"] = [
            b.disabled
            for b in (dash.start_button, dash.pause_button, dash.stop_button, dash.reset_button)
        ]
        await dash.start()  # pressed at once
        seen["loaded"] = dash.lesson == "zigzag-toy"

    try:
        asyncio.run(load_then_start())
        assert seen == {"disabled": [True, True, True, True], "loaded": True}
        spec, race = _lesson_spec("zigzag-toy"), _race_of(dash)
        assert race["datasets"] == {spec["dataset"]} == {"toy-2d"}
        assert race["problems"] == {spec["problem"]} == {"logreg-l1"}
        assert all(s["radius"] == float(spec["p.radius"]) for s in race["settings"])
        assert [f"{m}:{s}" for m, s, _ in race["runs"]] == spec["runs"]
        assert race["budgets"] == {(float(spec["tol"]), int(spec["max_iter"]))}
        # The C = 1000 of the SVM dual lesson is nowhere in the new race.
        assert all("C" not in s for s in race["settings"])
        assert not dash.start_button.disabled
    finally:
        dash.model.stop(wait=2.0)


@pytest.mark.slow
def test_load_then_start_at_once_races_each_lesson_loaded():
    # The synchronous path (notebooks): every available lesson loaded after another one,
    # then started at once, races its own declared data, problem and runs.
    pytest.importorskip("panel")
    from ermviz.app.lessons import LESSONS, unavailable_reason
    from ermviz.app.views.page import Dashboard

    dash = Dashboard()
    available = dash.model.param.dataset.objects
    try:
        for lesson in LESSONS:
            if unavailable_reason(lesson, available) is not None:
                continue
            assert dash.load_lesson(lesson.name)
            dash.start_sync()
            spec, race = _lesson_spec(lesson.name), _race_of(dash)
            assert race["datasets"] == {spec["dataset"]}, lesson.name
            assert race["problems"] == {spec["problem"]}, lesson.name
            # Each declared run (method:step[:name=value...]) races, with its settings
            # (a stochastic one over `repeat` seeds: at least once).
            for declared in spec["runs"]:
                method, step, *pairs = declared.split(":")
                wanted = dict(p.split("=", 1) for p in ",".join(pairs).split(",") if p)
                assert any(
                    (m, s) == (method, step)
                    and all(
                        str(got.get(k)) == v or got.get(k) == _num(v) for k, v in wanted.items()
                    )
                    for m, s, got in race["runs"]
                ), (lesson.name, declared)
            assert len({(m, s) for m, s, _ in race["runs"]}) == len(
                {tuple(r.split(":")[:2]) for r in spec["runs"]}
            ), lesson.name
            for key, value in spec.items():
                if key.startswith("p."):
                    name = key[2:]
                    assert all(
                        str(s[name]) == value or s[name] == _num(value) for s in race["settings"]
                    ), (lesson.name, name)
            dash.model.stop(wait=2.0)
    finally:
        dash.model.stop(wait=2.0)


def _num(text: str):
    if text in ("true", "false"):
        return text == "true"
    try:
        return float(text)
    except ValueError:
        return text


def _card_settings(card) -> list[str]:
    return [w.name for row in card.run_settings.objects for w in row.objects]


def test_the_sidebar_shows_only_the_settings_that_apply():
    # Issue 32: lo/hi/K showed on the l1 ball, every run card showed gram_cache_mb,
    # lmo_tol and max_lmo_iters whatever the problem, step labels were cut mid-word and
    # the problem was called "l1-constrained" on the l2 disc.
    pytest.importorskip("panel")
    from ermviz.app.views.controls import ControlsView
    from ermviz.registry import METHODS, STEP_RULES

    m = make_model()  # svm-dual on wdbc
    view = ControlsView(m)
    assert view.shown_problem_settings == ["C", "intercept", "start"]
    cards = {c.title: _card_settings(c) for c in view.runs_column.objects}
    assert cards == {
        "FW exact": ["refresh_every", "gram_cache_mb"],  # the SVM dual's Gram cache
        "AFW exact": ["refresh_every", "gram_cache_mb", "lazy"],
        "PFW exact": ["refresh_every", "gram_cache_mb", "lazy"],
    }
    # A switch shows the settings it governs: lazy=true shows lazy_K on that card only.
    pfw = view.runs_column.objects[2]
    (lazy,) = [w for row in pfw.run_settings.objects for w in row.objects if w.name == "lazy"]
    lazy.value = True
    assert "lazy_K" in _card_settings(pfw)
    assert "lazy_K" not in _card_settings(view.runs_column.objects[1])
    # Option labels that fit the card (the rule's name and a brief phrase; a whole title
    # needed 521 px of 369), the chosen option's whole title in the description.
    for card in view.runs_column.objects:
        method, step = card.objects[0], card.objects[1]
        assert sorted(step.options.values()) == sorted(METHODS[method.value].step_rules)
        for label, rule in step.options.items():
            assert label.startswith(f"{rule}: ") and len(label) <= 44, label
        assert step.description == f"{step.value}: {STEP_RULES[step.value].title}"
        assert method.description == f"{method.value}: {METHODS[method.value].title}"
    assert len(f"exact: {STEP_RULES['exact'].title}") > 60  # so the short label is shorter
    # The page gets each description as the help icon's hover text, plain: not Panel's
    # markdown rendered into a Tooltip and an HTML model per widget and page.
    from bokeh.document import Document
    from bokeh.models import Tooltip
    from panel.pane.markup import Markdown

    card = view.runs_column.objects[0]
    method, step = card.objects[0], card.objects[1]
    parsed = []
    parser = Markdown._get_parser
    # (Panel renders a text description before any override could drop the result.)
    with mock.patch.object(
        Markdown, "_get_parser", side_effect=lambda *a, **k: parsed.append(a) or parser(*a, **k)
    ):
        root = card.get_root(Document())
    assert parsed == []  # no description was rendered as markdown
    texts = {getattr(m, "description", None) for m in root.references()}
    assert {method.description, step.description} <= texts
    assert not [m for m in root.references() if isinstance(m, Tooltip)]
    step.value = next(r for r in step.options.values() if r != step.value)
    texts = {getattr(m, "description", None) for m in root.references()}
    assert f"{step.value}: {STEP_RULES[step.value].title}" in texts

    m.dataset = "toy-2d"  # logreg-l1 over the l1 ball
    label = lambda: next(k for k, v in view.problem_select.options.items() if v == m.problem)  # noqa: E731
    assert view.shown_problem_settings == ["radius", "intercept", "start", "constraint"]
    assert label() == "logreg-l1: l1-constrained logistic regression"
    for card in view.runs_column.objects:  # no Gram cache off the SVM dual
        assert "gram_cache_mb" not in _card_settings(card)
    for constraint, extra in (("box", ["lo", "hi"]), ("ksparse", ["K"]), ("l2", [])):
        m.set_problem_setting("constraint", constraint)
        assert view.shown_problem_settings == ["radius", "intercept", "start", "constraint", *extra]
    assert label() == "logreg-l1: l2-constrained logistic regression"
    m.set_problem_setting("constraint", "l1")
    assert label() == "logreg-l1: l1-constrained logistic regression"

    m.problem = "matrix-completion"  # the nuclear LMO's settings show on its runs only
    for card in view.runs_column.objects:
        assert {"lmo_tol", "max_lmo_iters"} <= set(_card_settings(card)), card.title


def test_a_new_race_reuses_the_problem_only_while_its_data_and_settings_are_unchanged():
    # An LS-SVM problem forms its kernel matrix once; each Start formed it again.
    m = make_model(dataset="wdbc")
    first = m.build_problem()
    assert m.build_problem() is first
    m.prepare()
    assert m.problem_obj is first
    m.stop(wait=1.0)
    C = m.problem_value("C")
    m.set_problem_setting("C", C * 10)
    changed = m.build_problem()
    assert changed is not first and changed.settings["C"] == pytest.approx(C * 10)
    m.standardize = not m.standardize
    assert m.build_problem() is not changed
    # An upload stored again under the same name is read again.
    text = "".join(f"{1 if i % 2 else -1} 1:{i % 7 / 7:.3f} 2:{i % 5 / 5:.3f}\n" for i in range(40))
    assert m.add_upload("mine.svm", text) == "upload:mine.svm"
    before = m.build_problem()
    time.sleep(0.01)
    assert m.add_upload("mine.svm", text.replace("1:", "1:1")) == "upload:mine.svm"
    after = m.build_problem()
    assert after is not before and not np.array_equal(before.X, after.X)


def test_sessions_share_a_catalog_problem_built_once_and_keep_their_uploads_own():
    """Issue 32: thirty pages on one lesson built the same problem thirty times (LS-SVM's
    kernel matrix on every Start). A catalog dataset's problem is built once per process,
    concurrent askers wait for that one build; an upload's stays its session's."""
    import threading

    from ermviz.app.state import lifecycle, problem_cache

    problem_cache.clear()
    calls = []
    real = lifecycle.build_problem

    def counting(*args, **kwargs):
        calls.append(args[0])
        time.sleep(0.2)  # long enough for the other sessions to ask meanwhile
        return real(*args, **kwargs)

    models = [make_model(dataset="wdbc") for _ in range(4)]
    got = [None] * 4
    try:
        lifecycle.build_problem = counting

        def ask(i):
            got[i] = models[i].build_problem()

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert len(calls) == 1 and all(p is got[0] for p in got)
        # Another setting is another problem; the first is still shared.
        models[1].set_problem_setting("C", models[1].problem_value("C") * 10)
        assert models[1].build_problem() is not got[0] and len(calls) == 2
        assert make_model(dataset="wdbc").build_problem() is got[0]
        # Two sessions uploading files of the same name do not share a problem.
        text = "".join(f"{1 if i % 2 else -1} 1:{i % 7 / 7:.3f}\n" for i in range(30))
        a, b = make_model(), make_model()
        a.add_upload("mine.svm", text)
        b.add_upload("mine.svm", text.replace("1:", "1:1"))
        pa, pb = a.build_problem(), b.build_problem()
        assert pa is not pb and not np.array_equal(pa.X, pb.X)
    finally:
        lifecycle.build_problem = real
        problem_cache.clear()


def test_a_live_pane_sends_its_new_text_without_its_stylesheets():
    """Issue 32 (Start to the first point): Panel resends a pane's stylesheets with each new
    text, listed differently than at creation under the page's design, so every update of
    a status pane made the browser reload its stylesheets (most of the wait after Start).
    A live pane sends the text alone; a plain HTML pane in the same page shows the change
    this guards against."""
    import panel as pn
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    from ermviz.app.serving.notebook import LiveHTML, OfflineFast

    changes: dict[str, list] = {}
    for cls in (pn.pane.HTML, LiveHTML):
        doc = Document()
        with set_curdoc(doc):
            pane = cls("a")
            pn.template.FastListTemplate(main=[pane], design=OfflineFast).server_doc(doc)
            models = [model for model, _ in pane._models.values()]
            sheets = [list(model.stylesheets) for model in models]
            seen = changes.setdefault(cls.__name__, [])
            for model in models:
                model.on_change("stylesheets", lambda attr, old, new, seen=seen: seen.append(new))
            for text in ("b", "<b>c</b>"):
                pane.object = text
            assert models and all("c" in model.text for model in models)  # the text arrived
        if cls is LiveHTML:
            assert [list(model.stylesheets) for model in models] == sheets
    assert changes["HTML"], "the plain pane resends its stylesheets (the guarded case)"
    assert changes["LiveHTML"] == []
