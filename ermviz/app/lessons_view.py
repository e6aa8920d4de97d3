"""The dashboard's Lessons tab: one card per lesson of :mod:`ermviz.app.lessons`.

Each card shows the lesson's title and what to watch, and a Load button that applies
its configuration (through :mod:`ermviz.app.urlstate`, so the URL then shows it) and
switches to the lesson's tab. A lesson whose dataset is not on this server shows why and
the fix instead of a button. :class:`LessonsView` is a part of
:class:`~ermviz.app.page.Dashboard`, like the other views.
"""

from __future__ import annotations

import functools
import html
from typing import Any

import panel as pn

from ermviz.app.lessons import LESSONS, Lesson, apply_lesson, unavailable_reason
from ermviz.app.model import DashboardModel
from ermviz.app.widgets import guard

#: Index of each lesson tab in the dashboard's tabs (the Lessons tab itself is 0).
TAB_INDEX = {"lessons": 0, "race": 1, "teaching": 2}


class LessonsView:
    """The gallery of lessons (a part of the dashboard)."""

    model: DashboardModel

    def _build_lessons(self) -> None:
        self._tabs: pn.Tabs | None = None
        self.initial_tab = "lessons"
        available = self.model.param.dataset.objects
        cards = [
            self._lesson_card(lesson, unavailable_reason(lesson, available)) for lesson in LESSONS
        ]
        intro = pn.pane.Markdown(
            "Each lesson sets up a race that makes one point; **Load** it, then press "
            "**Start** and watch. A lesson is a link too: `/app?lesson=NAME`.",
            sizing_mode="stretch_width",
        )
        self.lessons = pn.Column(
            intro, pn.FlexBox(*cards, sizing_mode="stretch_width"), sizing_mode="stretch_width"
        )

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

    def _on_load_click(self, name: str, event: Any = None) -> None:
        self.load_lesson(name)

    def load_lesson(self, name: str) -> bool:
        """Apply lesson ``name`` and show its tab; a failure is notified. Returns whether
        it loaded."""
        from ermviz.app.lessons import get_lesson

        lesson = get_lesson(name)
        if self.model.slots:
            self.reset()  # type: ignore[attr-defined]  # the old race would mislead
        problem = apply_lesson(self.model, lesson)
        if problem is not None:
            self.model.notify(problem)
            return False
        self.show_tab(lesson.tab)
        return True

    def show_tab(self, tab: str) -> None:
        """Show the dashboard's ``tab`` (``lessons``, ``race`` or ``teaching``)."""
        self.initial_tab = tab
        if self._tabs is not None:
            self._tabs.active = TAB_INDEX[tab]
