"""Soak: scripted start / pause / resume / stop / reset / dataset-change cycles in one browser.

The dashboard is served in this process (``pn.serve`` of ``app.py`` on a thread, the
session options of ``make serve``: a closed page's session is discarded within 1 + 5 s),
so that its live Bokeh sessions, ``Document`` objects and dashboards can be counted, not
only its memory. Each cycle opens a page in one chromium (headless), picks a dataset,
starts the race, pauses, resumes, stops, resets, switches to the other dataset, starts
and stops again, and closes the page; once its session is discarded, the cycle's row is
taken: RSS (of this process: server and the Playwright client), threads, live sessions,
``Document`` / dashboard / run objects alive after a garbage collection.

The baseline is the row after the first cycle (modules imported, kernels loaded, caches
filled: what every later session finds). Checks: RSS drift from the baseline to the last
row under 50 MiB; threads, live sessions, documents and dashboards back to the baseline
after every cycle.

Usage::

    .venv/bin/python benchmarks/bench_soak.py --minutes 60 --out benchmarks/results/bench_soak.txt
    .venv/bin/python benchmarks/bench_soak.py --cycles 4        # the CI variant's length

``tests/test_soak.py`` runs :func:`soak` for a few cycles in CI.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shlex
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for _path in (REPO, REPO / "benchmarks"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from bench_common import CHROMIUM, CHROMIUM_ARGS, free_port  # noqa: E402

DATASETS = ("wdbc", "toy-2d")
#: Longest wait for a closed page's session to be discarded (lifetime 5 s + check 1 s).
SETTLE_MAX = 60.0
RSS_DRIFT_MIB = 50.0


@dataclass
class Row:
    cycle: int
    seconds: float
    rss_mib: float
    threads: int
    sessions: int
    documents: int
    dashboards: int
    runs: int


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _count(server) -> tuple[int, int, int, int]:
    from bokeh.document import Document

    from ermviz.app.views.page import Dashboard
    from ermviz.runner import Run

    gc.collect()
    objs = gc.get_objects()
    docs = sum(1 for o in objs if isinstance(o, Document))
    dashes = sum(1 for o in objs if isinstance(o, Dashboard))
    runs = sum(1 for o in objs if isinstance(o, Run))
    return len(server.get_sessions("/app")), docs, dashes, runs


def _status(page) -> str:
    return page.locator(".race-status-text").first.get_attribute("data-status") or ""


def _until(page, want: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while _status(page) != want:
        if time.monotonic() > deadline:
            raise TimeoutError(f"race status {_status(page)!r}, waiting for {want!r}")
        time.sleep(0.05)


def _stop_if_running(page) -> None:
    button = page.locator("button", has_text="Stop").first
    while _status(page) == "running":
        try:
            button.click(timeout=2_000)
            return
        except Exception:  # disabled: the race is finishing on its own; look again
            time.sleep(0.1)


def _cycle(browser, url: str, k: int) -> None:
    from ermviz.app.state.model import describe_dataset

    first, second = DATASETS[k % 2], DATASETS[(k + 1) % 2]
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(60_000)
    try:
        # a budget no run exhausts: every run must still be going when Pause and Stop are
        # pressed (toy-2d's preset stops at 400 steps, which a loaded CI machine finished first)
        page.goto(
            f"{url}?dataset={first}&max_time=30&tol=1e-300&max_iter=100000000", timeout=120_000
        )
        page.locator(".run-status-empty").first.wait_for(timeout=120_000)
        click = lambda label: page.locator("button", has_text=label).first.click()  # noqa: E731
        click("Start")
        _until(page, "running")
        time.sleep(1.5)
        click("Pause")
        _until(page, "paused")
        click("Resume")
        _until(page, "running")
        time.sleep(0.5)
        click("Stop")
        _until(page, "finished")
        click("Reset")
        _until(page, "idle")
        page.locator("select").first.select_option(label=describe_dataset(second))
        time.sleep(1.0)
        click("Start")
        _until(page, "running")
        time.sleep(1.0)
        # the second dataset's preset has its own budget (toy-2d: 400 steps), which a
        # run may exhaust before Stop on a loaded machine: the soak is about what a
        # cycle leaves behind, so a race that finished by itself is fine
        _stop_if_running(page)
        _until(page, "finished")
    finally:
        page.close()


def soak(
    cycles: int | None = None, minutes: float | None = None, report=print
) -> list[Row]:  # fmt: skip
    """Run the cycles (a count, or as many as fit in ``minutes``); one :class:`Row` per
    cycle, printed through ``report`` as it comes."""
    import panel as pn
    from playwright.sync_api import sync_playwright

    os.environ.setdefault("ERMVIZ_OFFLINE", "1")
    port = free_port()
    thread = pn.serve(
        {"app": str(REPO / "app.py")}, port=port, address="127.0.0.1", threaded=True,
        show=False, websocket_origin=[f"127.0.0.1:{port}"],
        check_unused_sessions_milliseconds=1000, unused_session_lifetime_milliseconds=5000,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/app"
    deadline = time.monotonic() + 120
    server = None
    while server is None and time.monotonic() < deadline:
        servers = list(pn.state._servers.values())
        server = servers[0][0] if servers else None
        time.sleep(0.2)
    if server is None:
        raise RuntimeError("the in-process server did not start")
    rows: list[Row] = []
    base: tuple[int, int, int, int] = (0, 0, 0, 0)  # the first cycle's counts, once taken
    t0 = time.perf_counter()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            k = 0
            while True:
                if cycles is not None and k >= cycles:
                    break
                if minutes is not None and time.perf_counter() - t0 > 60 * minutes:
                    break
                _cycle(browser, url, k)
                # The row is taken once the session is discarded (about 1 + 5 s; a busy
                # machine may take longer), or after SETTLE_MAX s with it still alive.
                closed = time.monotonic()
                while server.get_sessions("/app") and time.monotonic() - closed < SETTLE_MAX:
                    time.sleep(0.5)
                time.sleep(1.5)  # the memory release runs 1 s after the destruction
                sessions, docs, dashes, runs = _count(server)
                # A busy machine may finish a destroyed session's clean-up later: give its
                # objects up to SETTLE_MAX s to go back to what the first cycle left.
                if not rows:
                    base = (sessions, docs, dashes, runs)
                while (docs > base[1] or dashes > base[2] or runs > base[3]) and (
                    time.monotonic() - closed < SETTLE_MAX
                ):
                    time.sleep(0.5)
                    sessions, docs, dashes, runs = _count(server)
                row = Row(k, time.perf_counter() - t0, _rss_mib(), threading.active_count(),
                          sessions, docs, dashes, runs)  # fmt: skip
                rows.append(row)
                report(
                    f"{row.cycle:>5}  {row.seconds:>7.0f}  {row.rss_mib:>8.1f}  {row.threads:>7}  "
                    f"{row.sessions:>8}  {row.documents:>9}  {row.dashboards:>10}  {row.runs:>5}"
                )
                k += 1
            browser.close()
    finally:
        thread.stop()
    return rows


HEADER = "cycle   time s   RSS MiB  threads  sessions  documents  dashboards   runs"


def checks(rows: list[Row]) -> list[tuple[str, bool | None, str]]:
    if len(rows) < 2:
        return [("at least two cycles", False, f"{len(rows)} ran")]
    base, last = rows[0], rows[-1]
    later = rows[1:]
    same = lambda f: all(getattr(r, f) <= getattr(base, f) for r in later)  # noqa: E731
    return [
        (
            f"RSS drift under {RSS_DRIFT_MIB:g} MiB (last row against the baseline)",
            last.rss_mib - base.rss_mib < RSS_DRIFT_MIB,
            f"{base.rss_mib:.1f} -> {last.rss_mib:.1f} MiB over {len(rows)} cycles, peak "
            f"{max(r.rss_mib for r in rows):.1f}",
        ),
        ("threads back to the baseline after every cycle", same("threads"), f"{base.threads}"),
        ("no live session left after any cycle", all(r.sessions == 0 for r in rows), ""),
        (
            "documents and dashboards back to the baseline after every cycle",
            same("documents") and same("dashboards"),
            f"documents {base.documents}, dashboards {base.dashboards}",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    from bench_common import Report, core_version, load_str

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=None, help="run this long (default 60)")
    ap.add_argument("--cycles", type=int, default=None, help="or this many cycles")
    ap.add_argument("--note", default="")
    ap.add_argument("--out", help="write the output here too (atomically)")
    ap.add_argument("--rows-json", help="write the rows as JSON here (tests/test_soak.py)")
    args = ap.parse_args(argv)
    if args.minutes is None and args.cycles is None:
        args.minutes = 60.0
    rep = Report()
    t_start = time.perf_counter()
    rep.emit("Soak: start / pause / resume / stop / reset / dataset-change cycles, one browser")
    rep.emit(f"benchmarks/bench_soak.py {shlex.join(sys.argv[1:] if argv is None else argv)}")
    rep.emit(
        f"started {time.strftime('%Y-%m-%d %H:%M:%S')}; commit {core_version()}; "
        f"{os.cpu_count()} cores, load average {load_str()}"
    )
    if args.note:
        rep.emit(f"note: {args.note}")
    rep.emit("row taken once each cycle's session is discarded (+1.5 s); baseline = cycle 0")
    rep.emit(HEADER)
    rows = soak(args.cycles, args.minutes, report=rep.emit)
    rep.finish(checks(rows), t_start)
    if args.out:
        rep.write(args.out)
    if args.rows_json:
        Path(args.rows_json).write_text(json.dumps([asdict(r) for r in rows]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
