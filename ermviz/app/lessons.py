"""Lessons: curated scenarios of the dashboard, each a declaration (data, not view code).

A :class:`Lesson` is a title, two or three sentences on what to watch, the configuration
as a URL query string (the format of :mod:`ermviz.app.urlstate`, so loading a lesson is
loading a link and the URL then shows it), the tab to show, and a machine-checkable
:class:`Promise` the browser test holds it to (``tests/test_lessons_browser.py``).

The figure in the comment above each declaration was measured on the 2-core development
machine with the CLI (``python -m ermviz run`` with the same settings, one run at a time).
A lesson whose dataset is a catalog file that is not on this server is listed as
unavailable (:func:`unavailable_reason`), never an error.

:func:`race_summary` puts a race's outcome in words for the toolbar ("PFW exact reached
9.9e-09 at iteration 275771 (0.32 s); FW exact at 3.9e-06 after 5 s, max_time").
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Sequence
from typing import Any
from urllib.parse import parse_qsl

from ermviz.errors import ErmvizError

#: The tabs a lesson may show.
TABS = ("race", "teaching")


class LessonError(ErmvizError):
    """An unknown lesson name."""


@dataclasses.dataclass(frozen=True)
class Promise:
    """What a lesson's race shows, checkably: within ``seconds`` of Start (wall time),
    the certificate of the run labelled ``faster`` is at most ``1 / factor`` times that of
    the run labelled ``slower``. With ``slower`` None: ``faster``'s certificate is at
    most the race's ``tol`` (it converged) within ``seconds``."""

    faster: str
    slower: str | None
    factor: float
    seconds: float

    def holds(self, certificates: dict[str, float], tol: float) -> bool:
        """Whether the promise holds for the runs' best certificates so far (by label)."""
        fast = certificates.get(self.faster, math.nan)
        if self.slower is None:
            return fast <= tol
        slow = certificates.get(self.slower, math.nan)
        return fast * self.factor <= slow  # False while either is still NaN


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


_FW3 = "run=fw:exact&run=afw:exact&run=pfw:exact"

LESSONS: tuple[Lesson, ...] = (
    # Measured (CLI, each run alone): PFW exact converges to 1e-8 at iteration 275 771 in
    # 0.32 s; FW exact is at 3.9e-6 after 5 s (2e-5 after 1 s): ~400x apart at the end.
    # In the browser (tests/test_lessons_browser.py), three runs racing on 2 cores: PFW's
    # gap 470x below FW's 1.8 s after the click (137x after 4.2 s on a machine loaded 5x).
    Lesson(
        name="pairwise-wdbc",
        title="Pairwise FW converges, vanilla FW crawls",
        text=(
            "The SVM dual on the bundled WDBC set: away-step and pairwise FW can take mass "
            "off bad vertices, so they converge linearly and reach the 1e-8 gap in well under "
            "a second. Vanilla FW can only add vertices: watch its gap flatten out around "
            "1e-5 while the others are done."
        ),
        query=("dataset=wdbc&problem=svm-dual&p.C=100&standardize=1&tol=1e-8&max_time=5&" + _FW3),
        tab="race",
        promise=Promise(faster="PFW exact", slower="FW exact", factor=100.0, seconds=5.0),
    ),
    # Measured (CLI): on toy-2d (radius 3), PFW converges in 4 iterations and AFW in 6
    # (gap <= 1e-17); FW stops at the 400-iteration cap with a gap of 3.1e-4.
    Lesson(
        name="zigzag-toy",
        title="FW's zig-zag on a drawing",
        text=(
            "Two features, an l1 ball you can see: the optimum lies inside an edge, so "
            "vanilla FW zig-zags between the two end vertices and slows to a crawl. Away and "
            "pairwise steps move along the edge and land on the optimum in a handful of steps."
        ),
        query="dataset=toy-2d&problem=logreg-l1&p.radius=3&tol=1e-6&max_iter=400&" + _FW3,
        tab="teaching",
        promise=Promise(faster="PFW exact", slower="FW exact", factor=100.0, seconds=20.0),
    ),
    # Measured (CLI): a1a, l1 ball of radius 10, tol 1e-8: PFW converges at iteration 404
    # in 0.016 s; FW is at 4.9e-5 after 5 s (104 738 iterations).
    Lesson(
        name="pairwise-a1a",
        title="Linear convergence on real data: a1a logistic regression",
        text=(
            "The l1-constrained logistic regression on a1a (a catalog file). Pairwise FW "
            "reaches a gap of 1e-8 in a few hundred iterations and milliseconds; vanilla FW "
            "needs about 1e5 iterations just for 1e-4. Switch the x axis to time to see "
            "that both cost the same per step."
        ),
        query=(
            "dataset=a1a&problem=logreg-l1&p.radius=10&standardize=0&tol=1e-8&max_time=5"
            "&run=fw:exact&run=pfw:exact"
        ),
        tab="race",
        promise=Promise(faster="PFW exact", slower="FW exact", factor=100.0, seconds=8.0),
    ),
    # Measured (CLI, wdbc standardized, C = 100, tol 1e-8): PFW exact converges in 0.55 s;
    # after 5 s PFW with the open-loop 2/(k+2) is at 1.8e-4 and with the short step (a global
    # L bound) at 7.6e-4.
    Lesson(
        name="step-rules",
        title="Open-loop steps vs line search",
        text=(
            "One method, pairwise FW, three step rules. The open-loop rule 2/(k+2) ignores "
            "the objective and the short step trusts a worst-case curvature bound, so both "
            "crawl at sublinear speed; the exact line search takes the best step along each "
            "direction and converges in under a second."
        ),
        query=(
            "dataset=wdbc&problem=svm-dual&p.C=100&standardize=1&tol=1e-8&max_time=5"
            "&run=pfw:diminishing&run=pfw:short&run=pfw:exact"
        ),
        tab="race",
        promise=Promise(faster="PFW exact", slower="PFW diminishing", factor=100.0, seconds=5.0),
    ),
    # Measured (CLI, ijcnn1, l1 ball of radius 10): TUFW (taylor-adaptive) is at 1.8e-5 after
    # 1 s and 5.8e-6 after 2 s, FW with the adaptive step (FW-ada) at 4e-4 and 2.2e-4: ~20-40x.
    Lesson(
        name="tufw-ijcnn1",
        title="TUFW vs FW-ada on ijcnn1",
        text=(
            "Logistic regression on ijcnn1 (50 000 rows, a catalog file). TUFW replaces the "
            "gradient by a Taylor model refreshed on a shrinking batch of rows, so a step "
            "costs far less than FW-ada's full pass; its gap falls ten times lower in the "
            "same time."
        ),
        query=(
            "dataset=ijcnn1&problem=logreg-l1&p.radius=10&standardize=0&tol=1e-6&max_time=10"
            "&run=tufw:taylor-adaptive&run=fw:adaptive"
        ),
        tab="race",
        promise=Promise(
            faster="TUFW taylor-adaptive", slower="FW adaptive", factor=10.0, seconds=15.0
        ),
    ),
    # Measured (CLI, wdbc standardized, fairsvm preset, tol 1e-6): ReHLine converges in 6
    # epochs (0.3 ms), the interior-point method in 8 Newton steps (1.5 ms).
    Lesson(
        name="rehline-fairness",
        title="ReHLine: primal and dual meet, fairness constraint included",
        text=(
            "An SVM whose scores may not correlate with a sensitive feature beyond 0.01. "
            "The certificate is the duality gap, primal minus dual objective of a feasible "
            "point: watch ReHLine's coordinate descent close it linearly to 1e-10, beside the "
            "interior-point method's few Newton steps."
        ),
        query=(
            "dataset=wdbc&problem=plq&p.preset=fairsvm&standardize=1&tol=1e-10&max_time=5"
            "&run=rehline:cd&run=ipm:newton"
        ),
        tab="race",
        promise=Promise(faster="REHLINE cd", slower=None, factor=1.0, seconds=5.0),
    ),
    # Measured (CLI, banana, C = 1e4, tol 1e-6): reduced CG converges at iteration 284 in
    # 10.3 s; at 5 s its relative gap is 0.077 against SMO's 28 (~360x); SMO is still at 4.8
    # after 20 s.
    Lesson(
        name="lssvm-banana",
        title="LS-SVM: SMO vs conjugate gradients on banana",
        text=(
            "A kernel least-squares SVM with a large C = 1e4, which makes the system badly "
            "conditioned. SMO's two-coordinate steps crawl, while conjugate gradients on the "
            "reduced system converge; the x axis counts kernel evaluations, the cost that "
            "matters when the kernel matrix does not fit in memory."
        ),
        query=(
            "dataset=banana&problem=lssvm&p.C=10000&standardize=0&tol=1e-6&max_time=15"
            "&run=smo:smo&run=cg-reduced:cg"
        ),
        tab="race",
        promise=Promise(faster="CG-REDUCED cg", slower="SMO smo", factor=100.0, seconds=15.0),
        x_axis="kernel_evals",
    ),
    # Measured (CLI, wdbc standardized, l1 ball of radius 10, tanh loss): the running average
    # of the FW gap is 3.4e-3 after 1 s and 1.0e-3 after 5 s with the adaptive step, against
    # 3.3e-2 and 9.8e-3 with the open-loop 1/sqrt(k+1): ~10x apart.
    Lesson(
        name="nonconvex-avg-gap",
        title="A non-convex loss: the running-average FW gap",
        text=(
            "A bounded, non-convex loss (1 - tanh) over an l1 ball: FW only finds stationary "
            "points, and the FW gap at the iterate jumps around. The certificate here is its "
            "running average, which falls steadily; the adaptive step (a backtracking "
            "estimate of the curvature) brings it ten times lower than the open-loop rule."
        ),
        query=(
            "dataset=wdbc&problem=nonconvex-l1&p.radius=10&p.metric=avg-fw-gap&standardize=1"
            "&tol=1e-8&max_time=8&run=fw-nc:nonconvex&run=fw-nc:adaptive"
        ),
        tab="race",
        promise=Promise(
            faster="FW-NC adaptive", slower="FW-NC nonconvex", factor=5.0, seconds=15.0
        ),
    ),
    # Measured (CLI, m = 50, 1e6 samples): FO-MAML's meta-test loss stalls at 2.29 from
    # 5e5 samples on (its bias floor; 3.15 at the end), BSGD's falls to 0.76 (~3x lower);
    # BSGD's steps cost 9.5 s of solver time, FO-MAML's 1.7 s.
    Lesson(
        name="maml-bias",
        title="Meta-learning: BSGD vs first-order MAML's bias",
        text=(
            "MAML on sine-wave tasks with 50 inner samples per task. First-order MAML drops "
            "the Hessian term of the meta-gradient, so its steps are cheap but biased: its "
            "meta-test loss stalls near 2.3. BSGD keeps the term and keeps falling; plot "
            "against samples to compare equal budgets."
        ),
        query=(
            "dataset=sine-tasks&problem=maml-sine&tol=1e-8&max_time=60&max_samples=1000000"
            "&run=bsgd:fixed:inner_batch=50&run=fo-maml:fixed:inner_batch=50"
        ),
        tab="race",
        promise=Promise(
            faster="BSGD fixed inner_batch=50",
            slower="FO-MAML fixed inner_batch=50",
            factor=2.0,
            seconds=40.0,
        ),
        x_axis="samples",
    ),
    # Measured (CLI, toy-2d, radius 3, each run alone): on the l2 disc vanilla FW exact
    # reaches a gap of 9e-11 at iteration 32 and boosted FW at iteration 10, where on the
    # l1 diamond (the zigzag-toy lesson) FW is still at 3.1e-4 after 400 iterations.
    Lesson(
        name="strongly-convex-disc",
        title="A round set: vanilla FW converges linearly",
        text=(
            "The zig-zag toy again, over the l2 disc instead of the l1 diamond. The disc is "
            "strongly convex and the optimum sits on its boundary, so each FW vertex points "
            "almost at the optimum and vanilla FW converges linearly in a few dozen steps, "
            "where on the diamond it crawled."
        ),
        query=(
            "dataset=toy-2d&problem=logreg-l1&p.radius=3&p.constraint=l2&tol=1e-10&max_iter=400"
            "&run=fw:exact&run=boosted:exact"
        ),
        tab="teaching",
        promise=Promise(faster="FW exact", slower=None, factor=1.0, seconds=20.0),
    ),
    # Measured (CLI, a1a, l1 ball of radius 10, tol 1e-8, each run alone): PFW converges at
    # iteration 404 (0.06 s) with one LMO call per iteration; BPCG at 429 (0.07 s), 409 of its
    # steps local ones; lazified PFW at 480 (0.06 s) with 32 LMO calls in all.
    Lesson(
        name="bpcg-lazy-a1a",
        title="BPCG and lazy PFW: fewer calls to the LMO",
        text=(
            "Pairwise FW asks the linear minimization oracle for a new vertex at every step. "
            "BPCG moves weight between the vertices it already holds as long as that gains as "
            "much as a FW step, and lazified PFW calls the oracle only when no held vertex is "
            "good enough: the summary counts each run's LMO calls."
        ),
        query=(
            "dataset=a1a&problem=logreg-l1&p.radius=10&standardize=0&tol=1e-8&max_time=5"
            "&run=pfw:exact&run=bpcg:exact&run=pfw:exact:lazy=true"
        ),
        tab="race",
        promise=Promise(faster="PFW exact lazy=True", slower=None, factor=1.0, seconds=15.0),
    ),
)

#: The lesson a page without a query opens on (bundled data, so it works offline).
FIRST_LESSON = "pairwise-wdbc"


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
        "it in a folder named by ERMVIZ_DATA (python -m ermviz datasets lists where files "
        "are looked for) and reload"
    )


def apply_lesson(model: Any, lesson: Lesson) -> str | None:
    """Set ``model`` (a :class:`~ermviz.app.model.DashboardModel`) to ``lesson``'s
    configuration through :func:`ermviz.app.urlstate.load`; returns None when applied,
    else the one-line reason (the model then keeps its set-up, and nothing is notified)."""
    from ermviz.app import urlstate

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
    return None


def _fmt(value: float) -> str:
    return "nan" if not math.isfinite(value) else f"{value:.1e}"


def _lmo_calls(row: dict[str, Any]) -> str:
    calls = row.get("lmo_calls")
    if calls is None or not math.isfinite(calls):
        return ""
    return f", {int(calls)} LMO calls"


def race_summary(runs: Sequence[dict[str, Any]], tol: float) -> str:
    """The race's outcome in words, from each run's last trace row.

    ``runs``: one dict per run with ``label``, ``status`` and, once it has a row,
    ``iteration``, ``time_s`` and ``certificate``. Empty until a run has converged or
    every run has ended; then the converged runs first ("PFW exact reached 9.9e-09 at
    iteration 412 (0.32 s)"; with the LMO calls when the trace counts them, which lazified
    methods make fewer of than iterations), then where the others stand ("FW exact at
    3e-04 after 2.1 s"), joined by semicolons.
    """
    rows = [r for r in runs if "certificate" in r]
    converged = [r for r in rows if r["status"] == "converged"]
    ended = all(r["status"] not in ("running", "paused", "ready") for r in runs)
    if not rows or not (converged or ended):
        return ""
    parts = [
        f"{r['label']} reached {_fmt(r['certificate'])} at iteration {int(r['iteration'])} "
        f"({r['time_s']:.2g} s{_lmo_calls(r)})"
        for r in sorted(converged, key=lambda r: r["time_s"])
    ]
    for r in rows:
        if r["status"] == "converged":
            continue
        state = "" if r["status"] in ("running", "paused") else f", {r['status']}"
        parts.append(f"{r['label']} at {_fmt(r['certificate'])} after {r['time_s']:.2g} s{state}")
    if not converged:
        parts.insert(0, f"no run reached tol {tol:.0e}")
    return "; ".join(parts)
