"""Reproduce Appendix Table 5 of Hu, Chen & He: MAML on sine-wave few-shot regression.

Hu, Chen & He, "Biased stochastic first-order methods for conditional stochastic optimization
and applications in meta learning" (NeurIPS 2020), Appendix Table 5: the MAML objective
(mean and deviation over independent runs) of BSGD, first-order MAML, Adam (BSGD's
estimator with Adam updates) and BSpiderBoost per inner batch size m, at three increasing
total sample budgets. The paper's figures come from ``design/paper_tables/
seed003_table5_maml.csv``.

Set-up (problem ``maml-sine`` on the bundled ``sine-tasks``; ALGORITHMS.md F.8):

* tasks (Finn, Abbeel & Levine 2017): amplitude ~ U[0.1, 5], phase ~ U[0, pi], x ~
  U[-5, 5], y = amplitude sin(x - phase); a pool of 100,000 tasks (seed 0), of which 200
  are held out as meta-test tasks;
* network 1 -> 40 -> 40 -> 1 (ReLU), PyTorch's default initialisation (seed 0, the same
  start for every run); adaptation step alpha = 0.01 (Finn et al.'s; the paper's sizes are
  UNCONFIRMED);
* a step draws 5 tasks (meta batch, UNCONFIRMED) with m support and m query samples each
  (BSpiderBoost: n1 = 25 tasks at each epoch start, n2 = 5 inside epochs of q = 10
  steps); the budget counts every drawn (x, y) pair;
* the reported number is the MAML objective F(w) = E_task L(w - alpha grad L(w)) on the
  held-out tasks, the expectations over x by a 100-point midpoint rule (the paper's
  "empirical MAML objective"; its evaluation protocol is lost);
* budgets B1..B3 = 5e5, 1e6, 2e6 samples (the paper's values were lost; its runs took 35-90
  CPU minutes, ours about 5-30 s: the table's shape, not its scale, is reproduced). One
  solver per (method, m, seed) is advanced through the three budgets (a run is a function
  of its seed, so the value at B1 is exactly that of a run with budget B1);
* step sizes: per (method, m) the grid value with the smallest mean objective at B3 over
  the grid seeds (1000, ...), disjoint from the reported seeds (0, ...); SGD-type methods
  on {0.003, 0.01, 0.03} (BSpiderBoost {0.001, 0.003, 0.01}), Adam on {3e-4, 1e-3, 3e-3};
  a diverged run (NaN) loses;
* dev = standard deviation over seeds (ddof 1).

Usage::

    export ERMVIZ_OFFLINE=1
    .venv/bin/python benchmarks/maml_table5.py --out benchmarks/results/maml_table5.txt
    .venv/bin/python benchmarks/maml_table5.py --quick          # about two minutes
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import shlex
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench_common import Report, core_version, load_str, save_figure  # noqa: E402

from ermviz.data import load_dataset  # noqa: E402
from ermviz.registry import build_problem, build_solver  # noqa: E402
from ermviz.runner import Budget, Run, RunInfo  # noqa: E402

METHODS = (("bsgd", "fixed"), ("fo-maml", "fixed"), ("adam", "adam"), ("bspiderboost", "fixed"))
MS = (5, 10, 20, 50, 100)
BUDGETS = (500_000, 1_000_000, 2_000_000)
SGD_GAMMAS = (0.003, 0.01, 0.03)
ADAM_GAMMAS = (3e-4, 1e-3, 3e-3)
#: BSpiderBoost's recursive estimate diverged at 0.03 in a trial: one decade lower.
SPIDER_GAMMAS = (0.001, 0.003, 0.01)
SPIDER = {"q": 10, "n1": 25, "n2": 5}
GRID_SEED0 = 1000
TINY_TOL = 1e-300
DEFAULT_PAPER_CSV = "design/paper_tables/seed003_table5_maml.csv"
CODE = ("solvers/maml.py", "solvers/cso.py", "ermviz/families/cso", "ermviz/runner.py")

REPORT = Report()
emit = REPORT.emit
_PROBLEM = None


def problem():
    """The problem (built once per worker process)."""
    global _PROBLEM
    if _PROBLEM is None:
        _PROBLEM = build_problem("maml-sine", load_dataset("sine-tasks"))
    return _PROBLEM


def one_run(job: tuple) -> tuple:
    """(method, m, gamma, seed, budgets, curve) -> (objective at each budget, CPU s, curve)."""
    method, step, m, gamma, seed, budgets, curve = job
    pb = problem()
    settings = {"inner_batch": m, "gamma": gamma, "seed": seed}
    if method == "bspiderboost":
        settings |= SPIDER
    solver = build_solver(pb, method, step, dict(settings), TINY_TOL)
    info = RunInfo("sine-tasks", pb.name, method, step, settings, f"{method} m={m}")
    values, xs, ys, cpu = [], [], [], 0.0
    for B in budgets:
        run = Run(solver, Budget(TINY_TOL, max_time=3600.0, max_work=("samples", B)), info)
        c0 = time.process_time()
        run.run()
        cpu += time.process_time() - c0
        if run.status not in ("max_work", "error") or (
            run.status == "error" and "NaN" not in run.message
        ):
            raise RuntimeError(f"{method} m={m} gamma={gamma} seed={seed}: {run.status}")
        last = run.trace.last()
        values.append(float(last["certificate"]) if run.status == "max_work" else math.nan)
        if curve:
            fr = run.frame()
            xs.append(fr["samples"].to_numpy())
            ys.append(fr["certificate"].to_numpy())
        if run.status == "error":  # diverged (NaN): the later budgets too
            values += [math.nan] * (len(budgets) - len(values))
            break
    out = None
    if curve:
        x, y = np.concatenate(xs), np.concatenate(ys)
        keep = np.r_[True, np.diff(x) > 0]
        out = (x[keep], y[keep])
    return values, cpu, out


def gammas_of(method: str) -> tuple[float, ...]:
    return {"adam": ADAM_GAMMAS, "bspiderboost": SPIDER_GAMMAS}.get(method, SGD_GAMMAS)


def paper_table(path: Path) -> dict[tuple[str, int, int], tuple[float, float]]:
    out = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (r["method"], int(r["inner_batch_m"]), int(r["budget_index"]))
            out[key] = (float(r["loss_mean"]), float(r["loss_dev"]))
    return out


def cell_text(col: np.ndarray) -> str:
    """Mean ± dev over the seeds; over the finite ones, with a count, if some diverged."""
    ok = col[np.isfinite(col)]
    if ok.size == 0:
        return "diverged"
    text = pm(ok.mean(), ok.std(ddof=1) if ok.size > 1 else math.nan)
    return text if ok.size == col.size else f"{text} ({col.size - ok.size}/{col.size} div.)"


def pm(mean: float, dev: float) -> str:
    if not math.isfinite(mean):
        return "diverged"
    return f"{mean:.2e} ± {dev:.1e}" if math.isfinite(dev) else f"{mean:.2e}"


def render(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    emit("  " + "  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True)))
    emit("  " + "  ".join("-" * w for w in widths))
    for r in rows:
        emit("  " + "  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)))


def figure(curves: dict, best: dict, methods: list, path: Path) -> str:
    try:
        import matplotlib
    except ImportError:
        return "matplotlib is not installed: no figure"
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 5.0))
    colors = dict(zip((m for m, _ in METHODS), ("C0", "C3", "C2", "C1"), strict=True))
    for method, _ in methods:
        color = colors[method]
        m = best[method]
        for i, (x, y) in enumerate(curves[(method, m)]):
            ax.plot(
                x, y, color=color, lw=1.0, alpha=0.6, label=f"{method} m={m}" if i == 0 else None
            )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("samples (x, y) drawn")
    ax.set_ylabel("MAML objective on held-out tasks")
    ax.set_title("Sine-wave MAML: each method at its best m (one line per seed)", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    try:
        save_figure(fig, path)
    finally:
        plt.close(fig)
    return f"figure: {path}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10, help="reported runs per cell: seeds 0..N-1")
    ap.add_argument("--grid-seeds", type=int, default=1, help=f"grid seeds {GRID_SEED0}..")
    ap.add_argument("--ms", default=",".join(map(str, MS)))
    ap.add_argument("--methods", default=",".join(m for m, _ in METHODS), help="a subset")
    ap.add_argument("--budgets", default=",".join(f"{b:.0e}" for b in BUDGETS))
    ap.add_argument("--workers", type=int, default=2, help="processes (one core each)")
    ap.add_argument("--paper-csv", help=f"default: $ERMVIZ_DATA/../{DEFAULT_PAPER_CSV}")
    ap.add_argument("--quick", action="store_true", help="2 seeds, m 5,20, budgets 1e5,2e5,4e5")
    ap.add_argument("--note", default="")
    ap.add_argument("--out", help="write the output here too (atomically)")
    args = ap.parse_args(argv)
    if args.quick:
        args.seeds, args.ms, args.budgets = 2, "5,20", "1e5,2e5,4e5"
    ms = [int(float(t)) for t in args.ms.split(",")]
    methods = [ms_ for ms_ in METHODS if ms_[0] in args.methods.split(",")]
    budgets = tuple(int(float(t)) for t in args.budgets.split(","))
    data_root = Path(os.environ.get("ERMVIZ_DATA", REPO.parent / "shared" / "datasets"))
    csv_path = Path(args.paper_csv) if args.paper_csv else data_root.parent / DEFAULT_PAPER_CSV
    paper = paper_table(csv_path) if csv_path.exists() else {}
    t_start = time.perf_counter()
    import numba

    emit("MAML: Hu, Chen & He (NeurIPS 2020) Appendix Table 5 (seed 003), sine-wave tasks")
    emit(f"benchmarks/maml_table5.py {shlex.join(sys.argv[1:] if argv is None else argv)}")
    emit(
        f"started {time.strftime('%Y-%m-%d %H:%M:%S')}; commit {core_version(CODE)}; numpy "
        f"{np.__version__}, numba {numba.__version__}; {args.workers} worker processes on "
        f"{os.cpu_count()} cores shared with other jobs, load average {load_str()}"
    )
    if args.note:
        emit(f"note: {args.note}")
    emit(f"paper's figures: {csv_path}" + ("" if paper else " (not found: ours only)"))
    emit(
        "constants: sine-tasks (100,000 tasks, 200 held out), network 1-40-40-1 ReLU, alpha "
        f"0.01, meta batch 5, query = m, BSpiderBoost q/n1/n2 = {SPIDER['q']}/{SPIDER['n1']}/"
        f"{SPIDER['n2']}; budgets {', '.join(f'{b:,}' for b in budgets)} samples; steps from "
        f"SGD grid {SGD_GAMMAS} / BSpiderBoost {SPIDER_GAMMAS} / Adam {ADAM_GAMMAS} on "
        f"{args.grid_seeds} grid seed(s) "
        f"{GRID_SEED0}.., reported seeds 0..{args.seeds - 1}"
    )
    problem()  # compile / load the kernels before forking
    grid_seeds = range(GRID_SEED0, GRID_SEED0 + args.grid_seeds)
    with ProcessPoolExecutor(args.workers) as pool:
        jobs = [
            (meth, step, m, g, s, budgets[-1:], False)
            for meth, step in methods
            for m in ms
            for g in gammas_of(meth)
            for s in grid_seeds
        ]
        grid = dict(zip(jobs, pool.map(one_run, jobs), strict=True))
        gamma = {}
        for meth, step in methods:
            for m in ms:
                scores = {}
                for g in gammas_of(meth):
                    vals = [
                        grid[(meth, step, m, g, s, budgets[-1:], False)][0][0] for s in grid_seeds
                    ]
                    scores[g] = float(np.mean(vals)) if all(map(math.isfinite, vals)) else math.inf
                gamma[(meth, m)] = min(scores, key=scores.get)
        emit(f"grid done at {time.perf_counter() - t_start:.0f} s: gamma per (method, m): "
             + ", ".join(f"{k[0]} m={k[1]}: {v:g}" for k, v in gamma.items()))  # fmt: skip
        jobs = [
            (meth, step, m, gamma[(meth, m)], s, budgets, s < 3)
            for meth, step in methods
            for m in ms
            for s in range(args.seeds)
        ]
        res = dict(zip(jobs, pool.map(one_run, jobs), strict=True))

    table, curves, cpu = {}, {}, {}
    for meth, step in methods:
        for m in ms:
            runs = [
                res[(meth, step, m, gamma[(meth, m)], s, budgets, s < 3)] for s in range(args.seeds)
            ]
            V = np.array([r[0] for r in runs])
            table[(meth, m)] = V
            curves[(meth, m)] = [r[2] for r in runs if r[2] is not None]
            cpu[(meth, m)] = float(np.mean([r[1] for r in runs]))
    emit()
    emit(f"MAML objective on held-out tasks, mean ± dev over {args.seeds} seeds (ours), beside "
         "the paper's (B1..B3: the paper's three lost budgets)")  # fmt: skip
    header = ["method", "m", "gamma", "CPU s"]
    header += [f"ours B{i + 1}" for i in range(len(budgets))]
    header += [f"paper B{i + 1}" for i in range(3)]
    rows = []
    for meth, _ in methods:
        for m in ms:
            V = table[(meth, m)]
            ours = []
            for b in range(len(budgets)):
                ours.append(cell_text(V[:, b]))
            theirs = [pm(*paper[(meth, m, b)]) if (meth, m, b) in paper else "-" for b in (1, 2, 3)]
            rows.append(
                [meth, str(m), f"{gamma[(meth, m)]:g}", f"{cpu[(meth, m)]:.1f}", *ours, *theirs]
            )
    render(header, rows)

    def final(meth, m):
        col = table[(meth, m)][:, -1]
        return float(col.mean()) if np.isfinite(col).all() else math.inf

    best = {meth: min(ms, key=lambda m, meth=meth: final(meth, m)) for meth, _ in methods}
    emit()
    emit("best m per method at the largest budget (ours | paper's at B3):")
    for meth, _ in methods:
        m = best[meth]
        col = table[(meth, m)][:, -1]
        pbest = min((k for k in paper if k[0] == meth and k[2] == 3), key=lambda k: paper[k][0],
                    default=None)  # fmt: skip
        ptxt = f"m={pbest[1]}: {pm(*paper[pbest])}" if pbest else "-"
        emit(f"  {meth:<13} m={m}: {cell_text(col)}   | paper {ptxt}")
    fig = None
    if args.out:
        fig = figure(curves, best, methods, Path(args.out).with_suffix(".png"))
        emit(fig)
    checks = []
    if {"bsgd", "fo-maml"} <= set(best):
        b_bsgd, b_fo = final("bsgd", best["bsgd"]), final("fo-maml", best["fo-maml"])
        wins = sum(final("bsgd", m) < final("fo-maml", m) for m in ms)
        checks = [
            (
                "BSGD at its best m reaches a lower MAML objective than FO-MAML at its best m "
                "(largest budget)",
                b_bsgd < b_fo,
                f"bsgd m={best['bsgd']}: {b_bsgd:.3e}; fo-maml m={best['fo-maml']}: {b_fo:.3e}",
            ),
            (
                "BSGD below FO-MAML at the same m (largest budget)",
                None,
                f"{wins} of {len(ms)} inner batch sizes",
            ),
        ]
    REPORT.finish(checks, t_start)
    if args.out:
        REPORT.write(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
