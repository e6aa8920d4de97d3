"""FW / AFW / PFW x every step rule against independent cvxpy + Clarabel solutions.

On a1a and breast-cancer, for both problems (svm-dual, logreg-l1):

* every method with a line search (armijo, exact, adaptive) reaches certificate <= 1e-6
  (vanilla FW on a1a's logistic regression 1e-5, see ``VANILLA_TOL``):
  away-step and pairwise FW converge linearly (Lacoste-Julien & Jaggi 2015) and meet the
  cvxpy objective to 1e-6 relative; vanilla FW converges at O(1/k), needs millions of
  iterations here (seconds each with the SVM dual's Gram-column cache, about a minute
  on a1a's logistic regression) and meets the cvxpy objective to the certified
  tolerance, absolute (relative 1e-6 on a1a's SVM dual, f* = 1.55e-3, would take ~1000x more);
* the open-loop rules ``diminishing`` (2/(k+2)) and ``nonconvex`` (1/sqrt(k+1)), and the
  ``short`` rule with the global L, stop at a documented iteration cap: at 1e-6 they
  would need ~1e9 or more iterations (measured: AFW + short on a1a's SVM dual is at gap
  2.8e-3 after 3.3 M iterations). For them the test checks the known rate instead:
  ``f(x_K) - f* <= 2 L D^2 / (K + 2)`` (Jaggi 2013, Theorem 1; D = diameter of the set);
* at every recorded row the certificate (FW gap) bounds the suboptimality: gap >= f - f*.
"""

from __future__ import annotations

import numpy as np
import pytest

from ermviz.data import load_dataset
from ermviz.families.frank_wolfe.problems import LogregL1, SvmDual
from ermviz.registry import build_problem, build_solver
from ermviz.runner import Budget, Run

cp = pytest.importorskip("cvxpy")

CONVERGING = {
    ("fw", "armijo"),
    ("fw", "exact"),
    ("fw", "adaptive"),
    ("afw", "armijo"),
    ("afw", "exact"),
    ("afw", "adaptive"),
    ("pfw", "armijo"),
    ("pfw", "exact"),
    ("pfw", "adaptive"),
}
METHODS = ("fw", "afw", "pfw")
STEPS = ("diminishing", "nonconvex", "armijo", "exact", "short", "adaptive")
CAP = 20_000  # iteration cap of the sublinear combinations (documented in README)


def _cvx_svm_dual(pb: SvmDual) -> float:
    import scipy.sparse as sp

    Z = sp.csr_matrix(pb.X).multiply(pb.y[:, None]).T.tocsc()
    a = cp.Variable(pb.n)
    obj = cp.sum_squares(Z @ a) + pb.inv_c * cp.sum_squares(a)
    prob = cp.Problem(cp.Minimize(obj), [a >= 0, cp.sum(a) == 1])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return float(prob.value)


def _cvx_logreg_l1(pb: LogregL1) -> float:
    import scipy.sparse as sp

    w = cp.Variable(pb.p)
    A = sp.csr_matrix(pb.X).multiply(-pb.y[:, None]).tocsr()
    obj = cp.sum(cp.logistic(A @ w)) / pb.n
    prob = cp.Problem(cp.Minimize(obj), [cp.norm1(w) <= pb.radius])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return float(prob.value)


CASES = {
    "a1a-svm": ("a1a", "svm-dual", {"C": 1.0}),
    "a1a-logreg": ("a1a", "logreg-l1", {"radius": 10.0}),
    "bc-svm": ("breast-cancer_scale", "svm-dual", {"C": 1.0}),
    "bc-logreg": ("breast-cancer_scale", "logreg-l1", {"radius": 5.0}),
}


class _References(dict):
    """(problem, cvxpy's optimum) per case, solved on first use: the fast tier runs only the
    small cases, and need not pay for a1a's reference."""

    def __missing__(self, key: str):
        name, problem, settings = CASES[key]
        pb = build_problem(problem, load_dataset(name), **settings)
        fstar = _cvx_svm_dual(pb) if problem == "svm-dual" else _cvx_logreg_l1(pb)
        self[key] = (pb, fstar)
        return self[key]


@pytest.fixture(scope="module")
def references(real_data, requires_data):
    requires_data(*sorted({name for name, _, _ in CASES.values()}))
    return _References()


def _diameter_sq(pb) -> float:
    return 2.0 if isinstance(pb, SvmDual) else (2.0 * pb.radius) ** 2


#: The certified tolerance every converging combination must reach, and the looser one of
#: vanilla FW on a1a's logistic regression: at O(1/k) 1e-6 took it 10.3M iterations and up
#: to 436 s of the suite on CI (a third of a worker's time); 1e-5 makes the same claims
#: (converged, certificate >= f - f* at every row, f* met to the certificate) in ~10x less.
TOL = 1e-6
VANILLA_TOL = {"a1a-logreg": 1e-5}

#: The vanilla-FW cases on a1a run 10^5-10^6 iterations: seconds each, measured on 2
#: shared cores (tests/conftest.py spreads them over the xdist workers).
LONG_SECONDS = {
    ("adaptive", "fw", "a1a-logreg"): 70,
    ("exact", "fw", "a1a-logreg"): 35,
    ("armijo", "fw", "a1a-logreg"): 15,
    ("adaptive", "fw", "a1a-svm"): 35,
    ("armijo", "fw", "a1a-svm"): 35,
    ("exact", "fw", "a1a-svm"): 25,
}


def _cases() -> list:
    # Same ids as stacked parametrize decorators would give (step-method-case).
    out = []
    for case in CASES:
        for method in METHODS:
            for step in STEPS:
                cost = LONG_SECONDS.get((step, method, case))
                marks = [pytest.mark.long(seconds=cost)] if cost else []
                if case.startswith("a1a") or method == "fw":
                    # (the fast tier keeps the active-set methods on breast-cancer; vanilla
                    # FW's O(1/k) to 1e-6 takes 30-90 s there on a loaded machine)
                    marks.append(pytest.mark.slow)
                out.append(
                    pytest.param(case, method, step, id=f"{step}-{method}-{case}", marks=marks)
                )
    return out


@pytest.mark.parametrize("case, method, step", _cases())
def test_against_cvxpy(references, case, method, step):
    pb, fstar = references[case]
    tol = VANILLA_TOL.get(case, TOL) if method == "fw" else TOL
    solver = build_solver(pb, method, step, {}, tol=tol)
    converging = (method, step) in CONVERGING
    max_iter = (50_000_000 if method == "fw" else 400_000) if converging else CAP
    # The iteration cap is the claim; the time budget only guards against a hang. Solver
    # time is wall time of the solver's thread: the suite's other worker (browsers, Jupyter
    # servers) stretched vanilla FW on a1a (470 s idle, 10.3M iterations) past 400 s.
    run = Run(solver, Budget(tol=tol, max_iter=max_iter, max_time=3000))
    run.run()
    frame = run.frame()
    f = frame["objective"].to_numpy()
    gap = frame["certificate"].to_numpy()
    # The certificate bounds the suboptimality at every recorded row.
    slack = 1e-9 * max(1.0, abs(fstar))
    assert np.all(gap >= f - fstar - slack), (gap - (f - fstar)).min()
    # The objective never goes below the optimum (beyond the reference's accuracy).
    assert f.min() >= fstar - slack
    # The numpy reference agrees with what the kernel recorded at the final iterate.
    x = solver.iterate()
    assert pb.objective(x) == pytest.approx(f[-1], rel=1e-10, abs=1e-13)
    assert pb.certificate(x) == pytest.approx(gap[-1], rel=1e-6, abs=1e-12)
    if converging or run.status == "converged":
        assert run.status == "converged", run.message
        assert gap[-1] <= tol
        if method == "fw":
            # O(1/k): the certified gap is all vanilla FW delivers at this budget. On a1a's
            # SVM dual (f* = 1.55e-3) 1e-6 relative would take ~1000x the iterations.
            assert f[-1] == pytest.approx(fstar, abs=tol)
        else:
            assert f[-1] == pytest.approx(fstar, rel=1e-6)
    else:
        assert run.status == "max_iter", run.message
        K = int(frame["iteration"].iloc[-1])
        assert K == CAP
        bound = 2.0 * pb.lipschitz() * _diameter_sq(pb) / (K + 2.0)
        if step == "nonconvex":
            # 1/sqrt(k+1) steps: h_K <= (h_0 + L D^2/2 * sum gamma_k^2) ... decays like
            # log(K)/sqrt(K); check the weaker O(log K / sqrt K) envelope.
            bound = pb.lipschitz() * _diameter_sq(pb) * (1 + np.log(K)) / np.sqrt(K)
        assert f[-1] - fstar <= bound
        # Progress was made: the suboptimality fell at least twentyfold.
        assert f[-1] - fstar < 0.05 * (f[0] - fstar)


@pytest.mark.requires_data("breast-cancer_scale")
def test_svm_primal_recovery_matches_cvxpy_primal(real_data):
    """w = Z alpha, rho = f(alpha*), primal value -f*/2 against the primal solved directly."""
    from ermviz.data import preprocess

    ds = preprocess(load_dataset("breast-cancer_scale"), test_size=0.2, seed=0)
    pb = build_problem("svm-dual", ds, C=1.0)
    run = Run(build_solver(pb, "pfw", "exact", {}, 1e-12), Budget(tol=1e-12)).run()
    assert run.status == "converged"
    alpha = run.solver.iterate()
    rec = pb.primal(alpha)
    Xa = np.asarray(pb.X.todense()) if hasattr(pb.X, "todense") else pb.X
    w, rho, xi = cp.Variable(Xa.shape[1]), cp.Variable(), cp.Variable(pb.n)
    obj = 0.5 * cp.sum_squares(w) - rho + 0.5 * cp.sum_squares(xi)
    cons = [cp.multiply(pb.y, Xa @ w) >= rho - xi]
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    np.testing.assert_allclose(rec["w"], w.value, rtol=1e-5, atol=1e-7)
    assert rec["rho"] == pytest.approx(rho.value, rel=1e-6)
    assert prob.value == pytest.approx(-0.5 * pb.objective(alpha), rel=1e-6)
    # Test metrics come from sign(w^T [x; 1]) on the held-out 20 %.
    m = pb.test_metrics(alpha)
    scores = np.asarray(
        np.hstack(
            [
                ds.X_test.toarray() if hasattr(ds.X_test, "toarray") else ds.X_test,
                np.ones((ds.X_test.shape[0], 1)),
            ]
        )
        @ w.value
    ).ravel()
    ref_acc = np.mean(np.where(scores >= 0, 1.0, -1.0) == ds.y_test)
    assert m["test_accuracy"] == pytest.approx(ref_acc, abs=1.0 / len(ds.y_test) + 1e-12)


@pytest.mark.requires_data("diabetes_scale")
def test_pairwise_never_loses_weight_below_rounding_level(real_data):
    """A tolerance below float resolution: once the FW and away atoms coincide the
    direction is zero; the run must stall cleanly with its weights intact."""
    pb = build_problem("logreg-l1", load_dataset("diabetes_scale"), radius=0.3, start="vertex")
    solver = build_solver(pb, "pfw", "exact", {}, 1e-20)
    run = Run(solver, Budget(tol=1e-20, max_iter=2000)).run()
    assert run.status in ("stalled", "converged")
    assert solver.active_weights().sum() == pytest.approx(1.0, abs=1e-12)
    f = run.frame()["objective"].to_numpy()
    assert f[-1] <= f[0]
