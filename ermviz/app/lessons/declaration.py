"""What a lesson is: :class:`Lesson` (one curated scenario, declared as data) and its
headline :class:`Promise`; the tabs a lesson may show and the clock its text states times on.

The lessons themselves are data in :mod:`ermviz.app.lessons.catalog`; finding and loading
them is :mod:`ermviz.app.lessons` (whose docstring says what a lesson declares and how its
text is checked).
"""

from __future__ import annotations

import dataclasses
import math
from urllib.parse import parse_qsl

from ermviz.app.lessons.claims import Ahead, Claim, Race, Reaches
from ermviz.errors import ErmvizError

#: The tabs a lesson may show.
TABS = ("race", "teaching")
#: The clock every lesson's text states its times on (and its time plot shows): the
#: solver threads' CPU time (``cpu_s``), never wall time.
CLOCK = "cpu_s"


class LessonError(ErmvizError):
    """An unknown lesson name."""


@dataclasses.dataclass(frozen=True)
class Promise:
    """What a lesson's race shows at a glance, checkably, at equal ``axis`` (the runs'
    solver time ``cpu_s`` unless a work counter such as ``samples`` is named): the best
    certificate of the run labelled ``faster`` is at most ``1 / factor`` times that of the
    run labelled ``slower``, compared where ``faster`` reaches the race's ``tol`` (or
    where either trace ends, whichever is first) and within ``seconds`` of ``faster``'s
    solver time. With ``slower`` None: ``faster`` reaches ``tol`` within ``seconds`` of
    its solver time. Never wall time: a loaded machine stretches that, not these."""

    faster: str
    slower: str | None
    factor: float
    seconds: float
    axis: str = "cpu_s"

    def claim(self, tol: float) -> Claim:
        """The promise as a claim of :mod:`ermviz.app.lessons.claims`."""
        says = "(the lesson's promise)"
        if self.slower is None:
            return Reaches(says, self.faster, tol, axis="cpu_s", within=self.seconds)
        within = self.seconds if self.axis == "cpu_s" else math.inf
        return Ahead(says, self.faster, self.slower, self.factor, self.axis, tol, within)

    def holds(self, race: Race, tol: float) -> bool:
        """Whether the promise holds for the race so far (:class:`Race`: the traces by
        run label)."""
        return self.claim(tol).check(race) is None


@dataclasses.dataclass(frozen=True)
class Lesson:
    """One curated scenario (see the module docstring)."""

    name: str
    title: str
    text: str
    query: str
    tab: str
    promise: Promise
    #: The x axis of the race's plots (``iteration`` or a work counter of the problem).
    x_axis: str = "iteration"
    #: What the text's factual sentences say, checkably (each names its words).
    claims: tuple[Claim, ...] = ()
    #: The text's sentences (their words) that describe methods or the set-up, not the
    #: race's outcome: no claim to check.
    background: tuple[str, ...] = ()

    @property
    def fields(self) -> dict[str, list[str]]:
        """The query's fields, each with its values (``run`` may repeat)."""
        out: dict[str, list[str]] = {}
        for key, value in parse_qsl(self.query):
            out.setdefault(key, []).append(value)
        return out

    @property
    def dataset(self) -> str:
        return self.fields["dataset"][0]

    @property
    def tol(self) -> float:
        return float(self.fields["tol"][0])
