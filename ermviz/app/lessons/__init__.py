"""Lessons: curated scenarios of the dashboard, each a declaration (data, not view code).

* :mod:`~ermviz.app.lessons.catalog` - the lessons themselves, as data;
* :mod:`~ermviz.app.lessons.declaration` - what a lesson is (:class:`Lesson`,
  :class:`Promise`);
* :mod:`~ermviz.app.lessons.claims` - what a lesson's text says about its race, checkably;
* :mod:`~ermviz.app.lessons.loading` - finding a lesson and loading it into a model;
* :mod:`~ermviz.app.lessons.view` - the Lessons tab and the loaded lesson's banner.

The lessons' data, types and logic are importable from here, as they were from the module
``ermviz/app/lessons.py`` this package replaced.
"""

from ermviz.app.lessons.catalog import FIRST_LESSON, LESSONS
from ermviz.app.lessons.declaration import CLOCK, TABS, Lesson, LessonError, Promise
from ermviz.app.lessons.loading import apply_lesson, get_lesson, lesson_names, unavailable_reason

__all__ = [
    "CLOCK",
    "FIRST_LESSON",
    "LESSONS",
    "TABS",
    "Lesson",
    "LessonError",
    "Promise",
    "apply_lesson",
    "get_lesson",
    "lesson_names",
    "unavailable_reason",
]
