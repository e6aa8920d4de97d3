"""The dashboard's sidebar: the controls that edit the configuration.

Data (the dataset list and the upload drop zone), the problem and its declared settings,
preprocessing, budgets, the teaching-mode switches, and one card per racing run (method,
step rule, that pair's settings; duplicate, remove). Every widget writes to the
:class:`~ermviz.app.model.DashboardModel`; what the model gets from elsewhere (a dataset's
preset, a shared link) is synced back into the widgets.

:class:`ControlsView` is a part of :class:`~ermviz.app.page.Dashboard`: it builds the
widgets on the dashboard (``controls`` is their layout); the dashboard watches the model
and calls its ``_rebuild_*`` / ``_sync_*`` methods.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import panel as pn

from ermviz.app.datasets import MAX_UPLOAD_BYTES, UPLOAD_PREFIX, describe_dataset
from ermviz.app.model import DashboardModel
from ermviz.app.race import PALETTE
from ermviz.app.runspec import RunSpec
from ermviz.app.upload import ChunkedUpload
from ermviz.app.widgets import guard, setting_widget
from ermviz.registry import METHODS, PROBLEMS, STEP_RULES


class ControlsView:
    """The sidebar's widgets and their callbacks (a part of the dashboard)."""

    model: DashboardModel

    def _build_controls(self) -> None:
        m = self.model
        g = functools.partial(guard, m)
        self.dataset_select = pn.widgets.Select(
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
        self.problem_select = pn.widgets.Select.from_param(
            m.param.problem,
            label="Problem",
            sizing_mode="stretch_width",
        )
        self.problem_select.options = {
            f"{name}: {cls.title}": name for name, cls in PROBLEMS.items()
        }
        self.problem_settings = pn.Column(sizing_mode="stretch_width", margin=0)
        self._rebuild_problem_settings()
        prep = pn.Column(
            pn.widgets.Checkbox.from_param(m.param.standardize, label="standardize features"),
            pn.widgets.Checkbox.from_param(m.param.normalize, label="normalize rows (unit l2)"),
            pn.Row(
                pn.widgets.FloatInput.from_param(
                    m.param.test_size,
                    label="test split (0 = none)",
                    step=0.05,
                    sizing_mode="stretch_width",
                ),
                pn.widgets.IntInput.from_param(
                    m.param.seed, label="seed", sizing_mode="stretch_width"
                ),
                sizing_mode="stretch_width",
            ),
            sizing_mode="stretch_width",
            margin=0,
        )
        self.tol_input = pn.widgets.TextInput(
            label="tol (certificate)",
            value=f"{m.tol:g}",
            sizing_mode="stretch_width",
            description="Stop a run when its certificate (FW gap) is at most tol",
        )
        self.tol_input.param.watch(g("tol")(self._on_tol), "value")
        budgets = pn.Row(
            self.tol_input,
            pn.widgets.IntInput.from_param(
                m.param.max_iter, label="max iter", sizing_mode="stretch_width"
            ),
            pn.widgets.FloatInput.from_param(
                m.param.max_time, label="max time (s)", sizing_mode="stretch_width"
            ),
            sizing_mode="stretch_width",
        )
        # Shown on problems with stochastic methods: their samples budget and their seeds.
        self.stochastic_budgets = pn.Row(
            pn.widgets.FloatInput.from_param(
                m.param.max_samples,
                label="max samples (0 = none)",
                sizing_mode="stretch_width",
                description="Stop a stochastic run before a step would exceed this many "
                "inner samples (the trace's samples column)",
            ),
            pn.widgets.IntInput.from_param(
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
        self.controls = pn.Column(
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
            self.model.dataset = event.new

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
        self._problem_widgets = {
            s.name: setting_widget(s, m.problem_value(s.name), set_setting, m)
            for s in m.problem_declared()
        }
        widgets = list(self._problem_widgets.values())
        self.problem_settings.objects = [
            pn.Row(*widgets[i : i + 2], sizing_mode="stretch_width")
            for i in range(0, len(widgets), 2)
        ]

    def _sync_problem_settings(self) -> None:
        """Show values set from elsewhere (a preset, a link) without rebuilding the widgets,
        which would take the focus from the one being edited."""
        if self._problem_widgets_for != self.model.problem:
            return  # widgets of the previous problem: the new problem's replace them next
        for name, widget in self._problem_widgets.items():
            try:
                value = self.model.problem_value(name)
            except KeyError:  # the problem changes next; its widgets are rebuilt then
                continue
            if widget.value != value and not (value is None and widget.value in ("", None)):
                widget.value = value

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
        method = pn.widgets.Select(
            label="method",
            options={f"{k}: {METHODS[k].title}": k for k in methods if k in METHODS},
            value=spec.method,
            sizing_mode="stretch_width",
        )
        step = pn.widgets.Select(
            label="step rule",
            options={
                f"{k}: {STEP_RULES[k].title}"[:60]: k for k in METHODS[spec.method].step_rules
            },
            value=spec.step,
            sizing_mode="stretch_width",
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

        def fill_settings() -> None:
            ws = [setting_widget(s, spec.value_of(s.name), set_setting, m) for s in spec.declared()]
            settings.objects = [
                pn.Row(*ws[i : i + 2], sizing_mode="stretch_width") for i in range(0, len(ws), 2)
            ]

        def on_method(event: Any) -> None:
            if not shown():
                return
            spec.method = event.new
            step.options = {
                f"{k}: {STEP_RULES[k].title}"[:60]: k for k in METHODS[spec.method].step_rules
            }
            step.value = spec.step
            fill_settings()

        def on_step(event: Any) -> None:
            if event.new is not None and shown():
                spec.step = event.new
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
            pn.Row(method, step, sizing_mode="stretch_width"),
            settings,
            pn.Row(dup, rem),
            title=f"run {index + 1}",
            header_background=color,
            header_color="white",
            sizing_mode="stretch_width",
            margin=(4, 0),
        )
        built["card"] = card
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
