"""face-newton (issue 35) against independent cvxpy + Clarabel solutions.

On a1a, w8a and ijcnn1 (l1-constrained logistic regression, radius 10), the L2-SVM dual
of breast-cancer_scale over the simplex and least squares over a box and a K-sparse
polytope (diabetes_scale), the method must reach a certified FW gap <= 1e-8, meet the
cvxpy objective to max(1e-7 relative, the certificate), keep every recorded iterate
feasible to 1e-12, decrease the objective monotonically, and give the same rows when
paused and resumed in chunks.

The SVM dual runs on breast-cancer_scale: the raw breast-cancer file keeps LIBSVM's
sample-code column (values near 1e6) as feature 1, so its gradient entries are so large
that a gap of 1e-8 is below their rounding (the kernel's and numpy's gaps then differ
by 1e-4).

The smallest faithful cvxpy formulations (w8a's full problem took Clarabel 49 s): the
logistic loss over the distinct rows of ``-y x``, weighted by their counts (the same sum),
and on w8a and ijcnn1 over the columns of face-newton's support only; the reference is
then proved optimal for the *full* problem by its own FW gap computed in numpy
(independent of the kernels), which must be at most 1e-9. Measured on this 2-core
machine: a1a 0.3-0.7 s, w8a 1.8-3.3 s (49 s over all columns), ijcnn1 10-14 s.

The L2-SVM dual over the simplex (issue 47): on phishing, breast-cancer_scale and a1a with
C = 0.1, 1, 10, with and without the intercept, face-newton from its default start must
certify 1e-8 and meet Clarabel's objective (on phishing it used to stall: a coordinate
left at 1e-22 by rounding capped the ratio test at steps of 1e-18, where the Armijo test
compares rounding noise). Its ratio test must drop a blocking coordinate exactly even
when that coordinate is a rounding residue, and a run that cannot progress (tol = 1e-300,
below what float64 resolves) must end as stalled with its reason, not on the time
budget. Measured (2 cores, shared): Clarabel 4-8 s per phishing case, under 0.5 s on the
others; face-newton 0.3-7 s per phishing case.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from ermviz.data import load_dataset
from ermviz.errors import SettingError
from ermviz.experiment import RunConfig, execute
from ermviz.registry import build_problem, build_solver
from ermviz.runner import Budget
from solvers.tags import STATUS_CONVERGED, STATUS_RUNNING, STEP_NAMES

cp = pytest.importorskip("cvxpy")


TOL = 1e-8
#: case: (dataset, problem, problem settings, restrict cvxpy to the support)
CASES = {
    "a1a": ("a1a", "logreg-l1", {"radius": 10.0}, False),
    "w8a": ("w8a", "logreg-l1", {"radius": 10.0}, True),
    "ijcnn1": ("ijcnn1", "logreg-l1", {"radius": 10.0}, True),
    "bc-svm": ("breast-cancer_scale", "svm-dual", {"C": 1.0}, False),
    "ls-box": (
        "diabetes_scale",
        "least-squares",
        {"constraint": "box", "lo": -0.3, "hi": 0.3},
        False,
    ),
    "ls-ksparse": (
        "diabetes_scale",
        "least-squares",
        {"constraint": "ksparse", "radius": 0.3, "K": 3},
        False,
    ),
}
#: Strictly convex problems (X of full column rank): the minimizer is unique, so the
#: iterates must agree too; on the SVM dual the primal w = Z alpha is unique.
UNIQUE = {"ls-box", "ls-ksparse", "bc-svm"}


def _violation(pb, x: np.ndarray) -> float:
    c = pb.constraint_set
    if c.kind == "simplex":
        return max(-x.min(), abs(x.sum() - 1.0))
    if c.kind == "l1":
        return max(np.abs(x).sum() - c.radius, 0.0)
    if c.kind == "box":
        return max(c.lo - x.min(), x.max() - c.hi, 0.0)
    return max(np.abs(x).max() - c.radius, np.abs(x).sum() - c.K * c.radius, 0.0)


def _solve(
    pb, chunk, tol: float = TOL, stop_at: int = 10**6
) -> tuple[np.ndarray, list[np.ndarray], list[str]]:
    """Rows of a face-newton run advanced ``chunk(i)`` rows at the i-th call, the iterate
    after each call, and the trace's columns; it must converge before ``stop_at``."""
    solver = build_solver(pb, "face-newton", "armijo", {}, tol)
    parts, xs = [], []
    for i in range(10_000):
        rows, status = solver.advance(chunk(i), stop_at)
        parts.append(np.array(rows, copy=True))
        xs.append(solver.iterate())
        if status != STATUS_RUNNING:
            assert status == STATUS_CONVERGED, status
            break
    return np.vstack(parts), xs, list(solver.columns)


def _cvx(pb, support: np.ndarray | None) -> tuple[float, np.ndarray]:
    """cvxpy + Clarabel's minimizer (see the module docstring)."""
    opts = {"solver": cp.CLARABEL, "tol_gap_abs": 1e-11, "tol_gap_rel": 1e-11, "tol_feas": 1e-11}
    cols = np.arange(pb.dim) if support is None else support
    if pb.name == "svm-dual":
        Z = sp.csr_matrix(pb.X).multiply(pb.y[:, None]).T.tocsc()
        a = cp.Variable(pb.n)
        obj = cp.sum_squares(Z @ a) + pb.inv_c * cp.sum_squares(a)
        cp.Problem(cp.Minimize(obj), [a >= 0, cp.sum(a) == 1]).solve(**opts)
        return pb.objective(a.value), a.value
    w = cp.Variable(len(cols))
    c = pb.constraint_set
    if pb.name == "logreg-l1":
        A = (sp.csr_matrix(pb.X)[:, cols].multiply(-pb.y[:, None])).toarray()
        rows, counts = np.unique(A, axis=0, return_counts=True)
        obj = counts.astype(float) @ cp.logistic(sp.csr_matrix(rows) @ w) / pb.n
    else:
        X = np.asarray(pb.X.toarray() if sp.issparse(pb.X) else pb.X)[:, cols]
        obj = cp.sum_squares(X @ w - pb.y) / (2.0 * pb.n)
    if c.kind == "l1":
        cons = [cp.norm1(w) <= c.radius]
    elif c.kind == "box":
        cons = [w >= c.lo, w <= c.hi]
    else:
        cons = [cp.abs(w) <= c.radius, cp.norm1(w) <= c.K * c.radius]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "may be inaccurate": the numpy gap below decides
        cp.Problem(cp.Minimize(obj), cons).solve(**opts)
    x = np.zeros(pb.dim)
    x[cols] = w.value
    if c.kind == "l1" and np.abs(x).sum() > c.radius:
        x *= c.radius / np.abs(x).sum()  # the interior-point solution to within 1e-11
    return pb.objective(x), x


class _Cases(dict):
    """Each case's problem, face-newton's run (chunks of one row) and the reference,
    computed on first use: an xdist worker pays only for the cases it runs."""

    def __missing__(self, key: str) -> tuple:
        name, problem, settings, restrict = CASES[key]
        pb = build_problem(problem, load_dataset(name, with_test=False), **settings)
        rows, xs, columns = _solve(pb, lambda i: 1)
        support = np.flatnonzero(xs[-1]) if restrict else None
        t0 = time.perf_counter()
        fstar, xstar = _cvx(pb, support)
        self[key] = (pb, rows, xs, columns, fstar, xstar, time.perf_counter() - t0)
        return self[key]


@pytest.fixture(scope="session")
def cases(real_data, requires_data) -> _Cases:
    requires_data(*sorted({name for name, *_ in CASES.values()}))
    return _Cases()


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.slow
def test_certified_and_agrees_with_cvxpy(cases, case: str) -> None:
    pb, rows, xs, columns, fstar, xstar, seconds = cases[case]
    # The reduced cvxpy formulations stay cheap: measured 1.8 s (w8a; 49 s unreduced) and
    # 10 s (ijcnn1) on this 2-core machine.
    print(f"cvxpy reference of {case}: {seconds:.2f} s")
    assert seconds < 60, seconds
    col = {c: i for i, c in enumerate(columns)}
    f, gap = rows[:, col["objective"]], rows[:, col["certificate"]]
    # The reference is optimal for the full problem, proved by its own numpy FW gap.
    ref_gap = pb.certificate(xstar)
    assert ref_gap <= 1e-9, ref_gap
    assert _violation(pb, xstar) <= 1e-9
    # Certified, and the certificate is the numpy FW gap of the final iterate.
    x = xs[-1]
    assert gap[-1] <= TOL
    assert pb.certificate(x) == pytest.approx(gap[-1], rel=1e-6, abs=1e-12)
    assert pb.objective(x) == pytest.approx(f[-1], rel=1e-12, abs=1e-15)
    # The objective meets the reference's, to max(1e-7 relative, the certificate).
    assert abs(f[-1] - fstar) <= max(1e-7 * abs(fstar), gap[-1] + ref_gap), (f[-1], fstar)
    # The certificate bounds the suboptimality at every row; the objective never rises.
    slack = 1e-12 * max(1.0, abs(fstar)) + ref_gap
    assert np.all(gap >= f - fstar - slack)
    assert np.all(np.diff(f) <= 0.0), np.diff(f).max()
    # Feasible at every recorded row (chunks of one row: one iterate per row).
    assert max(_violation(pb, xi) for xi in xs) <= 1e-12
    if case in UNIQUE:
        if pb.name == "svm-dual":
            np.testing.assert_allclose(pb.w_of(x), pb.w_of(xstar), atol=1e-4)
        else:
            np.testing.assert_allclose(x, xstar, atol=1e-5)
    # The steps are face steps (newton / drop), with FW steps (pairwise on the simplex)
    # only as the fallback, and the counters of the inexact solves only grow.
    names = {STEP_NAMES[int(t)] for t in rows[:, col["step_type"]]}
    fallback = "pairwise" if pb.constraint_set.kind == "simplex" else "fw"
    assert names <= {"newton", "drop", fallback, "none"}, names
    assert "newton" in names or "drop" in names
    for name in ("hvps", "lmo_calls", "data_passes", "grad_evals"):
        assert np.all(np.diff(rows[:, col[name]]) >= 0), name
    assert rows[-1, col["hvps"]] > 0


@pytest.mark.parametrize("case", ["a1a", "bc-svm", "ls-ksparse"])
@pytest.mark.slow
def test_pause_and_resume_give_the_same_rows(cases, case: str) -> None:
    pb, rows, *_ = cases[case]
    again, _, _ = _solve(pb, lambda i: i % 3 + 2)
    np.testing.assert_allclose(again, rows, rtol=1e-12, atol=0)


def test_bad_settings_name_the_parameter() -> None:
    pb = build_problem("logreg-l1", load_dataset("toy-2d"), radius=2.0)
    with pytest.raises(SettingError, match="enter_frac"):
        build_solver(pb, "face-newton", "armijo", {"enter_frac": 2.0}, TOL)
    with pytest.raises(SettingError, match="cg_rtol"):
        build_solver(pb, "face-newton", "armijo", {"cg_rtol": 0.0}, TOL)
    l2 = build_problem("logreg-l1", load_dataset("toy-2d"), radius=2.0, constraint="l2")
    with pytest.raises(SettingError, match="face-newton needs"):
        build_solver(l2, "face-newton", "armijo", {}, TOL)


# ----------------------------------------------------------------- the SVM dual (issue 47)
SVM_DATA = ("phishing", "breast-cancer_scale", "a1a")
SVM_CASES = [(d, C, icpt) for d in SVM_DATA for C in (0.1, 1.0, 10.0) for icpt in (False, True)]


def _svm_param(case: tuple[str, float, bool]) -> pytest.param:
    name, C, icpt = case
    # phishing: Clarabel 4-8 s and face-newton 3-10 s per case on this machine.
    marks = [pytest.mark.long(seconds=20)] if name == "phishing" else []
    marks.append(pytest.mark.slow)  # (20-70 s each on a loaded machine: the full tier)
    return pytest.param(case, id=f"{name}-C{C:g}-{'icpt' if icpt else 'noicpt'}", marks=marks)


class _SvmCases(dict):
    """Each SVM case's problem, face-newton's run (chunks of 64 rows) and Clarabel's
    reference, computed on first use."""

    def __missing__(self, key: tuple[str, float, bool]) -> tuple:
        name, C, icpt = key
        pb = build_problem("svm-dual", load_dataset(name, with_test=False), C=C, intercept=icpt)
        # At most 2000 iterations (measured: at most 134; PFW takes 1 000 to 121 000).
        rows, xs, columns = _solve(pb, lambda i: 64, stop_at=2000)
        fstar, xstar = _cvx(pb, None)
        self[key] = (pb, rows, xs[-1], columns, fstar, xstar)
        return self[key]


@pytest.fixture(scope="session")
def svm_cases(real_data, requires_data) -> _SvmCases:
    requires_data(*SVM_DATA)
    return _SvmCases()


@pytest.mark.parametrize("case", [_svm_param(c) for c in SVM_CASES])
def test_svm_dual_certified_from_the_default_start(svm_cases, case) -> None:
    pb, rows, x, columns, fstar, xstar = svm_cases[case]
    col = {c: i for i, c in enumerate(columns)}
    f, gap = rows[:, col["objective"]], rows[:, col["certificate"]]
    xstar = np.maximum(xstar, 0.0) / np.maximum(xstar, 0.0).sum()
    ref_gap = pb.certificate(xstar)  # the reference's own numpy FW gap
    assert ref_gap <= 1e-9, ref_gap
    # Converged (_solve asserts it), certified, and the certificate is numpy's.
    assert gap[-1] <= TOL
    assert pb.certificate(x) == pytest.approx(gap[-1], rel=1e-6, abs=1e-12)
    assert abs(f[-1] - fstar) <= max(1e-7 * fstar, gap[-1] + ref_gap), (f[-1], fstar)
    assert _violation(pb, x) <= 1e-12
    # The objective never rises beyond its rounding (a sum of n + d squares, from scratch
    # at every row: steps below it near the optimum show as noise of a few ulps).
    assert np.all(np.diff(f) <= 1e-14 * f[:-1]), np.diff(f).max()
    # The primal w = Z alpha is unique: ||A (alpha - alpha*)||^2 <= f - f* for the dual's
    # A = [Z; I / sqrt(C)] (f is quadratic and alpha* optimal), so w is within the gap.
    dw = pb.w_of(x) - pb.w_of(xstar)
    assert dw @ dw <= 1.01 * (gap[-1] + ref_gap) + 1e-14, (dw @ dw, gap[-1])
    # Face steps, with pairwise steps as the only fallback (never a FW step).
    names = {STEP_NAMES[int(t)] for t in rows[:, col["step_type"]]}
    assert names <= {"newton", "drop", "pairwise", "none"}, names


def _simplex_state(Z: np.ndarray, x0: np.ndarray):
    from solvers import face_newton as fn
    from solvers.linalg import as_kernel_matrix
    from solvers.lmo import SET_CODES, set_params
    from solvers.steps import default_step_params

    # The L2-SVM dual's layout: ||Z^T alpha||^2 + ||alpha||^2 / C with C = 1.
    return fn, fn.new_state(
        as_kernel_matrix(Z), np.zeros(Z.shape[1]), SET_CODES["simplex"], set_params(), 0,
        np.array([1.0, 1.0]), default_step_params(), x0,
    )  # fmt: skip


@pytest.mark.parametrize("seed", range(10))
def test_ratio_test_drops_a_rounding_residue_exactly(seed: int) -> None:
    """A coordinate at 1e-22 (what rounding leaves behind) whose gradient the face wants
    to shrink caps the ratio test at a step of ~1e-21: the step must set it to exactly 0
    and go on along the path without it, decreasing f as a full Newton step would (before:
    3 of these 10 took a FW step instead, which only rescales the residue, so the next
    iteration met the same bound)."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((60, 8)) + 0.5
    x = np.zeros(60)
    x[:20] = 1.0 / 20
    g = 2.0 * Z @ (Z.T @ x) + 2.0 * x
    j = 20 + int(np.argmax(g[20:]))
    x[j], x[0] = 1e-22, x[0] - 1e-22

    def f(a: np.ndarray) -> float:
        w = Z.T @ a
        return float(w @ w + a @ a)

    fn, st = _simplex_state(Z, x)
    rec = np.zeros((1, len(fn.FN_RECORD_COLUMNS)))
    fn.advance(st, rec, 1e-12, 10**6)
    assert STEP_NAMES[int(rec[0, 4])] == "drop"
    assert st.x[j] == 0.0
    assert abs(st.x.sum() - 1.0) <= 1e-15 and st.x.min() >= 0.0
    # Past the residue's bound: the decrease of a real step, not of a 1e-21 one.
    assert f(st.x) < f(x) - 1e-3 * (f(x) - 0.0), (f(x), f(st.x))


@pytest.mark.parametrize(
    "problem,settings", [("svm-dual", {"C": 1.0}), ("logreg-l1", {"radius": 10.0})]
)
def test_a_run_that_cannot_progress_ends_stalled_with_its_reason(problem, settings) -> None:
    """tol = 1e-300 is below what float64 certifies on standardized wdbc: once the FW gap
    is at rounding level (1e-13 to 1e-15) no step decreases f any more, and the run must
    end as stalled with its reason, not on its budget (before: face-newton on svm-dual ran
    to max_time, 112 000 iterations in 10 s)."""
    from ermviz.experiment import Preprocessing

    cfg = RunConfig(
        "wdbc", problem, "face-newton", "armijo", settings,
        Budget(tol=1e-300, max_iter=20_000, max_time=60.0),
        Preprocessing(standardize=True),
    )  # fmt: skip
    frame, summary = execute(cfg)
    assert summary["status"] == "stalled", summary
    message = summary["message"]
    assert "\n" not in message and "has not decreased beyond float64 rounding" in message
    assert "raise tol" in message
    assert summary["iterations"] < 500 and summary["gap"] < 1e-12
    assert frame["step_type"].iloc[-1] == "none"
    # The objective is flat, to its rounding, over the last 50 rows.
    f = frame["objective"].to_numpy()
    assert f[-50:].max() - f[-50:].min() <= 1e-14 * abs(f[-1])
