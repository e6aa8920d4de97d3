"""The Results tab's "Run a small sweep" in Debian's chromium, on a served dashboard.

Uses the server and page fixtures of :mod:`test_app_browser`: click the action, watch the
cell count move while the sweep runs (the page stays live), and wait for the sweep's table
on screen: one row per (bundled dataset, threshold), one column per method label. A page
closed mid-sweep has its sweep cancelled: the server's worker processes for it shut down
and its folder deleted before the sweep could finish (the server's temporary folder is
this module's own, so the folder is found there).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_app_browser import ARTIFACTS, SERVER_PID, _open, _wait, page, server  # noqa: F401
from test_results_sweep import spawned_workers

from ermviz.app.results.model import SMALL_SWEEP
from ermviz.sweep import load_config

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", autouse=True)
def server_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A temporary folder of the served dashboard's own (TMPDIR, read when the server
    fixture starts it: module-scoped autouse fixtures are set up first)."""
    folder = tmp_path_factory.mktemp("server-tmp")
    old = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(folder)
    try:
        yield folder
    finally:
        if old is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = old


def test_results_tab_runs_the_small_sweep_and_shows_its_table(server: str, page) -> None:  # noqa: F811
    cells = load_config(SMALL_SWEEP).cells
    labels = {c.label for c in cells}
    datasets = {c.dataset for c in cells}
    _open(page, server)
    page.locator(".bk-tab", has_text="Results").first.click()
    page.locator("button", has_text="Run a small sweep").first.click()
    status = page.locator(".results-status").first
    running = page.locator("button", has_text="Sweep running").first
    running.wait_for(timeout=10_000)
    assert running.is_disabled()  # one sweep at a time per page
    # The cell count while it runs, read until the table's status replaces it.
    counts: set[int] = set()
    deadline = time.monotonic() + 85
    while time.monotonic() < deadline:
        text = status.inner_text()
        if (found := re.search(r"(\d+) of (\d+) cells done", text)) is not None:
            assert int(found.group(2)) == len(cells)
            counts.add(int(found.group(1)))
        elif "finished cells" in text:
            break
        time.sleep(0.1)
    done = page.locator('.results-status[data-level="success"]', has_text="finished cells")
    done.wait_for(timeout=15_000)  # text and level may arrive in two updates under load
    assert f"{len(cells)} finished cells" in done.inner_text()
    # Progress arrived live: before any cell finished, and part-way.
    assert 0 in counts and any(0 < k < len(cells) for k in counts), counts
    headers = set(page.locator(".tabulator-col-title").all_inner_texts())
    assert {"instance", "eps", "speed-up"} | labels <= headers
    rows = page.locator(".ermviz-results-table .tabulator-cell", has_text="svm-dual C=1")
    assert rows.count() == 3 * len(datasets)  # one row per (dataset, threshold)
    page.locator("button", has_text="Run a small sweep").first.wait_for(timeout=5_000)
    assert page.locator("button", has_text="Run a small sweep").first.is_enabled()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "results-small-sweep.png"), full_page=True)


def _workers(server_url: str) -> set[int]:
    """Pids of the served dashboard's Dask worker processes."""
    return spawned_workers(SERVER_PID[server_url])


def _summaries(tmp: Path) -> int | None:
    """Cells finished in the server's small-sweep folders (None: no such folder)."""
    roots = list(tmp.glob("ermviz-sweeps-*"))
    return sum(len(list(r.glob("small-*/summaries/*.parquet"))) for r in roots) if roots else None


def test_a_page_closed_mid_sweep_cancels_it(server: str, page, server_tmp: Path) -> None:  # noqa: F811
    assert not _workers(server)
    # A page that ended (the previous test's) had its sweep folder deleted with its session.
    _wait(lambda: _summaries(server_tmp) is None, 15, "earlier sessions' folders to go")
    _open(page, server)
    page.locator(".bk-tab", has_text="Results").first.click()
    page.locator("button", has_text="Run a small sweep").first.click()
    page.locator(".results-status", has_text="cells done").first.wait_for(timeout=10_000)
    workers = _wait(lambda: _workers(server), 60, "the sweep's worker processes")
    assert _summaries(server_tmp) == 0
    # Closed as soon as the workers exist: the sweep still needs their start-up and at
    # least 4 s of FW cells (2 s budgets, 2 workers). The session is destroyed within ~2 s
    # (the server fixture's --unused-session-lifetime 1000) and cancels it.
    page.close()
    seen = [0]

    def stopped() -> bool:
        n = _summaries(server_tmp)
        seen.append(n or 0)
        return n is None and not (workers & _workers(server))

    _wait(stopped, 40, "the workers to be shut down and the sweep's folder deleted")
    assert max(seen) < 12, "the sweep ran to its end: the closed page did not cancel it"
