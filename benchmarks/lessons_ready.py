"""Every lesson startable within a minute of ``make serve`` on a fresh install (issue 43).

A fresh install's ``make serve`` (``bench_sessions.Server``: ``make serve``'s command and
environment, an empty ``NUMBA_CACHE_DIR``) is launched, and its terminal output (a log: no
terminal) is followed: the seconds from the launch to "a first lesson is ready", to
"every lesson is ready" and to "kernels ready", and the CPU seconds its compiling
processes had used by then (on the shared machine wall time is several times CPU time;
on an idle 2-core machine the two processes' wall time is about their CPU time over two).
Then, as a teacher would, every lesson is opened in chromium (``?lesson=NAME``), Start
pressed, and the seconds until its first point is drawn measured: a lesson whose kernels
were not ready would wait for them ("compiling") instead.

Usage::

    .venv/bin/python benchmarks/lessons_ready.py [--out benchmarks/results/lessons_ready.txt]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
os.environ.setdefault("ERMVIZ_OFFLINE", "1")

from bench_common import core_version, cpu_seconds, descendants, table, write_atomic  # noqa: E402
from bench_sessions import Server, browser_first_points  # noqa: E402

#: What the warm-up prints (ermviz.app.serving.warmup_terminal) at each milestone.
MILESTONES = {
    "first lesson": "a first lesson is ready",
    "every lesson": "every lesson is ready",
    "all kernels": "kernels ready",
}
#: The target of issue 43 (seconds from the launch, idle machine).
TARGET = 60.0


def follow(server: Server, timeout: float) -> dict[str, tuple[float, float]]:
    """Seconds from the launch and the compiling processes' CPU seconds at each milestone
    (NaN for one not reached within ``timeout``)."""
    seen: dict[str, tuple[float, float]] = {}
    cpu: dict[int, float] = {}  # per compiling process, its last CPU seconds read
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline and len(seen) < len(MILESTONES):
        for pid in descendants(server.pid):
            try:
                if b"--child" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    cpu[pid] = max(cpu.get(pid, 0.0), cpu_seconds(pid))
            except OSError:
                continue
        text = server.log()
        for name, marker in MILESTONES.items():
            if name not in seen and marker in text:
                seen[name] = (time.perf_counter() - server.t0, sum(cpu.values()))
        if server.proc.poll() is not None:
            raise RuntimeError(f"the server exited:\n{text[-3000:]}")
        time.sleep(0.2)
    return {n: seen.get(n, (float("nan"), float("nan"))) for n in MILESTONES}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--timeout", type=float, default=1800.0)
    args = ap.parse_args(argv)
    from ermviz.app.lessons import LESSONS

    load0 = os.getloadavg()
    cache = tempfile.mkdtemp(prefix="lessons-ready-numba-")
    try:
        server = Server({"NUMBA_CACHE_DIR": cache}, tag="lessons")
        try:
            threading.Thread(target=server.wait_http, args=(args.timeout,), daemon=True).start()
            milestones = follow(server, args.timeout)
            load1 = os.getloadavg()
            starts = browser_first_points(server.url, [lesson.name for lesson in LESSONS])
            log = server.log()
        finally:
            server.stop()
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    every_s, every_cpu = milestones["every lesson"]
    lines = [
        f"# lessons_ready.py; core {core_version()}",
        f"# {time.strftime('%Y-%m-%d %H:%M:%S')}, {os.cpu_count()} cores, load average at "
        f"launch {load0[0]:.1f}, when the lessons were ready {load1[0]:.1f}",
        "",
        "## a fresh install's make serve (empty numba cache): seconds from the launch",
        table(
            ["milestone", "wall s", "CPU s of the compiling processes", "CPU s / 2 (idle)"],
            [[n, round(w, 1), round(c, 1), round(c / 2, 1)] for n, (w, c) in milestones.items()],
        ),
        "",
        f"every lesson ready after {every_s:.0f} s wall ({every_cpu:.0f} CPU s of the compiling"
        f" processes, about {every_cpu / 2:.0f} s on the idle 2-core machine); target <= "
        f"{TARGET:g} s on the idle machine",
        "",
        "## then, each lesson in chromium: Start to first point (s)",
        table(["lesson", "seconds", "why not"], [[n, round(s, 2), w] for n, s, w in starts]),
        "",
        "## the server's terminal (a log: a few lines, not one per kernel)",
        *[f"    {ln}" for ln in log.splitlines() if ln.startswith("ermviz:")],
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        write_atomic(args.out, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
