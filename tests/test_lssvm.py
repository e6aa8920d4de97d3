"""LS-SVM family (solvers/lssvm.py, ermviz/families/lssvm/) against independent references.

* every method reaches the dual objective of scipy's dense solve of the full KKT system
  ``[[Q, 1], [1^T, 0]] [alpha; b] = [y; 0]`` (relative 1e-6) on waveform, splice and a
  small random problem, for log10 C in {-4, 0, 4};
* the reduced system's solution solves the full KKT system;
* the O(n) gap formula equals P - D computed directly from w, b, xi;
* the kernel-evaluation counter equals an independent count; cached and on-the-fly kernels
  give identical iterates; CSR and dense inputs give the same solution.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp

from ermviz.data import Dataset, load_dataset
from ermviz.registry import build_problem, build_solver
from ermviz.runner import NO_ITER_LIMIT, Budget, Run

STEPS = {"cg-two-system": "cg", "cg-reduced": "cg", "smo": "smo"}


def _kernel(X, sigma2):
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    d = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)  # independent of the code's formula
    return np.exp(-d / (2.0 * sigma2))


def _kkt(pb):
    """(alpha, b, D) from a dense solve of the full KKT system (scipy)."""
    n = pb.n
    Q = _kernel(pb.X, pb.sigma2) + np.eye(n) / pb.C
    M = np.zeros((n + 1, n + 1))
    M[:n, :n], M[:n, n], M[n, :n] = Q, 1.0, 1.0
    sol = scipy.linalg.solve(M, np.append(pb.y, 0.0), assume_a="sym")
    alpha, b = sol[:n], sol[n]
    return alpha, b, float(pb.y @ alpha - 0.5 * alpha @ Q @ alpha)


def _random(n=60, p=5, seed=0, task="binary"):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.sign(X[:, 0] + 0.5 * rng.normal(size=n)) if task == "binary" else X @ rng.normal(size=p)
    y[y == 0] = 1.0
    return Dataset(name=f"random-{seed}", X=X, y=y, task=task, source="test")


def _solve(pb, method, tol, **settings):
    solver = build_solver(pb, method, STEPS[method], settings, tol)
    run = Run(solver, Budget(tol=tol, max_iter=NO_ITER_LIMIT, max_time=120))
    run.run()
    return solver, run


@pytest.fixture(scope="module")
def waveform(real_data, requires_data):
    requires_data("waveform")
    return load_dataset("waveform", with_test=False)


@pytest.fixture(scope="module")
def splice(real_data, requires_data):
    requires_data("splice")
    return load_dataset("splice", with_test=False)


@pytest.mark.parametrize("log_c", [-4, 0, 4])
@pytest.mark.parametrize("method", list(STEPS))
@pytest.mark.parametrize("data", ["waveform", "splice", "random"])
def test_dual_objective_matches_the_dense_kkt_solve(request, data, method, log_c):
    ds = _random() if data == "random" else request.getfixturevalue(data)
    sigma2 = {"waveform": 24.5325, "splice": 29.9641, "random": 2.0}[data]
    pb = build_problem("lssvm", ds, C=10.0**log_c, sigma2=sigma2)
    _, _, d_ref = _kkt(pb)
    solver, run = _solve(pb, method, tol=1e-9)
    assert run.status == "converged", run.message
    frame = run.frame()
    d = frame["dual_objective"].iloc[-1]
    assert abs(d - d_ref) <= 1e-6 * abs(d_ref)
    # The recorded objective and gap are the numpy reference's at the final iterate.
    alpha = solver.iterate()
    assert abs(alpha.sum()) <= 1e-9 * max(1.0, np.abs(alpha).sum())
    assert pb.objective(alpha) == pytest.approx(d, rel=1e-9)
    assert frame["certificate"].iloc[-1] <= 1e-9


def test_reduced_solution_solves_the_full_kkt_system():
    pb = build_problem("lssvm", _random(seed=3), C=10.0, sigma2=1.5)
    solver, _ = _solve(pb, "cg-reduced", tol=1e-13)
    alpha = solver.iterate()
    b = pb.bias(alpha)
    Q = _kernel(pb.X, pb.sigma2) + np.eye(pb.n) / pb.C
    assert np.abs(Q @ alpha + b - pb.y).max() <= 1e-6 * np.abs(pb.y).max()
    assert abs(alpha.sum()) <= 1e-10
    a_ref, b_ref, _ = _kkt(pb)
    np.testing.assert_allclose(alpha, a_ref, atol=1e-6 * np.abs(a_ref).max())
    assert b == pytest.approx(b_ref, abs=1e-6)


@pytest.mark.parametrize("method", list(STEPS))
def test_the_o_n_gap_is_p_minus_d_from_w_b_xi(method):
    pb = build_problem("lssvm", _random(seed=4, task="regression"), C=3.0, sigma2=4.0)
    solver = build_solver(pb, method, STEPS[method], {}, 0.0)
    Q = _kernel(pb.X, pb.sigma2) + np.eye(pb.n) / pb.C
    K = Q - np.eye(pb.n) / pb.C
    for _ in range(6):
        alpha = solver.iterate()
        rows, _ = solver.advance(1, 10**9)
        F = pb.y - Q @ alpha
        b = F.mean()
        xi = pb.y - K @ alpha - b
        primal = 0.5 * alpha @ K @ alpha + 0.5 * pb.C * xi @ xi  # ||w||^2 = alpha^T K alpha
        dual = pb.y @ alpha - 0.5 * alpha @ Q @ alpha
        d_col, p_col = rows[0, 7], rows[0, 8]
        assert d_col == pytest.approx(dual, rel=1e-10, abs=1e-12)
        assert p_col - d_col == pytest.approx(primal - dual, rel=1e-8, abs=1e-12)
        if dual > 0:
            assert rows[0, 2] == pytest.approx((primal - dual) / dual, rel=1e-8, abs=1e-14)


@pytest.mark.slow
def test_kernel_evaluations_follow_the_stated_count():
    # Tiny problem, counted independently: a product with the symmetric Q costs its
    # n (n + 1) / 2 distinct entries, an SMO step its two columns (2 n).
    n = 7
    pb = build_problem("lssvm", _random(n=n, seed=5), C=2.0, sigma2=1.0)
    half = n * (n + 1) // 2
    expected = {"cg-two-system": 2 * half, "cg-reduced": half, "smo": 2 * n}
    fly = build_problem("lssvm", _random(n=n, seed=5), C=2.0, sigma2=1.0, kernel_cache_mb=0.0)
    for method, per_step in expected.items():
        solver = build_solver(pb, method, STEPS[method], {}, 0.0)
        rows, _ = solver.advance(5, 10**9)
        np.testing.assert_array_equal(rows[:, 6], per_step * np.arange(5))
        np.testing.assert_array_equal(rows[:, 9], 0)  # the cached matrix: nothing computed
        solver = build_solver(fly, method, STEPS[method], {}, 0.0)
        rows, _ = solver.advance(5, 10**9)  # on the fly (SMO: no column cache fits)
        np.testing.assert_array_equal(rows[:, 9], per_step * np.arange(5))


@pytest.mark.parametrize("method", list(STEPS))
def test_cached_and_on_the_fly_kernels_give_identical_iterates(method):
    pb = build_problem("lssvm", _random(n=120, seed=6), C=5.0, sigma2=3.0)
    pb_fly = build_problem("lssvm", _random(n=120, seed=6), C=5.0, sigma2=3.0, kernel_cache_mb=0.0)
    a = build_solver(pb, method, STEPS[method], {}, 1e-12)
    b = build_solver(pb_fly, method, STEPS[method], {}, 1e-12)
    assert a.cached and not b.cached
    ra, _ = a.advance(40, 10**9)
    ra = ra.copy()
    rb, _ = b.advance(40, 10**9)
    np.testing.assert_array_equal(ra[:, :9], rb[:, :9])  # all but kernel_computed
    assert ra[-1, 9] == 0 and rb[-1, 9] == rb[-1, 6] > 0
    np.testing.assert_array_equal(a.iterate(), b.iterate())
    if method == "smo":  # and with an LRU cache of 10 kernel columns (n = 120)
        pb_lru = build_problem(
            "lssvm", _random(n=120, seed=6), C=5.0, sigma2=3.0, kernel_cache_mb=0.01
        )
        c = build_solver(pb_lru, method, STEPS[method], {}, 1e-12)
        assert not c.cached and c._cols.shape[0] == 10
        rc, _ = c.advance(40, 10**9)
        np.testing.assert_array_equal(ra[:, :9], rc[:, :9])
        assert (c._slot_of >= 0).sum() == 10  # the cache filled
        # Computed = distinct misses: at least the 10 slots' columns, less than every fetch.
        assert 10 * 120 <= rc[-1, 9] < rc[-1, 6] and rc[-1, 9] % 120 == 0


@pytest.mark.slow
def test_csr_input_gives_the_dense_solution():
    ds = _random(n=80, seed=7)
    X = ds.X.copy()
    X[np.abs(X) < 0.8] = 0.0
    dense = Dataset(name="d", X=X, y=ds.y, task="binary", source="test")
    csr = Dataset(name="s", X=sp.csr_matrix(X), y=ds.y, task="binary", source="test")
    out = []
    for d in (dense, csr):
        pb = build_problem("lssvm", d, C=1.0, sigma2=2.0)
        solver, _ = _solve(pb, "cg-reduced", tol=1e-10)
        out.append(solver.iterate())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-6, atol=1e-8)


def test_bad_settings_and_labels_are_clear_errors():
    from ermviz.errors import ErmvizError

    ds = _random()
    with pytest.raises(ErmvizError, match="C"):
        build_problem("lssvm", ds, C=0.0)
    with pytest.raises(ErmvizError, match="sigma2"):
        build_problem("lssvm", ds, sigma2=-1.0)
    reg = _random(task="regression")
    with pytest.raises(ErmvizError, match="binary classification"):
        build_problem("lssvm", reg, task="classification")
    pb = build_problem("lssvm", reg)  # auto: regression, sigma2 by the median heuristic
    assert pb.task == "regression" and pb.settings["sigma2"] > 0


def test_a_kernel_matrix_that_never_fits_is_refused_for_cg_with_an_estimate():
    from ermviz.errors import SettingError
    from ermviz.registry import get_method

    n = 120_000  # 107 GB of kernel matrix; on the fly, ~60 s per CG iteration
    rng = np.random.default_rng(0)
    ds = Dataset(name="big", X=rng.normal(size=(n, 2)), y=np.where(rng.random(n) < 0.5, -1.0, 1.0),
                 task="binary", source="test")  # fmt: skip
    pb = build_problem("lssvm", ds, sigma2=1.0)
    notice = get_method("cg-reduced").advise(pb)[0]
    assert "kernel_cache_mb=256" in notice and "s per iteration" in notice and "smo" in notice
    with pytest.raises(SettingError, match=r"109,863 MB\) does not fit kernel_cache_mb=256") as err:
        build_solver(pb, "cg-reduced", "cg", {}, 1e-6)
    assert "use method smo" in str(err.value)
    small = build_problem("lssvm", _random(n=50), sigma2=1.0, kernel_cache_mb=0.0)
    assert get_method("cg-reduced").advise(small)  # on the fly, but allowed: a notice
    build_solver(small, "cg-reduced", "cg", {}, 1e-6)


@pytest.mark.requires_data("waveform")
def test_cli_summary_reports_d_the_relative_gap_kernel_evals_and_bias(capsys, real_data):
    import json

    from ermviz.cli import main

    argv = ["run", "--dataset", "waveform", "--problem", "lssvm", "--C", "1"]
    argv += ["--set", "sigma2=24.5325", "--method", "cg-reduced", "--tol", "1e-6", "--no-progress"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["certificate_kind"] == "rel_duality_gap" and out["gap"] <= 1e-6
    assert round(out["objective"], 3) == 55.415  # seed 004, Table 1: waveform, log10 C = 0
    n = 400
    assert out["kernel_evals"] == out["iterations"] * n * (n + 1) // 2
    assert out["sigma2"] == 24.5325 and np.isfinite(out["bias"])
    assert 0.5 < out["test_accuracy"] <= 1.0


@pytest.mark.requires_data("waveform")
def test_the_dashboard_races_the_three_methods_to_the_same_d(real_data):
    import time

    from ermviz.app.state.model import DashboardModel

    m = DashboardModel(notifier=lambda level, msg: None)
    m.dataset = "waveform"
    m.problem = "lssvm"
    m.tol = 1e-8
    assert [(s.method, s.step) for s in m.specs] == [
        ("cg-reduced", "cg"),
        ("cg-two-system", "cg"),
        ("smo", "smo"),
    ]
    slots = m.start()
    end = time.perf_counter() + 60
    while not all(s.done for s in slots) and time.perf_counter() < end:
        time.sleep(0.05)
    assert all(s.status == "converged" for s in slots), [s.status for s in slots]
    finals = [s.run.frame()["dual_objective"].iloc[-1] for s in slots]
    np.testing.assert_allclose(finals, finals[0], rtol=1e-7)


def test_predictions_and_k_alpha_match_scikit_learn_rbf_kernel():
    from sklearn.metrics.pairwise import rbf_kernel

    rng = np.random.default_rng(11)
    ds = _random(n=90, p=4, seed=11)
    X = ds.X.copy()
    X[np.abs(X) < 0.5] = 0.0
    Xq = rng.normal(size=(37, 4))
    alpha = rng.normal(size=90)
    for data in (X, sp.csr_matrix(X)):
        pb = build_problem(
            "lssvm", Dataset(name="d", X=data, y=ds.y, task="binary", source="test"), sigma2=1.7
        )
        gamma = 1.0 / (2.0 * 1.7)
        for query in (Xq, sp.csr_matrix(Xq)):
            np.testing.assert_allclose(
                pb.kernel_times(query, alpha), rbf_kernel(Xq, X, gamma=gamma) @ alpha, rtol=1e-12
            )
        Q = rbf_kernel(X, X, gamma=gamma) + np.eye(90) / pb.C
        np.testing.assert_allclose(pb.q_times(alpha), Q @ alpha, rtol=1e-12)
        b = float(np.mean(ds.y - Q @ alpha))
        assert pb.bias(alpha) == pytest.approx(b, rel=1e-12)
        f = rbf_kernel(Xq, X, gamma=gamma) @ alpha + b
        np.testing.assert_allclose(pb.decision_function(Xq, alpha), f, rtol=1e-11)


@pytest.mark.parametrize("method", list(STEPS))
def test_decision_state_is_alpha_and_its_gap_minimizing_bias(method):
    # The kernel's F is y - Q alpha exactly (reduced CG too, with F_n tracked), so the
    # bias the dashboard draws and the summary reports is mean(y - Q alpha) of a dense
    # reference, at every row and at the end, and the remembered bias is that one.
    pb = build_problem("lssvm", _random(n=70, seed=12), C=5.0, sigma2=1.5)
    Q = _kernel(pb.X, pb.sigma2) + np.eye(pb.n) / pb.C
    solver = build_solver(pb, method, STEPS[method], {}, 1e-12)
    for _ in range(5):
        solver.advance(3, 10**9)
        alpha, b = solver.decision_state()
        assert b == pytest.approx(np.mean(pb.y - Q @ alpha), rel=1e-9, abs=1e-12)
    solver, _ = _solve(pb, method, tol=1e-10)
    alpha = solver.iterate()
    _, b_ref, _ = _kkt(pb)
    assert pb.bias(alpha) == pytest.approx(b_ref, abs=1e-6)
    # The remembered bias is returned without a product: poison the data to prove it.
    saved, pb.y = pb.y, np.full_like(pb.y, np.nan)
    try:
        assert pb.bias(alpha) == pytest.approx(b_ref, abs=1e-6)
    finally:
        pb.y = saved


def test_the_decision_plane_draws_the_classifier_on_two_features():
    from sklearn.metrics.pairwise import rbf_kernel

    two = _random(n=50, p=2, seed=13)
    pb = build_problem("lssvm", two, C=2.0, sigma2=0.8)
    plane = pb.decision_plane()
    assert plane is not None and plane.points.shape == (50, 2)
    solver, _ = _solve(pb, "smo", tol=1e-8)
    state = solver.decision_state()
    xs, ys, G = plane.grid(17)
    assert G.shape == (17 * 17, 2) and xs.size == ys.size == 17
    x0, x1, y0, y1 = plane.window()
    assert x0 < two.X[:, 0].min() and x1 > two.X[:, 0].max()
    assert y0 < two.X[:, 1].min() and y1 > two.X[:, 1].max()
    f = rbf_kernel(G, two.X, gamma=1.0 / 1.6) @ state[0] + state[1]
    np.testing.assert_allclose(plane.values(G, state), f, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(plane.weights(state), np.abs(state[0]))
    # Training accuracy of the drawn classifier equals the problem's own predictions.
    assert np.array_equal(
        np.sign(plane.values(two.X, state)), np.sign(pb.decision_function(two.X, state[0]))
    )
    # Not drawn: more than two features, or regression.
    assert build_problem("lssvm", _random(n=30, p=3)).decision_plane() is None
    reg = _random(n=30, p=2, task="regression")
    assert build_problem("lssvm", reg).decision_plane() is None


def test_the_teaching_view_draws_each_runs_boundary_live_and_in_the_export():
    import time

    from bokeh.plotting.contour import contour_data

    from ermviz.app.plots.boundary import BoundaryPlot
    from ermviz.app.state import urlstate
    from ermviz.app.views.page import Dashboard

    d = Dashboard()
    urlstate.load(
        d.model,
        "?dataset=blobs&problem=lssvm&p.C=10&tol=1e-10&max_time=30&run=cg-reduced:cg&run=smo:smo",
    )
    assert isinstance(
        d.teaching_view.build().boundary_plot, BoundaryPlot
    )  # the preview: the data, no run
    assert (
        len(d.teaching_view.build().boundary_plot.figures) == 1
        and not d.teaching_view.build().boundary_plot.images[0].data["image"]
    )
    d.start_sync()
    plot = d.teaching_view.build().boundary_plot
    assert isinstance(plot, BoundaryPlot) and len(plot.figures) == 2
    end = time.perf_counter() + 60
    while d.model.active and time.perf_counter() < end:
        d.streamer.pull()
        time.sleep(0.05)
    d.streamer.pull()  # the final pull redraws every run at its last iterate
    pb = d.model.problem_obj
    ref_alpha, ref_b, _ = _kkt(pb)
    for i, src in enumerate(d.streamer.sources):
        assert src.slot.status == "converged"
        Z = np.asarray(plot.images[i].data["image"][0])
        # The drawn grid is the scipy KKT solution's decision function.
        f = _kernel_between(plot.grid, pb.X, pb.sigma2) @ ref_alpha + ref_b
        np.testing.assert_allclose(Z.ravel(), f, atol=1e-4 * np.abs(f).max())  # gap 1e-10
        sizes = np.asarray(plot.points[i].data["size"])
        w = np.abs(ref_alpha)
        assert np.argmax(sizes) == np.argmax(w) and sizes.min() >= 3.0
        # The black line drawn is the zero level of that grid.
        drawn = plot.contours[i].line_renderer.data_source.data
        expected = contour_data(plot.xs, plot.ys, Z, [0.0]).line_data
        assert len(drawn["xs"][0]) > 2
        np.testing.assert_allclose(drawn["xs"][0], expected.xs[0])
    html = d.export_view.export_html().getvalue().decode()
    assert html.count("boundary-image") >= 2  # the snapshot figures are in the export


def _kernel_between(A, B, sigma2):
    A, B = np.asarray(A), B.toarray() if sp.issparse(B) else np.asarray(B)
    d = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    return np.exp(-d / (2.0 * sigma2))


def test_the_race_plots_can_count_kernel_evaluations_on_x():
    import time

    from ermviz.app.state import urlstate
    from ermviz.app.views.page import Dashboard

    d = Dashboard()
    urlstate.load(
        d.model, "?dataset=blobs&problem=lssvm&tol=1e-10&max_time=30&run=cg-reduced:cg&run=smo:smo"
    )
    assert d.model.param.x_axis.objects == ["iteration", "kernel_evals", "kernel_computed"]
    d.start_sync()
    end = time.perf_counter() + 60
    while d.model.active and time.perf_counter() < end:
        d.streamer.pull()
        time.sleep(0.05)
    d.streamer.pull()
    d.model.x_axis = "kernel_evals"  # the curves are sent again, on the new axis
    d.streamer.pull()
    assert d.race_view.figures[0].xaxis.axis_label == "kernel evaluations + 1"
    n = d.model.problem_obj.n
    per_step = {"cg-reduced": n * (n + 1) // 2, "smo": 2 * n}  # the stated count
    for src in d.streamer.sources:
        data = src.trace.data
        it, work = np.asarray(data["iteration"]), np.asarray(data["work"])
        assert it.size > 2 and it[-1] == src.slot.run.trace.last()["iteration"]
        np.testing.assert_array_equal(work, it * per_step[src.slot.method])
        np.testing.assert_array_equal(np.asarray(data["w1"]), work + 1)
    d.model.problem = "svm-dual"  # no kernel counter there: back to iterations
    assert d.model.x_axis == "iteration"
    assert d.model.param.x_axis.objects == ["iteration", "data_passes"]  # the FW family's


def test_moons_is_bundled_and_opens_the_ls_svm_boundary_view():
    from sklearn.datasets import make_moons

    from ermviz.app.plots.boundary import BoundaryPlot
    from ermviz.app.views.page import Dashboard

    ds = load_dataset("moons", noise=0.1, seed=3)
    X, y01 = make_moons(n_samples=300, noise=0.1, random_state=3)
    np.testing.assert_array_equal(ds.X, X)
    np.testing.assert_array_equal(ds.y, np.where(y01 == 1, 1.0, -1.0))
    d = Dashboard()
    d.model.dataset = "moons"  # the preset: LS-SVM, its three methods, the boundary view
    assert d.model.problem == "lssvm" and len(d.model.specs) == 3
    assert isinstance(d.teaching_view.build().boundary_plot, BoundaryPlot)
    # A Gaussian kernel separates the moons: the LS-SVM solution beats any line.
    pb = build_problem("lssvm", load_dataset("moons"), C=10.0, sigma2=0.1)
    solver, _ = _solve(pb, "cg-reduced", tol=1e-8)
    acc = np.mean(np.sign(pb.decision_function(pb.X, solver.iterate())) == pb.y)
    from sklearn.svm import LinearSVC

    linear = LinearSVC(C=10.0).fit(pb.X, pb.y).score(pb.X, pb.y)
    assert acc >= 0.97 > linear


@pytest.mark.long(seconds=8)
@pytest.mark.parametrize("method", ["cg-reduced", "cg-two-system"])
def test_pause_and_stop_interrupt_a_product_computed_on_the_fly(method):
    # n = 20 000 on the fly: one product is 2e8 kernel values (over a second). Pause and
    # stop must not wait for it; a cut product is redone, so the step is unchanged.
    import time

    from solvers import lssvm as lk

    n = 20_000
    rng = np.random.default_rng(8)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    ds = Dataset(name="big2d", X=X, y=y, task="binary", source="test")
    pb = build_problem("lssvm", ds, C=1.0, sigma2=1.0, kernel_cache_mb=0.0)
    per_iteration = n * (n + 1) // 2 * (2 if method == "cg-two-system" else 1)

    run = Run(build_solver(pb, method, "cg", {}, 1e-12), Budget(max_iter=1, max_time=600))
    run.start()
    time.sleep(0.3)
    run.pause()
    time.sleep(0.3)  # the kernel notices at its next kernel column
    computed = int(run.solver.istate[lk.I_KCOMPUTED])
    assert 0 < computed < per_iteration  # cut inside the first iteration's products
    time.sleep(0.3)
    assert int(run.solver.istate[lk.I_KCOMPUTED]) == computed  # idle while paused
    run.resume()
    assert run.join(300)
    frame = run.frame()
    assert run.status == "max_iter" and frame["iteration"].tolist() == [0, 1]
    assert frame["kernel_evals"].iloc[-1] == per_iteration  # the paper's count: one step
    assert frame["kernel_computed"].iloc[-1] == per_iteration + computed  # cut one redone
    # The recorded D after the step is the reference D at that alpha (a cut product left
    # in the CG state would break this).
    alpha = run.solver.iterate()
    assert np.abs(alpha).max() > 0
    assert frame["dual_objective"].iloc[-1] == pytest.approx(pb.objective(alpha), rel=1e-9)

    stop = Run(build_solver(pb, method, "cg", {}, 1e-12), Budget(max_time=600))
    stop.start()
    time.sleep(0.3)
    stop.stop()
    assert stop.join(60) and stop.status == "stopped"
    last = stop.trace.last()
    assert last["iteration"] == 0 and last["kernel_computed"] < per_iteration
