"""Figures as PNG: a standalone Bokeh page rendered in headless Chromium and screenshot.

Bokeh's own ``export_png`` needs selenium and a webdriver; Playwright drives Debian's
Chromium directly (``/usr/bin/chromium``, or the one ``$ERMVIZ_CHROMIUM`` names). The
page is the same standalone HTML the Export tab saves (Bokeh inline, no network); the
PNG is the whole page at :data:`PNG_WIDTH` CSS pixels wide, so it pastes into slides as
the figures look on screen.

Playwright's sync API refuses to run on a thread with a running asyncio loop (a served
page's callbacks do), so the browser runs on a thread of its own; a PNG takes about two
seconds (Chromium's start-up and Bokeh's first render).
"""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path

from ermviz.errors import ErmvizError

#: Width of the rendered page in CSS pixels (and of the PNG, at scale 1).
PNG_WIDTH = 1240
#: Longest wait for Bokeh to draw the page, in milliseconds.
RENDER_TIMEOUT_MS = 30_000
#: Where Chromium is looked for unless ``$ERMVIZ_CHROMIUM`` says otherwise.
DEFAULT_CHROMIUM = "/usr/bin/chromium"
_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
# Every Bokeh root view built and each canvas drawn once (Bokeh draws on the next frame).
_RENDERED_JS = """() => window.Bokeh && Bokeh.index && Object.keys(Bokeh.index).length > 0
  && document.querySelectorAll(".bk-Figure, .bk-GridPlot, .bk-Column").length > 0"""


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


def html_to_png(page: str | bytes, width: int = PNG_WIDTH) -> bytes:
    """Render the standalone HTML ``page`` at ``width`` CSS pixels; the PNG's bytes."""
    executable = chromium_path()
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise PngError("PNG export needs the playwright package; pip install playwright") from None
    text = page.decode("utf-8") if isinstance(page, bytes) else page
    outcome: dict[str, object] = {}

    def render() -> None:
        try:
            with tempfile.TemporaryDirectory(prefix="ermviz-png-") as folder:
                # A file, not set_content: Bokeh's inline page is several MB of script.
                source = Path(folder) / "figures.html"
                source.write_text(text, encoding="utf-8")
                with sync_playwright() as p:
                    browser = p.chromium.launch(executable_path=executable, args=_ARGS)
                    try:
                        tab = browser.new_page(
                            viewport={"width": int(width), "height": 800}, device_scale_factor=1
                        )
                        tab.goto(source.as_uri())
                        tab.wait_for_function(_RENDERED_JS, timeout=RENDER_TIMEOUT_MS)
                        # Two frames: layout, then the canvases' paint.
                        tab.evaluate(
                            "() => new Promise((r) => requestAnimationFrame("
                            "() => requestAnimationFrame(r)))"
                        )
                        outcome["png"] = tab.screenshot(full_page=True, type="png")
                    finally:
                        browser.close()
        except PlaywrightError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            outcome["error"] = PngError(f"PNG export: Chromium failed: {first}")
        except Exception as exc:  # handed to the caller's thread
            outcome["error"] = exc

    worker = threading.Thread(target=render, name="ermviz-png", daemon=True)
    worker.start()
    worker.join()
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["png"]  # type: ignore[return-value]


def write_atomically(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (:func:`ermviz.io.write_bytes_atomic`)."""
    from ermviz.io import write_bytes_atomic

    return write_bytes_atomic(data, path)


def save_png(page: str | bytes, path: str | Path, width: int = PNG_WIDTH) -> Path:
    """Render ``page`` (standalone HTML) and write it to ``path`` as PNG, atomically."""
    return write_atomically(path, html_to_png(page, width))
