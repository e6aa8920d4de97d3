"""Issue 47: face-newton against PFW on the L2-SVM dual, to a certified FW gap of 1e-8.

Problem (our ``svm-dual``, exactly as the product builds it): ``min_{alpha in simplex}
||Z alpha||^2 + ||alpha||^2 / C`` on phishing, breast-cancer_scale and a1a, C = 0.1, 1,
10, with and without the appended constant feature (``intercept``), from the default
start (``e1``): 18 cases. Both methods run through the product's path (``make_problem``
/ ``build_solver`` and the solver's chunked ``advance``), warm (numba compiled, each run
once before timing), BLAS on one thread, in one process, alternating face-newton and PFW
``--repeats`` times; a run's time is the seconds inside ``advance`` (what the runner's
trace counts as solver time). Reported per case: the median time, iterations, final FW
gap, data passes and objective of each, and the ratio of medians face-newton / PFW,
which must be at most 2 (issue 47's acceptance) with face-newton certified. ``--data``
runs other datasets the same way (e.g. ``--data ijcnn1-20k,w7a``).

Usage::

    export ERMVIZ_DATA=/work/shared/datasets
    .venv/bin/python benchmarks/fn_svm_dual.py                      # the 18 cases
    .venv/bin/python benchmarks/fn_svm_dual.py --data a1a --repeats 1
    .venv/bin/python benchmarks/fn_svm_dual.py --out benchmarks/results/fn_svm_dual.txt
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from bench_common import Report, core_version, load_str, table  # noqa: E402

os.environ.setdefault("ERMVIZ_DATA", str(REPO.parent / "shared" / "datasets"))
os.environ.setdefault("ERMVIZ_OFFLINE", "1")

from threadpoolctl import threadpool_limits  # noqa: E402

from ermviz.data import load_dataset  # noqa: E402
from ermviz.registry import build_problem, build_solver  # noqa: E402
from solvers.tags import KERNEL_STATUS_NAMES, STATUS_RUNNING  # noqa: E402

DATASETS = ("phishing", "breast-cancer_scale", "a1a")
CS = (0.1, 1.0, 10.0)
TOL = 1e-8
#: (method, step rule): face-newton's only rule; PFW with the default race's exact step.
METHODS = (("face-newton", "armijo"), ("pfw", "exact"))


def run(pb: Any, method: str, step: str, budget: float) -> dict[str, Any]:
    """One run from the default start to FW gap <= TOL (or ``budget`` solver seconds)."""
    s = build_solver(pb, method, step, {}, TOL)
    cols = list(s.columns)
    total, status, rec = 0.0, STATUS_RUNNING, None
    chunk = 64
    while status == STATUS_RUNNING and total < budget:
        t0 = time.perf_counter()
        rows, status = s.advance(chunk, 10**12)
        total += time.perf_counter() - t0
        if rows.shape[0]:
            rec = np.array(rows[-1], copy=True)
        chunk = min(4 * chunk, 4096)
    assert rec is not None
    out = {
        "time": total,
        "iterations": int(s.iteration),
        "gap": float(rec[cols.index("certificate")]),
        "objective": float(rec[cols.index("objective")]),
        "status": KERNEL_STATUS_NAMES.get(status, "running"),
    }
    out["passes"] = float(rec[cols.index("data_passes")]) if "data_passes" in cols else np.nan
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=",".join(DATASETS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--budget", type=float, default=120.0, help="solver seconds per run")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    rep = Report()
    t_start = time.perf_counter()
    rep.emit(f"fn_svm_dual: face-newton vs PFW on svm-dual to FW gap {TOL:g}")
    rep.emit(f"core {core_version()}; load average {load_str()}; repeats {args.repeats}")
    headers = ["data", "C", "icpt", "method", "time_s", "its", "passes", "gap", "status"]
    rows: list[list[object]] = []
    ratios: list[tuple[str, float, bool]] = []
    warnings.simplefilter("ignore")
    with threadpool_limits(1):
        for name in args.data.split(","):
            ds = load_dataset(name, with_test=False)
            for C in CS:
                for icpt in (False, True):
                    pb = build_problem("svm-dual", ds, C=C, intercept=icpt)
                    for m, st in METHODS:  # warm: compile or load, and touch the data
                        run(pb, m, st, 0.05)
                    runs: dict[str, list[dict[str, Any]]] = {m: [] for m, _ in METHODS}
                    for _ in range(args.repeats):
                        for m, st in METHODS:
                            runs[m].append(run(pb, m, st, args.budget))
                    med = {m: statistics.median(r["time"] for r in runs[m]) for m in runs}
                    for m, _ in METHODS:
                        last = runs[m][-1]
                        rows.append(
                            [name, C, int(icpt), m, med[m], last["iterations"],
                             last["passes"], last["gap"], last["status"]]
                        )  # fmt: skip
                    fn = runs["face-newton"][-1]
                    ok = fn["status"] == "converged" and fn["gap"] <= TOL
                    ratio = med["face-newton"] / max(med["pfw"], 1e-9)
                    ratios.append((f"{name} C={C:g} icpt={int(icpt)}", ratio, ok))
                    rep.emit(
                        f"  {name} C={C:g} icpt={int(icpt)}: face-newton {med['face-newton']:.3f}"
                        f" s ({fn['iterations']} its, gap {fn['gap']:.2e}), pfw {med['pfw']:.3f}"
                        f" s ({runs['pfw'][-1]['iterations']} its): ratio {ratio:.3f}"
                    )
    rep.emit()
    rep.emit(table(headers, rows))
    rep.emit()
    rep.emit(table(["case", "fn/pfw"], [[c, r] for c, r, _ in ratios]))
    checks = [
        (
            "face-newton certifies 1e-8 in every case",
            all(ok for *_, ok in ratios),
            ", ".join(c for c, _, ok in ratios if not ok) or "all",
        ),
        (
            "face-newton time <= 2 x PFW's in every case (medians)",
            all(r <= 2.0 for _, r, _ in ratios),
            f"largest ratio {max(r for _, r, _ in ratios):.3f}",
        ),
    ]
    rep.finish(checks, t_start)
    if args.out:
        rep.write(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
