"""Load: N concurrent browser sessions racing on one ``panel serve app.py``.

A real server (subprocess, loopback only, numba cache warmed by ``--setup``) and N
sessions, each a page in its own browser context of Debian's chromium (headless), each
racing the default three runs (FW / AFW / PFW on wdbc). For N = 1 (the reference) and
each N of ``--ns``, it measures:

* open: seconds from ``goto`` to a page ready for Start, the slowest of the N;
* widget latency: from a click on Pause (or Resume) in one page to the server's answer in
  that page (the race status it renders), ``--toggles`` per page, pages in turn during the
  race; p50 and p95 over all of them;
* throughput: solver iterations per wall second of each session's three runs over the
  measurement window (read from the trace sources in the page), its mean per session,
  and N x that over the single session's (1.0 = the cores are shared without loss);
* isolation: every page shows three runs, their ids are unique across pages, and a page's
  trace sources are exactly its own runs (no session ever receives another's);
* server RSS and threads: before, the peak while racing (sampled every 0.5 s), and 10 s
  after every page of that N has closed, beside the server's baseline.

The browsers run on the same cores as the server (a real classroom's run on the
students' laptops), so latency here is an upper bound of what a student sees.

Usage::

    .venv/bin/python benchmarks/bench_load.py --out benchmarks/results/bench_load.txt
    .venv/bin/python benchmarks/bench_load.py --ns 5 --window 15      # a quick look
"""

from __future__ import annotations

import argparse
import os
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench_common import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    Report,
    core_version,
    cpu_seconds,
    descendants,
    free_port,
    load_str,
)

QUERY = "dataset=wdbc&max_time=600"
#: As ``make serve``: a closed page's session is discarded within 1 + 5 s (Bokeh's defaults,
#: 17 + 15 s, keep a closed session's memory for half a minute).
SESSION_ARGS = ["--check-unused-sessions", "1000", "--unused-session-lifetime", "5000"]
#: Per page: {run id: last iteration} from its trace sources.
ITERATIONS_JS = """() => {
  const out = {};
  for (const doc of Bokeh.documents) {
    for (const m of doc.all_models) {
      if (m.name && m.name.startsWith("trace:")) {
        const it = m.data.iteration;
        out[m.name.slice(6)] = it && it.length ? Number(it[it.length - 1]) : 0;
      }
    }
  }
  return out;
}"""
STATUS_IDS_JS = "(spans) => spans.map((s) => s.dataset.runId)"

REPORT = Report()
emit = REPORT.emit


def proc_stats(pid: int) -> tuple[float, int]:
    """(RSS in MiB, threads) of process ``pid``, from /proc."""
    rss, threads = 0.0, 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024
        elif line.startswith("Threads:"):
            threads = int(line.split()[1])
    return rss, threads


def browser_cpu_seconds() -> float:
    """CPU seconds of every chromium process below this one (renderers included)."""
    total = 0.0
    for pid in descendants(os.getpid()):
        try:
            if "chrom" in Path(f"/proc/{pid}/comm").read_text():
                total += cpu_seconds(pid)
        except OSError:
            continue
    return total


class Sampler(threading.Thread):
    """Peak RSS and threads of the server, sampled every 0.5 s until stopped."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak_rss, self.peak_threads = pid, 0.0, 0
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.wait(0.5):
            rss, threads = proc_stats(self.pid)
            self.peak_rss = max(self.peak_rss, rss)
            self.peak_threads = max(self.peak_threads, threads)


def start_server(port: int, log, env: dict[str, str] | None = None) -> subprocess.Popen:
    cmd = [
        sys.executable, "-m", "panel", "serve", "app.py", "--port", str(port),
        "--address", "127.0.0.1", "--allow-websocket-origin", f"127.0.0.1:{port}",
        "--setup", "ermviz/app/warmup.py", *SESSION_ARGS,
    ]  # fmt: skip
    server = subprocess.Popen(
        cmd, cwd=REPO, env={**os.environ, "ERMVIZ_OFFLINE": "1", **(env or {})}, stdout=log,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    deadline = time.monotonic() + 180
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5):
                return server
        except OSError:
            pass
        if time.monotonic() > deadline or server.poll() is not None:
            raise RuntimeError("the server did not start")
        time.sleep(0.5)


def open_page(browser, url: str):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(url, timeout=120_000)
    page.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0", timeout=120_000)
    page.locator(".run-status-empty").first.wait_for(timeout=120_000)
    return page


def race_status(page) -> str:
    return page.locator(".race-status-text").first.get_attribute("data-status") or ""


def toggle(page, label: str, want: str) -> float:
    """Click ``label`` and time the server's answer (the race status ``want``)."""
    t0 = time.perf_counter()
    page.locator("button", has_text=label).first.click()
    deadline = t0 + 60
    while race_status(page) != want:
        if time.perf_counter() > deadline:
            raise TimeoutError(f"no {want!r} after {label}")
        time.sleep(0.01)
    return time.perf_counter() - t0


def iterations(page) -> dict[str, int]:
    return page.evaluate(ITERATIONS_JS)


def one_level(browser, url: str, server: subprocess.Popen, n: int, args) -> dict:
    """Open ``n`` sessions, race, measure, close; returns the row of the table."""
    rss0, threads0 = proc_stats(server.pid)
    t0 = time.perf_counter()
    pages, opens = [], []
    for _ in range(n):
        t = time.perf_counter()
        pages.append(open_page(browser, url))
        opens.append(time.perf_counter() - t)
    sampler = Sampler(server.pid)
    sampler.start()
    for page in pages:
        page.locator("button", has_text="Start").first.click()
    for page in pages:
        deadline = time.monotonic() + 120
        while race_status(page) != "running":
            if time.monotonic() > deadline:
                raise TimeoutError("a race did not start")
            time.sleep(0.05)
    time.sleep(2.0)  # past the first chunks
    before = [iterations(p) for p in pages]
    s0, b0 = cpu_seconds(server.pid), browser_cpu_seconds()
    w0 = time.perf_counter()
    latencies = []
    end = w0 + args.window
    k = 0
    while time.perf_counter() < end and k < args.toggles * n:
        page = pages[k % n]
        latencies.append(toggle(page, "Pause", "paused"))
        latencies.append(toggle(page, "Resume", "running"))
        k += 1
    time.sleep(max(0.0, end - time.perf_counter()))
    after = [iterations(p) for p in pages]
    window = time.perf_counter() - w0
    server_cores = (cpu_seconds(server.pid) - s0) / window
    browser_cores = (browser_cpu_seconds() - b0) / window
    ids = [p.locator(".run-status").evaluate_all(STATUS_IDS_JS) for p in pages]
    isolated = all(len(i) == 3 for i in ids) and len({r for i in ids for r in i}) == 3 * n
    isolated &= all(set(a) == set(i) for a, i in zip(after, ids, strict=True))
    rates = [
        sum(a.get(r, 0) - b.get(r, 0) for r in a) / window
        for a, b in zip(after, before, strict=True)
    ]
    for page in pages:
        page.locator("button", has_text="Stop").first.click()
    sampler.halt.set()
    sampler.join()
    for page in pages:
        page.context.close()
    time.sleep(10.0)
    rss1, threads1 = proc_stats(server.pid)
    lat = sorted(latencies)
    return {
        "n": n,
        "open_max": max(opens),
        "p50": statistics.median(lat) if lat else float("nan"),
        "p95": lat[min(len(lat) - 1, int(0.95 * len(lat)))] if lat else float("nan"),
        "toggles": len(lat),
        "rate": statistics.mean(rates),
        "isolated": isolated,
        "server_cores": server_cores,
        "browser_cores": browser_cores,
        "rss_before": rss0,
        "rss_peak": sampler.peak_rss,
        "rss_after": rss1,
        "threads_before": threads0,
        "threads_peak": sampler.peak_threads,
        "threads_after": threads1,
        "seconds": time.perf_counter() - t0,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns", default="5,10,20,30", help="session counts after the single one")
    ap.add_argument("--window", type=float, default=30.0, help="measurement seconds per N")
    ap.add_argument("--toggles", type=int, default=2, help="Pause/Resume pairs per page")
    ap.add_argument("--server-env", action="append", default=[], metavar="KEY=VALUE",
                    help="environment of the server (e.g. MALLOC_ARENA_MAX=2)")  # fmt: skip
    ap.add_argument("--note", default="")
    ap.add_argument("--out", help="write the output here too (atomically)")
    args = ap.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"needs {CHROMIUM}", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    ns = [int(t) for t in args.ns.split(",") if t]
    t_start = time.perf_counter()
    emit("Load: N browser sessions racing on one panel serve app.py")
    emit(f"benchmarks/bench_load.py {shlex.join(sys.argv[1:] if argv is None else argv)}")
    emit(
        f"started {time.strftime('%Y-%m-%d %H:%M:%S')}; commit {core_version()}; "
        f"{os.cpu_count()} cores, load average {load_str()}; chromium (headless, one context "
        "per session) on the same cores as the server"
    )
    if args.note:
        emit(f"note: {args.note}")
    emit(
        f"each session: ?{QUERY} (FW / AFW / PFW on wdbc), Start, a {args.window:g} s window "
        f"with {args.toggles} Pause/Resume pairs per page (pages in turn), Stop, close"
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}/app?{QUERY}"
    rows = []
    with tempfile.TemporaryFile() as log:
        server_env = dict(kv.split("=", 1) for kv in args.server_env)
        if server_env:
            emit(f"server environment: {server_env}")
        server = start_server(port, log, server_env)
        try:
            base_rss, base_threads = proc_stats(server.pid)
            emit(f"server baseline (started, no session): RSS {base_rss:.0f} MiB, "
                 f"{base_threads} threads")  # fmt: skip
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                for n in [1, *ns]:
                    try:
                        row = one_level(browser, url, server, n, args)
                    except Exception as exc:  # the largest N this machine sustains
                        emit(f"N = {n}: FAILED ({type(exc).__name__}: {str(exc)[:200]})")
                        break
                    rows.append(row)
                    print(row, file=sys.stderr, flush=True)
                browser.close()
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
    single = rows[0]["rate"] if rows else float("nan")
    emit()
    emit("  N  open max s  latency p50 s  p95 s  (clicks)  it/s per session  N x / single  "
         "isolated  cores: server/browsers  RSS before/peak/after MiB  threads before/peak/after"
         "  wall s")  # fmt: skip
    for r in rows:
        emit(
            f"{r['n']:>3}  {r['open_max']:>10.2f}  {r['p50']:>13.3f}  {r['p95']:>5.3f}  "
            f"{r['toggles']:>8}  {r['rate']:>16,.0f}  {r['n'] * r['rate'] / single:>12.2f}  "
            f"{'yes' if r['isolated'] else 'NO':>8}  "
            f"{r['server_cores']:>12.2f}/{r['browser_cores']:.2f}  "
            f"{r['rss_before']:>7.0f}/{r['rss_peak']:.0f}/{r['rss_after']:.0f}  "
            f"{r['threads_before']:>12}/{r['threads_peak']}/{r['threads_after']}  "
            f"{r['seconds']:>6.0f}"
        )
    checks = []
    if rows:
        top = max(rows, key=lambda r: r["n"])
        at20 = next((r for r in rows if r["n"] == 20), top)
        checks.append(
            (
                f"p95 widget latency < 0.5 s at N = {at20['n']}",
                at20["p95"] < 0.5,
                f"p95 {at20['p95']:.3f} s",
            )
        )
        checks.append(("no session received another's runs", all(r["isolated"] for r in rows), ""))
        last = rows[-1]
        checks.append(
            (
                "threads back to the baseline 10 s after every session closed",
                last["threads_after"] <= base_threads,
                f"baseline {base_threads}, after {last['threads_after']}",
            )
        )
        checks.append(
            (
                "RSS 10 s after the sessions closed, beside the baseline",
                None,
                f"baseline {base_rss:.0f} MiB, after N = {last['n']}: {last['rss_after']:.0f} MiB",
            )
        )
    REPORT.finish(checks, t_start)
    if args.out:
        REPORT.write(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
