"""LS-SVM SMO on 5 x 10^4 rows: time to a relative duality gap of 1e-3, memory bounded by
``kernel_cache_mb``.

Keerthi & Shevade, "SMO algorithm for least-squares SVM formulations", Neural Computation
15(2), 2003: SMO on the LS-SVM dual ``min 1/2 a^T Q a - y^T a`` s.t. ``1^T a = 0``,
``Q = K + I / C`` (Gaussian K), two coordinates per step, the maximal violating pair (or the
second-order choice of j, ``pair=second-order``). At n = 5 x 10^4 the kernel matrix takes
8 n^2 bytes (about 19 GB) and does not fit ``kernel_cache_mb``: the solver
(``ermviz.families.lssvm.methods.SmoSolver``, ``solvers.lssvm.smo_advance``) computes the
two kernel columns of a step on the fly and keeps the most recently used ones in an LRU
cache of at most ``kernel_cache_mb`` MB, LIBSVM's column cache (Chang & Lin, "LIBSVM: a
library for support vector machines", ACM TIST 2(3), 2011).

The grid: ijcnn1 (all 49990 x 22 rows) and a seeded random subset of 50000 of the 245057
skin_nonskin rows (p = 3); sigma2 by the median heuristic (``sigma2=0``); C in {1, 10};
``kernel_cache_mb`` in {256, 32} with the maximal violating pair, and the second-order pair
at the largest cache; stop at ``P - D <= tol D`` (tol 1e-3), start alpha = 0, a budget of
solver seconds per run (the runner's ``max_time``; wall time capped at 1.5 x that).

Memory. Each run is a child process (this script with a hidden ``--child`` argument), so
its peak RSS is its own. The child loads the data and builds the problem (RSS ``pre``),
loads the numba kernels with a few SMO steps on 400 evenly spaced rows (``jit`` = their RSS, a
per-process constant independent of n and of the cache), records the baseline RSS
(``base``), resets the kernel's high-water mark (``/proc/self/clear_refs``), builds the
solver and runs; ``peak`` = VmHWM at the end, the high-water mark of the solve alone (so a
transient of loading or of the median heuristic is not charged to it; ``pre_hwm``, the
high-water mark before the reset, shows that transient). ``getrusage``'s ``ru_maxrss`` is
printed beside ``peak``: the reset applies to it too (Linux reads the same high-water mark),
so it agrees with ``peak``. The check: peak - base <= the cache MB the solver allocated + an
allowance for what else grows with the run (:func:`allowance_mb`).

Usage::

    export ERMVIZ_DATA=/work/shared/datasets ERMVIZ_OFFLINE=1
    .venv/bin/python benchmarks/lssvm_smo_scale.py --out benchmarks/results/lssvm_smo_scale.txt
    .venv/bin/python benchmarks/lssvm_smo_scale.py --c 1 --cache-mb 256 --datasets ijcnn1
    .venv/bin/python benchmarks/lssvm_smo_scale.py --rows 10000 --budget 60   # a few minutes
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import math
import os
import resource
import shlex
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench_common import Report, core_version, load_str, seeded_subset, table  # noqa: E402

#: The code the figures depend on (flagged when it has uncommitted changes).
LSSVM_CODE = (
    "solvers/lssvm.py",
    "solvers/gram_cache.py",
    "solvers/linalg.py",
    "solvers/tags.py",
    "ermviz/families/lssvm",
    "ermviz/runner.py",
    "ermviz/trace.py",
)
DEFAULT_PAIR = "max-violating"
#: Rows of the numba warm-up problem and the cache it gets (MB): 16 slots of 400 entries,
#: below the 400 x 400 matrix's 1.2 MB, so the warm-up takes the same LRU path as the run.
WARM_ROWS, WARM_CACHE_MB = 400, 0.05
#: glibc malloc arenas, Python objects of the runner's chunks, the small temporaries of
#: the certificate and of the final iterate: a fixed slack, not measured, not tuned.
SLACK_MB = 8.0
#: O(n) float64 vectors that exist only during the solve: the solver's alpha, F, two
#: scratch columns and slot_of (5), copies of alpha and F when the run ends (2), and one
#: spare; 8 n bytes each.
RUN_VECTORS = 8

REPORT = Report()
emit = REPORT.emit


def code_digest() -> str:
    """sha256 prefix of the :data:`LSSVM_CODE` files' contents: other people edit the tree
    while the grid runs, and each child imports it afresh."""
    h = hashlib.sha256()
    for rel in LSSVM_CODE:
        path = REPO / rel
        for f in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            h.update(str(f.relative_to(REPO)).encode())
            h.update(f.read_bytes() if f.exists() else b"")
    return h.hexdigest()[:12]


def trace_mb(max_rows: int, columns: int) -> float:
    """The most the run's trace (``ermviz.trace.Trace``) can hold: its buffer doubles from
    1024 rows past ``max_rows`` (then thins back), and while doubling holds the old half
    too, so 1.5 x the last capacity; plus its thinning temporaries (a few columns)."""
    cap = 1024
    while cap <= max_rows:
        cap *= 2
    return (1.5 * cap * columns + 4 * cap) * 8 / 2**20


def allowance_mb(n: int, max_rows: int, columns: int) -> float:
    """What may grow during a solve besides the kernel-column cache: the O(n) vectors
    (:data:`RUN_VECTORS`), the trace (:func:`trace_mb`) and :data:`SLACK_MB`. The numba
    runtime (LLVM, the loaded kernels) is in the baseline (the warm-up)."""
    return RUN_VECTORS * 8 * n / 2**20 + trace_mb(max_rows, columns) + SLACK_MB


# -- the child: one measured run ----------------------------------------------------------
def vm_mb(field: str) -> float:
    """``VmRSS`` or ``VmHWM`` of this process from /proc/self/status, in MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return math.nan


def reset_hwm() -> bool:
    """Reset the high-water mark of RSS to the current RSS (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def make_dataset(name: str, rows: int, seed: int):
    """``name``'s training rows: all of them when it has at most ``rows``, otherwise a
    seeded random subset of ``rows`` (sorted), as lssvm_table1.py's scale test does."""
    from ermviz.data import load_dataset

    full = load_dataset(name, with_test=False)
    if rows >= full.n:
        return full, f"all {full.n} rows"
    ds = seeded_subset(full, rows, seed)
    return ds, f"{rows} of {full.n} rows (seed {seed} random subset, sorted)"


def warm_up(ds, C: float, sigma2: float, pair: str, tol: float) -> None:
    """Load (or compile) the numba kernels the run calls: a few SMO steps on
    :data:`WARM_ROWS` evenly spaced rows (both classes: files may be sorted by label)
    through the same LRU path."""
    import numpy as np

    from ermviz.data import Dataset
    from ermviz.registry import build_problem, build_solver
    from ermviz.runner import Budget, Run

    idx = np.unique(np.linspace(0, ds.n - 1, min(WARM_ROWS, ds.n)).astype(np.int64))
    X = ds.X[idx]
    small = Dataset(
        name="warm-up",
        X=X if hasattr(X, "tocsr") else np.ascontiguousarray(X),
        y=np.array(ds.y[idx]),
        task="binary",
        source=ds.source,
        description="numba warm-up",
    )
    pb = build_problem("lssvm", small, C=C, sigma2=sigma2, kernel_cache_mb=WARM_CACHE_MB)
    solver = build_solver(pb, "smo", "smo", {"pair": pair}, tol)
    Run(solver, Budget(tol=tol, max_iter=50, max_time=30.0)).run()


def child(spec: dict) -> dict:
    """One run as ``spec`` says; returns the record the parent prints."""
    t_wall = time.perf_counter()
    from ermviz.registry import build_problem, build_solver
    from ermviz.runner import Budget, Run, RunInfo

    ds, rows_txt = make_dataset(spec["dataset"], spec["rows"], spec["seed"])
    C, pair, tol, cache_mb = spec["C"], spec["pair"], spec["tol"], spec["cache_mb"]
    pb = build_problem("lssvm", ds, C=C, sigma2=spec["sigma2"], kernel_cache_mb=cache_mb)
    rss_pre = vm_mb("VmRSS")
    warm_up(ds, C, pb.sigma2, pair, tol)
    gc.collect()
    rss_base = vm_mb("VmRSS")
    hwm_pre = vm_mb("VmHWM")
    reset = reset_hwm()
    t0 = time.perf_counter()
    solver = build_solver(pb, "smo", "smo", {"pair": pair}, tol)
    setup_s = time.perf_counter() - t0
    info = RunInfo(
        dataset=ds.name,
        problem="lssvm",
        method="smo",
        step="smo",
        settings={**pb.settings, "pair": pair},
        label=f"smo-{pair}",
    )
    budget = Budget(tol=tol, max_time=spec["budget"], max_wall=1.5 * spec["budget"])
    run = Run(solver, budget, info)
    run.run()
    # Read the peak first: nothing after the run is charged to it.
    peak = vm_mb("VmHWM") if reset else math.nan
    ru_maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    rss_end = vm_mb("VmRSS")
    last = run.trace.last() or {}
    return {
        "dataset": ds.name,
        "rows_txt": rows_txt,
        "n": int(pb.n),
        "p": int(pb.p),
        "C": C,
        "sigma2": float(pb.sigma2),
        "kernel_cache_mb": cache_mb,
        "pair": pair,
        "status": run.status,
        "message": run.message,
        "iterations": int(last.get("iteration", 0)),
        "solver_s": run.time_s,
        "run_wall_s": run.wall_s,
        "setup_s": setup_s,
        "wall_s": time.perf_counter() - t_wall,
        "kernel_evals": float(last.get("kernel_evals", math.nan)),
        "kernel_computed": float(last.get("kernel_computed", math.nan)),
        "touched": int(last.get("active_size", -1)),
        "gap": float(last.get("certificate", math.nan)),
        "dual": float(last.get("dual_objective", math.nan)),
        "matrix_cached": bool(solver.cached),
        "cache_slots": int(solver._cols.shape[0]),
        # The LRU columns, or the whole matrix when it fits kernel_cache_mb (small --rows).
        "cache_alloc_mb": (solver._cols.nbytes + solver._K.nbytes) / 2**20,
        "trace_max_rows": int(run.trace.max_rows),
        "trace_columns": len(run.trace.columns),
        "rss_pre_mb": rss_pre,
        "rss_base_mb": rss_base,
        "peak_mb": peak,
        "ru_maxrss_mb": ru_maxrss,
        "hwm_pre_mb": hwm_pre,
        "rss_end_mb": rss_end,
        "hwm_reset": reset,
    }


# -- the parent: the grid, the tables and the checks --------------------------------------
def run_child(spec: dict, timeout: float) -> dict:
    """Run ``spec`` in a fresh interpreter, one BLAS thread; its last JSON line back."""
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"no answer within {timeout:.0f} s (killed)"}
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        tail = " | ".join(r.stderr.strip().splitlines()[-3:])
        return {"error": f"exit code {r.returncode}: {tail}"}
    return json.loads(lines[-1])


def grid(args) -> list[dict]:
    specs = []
    for name in args.datasets:
        for C in args.c:
            for cache in args.cache_mb:
                pairs = [DEFAULT_PAIR]
                if args.second_order and cache == max(args.cache_mb):
                    pairs.append("second-order")
                for pair in pairs:
                    specs.append(
                        {
                            "dataset": name,
                            "rows": args.rows,
                            "seed": args.seed,
                            "C": C,
                            "sigma2": 0.0,
                            "kernel_cache_mb": cache,
                            "cache_mb": cache,
                            "pair": pair,
                            "tol": args.tol,
                            "budget": args.budget,
                        }
                    )
    return specs


def fmt_s(x: float) -> str:
    if not math.isfinite(x):
        return "-"
    return f"{x:.2f}" if x < 100 else f"{x:.1f}"


def pair_short(pair: str) -> str:
    return "max-viol" if pair == DEFAULT_PAIR else "2nd-order"


def report(args, results: list[tuple[dict, dict]]) -> list[tuple[str, bool, str]]:
    ok = [(s, r) for s, r in results if "error" not in r]
    for s, r in results:
        if "error" in r:
            emit(f"  NOT RUN: {s['dataset']} C={s['C']:g} cache {s['cache_mb']:g} {s['pair']}")
            emit(f"    {r['error']}")
    emit()
    emit("Data (sigma2 by the median heuristic; the kernel matrix that does NOT fit the cache):")
    seen = set()
    for _, r in ok:
        if r["dataset"] in seen:
            continue
        seen.add(r["dataset"])
        n = r["n"]
        fits = "fits the cache: precomputed" if r["matrix_cached"] else "does not fit"
        emit(
            f"  {r['dataset']}: {n} x {r['p']}, {r['rows_txt']}; sigma2 = {r['sigma2']:.6g}; "
            f"K = n^2 x 8 bytes = {8.0 * n * n / 2**20:,.0f} MB ({8.0 * n * n / 1e9:.1f} GB), "
            f"{fits}"
        )
    emit()
    emit(
        "Runs: it = SMO steps; solver_s = the runner's solver seconds (budget "
        f"{args.budget:g} s), ms/it = solver milliseconds per step, wall_s = the child's "
        "wall seconds (data, problem, warm-up, set-up, certificate evaluations included); "
        "Mevals = kernel_evals / 1e6 (2n per step, the paper's count); Mcomp = "
        "kernel_computed / 1e6 (n per cache miss); hit% = 1 - Mcomp / Mevals; touched = "
        "nonzero alpha_i at the end (columns ever fetched: that many misses are "
        "unavoidable); gap = (P - D) / D; D = dual objective"
    )
    rows = []
    for _, r in ok:
        hit = 1.0 - r["kernel_computed"] / r["kernel_evals"] if r["kernel_evals"] else math.nan
        rows.append(
            [
                r["dataset"],
                f"{r['C']:g}",
                f"{r['kernel_cache_mb']:g}",
                pair_short(r["pair"]),
                r["status"],
                r["iterations"],
                fmt_s(r["solver_s"]),
                f"{1e3 * r['solver_s'] / max(r['iterations'], 1):.3f}",
                fmt_s(r["wall_s"]),
                f"{r['kernel_evals'] / 1e6:.0f}",
                f"{r['kernel_computed'] / 1e6:.0f}",
                f"{100 * hit:.1f}",
                r["touched"],
                f"{r['gap']:.2e}",
                f"{r['dual']:.6g}",
                r["load"],
            ]
        )
    head = (
        "data C cache_MB pair status it solver_s ms/it wall_s Mevals Mcomp hit% touched gap D load"
    )
    for line in table(head.split(), rows).splitlines():
        emit("  " + line)

    emit()
    emit(
        "Memory (MiB): slots x n x 8 bytes = alloc (the LRU cache, allocated zeroed, so its "
        "pages count once touched; slots 0: the whole matrix fit and alloc is its size); "
        "pre = RSS after data and problem; jit = RSS added by the numba warm-up (LLVM and "
        "the kernels; per process, independent of n and of the cache); "
        "base = pre + jit, before the solver; peak = high-water RSS of the solve (reset at "
        "base); grew = peak - base; allow = O(n) vectors + trace + slack (allowance_mb); "
        "pre_hwm = the high-water RSS before the reset (loading, median heuristic); "
        "ru_maxrss = getrusage's peak at the end (reset with the high-water mark)"
    )
    mrows = []
    for _, r in ok:
        allow = allowance_mb(r["n"], r["trace_max_rows"], r["trace_columns"])
        grew = r["peak_mb"] - r["rss_base_mb"]
        r["allow_mb"], r["grew_mb"] = allow, grew
        mrows.append(
            [
                r["dataset"],
                f"{r['C']:g}",
                f"{r['kernel_cache_mb']:g}",
                pair_short(r["pair"]),
                r["cache_slots"],
                f"{r['cache_alloc_mb']:.1f}",
                f"{r['rss_pre_mb']:.1f}",
                f"{r['rss_base_mb'] - r['rss_pre_mb']:.1f}",
                f"{r['rss_base_mb']:.1f}",
                f"{r['peak_mb']:.1f}",
                f"{grew:.1f}",
                f"{grew - r['cache_alloc_mb']:.1f}",
                f"{allow:.1f}",
                f"{r['hwm_pre_mb']:.1f}",
                f"{r['ru_maxrss_mb']:.1f}",
            ]
        )
    head = (
        "data C cache_MB pair slots alloc pre jit base peak grew grew-alloc allow pre_hwm ru_maxrss"
    )
    for line in table(head.split(), mrows).splitlines():
        emit("  " + line)
    if ok:
        r = ok[0][1]
        emit(
            f"  allow at n = {r['n']}: {RUN_VECTORS} x 8n bytes = "
            f"{RUN_VECTORS * 8 * r['n'] / 2**20:.1f} + trace "
            f"{trace_mb(r['trace_max_rows'], r['trace_columns']):.1f} (max_rows "
            f"{r['trace_max_rows']}, {r['trace_columns']} columns) + slack {SLACK_MB:g}"
        )

    checks: list[tuple[str, bool, str]] = []
    for _, r in ok:
        label = f"{r['dataset']} C={r['C']:g} cache {r['kernel_cache_mb']:g} MB"
        if r["pair"] == DEFAULT_PAIR:
            checks.append(
                (
                    f"{label} {DEFAULT_PAIR}: reaches tol {args.tol:g} within {args.budget:g} s",
                    r["status"] == "converged",
                    f"{r['status']}, {r['solver_s']:.1f} s, gap {r['gap']:.2e}",
                )
            )
    for _, r in ok:
        label = f"{r['dataset']} C={r['C']:g} cache {r['kernel_cache_mb']:g} MB {r['pair']}"
        bound = r["cache_alloc_mb"] + r["allow_mb"]
        checks.append(
            (
                f"{label}: peak - base <= cache alloc + allowance",
                bool(r["hwm_reset"]) and r["grew_mb"] <= bound,
                f"{r['grew_mb']:.1f} <= {r['cache_alloc_mb']:.1f} + {r['allow_mb']:.1f}",
            )
        )
    small, large = min(args.cache_mb), max(args.cache_mb)
    if small < large:
        for name in dict.fromkeys(r["dataset"] for _, r in ok):
            for C in args.c:
                pick = {
                    r["kernel_cache_mb"]: r
                    for _, r in ok
                    if r["dataset"] == name and r["C"] == C and r["pair"] == DEFAULT_PAIR
                }
                if small in pick and large in pick:
                    a, b = pick[small], pick[large]
                    checks.append(
                        (
                            f"{name} C={C:g}: peak RSS with cache {small:g} MB < with {large:g} MB",
                            a["peak_mb"] < b["peak_mb"],
                            f"{a['peak_mb']:.1f} vs {b['peak_mb']:.1f} MiB",
                        )
                    )
    for s, r in results:
        if "error" in r:
            what = f"{s['dataset']} C={s['C']:g} cache {s['cache_mb']:g} MB {s['pair']}: ran"
            checks.append((what, False, r["error"][:200]))
    return checks


def floats(text: str) -> list[float]:
    return [float(t) for t in text.split(",") if t]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="ijcnn1,skin_nonskin")
    ap.add_argument("--rows", type=int, default=50_000, help="rows per data set (seeded subset)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the subsets")
    ap.add_argument("--c", default="1,10", type=floats, help="C values (comma list)")
    ap.add_argument("--cache-mb", default="256,32", type=floats, help="kernel_cache_mb values")
    ap.add_argument(
        "--no-second-order",
        dest="second_order",
        action="store_false",
        help="skip the second-order pair (run at the largest cache)",
    )
    ap.add_argument("--tol", type=float, default=1e-3, help="relative duality gap (1e-3)")
    ap.add_argument("--budget", type=float, default=600.0, help="solver seconds per run (600)")
    ap.add_argument("--note", default="", help="a line for the header (e.g. concurrent jobs)")
    ap.add_argument("--out", help="write the output here too (atomically: temp file, rename)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child))), flush=True)
        return 0
    args.datasets = [d for d in args.datasets.split(",") if d]

    t_start = time.perf_counter()
    code0 = code_digest()
    emit("LS-SVM SMO (Keerthi & Shevade 2003) at 5 x 10^4 rows, LRU kernel-column cache")
    emit(f"benchmarks/lssvm_smo_scale.py {shlex.join(sys.argv[1:] if argv is None else argv)}")
    emit(
        f"started {time.strftime('%Y-%m-%d %H:%M:%S')}; commit {core_version(LSSVM_CODE)}; "
        f"python {sys.version.split()[0]}, numpy {version('numpy')}, scipy {version('scipy')}, "
        f"numba {version('numba')}"
    )
    emit(
        f"machine: {os.cpu_count()} cores shared with other jobs; load average {load_str()} "
        "at the start. Each run is one child process on one core, one at a time."
    )
    if args.note:
        emit(f"note: {args.note}")
    emit(
        f"stop: P - D <= {args.tol:g} D (relative duality gap), start alpha = 0; budget "
        f"{args.budget:g} s of solver time per run (wall cap {1.5 * args.budget:g} s); "
        f"sigma2 = median heuristic; C in {{{', '.join(f'{c:g}' for c in args.c)}}}; "
        f"kernel_cache_mb in {{{', '.join(f'{c:g}' for c in args.cache_mb)}}}"
    )
    results = []
    for spec in grid(args):
        print(
            f"  [{time.strftime('%H:%M:%S')}] {spec['dataset']} C={spec['C']:g} "
            f"cache {spec['cache_mb']:g} MB {spec['pair']} ...",
            flush=True,
        )
        code = code_digest()
        r = run_child(spec, timeout=2.0 * args.budget + 600.0)
        r["load"], r["code"] = load_str().split()[0], code
        results.append((spec, r))
        msg = r.get("error") or (
            f"{r['status']}, {r['iterations']} it, {r['solver_s']:.1f} s, "
            f"gap {r['gap']:.2e}, peak {r['peak_mb']:.0f} MiB"
        )
        print(f"      {msg}", flush=True)
    checks = report(args, results)
    codes = dict.fromkeys([*(r["code"] for _, r in results), code_digest()])
    emit()
    if len(codes) == 1:
        emit(f"LS-SVM code (sha256 of {', '.join(LSSVM_CODE)}): {code0}, unchanged throughout")
    else:
        emit(f"WARNING: the LS-SVM code changed while the grid ran (sha256 at the start {code0}):")
        for i, (s, r) in enumerate(results, 1):
            what = f"{s['dataset']} C={s['C']:g} {s['cache_mb']:g} MB {s['pair']}"
            emit(f"  run {i} ({what}): {r['code']}")
        emit(f"  at the end: {code_digest()}")
    REPORT.finish(checks, t_start)
    if args.out:
        REPORT.write(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
