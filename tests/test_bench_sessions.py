"""The sessions benchmark's quick mode (benchmarks/bench_sessions.py, issue 32) runs against
a real server and writes a well-formed report: every section, a row of figures per table,
and a CHECKS section. No figure is asserted (machines are noisy); the full run's figures
are in ``benchmarks/results/bench_sessions.txt``.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parent.parent
if not Path("/usr/bin/chromium").exists():
    pytest.skip("/usr/bin/chromium is missing (apt-get install chromium)", allow_module_level=True)
pytest.importorskip("playwright.sync_api")


def _rows(text: str, title: str) -> list[list[str]]:
    """The data rows of the table under the section ``title``."""
    section = text.split(title, 1)[1]
    lines = section.splitlines()[1:]
    start = next(i for i, ln in enumerate(lines) if set(ln.replace(" ", "")) == {"-"})
    rows = []
    for ln in lines[start + 1 :]:
        if not ln.strip():
            break
        rows.append(ln.split())
    return rows


def _number(cell: str) -> float:
    return math.nan if cell == "-" else float(cell)


@pytest.mark.long(seconds=120)
def test_quick_mode_writes_a_well_formed_report(tmp_path: Path) -> None:
    out = tmp_path / "bench_sessions.txt"
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_sessions.py"), "--quick",
         "--out", str(out)],
        cwd=REPO, env={**os.environ, "ERMVIZ_OFFLINE": "1"}, capture_output=True, text=True,
        timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    text = out.read_text()
    assert text == proc.stdout.split(f"written to {out}")[0], "the file is what was printed"
    titles = ["COLD LAUNCH", "WARM SERVER", "FRESH PAGE ON THE IDLE SERVER",
              "REFERENCE: A MINIMAL PANEL PAGE", "START TO FIRST PLOTTED POINT",
              "N FRESH PAGES", "SHUTDOWN", "CHECKS"]  # fmt: skip
    for title in titles:
        assert f"\n{title}" in text, title
    [idle] = _rows(text, "FRESH PAGE ON THE IDLE SERVER")
    median, best, worst, cpu = map(_number, idle)
    assert 0 < best <= median <= worst and cpu > 0
    ref, floor, ratio, floor_ratio = _rows(text, "REFERENCE: A MINIMAL PANEL PAGE")
    assert ref[0] == "reference" and _number(ref[1]) > 0 and _number(ref[2]) > 0, ref
    assert ref[3] == "1/1", ref  # the reference page was shown too
    assert floor[0] == "floor" and _number(floor[1]) > 0 and _number(floor[2]) > 0, floor
    # The ratios are the dashboard's figures divided by the reference's and the floor's.
    assert math.isclose(_number(ratio[3]), median / _number(ref[1]), rel_tol=0.01), ratio
    assert math.isclose(_number(ratio[4]), cpu / _number(ref[2]), rel_tol=0.01), ratio
    assert floor_ratio[:3] == ["dashboard", "/", "floor"], floor_ratio
    assert math.isclose(_number(floor_ratio[3]), median / _number(floor[1]), rel_tol=0.01)
    assert math.isclose(_number(floor_ratio[4]), cpu / _number(floor[2]), rel_tol=0.01)
    # The floor page is read against the absolute targets.
    assert re.search(r"INFO  the floor page \(floor_page\.py\) against the shown target", text)
    from ermviz.app.lessons import FIRST_LESSON

    [lesson] = _rows(text, "START TO FIRST PLOTTED POINT")
    assert lesson[0] == FIRST_LESSON
    # Two figures (chromium, bokeh.client), or NaN and why (the quick mode does not wait
    # for the kernels to compile).
    page, client = _number(lesson[1]), _number(lesson[2])
    note = " ".join(lesson[3:])
    assert page > 0 or "no point within" in note, lesson
    assert client > 0 or "no point within" in note, lesson
    cells = _rows(text, "N FRESH PAGES")
    assert [(int(r[0]), int(r[1])) for r in cells] == [(1, 0), (1, 1)]
    for r in cells:
        assert r[2] == "1/1", r  # every page shown
        assert 0 < _number(r[3]) <= _number(r[4]) <= _number(r[5])
    assert re.search(r"SIGTERM to exit: \d+\.\d\d s \(return code 0\)", text)
    assert re.search(r"load average [\d.]+ [\d.]+ [\d.]+\n", text)
