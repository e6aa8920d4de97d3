"""Conditional stochastic optimization family (solvers/cso.py, ermviz/families/cso/)
against independent references.

* the biased estimator (3) is the exact gradient of the surrogate it defines (finite
  differences on a fixed draw);
* F(x*) from our Newton solve matches scikit-learn's unpenalized LogisticRegression on the
  same evaluation sample; the sample generator's normals and uniforms pass scipy's KS test;
* BSpiderBoost's estimate at each epoch start is the mean estimator over that epoch's
  draws (replayed from the counter-based stream); with a large inner batch BSGD's average
  approaches the SAA solution;
* a run is bit-for-bit reproducible from its seed, alone or raced beside other runs; the
  samples budget is exact; bad input gives one-line errors;
* the dashboard draws SAA's curve against inner samples as steps (its trace: 0 samples,
  then all of them before its first Newton step), the other runs as lines.
"""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest
import scipy.stats

from ermviz.data import load_dataset
from ermviz.registry import build_problem, build_solver
from ermviz.runner import Budget, Run
from solvers import cso as k

BSGD = {"inner_batch": 5, "gamma": 0.1, "inner_growth": 0.0, "output": "average", "seed": 0}
SPIDER = {"inner_batch": 5, "q": 4, "n1": 50, "n2": 5, "gamma": 0.5, "seed": 0}


@pytest.fixture(scope="module")
def problem():
    ds = load_dataset("cso-synthetic", n=20_000, d=5, seed=1)
    return build_problem("invariant-logreg", ds, noise_ratio=10.0)


def _run(pb, method, step, settings, samples, tol=0.0):
    solver = build_solver(pb, method, step, settings, tol)
    run = Run(solver, Budget(tol=max(tol, 1e-300), max_time=120, max_work=("samples", samples)))
    run.run()
    return solver, run


def test_uniforms_and_normals_follow_their_laws():
    istate = np.zeros(k.N_ISTATE, dtype=np.int64)
    key = np.uint64(12345)
    u = np.array([k.uniform(key, istate) for _ in range(20_000)])
    z = np.array([k.normal(key, istate) for _ in range(20_000)])
    assert scipy.stats.kstest(u, "uniform").pvalue > 1e-3
    assert scipy.stats.kstest(z, "norm").pvalue > 1e-3
    assert istate[k.I_CTR] == 20_000 + 2 * 20_000  # two uniforms per normal


def test_the_estimator_is_the_exact_gradient_of_its_surrogate(problem):
    pb = problem
    rng = np.random.default_rng(0)
    x = rng.normal(size=pb.d)
    l2 = 0.3
    for m in (1, 7):
        istate = np.zeros(k.N_ISTATE, dtype=np.int64)
        eta = np.zeros(pb.d)
        b = k.draw_pair(pb.A, pb.y, np.uint64(9), istate, m, 2.0, eta)
        assert istate[k.I_SAMPLES] == m
        g = k.estimator_coef(x, eta, b) * eta + l2 * x

        def surrogate(v, eta=eta, b=b):
            return np.logaddexp(0.0, -b * eta @ v) + 0.5 * l2 * v @ v

        h = 1e-6
        fd = np.array(
            [(surrogate(x + h * e) - surrogate(x - h * e)) / (2 * h) for e in np.eye(pb.d)]
        )
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_f_star_matches_scikit_learn_logistic_regression(problem):
    from sklearn.linear_model import LogisticRegression

    pb = problem
    ref = LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-12, max_iter=10_000)
    ref.fit(pb.X_eval, pb.y_eval)
    w = ref.coef_.ravel()
    assert pb.f_star == pytest.approx(pb.objective(w), rel=1e-6)
    np.testing.assert_allclose(pb.x_star, w, rtol=1e-4, atol=1e-6)
    assert np.linalg.norm(pb.gradient(pb.x_star)) <= 1e-10


def test_spiderboost_restarts_each_epoch_from_the_mean_estimator(problem):
    pb = problem
    solver = build_solver(pb, "bspiderboost", "fixed", SPIDER, 0.0)
    q, n1, m = SPIDER["q"], SPIDER["n1"], SPIDER["inner_batch"]
    for epoch in range(2):
        solver._steps(epoch * q)  # up to the epoch's first step
        x0 = solver.x.copy()
        replay = solver.istate.copy()
        solver._steps(epoch * q + 1)  # the epoch-start step
        eta = np.zeros(pb.d)
        grads = []
        for _ in range(n1):
            b = k.draw_pair(pb.A, pb.y, solver.key, replay, m, float(solver.fstate[2]), eta)
            grads.append(k.estimator_coef(x0, eta, b) * eta)
        np.testing.assert_allclose(solver.v, np.mean(grads, axis=0), rtol=1e-12, atol=1e-15)
        # The step drew exactly those samples: the stream is where the replay ended.
        assert replay[k.I_CTR] == solver.istate[k.I_CTR]
        assert (
            replay[k.I_SAMPLES]
            == solver.istate[k.I_SAMPLES]
            == (epoch + 1) * n1 * m + epoch * (q - 1) * SPIDER["n2"] * m
        )


@pytest.mark.slow
def test_bsgd_with_a_large_inner_batch_approaches_the_saa_solution():
    ds = load_dataset("cso-synthetic", n=50_000, d=5, seed=2)
    pb = build_problem("invariant-logreg", ds, noise_ratio=1.0)
    budget = 4_000_000
    bsgd = dict(BSGD, inner_batch=200, gamma=0.05)  # (constant-step SGD's bias is O(gamma))
    _, run_b = _run(pb, "bsgd", "fixed", bsgd, budget)
    saa_solver, run_s = _run(
        pb, "saa", "newton-ls", {"inner_batch": 200, "outer": 0, "seed": 1}, budget
    )
    x_b, x_s = run_b.solver.iterate(), saa_solver.iterate()
    scale = np.linalg.norm(pb.x_star)
    assert np.linalg.norm(x_b - x_s) <= 0.08 * scale  # measured 0.01-0.03 over seeds
    assert run_b.frame()["certificate"].iloc[-1] <= 1e-3
    assert run_s.frame()["samples"].iloc[-1] == budget  # outer = budget // m, all drawn


def test_the_samples_budget_is_exact_and_counted(problem):
    for m, budget in ((5, 100_000), (7, 100_000)):
        _, run = _run(problem, "bsgd", "fixed", dict(BSGD, inner_batch=m), budget)
        frame = run.frame()
        assert run.status == "max_work"
        assert frame["samples"].iloc[-1] == budget // m * m  # never more than the budget
        assert (frame["samples"] == frame["iteration"] * m).all()
        assert frame["inner_batch"].iloc[-1] == m


def test_a_run_is_bit_for_bit_reproducible_alone_or_raced(problem):
    _, alone = _run(problem, "bsgd", "fixed", dict(BSGD, seed=7), 200_000)
    runs = [
        Run(
            build_solver(problem, "bsgd", "fixed", dict(BSGD, seed=s), 0.0),
            Budget(tol=1e-300, max_time=120, max_work=("samples", 200_000)),
        )
        for s in (7, 8, 7)
    ]
    threads = [threading.Thread(target=r.run) for r in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ref = alone.frame()[["iteration", "objective", "samples"]].to_numpy()
    for r in (runs[0], runs[2]):
        np.testing.assert_array_equal(
            r.frame()[["iteration", "objective", "samples"]].to_numpy(), ref
        )
    other = runs[1].frame()["objective"].to_numpy()
    assert not np.array_equal(other, ref[: other.size, 1])  # another seed, another run


@pytest.mark.slow
def test_cli_contract_and_bad_input(capsys):
    from ermviz.cli import main

    argv = ["run", "--dataset", "cso-synthetic", "--problem", "invariant-logreg"]
    argv += ["--set", "noise_ratio=100", "--method", "bsgd", "--set", "inner_batch=50"]
    argv += ["--max-samples", "200000", "--seed", "3", "--no-progress"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["certificate_kind"] == "opt_gap_estimate" and out["samples"] == 200_000
    assert out["status"] == "max_work" and out["gap"] == pytest.approx(
        out["objective"] - out["f_star"], abs=1e-12
    )
    bad = [
        (["--set", "inner_batch=0"], "inner_batch=0 is out of range"),
        (["--set", "noise_ratio=-1"], "noise_ratio=-1 is out of range"),
        (["--set", "inner_batch=50", "--max-samples", "10"], "smaller than one step"),
    ]
    base = ["run", "--dataset", "cso-synthetic", "--problem", "invariant-logreg"]
    base += ["--method", "bsgd", "--no-progress"]
    for extra, message in bad:
        assert main(base + extra) != 0
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], err
    assert main(["run", "--dataset", "sk-diabetes", "--problem", "invariant-logreg",
                 "--method", "bsgd", "--no-progress"]) != 0  # fmt: skip
    assert "binary classification" in capsys.readouterr().err


def test_cli_repeat_reports_each_seed_and_their_mean_and_deviation(capsys, tmp_path):
    from ermviz.cli import main

    out_csv = tmp_path / "rep.csv"
    base = ["run", "--dataset", "cso-synthetic", "--problem", "invariant-logreg"]
    base += ["--method", "bsgd", "--set", "inner_batch=5", "--max-samples", "100000"]
    base += ["--set", "eval_size=20000"]  # (a smaller evaluation sample: a faster test)
    argv = [*base, "--seed", "3", "--repeat", "3", "--no-progress", "--out", str(out_csv)]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    gaps = [r["gap"] for r in out["runs"]]
    assert out["seeds"] == [3, 4, 5] == [r["seed"] for r in out["runs"]]
    assert len(set(gaps)) == 3  # three seeds, three runs
    assert out["gap"] == pytest.approx(np.mean(gaps)) and out["gap_std"] == pytest.approx(
        np.std(gaps, ddof=1)
    )
    assert out["samples"] == 100_000 and out["samples_std"] == 0.0
    import pandas as pd

    frame = pd.read_csv(out_csv)
    assert sorted(frame["seed"].unique()) == [3, 4, 5]
    finals = frame.groupby("seed")["certificate"].last().to_numpy()
    np.testing.assert_allclose(finals, gaps)
    # A single run with --seed 4 is the second of them, bit for bit.
    assert main([*base, "--seed", "4", "--no-progress"]) == 0
    single = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert single["gap"] == gaps[1]
    assert main(["run", "--dataset", "wdbc", "--problem", "svm-dual", "--method", "fw",
                 "--repeat", "2", "--no-progress"]) != 0  # fmt: skip
    assert "deterministic" in capsys.readouterr().err


@pytest.mark.slow
def test_the_dashboard_races_the_three_methods_on_one_samples_budget():
    from ermviz.app.state import urlstate
    from ermviz.app.state.model import DashboardModel

    m = DashboardModel(notifier=lambda level, msg: None)
    m.dataset = "cso-synthetic"  # the preset: invariant-logreg, bsgd / bspiderboost / saa
    assert [s.method for s in m.specs] == ["bsgd", "bspiderboost", "saa"]
    assert m.param.x_axis.objects == ["iteration", "samples"]
    m.max_samples = 300_000
    m.problem_settings = {**m.problem_settings, "eval_size": 20_000}
    slots = m.start()
    for slot in slots:
        assert slot.run.join(120)
    for slot in slots:
        last = slot.run.trace.last()
        assert slot.status == "max_work", slot.message
        assert last["samples"] <= 300_000
    # SAA spends the whole budget at once: 646 outer samples x its default 464 inner.
    assert slots[2].run.trace.last()["samples"] == 300_000 // 464 * 464
    state = urlstate.decode(urlstate.encode(m))
    assert state["max_samples"] == 300_000
    m.dataset = "wdbc"  # another preset clears the budget; svm-dual has no samples anyway
    assert m.max_samples == 0 and m.budget().max_work is None


@pytest.mark.slow
def test_repeated_seeds_race_as_groups_with_a_band_and_a_mean_row():
    import time

    from ermviz.app.state import urlstate
    from ermviz.app.views.page import Dashboard

    d = Dashboard()
    query = (
        "?dataset=cso-synthetic&problem=invariant-logreg&p.eval_size=20000&max_samples=100000"
        "&repeat=3&run=bsgd:fixed&run=bsgd:fixed:inner_batch=1"
    )
    assert urlstate.load(d.model, query, report=False) is None
    assert urlstate.decode(urlstate.encode(d.model))["repeat"] == 3
    d.start_sync()
    end = time.perf_counter() + 120
    while d.model.active and time.perf_counter() < end:
        d.streamer.pull()
        time.sleep(0.05)
    d.streamer.pull()
    sources = d.streamer.sources
    assert [s.slot.group for s in sources] == [0, 0, 0, 1, 1, 1]
    assert [s.slot.settings["seed"] for s in sources] == [0, 1, 2] * 2
    assert len({s.slot.color for s in sources[:3]}) == 1 != len({s.slot.color for s in sources})
    for lead, members in ((sources[0], sources[:3]), (sources[3], sources[3:])):
        band = {k: np.asarray(v, dtype=float) for k, v in lead.band.data.items()}
        assert band["iteration"].size > 5
        # Independent recomputation from each run's whole trace (pandas, not the streamer).
        frames = [m.slot.run.frame().set_index("iteration")["certificate"] for m in members]
        at = np.array([[f.loc[it] for f in frames] for it in band["iteration"]])
        np.testing.assert_allclose(band["lo"], np.maximum(at.min(axis=1), 1e-16))
        np.testing.assert_allclose(band["hi"], np.maximum(at.max(axis=1), 1e-16))
        assert band["iteration"][-1] == members[0].slot.run.trace.last()["iteration"]
    for follower in sources[1:3] + sources[4:]:
        assert len(follower.band.data["iteration"]) == 0
    results = d.model.results()
    means = results[results["status"] == "3 seeds"]
    assert len(means) == 2 and len(results) == 8
    finals = [s.slot.run.trace.last()["certificate"] for s in sources[:3]]
    assert means["certificate"].iloc[0] == pytest.approx(np.mean(finals))
    assert means["certificate_dev"].iloc[0] == pytest.approx(np.std(finals, ddof=1))


def test_newton_stops_at_float64_resolution_and_refuses_separable_data():
    from ermviz.errors import DataError
    from ermviz.families.cso.problem import logistic_newton

    # Replicated noisy rows: the gradient cannot reach 1e-12 in float64 (the line search
    # stalled there and raised a false "no minimizer"); the Newton decrement stops it.
    ds = load_dataset("cso-synthetic", n=20_000, d=10, x_scale=0.5, seed=0)
    X = np.vstack([ds.X] * 3) + 0.1 * np.random.default_rng(1).standard_normal((60_000, 10))
    y = np.tile(ds.y, 3)
    w = logistic_newton(X, y, 0.0)
    p = 0.5 * (1.0 - np.tanh(0.5 * y * (X @ w)))
    assert np.linalg.norm(X.T @ (y * p)) / y.size <= 1e-7
    separable = np.array([[1.0, 0.0], [2.0, 1.0], [-1.0, 0.5], [-2.0, 0.0]])
    with pytest.raises(DataError, match="set l2 > 0"):
        logistic_newton(separable, np.array([1.0, 1.0, -1.0, -1.0]), 0.0)
    assert np.isfinite(logistic_newton(separable, np.array([1.0, 1.0, -1.0, -1.0]), 1e-3)).all()


def _drawn(source, renderers: list) -> list:
    """The curves of ``source`` (a place in the race) among ``renderers`` that are on
    screen: visible, not transparent (not its seeds' band and mean, empty here)."""
    own = [r for r in renderers if r.data_source is not source.band]
    return [r for r in own if r.visible and r.glyph.line_alpha > 0]


def test_saa_is_drawn_as_steps_against_the_samples_it_draws_at_once():
    # Issue 42: in the CSO lesson SAA's curve against inner samples was a straight line
    # from its start (0 samples) to its first Newton step (all n x m samples), as if its
    # certificate fell while it drew them; it holds until then: a step curve.
    import time

    from ermviz.app.lessons import apply_lesson, get_lesson
    from ermviz.app.views.page import Dashboard

    d = Dashboard()
    assert apply_lesson(d.model, get_lesson("cso-inner-batch")) is None
    assert d.model.x_axis == "samples"
    # A smaller budget and evaluation sample than the lesson's, for time: the same shape.
    d.model.max_samples = 200_000
    d.model.problem_settings = {**d.model.problem_settings, "eval_size": 20_000}
    view = d.race_view
    view.build()
    d.start_sync()
    end = time.perf_counter() + 120
    while d.model.active and time.perf_counter() < end:
        d.streamer.pull()
        time.sleep(0.05)
    d.streamer.pull()
    (saa,) = [s for s in d.streamer.sources if s.slot.run.solver.name == "saa"]
    bsgd = [s for s in d.streamer.sources if s.slot.run.solver.name == "bsgd"]
    assert len(bsgd) == 2
    # The trace itself (pandas, every row): 0 samples at the start, then all of them at
    # once, 200 outer samples x m = 1000, the lesson's.
    frame = saa.slot.run.frame()
    assert frame["samples"].iloc[0] == 0
    assert (frame["samples"].iloc[1:] == 200_000).all() and len(frame) >= 3

    def curves(source) -> list:
        index = d.streamer.pool.index(source)
        return view.trace_plots.renderers[index]

    plots = view.trace_plots
    figures = plots.figures  # every plot, the lazy ones drawn now
    for f, fig in enumerate(figures):
        if f == 1:
            continue  # against solver time: lines for every run
        assert "inner samples" in fig.xaxis[0].axis_label
        mine = [r for r in curves(saa) if r in fig.renderers]
        (drawn,) = _drawn(saa, mine)
        assert type(drawn.glyph).__name__ == "Step" and drawn.glyph.mode == "after", f
        # It plots the trace's rows: x = samples + 1 (log axis), y = the certificate.
        data = drawn.data_source.data
        x, y = drawn.glyph.x, drawn.glyph.y
        if f == 0:
            np.testing.assert_array_equal(np.asarray(data[x])[:2], [1, 200_001])
            np.testing.assert_allclose(
                np.asarray(data[y], dtype=float)[:2],
                np.maximum(frame["certificate"].to_numpy()[:2], 1e-16),
            )
        for other in bsgd:
            mine = [r for r in curves(other) if r in fig.renderers]
            assert [type(r.glyph).__name__ for r in _drawn(other, mine)] == ["Line"], f
    # The same race against iterations (Newton steps: one row each): lines only.
    d.model.x_axis = "iteration"
    plots = view.trace_plots
    for fig in plots.figures:
        types = {type(r.glyph).__name__ for r in _drawn(saa, curves(saa)) if r in fig.renderers}
        assert types == {"Line"}, fig.title.text
    d.model.x_axis = "samples"
    plots = view.trace_plots
    assert type(_drawn(saa, curves(saa))[0].glyph).__name__ == "Step"
    # A run at the same place whose method spends no samples in jumps: a line again, on
    # the same figures (a new race relabels them).
    plots.show([s.slot.label for s in d.streamer.pool], jumps=[False] * plots.size)
    assert {type(r.glyph).__name__ for r in _drawn(saa, curves(saa))} == {"Line"}
    d.model.shutdown()
