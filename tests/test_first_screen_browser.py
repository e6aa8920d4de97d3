"""The first screen of a laptop (issue 42), in the served dashboard driven by Playwright in
Debian's chromium at 1280 x 800 and 1440 x 900.

* The Race tab: the lesson's text, Start and both race plots down to their x axis labels
  (drawn on the canvas: the axis's own box, from BokehJS's view) lie inside the
  viewport, with a race finished and its summary shown (the first lesson), and before
  Start for every race lesson (its text loaded by its link).
* The teaching views (the lessons zigzag-toy and strongly-convex-disc; the sets
  toy-simplex-3, toy-simplex-4 and toy-2d, raced so that the active-set rings are drawn):
  the drawing lies inside the viewport, no vertex label is cut by the frame or covered by
  a marker (a ring, a point) or a line, and no figure title runs past its figure or into
  its toolbar; computed from the figures' data mapped to screen pixels
  (``layout_geometry.FIGURES_JS``), since Bokeh draws them on a canvas.
* Presentation mode enlarges the lesson text and the race status (their font size, read
  from the page) as well as the figures, whose titles still fit.
* Each lesson's timing claims are read from the page (the banner's text), each beside the
  measure it states: CPU time on the time plot's axis, picked in its toggle (the picked
  clock filled, the other outlined) and in the race summary ("s CPU"); iterations, passes,
  samples or kernel evaluations on the iteration plots' axis, or "at iteration" in the
  summary when that axis counts something else.

The server fixture and page helpers are those of tests/test_app_browser.py (the browser
fixture test_layout_browser.py's); screenshots go to ``test-artifacts/first-screen-*.png``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from layout_geometry import FIGURES_JS, SLACK, figure_problems
from test_app_browser import (  # noqa: F401  (server is a fixture)
    ARTIFACTS,
    _open,
    _wait,
    server,
)
from test_layout_browser import browser  # noqa: F401  (a fixture: one chromium per module)

from ermviz.app.lessons import FIRST_LESSON, LESSONS, Lesson
from ermviz.registry import get_problem

pytestmark = pytest.mark.browser

SIZES = ((1280, 800), (1440, 900))
#: Teaching views to draw: a lesson's link, or a set in teaching mode.
TEACHING = (
    "lesson=zigzag-toy",
    "lesson=strongly-convex-disc",
    "dataset=toy-simplex-3&step_delay=0.001",
    "dataset=toy-simplex-4&step_delay=0.001",
    "dataset=toy-2d&step_delay=0.001",
)
FONT_SIZE_JS = "(e) => parseFloat(getComputedStyle(e).fontSize)"
# The time plot's toggle: each option's text, whether picked, and its background colour.
CLOCK_JS = """(group) => Array.from(group.shadowRoot.querySelectorAll("button")).map((b) =>
  ({text: b.innerText.trim(), active: b.classList.contains("bk-active"),
    background: getComputedStyle(b).backgroundColor}))"""


@pytest.fixture
def laptop(browser, request) -> Iterator:  # noqa: F811
    """A page of the size ``request.param`` (width, height), 1280 x 800 by default."""
    width, height = getattr(request, "param", SIZES[0])
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(20_000)
    try:
        yield context.new_page()
    finally:
        context.close()


def _box(page, selector: str) -> list[float]:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not on the page"
    return [box["x"], box["y"], box["width"], box["height"]]


def _in_view(box: list[float], page, what: str) -> None:
    size = page.viewport_size
    x, y, w, h = box
    assert x >= -SLACK and y >= -SLACK, f"{what} {box} starts outside the window"
    assert x + w <= size["width"] + SLACK and y + h <= size["height"] + SLACK, (
        f"{what} {[round(v) for v in box]} ends outside the {size['width']} x "
        f"{size['height']} window"
    )


def _figures(page, what: str, titled: str, matching: int = 1) -> list[dict]:
    """The page's drawn figures, once ``matching`` of them have ``titled`` in their title
    and their layout has settled."""

    def shown() -> bool:
        titles = [" ".join(f["title"].split()) for f in page.evaluate(FIGURES_JS)]
        return sum(titled in t for t in titles) >= matching

    _wait(shown, 60, what)
    page.wait_for_timeout(1000)  # figures scale to their row once shown
    return page.evaluate(FIGURES_JS)


def _race_plots(page) -> list[dict]:
    figures = _figures(page, "the two race plots", " vs ", matching=2)
    plots = [f for f in figures if " vs " in " ".join(f["title"].split())]
    assert len(plots) == 2, [f["title"] for f in figures]
    return plots


def _start_and_finish(page) -> None:
    page.locator("button", has_text="Start").first.click(timeout=120_000)
    status = page.locator(".race-status-text").first
    # A bound against a hang, not a timing.
    _wait(lambda: status.get_attribute("data-status") == "finished", 300, "the race to end")
    page.wait_for_timeout(1500)  # the last pull reaches the page


def _first_screen(page, where: str) -> None:
    """Start, the lesson's banner and both race plots down to their x axis labels lie
    inside the window; each figure's title fits it."""
    _in_view(_box(page, "button:has-text('Start')"), page, f"{where}: Start")
    _in_view(_box(page, "div.lesson-banner"), page, f"{where}: the lesson")
    for fig in _race_plots(page):
        name = " ".join(fig["title"].split())
        assert fig["xaxis"] is not None and fig["xaxis"][3] > 10, fig
        _in_view(fig["xaxis"], page, f"{where}: the x axis of {name!r}")
        _in_view(fig["canvas"], page, f"{where}: the plot {name!r}")
        assert figure_problems(fig) == [], where


@pytest.mark.parametrize("laptop", SIZES, indirect=True, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_race_tab_fits_the_first_screen_of_a_laptop(server: str, laptop) -> None:  # noqa: F811
    """The first lesson raced to its end (the summary shown under the status)."""
    page = laptop
    _open(page, server)
    _start_and_finish(page)
    assert "reached" in page.locator(".race-summary").first.inner_text()
    size = page.viewport_size
    _first_screen(page, f"{FIRST_LESSON} after Start at {size['width']} px")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"first-screen-race-{size['width']}.png"))


def test_every_race_lesson_fits_the_first_screen_before_start(server: str, laptop) -> None:  # noqa: F811
    for lesson in LESSONS:
        if lesson.tab != "race":
            continue
        _open(laptop, f"{server}?lesson={lesson.name}")
        laptop.locator(f'div.lesson-banner[data-lesson="{lesson.name}"]').first.wait_for()
        _first_screen(laptop, f"{lesson.name} at 1280 px")


@pytest.mark.parametrize("laptop", SIZES, indirect=True, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("query", TEACHING)
def test_teaching_views_show_every_label_unobstructed(server: str, laptop, query: str) -> None:  # noqa: F811
    page = laptop
    _open(page, f"{server}?{query}")
    _start_and_finish(page)
    if not query.startswith("lesson="):
        page.locator(".bk-tab", has_text="Teaching view").first.click()
    figures = _figures(page, "the teaching view's set and zoom", "zoom")
    (zoom,) = [f for f in figures if "zoom" in f["title"]]
    (drawing,) = [f for f in figures if "zoom" not in f["title"]]
    where = f"{query} at {page.viewport_size['width']} px"
    if "disc" not in query:  # (a disc has no vertices)
        assert len(drawing["labels"]) >= 3 and drawing["markers"], where
        rings = [m for m in drawing["markers"] if m["circle"][2] >= 10]
        assert rings, f"{where}: no active-set ring drawn"
    for fig in (drawing, zoom):
        _in_view(fig["canvas"], page, f"{where}: {fig['title']!r}")
    problems = figure_problems(drawing) + figure_problems(zoom, whole=False)
    assert problems == [], "\n".join(problems)
    if query == "lesson=zigzag-toy" and page.viewport_size["width"] == 1280:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "first-screen-teaching-1280.png"))


def test_presentation_enlarges_the_lesson_text_and_the_race_status(server: str, laptop) -> None:  # noqa: F811
    page = laptop
    _open(page, f"{server}?lesson=zigzag-toy")
    _start_and_finish(page)
    parts = (".lesson-watch", ".race-status-text", ".race-summary")
    before = [page.locator(p).first.evaluate(FONT_SIZE_JS) for p in parts]
    teaching = _figures(page, "the teaching view", "zoom")
    page.locator("button", has_text="Presentation").first.click()
    _wait(
        lambda: page.locator(".lesson-watch").first.evaluate(FONT_SIZE_JS) > before[0],
        20,
        "the lesson's text to grow",
    )
    after = [page.locator(p).first.evaluate(FONT_SIZE_JS) for p in parts]
    for part, old, new in zip(parts, before, after, strict=True):
        assert new >= 1.3 * old, (part, old, new)
    page.wait_for_timeout(1000)
    larger = page.evaluate(FIGURES_JS)
    assert [f["title_font"] for f in larger] != [f["title_font"] for f in teaching]
    problems = [x for f in larger for x in figure_problems(f, whole="zoom" not in f["title"])]
    assert problems == [], problems
    page.locator(".bk-tab", has_text="Race").first.click()
    plots = _race_plots(page)
    assert all("16pt" in f["title_font"] for f in plots), plots
    assert [x for f in plots for x in figure_problems(f)] == []


def _claims_by_measure(lesson: Lesson) -> dict[str, list[str]]:
    """The words of the lesson's claims by the measure each is judged on (``cpu_s``,
    ``iteration`` or a work counter)."""
    problem = get_problem(lesson.fields["problem"][0])
    # (lmo_calls: a count the race summary states per run, "30 LMO calls")
    measures = {"cpu_s", "iteration", "lmo_calls", *(c for c, _ in problem.work_axes)}
    out: dict[str, list[str]] = {}
    for claim in lesson.claims:
        for field in ("axis", "per", "column"):
            measure = getattr(claim, field, None)
            if measure in measures:
                out.setdefault(measure, []).append(claim.says)
    return out


def _axis_label(plot: dict) -> str:
    return " ".join(plot["xlabels"])


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.name)
def test_each_lesson_states_its_times_beside_their_measure(server: str, laptop, lesson) -> None:  # noqa: F811
    page = laptop
    _open(page, f"{server}?lesson={lesson.name}")
    banner = page.locator(f'div.lesson-banner[data-lesson="{lesson.name}"] .lesson-watch')
    banner.first.wait_for()
    shown = " ".join(banner.first.inner_text().split())
    assert shown == " ".join(lesson.text.split())
    if lesson.tab != "race":
        page.locator(".bk-tab", has_text="Race").first.click()
    iterations, clock = _race_plots(page)
    measures = _claims_by_measure(lesson)
    assert measures, f"{lesson.name} states no measure"
    summary = ""
    if (
        FIRST_LESSON == lesson.name
        or ("iteration" in measures and lesson.x_axis != "iteration")
        or "lmo_calls" in measures
    ):  # the summary is where iterations show when the axis counts something else
        _start_and_finish(page)
        summary = page.locator(".race-summary").first.inner_text()
    print(f"{lesson.name}: {shown}")
    for measure, said in measures.items():
        for words in said:
            assert words in shown, (lesson.name, words)
        if measure == "cpu_s":
            assert "CPU time" in _axis_label(clock), (lesson.name, clock["xlabels"])
            toggle = page.evaluate(CLOCK_JS, page.locator(".ermviz-clock").first.element_handle())
            picked = [b for b in toggle if b["active"]]
            assert [b["text"] for b in picked] == ["CPU time"], toggle
            other = next(b for b in toggle if not b["active"])
            # Filled against outlined: the picked one's background is a colour, the
            # other's white or transparent.
            assert picked[0]["background"] != other["background"], toggle
            assert other["background"] in ("rgba(0, 0, 0, 0)", "rgb(255, 255, 255)"), toggle
            if summary:
                assert re.search(r"\d s CPU|\d ms CPU|\d µs CPU", summary), summary
                assert " wall" not in summary, summary
            print(f"  {said} -> time plot x: {_axis_label(clock)!r}")
        elif measure == "lmo_calls":
            assert "LMO calls" in summary, (lesson.name, summary)
            print(f"  {said} -> summary: {summary[:80]!r}")
        elif measure == "iteration" and lesson.x_axis != "iteration":
            assert "at iteration" in summary, (lesson.name, summary)
            print(f"  {said} -> summary: {summary[:80]!r}")
        else:
            label = dict(get_problem(lesson.fields["problem"][0]).work_axes).get(measure, measure)
            assert label in _axis_label(iterations), (lesson.name, measure, iterations["xlabels"])
            print(f"  {said} -> iteration plot x: {_axis_label(iterations)!r}")
    if lesson.name == FIRST_LESSON:
        # "in under two seconds of CPU time": the summary's CPU seconds say so too.
        reached = re.findall(
            r"(PFW|AFW) exact reached \S+ at iteration \d+ \((\S+) (s|ms) CPU", summary
        )
        assert len(reached) == 2, summary
        assert all(float(v) * (1e-3 if unit == "ms" else 1.0) < 2.0 for _, v, unit in reached)
