"""The dashboard races the meta-learning methods on ``sine-tasks`` (problem ``maml-sine``):
the dataset's preset, a samples budget every run respects exactly, and curves that fall
below the untrained network's meta-test loss computed independently in numpy."""

from __future__ import annotations

import numpy as np
import pytest


def _numpy_net(w: np.ndarray, hidden: int, x: np.ndarray) -> np.ndarray:
    """The 1-H-H-1 ReLU network of solvers/maml.py, written again in numpy."""
    H = hidden
    W1, b1 = w[:H], w[H : 2 * H]
    W2 = w[2 * H : 2 * H + H * H].reshape(H, H)
    b2 = w[2 * H + H * H : 3 * H + H * H]
    W3, b3 = w[3 * H + H * H : 4 * H + H * H], w[-1]
    a1 = np.maximum(np.outer(x, W1) + b1, 0.0)
    a2 = np.maximum(a1 @ W2.T + b2, 0.0)
    return a2 @ W3 + b3


@pytest.mark.slow
def test_the_dashboard_races_the_meta_learning_methods_on_one_budget():
    from ermviz.app.state import urlstate
    from ermviz.app.state.model import DashboardModel

    m = DashboardModel(notifier=lambda level, msg: None)
    m.dataset = "sine-tasks"  # the preset: maml-sine, four methods, a samples budget
    assert m.problem == "maml-sine"
    assert [s.method for s in m.specs] == ["bsgd", "fo-maml", "adam", "bspiderboost"]
    assert m.param.x_axis.objects == ["iteration", "samples"]
    m.max_samples = 150_000
    m.problem_settings = {**m.problem_settings, "hidden": 16, "eval_tasks": 40}
    slots = m.start()
    for slot in slots:
        assert slot.run.join(180)
    pb = m.build_problem()
    w0 = pb.initial_point()
    # The untrained network's MAML objective on the held-out tasks, from scratch in numpy:
    # one adaptation step on the population (the midpoint grid), by finite differences.
    grid = pb.eval_grid
    losses = []
    for a, ph in zip(pb.eval_amp, pb.eval_phase, strict=True):
        y = a * np.sin(grid - ph)

        def mse(w, y=y):
            return float(np.mean((_numpy_net(w, 16, grid) - y) ** 2))

        eps = 1e-6
        g = np.array([(mse(w0 + eps * e) - mse(w0 - eps * e)) / (2 * eps) for e in np.eye(w0.size)])
        losses.append(mse(w0 - pb.alpha * g))
    f0 = float(np.mean(losses))
    for slot in slots:
        fr = slot.run.frame()
        assert slot.status == "max_work", slot.message
        assert fr["samples"].iloc[-1] <= 150_000
        assert abs(fr["certificate"].iloc[0] - f0) <= 1e-6 * f0
        assert fr["certificate"].iloc[-1] < 0.8 * f0, slot.method
    state = urlstate.decode(urlstate.encode(m))
    assert state["max_samples"] == 150_000 and state["dataset"] == "sine-tasks"
