"""The soak benchmark's short CI variant (benchmarks/bench_soak.py): a few start / pause /
resume / stop / reset / dataset-change cycles in one browser against a server in this
process; after every cycle no session is left, and threads, Bokeh documents and
dashboards are back where the first cycle left them (the hour-long run and its RSS drift:
``benchmarks/results/bench_soak.txt``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parent.parent
if not Path("/usr/bin/chromium").exists():
    pytest.skip("/usr/bin/chromium is missing (apt-get install chromium)", allow_module_level=True)
pytest.importorskip("playwright.sync_api")
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_soak  # noqa: E402


@pytest.mark.long(seconds=90)
def test_cycles_leave_no_session_thread_or_document_behind():
    rows = bench_soak.soak(cycles=3, report=lambda line: None)
    assert len(rows) == 3
    results = {what: passed for what, passed, _ in bench_soak.checks(rows)}
    for what, passed in results.items():
        if not what.startswith("RSS"):  # three cycles say nothing about a drift
            assert passed, what
    # (Relative to the first cycle: other tests of this worker process may hold dashboards.)
    assert all(r.runs <= rows[0].runs for r in rows)
