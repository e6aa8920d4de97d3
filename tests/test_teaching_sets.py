"""The teaching view's l2 disc and box of R^2: their geometry (membership, projection,
active set), their teaching figure, and the step markers of lazy / local / boosted steps.

References are closed forms written here (``x^2 + y^2 <= r^2``, ``lo <= x, y <= hi``,
the corners in the solver's order), not the module's own helpers.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from bokeh.models import ColumnDataSource, GlyphRenderer, GroupFilter, Scatter

from ermviz.app.plots.figures import STEP_MARKERS, TracePlots
from ermviz.app.plots.streaming import OBJECTIVE_COLUMNS, RunSources, frozen_trace_data
from ermviz.app.plots.teaching_plot import TeachingPlot
from ermviz.app.state.race import Slot
from ermviz.geometry import box_geometry, l1_ball_geometry, l2_ball_geometry
from solvers.tags import STEP_NAMES

R = 1.5
LO, HI = -1.0, 2.0


class Quadratic:
    """``||x - c||^2`` on R^2: a stand-in problem with an ``objective``."""

    def __init__(self, center=(0.3, -0.2)) -> None:
        self.center = np.asarray(center, dtype=float)

    def objective(self, x: np.ndarray) -> float:
        d = np.asarray(x, dtype=float) - self.center
        return float(d @ d)


def in_disc(x: float, y: float) -> bool:
    return x * x + y * y <= R * R


def in_box(x: float, y: float) -> bool:
    return LO <= x <= HI and LO <= y <= HI


SETS = {
    "disc": (lambda: l2_ball_geometry(2, R), in_disc, (-2.0, 2.0, -2.0, 2.0)),
    "box": (lambda: box_geometry(2, LO, HI), in_box, (-2.0, 3.0, -2.0, 3.0)),
}


# -- geometry -------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0, 1, 3, 4, 10])
def test_only_two_features_have_a_drawing(p):
    assert l2_ball_geometry(p, R) is None
    assert box_geometry(p, LO, HI) is None


def test_kinds_and_the_box_corners_in_the_solver_order():
    disc = l2_ball_geometry(2, R)
    box = box_geometry(2, LO, HI)
    assert disc.kind == "disc" and box.kind == "box"
    assert disc.radius == R
    np.testing.assert_array_equal(box.atoms, [[-1.0, -1.0], [2.0, -1.0], [2.0, 2.0], [-1.0, 2.0]])
    assert len(box.atom_labels) == 4
    # The 4 sides: each edge is axis-parallel, of length hi - lo.
    assert len(box.edges) == 4
    for i, j in box.edges:
        d = np.abs(box.atoms[i] - box.atoms[j])
        assert sorted(d.tolist()) == [0.0, HI - LO]
    # The disc: no atom, and its drawn boundary is a fine closed polygon on the circle.
    assert disc.atoms.shape == (0, 2)
    ring = disc.outline_xy()
    assert ring.shape[0] >= 65
    np.testing.assert_allclose(ring[0], ring[-1])
    np.testing.assert_allclose(np.hypot(ring[:, 0], ring[:, 1]), R)
    angles = np.unwrap(np.arctan2(ring[:, 1], ring[:, 0]))
    assert abs(abs(angles[-1] - angles[0]) - 2 * math.pi) < 1e-9  # once around
    square = box.outline_xy()
    assert {tuple(pt) for pt in square} == {(-1.0, -1.0), (2.0, -1.0), (2.0, 2.0), (-1.0, 2.0)}


@pytest.mark.parametrize("name", ["disc", "box"])
def test_point_at_and_objective_grid_are_nan_exactly_outside_the_set(name):
    make, inside, window = SETS[name]
    g = make()
    problem = Quadratic()
    xs, ys, Z = g.objective_grid(problem, resolution=57, window=window)
    checked = 0
    for i, y in enumerate(ys):
        for j, x in enumerate(xs):
            member = inside(x, y)
            point = g._point_at(np.array([x, y]))
            assert (point is not None) == member, (x, y)
            assert np.isfinite(Z[i, j]) == member, (x, y)
            if member:
                np.testing.assert_array_equal(point, [x, y])  # Cartesian: the point itself
                assert Z[i, j] == pytest.approx(problem.objective(np.array([x, y])))
                checked += 1
    assert 0 < checked < xs.size * ys.size
    # Default window: the whole set, a little padded (disc: ~pi/4 of its square).
    xs, ys, Z = g.objective_grid(problem, resolution=41)
    share = np.isfinite(Z).mean()
    expected = math.pi / 4 if name == "disc" else 1.0
    assert 0.85 * expected < share <= expected
    assert xs[0] < g.extent()[0][0] and xs[-1] > g.extent()[1][0]


def test_boundary_points_belong_to_the_sets():
    disc = l2_ball_geometry(2, R)
    for t in np.linspace(0, 2 * math.pi, 9):
        assert disc._point_at(0.999 * R * np.array([math.cos(t), math.sin(t)])) is not None
        assert disc._point_at(1.001 * R * np.array([math.cos(t), math.sin(t)])) is None
    box = box_geometry(2, LO, HI)
    for corner in box.atoms:
        assert box._point_at(corner.copy()) is not None
    assert box._point_at(np.array([HI + 1e-9, 0.0])) is None
    assert box._point_at(np.array([0.0, LO - 1e-9])) is None


@pytest.mark.parametrize("name", ["disc", "box"])
def test_project_is_the_first_two_coordinates(name):
    g = SETS[name][0]()
    X = np.random.default_rng(0).normal(size=(7, 2))
    np.testing.assert_array_equal(g.project(X), X)
    np.testing.assert_array_equal(g.project(X[3]), X[3:4])
    X3 = np.random.default_rng(1).normal(size=(5, 3))
    np.testing.assert_array_equal(g.project(X3), X3[:, :2])


def test_active_atoms_of_the_box_and_of_the_disc():
    box = box_geometry(2, LO, HI)
    np.testing.assert_array_equal(box.active_atoms(np.array([0.25, 0.0, 0.75, 0.0])), [0, 2])
    np.testing.assert_array_equal(box.active_atoms(np.array([0.0, 1.0, 0.0, 0.0])), [1])
    np.testing.assert_array_equal(box.active_atoms(np.array([0.1, 0.2, 0.3, 0.4])), [0, 1, 2, 3])
    for g in (box, l2_ball_geometry(2, R)):
        act = g.active_atoms(np.zeros(0))
        assert act.size == 0 and act.dtype.kind == "i"
        assert g.atoms[act].shape == (0, 2)  # what the streaming pull draws: nothing


# -- the teaching figure ----------------------------------------------------------------------


def _fake_slot(X: np.ndarray, W: np.ndarray) -> Slot:
    its = np.arange(X.shape[0])
    run = SimpleNamespace(run_id="r1", keep_iterates=True, iterates=lambda: (its, X, W))
    return Slot(0, "BPCG lazy", "#d62728", "bpcg", "exact", {}, run=run)


def _lines(fig) -> list[np.ndarray]:
    out = []
    for r in fig.renderers:
        if isinstance(r, GlyphRenderer) and type(r.glyph).__name__ == "Line":
            data = r.data_source.data
            if "x" in data and len(data["x"]) > 2:
                out.append(np.column_stack([data["x"], data["y"]]))
    return out


@pytest.mark.parametrize(
    ("name", "title", "X", "W", "active"),
    [
        (
            "disc",
            "l2 disc of radius 1.5",
            np.array([[0.0, 0.0], [1.5, 0.0], [0.6, -0.4], [0.4, -0.3]]),
            np.zeros((4, 0)),
            [],
        ),
        (
            "box",
            "box [-1, 2]^2",
            np.array([[0.5, 0.5], [2.0, -1.0], [0.8, -0.1], [0.3, -0.2]]),
            np.array([[0.25] * 4, [0, 1, 0, 0], [0.2, 0.5, 0.3, 0], [0.4, 0.3, 0.0, 0.3]]),
            [[-1.0, -1.0], [2.0, -1.0], [-1.0, 2.0]],
        ),
    ],
)
def test_teaching_figure_of_the_disc_and_the_box(name, title, X, W, active):
    g = SETS[name][0]()
    problem = Quadratic()
    preview = TeachingPlot(g, problem)
    assert title in preview.main.title.text.replace("\n", " ")  # long titles wrap
    assert preview.main.axis[0].visible  # Cartesian coordinates: axes shown
    assert preview.levels.size >= 3  # contours drawn
    # The set's boundary is drawn as a closed polygon (disc: the fine circle).
    outlines = [ln for ln in _lines(preview.main) if ln.shape == g.outline_xy().shape]
    assert any(np.allclose(ln, g.outline_xy()) for ln in outlines)
    # A live race: path, current iterate and active set streamed as the dashboard does.
    src = RunSources(0)
    src.bind(_fake_slot(X, W), g)
    src._pull_iterates()
    np.testing.assert_array_equal(np.column_stack([src.path.data["x"], src.path.data["y"]]), X)
    got = np.column_stack([src.active.data["x"], src.active.data["y"]]).reshape(-1, 2)
    assert sorted(map(tuple, got.tolist())) == sorted(map(tuple, active))
    live = TeachingPlot(g, problem, [src])
    live.track(final=True)
    assert live.zoom is not None and live.zoom.x_range.start < 0.4 < live.zoom.x_range.end
    assert len(live.layout()) == 2


def test_the_diamond_is_still_drawn_with_axes_and_its_title():
    plot = TeachingPlot(l1_ball_geometry(2, 2.0), Quadratic())
    assert "l1 ball of radius 2" in plot.main.title.text.replace("\n", " ")
    assert plot.main.axis[0].visible


# -- step markers ------------------------------------------------------------------------------

TAGS = ["fw", "lazy", "local", "boosted", "lazy", "away", "pairwise", "drop", "local", "none"]


def _trace_plots(show_steps: bool) -> tuple[TracePlots, ColumnDataSource]:
    n = len(TAGS)
    frame = pd.DataFrame(
        {
            "iteration": np.arange(n),
            "time_s": np.linspace(0.001, 0.01, n),
            "cpu_s": np.linspace(0.001, 0.01, n),
            "certificate": np.logspace(0, -6, n),
            "objective": 1.0 + np.logspace(0, -6, n),
            "step_size": np.full(n, 0.5),
            "active_size": np.arange(n) % 4 + 1,
            "step_type": TAGS,
        }
    )
    data = frozen_trace_data(frame)
    cds = ColumnDataSource(data)
    obj = ColumnDataSource({c: data[c] for c in OBJECTIVE_COLUMNS})
    best = ColumnDataSource({"best": [1.0]})
    plots = TracePlots([("BPCG lazy", "#d62728", cds, obj)], best, show_steps=show_steps)
    return plots, cds


def _step_renderers(fig) -> dict[str, list[GlyphRenderer]]:
    out: dict[str, list] = {}
    for r in fig.renderers:
        flt = getattr(getattr(r, "view", None), "filter", None)
        if isinstance(flt, GroupFilter) and flt.column_name == "step":
            out.setdefault(flt.group, []).append(r)
    return out


def test_lazy_local_and_boosted_steps_get_markers_of_their_own():
    assert {"lazy", "local", "boosted"} <= set(STEP_NAMES.values())
    old = {"triangle", "diamond", "x"}
    new = [STEP_MARKERS[t] for t in ("lazy", "local", "boosted")]
    assert len(set(new)) == 3 and not set(new) & old
    plots, cds = _trace_plots(show_steps=True)
    for fig in plots.figures[:2]:  # certificate vs iteration and vs time
        by_step = _step_renderers(fig)
        for tag in ("lazy", "local", "boosted"):
            (r,) = by_step[tag]
            assert isinstance(r.glyph, Scatter) and r.glyph.marker == STEP_MARKERS[tag]
            assert r.data_source is cds
            # The rows this filter keeps: exactly those tagged so (2 lazy, 2 local, 1 boosted).
            kept = [i for i, s in enumerate(cds.data["step"]) if s == r.view.filter.group]
            assert kept == [i for i, s in enumerate(TAGS) if s == tag]
    # The legend of the second plot says which marker is which step.
    (legend,) = plots.figures[1].legend
    entries = {item.label.value: item.renderers[0].glyph.marker for item in legend.items}
    for tag in ("lazy", "local", "boosted", "away"):
        (label,) = [lab for lab in entries if lab.startswith(tag)]
        assert entries[label] == STEP_MARKERS[tag]
    assert any("no LMO" in lab for lab in entries)
    # A click on the "lazy" entry hides the lazy markers of every run (server side too).
    (lazy_item,) = [it for it in legend.items if it.label.value.startswith("lazy")]
    lazy_item.renderers[0].visible = False
    assert all(not r.visible for f in plots.figures[:2] for r in _step_renderers(f)["lazy"])
    assert all(r.visible for f in plots.figures[:2] for r in _step_renderers(f)["local"])


def test_no_step_markers_nor_their_legend_unless_asked():
    plots, _ = _trace_plots(show_steps=False)
    assert all(not _step_renderers(f) for f in plots.figures)
    assert not plots.figures[1].legend


# -- the problem's own drawing ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "kind"),
    [
        ({"constraint": "l2", "radius": 1.5}, "disc"),
        ({"constraint": "box", "lo": -1.0, "hi": 2.0}, "box"),
        ({}, "diamond"),
    ],
)
def test_logreg_on_toy_2d_draws_its_constraint_set(settings, kind):
    from ermviz.data import load_dataset
    from ermviz.registry import build_problem

    problem = build_problem("logreg-l1", load_dataset("toy-2d"), **settings)
    g = problem.teaching_geometry()
    assert g.kind == kind
    if kind == "disc":
        assert g.radius == 1.5 and g.atoms.shape == (0, 2)
    if kind == "box":
        np.testing.assert_array_equal(g.atoms, [[-1, -1], [2, -1], [2, 2], [-1, 2]])
    x0 = problem.initial_point()
    assert g._point_at(g.project(x0)[0]) is not None  # the start point is in the drawing
    plot = TeachingPlot(g, problem)
    assert plot.levels.size >= 3


def test_the_teaching_path_marks_each_point_with_the_step_taken_from_it() -> None:
    """Issue 17: lazy, local and drop steps marked on the drawing itself. The path's tags
    are checked against the run's own trace (every row), and the path glyph maps each tag
    to its marker (lazy: a square)."""
    import time

    from ermviz.app.state.model import DashboardModel
    from ermviz.app.views.page import Dashboard

    notes: list = []
    m = DashboardModel(notifier=lambda level, msg: notes.append(msg))
    dash = Dashboard(m)
    m.dataset = "toy-2d"  # the l1 diamond at radius 3: FW zig-zags, pairwise steps drop
    m.step_delay = 0.0
    m.specs[1].method = "bpcg"
    m.specs[2].settings["lazy"] = True
    dash.start_sync()
    end = time.monotonic() + 60
    while not all(s.done for s in m.slots) and time.monotonic() < end:
        time.sleep(0.05)
    for _ in range(3):
        dash.streamer.pull()
    assert notes == [] and all(s.done for s in m.slots)
    seen: set[str] = set()
    for src in dash.streamer.sources:
        frame = src.slot.run.frame()
        tag_of = dict(zip(frame["iteration"], frame["step_type"], strict=True))
        its = [int(k) for k in src.path.data["iteration"]]
        assert len(its) > 1
        assert src.path.data["step"] == [tag_of[k] for k in its], src.slot.label
        seen |= set(src.path.data["step"])
    assert {"local", "drop", "fw"} <= seen  # BPCG's local steps, drops, FW's steps
    figs = [
        dash.teaching_view.build().teaching_plot.main,
        dash.teaching_view.build().teaching_plot.zoom,
    ]
    mappers = [
        r.glyph.marker.transform
        for f in figs
        for r in f.renderers
        if isinstance(getattr(r, "glyph", None), Scatter)
        and getattr(getattr(r.glyph, "marker", None), "field", None) == "step"
    ]
    assert mappers, "the path points' marker maps the step tags"
    factors = dict(zip(mappers[0].factors, mappers[0].markers, strict=True))
    assert factors["lazy"] == "square" and factors["local"] == "hex" and factors["fw"] == "circle"


# -- the contour grid, evaluated in one pass ----------------------------------------------


def _grid_cases():
    from ermviz.data import load_dataset
    from ermviz.registry import build_problem

    return (
        [
            ("toy-simplex-3", "svm-dual", {}),
            ("toy-simplex-4", "svm-dual", {}),
            ("toy-2d", "logreg-l1", {}),
            ("toy-2d", "logreg-l1", {"constraint": "l2"}),
            ("toy-2d", "logreg-l1", {"constraint": "box", "lo": -1.0, "hi": 2.0}),
            ("toy-2d", "least-squares", {"constraint": "l2"}),
        ],
        load_dataset,
        build_problem,
    )


@pytest.mark.parametrize("case", range(6))
def test_the_contour_grid_is_the_objective_at_each_drawn_point(case: int) -> None:
    # Reference: the problem's own one-point objective at the point each grid node draws,
    # mapped here by closed forms (Cartesian sets: the node; simplices: the barycentric
    # coordinates, by numpy's solver, on the first face that holds the node).
    from ermviz.app.plots.streaming import geometry_for

    cases, load_dataset, build_problem = _grid_cases()
    dataset, name, settings = cases[case]
    problem = build_problem(name, load_dataset(dataset), **settings)
    g = geometry_for(problem)
    xs, ys, Z = g.objective_grid(problem, resolution=31)
    rng = np.random.default_rng(case)
    checked = 0
    for i, j in zip(rng.integers(0, 31, 300), rng.integers(0, 31, 300), strict=True):
        xy = np.array([xs[j], ys[i]])
        point = None
        if g.cartesian:
            inside = {
                "diamond": abs(xy[0]) + abs(xy[1]) <= g.radius,
                "disc": xy @ xy <= g.radius**2,
                "box": bool(np.all((g.lo <= xy) & (xy <= g.hi))),
            }[g.kind]
            point = xy if inside else None
        else:
            for face in g.faces or [(0, 1, 2)]:
                tri = g.atoms[list(face), :2]
                lam = np.linalg.solve(np.vstack([tri.T, np.ones(3)]), np.append(xy, 1.0))
                if np.all(lam >= -1e-12):
                    point = np.zeros(g.atoms.shape[0])
                    point[list(face)] = np.clip(lam, 0, None) / np.clip(lam, 0, None).sum()
                    break
        if point is None:
            assert np.isnan(Z[i, j]), (xy, Z[i, j])
        else:
            assert Z[i, j] == pytest.approx(problem.objective(point), rel=1e-12, abs=1e-14)
            checked += 1
    assert checked > 50


def test_vectorized_objectives_equal_the_one_point_objective_on_sparse_data() -> None:
    from ermviz.data import load_dataset
    from ermviz.registry import build_problem

    a1a = load_dataset("a1a")  # CSR
    rng = np.random.default_rng(0)
    for name in ("logreg-l1", "least-squares"):
        problem = build_problem(name, a1a, radius=5.0)
        xs = rng.normal(size=(7, problem.dim)) / problem.dim
        want = [problem.objective(x) for x in xs]
        np.testing.assert_allclose(problem.objectives(xs), want, rtol=1e-12)
    dual = build_problem("svm-dual", load_dataset("toy-simplex-4"))
    alphas = rng.dirichlet(np.ones(dual.dim), size=5)
    np.testing.assert_allclose(
        dual.objectives(alphas), [dual.objective(a) for a in alphas], rtol=1e-12
    )


def _finish(dash, pulls: int = 3) -> None:
    import time

    end = time.monotonic() + 60
    while not all(s.done for s in dash.model.slots) and time.monotonic() < end:
        time.sleep(0.05)
    for _ in range(pulls):
        dash.streamer.pull()


def test_start_draws_the_runs_on_the_preview_and_a_second_start_builds_no_figure() -> None:
    """Issue 32 (Start to the first point): Start adds each run's path to the preview's own
    figure instead of drawing the set and its contours again, the zoom follows on the pull
    after the first points, and a second Start on the same problem reuses every figure.
    A changed problem gets a new drawing."""
    from ermviz.app.state.model import DashboardModel
    from ermviz.app.views.page import Dashboard

    notes: list = []
    m = DashboardModel(notifier=lambda level, msg: notes.append(msg))
    dash = Dashboard(m)
    m.dataset = "toy-2d"
    m.step_delay = 0.0
    view = dash.teaching_view
    view.build()  # the tab shows: the preview is drawn
    preview = view.teaching_plot
    assert preview is not None and preview.sources == [] and preview.zoom is None
    main, before = preview.main, len(preview.main.renderers)

    dash.start_sync()
    plot = view.teaching_plot
    assert plot is preview and plot.main is main and plot.zoom is None
    runs = len(m.slots)
    assert len(main.renderers) == before + 4 * runs  # path, its points, current, rings
    sources = {r.data_source for r in main.renderers[before:]}
    assert {src.path for src in dash.streamer.sources} <= sources
    _finish(dash)
    assert notes == []
    zoom = plot.zoom
    assert zoom is not None  # created once the first points had been sent
    row = view.teaching_row.objects[0]
    assert [p.object for p in row.objects] == [main, zoom]
    drawn = len(main.renderers)
    assert all(len(src.path.data["x"]) > 1 for src in dash.streamer.sources)

    dash.start_sync()
    assert view.teaching_plot is plot and plot.zoom is zoom and len(main.renderers) == drawn
    assert view.teaching_row.objects[0] is row
    _finish(dash)
    assert all(len(src.path.data["x"]) > 1 for src in dash.streamer.sources)

    m.problem_settings = {**m.problem_settings, "radius": 2.0}
    dash.start_sync()
    assert view.teaching_plot is not plot
    assert view.teaching_plot.problem.settings["radius"] == 2.0
    _finish(dash)
    assert notes == []


def test_frozen_graph_recomputes_the_document_once_and_only_when_it_changed(monkeypatch):
    """The served document's model graph is recomputed at the end of the block when a
    model was added (its new models known to the document), not at all otherwise, and a
    nested block reports its change to the enclosing one."""
    import panel as pn
    from bokeh.document import Document
    from bokeh.models import Column, Div

    from ermviz.app.compat import frozen_graph

    doc = Document()
    root = Column(children=[Div(text="a")])
    doc.add_root(root)
    doc._session_context = lambda: SimpleNamespace()  # as in a served session
    monkeypatch.setattr(pn.state, "_curdoc", doc, raising=False)
    monkeypatch.setattr(type(pn.state), "curdoc", property(lambda self: doc), raising=False)
    calls: list[int] = []
    recompute = doc.models.recompute
    monkeypatch.setattr(doc.models, "recompute", lambda: (calls.append(1), recompute())[1])

    with frozen_graph():
        root.children[0].text = "b"  # a property, no model added
    assert calls == []

    added = Div(text="c")
    with frozen_graph():
        with frozen_graph():
            root.children = [*root.children, added]
            assert doc.get_model_by_id(added.id) is None  # deferred
        other = Div(text="d")
        root.children = [*root.children, other]
    assert calls == [1]
    assert doc.get_model_by_id(added.id) is added and doc.get_model_by_id(other.id) is other
    assert "invalidate" not in doc.models.__dict__  # the document's own method again
