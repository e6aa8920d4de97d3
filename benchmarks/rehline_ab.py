"""A/B timing of our ReHLine kernels between two checkouts, alternating processes.

Times only ``ours`` on the tasks of :mod:`rehline_bench` (same problems, same seed), two
numbers per task, each the best of ``--repeats`` rounds of CPU time (``process_time``):

* ``t_epochs``: solver construction plus ``run_epochs(k)`` (the kernels' epochs only, no
  certificate), ``k`` the epochs of the ``t_stop`` run;
* ``t_stop``: the library loop to a relative duality gap of ``--tol`` (epochs, certificate
  evaluations, the Python loop and the kernel calls' dispatch).

With ``--k K`` only ``t_epochs`` is measured, with ``K`` epochs for every task (a fixed
amount of kernel work; ``t_stop`` is then reported as 1).

Every kernel is compiled or loaded from numba's cache by an untimed first run of each
task. ``--root`` picks the checkout (its ``solvers`` and ``ermviz`` are imported, checked
by path); ``--ab OLD NEW --rounds R`` runs ``R`` alternating pairs of processes (OLD, NEW,
OLD, NEW, ...) and prints the per-task medians and ratios new/old::

    .venv/bin/python benchmarks/rehline_ab.py --ab /work/old /work/new --rounds 3 \\
        --out benchmarks/results/rehline_bench_ab.txt
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path


def measure(root: str, only: list[str], repeats: int, tol: float, k_fixed: int) -> dict:
    sys.path.insert(0, root)
    sys.path.insert(0, str(Path(root) / "benchmarks"))
    import rehline_bench as rb

    import solvers.rehline

    assert solvers.rehline.__file__.startswith(root), solvers.rehline.__file__
    tasks = [t for t, _ in rb.tasks_svm(False) + rb.tasks_reg(False) + rb.tasks_cvx(False)]
    if only:
        tasks = [t for t in tasks if any(s in t.name for s in only)]
    out: dict = {"root": root, "load": [os.getloadavg()[0]], "tasks": {}}
    for task in tasks:
        if k_fixed:  # epochs only: k_fixed epochs, no t_stop
            rb.ours_capped(task.problem, tol, 1)  # compiles or loads the kernels
            t_ep = [rb.ours_capped(task.problem, tol, k_fixed).time_s for _ in range(repeats)]
            out["tasks"][task.name] = {"k": k_fixed, "t_stop": 1.0, "t_epochs": min(t_ep)}
            continue
        first = rb.ours_stop(task.problem, tol)  # compiles or loads the kernels
        k = first.iters
        reps = repeats if first.time_s < 1.0 else max(2, repeats // 2)
        t_stop, t_ep = [], []
        for _ in range(reps):
            t_stop.append(rb.ours_stop(task.problem, tol).time_s)
            t_ep.append(rb.ours_capped(task.problem, tol, k).time_s)
        out["tasks"][task.name] = {"k": k, "t_stop": min(t_stop), "t_epochs": min(t_ep)}
    out["load"].append(os.getloadavg()[0])
    return out


def ab(old: str, new: str, rounds: int, args: argparse.Namespace) -> str:
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    cmd = [sys.executable, __file__, "--repeats", str(args.repeats), "--tol", str(args.tol)]
    cmd += ["--k", str(args.k)]
    if args.only:
        cmd += ["--only", args.only]
    t0 = time.time()
    for r in range(rounds):
        for name, root in (("old", old), ("new", new)):
            res = subprocess.run([*cmd, "--root", root], check=True, capture_output=True, text=True)
            runs[name].append(json.loads(res.stdout.strip().splitlines()[-1]))
            print(f"round {r + 1} {name} done ({time.time() - t0:.0f} s)", file=sys.stderr)
    names = list(runs["old"][0]["tasks"])
    lines = [
        f"# rehline_ab.py --ab {old} {new} --rounds {rounds} --repeats {args.repeats} "
        f"--tol {args.tol} --k {args.k}" + (f" --only '{args.only}'" if args.only else ""),
        f"# {time.strftime('%Y-%m-%d %H:%M')}, {platform.node()}, {os.cpu_count()} cores; "
        f"total {time.time() - t0:.0f} s; processes alternate old, new, old, new ...",
        "# load (1-min average at start/end of each process): "
        + ", ".join(
            f"{n}{i + 1} {run['load'][0]:.1f}/{run['load'][1]:.1f}"
            for i in range(rounds)
            for n, run in (("old", runs["old"][i]), ("new", runs["new"][i]))
        ),
        "# per process: best of the repeats (CPU s); below: per-round values old|new, the "
        "medians over rounds and the ratio new/old of the medians",
        "",
        f"{'task':34s} {'k':>6s} {'t_epochs old':>13s} {'new':>10s} {'ratio':>6s}"
        f" {'t_stop old':>11s} {'new':>10s} {'ratio':>6s}   per-round t_epochs old|new",
    ]
    ratios: dict[str, list[float]] = {"t_epochs": [], "t_stop": []}
    for name in names:
        row = f"{name:34s} {runs['new'][0]['tasks'][name]['k']:6d}"
        for key in ("t_epochs", "t_stop"):
            o = statistics.median(run["tasks"][name][key] for run in runs["old"])
            n = statistics.median(run["tasks"][name][key] for run in runs["new"])
            ratios[key].append(n / o)
            row += f" {o:13.5g} {n:10.5g} {n / o:6.3f}" if key == "t_epochs" else ""
            row += f" {o:11.5g} {n:10.5g} {n / o:6.3f}" if key == "t_stop" else ""
        row += "   " + " ".join(
            f"{a['tasks'][name]['t_epochs']:.4g}|{b['tasks'][name]['t_epochs']:.4g}"
            for a, b in zip(runs["old"], runs["new"], strict=True)
        )
        lines.append(row)
    lines.append("")
    for key, vals in ratios.items():
        lines.append(
            f"{key}: ratio new/old median {statistics.median(vals):.3f}, geometric mean "
            f"{statistics.geometric_mean(vals):.3f}, min {min(vals):.3f}, max {max(vals):.3f}"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", help="measure this checkout (one process; JSON on stdout)")
    ap.add_argument("--ab", nargs=2, metavar=("OLD", "NEW"), help="alternate two checkouts")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--only", help="comma-separated substrings of task names to keep")
    ap.add_argument(
        "--k", type=int, default=0, help="t_epochs only, with this many epochs (no t_stop)"
    )
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    only = [s for s in (args.only or "").split(",") if s]
    if args.root:
        root = str(Path(args.root).resolve())
        print(json.dumps(measure(root, only, args.repeats, args.tol, args.k)))
        return 0
    if not args.ab:
        ap.error("give --root or --ab")
    old, new = (str(Path(p).resolve()) for p in args.ab)
    text = ab(old, new, args.rounds, args)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
