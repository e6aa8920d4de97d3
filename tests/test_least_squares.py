"""Least squares over a set (issue 17): the radius the data choose, and regression data in
the dashboard.

References: numpy's ``lstsq`` for the unconstrained solution, cvxpy + Clarabel for the
constrained optimum.
"""

from __future__ import annotations

import numpy as np
import pytest

from ermviz.app.state.datasets import preset_for
from ermviz.data import load_dataset
from ermviz.data.preprocessing import preprocess
from ermviz.registry import build_problem, build_solver
from solvers.tags import STATUS_CONVERGED

cp = pytest.importorskip("cvxpy")


@pytest.fixture(scope="module")
def diabetes():
    return preprocess(load_dataset("sk-diabetes", with_test=False), standardize=True)


@pytest.mark.parametrize(
    "constraint, norm",
    [
        ("l1", lambda x: np.abs(x).sum()),
        ("l2", np.linalg.norm),
        ("ksparse", lambda x: np.abs(x).max()),
    ],
)
def test_the_default_radius_is_half_the_unconstrained_solutions_norm(diabetes, constraint, norm):
    X = np.asarray(diabetes.X)
    x_ls = np.linalg.lstsq(X, diabetes.y, rcond=None)[0]
    pb = build_problem("least-squares", diabetes, constraint=constraint, K=3)
    assert pb.radius == pytest.approx(0.5 * norm(x_ls), rel=1e-6)
    given = build_problem("least-squares", diabetes, constraint=constraint, K=3, radius=7.0)
    assert given.radius == 7.0 and given.constraint_set.radius == 7.0


def test_the_derived_l1_ball_binds_and_its_optimum_is_cvxpys(diabetes):
    pb = build_problem("least-squares", diabetes)  # l1 ball, derived radius
    solver = build_solver(pb, "pfw", "exact", {}, 1e-9)
    status = 0
    for _ in range(200):
        _, status = solver.advance(1000, 10**9)
        if status != 0:
            break
    assert status == STATUS_CONVERGED
    x = solver.iterate()
    X, y, r = np.asarray(diabetes.X), diabetes.y, pb.radius
    assert np.abs(x).sum() == pytest.approx(r, rel=1e-6)  # the constraint binds
    v = cp.Variable(X.shape[1])
    prob = cp.Problem(cp.Minimize(cp.sum_squares(X @ v - y) / (2 * len(y))), [cp.norm1(v) <= r])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert pb.objective(x) == pytest.approx(prob.value, rel=1e-8)


def test_regression_data_without_a_preset_race_least_squares():
    assert preset_for("sk-diabetes")["problem"] == "least-squares"
    assert preset_for("sk-diabetes")["standardize"] is True
    assert preset_for("abalone")["problem"] == "least-squares"  # a catalog regression set
    assert preset_for("a1a")["problem"] == "svm-dual"
    assert preset_for("lowrank-ratings")["problem"] == "matrix-completion"
