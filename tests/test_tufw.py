"""TUFW and its baselines (solvers/tufw.py, ermviz/families/tufw/).

* the loss triples and the ``nonconvex-l1`` reference math against finite differences;
* right after a full refresh the Taylor estimate ``q + H x`` is the exact gradient;
* the rank-one-maintained ``q``, ``H``, ``h = H x``, ``kappa = x^T H x`` equal a
  from-scratch build after thousands of partial resets;
* each Taylor-point rule resets exactly the samples its definition says (how many at each
  iteration, which iterations for the deterministic rules, which samples for SBD);
* the replay that evaluates the exact gap reproduces the kernel's iterate bitwise and the
  recorded objective / gap equal the numpy reference;
* on a1a, TUFW, FW and the baselines reach the cvxpy + Clarabel optimum of ``logreg-l1``;
* non-convex runs record and stop on the running average of the gap;
* seeded reproducibility, the ``fw-ada`` alias, the CLI and the sweep configs.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from ermviz.data import load_dataset
from ermviz.families.frank_wolfe.methods import FrankWolfeSolver
from ermviz.families.tufw.adapters import GlmFrankWolfeSolver, TufwSolver
from ermviz.families.tufw.problem import NonconvexL1
from ermviz.registry import build_problem, build_solver
from ermviz.runner import Budget, Run
from solvers import tufw as k

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def a1a(real_data, requires_data):
    requires_data("a1a")
    return load_dataset("a1a")


@pytest.fixture(scope="module")
def svmguide3(real_data, requires_data):
    requires_data("svmguide3")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_dataset("svmguide3")


def _feasible_point(p: int, radius: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(p)
    return 0.7 * radius * x / np.abs(x).sum()


# -- losses and the non-convex problem ----------------------------------------------------
@pytest.mark.parametrize("code", [k.LOSS_LOGISTIC, k.LOSS_TANH, k.LOSS_SIGMOID])
def test_loss_triples_match_finite_differences(code):
    ts = np.linspace(-30.0, 30.0, 241)
    for y in (-1.0, 1.0):
        for t in ts:
            v, d1 = k.loss_vd1(code, y, t)
            d1b, d2 = k.loss_d12(code, y, t)
            assert d1 == pytest.approx(d1b, rel=1e-14, abs=1e-300)
            u = y * t
            exact = {
                k.LOSS_LOGISTIC: np.logaddexp(0.0, -u),
                k.LOSS_TANH: 1.0 - np.tanh(u),
                k.LOSS_SIGMOID: 1.0 / (1.0 + np.exp(u)),
            }[code]
            assert v == pytest.approx(exact, rel=1e-12, abs=1e-15)
            if abs(t) < 15:
                h = 1e-5
                fd1 = (k.loss_vd1(code, y, t + h)[0] - k.loss_vd1(code, y, t - h)[0]) / (2 * h)
                fd2 = (k.loss_d12(code, y, t + h)[0] - k.loss_d12(code, y, t - h)[0]) / (2 * h)
                assert d1 == pytest.approx(fd1, rel=1e-6, abs=1e-9)
                assert d2 == pytest.approx(fd2, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("loss", ["tanh", "sigmoid"])
def test_nonconvex_problem_gradient_and_gap(svmguide3, loss):
    pb = build_problem("nonconvex-l1", svmguide3, radius=5.0, loss=loss)
    assert isinstance(pb, NonconvexL1)
    x = _feasible_point(pb.p, 5.0, 1)
    g = pb.gradient(x)
    e = np.zeros(pb.p)
    for j in range(pb.p):
        e[:] = 0.0
        e[j] = 1e-6
        fd = (pb.objective(x + e) - pb.objective(x - e)) / 2e-6
        assert g[j] == pytest.approx(fd, rel=1e-5, abs=1e-9)
    assert pb.certificate(x) == pytest.approx(g @ x + 5.0 * np.abs(g).max(), rel=1e-14)
    assert 0.0 <= pb.objective(x) <= (2.0 if loss == "tanh" else 1.0)


# -- TUFW state ---------------------------------------------------------------------------
def _tufw(pb, step="taylor-exact", **settings):
    return build_solver(pb, "tufw", step, settings, tol=1e-12)


def _problems(a1a, svmguide3):
    return [
        build_problem("logreg-l1", a1a, radius=10.0),  # CSR
        build_problem("logreg-l1", svmguide3, radius=50.0),  # dense
        build_problem("nonconvex-l1", a1a, radius=10.0, loss="tanh"),
        build_problem("nonconvex-l1", svmguide3, radius=50.0, loss="sigmoid"),
    ]


@pytest.mark.slow
def test_estimate_is_exact_gradient_after_full_refresh(a1a, svmguide3):
    for pb in _problems(a1a, svmguide3):
        s = _tufw(pb)
        x = _feasible_point(pb.p, pb.radius, 3)
        s.x[:] = x
        k.tufw_full_refresh(
            s._X,
            s._XT,
            pb.y,
            s.istate[k.I_LOSS],
            s.x,
            s.t,
            s.q,
            s.H,
            s.h,
            s._wbuf,
            s._cbuf,
            s.fstate,
        )
        g = pb.gradient(x)
        np.testing.assert_allclose(
            s.gradient_estimate, g, rtol=0, atol=1e-10 * max(1, abs(g).max())
        )
        assert s.fstate[k.F_KAPPA] == pytest.approx(x @ s.hessian() @ x, rel=1e-12, abs=1e-14)
        # The Hessian of F at x, too (rank-one sum of l'' a a^T / n).
        Xd = pb.X.toarray() if hasattr(pb.X, "toarray") else pb.X
        _, d2 = np.vectorize(lambda yy, tt, c=s.istate[k.I_LOSS]: k.loss_d12(c, yy, tt))(
            pb.y, Xd @ x
        )
        np.testing.assert_allclose(s.hessian(), (Xd.T * d2) @ Xd / pb.n, atol=1e-12)


def test_estimate_exact_right_after_dbd_refresh_in_a_run(a1a):
    """Run DBD-sqrt(k) up to iteration 9 (a perfect square): its refresh resets every
    Taylor point to x_9, so the estimate there is the exact gradient at x_9."""
    pb = build_problem("logreg-l1", a1a, radius=10.0)
    s = _tufw(pb, rule="dbd-sqrtk", eval_growth=0.0)
    log = np.zeros((9, k.N_LOG))
    s.istate[k.I_STOP_AT] = 10**9
    assert s._kernel(log) == 9  # iterations 0..8
    x9 = s.x.copy()
    g_exact = pb.gradient(x9)
    log1 = np.zeros((1, k.N_LOG))
    s._kernel(log1)  # iteration 9: full refresh, then the step
    assert log1[0, k.LOG_REFRESHES] - log[-1, k.LOG_REFRESHES] == pb.n
    # The estimate the step used: q + H x_9 (h was moved on to x_10 by the step).
    g_est = s.q + s.hessian() @ x9
    np.testing.assert_allclose(g_est, g_exact, rtol=0, atol=1e-10 * abs(g_exact).max())
    gap_est = g_est @ x9 + pb.radius * np.abs(g_est).max()
    assert log1[0, k.LOG_EST_GAP] == pytest.approx(gap_est, rel=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("which", [0, 1, 2, 3])
def test_maintained_state_equals_scratch_build(a1a, svmguide3, which):
    pb = _problems(a1a, svmguide3)[which]
    s = _tufw(pb, rule="sbd-sqrtk", rebuild_h_every=0, rebuild_H_passes=0, eval_growth=0.0)
    s.istate[k.I_STOP_AT] = 10**9
    log = np.zeros((3000, k.N_LOG))
    assert s._kernel(log) == 3000
    # From-scratch builds only at k = 0 and k = 1 (|B_1| = n); all else rank-one updates.
    assert s.istate[k.I_REBUILDS] == 2
    q, H, h = np.zeros_like(s.q), np.zeros_like(s.H), np.zeros_like(s.h)
    f = np.zeros(k.N_FSTATE)
    w, c = np.zeros(pb.n), np.zeros(pb.n)
    k.tufw_rebuild(s._X, s._XT, pb.y, s.istate[k.I_LOSS], s.x, s.t, q, H, h, w, c, f)
    scale = max(1.0, np.abs(H).max())
    np.testing.assert_allclose(np.triu(s.H), np.triu(H), rtol=0, atol=1e-11 * scale)
    np.testing.assert_allclose(s.q, q, rtol=0, atol=1e-11 * max(1.0, np.abs(q).max()))
    Hf = s.hessian()
    np.testing.assert_allclose(s.h, Hf @ s.x, rtol=0, atol=1e-9 * max(1.0, np.abs(h).max()))
    np.testing.assert_allclose(s.h, h, rtol=0, atol=1e-9 * max(1.0, np.abs(h).max()))
    assert s.fstate[k.F_KAPPA] == pytest.approx(s.x @ Hf @ s.x, rel=1e-9, abs=1e-12)
    # t_i are margins of past iterates: for the points reset at the last iteration, the
    # margin of the iterate before the last step.
    assert np.all(np.isfinite(s.t))


def _ceil_root(num: int, den: int, power: int) -> int:
    """Smallest integer m >= 0 with m**power * den >= num (exact integer arithmetic)."""
    m = 0
    while m**power * den < num:
        m += 1
    return m


def _floor_root(num: int, den: int, power: int) -> int:
    """Largest integer m >= 0 with m**power * den <= num."""
    m = 0
    while (m + 1) ** power * den <= num:
        m += 1
    return m


def _expected_batch(rule, kk, n, K, ceil=True):
    """Independent restatement of ALGORITHMS.md B.4 in exact integer arithmetic.

    ``ceil(n / sqrt(kk))`` is the smallest m with ``m^2 kk >= n^2``; ``n / K^(1/4)`` and
    ``K^(1/4)`` likewise with fourth powers (``kk = k + offset``)."""
    if rule == "dbd-sqrtk":
        r = math.isqrt(kk)
        return n if r * r == kk else 0
    if rule == "sbd-sqrtk":
        m = _ceil_root(n**2, kk, 2) if ceil else _floor_root(n**2, kk, 2)
        return min(max(m, 1), n)
    if rule == "sbd-k4":
        m = _ceil_root(n**4, K, 4) if ceil else _floor_root(n**4, K, 4)
        return min(max(m, 1), n)
    period = _ceil_root(K, 1, 4) if ceil else _floor_root(K, 1, 4)
    return n if kk % max(period, 1) == 0 else 0


@pytest.mark.parametrize("rule", list(k.TAYLOR_CODES))
@pytest.mark.parametrize(("rounding", "offset", "K"), [("ceil", 0, 10000), ("floor", 1, 5000)])
def test_rules_reset_what_their_definition_says(svmguide3, rule, rounding, offset, K):
    pb = build_problem("logreg-l1", svmguide3, radius=50.0)
    s = _tufw(pb, rule=rule, rounding=rounding, offset=offset, K=K, eval_growth=0.0)
    s.istate[k.I_STOP_AT] = 10**9
    iters = 400
    log = np.zeros((iters, k.N_LOG))
    assert s._kernel(log) == iters
    resets = np.diff(np.concatenate([[0.0], log[:, k.LOG_REFRESHES]]))
    assert resets[0] == pb.n  # k = 0: every Taylor point set at x_0
    expected = [
        _expected_batch(rule, it + offset, pb.n, K, rounding == "ceil") for it in range(1, iters)
    ]
    np.testing.assert_array_equal(resets[1:], expected)
    if rule == "dbd-sqrtk":
        hits = np.flatnonzero(resets[1:]) + 1
        squares = [m * m - offset for m in range(1, 21) if 1 <= m * m - offset < iters]
        np.testing.assert_array_equal(hits, squares)
    if rule == "dbd-k4":
        period = {("ceil", 10000): 10, ("floor", 5000): 8}[(rounding, K)]
        hits = np.flatnonzero(resets[1:]) + 1
        want = [i for i in range(1, iters) if (i + offset) % period == 0]
        np.testing.assert_array_equal(hits, want)


@pytest.mark.parametrize("rule", ["sbd-sqrtk", "sbd-k4"])
def test_sbd_resets_exactly_the_sampled_points(a1a, rule):
    pb = build_problem("logreg-l1", a1a, radius=10.0)
    s = _tufw(pb, rule=rule, eval_growth=0.0)
    s.istate[k.I_STOP_AT] = 10**9
    one = np.zeros((1, k.N_LOG))
    s._kernel(one)  # k = 0
    Xd = pb.X.toarray()
    for it in range(1, 40):
        x_before, t_before = s.x.copy(), s.t.copy()
        before = s.istate[k.I_REFRESHES]
        s._kernel(one)
        m = int(s.istate[k.I_REFRESHES] - before)
        assert m == _expected_batch(rule, it, pb.n, 10000)
        picked = s.perm[:m]
        assert np.unique(picked).size == m  # without replacement
        np.testing.assert_allclose(s.t[picked], Xd[picked] @ x_before, rtol=0, atol=1e-12)
        rest = np.setdiff1d(np.arange(pb.n), picked)
        np.testing.assert_array_equal(s.t[rest], t_before[rest])


# -- replay, exact evaluation, optimum -----------------------------------------------------
@pytest.mark.slow
def test_replay_reproduces_iterate_and_exact_rows(a1a):
    pb = build_problem("logreg-l1", a1a, radius=10.0)
    for method, step, st in [
        ("tufw", "taylor-adaptive", {"rule": "sbd-sqrtk"}),
        ("spider-fw", "diminishing", {}),
        ("csfw", "diminishing", {}),
    ]:
        s = build_solver(pb, method, step, st, tol=1e-12)
        run = Run(s, Budget(tol=1e-12, max_iter=3000, max_time=60)).run()
        assert run.status == "max_iter"
        np.testing.assert_array_equal(s.iterate(), s.x)  # replay == kernel, bitwise
        fr = run.frame()
        assert int(fr["iteration"].iloc[-1]) == 3000
        x = s.iterate()
        assert fr["objective"].iloc[-1] == pytest.approx(pb.objective(x), rel=1e-12)
        assert fr["certificate"].iloc[-1] == pytest.approx(pb.certificate(x), rel=1e-9)
        assert fr["fw_gap"].equals(fr["certificate"])
        assert s.eval_seconds > 0.0
        assert np.all(np.diff(fr["samples"].to_numpy()) >= 0)
        # Checkpoints: every iterate up to 100, then every max(1, floor(k / 100)).
        its = fr["iteration"].to_numpy()
        assert np.array_equal(its[:101], np.arange(101))
        np.testing.assert_array_equal(np.diff(its)[:-1], np.maximum(its[:-2] // 100, 1))


@pytest.fixture(scope="module")
def a1a_reference(a1a):
    cp = pytest.importorskip("cvxpy")
    import scipy.sparse as sp

    pb = build_problem("logreg-l1", a1a, radius=10.0)
    w = cp.Variable(pb.p)
    A = sp.csr_matrix(pb.X).multiply(-pb.y[:, None]).tocsr()
    prob = cp.Problem(cp.Minimize(cp.sum(cp.logistic(A @ w)) / pb.n), [cp.norm1(w) <= pb.radius])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return pb, float(prob.value)


@pytest.mark.parametrize(
    ("method", "step", "settings"),
    [
        ("tufw", "taylor-exact", {"rule": "dbd-sqrtk"}),
        ("tufw", "taylor-exact", {"rule": "sbd-sqrtk"}),
        ("pfw", "exact", {}),
    ],
)
@pytest.mark.slow
def test_same_optimum_as_fw_and_cvxpy_on_a1a(a1a_reference, method, step, settings):
    pb, fstar = a1a_reference
    tol = 1e-6
    s = build_solver(pb, method, step, settings, tol=tol)
    run = Run(s, Budget(tol=tol, max_iter=2 * 10**7, max_time=60)).run()
    assert run.status == "converged", run.message
    fr = run.frame()
    f, gap = fr["objective"].to_numpy(), fr["certificate"].to_numpy()
    assert gap[-1] <= tol
    assert f[-1] - fstar <= tol + 1e-9  # the gap bounds the suboptimality
    assert f[-1] == pytest.approx(fstar, rel=1e-5)
    assert np.all(gap >= f - fstar - 1e-9)
    assert f.min() >= fstar - 1e-9
    x = s.iterate()
    assert np.abs(x).sum() <= pb.radius * (1 + 1e-12)
    assert pb.certificate(x) == pytest.approx(gap[-1], rel=1e-6)


@pytest.mark.parametrize("method", ["spider-fw", "csfw"])
def test_stochastic_baselines_make_progress_and_are_seeded(a1a_reference, method):
    pb, fstar = a1a_reference

    def go(seed):
        s = build_solver(pb, method, "diminishing", {"seed": seed}, tol=1e-12)
        return Run(s, Budget(tol=1e-12, max_iter=20000, max_time=60)).run().frame()

    a, b, c = go(0), go(0), go(1)
    np.testing.assert_array_equal(a["objective"].to_numpy(), b["objective"].to_numpy())
    assert not np.array_equal(a["objective"].to_numpy(), c["objective"].to_numpy())
    gap = a["certificate"].to_numpy()
    assert gap.min() < 1e-2 * gap[0]
    assert a["objective"].iloc[-1] - fstar < 1e-3
    if method == "spider-fw":
        # Full gradient (n samples) at the start of every epoch, 2 b samples otherwise.
        b_ = math.isqrt(pb.n - 1) + 1
        s = build_solver(pb, method, "diminishing", {"eval_growth": 0.0}, tol=1e-12)
        s.istate[k.I_STOP_AT] = 10**9
        log = np.zeros((3 * b_ + 1, k.N_LOG))
        s._kernel(log)
        inc = np.diff(np.concatenate([[0.0], log[:, k.LOG_SAMPLES]]))
        want = [pb.n if i % b_ == 0 else 2 * b_ for i in range(log.shape[0])]
        np.testing.assert_array_equal(inc, want)


def test_fw_nc_equals_fw_on_logreg(a1a):
    """The exact-gradient kernel of fw-nc and the FW family's kernel agree on logreg-l1."""
    pb = build_problem("logreg-l1", a1a, radius=10.0)
    out = []
    for method in ("fw", "fw-nc"):
        s = build_solver(pb, method, "diminishing", {}, tol=1e-12)
        out.append(Run(s, Budget(tol=1e-12, max_iter=500)).run().frame())
    np.testing.assert_allclose(out[0]["objective"], out[1]["objective"], rtol=1e-12)
    np.testing.assert_allclose(out[0]["certificate"], out[1]["certificate"], rtol=1e-9)


def test_fw_ada_alias(a1a):
    lr = build_problem("logreg-l1", a1a, radius=10.0)
    nc = build_problem("nonconvex-l1", a1a, radius=10.0)
    assert isinstance(build_solver(lr, "fw-ada", "adaptive", {}, 1e-4), FrankWolfeSolver)
    s = build_solver(nc, "fw-ada", "adaptive", {}, 1e-4)
    assert isinstance(s, GlmFrankWolfeSolver)
    fr = Run(s, Budget(tol=1e-12, max_iter=300)).run().frame()
    f = fr["objective"].to_numpy()
    assert np.all(np.diff(f) <= 1e-15)  # sufficient decrease: monotone
    assert fr["fun_evals"].iloc[-1] >= 300


# -- non-convex runs ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("method", "step", "settings"),
    [
        ("tufw", "constant-sqrt", {"rule": "dbd-k4", "K": 4000, "eval_growth": 0.0}),
        ("tufw-sbd-sqrtk", "nonconvex", {"eval_growth": 0.0}),
        ("spider-fw", "constant-sqrt", {"K": 4000, "eval_growth": 0.0}),
        ("fw-nc", "constant-sqrt", {"K": 4000}),
    ],
)
def test_nonconvex_running_average(svmguide3, method, step, settings):
    pb = build_problem("nonconvex-l1", svmguide3, radius=50.0, loss="tanh")
    s = build_solver(pb, method, step, settings, tol=1e-12)
    assert s.certificate_kind == "fw_gap (stationarity)"
    run = Run(s, Budget(tol=1e-12, max_iter=400, max_time=60)).run()
    fr = run.frame()
    gaps = fr["fw_gap"].to_numpy()
    assert np.array_equal(fr["iteration"].to_numpy(), np.arange(401))
    np.testing.assert_allclose(fr["avg_fw_gap"], np.cumsum(gaps) / np.arange(1, 402), rtol=1e-12)
    assert np.array_equal(fr["certificate"].to_numpy(), gaps)
    x = s.iterate()
    assert pb.certificate(x) == pytest.approx(gaps[-1], rel=1e-8)
    steps = fr["step_size"].to_numpy()[:-1]
    if step == "constant-sqrt":
        np.testing.assert_allclose(steps, 1 / math.sqrt(4001))
    # Stop on the running average; metric avg-fw-gap puts it in the certificate column.
    avg_tol = float(fr["avg_fw_gap"].iloc[200])
    pb2 = build_problem("nonconvex-l1", svmguide3, radius=50.0, loss="tanh", metric="avg-fw-gap")
    s2 = build_solver(pb2, method, step, settings, tol=avg_tol)
    assert s2.certificate_kind == "avg_fw_gap (stationarity)"
    run2 = Run(s2, Budget(tol=avg_tol, max_iter=400, max_time=60)).run()
    fr2 = run2.frame()
    assert run2.status == "converged"
    first = int(np.flatnonzero(fr["avg_fw_gap"].to_numpy() <= avg_tol)[0])
    assert int(fr2["iteration"].iloc[-1]) == first
    assert fr2["certificate"].iloc[-1] == fr2["avg_fw_gap"].iloc[-1] <= avg_tol


def test_taylor_adaptive_step_is_capped(svmguide3):
    pb = build_problem("logreg-l1", svmguide3, radius=50.0)
    s = build_solver(pb, "tufw", "taylor-adaptive", {"eval_growth": 0.0}, tol=1e-12)
    fr = Run(s, Budget(tol=1e-12, max_iter=300)).run().frame()
    its = fr["iteration"].to_numpy()[:-1]
    assert np.all(fr["step_size"].to_numpy()[:-1] <= 2.0 / (its + 2.0) + 1e-15)
    assert np.any(fr["step_size"].to_numpy()[:-1] < 2.0 / (its + 2.0) - 1e-6)


# -- CLI and sweep configs ----------------------------------------------------------------
@pytest.mark.requires_data("a1a")
def test_cli_run(real_data, capsys):
    from ermviz.cli import main

    argv = [
        "run",
        "--dataset",
        "a1a",
        "--problem",
        "logreg-l1",
        "--radius",
        "10",
        "--method",
        "tufw",
        "--set",
        "rule=dbd-sqrtk",
        "--step",
        "diminishing",
        "--tol",
        "1e-3",
        "--max-time",
        "30",
        "--no-progress",
    ]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["status"] == "converged"
    assert result["gap"] <= 1e-3
    assert main([*argv[:8], "fw", *argv[9:]]) == 2  # fw does not take --set rule=


@pytest.mark.parametrize("name", ["tufw_table_c2.toml", "tufw_table_c3.toml"])
def test_sweep_configs_validate(name):
    from ermviz.sweep import load_config

    cfg = load_config(REPO / "benchmarks" / "sweeps" / name)
    labels = {c.label for c in cfg.cells}
    assert set(cfg.report["baselines"]) <= labels
    assert set(cfg.report["chosen"]) <= labels
    assert {c.dataset for c in cfg.cells} >= {"a1a", "svmguide3", "phishing", "ijcnn1"}
    # Methods compared in one table row share their settings (the row's instance).
    by_ds = {}
    for c in cfg.cells:
        by_ds.setdefault(c.dataset, set()).add(c.settings)
    assert all(len(v) == 1 for v in by_ds.values())


def test_solver_is_a_tufw_solver(a1a):
    pb = build_problem("logreg-l1", a1a, radius=10.0)
    for name in ("tufw-sbd-sqrtk", "tufw-dbd-sqrtk", "tufw-sbd-k4", "tufw-dbd-k4"):
        s = build_solver(pb, name, "taylor-exact", {}, 1e-3)
        assert isinstance(s, TufwSolver)
        assert s.rule == name.removeprefix("tufw-")


@pytest.mark.requires_data("a1a")
def test_old_method_names_run_on_the_cli_as_their_listed_method(capsys, real_data):
    # tufw-sbd-k4 is an alias of tufw --set rule=sbd-k4 and fw-ada of fw --step adaptive:
    # the same run (same seed), the same numbers; `ermviz methods` lists each name once.
    import json

    from ermviz.cli import main

    def run(*argv):
        base = ["run", "--dataset", "a1a", "--problem", "logreg-l1", "--radius", "10"]
        assert main([*base, *argv, "--max-iter", "300", "--tol", "1e-12", "--no-progress"]) == 0
        return json.loads(capsys.readouterr().out.strip().splitlines()[-1])

    for old, new in (
        (["--method", "tufw-sbd-k4"], ["--method", "tufw", "--set", "rule=sbd-k4"]),
        (["--method", "fw-ada"], ["--method", "fw", "--step", "adaptive"]),
    ):
        a, b = run(*old), run(*new)
        assert (a["method"], a["step"]) == (b["method"], b["step"])
        assert a["objective"] == b["objective"] and a["gap"] == b["gap"]
        assert a["iterations"] == b["iterations"] == 300
    assert main(["methods"]) == 0
    listing = capsys.readouterr().out
    methods = listing.split("Methods:")[1].split("Step rules:")[0]
    names = [ln.split()[0] for ln in methods.splitlines() if ln.startswith("  ") and ln[2] != " "]
    assert len(names) == len(set(names)) and "tufw" in names and "fw" in names
    assert not {"fw-ada", "tufw-sbd-sqrtk", "tufw-dbd-k4"} & set(names)
    assert "  fw-ada " in listing.split("Aliases")[1]


def test_the_old_module_names_are_gone():
    # Issue 33: tufw.solvers (a module named like the top-level kernel package) and
    # cso.specs (the declarations, now on the method classes) were removed.
    import importlib

    for old in ("ermviz.families.tufw.solvers", "ermviz.families.cso.specs"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)
    assert importlib.import_module("ermviz.families.tufw.adapters").TufwSolver.name == "tufw"
