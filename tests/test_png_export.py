"""Figures as PNG (issue 16): a finished race's figures rendered by Debian's chromium.

The PNG must be a real image of the page: the PNG signature, an IHDR of the page's width
and a plausible height, and more than a blank canvas (many distinct colours, the runs'
line colours among them). Writing to a path is atomic (no temporary file left beside it),
and a missing Chromium gives one line naming the fix. On a served page the Export tab's
button downloads the same PNG (Playwright's sync API runs on its own thread there, away
from the server's event loop).
"""

from __future__ import annotations

import io
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_app_browser import _open, _statuses, _wait, page, server  # noqa: F401  (fixtures)
from test_faults import served_session  # noqa: F401  (a fixture)

from ermviz.app.plots import png as png_mod
from ermviz.app.state.model import DashboardModel

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "test-artifacts"


def _size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def _finished_dashboard():
    from ermviz.app.views.page import Dashboard

    notes: list[tuple[str, str]] = []
    model = DashboardModel(notifier=lambda level, msg: notes.append((level, msg)))
    model.dataset = "toy-2d"  # a teaching set-up: race figures and the feasible set
    model.step_delay = 0.0
    dash = Dashboard(model)
    dash.start_sync()
    deadline = time.monotonic() + 30
    while not all(s.done for s in model.slots) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(s.done for s in model.slots)
    dash.streamer.pull()
    return dash, notes


def test_a_finished_race_exports_a_png_of_its_figures(tmp_path):
    from PIL import Image

    dash, notes = _finished_dashboard()
    data = dash.export_view.png_download.callback().getvalue()
    width, height = _size(data)
    assert width == png_mod.PNG_WIDTH and 700 < height < 4000
    image = Image.open(io.BytesIO(data)).convert("RGB")
    assert image.size == (width, height)
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50  # not blank: axes, text, curves
    present = {rgb for _, rgb in colours}
    for slot in dash.model.slots:  # each run's line colour is drawn
        rgb = tuple(int(slot.color[i : i + 2], 16) for i in (1, 3, 5))
        assert rgb in present, slot.color
    assert notes == []
    ARTIFACTS.mkdir(exist_ok=True)
    # Written atomically: the file appears whole and nothing else is left in its folder.
    out = png_mod.write_atomically(tmp_path / "figures.png", data)
    assert out.read_bytes() == data and [p.name for p in tmp_path.iterdir()] == ["figures.png"]
    png_mod.write_atomically(ARTIFACTS / "export-figures.png", data)


def _toolbar_layout(toolbars: bool = True):
    """Two figures in a grid (one toolbar on its right) over a third (its own toolbar)."""
    from bokeh.layouts import column, gridplot
    from bokeh.plotting import figure

    location = "above" if toolbars else None
    figs = [
        figure(title=f"plot {i}", width=300, height=200, toolbar_location=location)
        for i in range(3)
    ]
    for i, fig in enumerate(figs):
        fig.line([1, 2, 3], [1, 2 + i, 9], line_width=2)
    grid = gridplot([figs[:2]], toolbar_location="right" if toolbars else None)
    return column(grid, figs[2])


def test_the_png_export_draws_no_toolbar():
    """The exported PNG is pixel for pixel the layout drawn with ``toolbar_location=None``
    everywhere, and differs from it when the toolbars are left on."""
    from bokeh.embed import file_html
    from bokeh.resources import INLINE
    from PIL import Image, ImageChops

    def image(data: bytes):
        return Image.open(io.BytesIO(data)).convert("RGB")

    with_toolbars = png_mod.html_to_png(file_html(_toolbar_layout(), INLINE))
    assert png_mod.last_render["toolbars"] == 2  # the grid's and the lone figure's
    reference = png_mod.html_to_png(file_html(_toolbar_layout(toolbars=False), INLINE))
    assert png_mod.last_render["toolbars"] == 0
    exported = png_mod.layout_to_png(_toolbar_layout())
    assert png_mod.last_render["toolbars"] == 0
    assert _size(exported) == _size(reference) == (png_mod.PNG_WIDTH, 800)
    assert ImageChops.difference(image(exported), image(reference)).getbbox() is None
    assert ImageChops.difference(image(with_toolbars), image(reference)).getbbox() is not None
    # The shared browser draws the next export in the same tab, from scratch.
    again = png_mod.layout_to_png(_toolbar_layout())
    assert ImageChops.difference(image(again), image(reference)).getbbox() is None


def test_png_export_without_chromium_says_how_to_fix_it(monkeypatch, tmp_path):
    monkeypatch.setenv("ERMVIZ_CHROMIUM", str(tmp_path / "no-chromium"))
    with pytest.raises(png_mod.PngError) as err:
        png_mod.save_png("<html></html>", tmp_path / "x.png")
    message = str(err.value)
    assert message.splitlines() == [message]
    assert "no-chromium" in message and "ERMVIZ_CHROMIUM" in message
    assert "apt-get install chromium" in message
    assert list(tmp_path.iterdir()) == []  # no partial file


def test_png_export_before_a_race_is_notified_not_raised():
    from ermviz.app.views.page import Dashboard

    notes: list[tuple[str, str]] = []
    dash = Dashboard(DashboardModel(notifier=lambda level, msg: notes.append((level, msg))))
    assert dash.export_view.png_download.callback() is None
    assert notes == [("error", "PNG export: no figures to export yet: start a race first")]


def test_the_export_tab_downloads_the_png_on_a_served_page(server: str, page) -> None:  # noqa: F811
    _open(page, server + "?dataset=toy-2d&step_delay=0.001")
    page.locator("button", has_text="Start").first.click()
    _wait(
        lambda: (s := _statuses(page)) and all(x["status"] != "running" for x in s),
        60,
        "the race to end",
    )
    page.get_by_text("Export", exact=True).first.click()
    with page.expect_download(timeout=60_000) as info:
        page.locator("button", has_text="Figures (PNG)").first.click()
    data = Path(info.value.path()).read_bytes()
    assert info.value.suggested_filename == "ermviz-figures.png"
    width, height = _size(data)
    assert width == png_mod.PNG_WIDTH and height > 700
    assert page.locator(".notyf__message").all_inner_texts() == []


def test_a_served_page_starts_chromium_when_its_export_tab_shows_not_before(
    served_session,  # noqa: F811
    monkeypatch,
) -> None:
    # Every fresh page builds the Export view; starting Chromium then cost the first page of
    # a class its CPU, and left Playwright's thread running when the server stopped.
    from ermviz.app.lessons.view import TAB_INDEX
    from ermviz.app.views import export_view
    from ermviz.app.views.page import build_dashboard

    calls: list[int] = []
    monkeypatch.setattr(export_view, "prewarm", lambda: calls.append(1))
    dash = build_dashboard("")
    tabs = dash.tabs()
    assert calls == [], "Chromium started by building the page"
    tabs.active = TAB_INDEX["export"]
    assert calls == [1]


def _children_running(pattern: bytes) -> list[int]:
    me = str(os.getpid()).encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if stat.rsplit(b")", 1)[1].split()[1] == me and pattern in cmdline:
            found.append(int(entry))
    return found


def test_the_renderer_closes_chromium_and_playwright_at_shutdown_and_then_refuses() -> None:
    before = set(_children_running(b"playwright"))  # (the shared renderer's, if running)
    renderer = png_mod._Renderer()
    renderer.submit("warm", None, png_mod.PNG_WIDTH).result(timeout=120)
    driver = set(_children_running(b"playwright")) - before
    assert driver, "the renderer runs Playwright's driver"
    thread = renderer._thread
    renderer.shutdown()
    assert thread is not None and not thread.is_alive()
    deadline = time.monotonic() + 10
    while driver & set(_children_running(b"playwright")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not driver & set(_children_running(b"playwright")), "Playwright outlived it"
    with pytest.raises(png_mod.PngError, match="shutting down"):
        renderer.submit("warm", None, png_mod.PNG_WIDTH).result(timeout=5)


#: Exits while the renderer's thread is inside Playwright: before the fix, 5 of 6 crashed.
_EXIT_WHILE_STARTING = """
import sys, time
from ermviz.app.plots import png
job = png._RENDERER.submit("warm", None, png.PNG_WIDTH)
while not job.running():  # the thread is starting Playwright and Chromium
    time.sleep(0.01)
time.sleep(float(sys.argv[1]))
print("exiting", job.done(), flush=True)
"""


@pytest.mark.parametrize("seconds", [0.2, 0.8, 1.5])
def test_a_process_exiting_while_chromium_starts_exits_cleanly(seconds: float) -> None:
    # The at-exit hook ends the renderer's thread before the interpreter tears down; left
    # inside Playwright's greenlets it crashed the process (SIGSEGV; a server stopped by
    # SIGTERM in CI).
    env = {**os.environ, "PYTHONFAULTHANDLER": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", _EXIT_WHILE_STARTING, str(seconds)], cwd=REPO, env=env,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "exiting" in proc.stdout
