"""The served page makes no request outside its server (issue 32), in Debian's chromium.

Panel's Fast design links the Open Sans web font from fonts.googleapis.com, and a session
that Bokeh recreates when its websocket connects (its page took longer to load than the
server's unused-session lifetime: 1 s for the test server, 15 s by default) linked every
stylesheet to cdn.holoviz.org. Offline both fail in the console; online they tell third
parties who opened the page. The page's design, :class:`ermviz.app.serving.notebook.OfflineFast`,
does neither: every request the page makes, failed ones included, goes to the server.
"""

from __future__ import annotations

import time
from urllib.parse import urlparse

import pytest
from test_app_browser import _open, page, server  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser


def test_the_page_requests_nothing_outside_the_server(server: str, page) -> None:  # noqa: F811
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    _open(page, server)
    for tab in ("Export", "Lessons"):  # tabs built when first shown
        page.get_by_text(tab, exact=True).first.click()
        time.sleep(0.5)
    time.sleep(1.0)
    host = urlparse(server).hostname
    assert host == "127.0.0.1"
    local = [u for u in requests if urlparse(u).hostname == host]
    foreign = [u for u in requests if not u.startswith(("data:", "blob:")) and u not in local]
    assert len(local) > 10  # the page, Bokeh's and Panel's scripts and stylesheets
    assert foreign == [], "\n".join(foreign)
