"""In-process A/B of the ReHLine ``epochs`` kernel: an old flat-argument version against
this checkout's struct version, on the same arrays, the calls alternating.

Issue 33 (workspace structs instead of 18-21 array arguments) had to leave the kernels'
speed unchanged. Timings in separate processes on the shared 2-core machine varied by up
to 2x between processes (memory placement), which hid a 5 % effect; here both kernels run
in one process on the same arrays, reset to the same start before each call (old, new,
then new, old, ...), and the final ``beta`` of both is checked bit-identical.

The old version is a renamed copy of an older ``solvers/`` (so that both import side by
side)::

    git worktree add /tmp/old-tree main
    cp -r /tmp/old-tree/solvers /tmp/old/solvers_old
    sed -i -E 's/from solvers(\\.| import)/from solvers_old\\1/g' /tmp/old/solvers_old/*.py
    .venv/bin/python benchmarks/rehline_ab_inproc.py /tmp/old "C=1,(paper)" 1000 10

Arguments: the directory holding ``solvers_old``, comma-separated substrings of
:mod:`rehline_bench` task names, epochs per call, rounds. Prints per task the min and
median CPU seconds of both and the ratios new/old.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))


from bench_common import ab_line, alternate_ab  # noqa: E402


def main() -> None:
    sys.path.insert(0, sys.argv[1])
    import rehline_bench as rb
    import solvers_old.rehline as old

    import solvers.rehline as new
    from ermviz.families.plq.rehline import ReHLineSolver

    only = sys.argv[2].split(",")
    k, rounds = int(sys.argv[3]), int(sys.argv[4])
    big = np.iinfo(np.int64).max
    tasks = [t for t, _ in rb.tasks_svm(False) + rb.tasks_reg(False)]
    # An old version taking the same structs (issue 33 onwards) is called as the new.
    structs = old.epochs.py_func.__code__.co_argcount == new.epochs.py_func.__code__.co_argcount
    for task in [t for t in tasks if any(s in t.name for s in only)]:
        s = ReHLineSolver(task.problem, "cd", {"seed": 0}, 1e-6)
        d, du, w = s._data, s._duals, s._work
        start = [a.copy() for a in (*du, *w)]

        def reset(du=du, w=w, start=start) -> None:
            for a, a0 in zip((*du, *w), start, strict=True):
                a[...] = a0

        def run_new(d=d, du=du, w=w) -> float:
            reset()
            t0 = time.process_time()
            new.epochs(d, du, w, big, k)
            return time.process_time() - t0

        def run_old(d=d, du=du, w=w) -> float:
            reset()
            t0 = time.process_time()
            if structs:
                old.epochs(d, du, w, big, k)
                return time.process_time() - t0
            old.epochs(
                d.X, d.PL, d.PH, d.rows.A, d.rows.b, d.rows.asq, d.l1w,
                du.beta, du.xi, du.lam, du.lam1, du.gam,
                w.idx_lam, w.idx_gam, w.buf, w.beta_start, big, k, w.istate, w.fstate, w.rng,
            )  # fmt: skip
            return time.process_time() - t0

        run_old()  # compile or load both
        b_old = du.beta.copy()
        run_new()
        assert np.array_equal(b_old, du.beta), task.name
        t_old, t_new = alternate_ab(run_old, run_new, rounds)
        print(ab_line(f"{task.name:32s} K={k}", t_old, t_new), flush=True)


if __name__ == "__main__":
    main()
