"""Lessons: curated scenarios of the dashboard, each a declaration (data, not view code).

A :class:`Lesson` is a title, two or three sentences on what to watch, the configuration
as a URL query string (the format of :mod:`ermviz.app.state.urlstate`, so loading a lesson is
loading a link and the URL then shows it), the tab to show, its headline
:class:`Promise` (the one claim the browser test watches the served race keep,
``tests/test_lessons_browser.py``) and its ``claims``: every sentence of the text that
states a fact about the race carries at least one claim of :mod:`ermviz.app.lessons.claims`
naming the sentence's words, checked against the numbers the race produces by
``tests/test_lessons.py`` (the lesson raced headless through the dashboard's model). The
sentences that describe a method or the set-up rather than the race's outcome are listed
in ``background``. Claims and promises are judged on solver time (the runs' thread CPU
time), iterations or samples, never on wall time, so they hold on a loaded machine; a
sentence stating a time names its clock ("seconds of CPU time", iterations, passes,
samples), and a loaded lesson's page shows that clock (its time plot on CPU time,
:data:`~ermviz.app.lessons.declaration.CLOCK`; the race summary's times in ``s CPU``).

The module is the lessons' logic: finding one by name (:func:`get_lesson`), whether it can
load on this server (:func:`unavailable_reason`) and loading it into a model
(:func:`apply_lesson`). The declarations are data in :mod:`ermviz.app.lessons.catalog`
(:data:`LESSONS`, :data:`FIRST_LESSON`), their types in :mod:`ermviz.app.lessons.declaration`
(:class:`Lesson`, :class:`Promise`); all of these are importable from
:mod:`ermviz.app.lessons`.

Every lesson's data ship with ermviz: a bundled generator, or a catalog file kept
compressed in the repository's ``datasets/`` folder (a1a, banana and ijcnn1-20k, a seeded
subsample of ijcnn1; sources and licences in ``datasets/README.md``), so every lesson loads
on a fresh install with no data folder and no network (``tests/test_lessons.py`` checks it).
A lesson whose dataset is a catalog file that is not on this server is listed as
unavailable (:func:`unavailable_reason`), never an error.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from ermviz.app.lessons.catalog import LESSONS
from ermviz.app.lessons.declaration import CLOCK, Lesson, LessonError


def lesson_names() -> list[str]:
    """Every lesson's name, in gallery order."""
    return [lesson.name for lesson in LESSONS]


def get_lesson(name: str) -> Lesson:
    """The lesson called ``name``.

    Raises :class:`LessonError` naming the known lessons when there is none.
    """
    for lesson in LESSONS:
        if lesson.name == name:
            return lesson
    shown = repr(name) if len(name) <= 60 else repr(name[:54] + "...")
    raise LessonError(f"unknown lesson {shown}; lessons: {', '.join(lesson_names())}")


def unavailable_reason(lesson: Lesson, available: Collection[str]) -> str | None:
    """Why ``lesson`` cannot load on this server (its dataset is not among ``available``,
    the names the dataset list offers), with the fix; None when it can."""
    if lesson.dataset in available:
        return None
    return (
        f"needs the catalog dataset {lesson.dataset}, whose file is not on this server; put "
        "it in a folder, restart the server with ERMVIZ_DATA set to that folder, then load "
        "the lesson again (python -m ermviz datasets lists the folders searched)"
    )


def apply_lesson(model: Any, lesson: Lesson) -> str | None:
    """Set ``model`` (a :class:`~ermviz.app.state.model.DashboardModel`) to ``lesson``'s
    configuration through :func:`ermviz.app.state.urlstate.load`; returns None when applied,
    else the one-line reason (the model then keeps its set-up, and nothing is notified)."""
    from ermviz.app.state import urlstate

    reason = unavailable_reason(lesson, model.param.dataset.objects)
    if reason is not None:
        return f"lesson {lesson.name!r} {reason}"
    if model.dataset == lesson.dataset:
        # Setting the dataset it already has would not apply its preset: do it here, so a
        # lesson starts from the same set-up whatever the page showed before.
        model.apply_preset(lesson.dataset)
    problem = urlstate.load(model, lesson.query, report=False)
    if problem is not None:
        return problem
    if lesson.x_axis in model.param.x_axis.objects:
        model.x_axis = lesson.x_axis
    # The time plot on the clock the lessons' texts and claims state: CPU time, which a
    # loaded machine does not stretch (wall time there was 5-8x the CPU time).
    model.time_basis = CLOCK
    return None
