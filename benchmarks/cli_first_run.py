"""The README's first CLI example from an empty numba cache (a fresh install), then warm.

Runs ``python -m ermviz run --dataset a1a --problem logreg-l1 --radius 10 --method pfw
--step exact --tol 1e-6`` (bundled a1a, offline) in fresh processes: ``--repeats`` times
with a new empty ``NUMBA_CACHE_DIR`` (cold: every kernel compiled), each followed by a run
on the cache it filled (warm). Per run: wall seconds, the process's CPU seconds (user +
system), the compile notice it printed on stderr (issue 43: one line cold, none warm).
On the shared machine wall time is several times CPU time; on an idle machine the two
agree, so CPU seconds are what an idle machine's wall clock would show.

Usage::

    .venv/bin/python benchmarks/cli_first_run.py [--repeats 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_common import core_version, table, write_atomic

REPO = Path(__file__).resolve().parent.parent
ARGS = ["-m", "ermviz", "run", "--dataset", "a1a", "--problem", "logreg-l1", "--radius", "10",
        "--method", "pfw", "--step", "exact", "--tol", "1e-6", "--no-progress"]  # fmt: skip
#: Issue 43's target for the cold run (seconds, idle machine).
TARGET = 5.0


def run(cache: str) -> tuple[float, float, list[str]]:
    """(wall s, CPU s, the stderr lines saying 'compiling') of one CLI process."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "ERMVIZ_OFFLINE": "1"}
    env.pop("ERMVIZ_DATA", None)  # what a fresh install sees: bundled data only
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, *ARGS], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    notes = [ln for ln in proc.stderr.splitlines() if "compiling" in ln]
    return wall, cpu, notes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    rows = []
    for r in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="ermviz-numba-cache-") as cache:
            for kind in ("cold", "warm"):
                load = os.getloadavg()[0]
                wall, cpu, notes = run(cache)
                rows.append([f"{kind} #{r + 1}", round(wall, 2), round(cpu, 2), round(load, 1),
                             notes[0] if notes else "(none)"])  # fmt: skip
                print(rows[-1], flush=True)
    cold = sorted(row[2] for row in rows if row[0].startswith("cold"))
    warm = sorted(row[2] for row in rows if row[0].startswith("warm"))
    lines = [
        f"# cli_first_run.py; core {core_version()}; {time.strftime('%Y-%m-%d %H:%M:%S')}, "
        f"{os.cpu_count()} cores",
        f"# python {' '.join(ARGS)}",
        "",
        table(["run", "wall s", "CPU s", "load", "stderr line saying 'compiling'"], rows),
        "",
        f"cold: CPU s median {cold[len(cold) // 2]:.2f} (min {cold[0]:.2f}); warm: CPU s median "
        f"{warm[len(warm) // 2]:.2f}; target cold < {TARGET:g} s on the idle machine",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        write_atomic(args.out, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
