"""The dashboard's lessons: the Lessons tab (one card per lesson of
:mod:`ermviz.app.lessons`) and the banner that shows the loaded lesson beside the plots.

Each card shows the lesson's title and what to watch, and a Load button that hands the
lesson's name to the page (:meth:`~ermviz.app.views.page.Dashboard.load_lesson`, which applies
its configuration through :mod:`ermviz.app.state.urlstate`, so the URL then shows it, and
switches to the lesson's tab). A lesson whose dataset is not on this server shows why and
the fix instead of a button. :class:`LessonsView` builds its cards when first shown;
:class:`LessonBanner` is on the first screen: the loaded lesson's title and what to
watch, above the race's tabs and right under the Start button.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Callable
from typing import Any

import panel as pn

from ermviz.app.lessons import LESSONS, Lesson, unavailable_reason
from ermviz.app.serving.notebook import LiveHTML
from ermviz.app.state.model import DashboardModel
from ermviz.app.views.race_status import PRESENTATION_EM
from ermviz.app.views.widgets import guard

#: Index of each lesson tab in the dashboard's tabs (the Lessons tab itself is 0).
TAB_INDEX = {"lessons": 0, "race": 1, "teaching": 2, "export": 3, "results": 4}


class LessonsView(pn.viewable.Viewer):
    """The gallery of lessons; ``load(name)`` applies one (the page's loader)."""

    def __init__(self, model: DashboardModel, load: Callable[[str], Any], **params: Any) -> None:
        super().__init__(**params)
        self.model = model
        self._load = load
        self.built = False
        self.layout = pn.Column(sizing_mode="stretch_width")

    def __panel__(self) -> pn.viewable.Viewable:
        return self.layout

    def build(self) -> None:
        """Build the cards (once): the tab is about to show."""
        if self.built:
            return
        self.built = True
        available = self.model.param.dataset.objects
        cards = [
            self._lesson_card(lesson, unavailable_reason(lesson, available)) for lesson in LESSONS
        ]
        intro = pn.pane.Markdown(
            "Each lesson sets up a race that makes one point; **Load** it, then press "
            "**Start** and watch. A lesson is a link too: `/app?lesson=NAME`.",
            sizing_mode="stretch_width",
        )
        self.layout.objects = [intro, pn.FlexBox(*cards, sizing_mode="stretch_width")]

    def _lesson_card(self, lesson: Lesson, reason: str | None) -> pn.viewable.Viewable:
        body = pn.pane.HTML(
            f'<div class="lesson" data-lesson="{html.escape(lesson.name)}" '
            f'data-available="{int(reason is None)}">'
            f"<h3 style='margin:0 0 6px 0'>{html.escape(lesson.title)}</h3>"
            f"<p style='margin:0'>{html.escape(lesson.text)}</p>"
            f"<p style='margin:6px 0 0 0;color:#666'><code>{html.escape(lesson.name)}</code> · "
            f"{'teaching view' if lesson.tab == 'teaching' else 'race'}</p></div>",
            sizing_mode="stretch_width",
        )
        if reason is None:
            button = pn.widgets.Button(label=f"Load {lesson.name}", color="primary", width=220)
            button.on_click(
                guard(self.model, f"load lesson {lesson.name}")(
                    functools.partial(self._on_load_click, lesson.name)
                )
            )
            foot: pn.viewable.Viewable = button
        else:
            foot = pn.pane.HTML(
                f'<span class="lesson-unavailable" style="color:#a94442">Unavailable: '
                f"{html.escape(reason)}</span>",
                sizing_mode="stretch_width",
            )
        return pn.Card(
            body,
            foot,
            hide_header=True,
            width=420,
            margin=(6, 10),
            styles={"background": "#fafafa"},
        )

    def _on_load_click(self, name: str, event: Any = None) -> Any:
        return self._load(name)


class LessonBanner(pn.viewable.Viewer):
    """The loaded lesson on the first screen: its title, what to watch, and the cue to
    press Start; it says so when the set-up has been changed since the lesson loaded.
    Hidden while no lesson is loaded."""

    def __init__(self, model: DashboardModel, **params: Any) -> None:
        super().__init__(**params)
        self.model = model
        self.lesson: Lesson | None = None
        self._setup: dict[str, str] = {}
        self._changed = False
        self.text = LiveHTML("", sizing_mode="stretch_width", margin=(4, 10))
        self.layout = pn.Column(
            self.text, sizing_mode="stretch_width", visible=False, css_classes=["lesson-banner"]
        )
        model.param.watch(lambda *_: self._follow(), ["revision"])
        model.param.watch(lambda *_: self._render(), ["presentation"])

    def __panel__(self) -> pn.viewable.Viewable:
        return self.layout

    def show(self, lesson: Lesson | None) -> None:
        """Show ``lesson`` (just applied to the model), or nothing (None)."""
        self.lesson = lesson
        self._setup = self.model.current_setup() if lesson is not None else {}
        self._changed = False
        self._render()

    def loading(self, lesson: Lesson) -> None:
        """Say that ``lesson`` is loading (until :meth:`show`)."""
        self.layout.visible = True
        em = PRESENTATION_EM if self.model.presentation else 1.0
        self.text.object = (
            f'<div class="lesson-banner lesson-loading" data-lesson="{html.escape(lesson.name)}"'
            ' style="border-left:6px solid #ff7f0e;background:#fff7ef;padding:4px 12px;'
            f'font-size:{em}em"><b>Loading lesson: '
            f"{html.escape(lesson.title)}</b> (data, problem and runs); Start waits for it."
            "</div>"
        )

    def _follow(self) -> None:
        if self.lesson is None:
            return
        changed = self.model.current_setup() != self._setup
        if changed != self._changed:
            self._changed = changed
            self._render()

    def _render(self) -> None:
        lesson = self.lesson
        self.layout.visible = lesson is not None
        if lesson is None:
            self.text.object = ""
            return
        cue = (
            "you changed the set-up since this lesson loaded: load it again from the "
            "Lessons tab to see what it promises."
            if self._changed
            else "press <b>Start</b> and watch."
        )
        # Read from the back of a room in Presentation mode, as the figures' text is.
        em = PRESENTATION_EM if self.model.presentation else 1.0
        # The cue on the title's line: the lesson's text and the plots under it fit the
        # first screen of a 1280 x 800 laptop.
        self.text.object = (
            f'<div class="lesson-banner" data-lesson="{html.escape(lesson.name)}" '
            f'data-changed="{int(self._changed)}" style="border-left:6px solid #1f77b4;'
            f'background:#f3f7fb;padding:4px 12px;font-size:{em}em;line-height:1.35">'
            f'<b class="lesson-title">Lesson: {html.escape(lesson.title)}</b> '
            f'<span class="lesson-cue" style="color:#555">— {cue}</span>'
            f'<div class="lesson-watch">{html.escape(lesson.text)}</div></div>'
        )
