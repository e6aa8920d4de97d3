"""Load: N concurrent sessions racing on one ``make serve`` (``ermviz serve``).

A real server (a subprocess with ``make serve``'s command and environment, read from
``make -n``; loopback only, numba cache warmed by ``--setup``) and N sessions, each
racing the default three runs (FW / AFW / PFW on wdbc). A session is either

* ``--sessions browser``: a page in its own context of Debian's chromium (headless), or
* ``--sessions bokeh``: a ``bokeh.client`` session on its own event-loop thread, which
  speaks the server's protocol as a page does (the same document, the same ``ButtonClick``
  events, every patch applied) but renders nothing. On a 2-core machine the browsers'
  rendering, not the server, is what saturates first (chromium took 1.46 of the 2 cores
  at N = 10, measured); in a classroom it runs on the students' laptops. The clients
  measure the server alone.

For N = 1 (the reference) and each N of ``--ns``, it measures:

* open: seconds from the request to a session ready for Start, the slowest of the N;
* widget latency: from a click on Pause (or Resume) in one session to the server's answer
  in that session (the race status it shows), ``--toggles`` per session, sessions in turn
  during the race; p50 and p95 over all of them;
* throughput: solver iterations per wall second of each session's three runs over the
  measurement window (read from the trace sources in the session), its mean per session,
  and N x that over the single session's (1.0 = the cores are shared without loss);
* isolation: every session shows three runs, their ids are unique across sessions, and a
  session's trace sources are exactly its own runs (no session receives another's);
* CPU: cores used by the server and by what plays the sessions, over the window;
* server RSS and threads: before, the peak while racing (sampled every 0.5 s), and 10 s
  after every session of that N has closed, beside the server's baseline.

Everything runs on the same cores as the server, so latency here is an upper bound.

Usage::

    .venv/bin/python benchmarks/bench_load.py --sessions bokeh --ns 5,10,20,30
    .venv/bin/python benchmarks/bench_load.py --sessions browser --ns 5,10
    .venv/bin/python benchmarks/bench_load.py --ns 5 --window 15      # a quick look
    .venv/bin/python benchmarks/bench_load.py --server-env PYTHONMALLOC= ...  # Python's
        # default allocator instead of make serve's
"""

from __future__ import annotations

import argparse
import contextlib
import html
import os
import re
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


def serve_command(port: int) -> tuple[dict[str, str], list[str]]:
    """``make serve``'s environment and command for ``port`` on the loopback interface
    (read from ``make -n``, so the benchmark measures what a teacher runs; no ``--show``)."""
    out = subprocess.run(
        ["make", "-n", "-W", "pyproject.toml", "serve", f"PORT={port}", "ADDRESS=127.0.0.1",
         f"ORIGINS=127.0.0.1:{port}"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    # ``make serve`` runs ``ermviz serve`` (earlier versions ran ``panel serve``).
    lines = out.replace("\\\n", " ").splitlines()
    [line] = [ln for ln in lines if "ermviz serve" in ln or "panel serve" in ln]
    tokens = shlex.split(line)
    env = {}
    while tokens and "=" in tokens[0] and not tokens[0].startswith("-"):
        key, value = tokens.pop(0).split("=", 1)
        env[key] = value
    return env, [t for t in tokens if t != "--show"]


def start_server(port: int, log, overrides: dict[str, str]) -> tuple[subprocess.Popen, dict]:
    """``make serve`` as a subprocess; ``overrides`` change its environment (an empty value
    removes the variable). Returns the process and the environment it was given."""
    make_env, cmd = serve_command(port)
    env = {**os.environ, "ERMVIZ_OFFLINE": "1", **make_env, **overrides}
    env = {k: v for k, v in env.items() if v != "" or k not in overrides}
    server = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 180
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5):
                shown = {k: env.get(k, "(unset)") for k in {*make_env, *overrides}}
                return server, shown
        except OSError:
            pass
        if time.monotonic() > deadline or server.poll() is not None:
            raise RuntimeError("the server did not start")
        time.sleep(0.5)


class BrowserSession:
    """One page in its own chromium context."""

    kind = "browser"

    def __init__(self, browser, url: str) -> None:
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = self.page = self.context.new_page()
        page.set_default_timeout(120_000)
        page.goto(url, timeout=120_000)
        page.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0",
                               timeout=120_000)  # fmt: skip
        page.locator(".run-status-empty").first.wait_for(timeout=120_000)

    def click(self, label: str) -> None:
        self.page.locator("button", has_text=label).first.click()

    def status(self) -> str:
        return self.page.locator(".race-status-text").first.get_attribute("data-status") or ""

    def wait_status(self, want: str, timeout: float) -> float:
        """Poll the rendered race status until it reads ``want``; the time it did."""
        deadline = time.perf_counter() + timeout
        while self.status() != want:
            if time.perf_counter() > deadline:
                raise TimeoutError(f"race status not {want!r} after {timeout:g} s")
            time.sleep(0.01)
        return time.perf_counter()

    def iterations(self) -> dict[str, int]:
        return self.page.evaluate(ITERATIONS_JS)

    def run_ids(self) -> list[str]:
        return self.page.locator(".run-status").evaluate_all(STATUS_IDS_JS)

    def close(self) -> None:
        self.context.close()


class BokehClientSession(threading.Thread):
    """One session of ``bokeh.client`` (the server's protocol, no rendering) on its own
    event loop thread: clicks are the browser's ``ButtonClick`` events, and the race
    status is read from the server's patches as they are applied."""

    kind = "bokeh client"

    def __init__(self, url: str, arguments: dict[str, str]) -> None:
        super().__init__(daemon=True)
        self.url, self.arguments = url, arguments
        self.cond = threading.Condition()
        self.race_status, self.status_at = "", 0.0
        self.failure: BaseException | None = None
        self.start()
        with self.cond:
            if not self.cond.wait_for(lambda: self.race_status or self.failure, timeout=120):
                raise TimeoutError("the session did not open")
        if self.failure is not None:
            raise self.failure

    def run(self) -> None:
        import asyncio

        from bokeh.client import pull_session
        from bokeh.events import DocumentReady
        from tornado.ioloop import IOLoop

        try:
            asyncio.set_event_loop(asyncio.new_event_loop())
            self.loop = IOLoop.current()
            self.session = pull_session(url=self.url, io_loop=self.loop,
                                        arguments=self.arguments)  # fmt: skip
            self.doc = self.session.document
            # Models pulled from the server are known to it: events refer to them by id.
            self.doc.models.flush_synced()
            self.race_text = next(m for m in self.doc.models if "race-status-text" in _text(m))
            self.doc.on_change(self._changed)
            self.doc.callbacks.send_event(DocumentReady())  # what a browser sends on load
            self._set_status()
        except BaseException as exc:  # reported to the opener
            with self.cond:
                self.failure = exc
                self.cond.notify_all()
            return
        self.session._connection.loop_until_closed()

    def _set_status(self) -> None:
        match = re.search(r'data-status="(\w+)"', _text(self.race_text))
        with self.cond:
            self.race_status = match.group(1) if match else "?"
            self.status_at = time.perf_counter()
            self.cond.notify_all()

    def _changed(self, event) -> None:
        if getattr(event, "model", None) is self.race_text:
            self._set_status()

    def _call(self, fn):
        """Run ``fn`` on the session's loop (its document is not thread-safe)."""
        done, out = threading.Event(), []

        def call() -> None:
            try:
                out.append(fn())
            finally:
                done.set()

        self.loop.add_callback(call)
        if not done.wait(60):
            raise TimeoutError("the session's loop did not answer")
        return out[0]

    def click(self, label: str) -> None:
        """Click the button labelled ``label``, waiting for it as a browser user (and
        Playwright) would: a label changed by the server may arrive after the status."""
        from bokeh.events import ButtonClick

        def send() -> bool:
            button = next((m for m in self.doc.models
                           if type(m).__name__ == "Button" and m.label == label), None)  # fmt: skip
            if button is None or button.disabled:
                return False
            self.doc.models.flush_synced()
            self.doc.callbacks.send_event(ButtonClick(button))
            return True

        deadline = time.perf_counter() + 60
        while not self._call(send):
            if time.perf_counter() > deadline:
                raise TimeoutError(f"no enabled button {label!r}")
            time.sleep(0.005)

    def status(self) -> str:
        with self.cond:
            return self.race_status

    def wait_status(self, want: str, timeout: float) -> float:
        with self.cond:
            if not self.cond.wait_for(lambda: self.race_status == want, timeout=timeout):
                raise TimeoutError(f"race status not {want!r} after {timeout:g} s")
            return self.status_at

    def iterations(self) -> dict[str, int]:
        def read() -> dict[str, int]:
            out = {}
            for m in self.doc.models:
                name = getattr(m, "name", None) or ""
                if name.startswith("trace:"):
                    it = m.data.get("iteration", [])
                    out[name[6:]] = int(it[-1]) if len(it) else 0
            return out

        return self._call(read)

    def run_ids(self) -> list[str]:
        def read() -> list[str]:
            strip = next(
                (_text(m) for m in self.doc.models if 'class="run-status"' in _text(m)), ""
            )
            return re.findall(r'data-run-id="([^"]+)"', strip)

        return self._call(read)

    def close(self) -> None:
        self.loop.add_callback(self.session.close)
        self.join(30)


def _text(model) -> str:
    """A markup model's HTML (Panel sends it escaped)."""
    text = getattr(model, "text", None)
    return html.unescape(text) if isinstance(text, str) else ""


def register_models() -> None:
    """Import every model the dashboard's documents hold (Panel's, lazily imported by the
    server, and the dashboard's own), so a client can deserialize them."""
    import importlib
    import pkgutil

    import panel.models

    for module in pkgutil.iter_modules(panel.models.__path__):
        try:
            importlib.import_module(f"panel.models.{module.name}")
        except ImportError:  # optional extras (e.g. a plotting library not installed)
            pass
    import ermviz.app.views.page  # noqa: F401


def open_session(kind: str, browser, url: str):
    if kind == "browser":
        return BrowserSession(browser, f"{url}?{QUERY}")
    return BokehClientSession(url, dict(p.split("=", 1) for p in QUERY.split("&")))


def toggle(session, label: str, want: str) -> float:
    """Click ``label`` and time the server's answer (the race status ``want``)."""
    t0 = time.perf_counter()
    session.click(label)
    return session.wait_status(want, 60) - t0


def sessions_cpu_seconds(kind: str) -> float:
    """CPU seconds of what plays the sessions: the chromium processes, or this process
    (the Bokeh clients' threads)."""
    return browser_cpu_seconds() if kind == "browser" else cpu_seconds(os.getpid())


def one_level(kind: str, browser, url: str, server: subprocess.Popen, n: int, args) -> dict:
    """Open ``n`` sessions, race, measure, close; returns the row of the table."""
    rss0, threads0 = proc_stats(server.pid)
    t0 = time.perf_counter()
    sessions, opens = [], []
    for _ in range(n):
        t = time.perf_counter()
        sessions.append(open_session(kind, browser, url))
        opens.append(time.perf_counter() - t)
    sampler = Sampler(server.pid)
    sampler.start()
    for session in sessions:
        session.click("Start")
    for session in sessions:
        session.wait_status("running", 120)
    time.sleep(2.0)  # past the first chunks
    before = [s.iterations() for s in sessions]
    s0, b0 = cpu_seconds(server.pid), sessions_cpu_seconds(kind)
    w0 = time.perf_counter()
    latencies = []
    end = w0 + args.window
    k = 0
    while time.perf_counter() < end and k < args.toggles * n:
        session = sessions[k % n]
        latencies.append(toggle(session, "Pause", "paused"))
        latencies.append(toggle(session, "Resume", "running"))
        k += 1
    time.sleep(max(0.0, end - time.perf_counter()))
    after = [s.iterations() for s in sessions]
    window = time.perf_counter() - w0
    server_cores = (cpu_seconds(server.pid) - s0) / window
    session_cores = (sessions_cpu_seconds(kind) - b0) / window
    ids = [s.run_ids() for s in sessions]
    isolated = all(len(i) == 3 for i in ids) and len({r for i in ids for r in i}) == 3 * n
    isolated &= all(set(a) == set(i) for a, i in zip(after, ids, strict=True))
    rates = [
        sum(a.get(r, 0) - b.get(r, 0) for r in a) / window
        for a, b in zip(after, before, strict=True)
    ]
    for session in sessions:
        session.click("Stop")
    sampler.halt.set()
    sampler.join()
    for session in sessions:
        session.close()
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
        "session_cores": session_cores,
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
    ap.add_argument("--sessions", choices=("browser", "bokeh"), default="browser",
                    help="chromium pages, or bokeh.client sessions (no rendering)")  # fmt: skip
    ap.add_argument("--ns", default="5,10,20,30", help="session counts after the single one")
    ap.add_argument("--window", type=float, default=30.0, help="measurement seconds per N")
    ap.add_argument("--toggles", type=int, default=2, help="Pause/Resume pairs per session")
    ap.add_argument("--server-env", action="append", default=[], metavar="KEY=VALUE",
                    help="change make serve's environment (KEY= removes KEY)")  # fmt: skip
    ap.add_argument("--note", default="")
    ap.add_argument("--out", help="write the output here too (atomically)")
    args = ap.parse_args(argv)
    kind = "browser" if args.sessions == "browser" else BokehClientSession.kind
    if kind == "browser" and not Path(CHROMIUM).exists():
        print(f"needs {CHROMIUM}", file=sys.stderr)
        return 2
    if kind != "browser":
        register_models()

    ns = [int(t) for t in args.ns.split(",") if t]
    t_start = time.perf_counter()
    emit("Load: N sessions racing on one make serve (ermviz serve)")
    emit(f"benchmarks/bench_load.py {shlex.join(sys.argv[1:] if argv is None else argv)}")
    players = (
        "chromium (headless, one context per session)"
        if kind == "browser"
        else "bokeh.client sessions (one event-loop thread each, in the benchmark's process: "
        "the server's protocol and patches, no rendering)"
    )
    emit(
        f"started {time.strftime('%Y-%m-%d %H:%M:%S')}; commit {core_version()}; "
        f"{os.cpu_count()} cores, load average {load_str()}; {players} on the same cores as "
        "the server"
    )
    if args.note:
        emit(f"note: {args.note}")
    emit(
        f"each session: ?{QUERY} (FW / AFW / PFW on wdbc), Start, a {args.window:g} s window "
        f"with {args.toggles} Pause/Resume pairs per session (sessions in turn), Stop, close"
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}/app"
    rows = []
    with tempfile.TemporaryFile() as log:
        overrides = dict(kv.split("=", 1) for kv in args.server_env)
        server, shown = start_server(port, log, overrides)
        emit(f"server environment (make serve's, with --server-env): {shown}")
        try:
            base_rss, base_threads = proc_stats(server.pid)
            emit(f"server baseline (started, no session): RSS {base_rss:.0f} MiB, "
                 f"{base_threads} threads")  # fmt: skip
            with contextlib.ExitStack() as stack:
                browser = None
                if kind == "browser":
                    from playwright.sync_api import sync_playwright

                    p = stack.enter_context(sync_playwright())
                    browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                    stack.callback(browser.close)
                for n in [1, *ns]:
                    try:
                        row = one_level(kind, browser, url, server, n, args)
                    except Exception as exc:  # the largest N this machine sustains
                        emit(f"N = {n}: FAILED ({type(exc).__name__}: {str(exc)[:200]})")
                        break
                    rows.append(row)
                    print(row, file=sys.stderr, flush=True)
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
    single = rows[0]["rate"] if rows else float("nan")
    emit()
    who = "browsers" if kind == "browser" else "clients"
    emit("  N  open max s  latency p50 s  p95 s  (clicks)  it/s per session  N x / single  "
         f"isolated  cores: server/{who}  RSS before/peak/after MiB  per session  "
         "threads before/peak/after"
         "  wall s")  # fmt: skip
    for r in rows:
        emit(
            f"{r['n']:>3}  {r['open_max']:>10.2f}  {r['p50']:>13.3f}  {r['p95']:>5.3f}  "
            f"{r['toggles']:>8}  {r['rate']:>16,.0f}  {r['n'] * r['rate'] / single:>12.2f}  "
            f"{'yes' if r['isolated'] else 'NO':>8}  "
            f"{r['server_cores']:>{13 + len(who) - 8}.2f}/{r['session_cores']:.2f}  "
            f"{r['rss_before']:>7.0f}/{r['rss_peak']:.0f}/{r['rss_after']:.0f}  "
            f"{(r['rss_peak'] - r['rss_before']) / r['n']:>11.0f}  "
            f"{r['threads_before']:>12}/{r['threads_peak']}/{r['threads_after']}  "
            f"{r['seconds']:>6.0f}"
        )
    REPORT.finish(checks(rows, base_rss, base_threads), t_start)
    if args.out:
        REPORT.write(args.out)
    return 0


#: RSS a server may keep, 10 s after its sessions closed, above what it kept after the
#: single session (the first session loads templates and caches for good).
RSS_SLACK_MIB = 50.0


def checks(rows: list[dict], base_rss: float, base_threads: int) -> list:
    if not rows:
        return [("at least one level ran", False, "")]
    top = max(rows, key=lambda r: r["n"])
    at20 = next((r for r in rows if r["n"] == 20), top)
    last, warm = rows[-1], rows[0]["rss_after"]
    return [
        (f"p95 widget latency < 0.5 s at N = {at20['n']}", at20["p95"] < 0.5,
         f"p95 {at20['p95']:.3f} s"),
        ("no session received another's runs", all(r["isolated"] for r in rows), ""),
        ("threads back to the baseline 10 s after every session closed",
         last["threads_after"] <= base_threads,
         f"baseline {base_threads}, after {last['threads_after']}"),
        (f"RSS back to baseline 10 s after every session closed (within {RSS_SLACK_MIB:g} MiB "
         "of the RSS after the single session)",
         all(r["rss_after"] <= warm + RSS_SLACK_MIB for r in rows),
         f"before any session {base_rss:.0f} MiB, after the single one {warm:.0f}, after "
         + ", ".join(f"N = {r['n']}: {r['rss_after']:.0f}" for r in rows[1:])),
    ]  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
