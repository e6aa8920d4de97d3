"""Start-up cost of a solve: process start to first recorded iteration, cold and warm.

A second process that solves the same problem should spend under 2 s before its first
iteration, thanks to numba's on-disk cache (``cache=True`` kernels), and a warm
1-iteration CLI run should take under 1 s from start to exit (issue 33). Importing the
registry loads no kernel (a family's kernels load when it is first used), so the import
time of ``ermviz.registry`` is timed, and so is the floor any solve pays on this machine:
an interpreter importing numpy, scipy.sparse and numba and calling one cached kernel
(``solvers.lmo.simplex_lmo``), start to exit. This script runs

* ``python -m ermviz run --dataset a1a --problem logreg-l1 --method pfw --step exact
  --radius 10 --max-iter 1`` and the same on ``svm-dual``, in fresh processes;
* **cold**: after deleting numba's cache files (``*.nbi``, ``*.nbc``) in the
  ``__pycache__`` folders under ``solvers/`` (nothing else is deleted), so the kernels
  are compiled; **warm**: the cache left by the previous run is loaded ("in-tree" mode);
* the same with ``NUMBA_CACHE_DIR`` pointing at a fresh temporary folder ("private"
  mode): other processes sharing the repository's cache cannot refill it between the
  deletion and the measurement.

Each process is started through a small probe (``python -c``) that records wall-clock
marks (``time.time()``, comparable across processes) around the phases of the same CLI
call: interpreter start, ``import ermviz.cli``, imports of the run path (numba, scipy,
pandas, ...), data load, solver construction (JIT compile or cache load) and the first
recorded iteration. The plain CLI command's total wall time (an upper bound), the import
time of ``python -c "import ermviz.cli"`` and an empty interpreter are timed too.

Usage::

    export ERMVIZ_DATA=/work/shared/datasets
    .venv/bin/python benchmarks/startup.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_common import core_version

REPO = Path(__file__).resolve().parent.parent
SOLVERS = REPO / "solvers"
PYTHON = sys.executable
os.environ.setdefault("ERMVIZ_DATA", str(REPO.parent / "shared" / "datasets"))
os.environ.setdefault("ERMVIZ_OFFLINE", "1")

COMMANDS = {
    "logreg-l1": [
        "run",
        "--dataset",
        "a1a",
        "--problem",
        "logreg-l1",
        "--method",
        "pfw",
        "--step",
        "exact",
        "--radius",
        "10",
        "--max-iter",
        "1",
        "--no-progress",
    ],
    "svm-dual": [
        "run",
        "--dataset",
        "a1a",
        "--problem",
        "svm-dual",
        "--method",
        "pfw",
        "--step",
        "exact",
        "--max-iter",
        "1",
        "--no-progress",
    ],
}

# Runs in the child: wraps (never changes) the functions the CLI calls, to time phases.
PROBE = r"""
import json, sys, time
marks = {"start": time.time()}
import ermviz.cli as cli
marks["cli_imported"] = time.time()
import ermviz.experiment as ex
import ermviz.runner as rn
marks["run_path_imported"] = time.time()

def timed(name, fn):
    def wrapper(*a, **k):
        t = time.time()
        out = fn(*a, **k)
        marks.setdefault(name + "_start", t)
        marks.setdefault(name + "_end", time.time())
        return out
    return wrapper

ex.load_data = timed("load", ex.load_data)
ex.build_solver = timed("build", ex.build_solver)
_advance = rn.Run._advance

def first_row(self, n, stop_at):
    out = _advance(self, n, stop_at)
    marks.setdefault("first_row", time.time())
    return out

rn.Run._advance = first_row
rc = cli.main(sys.argv[1:])
marks["end"] = time.time()
sys.stderr.write("STARTUP-MARKS " + json.dumps(marks) + "\n")
sys.exit(rc)
"""


# The floor: what any warm solve pays before and after its kernel, start to exit.
FLOOR = (
    "import numpy as np, scipy.sparse\n"
    "from solvers.lmo import simplex_lmo\n"
    "simplex_lmo(np.ones(3))\n"
)

PROFILED = (
    "ermviz.experiment",
    "ermviz.data",
    "sklearn.datasets",
    "scipy.stats",
    "pandas",
    "pooch",
    "ermviz.registry",
    "numba",
    "solvers.fw",
    "ermviz.runner",
)


def import_profile(repeats: int) -> list[tuple[str, float]]:
    """Cumulative import time of the heavy modules of the run path (best of repeats)."""
    best: dict[str, float] = {}
    for _ in range(repeats):
        r = subprocess.run(
            [PYTHON, "-X", "importtime", "-c", "import ermviz.experiment, ermviz.runner"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        )
        for line in r.stderr.splitlines():
            parts = [p.strip() for p in line.split("|")]
            if len(parts) == 3 and parts[2] in PROFILED:
                sec = int(parts[1]) / 1e6
                best[parts[2]] = min(best.get(parts[2], sec), sec)
    return [(m, best[m]) for m in PROFILED if m in best]


def cache_files() -> list[Path]:
    out = []
    for folder in SOLVERS.rglob("__pycache__"):
        out += [p for p in folder.iterdir() if p.suffix in (".nbi", ".nbc")]
    return out


def clear_numba_cache() -> int:
    n = 0
    for p in cache_files():
        try:
            p.unlink()
            n += 1
        except FileNotFoundError:  # removed meanwhile by another process
            pass
    return n


def wall(argv: list[str]) -> float:
    t0 = time.time()
    r = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=False)
    dt = time.time() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{argv} failed: {r.stderr[-2000:]}")
    return dt


def probe(problem: str, cache_dir: str | None = None) -> dict:
    env = dict(os.environ)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    t_spawn = time.time()
    r = subprocess.run(
        [PYTHON, "-c", PROBE, *COMMANDS[problem]],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    t_exit = time.time()
    if r.returncode != 0:
        raise RuntimeError(f"probe {problem} failed: {r.stderr[-2000:]}")
    line = next(s for s in r.stderr.splitlines() if s.startswith("STARTUP-MARKS "))
    m = json.loads(line.split(" ", 1)[1])
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    return {
        "interpreter": m["start"] - t_spawn,
        "import_cli": m["cli_imported"] - m["start"],
        "import_run_path": m["run_path_imported"] - m["cli_imported"],
        "data_load": m["load_end"] - m["load_start"],
        "solver_build": m["build_end"] - m["build_start"],
        "to_first_row": m["first_row"] - t_spawn,
        "total": t_exit - t_spawn,
        "status": summary["status"],
        "iterations": summary["iterations"],
    }


COLS = (
    "interpreter",
    "import_cli",
    "import_run_path",
    "data_load",
    "solver_build",
    "to_first_row",
    "total",
)


def fmt_row(label: str, d: dict) -> str:
    return f"{label:<36}" + "".join(f"{d[c]:>16.3f}" for c in COLS)


def timed(argv: list[str], repeats: int) -> tuple[float, float]:
    """(median, best) wall seconds of ``repeats`` runs of ``argv``."""
    times = [wall(argv) for _ in range(repeats)]
    return statistics.median(times), min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="cold and warm repeats (best kept)")
    args = ap.parse_args()
    print("Start-up of a solve: seconds from process start (cold = numba cache deleted)")
    print(
        f"started {time.strftime('%Y-%m-%d %H:%M:%S')}, {os.cpu_count()} cores, load average"
        f" {os.getloadavg()}; python {PYTHON}"
    )
    print(f"core: {core_version()}")
    print(f"numba cache files under {SOLVERS} now: {len(cache_files())}")

    base = min(wall([PYTHON, "-c", "pass"]) for _ in range(args.repeats))
    imp = min(wall([PYTHON, "-c", "import ermviz.cli"]) for _ in range(args.repeats))
    imp_run = min(
        wall([PYTHON, "-c", "import ermviz.experiment, ermviz.runner"]) for _ in range(args.repeats)
    )
    print(f'\nempty interpreter  python -c "pass":                         {base:.3f} s')
    print(f'import ermviz.cli   python -c "import ermviz.cli":             {imp:.3f} s')
    print(f'import the run path python -c "import ermviz.experiment, ...": {imp_run:.3f} s')
    reg_med, reg_best = timed([PYTHON, "-c", "import ermviz.registry"], max(5, args.repeats))
    print(
        f'import the registry python -c "import ermviz.registry":        {reg_med:.3f} s'
        f" (median; best {reg_best:.3f} s)"
    )
    wall([PYTHON, "-c", FLOOR])  # fill numba's cache for the floor's kernel
    floor_med, floor_best = timed([PYTHON, "-c", FLOOR], max(5, args.repeats))
    print(
        "floor: numpy + scipy.sparse + numba + one cached kernel call, start to exit:"
        f" {floor_med:.3f} s (median; best {floor_best:.3f} s)"
    )

    print(
        "\nimport profile of the run path (python -X importtime, best of"
        f" {args.repeats}; cumulative seconds, charged to whichever module imports first):"
    )
    for mod, sec in import_profile(args.repeats):
        print(f"  {mod:<24} {sec:.3f} s")

    header = f"{'':<36}" + "".join(f"{c:>16}" for c in COLS)
    checks = []
    private_dirs: list[str] = []
    for mode in ("in-tree", "private"):
        if mode == "in-tree":
            print(
                "\n##### mode in-tree: numba's default cache in solvers/__pycache__; cold ="
                " its *.nbi/*.nbc files deleted first. Other processes on this machine use the"
                " same cache and may refill it between the deletion and the run: a 'cold' run"
                " whose solver_build is short found kernels compiled by someone else."
            )
        else:
            print(
                "\n##### mode private: NUMBA_CACHE_DIR = a fresh temporary folder per cold run"
                " (nothing shared, nothing deleted in the repository); warm = the folder the"
                " last cold run filled."
            )
        for problem, argv in COMMANDS.items():
            print(f"\n=== {problem} [{mode}]: python -m ermviz {' '.join(argv)}")
            print(header)
            cold = []
            cache_dir = None
            for i in range(args.repeats):
                if mode == "in-tree":
                    label = f"cold #{i + 1} ({clear_numba_cache()} files deleted)"
                else:
                    cache_dir = tempfile.mkdtemp(prefix="ermviz-numba-cache-")
                    private_dirs.append(cache_dir)
                    label = f"cold #{i + 1} (empty private cache)"
                d = probe(problem, cache_dir)
                cold.append(d)
                print(fmt_row(label, d))
            warm = []
            for i in range(args.repeats):
                d = probe(problem, cache_dir)
                warm.append(d)
                print(fmt_row(f"warm #{i + 1}", d))
            best_cold = {c: min(d[c] for d in cold) for c in COLS}
            med_cold = {c: statistics.median(d[c] for d in cold) for c in COLS}
            best_warm = {c: min(d[c] for d in warm) for c in COLS}
            print(fmt_row("cold (best)", best_cold))
            print(fmt_row("cold (median)", med_cold))
            print(fmt_row("warm (best)", best_warm))
            print(
                f"warm/cold (median) time to first iteration: {best_warm['to_first_row']:.3f} /"
                f" {med_cold['to_first_row']:.3f} s ="
                f" {best_warm['to_first_row'] / med_cold['to_first_row']:.2f}; solver"
                f" construction warm/cold = {best_warm['solver_build']:.3f} /"
                f" {med_cold['solver_build']:.3f} s"
            )
            ok = best_warm["to_first_row"] < 2.0
            checks.append(
                (f"{problem} [{mode}]: warm process start -> first iteration < 2 s", ok, best_warm)
            )
            if mode == "in-tree":
                n = max(5, args.repeats)
                plain, plain_best = timed([PYTHON, "-m", "ermviz", *argv], n)
                print(
                    f"plain CLI, warm, start to exit (median of {n}): {plain:.3f} s (best"
                    f" {plain_best:.3f} s; floor {floor_med:.3f} s)"
                )
                checks.append(
                    (
                        f"{problem}: plain CLI --max-iter 1, start to exit (median) < 1 s",
                        plain < 1.0,
                        {"to_first_row": plain},
                    )
                )
    for folder in private_dirs:
        shutil.rmtree(folder, ignore_errors=True)
    print("\n=== Checks")
    for what, ok, d in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {what}: {d['to_first_row']:.3f} s")
    print(f"\nfinished {time.strftime('%Y-%m-%d %H:%M:%S')}, load average {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
