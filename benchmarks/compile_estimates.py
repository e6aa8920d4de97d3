"""Write ``ermviz/compile_estimates.py``: the compile seconds the first-run notices and the
dashboard's warm-up quote (issue 43).

* ``FIRST_RUN["problem:method:storage"]``: for every method on every problem it solves,
  on a small dense and a small CSR data set (where the problem takes them), a child
  process with an empty numba cache builds the problem and the solver and advances it a
  few steps, as a first CLI run or a first fit does; the figure is the CPU seconds of
  numba's outermost ``numba:compile`` events (the compilations, not the imports).
* ``WARMUP_ITEM[label]`` and ``WARMUP_KIND[label]``: per item of the warm-up plan, its CPU
  seconds compiled in plan order from an empty cache and its kind, read from a
  ``benchmarks/compile_times.py`` JSON (``--from``).

CPU seconds, not wall: on the shared machine wall time is several times CPU time, and on
an idle machine the two agree; the warm-up scales them by the speed it observes.

Usage::

    .venv/bin/python benchmarks/compile_times.py --out benchmarks/results/compile_times_after.txt
    .venv/bin/python benchmarks/compile_estimates.py \\
        --from benchmarks/results/compile_times_after.json [--skip-first-run]
"""

from __future__ import annotations

import argparse
import json
import os
import pprint
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_common import core_version, write_atomic

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "ermviz" / "compile_estimates.py"

#: (problem, storage) -> (dataset, load options, problem settings).
DATA = {
    ("svm-dual", "dense"): ("toy-2d", {}, {}),
    ("svm-dual", "csr"): ("sparse-synthetic", {"n": 40, "p": 60, "density": 0.2}, {}),
    ("logreg-l1", "dense"): ("toy-2d", {}, {"radius": 3.0}),
    ("logreg-l1", "csr"): ("sparse-synthetic", {"n": 40, "p": 60, "density": 0.2}, {"radius": 3.0}),
    ("least-squares", "dense"): ("sk-diabetes", {}, {}),
    ("least-squares", "csr"): ("sparse-synthetic", {"n": 40, "p": 60, "density": 0.2}, {}),
    ("nonconvex-l1", "dense"): ("toy-2d", {}, {}),
    ("nonconvex-l1", "csr"): ("sparse-synthetic", {"n": 40, "p": 60, "density": 0.2}, {}),
    ("plq", "dense"): ("toy-2d", {}, {}),
    ("plq", "csr"): ("sparse-synthetic", {"n": 40, "p": 60, "density": 0.2}, {}),
    ("lssvm", "dense"): ("toy-2d", {}, {}),
    ("lssvm", "csr"): ("sparse-synthetic", {"n": 40, "p": 60, "density": 0.2}, {}),
    ("matrix-completion", "csr"): ("lowrank-ratings", {}, {}),
    ("invariant-logreg", "dense"): ("cso-synthetic", {}, {}),
    ("maml-sine", "dense"): ("sine-tasks", {}, {}),
}

_CHILD = r"""
import json, sys, time
import numba.core.event as ev
depth = [0]
spent = [0.0]
class L(ev.Listener):
    def on_start(self, e):
        if depth[0] == 0:
            self.t = time.thread_time()
        depth[0] += 1
    def on_end(self, e):
        depth[0] -= 1
        if depth[0] == 0:
            spent[0] += time.thread_time() - self.t
ev.register("numba:compile", L())
from ermviz.data import load_dataset
from ermviz.registry import build_problem, build_solver, get_method
problem, method, dataset, load, settings = json.loads(sys.argv[1])
pb = build_problem(problem, load_dataset(dataset, **load), **settings)
step = get_method(method).step_rules[0]
build_solver(pb, method, step, {}, 1e-6).advance(5, 5)
print(json.dumps({"compile": spent[0]}))
"""


def first_run() -> dict[str, float]:
    from ermviz.registry import METHODS

    out: dict[str, float] = {}
    for method, spec in METHODS.items():
        for problem in spec.problems:
            for storage in ("dense", "csr"):
                if (problem, storage) not in DATA:
                    continue
                dataset, load, settings = DATA[(problem, storage)]
                arg = json.dumps([problem, method, dataset, load, settings])
                with tempfile.TemporaryDirectory(prefix="ermviz-numba-cache-") as cache:
                    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "ERMVIZ_OFFLINE": "1"}
                    env.pop("ERMVIZ_DATA", None)
                    proc = subprocess.run(
                        [sys.executable, "-c", _CHILD, arg],
                        env=env, capture_output=True, text=True, cwd=REPO,
                    )  # fmt: skip
                key = f"{problem}:{method}:{storage}"
                if proc.returncode != 0:
                    print(f"{key}: skipped ({proc.stderr.strip().splitlines()[-1:]})", flush=True)
                    continue
                out[key] = round(json.loads(proc.stdout.strip().splitlines()[-1])["compile"], 2)
                print(f"{key}: {out[key]} s", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="source", type=Path, required=True)
    ap.add_argument("--skip-first-run", action="store_true", help="keep FIRST_RUN as it is")
    args = ap.parse_args(argv)
    data = json.loads(args.source.read_text())
    item_cpu = {k: round(v, 2) for k, v in data["items_cpu"].items()}
    item_kind = dict(data["items_kind"])
    if args.skip_first_run:
        sys.path.insert(0, str(REPO))
        from ermviz.compile_estimates import FIRST_RUN

        runs = dict(FIRST_RUN)
    else:
        runs = first_run()
    stamp = time.strftime("%Y-%m-%d")
    text = f'''"""Measured compile seconds (issue 43), written by
``benchmarks/compile_estimates.py``.

``FIRST_RUN["problem:method:storage"]``: CPU seconds numba spends compiling the kernels
of that run in a fresh process with an empty cache (the first run after an install),
read by :mod:`ermviz.compile_notice` for its "~N s". ``WARMUP_ITEM[label]``: CPU seconds
of each item of the dashboard's warm-up plan (:func:`ermviz.app.serving.warmup.plan`) compiled
in plan order from an empty cache, read by :mod:`ermviz.app.serving.warmup` for its estimates
(scaled there by the speed the warm-up observes on the machine it runs on), and
``WARMUP_KIND[label]`` which kernels it compiles.
"""

from __future__ import annotations

#: Where and when the figures were measured.
MEASURED = "{stamp}, core {core_version()}, the project's 2-core machine (CPU seconds)"

FIRST_RUN: dict[str, float] = {pprint.pformat(runs, width=88, sort_dicts=True)}

WARMUP_ITEM: dict[str, float] = {pprint.pformat(item_cpu, width=88, sort_dicts=False)}

#: Each warm-up item's kind (solver class and storage,
#: :func:`ermviz.app.serving.warmup_plan.kind_of`): two processes never compile one kind
#: at once.
WARMUP_KIND: dict[str, str] = {pprint.pformat(item_kind, width=88, sort_dicts=False)}
'''
    write_atomic(OUT, text)
    subprocess.run([sys.executable, "-m", "ruff", "format", str(OUT)], cwd=REPO, check=False)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
