"""The scale rule of feasible sets (issue 47): radii and box bounds float64 cannot square.

``--radius 1e300`` (or a box of +-1e300) used to pass validation and end the run with
"objective or certificate became NaN/inf". The rule lives once, in
:mod:`ermviz.families.frank_wolfe.constraints`: the settings' range ``[1e-150, 1e150]``
(every surface reads it: CLI, dashboard widgets, links, estimators) and, once the data are
known, the largest margin ``sqrt(DBL_MAX / n) / 4`` the set may allow. Each surface must
refuse with one line naming the allowed range; at the largest value the rule allows, a run
must end without NaN or inf.
"""

from __future__ import annotations

import numpy as np
import pytest

from ermviz.cli import main
from ermviz.errors import SettingError

RANGE = "allowed range [1e-150, 1e+150]"
BOX_RANGE = "allowed range [-1e+150, 1e+150]"
WHY = "float64 squares numbers only within about 1e-154 to 1e154"


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["run", *argv, "--no-progress"])
    out, err = capsys.readouterr()
    return code, out, err


BOX = ["--set", "constraint=box"]
REFUSED = {
    "logreg radius": (["--problem", "logreg-l1", "--radius", "1e300"], "radius=1e+300", RANGE),
    "lsq radius": (["--problem", "least-squares", "--radius", "1e300"], "radius=1e+300", RANGE),
    "tiny radius": (["--problem", "logreg-l1", "--radius", "1e-300"], "radius=1e-300", RANGE),
    "box +-1e300": (
        ["--problem", "logreg-l1", *BOX, "--set", "lo=-1e300", "--set", "hi=1e300"],
        "lo=-1e+300",
        BOX_RANGE,
    ),
    "box hi 1e300": (
        ["--problem", "least-squares", *BOX, "--set", "hi=1e300"],
        "hi=1e+300",
        BOX_RANGE,
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_cli_refuses_a_scale_float64_cannot_square(capsys, case: str) -> None:
    argv, what, allowed = REFUSED[case]
    dataset = "sk-diabetes" if "least-squares" in argv else "toy-2d"
    code, out, err = _cli(capsys, "--dataset", dataset, "--method", "fw", *argv)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ermviz: error: ")
    assert f"{what} is out of range; {allowed}" in lines[0] and WHY in lines[0]


def test_cli_refuses_matrix_completion_radius_1e300(capsys) -> None:
    code, out, err = _cli(
        capsys, "--dataset", "lowrank-ratings", "--problem", "matrix-completion",
        "--method", "fw", "--radius", "1e300",
    )  # fmt: skip
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert RANGE in err


def _huge_features(tmp_path) -> str:
    """Four rows whose first feature reaches 1e100: the data-dependent limit binds."""
    path = tmp_path / "huge.svm"
    path.write_text("+1 1:1e100 2:3\n-1 1:-2e99 2:1\n+1 1:5e99 2:-1\n-1 1:1 2:2\n")
    return str(path)


def test_cli_refuses_a_radius_this_data_cannot_square(capsys, tmp_path) -> None:
    # Margins reach radius x 1e100; n = 4 rows: allowed radius <= sqrt(DBL_MAX / 4) / 4 /
    # 1e100 = 1.68e53.
    limit = np.sqrt(np.finfo(float).max / 4) / 4 / 1e100
    path = _huge_features(tmp_path)
    code, out, err = _cli(
        capsys, "--dataset", path, "--problem", "logreg-l1", "--method", "fw",
        "--radius", "1e60",
    )  # fmt: skip
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "radius=1e+60 is too large for this data" in lines[0]
    assert f"allowed radius <= {limit:.3g} here" in lines[0]


@pytest.mark.parametrize("method", ["fw", "pfw", "face-newton"])
def test_at_the_largest_allowed_scale_runs_stay_finite(capsys, tmp_path, method) -> None:
    """Just inside both limits (radius just below the data's, a box just below its own),
    a run ends without NaN/inf (status converged, max_iter or stalled, never error)."""
    import json

    path = _huge_features(tmp_path)
    radius = float(0.999 * np.sqrt(np.finfo(float).max / 4) / 4 / 1e100)
    for extra in (
        ["--radius", repr(radius)],
        ["--set", "constraint=box", "--set", f"lo={-radius / 2!r}", "--set", f"hi={radius / 2!r}"],
    ):
        code, out, err = _cli(
            capsys, "--dataset", path, "--problem", "logreg-l1", "--method", method,
            "--max-iter", "50", "--max-time", "10", *extra,
        )  # fmt: skip
        assert code == 0, err
        summary = json.loads(out.strip().splitlines()[-1])
        assert summary["status"] in ("converged", "max_iter", "stalled"), summary
        assert np.isfinite(summary["objective"]) and np.isfinite(summary["gap"])


def test_estimators_refuse_with_the_range() -> None:
    from ermviz import estimators as E

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    with pytest.raises(SettingError, match=r"radius=1e\+300 is out of range; allowed range"):
        E.ConstrainedLogisticRegression(radius=1e300).fit(X, y)
    with pytest.raises(SettingError, match=r"lo=-1e\+300 is out of range"):
        E.ConstrainedLeastSquares(constraint="box", lo=-1e300, hi=1e300).fit(X, X[:, 1])


def test_a_link_drops_the_bad_radius_and_bound_and_applies_the_rest() -> None:
    from ermviz.app.state import urlstate
    from ermviz.app.state.model import DashboardModel

    notes: list[tuple[str, str]] = []
    m = DashboardModel(notifier=lambda level, msg: notes.append((level, msg)))
    message = urlstate.load(
        m,
        "dataset=toy-2d&problem=logreg-l1&p.radius=1e300&p.constraint=box&p.lo=-1e300"
        "&p.hi=0.5&max_time=7",
    )
    assert m.problem == "logreg-l1" and m.max_time == 7.0
    assert m.problem_settings == {"constraint": "box", "hi": 0.5}
    assert "dropped 2 elements" in message and message.count(RANGE) == 1
    assert "radius=1e+300" in message and "lo=-1e+300" in message and BOX_RANGE in message
    assert notes == [("error", message)]


def test_the_radius_widget_reverts_and_names_the_range() -> None:
    pytest.importorskip("panel")
    from ermviz.app.state.model import DashboardModel
    from ermviz.app.views.widgets import setting_widget
    from ermviz.registry import PROBLEMS

    notes: list[tuple[str, str]] = []
    m = DashboardModel(notifier=lambda level, msg: notes.append((level, msg)))
    m.problem = "logreg-l1"
    decl = {s.name: s for s in PROBLEMS["logreg-l1"].settings_decl}
    w = setting_widget(decl["radius"], m.problem_value("radius"), m.set_problem_setting, m)
    w.value = 1e12  # representable: kept
    assert m.problem_settings["radius"] == 1e12
    w.value = 1e300
    assert w.value == 1e12 and m.problem_settings["radius"] == 1e12
    assert RANGE in notes[-1][1] and WHY in notes[-1][1]
    assert "allowed: [1e-150, 1e+150]" in w.description  # the tooltip names it too
