"""The dashboard's sidebar: the controls that edit the configuration.

Data (the dataset list and the upload drop zone), the problem and its declared settings,
preprocessing, budgets, the teaching-mode switches, and one card per racing run (method,
step rule, that pair's settings; duplicate, remove). Every widget writes to the
:class:`~ermviz.app.state.model.DashboardModel`; what the model gets from elsewhere (a dataset's
preset, a shared link) is synced back into the widgets.

:class:`ControlsView` is a Panel :class:`~panel.viewable.Viewer`: built on a
:class:`~ermviz.app.state.model.DashboardModel`, it owns its widgets and watches the model
itself; :class:`~ermviz.app.views.page.Dashboard` shows it in the sidebar, a notebook may show
it alone (``ControlsView(model)``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import panel as pn

from ermviz.app.state.datasets import (
    MAX_UPLOAD_BYTES,
    PREPROCESSING,
    UPLOAD_PREFIX,
    describe_dataset,
    preprocessing_change,
)
from ermviz.app.state.model import DashboardModel
from ermviz.app.state.race import PALETTE
from ermviz.app.state.runspec import RunSpec
from ermviz.app.views.upload import ChunkedUpload
from ermviz.app.views.widgets import FloatInput, IntInput, Select, TextInput, guard, setting_widget
from ermviz.registry import METHODS, PROBLEMS, STEP_RULES
from ermviz.settings import Setting


class ControlsView(pn.viewable.Viewer):
    """The sidebar's widgets and their callbacks, over one model."""

    def __init__(self, model: DashboardModel, **params: Any) -> None:
        super().__init__(**params)
        self.model = model
        self._build()
        m = model
        m.param.watch(lambda *_: self._rebuild_runs(), ["specs", "problem"])
        m.param.watch(lambda *_: self._refresh_labels(), ["revision"])
        m.param.watch(lambda *_: self._rebuild_problem_settings(), ["problem"])
        m.param.watch(lambda *_: self._sync_problem_settings(), ["problem_settings"])
        m.param.watch(lambda *_: self._sync_dataset_widget(), ["dataset"])
        m.param.watch(lambda *_: self._sync_tol_widget(), ["tol"])

    def __panel__(self) -> pn.viewable.Viewable:
        return self.layout

    def _build(self) -> None:
        m = self.model
        g = functools.partial(guard, m)
        self.dataset_select = Select(
            label="Dataset",
            sizing_mode="stretch_width",
            description="Bundled sets, catalog files found on this server, and your uploads. "
            "Picking one applies its suggested problem, settings and budgets.",
        )
        self._sync_dataset_widget()
        self.dataset_select.param.watch(g("dataset")(self._on_dataset_widget), "value")
        self.upload = ChunkedUpload(
            on_file=g("upload")(self._on_upload),
            on_error=m.notify,
            max_bytes=MAX_UPLOAD_BYTES,
            accept=".svm,.libsvm,.txt,.dat,.data,.csv,.t,.scale",
            prompt="Drop a LIBSVM or CSV file here, or click to choose one",
            sizing_mode="stretch_width",
            margin=(5, 10),  # aligned with the widgets above and below
        )
        self.problem_select = Select.from_param(
            m.param.problem,
            label="Problem",
            sizing_mode="stretch_width",
        )
        self.problem_select.options = {problem_label(name, m): name for name in PROBLEMS}
        self.problem_settings = pn.Column(sizing_mode="stretch_width", margin=0)
        self._rebuild_problem_settings()
        prep = pn.Column(
            pn.widgets.Checkbox.from_param(m.param.standardize, label="standardize features"),
            pn.widgets.Checkbox.from_param(m.param.normalize, label="normalize rows (unit l2)"),
            pn.Row(
                FloatInput.from_param(
                    m.param.test_size,
                    label="test split (0 = none)",
                    step=0.05,
                    sizing_mode="stretch_width",
                ),
                IntInput.from_param(m.param.seed, label="seed", sizing_mode="stretch_width"),
                sizing_mode="stretch_width",
            ),
            sizing_mode="stretch_width",
            margin=0,
        )
        self.tol_input = TextInput(
            label="tol (certificate)",
            value=f"{m.tol:g}",
            sizing_mode="stretch_width",
            description="Stop a run when its certificate (FW gap) is at most tol",
        )
        self.tol_input.param.watch(g("tol")(self._on_tol), "value")
        budgets = pn.Row(
            self.tol_input,
            IntInput.from_param(m.param.max_iter, label="max iter", sizing_mode="stretch_width"),
            FloatInput.from_param(
                m.param.max_time, label="max time (s)", sizing_mode="stretch_width"
            ),
            sizing_mode="stretch_width",
        )
        # Shown on problems with stochastic methods: their samples budget and their seeds.
        self.stochastic_budgets = pn.Row(
            FloatInput.from_param(
                m.param.max_samples,
                label="max samples (0 = none)",
                sizing_mode="stretch_width",
                description="Stop a stochastic run before a step would exceed this many "
                "inner samples (the trace's samples column)",
            ),
            IntInput.from_param(
                m.param.repeat,
                label="seeds per run",
                sizing_mode="stretch_width",
                description="Run each stochastic method with seeds seed, seed + 1, ...: the "
                "plots draw their mean and min-max band, the table their mean and deviation",
            ),
            sizing_mode="stretch_width",
        )
        self.stochastic_budgets.visible = _has_stochastic_methods(m.problem)
        m.param.watch(
            lambda *_: setattr(
                self.stochastic_budgets, "visible", _has_stochastic_methods(self.model.problem)
            ),
            ["problem"],
        )
        teaching = pn.Column(
            pn.widgets.Checkbox.from_param(
                m.param.animate, label="teaching mode: keep iterates, animate (toy problems)"
            ),
            pn.widgets.FloatSlider.from_param(
                m.param.step_delay,
                label="seconds per step (teaching)",
                step=0.01,
                sizing_mode="stretch_width",
            ),
            sizing_mode="stretch_width",
            margin=0,
        )
        self.runs_column = pn.Column(sizing_mode="stretch_width", margin=0)
        self.add_button = pn.widgets.Button(label="+ Add run", color="default")
        self.add_button.on_click(g("add run")(lambda e: m.add_run()))
        self._rebuild_runs()
        self.layout = pn.Column(
            "### Data",
            self.dataset_select,
            pn.pane.Markdown(
                f"Or upload a LIBSVM or CSV file (CSV: label in the last column; at most "
                f"{MAX_UPLOAD_BYTES // 2**20} MB):",
                margin=(0, 10),
            ),
            self.upload,
            "### Problem",
            self.problem_select,
            self.problem_settings,
            "### Preprocessing",
            prep,
            "### Budgets",
            budgets,
            self.stochastic_budgets,
            teaching,
            "### Racing runs",
            self.runs_column,
            self.add_button,
            sizing_mode="stretch_width",
            css_classes=["ermviz-controls"],  # (a served page adds it after its first render)
        )

    def _dataset_groups(self) -> dict[str, dict[str, str]]:
        m = self.model
        groups = {
            "Bundled": {describe_dataset(n): n for n in m.dataset_groups["bundled"]},
            "Catalog (on disk)": {describe_dataset(n): n for n in m.dataset_groups["catalog"]},
            "Uploaded": {describe_dataset(n): n for n in m.uploads},
        }
        return {k: v for k, v in groups.items() if v}

    def _sync_dataset_widget(self) -> None:
        groups = self._dataset_groups()
        if self.dataset_select.groups != groups:
            self.dataset_select.groups = groups
        if self.dataset_select.value != self.model.dataset:
            self.dataset_select.value = self.model.dataset

    def _on_dataset_widget(self, event: Any) -> None:
        if event.new is not None and event.new != self.model.dataset:
            m = self.model
            before = {key: getattr(m, key) for key in PREPROCESSING}
            m.dataset = event.new  # (applies the dataset's preset, preprocessing included)
            change = preprocessing_change(before, {key: getattr(m, key) for key in PREPROCESSING})
            if change:
                m.notify(f"{event.new}: {change}, as this dataset's set-up suggests", "info")

    def _on_upload(self, filename: str, content: bytes) -> None:
        # The drop zone shows the outcome too: a refusal there must not read like success.
        seen = len(self.model.messages)
        name = None
        try:
            name = self.model.add_upload(filename, content)
        finally:
            if name is None:  # refused: add_upload (or the guard) notified why
                said = [text for _, text in self.model.messages[seen:]]
                self.upload.show_outcome(said[-1] if said else f"{filename}: nothing was loaded")
        if name is not None:
            self._sync_dataset_widget()
            loaded = f"loaded {name[len(UPLOAD_PREFIX) :]}; it is selected"
            self.upload.show_outcome(loaded)
            self.model.notify(loaded, "success")

    def _on_tol(self, event: Any) -> None:
        try:
            value = float(event.new)
            if not (math.isfinite(value) and value > 0):
                raise ValueError
        except (TypeError, ValueError):
            self.model.notify(f"tol={event.new!r} is not a number > 0 (e.g. 1e-8)")
            self.tol_input.value = f"{self.model.tol:g}"
            return
        self.model.tol = value

    def _sync_tol_widget(self) -> None:
        try:
            current = float(self.tol_input.value)
        except ValueError:
            current = None
        if current != self.model.tol:
            self.tol_input.value = f"{self.model.tol:g}"

    def _rebuild_problem_settings(self) -> None:
        """Widgets for the problem's declared settings (a new problem: new widgets)."""
        m = self.model
        built_for = m.problem

        def set_setting(name: str, value: Any) -> None:
            # A widget of the previous problem may still send a value (the browser echoes
            # a select whose value it no longer lists): it must not set the new problem's.
            if m.problem == built_for:
                m.set_problem_setting(name, value)

        self._problem_widgets_for = built_for
        self.problem_widgets = {
            s.name: setting_widget(s, m.problem_value(s.name), set_setting, m)
            for s in m.problem_declared()
        }
        self.shown_problem_settings: list[str] = []
        self._lay_out_problem_settings()
        self._label_problem()

    def _lay_out_problem_settings(self) -> None:
        """Lay out the problem's settings that apply to its current values (lo/hi on the
        box, K on the K-sparse polytope, ...): :func:`applies`."""
        m = self.model
        declared = m.problem_declared()
        shown = [
            s.name for s in declared if applies(s, declared, m.problem_value, problem=m.problem)
        ]
        if shown == self.shown_problem_settings and self.problem_settings.objects:
            return
        self.shown_problem_settings = shown
        widgets = [self.problem_widgets[name] for name in shown]
        self.problem_settings.objects = [
            pn.Row(*widgets[i : i + 2], sizing_mode="stretch_width")
            for i in range(0, len(widgets), 2)
        ]

    def _label_problem(self) -> None:
        """The problem list's labels, the current problem's naming its chosen set."""
        m = self.model
        options = {problem_label(name, m): name for name in PROBLEMS}
        if self.problem_select.options != options:
            self.problem_select.options = options

    def _sync_problem_settings(self) -> None:
        """Show values set from elsewhere (a preset, a link) without rebuilding the widgets,
        which would take the focus from the one being edited."""
        if self._problem_widgets_for != self.model.problem:
            return  # widgets of the previous problem: the new problem's replace them next
        for name, widget in self.problem_widgets.items():
            try:
                value = self.model.problem_value(name)
            except KeyError:  # the problem changes next; its widgets are rebuilt then
                continue
            if widget.value != value and not (value is None and widget.value in ("", None)):
                widget.value = value
        self._lay_out_problem_settings()
        self._label_problem()

    def _rebuild_runs(self) -> None:
        self.runs_column.objects = [
            self._run_card(i, spec) for i, spec in enumerate(self.model.specs)
        ]
        self._refresh_labels()

    def _run_card(self, index: int, spec: RunSpec) -> pn.Card:
        m = self.model
        g = functools.partial(guard, m)
        methods = m.methods_for_problem() or list(METHODS)
        if spec.method not in methods:
            # The model fits the race to a new problem; a run set directly (Python API) that
            # still does not solve it is shown as is, and Start reports why it cannot run.
            methods = [*methods, spec.method]
        # One select a row; short option labels (the name and a brief phrase, that fit the
        # card: the whole title, 82 characters, needed 521 px of its 369), the chosen
        # option's whole text in the select's description (its tooltip).
        method = Select(
            label="method",
            options={_option_label(k, METHODS[k].title): k for k in methods if k in METHODS},
            value=spec.method,
            sizing_mode="stretch_width",
            description=f"{spec.method}: {METHODS[spec.method].title}",
        )
        step = Select(
            label="step rule",
            options=_step_options(spec.method),
            value=spec.step,
            sizing_mode="stretch_width",
            description=f"{spec.step}: {STEP_RULES[spec.step].title}",
        )
        settings = pn.Column(sizing_mode="stretch_width", margin=0)
        built: dict[str, Any] = {}

        def shown() -> bool:
            # A card replaced by a rebuild (new problem or race) may still get a value the
            # browser echoes back; only the card on screen edits its run.
            return any(c is built.get("card") for c in self.runs_column.objects)

        def set_setting(name: str, value: Any) -> None:
            if shown():
                spec.set_setting(name, value)
                if applying() != built.get("names"):
                    fill_settings()  # (lazy=true shows lazy_K, ...)

        def applying() -> list[str]:
            declared = spec.declared()
            return [
                s.name
                for s in declared
                if applies(s, declared, spec.value_of, problem=m.problem, method=spec.method)
            ]

        def fill_settings() -> None:
            names = applying()
            built["names"] = names
            ws = [
                setting_widget(s, spec.value_of(s.name), set_setting, m)
                for s in spec.declared()
                if s.name in names
            ]
            settings.objects = [
                pn.Row(*ws[i : i + 2], sizing_mode="stretch_width") for i in range(0, len(ws), 2)
            ]

        def on_method(event: Any) -> None:
            if not shown():
                return
            spec.method = event.new
            method.description = f"{spec.method}: {METHODS[spec.method].title}"
            step.options = _step_options(spec.method)
            step.value = spec.step
            fill_settings()

        def on_step(event: Any) -> None:
            if event.new is not None and shown():
                spec.step = event.new
                step.description = f"{spec.step}: {STEP_RULES[spec.step].title}"
                fill_settings()

        method.param.watch(g("method")(on_method), "value")
        step.param.watch(g("step rule")(on_step), "value")
        fill_settings()
        dup = pn.widgets.Button(label="Duplicate", color="light", width=95)
        rem = pn.widgets.Button(label="Remove", color="light", width=95)
        dup.on_click(g("duplicate")(lambda e: m.duplicate_run(m.specs.index(spec))))
        rem.on_click(g("remove")(lambda e: m.remove_run(m.specs.index(spec))))
        color = PALETTE[index % len(PALETTE)]
        card = pn.Card(
            method,
            step,
            settings,
            pn.Row(dup, rem),
            title=f"run {index + 1}",
            header_background=color,
            header_color="white",
            sizing_mode="stretch_width",
            margin=(4, 0),
        )
        built["card"] = card
        card.run_settings = settings  # (what the card shows: tests read it)
        return card

    def _refresh_labels(self) -> None:
        labels = self.model.labels()
        for card, label in zip(self.runs_column.objects, labels, strict=False):
            if card.title != label:
                card.title = label


def _has_stochastic_methods(problem: str) -> bool:
    """Whether a method for ``problem`` declares a seed (then seeds and samples matter)."""
    return any(
        problem in spec.problems and any(s.name == "seed" for s in spec.settings)
        for spec in METHODS.values()
    )


#: The longest option label a run card's select shows whole (about 6.4 px a character at
#: the sidebar's font: 369 px of room on a card).
OPTION_LABEL_CHARS = 44


def _option_label(name: str, title: str, limit: int = OPTION_LABEL_CHARS) -> str:
    """``name: title`` shortened to fit a run card's select: the title up to its first
    parenthesis, then cut at a word with an ellipsis (the whole text is the description)."""
    phrase = title.split(" (")[0].strip() or title
    label = f"{name}: {phrase}"
    if len(label) <= limit:
        return label
    cut = label[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:")
    return cut + "…"


def _step_options(method: str) -> dict[str, str]:
    return {_option_label(k, STEP_RULES[k].title): k for k in METHODS[method].step_rules}


#: What a setting's help may start with to say when it applies ("box: lower bound ..."),
#: besides a problem or a method name: a value of a choice, or a switch's name.
def applies(
    setting: Setting,
    declared: list[Setting],
    value_of: Callable[[str], Any],
    *,
    problem: str,
    method: str | None = None,
) -> bool:
    """Whether ``setting`` matters under the current values (``value_of(name)``) of the
    ``declared`` settings it sits among, on ``problem`` (and ``method``).

    A setting's help says its scope by its first word, ``scope: ...``: a problem
    (``svm-dual: memory for cached Gram columns``), a method (``boosted: ...``), a value
    of another choice setting (``box: lower bound ...`` applies when ``constraint`` is
    ``box``; ``huber: ...`` when ``loss`` is ``huber``), or a switch's name (``lazy:
    ...`` when ``lazy`` is on). A help without such a word applies always.
    """
    head, sep, _ = setting.help.partition(":")
    word = head.strip()
    if not sep or not word or " " in word:
        return True
    if word in PROBLEMS:
        return word == problem
    if word in METHODS and method is not None:
        return word == method
    matched = False
    for other in declared:
        if other.name == setting.name:
            continue
        if other.kind == "choice" and word in (other.choices or ()):
            matched = True
            if _value(value_of, other.name) == word:
                return True
        elif other.kind == "bool" and other.name == word:
            matched = True
            if _value(value_of, other.name):
                return True
    return not matched


def _value(value_of: Callable[[str], Any], name: str) -> Any:
    try:
        return value_of(name)
    except KeyError:
        return None


#: How a problem's title names its feasible set, per ``constraint`` value.
_SET_NAMES = {"l1": "l1", "l2": "l2", "box": "box", "ksparse": "K-sparse"}


def problem_label(name: str, model: DashboardModel) -> str:
    """The problem list's label of ``name``; the current problem's names its chosen set
    ("logreg-l1: l2-constrained logistic regression" on the l2 disc)."""
    title = PROBLEMS[name].title
    if name == model.problem and any(s.name == "constraint" for s in model.problem_declared()):
        chosen = _value(model.problem_value, "constraint")
        if chosen in _SET_NAMES and chosen != "l1":
            title = title.replace("l1-constrained", f"{_SET_NAMES[chosen]}-constrained")
            title = title.replace("(l1 ball by default)", f"({_SET_NAMES[chosen]} set)")
    return f"{name}: {title}"
