"""In-process A/B of the interior-point ``iterate`` kernel: an old flat-argument version
against this checkout's struct version, on the same arrays, the calls alternating.

The companion of :mod:`rehline_ab_inproc` (same renamed copy ``solvers_old`` of an older
``solvers/``, same protocol): per task, ``K`` iterations from the method's start, state
reset before each call, old and new alternating for ``R`` rounds; the duals reached are
checked bit-identical::

    .venv/bin/python benchmarks/plq_ipm_ab_inproc.py /tmp/old "kin8nm ElasticQR,a9a FairSVM" 8 8
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
    import solvers_old.plq_ipm as old

    import solvers.plq_ipm as new
    from ermviz.families.plq.ipm import PlqIpmSolver

    only = sys.argv[2].split(",")
    k, rounds = int(sys.argv[3]), int(sys.argv[4])
    tasks = [t for t, _ in rb.tasks_svm(False) + rb.tasks_reg(False) + rb.tasks_cvx(False)]
    seen: set[str] = set()
    # An old version taking the same structs (issue 33 onwards) is called as the new.
    structs = old.iterate.py_func.__code__.co_argcount == new.iterate.py_func.__code__.co_argcount
    for task in [t for t in tasks if any(s in t.name for s in only)]:
        if task.name in seen:
            continue
        seen.add(task.name)
        s = PlqIpmSolver(task.problem, "newton", {}, 1e-6)
        B, qp, pt, w = s._B, s._qp, s._point, s._work
        start = [a.copy() for a in pt]

        def reset(pt=pt, start=start) -> None:
            for a, a0 in zip(pt, start, strict=True):
                a[...] = a0

        def run_new(B=B, qp=qp, pt=pt, w=w, nside=s.nside) -> float:
            reset()
            t0 = time.process_time()
            for _ in range(k):
                new.iterate(B, qp, pt, w, nside)
            return time.process_time() - t0

        def run_old(B=B, qp=qp, pt=pt, w=w, nside=s.nside) -> float:
            reset()
            t0 = time.process_time()
            for _ in range(k):
                if structs:
                    old.iterate(B, qp, pt, w, nside)
                    continue
                old.iterate(
                    B.X, B.A, B.U, B.S, B.l1w, qp.dg, qp.cost, qp.vkind, qp.bn2,
                    pt.beta, pt.mu, pt.su, pt.zl, pt.zu, w.beta_mu, w.rp, w.wm, w.wd,
                    w.M, w.Y, w.sysf, w.sysi, w.fstate, nside,
                )  # fmt: skip
            return time.process_time() - t0

        run_old()  # compile or load both
        mu_old = pt.mu.copy()
        run_new()
        assert np.array_equal(mu_old, pt.mu), task.name
        t_old, t_new = alternate_ab(run_old, run_new, rounds)
        print(ab_line(f"ipm {task.name:32s} {k} iterations:", t_old, t_new), flush=True)


if __name__ == "__main__":
    main()
