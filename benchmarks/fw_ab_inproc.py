"""In-process A/B of the Frank-Wolfe kernels: an older ``solvers/`` against this
checkout's, on the same arrays, the calls alternating (issue 43 changed how the kernels'
arguments are typed and how helpers are called, not what they compute).

Each task builds this checkout's solver (``fw`` and ``bpcg`` on ``svm-dual``, ``fw``,
``pfw``, ``bpcg`` and ``face-newton`` on ``logreg-l1``), takes its kernel's arguments and
hands the same arrays to both kernels. Before each call every writeable array argument is
reset to the start, so both run the same iterations; the final iterates are checked
bit-identical. Separate processes on the shared 2-core machine vary by up to 2x (memory
placement), which hides a 5 % effect; alternating in one process does not.

The old version is a renamed copy of an older ``solvers/`` (so that both import side by
side)::

    git worktree add /tmp/old-tree main
    cp -r /tmp/old-tree/solvers /tmp/old/solvers_old
    sed -i -E 's/from solvers(\\.| import)/from solvers_old\\1/g' /tmp/old/solvers_old/*.py
    .venv/bin/python benchmarks/fw_ab_inproc.py /tmp/old a1a,w1a,phishing,ijcnn1 200 9

Arguments: the directory holding ``solvers_old``, comma-separated data sets, iterations
per call, rounds, optionally comma-separated ``problem:method`` pairs (default all).
Prints per task the min and median CPU seconds of both and the ratios new/old.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
os.environ.setdefault("ERMVIZ_DATA", str(REPO.parent / "shared" / "datasets"))
os.environ.setdefault("ERMVIZ_OFFLINE", "1")

from bench_common import ab_line, alternate_ab  # noqa: E402

#: (problem, method, step rule, problem settings).
RUNS = (
    ("svm-dual", "fw", "diminishing", {}),
    ("svm-dual", "bpcg", "exact", {}),
    ("logreg-l1", "fw", "diminishing", {"radius": 10.0}),
    ("logreg-l1", "pfw", "exact", {"radius": 10.0}),
    ("logreg-l1", "bpcg", "exact", {"radius": 10.0}),
    ("logreg-l1", "face-newton", "armijo", {"radius": 10.0}),
)


def _arrays(obj: Any) -> list[np.ndarray]:
    """Every writeable array in ``obj`` (an array, a tuple of them, nested)."""
    if isinstance(obj, np.ndarray):
        return [obj] if obj.flags.writeable else []
    if isinstance(obj, tuple):
        return [a for o in obj for a in _arrays(o)]
    return []


def kernels(solver: Any, old: Any) -> tuple[Callable, Callable, Callable]:
    """(old call, new call, the arguments) of ``solver``'s kernel: each call takes ``rec``."""
    import solvers.face_newton as fn_new
    import solvers.fw as fw_new
    import solvers.fw_variants as fv_new

    if hasattr(solver, "_args_svm") and solver.problem.name == "svm-dual":
        new_k, old_k, args = fw_new.svm_dual_advance, old.fw.svm_dual_advance, solver._args_svm
    elif hasattr(solver, "_args_logreg"):
        new_k, old_k, args = fw_new.logreg_l1_advance, old.fw.logreg_l1_advance, solver._args_logreg
    else:
        st = solver.state
        if hasattr(st, "wfrac"):
            new_k, old_k = fn_new.fn_advance, old.face_newton.fn_advance
            names = ("MT b set_par loss_par step_params x z g r pv nv wk sg cg s_idx s_val u_idx "
                     "u_val istate fstate").split()  # fmt: skip

            def args(rec, st=st, names=names):
                return (*[getattr(st, n) for n in names], 1e-12, rec, st.wfrac)

        else:
            new_k, old_k = fv_new.fwv_advance, old.fw_variants.fwv_advance
            names = ("MT b set_par loss_par step_params x z g r pv nv s_idx s_val at_idx at_val "
                     "at_nnz mu istate fstate lstate").split()  # fmt: skip

            def args(rec, st=st, names=names):
                return (*[getattr(st, n) for n in names], 1e-12, rec, st.gram)

    return old_k, new_k, args


def main() -> None:
    sys.path.insert(0, sys.argv[1])
    import solvers_old.face_newton
    import solvers_old.fw
    import solvers_old.fw_variants  # noqa: F401

    from ermviz.data import load_dataset
    from ermviz.registry import build_problem, build_solver

    old = sys.modules["solvers_old"]
    datasets = sys.argv[2].split(",")
    iters, rounds = int(sys.argv[3]), int(sys.argv[4])
    only = set(sys.argv[5].split(",")) if len(sys.argv) > 5 else None
    print(f"# fw_ab_inproc: {iters} iterations per call, {rounds} rounds, CPU seconds")
    for name in datasets:
        data = load_dataset(name)
        for problem_name, method, step, settings in RUNS:
            if only is not None and f"{problem_name}:{method}" not in only:
                continue
            problem = build_problem(problem_name, data, **settings)
            solver = build_solver(problem, method, step, {}, 1e-12)
            solver.advance(1, 10**12)  # one step; the kernel's stop iteration: never
            old_k, new_k, args = kernels(solver, old)
            rec = np.empty((iters, solver._rec.shape[1]))  # the kernel's record width
            probe = args(rec)
            start = [a.copy() for a in _arrays(probe)]
            live = _arrays(probe)

            def reset(live=live, start=start) -> None:
                for a, a0 in zip(live, start, strict=True):
                    a[...] = a0

            def call(kernel, args=args, rec=rec, reset=reset) -> float:
                reset()
                a = args(rec)
                t = time.process_time()
                kernel(*a)
                return time.process_time() - t

            def final(kernel, args=args, rec=rec, reset=reset) -> np.ndarray:
                reset()
                a = args(rec)
                kernel(*a)
                return np.concatenate([x.ravel() for x in _arrays(tuple(a)) if x.dtype == float])

            same = np.array_equal(final(old_k), final(new_k))
            t_old, t_new = alternate_ab(
                lambda old_k=old_k, call=call: call(old_k),
                lambda new_k=new_k, call=call: call(new_k),
                rounds,
            )
            form = "csr" if isinstance(args(rec)[0], tuple) else "dense"
            print(ab_line(f"{name:9s} {form:5s} {problem_name:9s} {method:11s}", t_old, t_new)
                  + f"  identical {same}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
