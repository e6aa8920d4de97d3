"""Reproduce the headline comparisons of Xiong & Freund's Tables C-2 and C-3.

Xiong & Freund, "Using Taylor-approximated gradients to improve the Frank-Wolfe method for
empirical risk minimization" (SIAM J. Optim.), Appendix C: time until the exact FW gap
(convex, Table C-2) or its running average (non-convex, Table C-3) first reaches a
threshold, for TUFW (Rule-SBD / Rule-DBD sqrt(k)) against FW, FW-ada (Pedregosa, Negiar,
Askari & Jaggi, AISTATS 2020), SPIDER-FW (Yurtsever, Sra & Cevher, ICML 2019) and CSFW
(Negiar et al., ICML 2020). The paper's numbers are CPU seconds; so are ours (the solver
thread's CPU time, evaluation of the exact gap excluded), with wall seconds beside them
(this machine's 2 cores are shared with other jobs, so wall time overstates).

Set-ups (see benchmarks/sweeps/tufw_table_c2.toml and tufw_table_c3.toml for the full
tables through the sweep engine):

* convex (``--part convex``): ``logreg-l1`` with radius 100 x the cross-validated radius
  on the paper's eight data sets (a1a, a2a, w1a, svmguide3, phishing, ijcnn1, a9a, w8a);
  TUFW with the adaptive step (B-6);
* non-convex (``--part nonconvex``): ``nonconvex-l1`` (loss ``1 - tanh``, radius 10: both
  unconfirmed choices, see tufw_table_c3.toml) on the same eight plus w7a (the paper's
  w-series rows); TUFW with the anytime rules SBD / DBD sqrt(k) and (B-6) capped by
  1/sqrt(k+1). Two extra columns (``SBD-p2``, ``DBD-p2``) rebuild ``h = H x`` every
  iteration, i.e. pay the paper's O(p^2) per iteration; they are in neither the baseline
  nor the TUFW set;
* non-convex at the CV radii (``--part nonconvex-cv``, not in ``both``): the other reading
  of the paper's set-up, on a1a, w1a, w8a, svmguide3, phishing, ijcnn1: the CV radii, TUFW
  with the K^(1/4) rules of the paper's non-convex theorem. (With the sqrt(k) rules and
  step caps ~ 1/sqrt(k), the steps between two refreshes, ~ sqrt(k) iterations apart, add
  up to O(1): the Taylor error need not shrink, and measured at these radii TUFW's running
  average grows.)

Every run has a wall-clock deadline (``--cap`` seconds, evaluation included); a blank
time means the threshold was not reached, and a speed-up against blank baselines reads
``>= x`` with x = (longest CPU time any baseline ran) / (best TUFW time).

    export ERMVIZ_DATA=/work/shared/datasets
    for part in convex nonconvex nonconvex-cv; do
        python benchmarks/tufw_tables.py --part $part --cap 60 --tufw-cap 60 --out $part.txt
    done

benchmarks/results/tufw_tables.txt holds the three outputs one after the other.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from ermviz.experiment import RunConfig, make_run
from ermviz.runner import Budget

# Cross-validated radii (ermviz.model_selection.choose_radius_cv defaults).
CV_RADIUS = {
    "a1a": 100.0,
    "a2a": 100.0,
    "w1a": 316.2277660168379,
    "svmguide3": 100.0,
    "phishing": 316.2277660168379,
    "ijcnn1": 1000.0,
    "a9a": 316.2277660168379,
    "w8a": 1000.0,
}

# (label, method, step, extra settings): the paper's columns, plus (non-convex) TUFW with
# the paper's O(p^2) gradient estimate per iteration (h = H x rebuilt every iteration
# instead of the O(p) update), to show what the h = H x trick changes.
CONVEX_METHODS = [
    ("FW", "fw", "diminishing", {}),
    ("FW-ada", "fw-ada", "adaptive", {}),
    ("SPIDER-FW", "spider-fw", "diminishing", {}),
    ("CSFW", "csfw", "diminishing", {}),
    ("TUFW-SBD", "tufw-sbd-sqrtk", "taylor-adaptive", {}),
    ("TUFW-DBD", "tufw-dbd-sqrtk", "taylor-adaptive", {}),
]
NONCONVEX_METHODS = [
    ("FW", "fw-nc", "nonconvex", {}),
    ("FW-ada", "fw-ada", "adaptive", {}),
    ("SPIDER-FW", "spider-fw", "nonconvex", {}),
    ("CSFW", "csfw", "nonconvex", {}),
    ("TUFW-SBD", "tufw-sbd-sqrtk", "taylor-adaptive", {}),
    ("TUFW-DBD", "tufw-dbd-sqrtk", "taylor-adaptive", {}),
    ("SBD-p2", "tufw-sbd-sqrtk", "taylor-adaptive", {"rebuild_h_every": 1}),
    ("DBD-p2", "tufw-dbd-sqrtk", "taylor-adaptive", {"rebuild_h_every": 1}),
]
# Non-convex, second setting ("nonconvex-cv"): the cross-validated radii of the convex
# problem and the rules of the paper's non-convex theorem (Rule-SBD / Rule-DBD K^(1/4),
# horizon K fixed in advance), TUFW with (B-6) capped by 1/sqrt(K+1), FW with the constant
# step 1/sqrt(K+1) of the same K (the paper's a1a row took 1.6e5 iterations to 1e-3).
HORIZON = 1_000_000
NONCONVEX_CV_METHODS = [
    ("FW", "fw-nc", "constant-sqrt", {"K": HORIZON}),
    ("FW-ada", "fw-ada", "adaptive", {}),
    ("SPIDER-FW", "spider-fw", "nonconvex", {}),
    ("CSFW", "csfw", "nonconvex", {}),
    ("TUFW-SBD", "tufw-sbd-k4", "taylor-adaptive", {"K": HORIZON, "cap": "constant-sqrt"}),
    ("TUFW-DBD", "tufw-dbd-k4", "taylor-adaptive", {"K": HORIZON, "cap": "constant-sqrt"}),
]
NONCONVEX_CV_EPS = dict.fromkeys(
    ("a1a", "w1a", "w8a", "svmguide3", "phishing", "ijcnn1"), (5e-2, 1e-2, 1e-3)
)
BASELINES = ("FW", "FW-ada", "SPIDER-FW", "CSFW")
CHOSEN = ("TUFW-SBD", "TUFW-DBD")

# The paper's eight data sets; its thresholds differ by data set (1e-1 .. 1e-7), so every
# row gets the same list.
CONVEX_EPS = dict.fromkeys(
    ("a1a", "a2a", "w1a", "svmguide3", "phishing", "ijcnn1", "a9a", "w8a"),
    (1e-1, 1e-3, 1e-5, 1e-7),
)
# Non-convex: the same eight plus w7a (the paper's w-series rows: w1a, w2a, w7a, w8a).
NONCONVEX_EPS = dict.fromkeys(
    ("a1a", "a2a", "w1a", "w7a", "w8a", "svmguide3", "phishing", "ijcnn1", "a9a"),
    (5e-2, 1e-2, 1e-3),
)
NONCONVEX_RADIUS = 10.0  # see benchmarks/sweeps/tufw_table_c3.toml for why not the CV radii

# The paper's CPU seconds where ALGORITHMS.md B.8 quotes them (blank = > 5000 s there).
PAPER_CONVEX = {
    ("ijcnn1", 1e-3): {"TUFW-SBD": 2.32, "TUFW-DBD": 0.64, "FW-ada": 243.63, "speed-up": 379},
    ("ijcnn1", 1e-7): {"TUFW-DBD": 0.92, "FW-ada": 607.30},
    ("phishing", 1e-1): {"TUFW-DBD": 1.20, "FW": 66.23, "CSFW": 64.96, "SPIDER-FW": 3563.61},
    ("phishing", 1e-3): {"TUFW-DBD": 2.45, "FW": 3958.88, "speed-up": 1613},
    ("svmguide3", 1e-5): {"TUFW-DBD": 6.08, "FW-ada": 844.46},
    # a9a and w8a are quoted at 1e-4, between our rows 1e-3 and 1e-5: on the 1e-5 row, marked.
    ("a9a", 1e-5): {"at 1e-4: TUFW-SBD": 97.60, "TUFW-DBD": 45.91, "others": "> 5000"},
    ("w8a", 1e-5): {"at 1e-4: TUFW-DBD": 4608.20, "others": "> 5000"},
}
PAPER_NONCONVEX = {
    ("a1a", 1e-3): {"TUFW-SBD": 90.34, "TUFW-DBD": 65.11, "FW": 818.40, "FW-ada": 237.93},
    ("ijcnn1", 1e-2): {"TUFW-DBD": 10.00, "FW": 728.57, "speed-up": 72.85},
    ("svmguide3", 1e-3): {"TUFW-DBD": 33.68, "FW-ada": 2946.23},
    ("w8a", 5e-2): {"TUFW-DBD": 216.21, "SPIDER-FW": 3.25, "FW": 16.41},
    ("w1a", 5e-2): {"w-series speed-up": "0.02-0.4 (TUFW loses)"},
    ("w7a", 5e-2): {"w-series speed-up": "0.02-0.4 (TUFW loses)"},
    ("a9a", 1e-2): {"speed-up": 0.58, "best": "SPIDER-FW"},
}


def run_one(cfg: RunConfig, cap: float, metric: str) -> dict:
    """Run ``cfg`` with a wall deadline; return its trace's times and the run's summary."""
    run = make_run(cfg)
    t0 = time.perf_counter()
    run.start()
    if not run.join(cap):
        run.stop()
        run.join()
    wall = time.perf_counter() - t0
    fr = run.frame()
    return {
        "status": run.status,
        "iterations": int(fr["iteration"].iloc[-1]),
        "cert": fr[metric].to_numpy(),
        "iters": fr["iteration"].to_numpy(),
        "cpu": fr["cpu_s"].to_numpy(),
        "time": fr["time_s"].to_numpy(),
        "cpu_total": run.cpu_s,
        "time_total": run.time_s,
        "eval_s": float(getattr(run.solver, "eval_seconds", 0.0)),
        "wall": wall,
    }


def first_hit(res: dict, eps: float) -> tuple[float, float, int] | None:
    hit = np.flatnonzero(res["cert"] <= eps)
    if not hit.size:
        return None
    i = int(hit[0])
    return float(res["cpu"][i]), float(res["time"][i]), int(res["iters"][i])


def table(
    title: str,
    results: dict,
    eps_of: dict,
    paper: dict,
    methods: list,
) -> list[str]:
    labels = [m[0] for m in methods]
    lines = [title, ""]
    head = "| data | eps | " + " | ".join(labels) + " | speed-up | paper |"
    lines += [head, "|" + "---|" * (len(labels) + 4)]
    for ds, eps_list in eps_of.items():
        if ds not in results:
            continue
        for eps in eps_list:
            cells = []
            best_base, best_tufw = math.inf, math.inf
            for lab in labels:
                res = results[ds][lab]
                hit = first_hit(res, eps)
                if hit is None:
                    cells.append("")
                    continue
                cpu, wall, it = hit
                cells.append(f"{cpu:.3g} ({wall:.3g}; {it:.2g})")
                if lab in BASELINES:
                    best_base = min(best_base, cpu)
                elif lab in CHOSEN:
                    best_tufw = min(best_tufw, cpu)
            if not math.isfinite(best_tufw):
                speed = ""
            elif math.isfinite(best_base):
                speed = f"{best_base / best_tufw:.3g}"
            else:
                ran = max(results[ds][lab]["cpu_total"] for lab in labels if lab in BASELINES)
                speed = f">= {ran / best_tufw:.3g}"
            ref = paper.get((ds, eps), {})
            ref_txt = ", ".join(
                f"{k} {v:g}" if isinstance(v, float | int) else f"{k} {v}" for k, v in ref.items()
            )
            lines.append(f"| {ds} | {eps:g} | " + " | ".join(cells) + f" | {speed} | {ref_txt} |")
    lines.append("")
    lines.append(
        "cells: CPU s (wall s; iteration) at the first checkpoint at or below eps; blank = "
        "not reached within the run's budget. Paper: CPU s from Appendix C (ALGORITHMS.md "
        "B.8)."
    )
    return lines


def runs_summary(results: dict, methods: list) -> list[str]:
    lines = ["| data | method | status | iterations | CPU s | wall s (solver) | eval s |"]
    lines.append("|---|---|---|---|---|---|---|")
    for ds, per in results.items():
        for lab, *_ in methods:
            r = per[lab]
            lines.append(
                f"| {ds} | {lab} | {r['status']} | {r['iterations']} | {r['cpu_total']:.3g} | "
                f"{r['time_total']:.3g} | {r['eval_s']:.3g} |"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="write the tables to this file")
    ap.add_argument("--cap", type=float, default=120.0, help="wall deadline per baseline run")
    ap.add_argument("--tufw-cap", type=float, default=120.0, help="wall deadline per TUFW run")
    ap.add_argument(
        "--part",
        choices=("convex", "nonconvex", "nonconvex-cv", "both"),
        default="both",
        help="both = convex and nonconvex; nonconvex-cv = the non-convex problem at the CV "
        "radii with the K^(1/4) rules (not part of both)",
    )
    ap.add_argument("--datasets", nargs="*", default=None, help="restrict to these")
    ap.add_argument(
        "--loss",
        choices=("tanh", "sigmoid"),
        default="tanh",
        help="non-convex loss: 1 - tanh(margin) or the sigmoid loss (the paper's is unconfirmed)",
    )
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    lines = [
        "# TUFW vs FW-type baselines (Xiong & Freund, Tables C-2 / C-3)",
        "",
        f"machine: 2 shared cores; baseline wall deadline {args.cap:g} s, TUFW "
        f"{args.tufw_cap:g} s per run (evaluation of the exact gap included in the "
        "deadline, excluded from the times).",
        "",
    ]
    t_start = time.perf_counter()
    parts = ("convex", "nonconvex") if args.part == "both" else (args.part,)
    for part in parts:
        convex = part == "convex"
        at_cv = part == "nonconvex-cv"
        eps_of = CONVEX_EPS if convex else NONCONVEX_CV_EPS if at_cv else NONCONVEX_EPS
        methods = CONVEX_METHODS if convex else NONCONVEX_CV_METHODS if at_cv else NONCONVEX_METHODS
        results: dict = {}
        for ds in eps_of:
            if args.datasets and ds not in args.datasets:
                continue
            results[ds] = {}
            for lab, method, step, extra in methods:
                if convex:
                    settings = {"radius": 100.0 * CV_RADIUS[ds]}
                    problem, metric, tol = "logreg-l1", "certificate", min(eps_of[ds])
                else:
                    radius = CV_RADIUS[ds] if at_cv else NONCONVEX_RADIUS
                    settings = {"radius": radius, "loss": args.loss, "metric": "avg-fw-gap"}
                    problem, metric, tol = "nonconvex-l1", "avg_fw_gap", min(eps_of[ds])
                settings.update(extra)
                cap = args.tufw_cap if method.startswith("tufw") else args.cap
                cfg = RunConfig(
                    ds,
                    problem,
                    method,
                    step,
                    settings,
                    # A horizon-K method stops at K; every other one runs to its deadline.
                    Budget(tol=tol, max_iter=extra.get("K", 10**10), max_time=cap),
                    label=lab,
                )
                res = run_one(cfg, cap, metric)
                results[ds][lab] = res
                print(
                    json.dumps(
                        {
                            "part": part,
                            "dataset": ds,
                            "method": lab,
                            "status": res["status"],
                            "iterations": res["iterations"],
                            "cpu_s": round(res["cpu_total"], 4),
                            "wall_s": round(res["wall"], 1),
                            "hits": {
                                f"{e:g}": first_hit(res, e) and round(first_hit(res, e)[0], 4)
                                for e in eps_of[ds]
                            },
                        }
                    ),
                    file=sys.stderr,
                    flush=True,
                )
        loss = "1 - tanh" if args.loss == "tanh" else "sigmoid"
        if convex:
            title = "## Convex (Table C-2 setting): logreg-l1, radius 100 x CV radius; exact FW gap"
        elif at_cv:
            title = (
                f"## Non-convex at the CV radii: nonconvex-l1 ({loss}), TUFW with the K^(1/4) "
                f"rules and FW with 1/sqrt(K+1), K = {HORIZON}; running-average FW gap"
            )
        else:
            title = (
                f"## Non-convex (Table C-3 setting): nonconvex-l1 ({loss}), radius 10; "
                "running-average FW gap"
            )
        lines += table(title, results, eps_of, PAPER_CONVEX if convex else PAPER_NONCONVEX, methods)
        lines += ["", "Runs:", "", *runs_summary(results, methods), ""]
    lines.append(f"total wall time {time.perf_counter() - t_start:.0f} s")
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
