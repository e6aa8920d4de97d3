"""The dashboard's page: :class:`Dashboard` assembles every view around one
:class:`~ermviz.app.state.model.DashboardModel` and one
:class:`~ermviz.app.plots.streaming.Streamer`.

Served (``panel serve app.py``) it is a :class:`panel.template.FastListTemplate`
(:meth:`Dashboard.template`); in Jupyter :meth:`Dashboard.panel` and each part
(``controls``, ``toolbar``, ``plots``, ``teaching``, ``results``, ``export``) display after
``pn.extension()``. :func:`build_dashboard` makes one per session, its configuration in
the URL.

The dashboard's parts, one module each, are Panel :class:`~panel.viewable.Viewer` objects
that own their widgets and are built on the session's model (and streamer):
:mod:`ermviz.app.views.controls` (the sidebar), :mod:`ermviz.app.views.race_view` (live plots and
results table), :mod:`ermviz.app.views.teaching_view`, :mod:`ermviz.app.views.export_view`,
:mod:`ermviz.app.results.view` (a sweep's results folder) and :mod:`ermviz.app.lessons.view`
(the Lessons tab, and the loaded lesson's banner under the toolbar; a served page without
a query opens on :data:`~ermviz.app.lessons.FIRST_LESSON`, ``?lesson=NAME`` on another).
Only what is on screen is built: a tab's view when it is first shown. The toolbar (start,
pause, stop, reset, the race's status and its outcome in words) is here: it drives the
race and every view follows it. Loading a lesson is one transaction: the race's buttons
are disabled until it has applied, and a Start pressed meanwhile waits for it.

Every widget callback is wrapped by :func:`~ermviz.app.views.widgets.guard`: an exception
becomes a notification (and, during a race, a run status) instead of a frozen page.
"""

from __future__ import annotations

import asyncio
import functools
import html
import time
from typing import Any

import panel as pn

from ermviz.app import compat
from ermviz.app.lessons.view import TAB_INDEX, LessonBanner, LessonsView
from ermviz.app.plots.streaming import Streamer
from ermviz.app.serving.notebook import (
    PAGE_FONT,
    LiveHTML,
    OfflineFast,
    keep_unsent_changes,
    shown_here,
)
from ermviz.app.state.model import DashboardModel
from ermviz.app.state.problem_cache import prebuild
from ermviz.app.views.background import in_thread
from ermviz.app.views.controls import ControlsView
from ermviz.app.views.export_view import ExportView
from ermviz.app.views.race_status import Starting, race_line, race_summary, run_chips, sized
from ermviz.app.views.race_view import RaceView
from ermviz.app.views.teaching_view import TeachingView
from ermviz.app.views.widgets import guard

#: Seconds between two refreshes of the results table during a race.
TABLE_PERIOD = 1.0
#: Seconds between two refreshes of the status line while a Start builds its runs (and
#: perhaps waits for their kernels): the seconds so far keep counting.
STARTING_PERIOD = 0.5


class Dashboard:
    """One session's dashboard: the model, the streamer, and the views composed around
    them, each a Panel :class:`~panel.viewable.Viewer` that owns its widgets:
    ``controls_view`` (:class:`~ermviz.app.views.controls.ControlsView`), ``race_view``
    (:class:`~ermviz.app.views.race_view.RaceView`), ``teaching_view``
    (:class:`~ermviz.app.views.teaching_view.TeachingView`), ``export_view``
    (:class:`~ermviz.app.views.export_view.ExportView`), ``lessons_view`` and ``lesson_banner``
    (:mod:`ermviz.app.lessons.view`). The toolbar, which drives the race, is its own.

    The tabs other than the one shown are built when first shown (:meth:`tabs`), so a
    session costs what its first screen shows. Each view's widgets are its own, reached
    through it (``dash.race_view.figures``, ``dash.export_view.csv_download``; a view built
    when first shown builds on ``build()``, which returns it:
    ``dash.teaching_view.build().teaching_plot``); the dashboard forwards none of them.

    Parameters
    ----------
    model : DashboardModel, optional
        Defaults to a fresh model on the default race (wdbc, FW vs AFW vs PFW).
    """

    def __init__(self, model: DashboardModel | None = None) -> None:
        self.model = model or DashboardModel()
        self.streamer = Streamer(self.model)
        self.streamer.listeners.append(self._after_pull)
        self._table_at = 0.0
        self._statuses: tuple = ()
        self._starting = False
        self._start_state: Starting | None = None
        self._loading: asyncio.Event | None = None
        self._notebook_root: pn.viewable.Viewable | None = None
        self._told: set[str] = set()
        self._parts: dict[str, _Part] = {}
        self._tabs: pn.Tabs | None = None
        self._sweep_results: Any = None
        self.initial_tab = "lessons"
        self.lesson: str | None = None
        self.controls_view = ControlsView(self.model)
        self.race_view = RaceView(self.model, self.streamer, shown=self._shown)
        self.teaching_view = TeachingView(self.model, self.streamer)
        self.export_view = ExportView(self.model, self.streamer)
        self.lessons_view = LessonsView(self.model, load=self._on_lesson_click)
        self.lesson_banner = LessonBanner(self.model)
        self._build_toolbar()
        self.refresh(force=True)

    # -- the parts -------------------------------------------------------------------
    # In a notebook every display is a Bokeh document of its own, and the live figures,
    # their sources and the stylesheets the page shares are Bokeh models that belong to
    # one document: each part displays through a guard that refuses a second display.
    def _part(self, name: str, build: bool = True) -> _Part:
        """The part ``name`` of :data:`PARTS`, wrapped for a notebook; its view is built
        first unless ``build`` is False (a tab builds it when first shown)."""
        view, content = {
            "controls": (None, self.controls_view),
            "toolbar": (None, self.toolbar_layout),
            "plots": (self.race_view, self.race_view),
            "results": (None, self.race_view.results),
            "teaching": (self.teaching_view, self.teaching_view),
            "export": (None, self.export_view),
            "lessons": (self.lessons_view, self.lessons_view),
        }[name]
        if build and view is not None:
            view.build()
        part = self._parts.get(name)
        if part is None:
            part = self._parts[name] = _Part(self, content)
        return part

    controls = property(lambda self: self._part("controls"), doc="The sidebar (a part).")
    toolbar = property(lambda self: self._part("toolbar"), doc="Start, pause, ... (a part).")
    plots = property(lambda self: self._part("plots"), doc="The race's plots (a part).")
    results = property(lambda self: self._part("results"), doc="The results table (a part).")
    teaching = property(lambda self: self._part("teaching"), doc="The teaching view (a part).")
    export = property(lambda self: self._part("export"), doc="The export buttons (a part).")
    lessons = property(lambda self: self._part("lessons"), doc="The lessons (a part).")

    @property
    def starting(self) -> bool:
        """True while a Start builds its race (its button disabled meanwhile)."""
        return self._starting

    @property
    def loading(self) -> bool:
        """True while a lesson's Load applies (the race's buttons disabled meanwhile)."""
        return self._loading is not None

    @property
    def sweep_results(self) -> Any:
        """The Results tab: a sweep's results folder (never part of the URL: see
        :mod:`ermviz.app.results.model`); built when first asked for (by :meth:`tabs`:
        not drawn until shown)."""
        if self._sweep_results is None:
            from ermviz.app.results.model import ResultsModel
            from ermviz.app.results.view import ResultsView

            self._sweep_results = ResultsView(
                ResultsModel(notifier=lambda level, message: self.model.notify(message, level))
            )
        return self._sweep_results

    # -- toolbar ---------------------------------------------------------------------
    def _build_toolbar(self) -> None:
        from ermviz.app.serving import warmup

        g = functools.partial(guard, self.model)
        # Narrow buttons with small margins: the seven fit one row of a 1280 px laptop's
        # main area (~810 px), so the lesson and the plots start higher.
        small = {"margin": (4, 4)}
        self.start_button = pn.widgets.Button(label="Start", color="primary", width=80, **small)
        self.pause_button = pn.widgets.Button(label="Pause", color="warning", width=86, **small)
        self.stop_button = pn.widgets.Button(label="Stop", color="danger", width=70, **small)
        self.reset_button = pn.widgets.Button(label="Reset", color="default", width=72, **small)
        self.start_button.on_click(g("start")(self.start))
        self.pause_button.on_click(g("pause")(self.toggle_pause))
        self.stop_button.on_click(g("stop")(self.stop))
        self.reset_button.on_click(g("reset")(self.reset))
        for button in self.race_view.reference_buttons:
            button.margin = small["margin"]
        # For a room: larger text and thicker lines on every figure (race, teaching view),
        # and larger lesson text and race status.
        self.presentation_toggle = pn.widgets.Toggle.from_param(
            self.model.param.presentation,
            name="Presentation",
            color="primary",
            variant="outline",
            width=118,
            **small,
        )
        self.model.param.watch(lambda *_: self.refresh(force=True), ["presentation"])
        # The race's state and its runs' chips on one line (the chips wrap on a narrow
        # window), the outcome in words below once there is one.
        self.status_strip = LiveHTML(
            "", sizing_mode="stretch_width", margin=(4, 10, 2, 10), css_classes=["race-status"]
        )
        self._chips = ""
        self.summary_text = LiveHTML("", sizing_mode="stretch_width", margin=(0, 10))
        # Kernels compiling in the background after a fresh install (ermviz.app.serving.warmup):
        # hidden while this session's Start waits for them, which the status line then says.
        self.warmup_line = pn.Column(warmup.status_view(), sizing_mode="stretch_width", margin=0)
        self.toolbar_layout = pn.Column(
            # A FlexBox wraps the buttons on a narrow window (a Row cut the last ones off).
            pn.FlexBox(
                self.start_button,
                self.pause_button,
                self.stop_button,
                self.reset_button,
                *self.race_view.reference_buttons,
                self.presentation_toggle,
                sizing_mode="stretch_width",
            ),
            self.status_strip,
            self.summary_text,
            self.warmup_line,
            sizing_mode="stretch_width",
        )

    def _race_buttons_busy(self, busy: bool) -> None:
        """While a lesson loads nothing that races is pressable (Start would see a
        half-applied lesson); afterwards :meth:`refresh` sets each from the race."""
        for button in (self.start_button, self.pause_button, self.stop_button, self.reset_button):
            button.disabled = busy
        if not busy:
            self.start_button.disabled = self._starting
            self.refresh(force=True)

    async def start(self, event: Any = None) -> None:
        """Start a new race: build the runs off the event loop, then launch and stream.
        Pressed while a lesson loads, it starts once the lesson has applied."""
        if self._loading is not None:
            await self._loading.wait()
        if self._starting:
            return
        if not self.model.specs:
            self.model.notify("add at least one run before starting", "warning")
            return
        self._starting = True
        self.start_button.disabled = True
        self._start_state = Starting(time.perf_counter(), self.model.labels())
        launched = False
        try:
            self.model.stop(wait=0.5)
            # Loading data and compiling (or loading) kernels may take seconds on big
            # sets, minutes on a first launch: a worker thread keeps the page responsive
            # meanwhile, and the status line says what it waits for, counting the seconds.
            task = asyncio.ensure_future(in_thread(self.model.prepare))
            while True:
                self._follow_start()
                done, _ = await asyncio.wait([task], timeout=STARTING_PERIOD)
                if done:
                    break
            slots = task.result()
            if self.model.closed:
                return  # the page closed while the race was built: nothing to show or run
            self._start_state = None
            self.launch(slots)  # (it refreshes the status)
            launched = True
        finally:
            self._starting = False
            self._start_state = None
            self.start_button.disabled = self._loading is not None
            self.warmup_line.visible = True
            if not launched:
                self.refresh(force=True)  # the status says "compiling" no longer

    def _follow_start(self) -> None:
        """Show the Start being prepared: building its runs, or waiting for kernels the
        background warm-up compiles (which, how long so far, how many ready, and about how
        long still when the warm-up can tell); the warm-up's own line hides meanwhile."""
        from ermviz.app.serving import warmup

        state = self._start_state
        if state is None:
            return
        first_launch = warmup.progress().phase == "compiling"
        state.follow(warmup.waiting_for(self.model), warmup.wait_estimate(self.model), first_launch)
        self.warmup_line.visible = not state.waiting
        self._show_status(race_line("", 0, state, time.perf_counter()), run_chips((), state))

    def start_sync(self) -> None:
        """Start a new race synchronously (notebooks, tests)."""
        self.model.stop(wait=0.5)
        if not self.model.specs:
            self.model.notify("add at least one run before starting", "warning")
            return
        self.launch(self.model.prepare())

    def launch(self, slots: list) -> None:
        """Show the new race, then start its runs (in that order: building figures holds
        the GIL, and a run started earlier would count that wait as solver time)."""
        # One message; the model graph recomputed once, and only if it changed.
        with pn.io.hold(), compat.frozen_graph():
            if self._tabs is not None and self._tabs.active == TAB_INDEX["lessons"]:
                self.show_tab("race")  # Start pressed over the gallery: show what moves
            self.model.launch(slots, start=False)
            grew = self.streamer.attach(slots, self.model.problem_obj)
            self.race_view.after_launch(grew)
            self.teaching_view.rebuild()
            self.refresh(force=True)
        self.model.start_runs()
        self.streamer.start()

    def toggle_pause(self, event: Any = None) -> None:
        if self.model.paused:
            self.model.resume()
            self.streamer.start()
        else:
            self.model.pause()
        self.refresh(force=True)

    def stop(self, event: Any = None) -> None:
        self.model.stop(wait=0.5)
        # One more pull delivers every run's final row; the streamer then goes idle.
        self.streamer.start()
        self.refresh(force=True)

    def reset(self, event: Any = None) -> None:
        self.model.reset()
        self.streamer.stop()
        self.streamer.attach([])
        self.race_view.after_reset()
        self.teaching_view.rebuild()
        self.refresh(force=True)

    # -- lessons ---------------------------------------------------------------------
    def load_lesson(self, name: str) -> bool:
        """Apply lesson ``name`` in one call (the old race reset, the whole set-up applied,
        its banner and tab shown); a failure is notified. Returns whether it loaded.

        (Not under ``pn.io.hold``: measured, the held events of a load reached chromium as
        a patch it did not apply, leaving the sidebar on the previous set-up.)"""
        from ermviz.app.lessons import apply_lesson, get_lesson

        lesson = get_lesson(name)
        if self.model.slots:
            self.reset()  # the old race would mislead
        problem = apply_lesson(self.model, lesson)
        if problem is not None:
            self.model.notify(problem)
            return False
        self.lesson = lesson.name
        self.lesson_banner.show(lesson)
        self.show_tab(lesson.tab)
        prebuild(self.model)  # while the lesson is read, before Start
        from ermviz.app.serving import warmup

        warmup.prioritize(self.model)  # a fresh install: its kernels are compiled next
        return True

    def _on_lesson_click(self, name: str) -> None:
        """A Load button: the race's buttons are disabled and the banner says what is
        loading; the lesson applies on the next tick of the event loop, once the page has
        been sent that (a Start pressed meanwhile waits for it, :meth:`start`)."""
        from ermviz.app.lessons import get_lesson

        if self._loading is not None:
            return  # one lesson at a time
        lesson = get_lesson(name)
        self._loading = asyncio.Event()
        self._race_buttons_busy(True)
        self.lesson_banner.loading(lesson)
        finish = functools.partial(self._finish_load, name)
        if _served():
            pn.state.curdoc.add_next_tick_callback(finish)  # runs under the document lock
            return
        try:
            asyncio.get_running_loop().call_soon(finish)
        except RuntimeError:  # no event loop (plain Python): apply now
            finish()

    def _finish_load(self, name: str) -> None:
        try:
            if not guard(self.model, f"load lesson {name}")(self.load_lesson)(name):
                self.lesson_banner.show(None)
        finally:
            loading, self._loading = self._loading, None
            if loading is not None:
                loading.set()
            self._race_buttons_busy(False)

    def show_tab(self, tab: str) -> None:
        """Show the dashboard's ``tab`` (a key of :data:`TAB_INDEX`)."""
        self.initial_tab = tab
        if self._tabs is not None:
            self._tabs.active = TAB_INDEX[tab]

    # -- following the race ----------------------------------------------------------
    def _after_pull(self) -> None:
        self.refresh()
        self.teaching_view.track(final=not self.model.active)
        if not _served():
            shown = self._shown()
            if shown:
                # In Jupyter, Bokeh models changed directly reach the page only when pushed.
                pn.io.push_notebook(*shown)

    def refresh(self, force: bool = False) -> None:
        """Update the race status, the per-run status strip, the buttons and (at most every
        TABLE_PERIOD seconds, or when a status changed) the results table."""
        m = self.model
        statuses = tuple((s.run_id, s.status, s.run is not None and s.run.waiting) for s in m.slots)
        changed = statuses != self._statuses
        self._statuses = statuses
        race = m.race_status
        starting = self._start_state
        if changed or force:
            self._chips = run_chips(m.slots, starting)
        self._show_status(race_line(race, len(m.slots), starting, time.perf_counter()), self._chips)
        summary = self._race_summary()
        self.summary_text.object = sized(
            f'<span class="race-summary"><b>{html.escape(summary)}</b></span>' if summary else "",
            m.presentation,
        )
        busy = self._loading is not None
        self.pause_button.label = "Resume" if race == "paused" else "Pause"
        self.pause_button.disabled = busy or race not in ("running", "paused")
        self.stop_button.disabled = busy or race not in ("running", "paused")
        self.reset_button.disabled = busy or race == "idle"
        self.race_view.refresh_reference_buttons()
        if changed or force:
            for slot in m.slots:
                # A run that failed while racing (solver error, NaN) is also notified once;
                # runs that could not be built were notified by the model already.
                if (
                    slot.status == "error"
                    and slot.run is not None
                    and slot.run_id not in self._told
                ):
                    self._told.add(slot.run_id)
                    m.notify(f"{slot.label}: {slot.message}")
        now = time.perf_counter()
        if changed or force or now - self._table_at >= TABLE_PERIOD:
            self._table_at = now
            self.race_view.update_table()

    # -- assembly --------------------------------------------------------------------
    def _show_status(self, line: str, chips: str) -> None:
        """The race's status line and its runs' chips, in one flow (sent when changed)."""
        text = sized(f"{line} {chips}", self.model.presentation)
        if self.status_strip.object != text:
            self.status_strip.object = text

    def _race_summary(self) -> str:
        """The race's outcome in words (:func:`ermviz.app.views.race_status.race_summary`), on
        the clock the time plot shows, with the iteration plots' work count."""
        m = self.model
        runs = []
        for s in m.slots:
            last = s.run.trace.last() if s.run is not None else None
            runs.append({"label": s.label, "status": s.status, **(last or {})})
        work = None if m.x_axis == "iteration" else (m.x_axis, m.work_label(m.x_axis))
        return race_summary(runs, float(m.tol), m.time_basis, work)

    def tabs(self) -> pn.Tabs:
        """The page's tabs (Lessons, Race, Teaching view, Export, Results).

        On a served page only the shown tab is in the page (dynamic tabs) and each view is
        built when first shown: a fresh page is what a class waits for. In a notebook every
        view is built and sent with the output, so that Start only streams data: measured in
        JupyterLab, building the Race tab's figures on Start put the first point 2.5 s after
        the click on a quiet machine, and past 5 s under load."""
        served = _served()
        # Filled when first shown (_build_tab): building the Results view cost every fresh
        # page 0.25 s of server CPU, for a tab few open.
        self._results_holder = pn.Column(sizing_mode="stretch_width", margin=0)
        self._tabs = pn.Tabs(
            ("Lessons", self._part("lessons", build=False)),
            ("Race", self._part("plots", build=False)),
            ("Teaching view", self._part("teaching", build=False)),
            ("Export", self._part("export", build=False)),
            ("Results", self._results_holder),
            dynamic=served,
            sizing_mode="stretch_width",
            active=TAB_INDEX[self.initial_tab],
        )
        self._tabs.param.watch(lambda event: self._build_tab(event.new), "active")
        for index in [self._tabs.active] if served else TAB_INDEX.values():
            self._build_tab(index)
        return self._tabs

    def _build_tab(self, index: int) -> None:
        """Build the view of tab ``index`` (once), or start what it needs: it is about to
        show."""
        views = {
            TAB_INDEX["lessons"]: self.lessons_view,
            TAB_INDEX["race"]: self.race_view,
            TAB_INDEX["teaching"]: self.teaching_view,
        }
        if index in views:
            views[index].build()
        elif index == TAB_INDEX["export"]:
            self.export_view.shown()
        elif index == TAB_INDEX["results"] and not self._results_holder.objects:
            self._results_holder.objects = [self.sweep_results]

    def panel(self) -> pn.viewable.Viewable:
        """The whole dashboard as one layout (for Jupyter; no template).

        The controls stand left of the race on a wide output and above it on a narrow one
        (JupyterLab's and Notebook 7's default widths). A dashboard shows in one output at a
        time: while it shows, this returns a one-line notice instead (see :data:`PARTS`).
        """
        refusal = self._refusal()
        if refusal is not None:
            return refusal
        if not _served():
            from ermviz.app.serving.notebook import warm_in_background

            warm_in_background()  # the first Start then finds its kernels loaded
        self._notebook_root = _Part(
            self,
            pn.FlexBox(
                pn.Column(self.controls, width=400, min_width=300),
                pn.Column(
                    self.toolbar,
                    self.lesson_banner,
                    self.tabs(),
                    sizing_mode="stretch_width",
                    min_width=560,
                ),
                flex_wrap="wrap",
                sizing_mode="stretch_width",
            ),
        )
        return self._notebook_root

    def _shown(self) -> list[pn.viewable.Viewable]:
        """The parts (and the whole) of this dashboard displayed in a notebook output."""
        parts: list[Any] = list(self._parts.values())
        parts.append(self._notebook_root)
        return [p for p in parts if isinstance(p, _Part) and compat.displayed_models(p)]

    def _refusal(self) -> pn.viewable.Viewable | None:
        """A notice to display instead of a part while the dashboard shows elsewhere (on
        this page: outputs of a page reloaded since are let go first)."""
        if not shown_here(self._shown()):
            return None
        return pn.pane.Alert(
            "This dashboard already shows in another output: a dashboard, or any part of "
            "it, displays in one output at a time (its live plots belong to one page). "
            "Use that output, or build another <code>Dashboard()</code> to show here.",
            alert_type="warning",
            sizing_mode="stretch_width",
            css_classes=["ermviz-refused"],
        )

    def template(self) -> pn.template.FastListTemplate:
        """The served page: controls in the sidebar, toolbar and tabs in the main area."""
        sidebar: Any = self.controls
        if _served():
            # The sidebar (about 200 of the page's 360 Bokeh models) follows the first
            # render: the toolbar, the lesson and the plots show first (measured, a fresh
            # page showed in 3.6-3.8 s instead of 4.7-5.7 s, benchmarks/bench_sessions.py).
            sidebar = pn.Column(sizing_mode="stretch_width", margin=0)
            pn.state.onload(lambda: setattr(sidebar, "objects", [self.controls]))
        return pn.template.FastListTemplate(
            title="ermviz · FW race lab",
            sidebar=[sidebar],
            # The loaded lesson (title, what to watch) right under the Start button and
            # above the plots: the first screen says what to do and what to look at.
            main=[
                pn.Column(
                    self.toolbar, self.lesson_banner, self.tabs(), sizing_mode="stretch_width"
                )
            ],
            sidebar_width=420,
            design=OfflineFast,  # no Google Fonts request (ermviz.app.serving.notebook)
            font=PAGE_FONT,
            accent="#1f77b4",
            main_layout=None,
        )


#: The dashboard's parts a notebook may display on their own (each is also in ``panel()``).
PARTS = ("controls", "toolbar", "plots", "results", "teaching", "export", "lessons")


class _Part(pn.Column):
    """A dashboard's part as a notebook displays it: refused with a notice (a warning box,
    not a traceback) while the same dashboard already shows in another output."""

    def __init__(self, dashboard: Dashboard, part: pn.viewable.Viewable) -> None:
        super().__init__(part, sizing_mode="stretch_width", margin=0)
        self._dashboard = dashboard

    def get_root(self, doc: Any = None, comm: Any = None, preprocess: bool = True) -> Any:
        root = super().get_root(doc, comm, preprocess)
        keep_unsent_changes(root.document or doc, comm)  # a notebook output's: no-op served
        return root

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        refusal = self._dashboard._refusal()
        if refusal is not None:
            return refusal._repr_mimebundle_(include, exclude)
        return super()._repr_mimebundle_(include, exclude)


def _served() -> bool:
    """True inside a ``panel serve`` session (False in Jupyter or plain Python)."""
    return pn.state.curdoc is not None and pn.state.curdoc.session_context is not None


def _take_lesson(model: DashboardModel, query: str) -> tuple[str, str | None, Any]:
    """Apply the lesson a query names (``lesson=NAME``) to ``model``; returns the rest of
    the query (applied on top by the caller), the one-line reason when the lesson is
    unknown or cannot load here (None when it loaded, or the query names none), and the
    lesson applied (or None)."""
    from urllib.parse import parse_qsl, urlencode

    from ermviz.app.lessons import LessonError, apply_lesson, get_lesson
    from ermviz.app.state.urlstate import MAX_LINK_FIELDS

    try:
        pairs = parse_qsl(query.lstrip("?"), keep_blank_values=True, max_num_fields=MAX_LINK_FIELDS)
    except ValueError:
        return query, None, None  # urlstate.load refuses it with the reason
    names = [value for key, value in pairs if key == "lesson"]
    if not names:
        return query, None, None
    rest = urlencode([(k, v) for k, v in pairs if k != "lesson"], safe=":,")
    try:
        lesson = get_lesson(names[0])
    except LessonError as exc:
        return rest, f"link: {exc}", None
    problem = apply_lesson(model, lesson)
    return rest, problem, lesson if problem is None else None


def build_dashboard(query: str | None = None) -> Dashboard:
    """A dashboard for the current session, configured from ``query`` (a URL query string).

    In a server session the query defaults to the page's URL, the URL follows every
    configuration change afterwards, and closing the session stops its runs.
    """
    from ermviz.app.state import urlstate

    served = _served()
    if served:
        from ermviz.app.serving import memory

        # Counted from here, whatever follows: its memory is handed back once it is closed.
        memory.session_opened()
        pn.state.on_session_destroyed(lambda _: memory.session_closed())
    location = pn.state.location if served else None
    if query is None and location is not None:
        query = location.search
    if served and not (query or "").lstrip("?"):
        from ermviz.app.lessons import FIRST_LESSON

        query = f"lesson={FIRST_LESSON}"  # the first click teaches
    # The link configures the model before the views are built from it (built first, the
    # sidebar built the default race's run cards and then the lesson's).
    model = DashboardModel()
    query, problem, lesson = _take_lesson(model, query or "")
    if problem is not None and not served:
        model.notify(problem)
    if query.lstrip("?"):
        # A toast sent before the page has rendered is lost: report a bad link on load.
        problem = urlstate.load(model, query, report=not served) or problem
    dash = Dashboard(model)
    if lesson is not None:
        dash.lesson = lesson.name
        dash.lesson_banner.show(lesson)
        dash.show_tab(lesson.tab)
        if served:  # once the page shows (shared with the other sessions: built once)
            pn.state.onload(functools.partial(prebuild, model))
    if problem is not None and served:  # (outside a server it has been reported)

        def rejected() -> None:
            dash.model.notify(problem)
            urlstate.rewrite_refused(dash.model, location)  # the URL shows what the page shows

        pn.state.onload(rejected)
    if location is not None:
        urlstate.follow(dash.model, location)
    if served:

        def destroyed(_: Any) -> None:
            dash.streamer.stop()
            dash.model.shutdown()

        pn.state.on_session_destroyed(destroyed)
    return dash
