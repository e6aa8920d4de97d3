"""The soak benchmark's short CI variant (benchmarks/bench_soak.py): a few start / pause /
resume / stop / reset / dataset-change cycles in one browser against a server in the
benchmark's process; after every cycle no session is left, and threads, Bokeh documents and
dashboards are back where the first cycle left them (the hour-long run and its RSS drift:
``benchmarks/results/bench_soak.txt``).

The benchmark runs in a process of its own: in a test worker, objects other tests left
behind (or create on their own threads) would be counted as the soak's.
"""

from __future__ import annotations

import json
import os
import subprocess
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


@pytest.mark.long(seconds=120)
def test_cycles_leave_no_session_thread_or_document_behind(tmp_path: Path):
    out = tmp_path / "rows.json"
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_soak.py"), "--cycles", "3",
         "--rows-json", str(out)],
        cwd=REPO, env={**os.environ, "ERMVIZ_OFFLINE": "1"}, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = [bench_soak.Row(**r) for r in json.loads(out.read_text())]
    assert len(rows) == 3
    for what, passed, detail in bench_soak.checks(rows):
        if not what.startswith("RSS"):  # three cycles say nothing about a drift
            assert passed, f"{what} ({detail}): {rows}"
    assert all(r.runs == 0 and r.dashboards == 0 for r in rows), rows
