"""The lesson declarations (ermviz.app.lessons), their loading, and the race summary.

Promises: every lesson's query is a valid link (urlstate.decode accepts it) naming its
dataset and runs, and its promise names runs of that race; names are unique; a lesson
whose catalog file is not on the server is unavailable with a reason naming the fix, and
loading it leaves the page unchanged; ``/app?lesson=NAME`` applies the lesson (the URL
then encodes its configuration), an unknown name is refused naming the known lessons;
the race summary says which run reached what, when.
"""

from __future__ import annotations

import pytest

from ermviz import data as data_mod
from ermviz.app import urlstate
from ermviz.app.lessons import (
    FIRST_LESSON,
    LESSONS,
    TABS,
    LessonError,
    Promise,
    apply_lesson,
    get_lesson,
    lesson_names,
    race_summary,
    unavailable_reason,
)
from ermviz.app.model import DashboardModel
from ermviz.registry import get_problem


def _model() -> DashboardModel:
    return DashboardModel(notifier=lambda level, message: None)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.name)
def test_every_lesson_is_a_valid_link_whose_promise_names_its_runs(lesson) -> None:
    state = urlstate.decode(lesson.query)
    assert state["dataset"] == lesson.dataset
    assert state["tol"] == lesson.tol  # the promise of a converging run reads it
    assert lesson.tab in TABS
    assert 2 <= lesson.text.count(". ") + 1 <= 4, "two or three sentences"
    labels = [  # as DashboardModel.labels() names the runs
        " ".join([f"{m.upper()} {s}", *(f"{k}={v}" for k, v in sorted(settings.items()))])
        for m, s, settings in state["runs"]
    ]
    assert lesson.promise.faster in labels
    assert lesson.promise.slower is None or lesson.promise.slower in labels
    problem = get_problem(state.get("problem", "svm-dual"))
    assert lesson.x_axis in ["iteration", *(c for c, _ in problem.work_axes)]
    assert lesson.promise.seconds <= 40 and lesson.promise.factor >= 1


def test_lesson_names_are_unique_and_the_first_lesson_is_bundled() -> None:
    names = lesson_names()
    assert len(names) == len(set(names)) >= 8
    assert get_lesson(FIRST_LESSON).dataset in data_mod.bundled_names()
    assert get_lesson(FIRST_LESSON).promise.factor >= 100
    assert get_lesson(FIRST_LESSON).promise.seconds <= 5


def test_an_unknown_lesson_names_the_known_ones() -> None:
    with pytest.raises(LessonError) as info:
        get_lesson("zig-zag")
    message = str(info.value)
    assert "'zig-zag'" in message and "\n" not in message
    assert all(name in message for name in lesson_names())


def test_a_lesson_without_its_catalog_file_is_unavailable_with_the_fix() -> None:
    lesson = get_lesson("pairwise-a1a")
    assert unavailable_reason(lesson, ["wdbc", "a1a"]) is None
    reason = unavailable_reason(lesson, ["wdbc"])
    assert reason is not None and "a1a" in reason and "ERMVIZ_DATA" in reason
    model = _model()
    model.param.dataset.objects = [n for n in model.param.dataset.objects if n != "a1a"]
    before = urlstate.encode(model)
    problem = apply_lesson(model, lesson)
    assert problem is not None and "ERMVIZ_DATA" in problem
    assert urlstate.encode(model) == before


def test_applying_a_lesson_sets_exactly_its_configuration() -> None:
    lesson = get_lesson(FIRST_LESSON)
    model = _model()
    model.tol = 1e-3  # a page changed by hand first: the lesson still gets its own set-up
    model.standardize = False
    assert apply_lesson(model, lesson) is None
    assert urlstate.decode(urlstate.encode(model)) == {
        **urlstate.decode(urlstate.encode(model)),
        **urlstate.decode(lesson.query),
    }
    assert model.tol == 1e-8 and model.standardize is True
    assert [f"{s.method}:{s.step}" for s in model.specs] == ["fw:exact", "afw:exact", "pfw:exact"]


def test_a_lesson_link_loads_it_and_an_unknown_one_is_notified() -> None:
    from ermviz.app.page import build_dashboard

    dash = build_dashboard("lesson=zigzag-toy")
    assert dash.model.dataset == "toy-2d" and dash.initial_tab == "teaching"
    assert dash.tabs().active == 2  # Lessons, Race, Teaching view
    dash = build_dashboard("lesson=nope&tol=0.001")
    assert dash.model.tol == 0.001  # the rest of the link still applies
    assert any("unknown lesson 'nope'" in message for _, message in dash.model.messages)
    assert dash.initial_tab == "lessons"


def test_promise_holds_only_when_the_faster_run_is_far_enough_below() -> None:
    promise = Promise(faster="PFW exact", slower="FW exact", factor=100.0, seconds=5.0)
    assert promise.holds({"PFW exact": 1e-8, "FW exact": 2e-6}, tol=1e-8)
    assert not promise.holds({"PFW exact": 1e-7, "FW exact": 2e-6}, tol=1e-8)
    assert not promise.holds({"FW exact": 2e-6}, tol=1e-8)
    converges = Promise(faster="REHLINE cd", slower=None, factor=1.0, seconds=5.0)
    assert converges.holds({"REHLINE cd": 1e-9}, tol=1e-8)
    assert not converges.holds({"REHLINE cd": 1e-7}, tol=1e-8)


def test_race_summary_says_who_reached_what_and_where_the_others_are() -> None:
    running = [
        {
            "label": "FW exact",
            "status": "running",
            "iteration": 9e5,
            "time_s": 2.1,
            "certificate": 3e-4,
        },
        {
            "label": "PFW exact",
            "status": "running",
            "iteration": 400,
            "time_s": 0.2,
            "certificate": 1e-5,
        },
    ]
    assert race_summary(running, tol=1e-8) == ""  # nothing to say yet
    running[1].update(status="converged", iteration=412, time_s=0.32, certificate=9.9e-9)
    assert race_summary(running, tol=1e-8) == (
        "PFW exact reached 9.9e-09 at iteration 412 (0.32 s); FW exact at 3.0e-04 after 2.1 s"
    )
    running[0].update(status="max_time", time_s=5.0, certificate=3.9e-6)
    assert race_summary(running, tol=1e-8).endswith("FW exact at 3.9e-06 after 5 s, max_time")
    stalled = [
        {
            "label": "FW exact",
            "status": "stopped",
            "iteration": 10,
            "time_s": 1.0,
            "certificate": 0.5,
        }
    ]
    assert race_summary(stalled, tol=1e-8) == (
        "no run reached tol 1e-08; FW exact at 5.0e-01 after 1 s, stopped"
    )
    assert race_summary([{"label": "FW exact", "status": "error"}], tol=1e-8) == ""


def test_race_summary_counts_the_lmo_calls_of_runs_that_record_them() -> None:
    runs = [
        {"label": "PFW exact", "status": "converged", "iteration": 404, "time_s": 0.06,
         "certificate": 9.8e-9},
        {"label": "PFW exact lazy=True", "status": "converged", "iteration": 480,
         "time_s": 0.05, "certificate": 2.5e-9, "lmo_calls": 32.0},
    ]  # fmt: skip
    assert race_summary(runs, tol=1e-8) == (
        "PFW exact lazy=True reached 2.5e-09 at iteration 480 (0.05 s, 32 LMO calls); "
        "PFW exact reached 9.8e-09 at iteration 404 (0.06 s)"
    )
