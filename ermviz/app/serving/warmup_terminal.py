"""The warm-up's account on the server's terminal (:mod:`ermviz.app.serving.warmup`).

On a terminal it is one line that rewrites itself (``ermviz: compiling kernels 37/158,
lessons 6/13 ready, ~40 s left: PFW exact on svm-dual (wdbc)``; ``loading cached
kernels`` when they come from numba's cache); in a log file (no terminal), a few whole
lines: started, compiling (a first launch), a first lesson ready, every lesson ready, done.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from typing import Any


def seconds_text(t: float) -> str:
    """``12 s`` or ``3 min``."""
    return f"{max(1, round(t))} s" if t < 90 else f"{round(t / 60)} min"


class Terminal:
    """The warm-up's account on the server's terminal: on a TTY one line rewritten in
    place (at most a few times a second); otherwise (a log file) a few whole lines."""

    def __init__(self, echo: Callable[[str], None], tty: bool) -> None:
        self.echo = echo
        self.tty = tty
        self.last = 0.0
        self.shown = ""
        self.first_ready = False
        self.all_ready = False
        self.total = 0

    def started(self, total: int) -> None:
        self.total = total
        self.line(
            f"warming {total} kernels in the background, the first lesson's first; the page "
            "answers meanwhile"
        )

    def compiling(self) -> None:
        if not self.tty:
            self.line("compiling (first launch after an install: numba's cache is empty)")

    def line(self, text: str) -> None:
        """A line that stays (ends the rewritten one on a terminal)."""
        if self.tty and self.shown:
            sys.stdout.write("\r\x1b[2K")
            self.shown = ""
        self.echo(text)

    def update(self, p: Any) -> None:
        """The state now: the rewritten line, and the milestones as lines."""
        if p.total and not self.first_ready and p.lessons_ready > 0:
            self.first_ready = True
            self.line(f"a first lesson is ready ({p.seconds:.0f} s): its race starts at once")
        if p.lessons_total and not self.all_ready and p.lessons_ready == p.lessons_total:
            self.all_ready = True
            self.line(f"every lesson is ready ({p.lessons_total} lessons, {p.seconds:.0f} s)")
        now = time.perf_counter()
        if not self.tty or not p.total or now - self.last < 0.25:
            return
        self.last = now
        verb = "loading cached kernels" if p.action == "loading" else "compiling kernels"
        text = f"ermviz: {verb} {p.done}/{p.total}, lessons {p.lessons_ready}/{p.lessons_total}"
        text += " ready" + (f", ~{seconds_text(p.eta)} left" if p.eta is not None else "")
        if p.current:
            text += f": {p.current}"
        width = _columns()
        text = text if len(text) < width else text[: width - 2] + "…"
        if text != self.shown:
            sys.stdout.write("\r\x1b[2K" + text)
            sys.stdout.flush()
            self.shown = text


def _columns() -> int:
    return shutil.get_terminal_size((100, 24)).columns
