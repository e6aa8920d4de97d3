"""One contract over every registered (problem, method) pair, with its default step rule.

In the spirit of scikit-learn's ``check_estimator`` and benchopt's solver tests: the
registry is read at collection time, so a method added to any family is checked without
editing this file. On a tiny bundled set per problem, each solver must

* answer a zero-row call with no row, a valid status and its iterate unchanged;
* write the six base columns first (``solvers.tags.BASE_COLUMNS``), and a first row that
  describes the start point: iteration 0, the problem's own objective of its initial
  point (numpy reference, independent of the kernels) where the method records it exactly;
* give the same rows advanced in chunks of 1, 2, 3, ... rows (the runner's pause and
  resume) as in one call;
* return only known statuses, and an iterate of the initial point's shape;
* end, when asked to stop at iteration K, on a row of iteration K (or earlier, with
  another final status) tagged as no step taken (``STEP_NONE``);
* where it takes a warm start (the estimators' ``warm_start=True``): a start point of the
  iterate's length before the first step only, with one-line errors otherwise.
"""

from __future__ import annotations

import numpy as np
import pytest

from ermviz.data import load_dataset
from ermviz.registry import METHODS, PROBLEMS, build_problem, build_solver
from solvers.tags import (
    BASE_COLUMNS,
    KERNEL_STATUS_NAMES,
    STATUS_MAX_ITER,
    STATUS_RUNNING,
    STEP_NONE,
)

#: A tiny bundled set and settings for each problem (fast to build, every kernel path).
DATA = {
    "svm-dual": (("toy-2d", {}), {}),
    "logreg-l1": (("toy-2d", {}), {"radius": 3.0}),
    "least-squares": (("sk-diabetes", {}), {}),
    "matrix-completion": (("lowrank-ratings", {}), {}),
    "plq": (("toy-2d", {}), {}),
    "nonconvex-l1": (("toy-2d", {}), {}),
    "invariant-logreg": (("cso-synthetic", {"n": 2_000, "d": 5, "seed": 0}), {}),
    "maml-sine": (("sine-tasks", {"n": 400, "seed": 0}), {}),
    "lssvm": (("toy-2d", {}), {}),
}
#: Settings a method needs on top of its problem's (a method that solves part of what a
#: problem's settings allow: primal-newton solves the differentiable PLQ losses only).
METHOD_SETTINGS = {("plq", "primal-newton"): {"loss": "svm2"}}
#: Steps each run is asked to stop at.
K = 12
TOL = 1e-12  # never reached in K steps on these sets, except by exact methods


def _pairs() -> list:
    missing = sorted(set(PROBLEMS) - set(DATA))
    assert not missing, f"tests/test_method_contract.py: add a tiny set for {missing}"
    return [
        pytest.param(problem, method, id=f"{problem}-{method}")
        for method, spec in METHODS.items()
        for problem in spec.problems
    ]


_problems: dict[str, object] = {}


def _problem(name: str, method: str = ""):
    extra = METHOD_SETTINGS.get((name, method), {})
    key = (name, tuple(sorted(extra.items())))
    if key not in _problems:
        (dataset, kw), settings = DATA[name]
        _problems[key] = build_problem(name, load_dataset(dataset, **kw), **settings, **extra)
    return _problems[key]


def _solver(problem: str, method: str):
    return build_solver(_problem(problem, method), method, METHODS[method].step, {}, TOL)


def _run(solver, chunk) -> tuple[np.ndarray, list[int]]:
    """Advance to iteration K (rows of ``chunk(i)`` at the i-th call); all rows, statuses."""
    parts, statuses = [], []
    for i in range(10 * K):
        rows, status = solver.advance(chunk(i), K)
        parts.append(np.array(rows, copy=True))
        statuses.append(int(status))
        if status != STATUS_RUNNING:
            break
    return np.vstack(parts), statuses


@pytest.mark.parametrize("problem, method", _pairs())
def test_every_method_keeps_the_solver_contract(problem: str, method: str) -> None:
    pb = _problem(problem, method)
    x0 = np.asarray(pb.initial_point())
    solver = _solver(problem, method)
    assert tuple(solver.columns[: len(BASE_COLUMNS)]) == BASE_COLUMNS, solver.columns
    col = {name: i for i, name in enumerate(solver.columns)}

    # A zero-row call: no row, a known status, nothing moved.
    rows, status = solver.advance(0, K)
    assert np.asarray(rows).shape == (0, len(solver.columns))
    assert int(status) in KERNEL_STATUS_NAMES
    assert solver.iteration == 0
    np.testing.assert_allclose(solver.iterate(), x0, rtol=1e-12, atol=1e-300)

    whole, statuses = _run(solver, lambda i: 10 * K)
    assert all(s in KERNEL_STATUS_NAMES for s in statuses), statuses
    # The first row is the start point.
    assert whole[0, col["iteration"]] == 0
    assert whole[0, col["objective"]] == pytest.approx(pb.objective(x0), rel=1e-9, abs=1e-12)
    # Iterations increase (every one, or the stochastic methods' checkpoints) and end at
    # K when the run ends on the iteration budget (earlier: converged, stalled, or a
    # work budget such as SAA's samples).
    its = whole[:, col["iteration"]]
    assert np.all(np.diff(its) > 0), its
    assert statuses[-1] != STATUS_RUNNING
    if statuses[-1] == STATUS_MAX_ITER:
        assert its[-1] == K, its
    else:
        assert its[-1] <= K, its
    # The final row is tagged: no step taken from it.
    assert whole[-1, col["step_type"]] == STEP_NONE
    assert np.all(whole[:-1, col["step_type"]] != STEP_NONE)
    assert solver.iterate().shape == x0.shape

    # Paused and resumed (chunks of 1, 2, 3, ... rows): the same rows.
    again, _ = _run(_solver(problem, method), lambda i: i % 3 + 1)
    np.testing.assert_allclose(again, whole, rtol=1e-12, atol=0, equal_nan=True)


#: The methods that start from a given point (the estimators' ``warm_start=True``).
WARM_STARTS = [
    ("logreg-l1", "face-newton", "coordinates"),
    ("plq", "primal-newton", "coefficients"),
    ("lssvm", "cg-reduced", "dual coefficients"),
    ("lssvm", "smo", "dual coefficients"),
]


@pytest.mark.parametrize("problem, method, what", WARM_STARTS)
def test_a_warm_start_is_checked_and_taken_before_the_first_step(problem, method, what):
    from ermviz.errors import SettingError

    solver = _solver(problem, method)
    x0 = solver.iterate()
    with pytest.raises(SettingError, match=f"warm start has {x0.shape[0] + 1} {what}"):
        solver.warm_start(np.zeros(x0.shape[0] + 1))
    solver.warm_start(x0)  # its own start point: accepted
    solver.advance(1, K)
    assert solver.iteration > 0
    with pytest.raises(SettingError, match="before the first step"):
        solver.warm_start(x0)
