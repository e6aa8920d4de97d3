"""Run each Frank-Wolfe kernel once on tiny bundled problems, before the first click.

numba compiles a kernel per argument type (dense or CSR matrix, per problem) and keeps
it in an on-disk cache; loading that cache still costs a fraction of a second per kernel
in a fresh process. Running this at server start makes the first Start click immediate::

    panel serve app.py --setup ermviz/app/warmup.py

It also runs as ``python -m ermviz.app.warmup`` (fills the on-disk cache after an
install) and :func:`warm_up` can be called from any process.
"""

from __future__ import annotations

import time

from ermviz.data import load_dataset
from ermviz.registry import METHODS, build_problem, build_solver


def warm_up(verbose: bool = False) -> float:
    """Build and advance every FW method on dense and sparse data of both problems, then
    build the dashboard's default race (loads its dataset into the cache).

    Returns the seconds it took.
    """
    t0 = time.perf_counter()
    datasets = {
        "dense": load_dataset("toy-2d"),
        "sparse": load_dataset("sparse-synthetic", n=40, p=60, density=0.2),
    }
    for kind, ds in datasets.items():
        for problem_name, settings in (("svm-dual", {}), ("logreg-l1", {"radius": 3.0})):
            problem = build_problem(problem_name, ds, **settings)
            for method, spec in METHODS.items():
                # The dashboard's races start with the Frank-Wolfe family; other families
                # compile on their first use (warming them all takes minutes when cold).
                if problem_name not in spec.problems or spec.family != "frank-wolfe":
                    continue
                for step in spec.step_rules:
                    solver = build_solver(problem, method, step, {}, 1e-6)
                    solver.advance(5, 5)
            if verbose:
                print(f"warm: {problem_name} on {kind} data ({time.perf_counter() - t0:.2f} s)")
    # The dashboard's default race, built but not started: its data is then in the data
    # layer's cache and every code path of a Start click has run once.
    from ermviz.app.model import DashboardModel

    slots = DashboardModel(notifier=lambda level, message: None).prepare()
    if verbose:
        states = ", ".join(f"{s.label}: {s.status}" for s in slots)
        print(f"warm: default race built ({states}; {time.perf_counter() - t0:.2f} s)")
    return time.perf_counter() - t0


if __name__ in ("__main__", "panel_setup_module"):
    seconds = warm_up(verbose=__name__ == "__main__")
    print(f"ermviz: numba kernels warm ({seconds:.2f} s)")
