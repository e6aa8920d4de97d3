"""What a lesson's text says about its race, checkably (:mod:`ermviz.app.lessons`).

Each factual sentence of a lesson's text carries one or more claims; a claim names the
words of the text it stands for (``says``) and checks them against the numbers the race
produced (:class:`Race`: each run's trace by label, its status, its final iterate and
the gradient there; :func:`race_of` reads it from a dashboard's model). ``check`` returns
None when the claim holds, else one line saying what was seen instead.

Claims are judged on solver time (``cpu_s``, the CPU time of the run's thread),
iterations or a work counter (``samples``, ``kernel_evals``, ``epoch``), never on wall
time: a race on a loaded machine (a class's server, the test suite's 4 workers on 2
cores) gives each run less of the cores, and its wall time grows, but its iterations
and its thread's CPU time per step do not change much.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

import numpy as np


@dataclasses.dataclass
class Race:
    """A finished (or running) race as claims read it.

    ``traces``: label -> a table with columns ``iteration``, ``cpu_s``, ``certificate``
    and the problem's work counters (a DataFrame, or a dict of arrays: the browser's trace
    sources); ``statuses``: label -> run status; ``iterates`` and ``gradients``: label ->
    the final iterate and the objective's gradient there (when known).
    """

    traces: dict[str, Any]
    statuses: dict[str, str] = dataclasses.field(default_factory=dict)
    iterates: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    gradients: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)

    def column(self, label: str, name: str) -> np.ndarray:
        """Column ``name`` of run ``label``'s trace (empty when the run or column is not
        there yet)."""
        trace = self.traces.get(label)
        if trace is None or name not in trace:
            return np.zeros(0)
        return np.asarray(trace[name], dtype=float)


def _fmt(value: float) -> str:
    return "nan" if not math.isfinite(value) else f"{value:.3g}"


def _first_at_or_below(race: Race, run: str, level: float, axis: str) -> float:
    """The first ``axis`` value at which ``run``'s certificate is <= ``level`` (inf: never)."""
    cert, x = race.column(run, "certificate"), race.column(run, axis)
    hit = np.flatnonzero(cert <= level)
    return float(x[hit[0]]) if hit.size and x.size else math.inf


def _best_until(race: Race, run: str, axis: str, until: float) -> float:
    """``run``'s best certificate over the rows with ``axis`` <= ``until`` (nan: none)."""
    cert, x = race.column(run, "certificate"), race.column(run, axis)
    kept = cert[(x <= until) & np.isfinite(cert)] if x.size == cert.size else cert[:0]
    return float(kept.min()) if kept.size else math.nan


@dataclasses.dataclass(frozen=True)
class Reaches:
    """``run``'s certificate gets to ``level`` or below, by ``within`` on ``axis``."""

    says: str
    run: str
    level: float
    axis: str = "iteration"
    within: float = math.inf

    def check(self, race: Race) -> str | None:
        at = _first_at_or_below(race, self.run, self.level, self.axis)
        if math.isfinite(at) and at <= self.within:
            return None
        best = _best_until(race, self.run, self.axis, self.within)
        where = "never" if not math.isfinite(at) else f"only at {self.axis} {_fmt(at)}"
        return (
            f"{self.run} reached {self.level:g} {where} (promised by {self.axis} "
            f"{_fmt(self.within)}; best by then {_fmt(best)})"
        )


@dataclasses.dataclass(frozen=True)
class Above:
    """``run``'s certificate stays above ``level`` until ``until`` on ``axis`` (its trace
    must get that far)."""

    says: str
    run: str
    level: float
    until: float
    axis: str = "iteration"

    def check(self, race: Race) -> str | None:
        x = race.column(self.run, self.axis)
        best = _best_until(race, self.run, self.axis, self.until)
        if not x.size or x[-1] < self.until:
            return f"{self.run} ended before {self.axis} {_fmt(self.until)}"
        if best > self.level:
            return None
        return (
            f"{self.run} is at {_fmt(best)} by {self.axis} {_fmt(self.until)}, promised "
            f"above {self.level:g}"
        )


@dataclasses.dataclass(frozen=True)
class Level:
    """``run``'s ``column`` (its ``which``: ``best`` = the smallest, ``last`` = the final
    row's) lies in [``low``, ``high``]."""

    says: str
    run: str
    low: float = -math.inf
    high: float = math.inf
    which: str = "last"
    column: str = "certificate"

    def value(self, race: Race) -> float:
        values = race.column(self.run, self.column)
        values = values[np.isfinite(values)]
        if not values.size:
            return math.nan
        return float(values.min() if self.which == "best" else values[-1])

    def check(self, race: Race) -> str | None:
        value = self.value(race)
        if self.low <= value <= self.high:
            return None
        return (
            f"{self.run}'s {self.which} {self.column} is {_fmt(value)}, promised in "
            f"[{_fmt(self.low)}, {_fmt(self.high)}]"
        )


@dataclasses.dataclass(frozen=True)
class Ahead:
    """At equal ``axis`` (solver time ``cpu_s``, iterations, samples, ...), ``faster``'s
    best certificate is at least ``factor`` times below ``slower``'s. Compared where
    ``faster`` first reaches ``tol`` (or its trace ends), or where ``slower``'s trace
    ends if that is earlier, and at most at ``within``."""

    says: str
    faster: str
    slower: str
    factor: float
    axis: str = "cpu_s"
    tol: float = 0.0
    within: float = math.inf

    def at(self, race: Race) -> float:
        """The ``axis`` value at which the two runs are compared (nan: not yet)."""
        fx, sx = race.column(self.faster, self.axis), race.column(self.slower, self.axis)
        if not fx.size or not sx.size:
            return math.nan
        done = _first_at_or_below(race, self.faster, self.tol, self.axis)
        return min(done, float(fx[-1]), float(sx[-1]), self.within)

    def ratio(self, race: Race) -> float:
        at = self.at(race)
        fast = _best_until(race, self.faster, self.axis, at)
        slow = _best_until(race, self.slower, self.axis, at)
        if not (math.isfinite(fast) and math.isfinite(slow)):
            return math.nan
        return slow / fast if fast > 0 else math.inf

    def check(self, race: Race) -> str | None:
        ratio = self.ratio(race)
        if ratio >= self.factor:  # False while either is nan
            return None
        at = self.at(race)
        return (
            f"at {self.axis} {_fmt(at)}, {self.faster} is at "
            f"{_fmt(_best_until(race, self.faster, self.axis, at))} and {self.slower} at "
            f"{_fmt(_best_until(race, self.slower, self.axis, at))}: {_fmt(ratio)}x, "
            f"promised {self.factor:g}x"
        )


@dataclasses.dataclass(frozen=True)
class Decades:
    """``run``'s certificate falls a decade at least every ``per`` units of ``axis``
    from ``start`` down to ``end`` (linear convergence: a sublinear rate takes ever
    longer per decade)."""

    says: str
    run: str
    start: float
    end: float
    per: float
    axis: str = "iteration"

    def costs(self, race: Race) -> list[float]:
        top, bottom = round(math.log10(self.start)), round(math.log10(self.end))
        levels = 10.0 ** np.arange(top, bottom - 1, -1)
        hits = [_first_at_or_below(race, self.run, lev, self.axis) for lev in levels]
        return [b - a for a, b in itertools.pairwise(hits)]

    def check(self, race: Race) -> str | None:
        costs = self.costs(race)
        worst = max(costs) if costs else math.inf
        if worst <= self.per:
            return None
        return (
            f"{self.run} took up to {_fmt(worst)} {self.axis} for a decade between "
            f"{self.start:g} and {self.end:g} (per decade: {[_fmt(c) for c in costs]}), "
            f"promised at most {self.per:g}"
        )


@dataclasses.dataclass(frozen=True)
class Cost:
    """``run``'s final ``axis`` value (e.g. solver time) is ``low`` to ``high`` times
    ``other``'s, or, with ``other`` None, lies in [``low``, ``high``]; with ``per`` set,
    per unit of that column (e.g. ``cpu_s`` per ``iteration``)."""

    says: str
    run: str
    other: str | None
    low: float
    high: float = math.inf
    axis: str = "cpu_s"
    per: str | None = None

    def _final(self, race: Race, run: str) -> float:
        x = race.column(run, self.axis)
        if not x.size:
            return math.nan
        if self.per is None:
            return float(x[-1])
        n = race.column(run, self.per)
        return float(x[-1] / n[-1]) if n.size and n[-1] > 0 else math.nan

    def value(self, race: Race) -> float:
        mine = self._final(race, self.run)
        if self.other is None:
            return mine
        theirs = self._final(race, self.other)
        return mine / theirs if theirs > 0 else math.nan

    def check(self, race: Race) -> str | None:
        value = self.value(race)
        if self.low <= value <= self.high:
            return None
        unit = self.axis if self.per is None else f"{self.axis} per {self.per}"
        than = f"{self.other}'s" if self.other else "a value"
        return (
            f"{self.run}'s {unit} is {_fmt(value)}x {than}, promised "
            f"[{_fmt(self.low)}, {_fmt(self.high)}]"
            if self.other
            else f"{self.run}'s {unit} is {_fmt(value)}, promised in [{_fmt(self.low)}, "
            f"{_fmt(self.high)}]"
        )


@dataclasses.dataclass(frozen=True)
class OnBoundary:
    """``run``'s final iterate lies on the sphere ``||x||_2 = radius`` (to ``rtol``) and
    the gradient there is not zero (at least ``min_gradient``): the constraint is active,
    the optimum of the convex problem is on the boundary, not inside."""

    says: str
    run: str
    radius: float
    rtol: float = 1e-6
    min_gradient: float = 1e-3

    def check(self, race: Race) -> str | None:
        x, g = race.iterates.get(self.run), race.gradients.get(self.run)
        if x is None or g is None:
            return f"{self.run}'s final iterate is not known"
        norm, grad = float(np.linalg.norm(x)), float(np.linalg.norm(g))
        if abs(norm - self.radius) <= self.rtol * self.radius and grad >= self.min_gradient:
            return None
        return (
            f"{self.run} ends at ||x|| = {norm:.8g} (radius {self.radius:g}) with "
            f"||grad|| = {_fmt(grad)}: not on the boundary with an active constraint"
        )


@dataclasses.dataclass(frozen=True)
class Status:
    """``run`` ends with status ``status`` (e.g. ``converged``)."""

    says: str
    run: str
    status: str

    def check(self, race: Race) -> str | None:
        seen = race.statuses.get(self.run)
        return None if seen == self.status else f"{self.run} ended {seen}, promised {self.status}"


@dataclasses.dataclass(frozen=True)
class Steps:
    """At least a fraction ``low`` of ``run``'s recorded steps are of type ``step`` (a
    tag of ``solvers.tags``: ``local``, ``lazy``, ``away``, ...)."""

    says: str
    run: str
    step: str
    low: float

    def fraction(self, race: Race) -> float:
        trace = race.traces.get(self.run)
        if trace is None or "step_type" not in trace:
            return math.nan
        tags = np.asarray(trace["step_type"]).astype(str)
        taken = tags[tags != "none"]
        return float(np.mean(taken == self.step)) if taken.size else math.nan

    def check(self, race: Race) -> str | None:
        fraction = self.fraction(race)
        if fraction >= self.low:
            return None
        return f"{_fmt(fraction)} of {self.run}'s steps are {self.step}, promised {self.low:g}"


@dataclasses.dataclass(frozen=True)
class Falls:
    """``run``'s certificate never rises from one recorded row to the next (beyond a
    relative ``slack``)."""

    says: str
    run: str
    slack: float = 1e-9

    def check(self, race: Race) -> str | None:
        cert = race.column(self.run, "certificate")
        cert = cert[np.isfinite(cert)]
        if cert.size < 2:
            return f"{self.run} has fewer than two rows"
        rises = np.flatnonzero(cert[1:] > cert[:-1] * (1.0 + self.slack))
        if not rises.size:
            return None
        k = int(rises[0])
        return f"{self.run}'s certificate rises from {_fmt(cert[k])} to {_fmt(cert[k + 1])}"


def race_of(model: Any) -> Race:
    """The race of ``model`` (a :class:`~ermviz.app.state.model.DashboardModel`) as the claims
    read it: each run's trace, status, final iterate and the gradient there."""
    race = Race(traces={}, statuses={}, iterates={}, gradients={})
    for slot in model.slots:
        if slot.run is None:
            continue
        race.traces[slot.label] = slot.run.frame()
        race.statuses[slot.label] = slot.run.status
        x = np.array(slot.run.solver.iterate(), dtype=float)
        race.iterates[slot.label] = x
        try:
            race.gradients[slot.label] = np.asarray(model.problem_obj.gradient(x))
        except Exception:  # a problem without a gradient (nonsmooth): no boundary claims
            pass
    return race


#: Every claim type (what a lesson's ``claims`` may hold).
Claim = Reaches | Above | Level | Ahead | Decades | Cost | OnBoundary | Status | Steps | Falls
