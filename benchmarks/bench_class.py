"""A class opening the page: ``ermviz serve --procs P`` under N sessions, without browsers
(issue 45).

A class's browsers run on the students' machines; on this machine they would take the
server's cores (``bench_sessions.py`` puts chromium on them). Here each session is played
by the page's own protocol, as BokehJS speaks it, from one asyncio loop in this process:

1. ``GET /app`` (the page's HTML), the session token read from it;
2. the websocket ``/app/ws`` with that token (it may reach another worker than the GET:
   ``ermviz.workers``); ``ACK``, then ``PULL-DOC-REQ``: the **document built** when its
   ``PULL-DOC-REPLY`` has arrived (the page's first screen);
3. the ``DocumentReady`` event a page sends once shown; the dashboard then sends its
   sidebar (built on load): the **page complete** when that patch has arrived;
4. for a racing session, a click on Start (the ``ButtonClick`` event BokehJS sends), and
   the race's status read from the server's patches until it says ``running``; the
   session then keeps reading (and dropping) the race's patches, as a page renders them.

No message is decoded beyond its header (the JSON of the document once, to find Start),
so the client costs a small fraction of the server (reported as "client CPU").

Sections:

* **fresh pages in turn** on an idle server, ``--procs 1`` and ``2``, and the floor page
  (``floor_page.py``: the least page with issue 32's first screen) served the same way:
  seconds to the document and to the complete page, and the server's CPU per page
  (``/proc`` utime + stime of the server and every process below it);
* **a class opening the page**: for ``--procs 1`` and ``2``, N sessions (10, 30, 100)
  opened at even intervals within 10 s, M of them (every N/M-th) pressing Start once
  their page is complete and racing the first lesson (600 s budget) while the others
  open: time to the document and to the complete page (median, p95, worst), Start to
  running, the server's CPU per page and pages per core-second (N over the server's CPU
  seconds from the first request to the last complete page);
* **session reuse**: ``--procs 2`` without Panel's ``--reuse-sessions`` (the page's HTTP
  request and its websocket may reach different workers, each building the document);
* **the first launch**: an empty numba cache (a fresh install): fresh pages in turn while
  the background warm-up compiles, then after it has finished.

Usage::

    .venv/bin/python benchmarks/bench_class.py            # full: results/bench_class.txt
    .venv/bin/python benchmarks/bench_class.py --quick --out /tmp/q.txt
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
for p in (str(REPO), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

from bench_common import (  # noqa: E402
    Report,
    core_version,
    cpu_seconds,
    descendants,
    free_port,
    load_str,
    table,
)
from tornado.httpclient import AsyncHTTPClient  # noqa: E402

RESULTS = HERE / "results" / "bench_class.txt"
FLOOR_APP = HERE / "floor_page.py"
#: A word of the sidebar (built on the page's load): its patch completes the page.
SIDEBAR_MARK = "standardize features"
#: The race status a racing session waits for (Panel sends the HTML escaped).
RUNNING_MARK = "data-status=&quot;running&quot;"
QUERY = "dataset=wdbc&max_time=600"
#: Seconds a session may take to open before it counts as failed.
TIMEOUT = 300.0

# Every session's requests at once (tornado's client queues beyond 10 by default), each
# waiting as long as a session may (its default connect timeout, 20 s, is shorter).
AsyncHTTPClient.configure(
    None, max_clients=10_000, defaults={"connect_timeout": TIMEOUT, "request_timeout": TIMEOUT}
)

REPORT = Report()
emit = REPORT.emit
_ids = itertools.count(1)


# -- the server --------------------------------------------------------------------------
class Server:
    """``ermviz serve --procs P`` (its command and environment, ``ermviz.serve``) on a
    free loopback port, its output in a log file; ``app`` serves another app file (the
    floor page) the same way, without the warm-up."""

    def __init__(
        self,
        procs: int,
        reuse: bool = True,
        app: Path | None = None,
        overrides: dict[str, str] | None = None,
    ) -> None:
        from ermviz.serve import APP, command, environment

        self.port = free_port()
        cmd = command("127.0.0.1", self.port, [f"127.0.0.1:{self.port}"], show=False, procs=procs)
        if reuse != ("--reuse-sessions" in cmd):  # (ermviz serve: with procs > 1 only)
            cmd = [c for c in cmd if c != "--reuse-sessions"] + ["--reuse-sessions"] * reuse
        if app is not None:
            i = cmd.index("--setup")
            del cmd[i : i + 2]
            cmd[cmd.index(str(APP))] = str(app)
        env = environment(procs=procs)
        env.update({"ERMVIZ_OFFLINE": "1", "PYTHONUNBUFFERED": "1", **(overrides or {})})
        self.cmd = cmd
        self.log_path = Path(tempfile.mkstemp(prefix="bench-class-", suffix=".log")[1])
        self._log = open(self.log_path, "w")  # (closed in stop())
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            cmd, cwd=REPO, env=env, stdout=self._log, stderr=subprocess.STDOUT
        )
        self.url = f"http://127.0.0.1:{self.port}/{app.stem if app else 'app'}"
        self.sidebar = app is None  # (the floor page has none)
        self.procs = procs

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def cpu(self) -> float:
        """CPU seconds of the server and every process below it (workers, warm-up)."""
        return sum(cpu_seconds(p) for p in [self.proc.pid, *descendants(self.proc.pid)])

    def memory_mib(self) -> float:
        """Memory of the server's processes (MiB): their proportional set size, each page
        shared by k processes counted 1/k in each (Linux's ``smaps_rollup``)."""
        total = 0.0
        for pid in [self.proc.pid, *descendants(self.proc.pid)]:
            try:
                for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) / 1024
            except OSError:
                continue
        return total

    def wait_up(self, timeout: float = 180.0) -> float:
        """Seconds from launch until a page is served; then a few more pages, so that
        every worker has built the page it answers HTTP requests from (Panel's
        ``--reuse-sessions``) before anything is measured."""
        import socket

        deadline = time.perf_counter() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited:\n{self.log()[-3000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=5):
                    break
            except OSError:
                if time.perf_counter() > deadline:
                    raise TimeoutError(f"{self.url}: no answer within {timeout:g} s") from None
                time.sleep(0.2)
        asyncio.run(open_in_turn(self.url, 1, self.sidebar))
        up = time.perf_counter() - self.t0
        asyncio.run(open_in_turn(self.url, 3 * (self.procs - 1), self.sidebar))
        return up

    def warm(self) -> bool:
        """Whether the warm-up has ended (its kernels ready, or it failed)."""
        text = self.log()
        return (
            "kernels ready" in text
            or "kernel warm-up failed" in text
            or ("the warm-up process exited" in text)
        )

    def wait_warm(self, timeout: float = 900.0) -> None:
        """Wait until the warm-up has ended (a loaded machine gives its niced child so
        little CPU that the server can look idle while it still compiles)."""
        deadline = time.perf_counter() + timeout
        while self.sidebar and not self.warm() and time.perf_counter() < deadline:
            time.sleep(1.0)

    def wait_idle(self, timeout: float = 300.0, below: float = 0.08) -> float:
        """Wait until the server uses less than ``below`` of a core over 2 s (the warm-up
        done, closed sessions dropped); returns the seconds waited."""
        t = time.perf_counter()
        while time.perf_counter() - t < timeout:
            c0 = self.cpu()
            time.sleep(2.0)
            if (self.cpu() - c0) / 2.0 < below:
                break
        return time.perf_counter() - t

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        time.sleep(1.5)  # the workers follow their master (ermviz.workers)
        for pid in descendants(self.proc.pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self._log.close()


# -- one session, the page's protocol ------------------------------------------------------
def _frames(msgtype: str, content: dict) -> list[str]:
    header = {"msgid": f"c{next(_ids)}", "msgtype": msgtype, "num_buffers": 0}
    return [json.dumps(header), "{}", json.dumps(content)]


def _event(name: str, values: dict) -> dict:
    return {
        "events": [
            {
                "kind": "MessageSent",
                "msg_type": "bokeh_event",
                "msg_data": {"type": "event", "name": name, "values": values},
            }
        ]
    }


def _find_start(doc: object) -> str | None:
    """The id of the document's Start button."""
    todo = [doc]
    while todo:
        o = todo.pop()
        if isinstance(o, dict):
            attrs = o.get("attributes")
            if o.get("type") == "object" and isinstance(attrs, dict):
                if attrs.get("label") == "Start" and str(o.get("name", "")).endswith("Button"):
                    return str(o["id"])
            todo.extend(o.values())
        elif isinstance(o, list):
            todo.extend(o)
    return None


def static_files(page: str) -> list[str]:
    """The server's scripts and stylesheets a page's HTML names (each once)."""
    refs = re.findall(r'<(?:script|link)[^>]+(?:src|href)="([^"]+)"', page)
    return sorted({r for r in refs if "://" not in r and not r.startswith("//")})


async def _fetch(page_url: str, ref: str) -> None:
    from urllib.parse import urljoin

    await AsyncHTTPClient().fetch(urljoin(page_url, ref), request_timeout=TIMEOUT)


class Session:
    """One page: opened (:meth:`open`), perhaps racing (:meth:`start`), then closed."""

    #: Fetch the scripts and stylesheets the page names, as a browser's first visit does.
    static = True

    def __init__(self, url: str, sidebar: bool) -> None:
        self.url, self.sidebar = url, sidebar
        self.t0 = self.t_doc = self.t_full = self.t_click = self.t_running = math.nan
        self.error = ""
        self.ws = None
        self._full = asyncio.Event()
        self._running = asyncio.Event()
        self._reader: asyncio.Task | None = None
        self.start_id: str | None = None

    async def _read(self) -> tuple[dict, str]:
        ws = self.ws
        header = await ws.read_message()
        if header is None:
            raise ConnectionError("the server closed the websocket")
        head = json.loads(header)
        await ws.read_message()  # metadata
        content = await ws.read_message()
        for _ in range(2 * int(head.get("num_buffers", 0))):
            await ws.read_message()
        return head, content if isinstance(content, str) else ""

    async def open(self) -> None:
        from tornado.httpclient import AsyncHTTPClient, HTTPRequest
        from tornado.websocket import websocket_connect

        self.t0 = time.perf_counter()
        url = f"{self.url}?{QUERY}" if self.sidebar else self.url
        resp = await AsyncHTTPClient().fetch(url, request_timeout=TIMEOUT, connect_timeout=TIMEOUT)
        page = resp.body.decode("utf-8", "replace")
        match = re.search(r'"token":\s*"([^"]+)"', page)
        if not match:
            raise RuntimeError("no session token in the page")
        if self.static:  # as a browser with an empty cache, before its scripts run
            await asyncio.gather(*(_fetch(self.url, ref) for ref in static_files(page)))
        ws_url = self.url.replace("http://", "ws://") + "/ws"
        request = HTTPRequest(ws_url, connect_timeout=TIMEOUT, request_timeout=TIMEOUT)
        self.ws = await websocket_connect(
            request, subprotocols=["bokeh", match.group(1)], max_message_size=1 << 30
        )
        head, _ = await self._read()
        if head.get("msgtype") != "ACK":
            raise RuntimeError(f"expected ACK, got {head.get('msgtype')}")
        for frame in _frames("PULL-DOC-REQ", {}):
            await self.ws.write_message(frame)
        head, content = await self._read()
        while head.get("msgtype") == "PATCH-DOC":  # (a periodic update sent before the reply)
            head, content = await self._read()
        if head.get("msgtype") != "PULL-DOC-REPLY":
            raise RuntimeError(f"expected PULL-DOC-REPLY, got {head.get('msgtype')}")
        self.t_doc = time.perf_counter()
        self.start_id = _find_start(json.loads(content).get("doc"))
        for frame in _frames("PATCH-DOC", _event("document_ready", {"type": "map"})):
            await self.ws.write_message(frame)
        if not self.sidebar:
            self.t_full = self.t_doc
            self._full.set()
        self._reader = asyncio.ensure_future(self._drain())
        await asyncio.wait_for(self._full.wait(), TIMEOUT)

    async def _drain(self) -> None:
        """Read every message the server sends (a page renders them), noting the sidebar's
        arrival and the race's running status."""
        try:
            while True:
                _, content = await self._read()
                now = time.perf_counter()
                if not self._full.is_set() and SIDEBAR_MARK in content:
                    self.t_full = now
                    self._full.set()
                if not math.isnan(self.t_click) and RUNNING_MARK in content:
                    if not self._running.is_set():
                        self.t_running = now
                        self._running.set()
        except Exception:
            return

    async def start(self) -> None:
        """Click Start and wait for the race to say it runs."""
        if self.start_id is None:
            raise RuntimeError("no Start button in the document")
        click = _event(
            "button_click", {"type": "map", "entries": [["model", {"id": self.start_id}]]}
        )
        self.t_click = time.perf_counter()
        for frame in _frames("PATCH-DOC", click):
            await self.ws.write_message(frame)
        await asyncio.wait_for(self._running.wait(), TIMEOUT)

    def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        if self.ws is not None:
            self.ws.close()


# -- measurements --------------------------------------------------------------------------
def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile ``q`` (0-100) of the finite ``values`` (NaN if none)."""
    v = sorted(x for x in values if x == x)
    return v[max(0, math.ceil(q / 100 * len(v)) - 1)] if v else math.nan


async def open_in_turn(url: str, k: int, sidebar: bool = True) -> list[Session]:
    """``k`` sessions opened one after the other, each closed once complete."""
    out = []
    for _ in range(k):
        s = Session(url, sidebar)
        try:
            await s.open()
        finally:
            s.close()
        out.append(s)
        await asyncio.sleep(0.3)
    return out


def in_turn(server: Server, k: int) -> dict:
    """``k`` fresh pages in turn on the idle server: medians of the seconds to the
    document and to the complete page, and of the server's CPU per page."""
    docs, fulls, cpus = [], [], []
    for _ in range(k):
        server.wait_idle(60)
        c0 = {p: cpu_seconds(p) for p in [server.proc.pid, *descendants(server.proc.pid)]}
        [s] = asyncio.run(open_in_turn(server.url, 1, server.sidebar))
        time.sleep(0.5)  # the page's last patches
        # (the processes alive throughout: one that exited meanwhile took its CPU with it)
        cpus.append(sum(max(0.0, cpu_seconds(p) - c) for p, c in c0.items()))
        docs.append(s.t_doc - s.t0)
        fulls.append(s.t_full - s.t0)
    return {
        "doc": statistics.median(docs),
        "full": statistics.median(fulls),
        "cpu": statistics.median(cpus),
        "cpus": cpus,
    }


async def _wave(url: str, n: int, m: int, window: float, sidebar: bool) -> list[Session]:
    step = window / n if n > 1 else 0.0
    racing = {round(i * n / m) for i in range(m)} if m else set()
    sessions = [Session(url, sidebar) for _ in range(n)]

    async def one(i: int, s: Session) -> None:
        await asyncio.sleep(i * step)
        try:
            await s.open()
            if i in racing:
                await s.start()
        except Exception as exc:
            s.error = f"{type(exc).__name__}: {exc}"[:200]

    await asyncio.gather(*(one(i, s) for i, s in enumerate(sessions)))
    return sessions


async def _close(sessions: list[Session]) -> None:
    for s in sessions:
        s.close()
    await asyncio.sleep(0.2)


def wave(server: Server, n: int, m: int, window: float) -> dict:
    """``n`` sessions opened at even intervals within ``window`` s, ``m`` of them racing."""
    server.wait_idle(120)
    rss0 = server.memory_mib()
    c0, me0, t0 = server.cpu(), cpu_seconds(os.getpid()), time.perf_counter()
    loop = asyncio.new_event_loop()
    try:
        sessions = loop.run_until_complete(_wave(server.url, n, m, window, server.sidebar))
        cpu = server.cpu() - c0
        client = cpu_seconds(os.getpid()) - me0
        wall = time.perf_counter() - t0
        rss = server.memory_mib()
        loop.run_until_complete(_close(sessions))
    finally:
        loop.close()
    docs = [s.t_doc - s.t0 for s in sessions]
    fulls = [s.t_full - s.t0 for s in sessions]
    runs = [s.t_running - s.t_click for s in sessions if not math.isnan(s.t_click)]
    built = sum(d == d for d in docs)
    errors = sorted({s.error for s in sessions if s.error})
    return {
        "n": n,
        "m": m,
        "built": built,
        "complete": sum(f == f for f in fulls),
        "doc_med": pct(docs, 50),
        "doc_p95": pct(docs, 95),
        "doc_max": pct(docs, 100),
        "full_med": pct(fulls, 50),
        "full_max": pct(fulls, 100),
        "run_max": pct(runs, 100) if runs else math.nan,
        "cpu_page": cpu / n,
        "pages_per_core_s": n / cpu if cpu else math.nan,
        "client_page": client / n,
        "wall": wall,
        "rss": rss - rss0,
        "errors": errors,
        "load": load_str(),
    }


def first_launch(procs: int, pages: int, wait: float) -> dict:
    """An empty numba cache: fresh pages in turn while the warm-up compiles (one every
    few seconds, from the first answer), then ``pages`` after it has finished."""
    cache = tempfile.mkdtemp(prefix="bench-class-numba-")
    server = Server(procs, overrides={"NUMBA_CACHE_DIR": cache})
    try:
        up = server.wait_up()
        during, after = [], []
        while not server.warm() and time.perf_counter() - server.t0 < wait:
            [s] = asyncio.run(open_in_turn(server.url, 1))
            during.append(s.t_full - s.t0)
            time.sleep(3.0)
        ready = time.perf_counter() - server.t0 if server.warm() else math.nan
        if server.warm():
            server.wait_idle(120)
            for s in asyncio.run(open_in_turn(server.url, pages)):
                after.append(s.t_full - s.t0)
        return {"up": up, "during": during, "after": after, "ready": ready}
    finally:
        server.stop()
        shutil.rmtree(cache, ignore_errors=True)


# -- the report ----------------------------------------------------------------------------
WAVE_HEADERS = [
    "server", "N", "M", "built", "doc med", "doc p95", "doc worst", "complete worst",
    "Start->running worst", "cpu/page", "pages/core-s", "client cpu/page", "PSS +MiB",
    "load",
]  # fmt: skip


def wave_row(label: str, r: dict) -> list[object]:
    return [
        label, r["n"], r["m"], f"{r['built']}/{r['n']}", r["doc_med"], r["doc_p95"],
        r["doc_max"], r["full_max"], r["run_max"], r["cpu_page"], r["pages_per_core_s"],
        r["client_page"], round(r["rss"]), r["load"].split()[0],
    ]  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="N = 10, 30 only; no first launch")
    ap.add_argument("--procs", default="1,2", help="worker processes to measure")
    ap.add_argument("--ns", default="10,30,100", help="sessions opened per wave")
    ap.add_argument("--racing", default="0,10", help="of them racing")
    ap.add_argument("--window", type=float, default=10.0, help="seconds the N open within")
    ap.add_argument("--in-turn", type=int, default=5, help="fresh pages in turn per server")
    ap.add_argument("--no-first-launch", action="store_true")
    ap.add_argument("--warmup-wait", type=float, default=900.0, help="cap on the cold warm-up")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    procs_list = [int(p) for p in args.procs.split(",")]
    ns = [10, 30] if args.quick else [int(n) for n in args.ns.split(",")]
    ms = [int(m) for m in args.racing.split(",")]
    t_start = time.perf_counter()
    cores = len(os.sched_getaffinity(0))
    from ermviz.serve import command

    emit(f"bench_class: a class opening the page, {cores} cores, no browsers (issue 45)")
    emit(f"core: {core_version()}")
    emit(f"machine: {cores} cores, load average at start {load_str()}")
    emit("server: " + " ".join(command("127.0.0.1", 0, ["127.0.0.1:<port>"], show=False, procs=2)))
    emit(f"sessions: GET /app?{QUERY}, websocket, PULL-DOC, DocumentReady; racing: Start")
    checks: list[tuple[str, bool | None, str]] = []

    # Fresh pages in turn: the floor page, then the dashboard served each way; waves on the
    # servers ermviz serve starts (procs 1: no session reuse; procs 2: reuse).
    floor = Server(1, app=FLOOR_APP)
    try:
        floor.wait_up()
        floor_turn = in_turn(floor, args.in_turn)
    finally:
        floor.stop()
    configs = [(p, p > 1, True) for p in procs_list]
    if not args.quick:  # session reuse on and off: what --reuse-sessions does for a page
        configs += [(p, p == 1, p > 1) for p in procs_list]
    turns, waves = {}, []
    for procs, reuse, waves_too in configs:
        label = f"procs {procs}" + ("" if reuse == (procs > 1) else (
            ", reuse" if reuse else ", no reuse"))  # fmt: skip
        server = Server(procs, reuse=reuse)
        try:
            server.wait_up()
            server.wait_warm()
            server.wait_idle(900)
            memory = server.memory_mib()
            turns[label] = in_turn(server, args.in_turn)
            turns[label]["memory"] = memory
            emit(f"  {label}: in turn {turns[label]}")
            for n in ns if waves_too else [30] if procs > 1 else []:
                for m in ms if waves_too else [0]:
                    if m > n:
                        continue
                    r = wave(server, n, m, args.window)
                    waves.append((label, r))
                    emit(f"  {label}: " + " ".join(str(c) for c in wave_row(label, r)))
                    for e in r["errors"][:3]:
                        emit(f"    error: {e}")
            tracebacks = server.log().count("Traceback")
        finally:
            server.stop()
        emit(f"  {label}: {tracebacks} tracebacks in the server's log")

    emit()
    emit(f"FRESH PAGES IN TURN ({args.in_turn} each, idle server; medians)")
    rows = [["floor page (procs 1)", floor_turn["doc"], floor_turn["full"], floor_turn["cpu"],
             1.0, "-"]]  # fmt: skip
    for label, t in turns.items():
        rows.append([f"dashboard, {label}", t["doc"], t["full"], t["cpu"],
                     t["cpu"] / floor_turn["cpu"], round(t["memory"])])  # fmt: skip
    emit(table(["page", "document (s)", "complete (s)", "server CPU/page (s)",
                "CPU / floor's", "idle PSS (MiB)"], rows))  # fmt: skip

    emit()
    emit(f"A CLASS OPENING THE PAGE (N sessions within {args.window:g} s, M of them racing)")
    emit(table(WAVE_HEADERS, [wave_row(p, r) for p, r in waves]))

    cold = None
    if not (args.quick or args.no_first_launch):
        cold = first_launch(max(procs_list), args.in_turn, args.warmup_wait)
        emit()
        emit(f"THE FIRST LAUNCH (empty numba cache, procs {max(procs_list)})")
        emit(f"  first page served {cold['up']:.1f} s after launch; kernels ready after "
             f"{cold['ready']:.0f} s")  # fmt: skip
        if cold["during"] and cold["after"]:
            d, a = statistics.median(cold["during"]), statistics.median(cold["after"])
            emit(table(["pages", "complete median (s)", "worst (s)"],
                       [[f"during the warm-up ({len(cold['during'])})", d, max(cold["during"])],
                        [f"after it ({len(cold['after'])})", a, max(cold["after"])],
                        ["during / after", d / a, "-"]]))  # fmt: skip

    for label, r in waves:
        if label == "procs 2" and r["n"] == 30 and r["m"] in (0, 10):
            bound = 20.0 if r["m"] == 0 else 30.0
            ok = r["built"] == 30 and r["doc_max"] <= bound
            checks.append((f"30 sessions within 10 s, {r['m']} racing, procs 2: every document "
                           f"built, the worst within {bound:g} s", ok,
                           f"{r['built']}/30, worst {r['doc_max']:.1f} s"))  # fmt: skip
    for label, t in turns.items():
        ratio = t["cpu"] / floor_turn["cpu"]
        detail = f"{ratio:.2f}x: {t['cpu']:.2f} s / {floor_turn['cpu']:.2f} s"
        checks.append((f"server CPU per page, {label}, against the floor page's (target "
                       "1.5x)", None, detail))  # fmt: skip
    if cold and cold["during"] and cold["after"]:
        ratio = statistics.median(cold["during"]) / statistics.median(cold["after"])
        checks.append(("a fresh page during the first launch's warm-up within 1.5x one after it",
                       ratio <= 1.5, f"{ratio:.2f}x"))  # fmt: skip
    REPORT.finish(checks, t_start)
    REPORT.write(args.out if args.out != str(RESULTS) else _appended(RESULTS))
    return 0


def _appended(path: Path) -> Path:
    """Write the run after the earlier runs of ``path`` (a temporary file joined to it)."""
    old = path.read_text() if path.exists() else ""
    runs = old.count("#################### RUN ")
    REPORT.lines.insert(0, f"#################### RUN {runs + 1}")
    if old:
        REPORT.lines.insert(0, old.rstrip("\n") + "\n\n")
    return path


if __name__ == "__main__":
    raise SystemExit(main())
