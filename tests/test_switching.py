"""Settings of a previous problem never leak into a new one (issue 16).

The real dashboard (:class:`~ermviz.app.page.Dashboard`, no browser) is driven through its
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

from ermviz.app.model import DashboardModel
from ermviz.app.runspec import parse_settings
from ermviz.registry import METHODS, PROBLEMS

pytest.importorskip("panel")

# Small bundled sets whose every problem builds in about a second (the others load or
# build for up to minutes; their configurations are still checked after every switch).
PREPARED = ("wdbc", "blobs", "toy-2d", "moons", "toy-simplex-3", "toy-simplex-4")


def _dashboard():
    from ermviz.app.page import Dashboard

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
    out = [(w, w.value) for w in dash._problem_widgets.values()]
    for card in dash.runs_column.objects:
        for row in card.objects:
            for obj in getattr(row, "objects", []):
                for w in [obj, *getattr(obj, "objects", [])]:
                    if hasattr(w, "value") and not hasattr(w, "clicks"):
                        out.append((w, w.value))
    return out


def _assert_consistent(dash, model: DashboardModel, where: str) -> None:
    problem = model.problem
    declared = {s.name for s in PROBLEMS[problem].settings_decl}
    assert set(dash._problem_widgets) == declared, where
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


def _switch_through(dash, model: DashboardModel, notes: list, datasets: list[str]) -> None:
    """Switch to each of ``datasets``, then to each problem offered for it, checking that
    nothing is notified and the configuration stays consistent."""
    pairs = 0
    for dataset in datasets:
        stale = _stale_widgets(dash)
        dash.dataset_select.value = dataset
        _echo_stale_widgets(stale)
        assert notes == [], f"switching to {dataset}: {notes}"
        _assert_consistent(dash, model, dataset)
        for problem in list(dash.problem_select.options.values()):
            stale = _stale_widgets(dash)
            dash.problem_select.value = problem
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
def test_a_catalog_file_found_is_offered_and_switched_to_cleanly():
    dash, model, notes = _dashboard()
    assert "a1a" in model.param.dataset.objects
    _switch_through(dash, model, notes, ["wdbc", "a1a", "toy-2d"])


def test_a_setting_valid_only_for_the_previous_problem_is_dropped_on_a_switch():
    dash, model, notes = _dashboard()
    dash._problem_widgets["start"].value = "uniform"  # svm-dual's; logreg-l1 has no uniform
    assert model.problem_settings["start"] == "uniform"
    dash.problem_select.value = "logreg-l1"
    assert "start" not in model.problem_settings
    assert dash._problem_widgets["start"].value == "zero"
    assert _errors(model) == set() and notes == []


def test_a_run_setting_the_new_step_rule_declares_otherwise_is_dropped():
    _dash, model, notes = _dashboard()
    spec = model.specs[0]
    spec.step = "armijo"
    spec.set_setting("armijo_c", 0.05)
    spec.step = "exact"  # exact declares no armijo_c
    assert spec.settings == {} and notes == []
