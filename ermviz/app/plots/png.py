"""Figures as PNG: a Bokeh layout drawn by headless Chromium and screenshot.

Bokeh's own ``export_png`` needs selenium and a webdriver; Playwright drives Debian's
Chromium directly (``/usr/bin/chromium``, or the one ``$ERMVIZ_CHROMIUM`` names). The PNG
is the layout at :data:`PNG_WIDTH` CSS pixels wide, so it pastes into slides as the
figures look on screen, without their toolbars (:func:`hide_toolbars`).

One Chromium serves every export of the process (:class:`_Renderer`): it is started by the
first export (or :func:`prewarm`), keeps one tab that has loaded Bokeh's scripts once, and
draws each layout in it from its JSON (``Bokeh.embed.embed_item``); it is closed after
:data:`IDLE_SECONDS` without an export. Measured on the 2-core machine with the default
race (wdbc, FW/AFW/PFW, five figures): a fresh Chromium and page per export took 4.0-4.7 s
idle (10.8 s loaded), of which 2.5-3.5 s were starting Playwright and Chromium and
parsing Bokeh's 1.7 MB of script; a warm renderer draws the same PNG in about 1 s.

Playwright's sync API refuses to run on a thread with a running asyncio loop (a served
page's callbacks do), so the browser lives on a thread of its own and exports are handed
to it through a queue. That thread is ended at exit (:meth:`_Renderer.shutdown`): left
inside Playwright's greenlets while the interpreter tore down, it crashed a server stopped
by SIGTERM (SIGSEGV in ``greenlet``'s switch, seen in CI and reproduced 3 times in 6).
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import tempfile
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from ermviz.errors import ErmvizError

#: Width of the rendered page in CSS pixels (and of the PNG, at scale 1).
PNG_WIDTH = 1240
#: Longest wait for Bokeh to draw the page, in milliseconds.
RENDER_TIMEOUT_MS = 30_000
#: Seconds without an export after which the shared Chromium is closed.
IDLE_SECONDS = 300.0
#: Longest wait at exit for the renderer's thread to close Chromium and Playwright.
SHUTDOWN_SECONDS = 15.0
#: Exports drawn in the renderer's tab before it is reloaded (frees Bokeh's old views).
RELOAD_EVERY = 25
#: Where Chromium is looked for unless ``$ERMVIZ_CHROMIUM`` says otherwise.
DEFAULT_CHROMIUM = "/usr/bin/chromium"
_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Every Bokeh root view built and each canvas drawn once (Bokeh draws on the next frame).
_RENDERED_JS = """() => window.Bokeh && Bokeh.index && Object.keys(Bokeh.index).length > 0
  && document.querySelectorAll(".bk-Figure, .bk-GridPlot, .bk-Column").length > 0"""
# Draw one layout (Bokeh's JSON item) in the #root element, replacing the previous one, and
# resolve once its document is idle (every view drawn) and two frames have been painted.
_EMBED_JS = """async (text) => {
  const item = JSON.parse(text);
  for (const view of Object.values(Bokeh.index)) { view.remove(); }
  for (const doc of Bokeh.documents.splice(0)) { doc.clear(); }
  const root = document.getElementById("root");
  root.innerHTML = "";
  const views = await Bokeh.embed.embed_item(item, root);
  const doc = Bokeh.documents[Bokeh.documents.length - 1];
  if (doc && !doc.is_idle) { await new Promise((r) => doc.idle.connect(() => r())); }
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return views.length;
}"""
# Toolbars drawn on the page (Playwright's CSS engine pierces Bokeh's shadow roots).
_TOOLBAR_SELECTOR = ".bk-Toolbar:visible"

#: What the last PNG export drew: ``toolbars`` (toolbar elements on the page; 0 when
#: :func:`hide_toolbars` did its job), ``width`` and ``height`` (CSS pixels).
last_render: dict[str, Any] = {}


class PngError(ErmvizError):
    """The figures could not be rendered as PNG (no Chromium, no Playwright, a timeout)."""


def chromium_path() -> str:
    """The Chromium executable PNG export uses; a one-line :class:`PngError` if none."""
    path = os.environ.get("ERMVIZ_CHROMIUM") or DEFAULT_CHROMIUM
    if not Path(path).is_file():
        raise PngError(
            f"PNG export needs Chromium, and there is none at {path}; install it "
            "(apt-get install chromium) or set ERMVIZ_CHROMIUM to its path"
        )
    return path


def _playwright():
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise PngError("PNG export needs the playwright package; pip install playwright") from None
    return PlaywrightError, sync_playwright


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def hide_toolbars(layout: Any) -> Any:
    """Remove every toolbar of the Bokeh ``layout`` (its plots' and grids'), in place: a
    picture for slides has no pan/zoom icons. Returns ``layout``."""
    from bokeh.models import GridPlot, Plot

    for model in layout.select({"type": Plot}):
        model.toolbar_location = None
    for model in layout.select({"type": GridPlot}):
        model.toolbar_location = None
    return layout


class _Renderer:
    """One Chromium tab, with Bokeh's scripts loaded, on a thread of its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._closing = False
        self._exit_hook = False

    def submit(self, kind: str, payload: Any, width: int) -> Future:
        future: Future = Future()
        with self._lock:
            if self._closing:
                future.set_exception(PngError("PNG export: the server is shutting down"))
                return future
            self._jobs.put((kind, payload, int(width), future))
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="ermviz-png", daemon=True)
                self._thread.start()
                if not self._exit_hook:
                    self._exit_hook = True
                    atexit.register(self.shutdown)
        return future

    def shutdown(self, timeout: float = SHUTDOWN_SECONDS) -> None:
        """Refuse new exports, fail the queued ones, and let the thread close Chromium and
        Playwright and end (``timeout`` seconds at most; then Playwright's driver process
        is killed, which ends any call the thread is blocked in)."""
        with self._lock:
            self._closing = True
            thread = self._thread
            self._jobs.put(None)  # wakes a thread waiting for its next job
        if thread is None or thread is threading.current_thread():
            return
        thread.join(timeout)
        if thread.is_alive():
            _kill_playwright_driver()
            thread.join(5.0)

    def _next(self) -> tuple | None:
        """The next job; None (and the thread given up) after IDLE_SECONDS without one, or
        at shutdown (jobs still queued are failed)."""
        while True:
            try:
                job = self._jobs.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if self._jobs.empty():
                        self._thread = None
                        return None
                continue
            if job is not None and not self._closing:
                return job
            if job is not None:
                job[3].set_exception(PngError("PNG export: the server is shutting down"))
                continue
            with self._lock:
                self._thread = None
            return None

    def _loop(self) -> None:
        try:
            PlaywrightError, sync_playwright = _playwright()
            executable = chromium_path()
        except PngError as exc:
            self._fail_all(exc)
            return
        with tempfile.TemporaryDirectory(prefix="ermviz-png-") as folder:
            shell = Path(folder) / "shell.html"
            try:
                with sync_playwright() as p:
                    state: dict[str, Any] = {"browser": None, "tab": None, "drawn": 0}
                    try:
                        while (job := self._next()) is not None:
                            kind, payload, width, future = job
                            if future.set_running_or_notify_cancel():
                                try:
                                    future.set_result(
                                        self._draw(
                                            p, state, shell, executable, kind, payload, width
                                        )
                                    )
                                except PlaywrightError as exc:
                                    self._close(state)  # a crashed browser: a fresh one next
                                    future.set_exception(
                                        PngError(f"PNG export: Chromium failed: {_first_line(exc)}")
                                    )
                                except Exception as exc:
                                    self._close(state)
                                    future.set_exception(exc)
                    finally:
                        self._close(state)
            except Exception as exc:  # Playwright itself failed to start
                with self._lock:
                    self._thread = None
                self._fail_all(PngError(f"PNG export: Playwright failed: {_first_line(exc)}"))

    def _fail_all(self, exc: Exception) -> None:
        with self._lock:
            self._thread = None
            while not self._jobs.empty():
                future = self._jobs.get_nowait()[3]
                if future.set_running_or_notify_cancel():
                    future.set_exception(exc)

    @staticmethod
    def _close(state: dict[str, Any]) -> None:
        browser, state["browser"], state["tab"] = state["browser"], None, None
        if browser is not None:
            try:
                browser.close()
            except Exception:  # already gone
                pass

    def _draw(self, p, state, shell: Path, executable: str, kind: str, payload, width: int):
        if state["browser"] is None:
            state["browser"] = p.chromium.launch(executable_path=executable, args=_ARGS)
        browser = state["browser"]
        viewport = {"width": width, "height": 800}
        if kind == "html":  # a whole standalone page: a tab of its own
            source = shell.with_name("page.html")
            source.write_text(payload, encoding="utf-8")
            tab = browser.new_page(viewport=viewport, device_scale_factor=1)
            try:
                tab.goto(source.as_uri())
                tab.wait_for_function(_RENDERED_JS, timeout=RENDER_TIMEOUT_MS)
                tab.evaluate(
                    "() => new Promise((r) => requestAnimationFrame("
                    "() => requestAnimationFrame(r)))"
                )
                return self._shoot(tab)
            finally:
                tab.close()
        tab = state["tab"]
        if tab is None or state["drawn"] >= RELOAD_EVERY:
            if tab is not None:
                tab.close()
            if not shell.exists():
                shell.write_text(_shell_page(), encoding="utf-8")
            tab = browser.new_page(viewport=viewport, device_scale_factor=1)
            # A file, not set_content: Bokeh's inline scripts are 1.7 MB.
            tab.goto(shell.as_uri())
            tab.wait_for_function("() => window.Bokeh && Bokeh.embed", timeout=RENDER_TIMEOUT_MS)
            state["tab"], state["drawn"] = tab, 0
        else:
            tab.set_viewport_size(viewport)
        if kind == "warm":
            return b""
        state["drawn"] += 1
        tab.evaluate(_EMBED_JS, payload)
        return self._shoot(tab)

    @staticmethod
    def _shoot(tab) -> bytes:
        last_render.clear()
        last_render["toolbars"] = tab.locator(_TOOLBAR_SELECTOR).count()
        size = tab.evaluate(
            "() => [document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
        )
        last_render["width"], last_render["height"] = size
        return tab.screenshot(full_page=True, type="png")


def _kill_playwright_driver() -> None:
    """Kill this process's Playwright driver (a child process running ``playwright``'s
    node ``cli.js run-driver``): the calls blocked on it then fail at once."""
    import signal

    me = str(os.getpid())
    try:
        entries = os.listdir("/proc")
    except OSError:  # not Linux: nothing to look through
        return
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                parent = fh.read().rsplit(b")", 1)[1].split()[1].decode()
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmdline = fh.read()
        except OSError:
            continue
        if parent == me and b"playwright" in cmdline:
            try:
                os.kill(int(entry), signal.SIGKILL)
            except OSError:
                pass


def _shell_page() -> str:
    """An empty page with Bokeh's scripts inline (no network) and a #root to draw in."""
    from bokeh.resources import INLINE

    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        + INLINE.render_js()
        + "<style>body{margin:0;background:#fff;font-family:sans-serif}</style>"
        + "</head><body><div id='root'></div></body></html>"
    )


_RENDERER = _Renderer()


def _result(future: Future) -> bytes:
    try:
        return future.result(timeout=RENDER_TIMEOUT_MS / 1000 + 60)
    except TimeoutError:
        raise PngError("PNG export: Chromium did not answer in time; try again") from None


def prewarm() -> None:
    """Start the shared Chromium and load Bokeh in its tab now (in the background), so the
    first export does not wait for them. Does nothing without Chromium."""
    try:
        chromium_path()
    except PngError:
        return
    _RENDERER.submit("warm", None, PNG_WIDTH)


def layout_to_png(layout: Any, width: int = PNG_WIDTH) -> bytes:
    """Draw the Bokeh ``layout`` without toolbars at ``width`` CSS pixels; the PNG's bytes.

    The layout must hold only Bokeh's own models (no Panel objects); its toolbars are
    removed in place (:func:`hide_toolbars`).
    """
    import logging

    from bokeh.embed import json_item

    chromium_path()  # the one-line error before anything else
    hide_toolbars(layout)
    # Python callbacks on the figures (legend proxies) are meaningless here; Bokeh warns.
    logger = logging.getLogger("bokeh.embed.util")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        # One string: Playwright passes it as is (a nested dict is walked value by value).
        item = json.dumps(json_item(layout))
    finally:
        logger.setLevel(level)
    return _result(_RENDERER.submit("item", item, width))


def html_to_png(page: str | bytes, width: int = PNG_WIDTH) -> bytes:
    """Render the standalone HTML ``page`` at ``width`` CSS pixels; the PNG's bytes."""
    chromium_path()
    _playwright()
    text = page.decode("utf-8") if isinstance(page, bytes) else page
    return _result(_RENDERER.submit("html", text, width))


def write_atomically(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (:func:`ermviz.io.write_bytes_atomic`)."""
    from ermviz.io import write_bytes_atomic

    return write_bytes_atomic(data, path)


def save_png(page: str | bytes, path: str | Path, width: int = PNG_WIDTH) -> Path:
    """Render ``page`` (standalone HTML) and write it to ``path`` as PNG, atomically."""
    return write_atomically(path, html_to_png(page, width))
