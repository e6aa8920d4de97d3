"""Settings of a previous problem never leak into a new one (issue 16).

The real dashboard (:class:`~ermviz.app.views.page.Dashboard`, no browser) is driven through its
widgets: every dataset the dataset list offers, then every problem the problem selector
offers for it. After each switch the widgets of the previous set-up also send their old
values once more, as a browser does when a select's value is no longer among its options
(the reported "start='e1' is not one of {zero, vertex}" on switching to toy-2d). No switch
may notify anything, the configuration must validate against the new declarations, and
(on the small bundled sets, where building the problem is quick) the prepared race must
fail, if at all, exactly as a fresh page on the same dataset and problem does.
"""

from __future__ import annotations

import pytest

from ermviz.app.state.model import DashboardModel
from ermviz.app.state.runspec import parse_settings
from ermviz.registry import METHODS, PROBLEMS

pytest.importorskip("panel")

# Small bundled sets whose every problem builds in about a second (the others load or
# build for up to minutes; their configurations are still checked after every switch).
PREPARED = ("wdbc", "blobs", "toy-2d", "moons", "toy-simplex-3", "toy-simplex-4")


def _dashboard():
    from ermviz.app.views.page import Dashboard

    notes: list[tuple[str, str]] = []
    model = DashboardModel(notifier=lambda level, msg: notes.append((level, msg)))
    return Dashboard(model), model, notes


def _echo_stale_widgets(widgets: list) -> None:
    """Send each widget of the previous set-up its own value again (a browser's echo)."""
    for widget, value in widgets:
        if widget.value == value:
            widget.param.trigger("value")
        else:
            widget.value = value


def _stale_widgets(dash) -> list:
    out = [(w, w.value) for w in dash.controls_view.problem_widgets.values()]
    for card in dash.controls_view.runs_column.objects:
        for row in card.objects:
            for obj in getattr(row, "objects", []):
                for w in [obj, *getattr(obj, "objects", [])]:
                    if hasattr(w, "value") and not hasattr(w, "clicks"):
                        out.append((w, w.value))
    return out


def _assert_consistent(dash, model: DashboardModel, where: str) -> None:
    problem = model.problem
    declared = {s.name for s in PROBLEMS[problem].settings_decl}
    assert set(dash.controls_view.problem_widgets) == declared, where
    # Raises SettingError (the reported notification) for a value of another problem.
    parse_settings(PROBLEMS[problem].settings_decl, model.problem_settings, problem)
    for spec in model.specs:
        assert problem in METHODS[spec.method].problems, f"{where}: {spec.method}"
        parse_settings(spec.declared(), spec.settings, spec.owner)
    model.run_configs()


def _errors(model: DashboardModel) -> set[str]:
    slots = model.prepare()
    for slot in slots:
        if slot.run is not None:
            slot.run.stop()
    return {slot.error for slot in slots if slot.error}


def _preprocessing_notes(notes: list, model: DashboardModel, dataset: str) -> list:
    """Pop the one notice a dataset switch may give: the preprocessing its preset changed,
    which must then be what the model now holds."""
    said = [(level, msg) for level, msg in notes if level == "info"]
    for level, msg in said:
        assert msg.startswith(f"{dataset}: "), msg
        for part in msg.split(": ", 1)[1].split(", as ")[0].split(", "):
            key, value = part.rsplit(" ", 1)
            held = getattr(model, key.replace(" ", "_"))
            assert (value == "on") == held if isinstance(held, bool) else float(value) == held
        notes.remove((level, msg))
        model.messages.remove((level, msg))
    return said


def _switch_through(dash, model: DashboardModel, notes: list, datasets: list[str]) -> None:
    """Switch to each of ``datasets``, then to each problem offered for it, checking that
    nothing is notified (but the preprocessing a dataset's preset changed) and the
    configuration stays consistent."""
    pairs = 0
    for dataset in datasets:
        stale = _stale_widgets(dash)
        dash.controls_view.dataset_select.value = dataset
        _echo_stale_widgets(stale)
        _preprocessing_notes(notes, model, dataset)
        assert notes == [], f"switching to {dataset}: {notes}"
        _assert_consistent(dash, model, dataset)
        for problem in list(dash.controls_view.problem_select.options.values()):
            stale = _stale_widgets(dash)
            dash.controls_view.problem_select.value = problem
            _echo_stale_widgets(stale)
            where = f"{dataset} / {problem}"
            assert notes == [], f"{where}: {notes}"
            _assert_consistent(dash, model, where)
            if dataset in PREPARED:
                fresh = DashboardModel(dataset=dataset, problem=problem, notifier=lambda *_: None)
                fresh.standardize = model.standardize
                assert _errors(model) == _errors(fresh), where
            pairs += 1
    assert pairs == len(datasets) * len(PROBLEMS)
    assert model.messages == []


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.slow
def test_every_dataset_and_problem_switch_keeps_no_setting_of_the_previous_one():
    from ermviz.data import bundled_names, catalog, locate

    dash, model, notes = _dashboard()
    datasets = list(model.param.dataset.objects)
    # Every bundled set is offered, and exactly the catalog sets whose file is found here
    # (without a data folder, those shipped in datasets/: a1a, banana, ijcnn1-20k).
    assert set(bundled_names()) <= set(datasets)
    found = {name for name in catalog() if locate(name) is not None}
    assert {d for d in datasets if d in catalog()} == found
    _switch_through(dash, model, notes, datasets)


@pytest.mark.requires_data("a1a")
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.slow
def test_a_catalog_file_found_is_offered_and_switched_to_cleanly():
    dash, model, notes = _dashboard()
    assert "a1a" in model.param.dataset.objects
    _switch_through(dash, model, notes, ["wdbc", "a1a", "toy-2d"])


def test_a_setting_valid_only_for_the_previous_problem_is_dropped_on_a_switch():
    dash, model, notes = _dashboard()
    dash.controls_view.problem_widgets[
        "start"
    ].value = "uniform"  # svm-dual's; logreg-l1 has no uniform
    assert model.problem_settings["start"] == "uniform"
    dash.controls_view.problem_select.value = "logreg-l1"
    assert "start" not in model.problem_settings
    assert dash.controls_view.problem_widgets["start"].value == "zero"
    assert _errors(model) == set() and notes == []


def test_a_run_setting_the_new_step_rule_declares_otherwise_is_dropped():
    _dash, model, notes = _dashboard()
    spec = model.specs[0]
    spec.step = "armijo"
    spec.set_setting("armijo_c", 0.05)
    spec.step = "exact"  # exact declares no armijo_c
    assert spec.settings == {} and notes == []


def test_a_lessons_preprocessing_does_not_follow_to_the_next_dataset_unseen():
    """Issue 42: after the first lesson (wdbc, standardized) the user picks blobs: the
    features are the published ones again, and a notice says standardize went off."""
    from ermviz.app.lessons import FIRST_LESSON, LESSONS, apply_lesson

    dash, model, notes = _dashboard()
    lesson = next(lesson for lesson in LESSONS if lesson.name == FIRST_LESSON)
    assert apply_lesson(model, lesson) is None and model.standardize
    dash.controls_view.dataset_select.value = "blobs"
    assert not model.standardize
    assert notes == [("info", "blobs: standardize off, as this dataset's set-up suggests")]
    notes.clear()
    dash.controls_view.dataset_select.value = "wdbc"  # its own preset standardizes: said too
    assert model.standardize and notes == [
        ("info", "wdbc: standardize on, as this dataset's set-up suggests")
    ]
