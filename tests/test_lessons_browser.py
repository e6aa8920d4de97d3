"""The newcomer's path (issue 32) and the Lessons gallery, in the served dashboard driven
by Playwright in Debian's chromium, against a server on a fresh install: no data folder
(``ERMVIZ_DATA`` unset, ``ERMVIZ_CACHE`` an empty folder, ``ERMVIZ_OFFLINE=1``), so every
lesson must load from what ships in the repository (bundled generators and ``datasets/``).
One server and one browser serve the whole file.

Promises (issues 16, 31, 32):

- a page without a query opens on the first-click lesson, and after Start its faster run's
  certificate is at least 100x below the slower one's at equal solver time, which the race
  status then says in words;
- every lesson loads by its link (``?lesson=NAME``: its dataset, tab and banner; the
  address bar keeps the link or shows the lesson's set-up) and starts; every lesson loads
  by its card's Load button, one after another on one page, with Start pressed at once
  after Load (no wait): the race is the lesson's, never a mix of
  the old set-up and the new (its runs' dataset, problem, problem settings, methods, step
  rules, method settings and budgets, as the race's CSV export records them, equal the
  lesson's declaration), and it keeps the lesson's declared
  :class:`~ermviz.app.lessons.Promise`, judged on the curves the page received (the runs'
  solver time, iterations or samples, never the wall time since the click: the suite races
  them on 2 cores shared by 4 workers); an unknown lesson is notified with the known names;
- no element of the page is clipped at 1280 and 1920 px wide (every tab, after a race):
  each visible button, label, plot canvas, table cell, heading, select, input and text lies
  within the viewport's width and within every ancestor that clips or scrolls it, no text
  box with its overflow hidden holds more than it shows, and no select shows its option
  cut (unless it carries a tooltip);
- the page makes no request outside the server: every request of every page of this file
  (failed ones included) goes to 127.0.0.1 or localhost, or is a data: or blob: URL.

The first lesson's finished race is saved as ``test-artifacts/lesson_first_click.png``
(the README's ``docs/lesson_first_click.png``), the gallery as ``lessons_tab.png``.
"""

from __future__ import annotations

import io
import json
import math
import os
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pandas as pd
import pytest
from test_app_browser import (  # noqa: F401  (server is a fixture)
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    SERVER_PID,
    _open,
    _query,
    _statuses,
    _wait,
    server,
)

from ermviz.app.lessons import FIRST_LESSON, LESSONS, Lesson, get_lesson
from ermviz.app.lessons.claims import Ahead, Race
from ermviz.app.state.model import describe_dataset

pytestmark = pytest.mark.browser

# Each run's curve so far, by run id, read from the page's trace sources: iterations,
# solver time (thread CPU), the work counter on the x axis, and the certificate.
TRACES_JS = """() => {
  const out = {};
  for (const doc of Bokeh.documents) for (const m of doc.all_models) {
    if (!(m.name && m.name.startsWith("trace:"))) continue;
    const col = (k) => Array.from(m.data[k] || []);
    out[m.name.slice(6)] = {iteration: col("iteration"), cpu_s: col("cpu_s"),
                            work: col("work"), certificate: col("certificate")};
  }
  return out;
}"""

# The title of the dashboard's shown main tab.
ACTIVE_TAB_JS = """() => {
  const tabs = Array.from(Bokeh.documents[0].all_models).find(
    (m) => Array.isArray(m.tabs) && m.tabs.length && m.tabs[0].title === "Lessons");
  return tabs ? tabs.tabs[tabs.active].title : null;
}"""

# Every visible element of the page that a reader needs whole (shadow roots included),
# with what cuts it: the viewport's width, an ancestor that clips or scrolls it (its
# overflow not visible; vertically only an ancestor that hides, a vertical scroller is
# read by scrolling), text its own box hides (overflow not visible, scrollWidth beyond
# clientWidth), or a select's shown option wider than the select without a tooltip.
CLIPPED_JS = """() => {
  const SEL = "button, label, canvas, th, td, h1, h2, h3, h4, h5, select, input, textarea, "
    + "p, li, a, code, .bk-tab, .run-status, .race-status-text, .race-summary, .lesson-banner";
  const width = document.documentElement.clientWidth;
  const els = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      els.push(el);
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  const up = (el) => el.parentElement
    || (el.parentNode instanceof ShadowRoot ? el.parentNode.host : null);
  const name = (el) => {
    const cls = typeof el.className === "string" && el.className.trim()
      ? "." + el.className.trim().split(/\\s+/).slice(0, 3).join(".") : "";
    const text = (el.tagName === "SELECT" && el.selectedIndex >= 0
      ? el.options[el.selectedIndex].text : (el.innerText || el.value || el.title || ""))
      .replace(/\\s+/g, " ").trim().slice(0, 50);
    return `<${el.tagName.toLowerCase()}${cls}>` + (text ? ` "${text}"` : "");
  };
  const px = (v) => Math.round(v);
  const ctx = document.createElement("canvas").getContext("2d");
  const boxes = new Map();
  const out = [];
  for (const el of els) {
    if (!el.matches(SEL)) continue;
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility !== "visible" || Number(cs.opacity) === 0) continue;
    const why = [];
    if (r.left < -1 || r.right > width + 1) {
      why.push(`outside the ${width} px viewport (x ${px(r.left)} to ${px(r.right)})`);
    }
    let scrolledY = false;  // below a vertical scroller, outer boxes cut nothing vertically
    for (let a = up(el); a && a !== document.documentElement; a = up(a)) {
      let box = boxes.get(a);
      if (box === undefined) {
        const acs = getComputedStyle(a);
        const ar = a.getBoundingClientRect();
        const left = ar.left + a.clientLeft, top = ar.top + a.clientTop;
        box = {ox: acs.overflowX, oy: acs.overflowY, left, right: left + a.clientWidth,
               top, bottom: top + a.clientHeight, w: a.clientWidth, h: a.clientHeight};
        boxes.set(a, box);
      }
      if (box.ox === "visible" && box.oy === "visible") continue;
      if (box.w > 0 && box.ox !== "visible"
          && (r.left < box.left - 1 || r.right > box.right + 1)) {
        why.push(`cut horizontally by ${name(a).slice(0, 60)} (overflow-x ${box.ox}, x `
          + `${px(box.left)} to ${px(box.right)}; element x ${px(r.left)} to ${px(r.right)})`);
        break;
      }
      if (!scrolledY && box.h > 0 && ["hidden", "clip"].includes(box.oy)
          && (r.top < box.top - 1 || r.bottom > box.bottom + 1)) {
        why.push(`cut vertically by ${name(a).slice(0, 60)} (y ${px(box.top)} to `
          + `${px(box.bottom)}; element y ${px(r.top)} to ${px(r.bottom)})`);
        break;
      }
      if (["auto", "scroll"].includes(box.oy)) scrolledY = true;
    }
    const tag = el.tagName;
    if (!["CANVAS", "SELECT"].includes(tag) && cs.overflowX !== "visible"
        && el.scrollWidth > el.clientWidth + 1) {
      why.push(`text cut by its own box (scrollWidth ${el.scrollWidth} > clientWidth `
        + `${el.clientWidth})`);
    }
    if (tag === "SELECT" && el.selectedIndex >= 0) {
      const option = el.options[el.selectedIndex];
      ctx.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
      const need = ctx.measureText(option.text).width;
      const room = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
      if (need > room + 1 && !el.title && !option.title) {
        why.push(`option cut: needs ${px(need)} px, shows ${px(room)} px, no tooltip`);
      }
    }
    if (why.length) out.push(`${name(el)}: ${why.join("; ")}`);
  }
  return out;
}"""

_TAB_TITLES = {"race": "Race", "teaching": "Teaching view"}
#: Hosts the page may ask (the test server listens on 127.0.0.1).
_LOCAL_HOSTS = ("127.0.0.1", "localhost")


@pytest.fixture(scope="module", autouse=True)
def fresh_install(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A fresh install's environment for this file's server: no data folder, an empty
    download cache, no network. Autouse and module-scoped, it is set before the module's
    ``server`` (which copies ``os.environ``) starts, and restored after the file."""
    keys = ("ERMVIZ_DATA", "ERMVIZ_CACHE", "ERMVIZ_OFFLINE")
    saved = {key: os.environ.get(key) for key in keys}
    os.environ.pop("ERMVIZ_DATA", None)
    os.environ["ERMVIZ_CACHE"] = str(tmp_path_factory.mktemp("empty-cache"))
    os.environ["ERMVIZ_OFFLINE"] = "1"
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="module")
def fresh_server(fresh_install: None, server: str) -> str:  # noqa: F811
    """The module's server, checked to run as a fresh install (its own environment)."""
    env = dict(
        item.split("=", 1)
        for item in Path(f"/proc/{SERVER_PID[server]}/environ").read_text().split("\0")
        if "=" in item
    )
    assert "ERMVIZ_DATA" not in env and env.get("ERMVIZ_OFFLINE") == "1", env
    cache = Path(env["ERMVIZ_CACHE"])
    assert cache.is_dir() and not any(cache.iterdir()), cache
    return server


@pytest.fixture(scope="module")
def browser() -> Iterator:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser, fresh_server: str, request: pytest.FixtureRequest) -> Iterator:
    """A fresh page of the module's browser, every request of which is recorded: after
    the test, a request to any host but the server's fails it."""
    context = browser.new_context(viewport={"width": 1500, "height": 2300})
    context.set_default_timeout(20_000)
    asked: list[str] = []
    context.on("request", lambda r: asked.append(r.url))
    try:
        yield context.new_page()
    finally:
        context.close()
    foreign = sorted({u for u in asked if not _local(u)})
    assert asked, "no request recorded"
    if foreign:
        hosts = sorted({urlparse(u).hostname or u[:40] for u in foreign})
        pytest.fail(
            f"{request.node.name}: the page asked {len(foreign)} URLs outside the server "
            f"({', '.join(hosts)}), e.g. {foreign[:5]}",
            pytrace=False,
        )


def _race_on_page(pg, lesson: Lesson) -> Race:
    """The race as the page drew it, by run label (the x axis's work counter named)."""
    labels = {s["id"]: s["label"] for s in _statuses(pg)}
    traces = {}
    for run_id, cols in pg.evaluate(TRACES_JS).items():
        if run_id in labels and cols["certificate"]:
            trace = {k: [math.nan if v is None else v for v in vals] for k, vals in cols.items()}
            trace[lesson.x_axis] = (
                trace["work"] if lesson.x_axis != "iteration" else trace["iteration"]
            )
            traces[labels[run_id]] = trace
    return Race(traces)


def _keeps_its_promise(pg, lesson: Lesson) -> tuple[float, Race]:
    """Wait (Start pressed) until the promise holds on the curves the page received, or
    the race ends (then it must hold on the final rows); returns the wall seconds that
    took (reported, never asserted) and the race seen."""
    promise = lesson.promise
    t0 = time.monotonic()
    race = Race({})
    # Judged on solver time, iterations or samples: on a loaded machine the runs get less
    # of the cores and everything takes longer in wall time, but their budgets are solver
    # time, so the race ends as it would alone. The deadline only bounds a hang.
    deadline = t0 + 600.0
    while time.monotonic() < deadline:
        ended = _race_ended(pg)
        if ended:
            time.sleep(1.0)  # the last pull reaches the page
        race = _race_on_page(pg, lesson)
        if promise.holds(race, lesson.tol) or ended:
            break
        time.sleep(0.2)
    took = time.monotonic() - t0
    claim = promise.claim(lesson.tol)
    assert promise.holds(race, lesson.tol), f"{lesson.name}: {claim.check(race)}"
    return took, race


def _start(pg) -> None:
    # Start is disabled while a lesson applies: the click waits for it (bounded).
    pg.locator("button", has_text="Start").first.click(timeout=120_000)


def _race_ended(pg) -> bool:
    status = pg.locator(".race-status-text").first.get_attribute("data-status")
    return status == "finished"


def _stop(pg) -> None:
    """Stop the race if it still runs, and wait until it has stopped. A race that already
    ended has its Stop disabled: it is not clicked (a click would wait for the button);
    a race ending between the check and the click leaves the click nothing to do."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    race = pg.locator(".race-status-text").first
    button = pg.locator("button", has_text="Stop").first
    if race.get_attribute("data-status") == "running" and button.is_enabled():
        try:
            button.click(timeout=3_000)
        except PlaywrightTimeout:
            if race.get_attribute("data-status") == "running" and button.is_enabled():
                raise
    _wait(
        lambda: race.get_attribute("data-status") in ("finished", "idle"),
        60,
        "the race to stop",
    )


def _notes(pg) -> list[str]:
    return [t.strip() for t in pg.locator(".notyf__message").all_inner_texts()]


def _show_tab(pg, title: str) -> None:
    pg.locator(".bk-tab", has_text=title).first.click()
    _wait(lambda: pg.evaluate(ACTIVE_TAB_JS) == title, 30, f"the {title} tab")


def _banner(pg, lesson: Lesson) -> None:
    """The loaded lesson's banner (not its "loading" line) shows its title."""
    banner = pg.locator(f'div.lesson-banner[data-lesson="{lesson.name}"]:not(.lesson-loading)')
    banner.first.wait_for(timeout=120_000)
    assert lesson.title in banner.first.inner_text()


def _value(text: str):
    """A query value as the export writes it (numbers as floats, else the text)."""
    try:
        return float(text)
    except ValueError:
        return text


def _exported_race(pg) -> pd.DataFrame:
    """The race's traces as the Export tab's CSV gives them (each run's settings)."""
    _show_tab(pg, "Export")
    with pg.expect_download(timeout=120_000) as info:
        # A bound against a hang: under load the tab's widgets take long to show.
        pg.locator("button", has_text="Traces (CSV)").first.click(timeout=120_000)
    return pd.read_csv(io.BytesIO(Path(info.value.path()).read_bytes()))


def _mismatches(csv: pd.DataFrame, lesson: Lesson) -> list[str]:
    """Where the exported race differs from ``lesson``'s declaration: each run's dataset,
    problem, problem settings, method, step rule, method settings and budget, and the
    preprocessing (one text per difference)."""
    fields = lesson.fields
    if "race" in csv:
        csv = csv[csv["race"] == "current"]
    runs = csv.groupby("run_id", sort=False).first()
    out: list[str] = []
    declared = fields["run"]
    if len(runs) != len(declared):
        out.append(f"{len(runs)} runs exported, the lesson declares {len(declared)}")
    for (run_id, row), spec in zip(runs.iterrows(), declared, strict=False):
        method, step, *rest = spec.split(":")
        got = (row["dataset"], row["problem"], row["method"], row["step"])
        want = (lesson.dataset, fields["problem"][0], method, step)
        if got != want:
            out.append(f"{run_id}: dataset/problem/method/step {got}, declared {want}")
        psettings = json.loads(row["problem_settings"])
        for key, values in fields.items():
            if key.startswith("p.") and _value(str(psettings.get(key[2:]))) != _value(values[0]):
                out.append(f"{run_id}: {key[2:]}={psettings.get(key[2:])}, declared {values[0]}")
        msettings = json.loads(row["method_settings"])
        for pair in rest[0].split(",") if rest else []:
            key, value = pair.split("=")
            shown = str(msettings.get(key)).lower()
            if _value(shown) != _value(value.lower()):
                out.append(f"{run_id}: {key}={msettings.get(key)}, declared {value}")
        budget = {"tol": "tol", "max_time": "max_time", "max_iter": "max_iter"}
        for key, column in budget.items():
            if key in fields and float(row[column]) != float(fields[key][0]):
                out.append(f"{run_id}: {key}={row[column]}, declared {fields[key][0]}")
        if "max_samples" in fields:
            want_work = f"samples={float(fields['max_samples'][0]):g}"
            if row["max_work"] != want_work:
                out.append(f"{run_id}: max_work={row['max_work']}, declared {want_work}")
        if "standardize" in fields:
            want_std = fields["standardize"][0] == "1"
            if bool(row["standardize"]) != want_std:
                out.append(f"{run_id}: standardize={row['standardize']}, declared {want_std}")
    return out


def test_the_first_click_teaches(server: str, page) -> None:  # noqa: F811
    lesson = get_lesson(FIRST_LESSON)
    _open(page, server)
    # A fresh install: the dataset list offers no catalog set but those shipped.
    from ermviz.data import locate
    from ermviz.data.sources import catalog

    options = page.locator("select").first.locator("option").all_inner_texts()
    absent = [n for n in catalog() if locate(n) is None]
    assert absent and not [o for o in options if o.split(" ")[0] in absent], options
    assert page.evaluate(ACTIVE_TAB_JS) == _TAB_TITLES[lesson.tab]
    assert page.locator("select").first.input_value() == describe_dataset(lesson.dataset)
    _start(page)
    took, _ = _keeps_its_promise(page, lesson)
    summary = page.locator(".race-summary").first
    # Bounds against a hang, not timings: under load the same solver time takes longer.
    _wait(lambda: "PFW exact reached" in summary.inner_text(), 120, "the summary in words")
    # The race ends on its 5 s budget; the summary then says where vanilla FW stopped.
    status = page.locator(".race-status-text").first
    _wait(lambda: status.get_attribute("data-status") == "finished", 120, "the race to end")
    time.sleep(1.0)  # the last pull reaches the plots
    # Judged where PFW converged, at equal solver time: FW's best by then.
    race = _race_on_page(page, lesson)
    promise = lesson.promise
    ahead = Ahead("", promise.faster, promise.slower, 100.0, tol=lesson.tol)
    ratio, at = ahead.ratio(race), ahead.at(race)
    print(f"first click: {ratio:.0f}x at {at:.2f} s of solver time ({took:.2f} s after Start)")
    for label, trace in race.traces.items():
        print(f"  {label}: {len(trace['cpu_s'])} rows to {trace['cpu_s'][-1]:.2f} s, best "
              f"{min(trace['certificate']):.1e}")  # fmt: skip
    assert ratio >= 100, ahead.check(race)
    assert min(race.traces[promise.faster]["certificate"]) <= lesson.tol
    text = summary.inner_text()
    assert "PFW exact reached" in text and "FW exact at" in text, text
    print(f"first click summary: {text}")
    ARTIFACTS.mkdir(exist_ok=True)
    time.sleep(1.0)  # the last pull reaches the plots
    page.screenshot(
        path=str(ARTIFACTS / "lesson_first_click.png"),
        clip={"x": 0, "y": 0, "width": 1500, "height": 820},
    )


@pytest.fixture(scope="module")
def gallery(browser, fresh_server: str) -> Iterator:
    """One page for the whole gallery, as a visitor goes through it: it opens on a set-up
    that is no lesson's (blobs), then each test loads one lesson over the previous one's
    race. Its requests are checked as the ``page`` fixture's."""
    context = browser.new_context(viewport={"width": 1500, "height": 2300})
    context.set_default_timeout(20_000)
    asked: list[str] = []
    context.on("request", lambda r: asked.append(r.url))
    pg = context.new_page()
    try:
        _open(pg, fresh_server + "?dataset=blobs")
        yield pg
    finally:
        context.close()
    foreign = [u for u in asked if not _local(u)]
    if foreign:
        pytest.fail(f"the gallery's page asked outside the server: {foreign[:5]}", pytrace=False)


def _local(url: str) -> bool:
    return url.startswith(("data:", "blob:")) or urlparse(url).hostname in _LOCAL_HOSTS


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.name)
def test_a_lesson_loaded_by_its_card_races_as_declared_at_once(gallery, lesson) -> None:
    """Load, then Start at once (a click that waits only while Start is disabled): the
    lesson's tab and banner show; the race is the lesson's whole set-up, as the CSV export
    records each run's (read as soon as every run has a point, while the export is small);
    it keeps the lesson's promise; the URL shows the lesson."""
    pg = gallery
    _stop(pg)
    _show_tab(pg, "Lessons")
    cards = pg.locator(".lesson")
    _wait(lambda: cards.count() == len(LESSONS), 30, "one card per lesson")
    if lesson is LESSONS[0]:
        ARTIFACTS.mkdir(exist_ok=True)
        pg.screenshot(path=str(ARTIFACTS / "lessons_tab.png"))
    t0 = time.monotonic()
    pg.locator("button", has_text=f"Load {lesson.name}").first.click()
    _start(pg)
    pressed = time.monotonic() - t0
    _banner(pg, lesson)
    assert pg.evaluate(ACTIVE_TAB_JS) == _TAB_TITLES[lesson.tab]
    declared = lesson.fields["run"]
    # The curves are drawn in the Race tab (a teaching lesson shows its drawings first).
    if lesson.tab != "race":
        _show_tab(pg, "Race")
    _wait(
        lambda: len(_race_on_page(pg, lesson).traces) == len(declared),
        300,
        f"a plotted point from each of {lesson.name}'s {len(declared)} runs",
    )
    csv = _exported_race(pg)
    assert set(csv["run_id"]) == {s["id"] for s in _statuses(pg)}, _statuses(pg)
    assert _mismatches(csv, lesson) == [], lesson.name
    _show_tab(pg, "Race")
    took, _ = _keeps_its_promise(pg, lesson)
    print(f"{lesson.name}: Start pressed {pressed:.2f} s after Load, promise held {took:.2f} s "
          f"later")  # fmt: skip
    _stop(pg)
    query = _query(pg)
    assert query.get("dataset") == [lesson.dataset], query
    runs = [":".join(r.split(":")[:2]) for r in query.get("run", [])]
    assert runs == [":".join(r.split(":")[:2]) for r in declared], query


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.name)
def test_a_lesson_loads_by_its_link_and_starts(server: str, page, lesson) -> None:  # noqa: F811
    """``?lesson=NAME``: the lesson's dataset, tab, banner and URL; Start races its runs,
    then Stop."""
    _open(page, f"{server}?lesson={lesson.name}")
    _banner(page, lesson)
    assert page.locator("select").first.input_value() == describe_dataset(lesson.dataset)
    assert page.evaluate(ACTIVE_TAB_JS) == _TAB_TITLES[lesson.tab]
    # The address bar keeps the lesson's link, or shows the set-up it applied.
    query = _query(page)
    if query != {"lesson": [lesson.name]}:
        for key in ("dataset", "problem", "run"):
            declared = [":".join(v.split(":")[:2]) for v in lesson.fields[key]]
            assert [":".join(v.split(":")[:2]) for v in query.get(key, [])] == declared, query
    _start(page)
    race = page.locator(".race-status-text").first
    _wait(
        lambda: (
            race.get_attribute("data-status") in ("running", "finished")
            and [s["label"] for s in _statuses(page)]
            and len(_statuses(page)) == len(lesson.fields["run"])
        ),
        120,
        f"{lesson.name}'s runs to start",
    )
    _stop(page)


def test_an_unknown_lesson_is_notified_with_the_known_ones(server: str, page) -> None:  # noqa: F811
    _open(page, server + "?lesson=zig-zag")
    note = page.locator(".notyf__message", has_text="unknown lesson")
    note.first.wait_for(timeout=20_000)
    assert all(x.name in note.first.inner_text() for x in LESSONS)


def test_bpcg_and_a_lazy_run_race_pfw_and_the_summary_counts_lmo_calls(server: str, page) -> None:  # noqa: F811
    """Issue 17: BPCG against PFW and a lazified PFW, in the served dashboard."""
    lesson = get_lesson("bpcg-lazy-a1a")
    _open(page, f"{server}?lesson={lesson.name}")
    _start(page)
    race = page.locator(".race-status-text").first
    _wait(lambda: race.get_attribute("data-status") == "finished", 120, "the race to end")
    statuses = {s["label"]: s["status"] for s in _statuses(page)}
    assert statuses == dict.fromkeys(
        ["PFW exact", "BPCG exact", "PFW exact lazy=True"], "converged"
    ), statuses
    summary = page.locator(".race-summary").first
    _wait(lambda: "LMO calls" in summary.inner_text(), 10, "the LMO calls in the summary")
    text = summary.inner_text()
    # Every run's LMO calls are counted (the text says "the summary counts them"); the
    # lazy run makes fewer than steps, PFW one per step.
    lazy = text.split("PFW exact lazy=True reached")[1].split(";")[0]
    iterations = int(lazy.split("at iteration ")[1].split(" ")[0])
    calls = int(lazy.split(", ")[-1].split(" LMO")[0])
    assert calls < iterations / 2, text
    assert "BPCG exact reached" in text and text.count("LMO calls") == 3, text
    pfw = text.split("PFW exact reached")[1].split(";")[0]
    assert (
        int(pfw.split(", ")[-1].split(" LMO")[0])
        == int(pfw.split("iteration ")[1].split(" ")[0]) + 1
    ), text


#: The main tabs, and the Race tab's inner tabs, visited by the clipping check.
_TABS = ("Teaching view", "Race", "Lessons", "Export", "Results")
_MORE = ("summary", "suboptimality", "step size", "active-set size")


def test_no_element_is_clipped_at_1280_and_1920_px(server: str, page) -> None:  # noqa: F811
    """A teaching lesson raced to its end (results in the table, drawings in the teaching
    view), then every tab at 1280 x 900 and 1920 x 1080: each offender named."""
    lesson = get_lesson("zigzag-toy")
    page.set_viewport_size({"width": 1280, "height": 900})
    _open(page, f"{server}?lesson={lesson.name}")
    _banner(page, lesson)
    _start(page)
    race = page.locator(".race-status-text").first
    _wait(lambda: race.get_attribute("data-status") == "finished", 120, "the race to end")
    seen: dict[str, list[str]] = {}  # each offender, and where it was seen
    ARTIFACTS.mkdir(exist_ok=True)
    checked = 0.0
    for width, height in ((1280, 900), (1920, 1080)):
        page.set_viewport_size({"width": width, "height": height})
        for tab in _TABS:
            _show_tab(page, tab)
            for sub in _MORE if tab == "Race" else ("",):
                if sub:
                    page.locator(".bk-tab", has_text=sub).first.click()
                time.sleep(1.5)  # the tab's layout settles (Bokeh sizes its plots)
                t0 = time.monotonic()
                found = page.evaluate(CLIPPED_JS)
                checked += time.monotonic() - t0
                new = [x for x in found if x not in seen]
                for x in found:
                    seen.setdefault(x, []).append(f"{width} px {tab}{f' / {sub}' if sub else ''}")
                if new:  # a picture of where they first show
                    shot = f"clipped-{width}-{tab}-{sub}".replace(" ", "-").strip("-")
                    page.screenshot(path=str(ARTIFACTS / f"{shot}.png"))
            if tab == "Race":
                page.locator(".bk-tab", has_text="summary").first.click()
    offenders = [f"{x} [{', '.join(where)}]" for x, where in seen.items()]
    print(f"{len(offenders)} clipped elements (the checks took {checked:.1f} s)")
    for line in offenders:
        print("  " + line)
    assert offenders == [], "\n".join(offenders[:60])
