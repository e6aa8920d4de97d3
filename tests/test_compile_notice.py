"""One line when numba compiles, nothing when the cache is warm (ermviz.compile_notice,
issue 43): the CLI's first run on a bundled set, an estimator's first fit and a notebook's
race (the dashboard model; FW, AFW and PFW share their kernels) each say "compiling ...,
first run only" once on stderr with an empty ``NUMBA_CACHE_DIR``, and nothing with a warm
one; numba's compile event behaves as the module relies on.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ermviz import compile_notice

REPO = Path(__file__).resolve().parent.parent
NOTICE = "ermviz: compiling the "


def test_numba_fires_its_compile_event_for_compilations_only() -> None:
    # Fails loudly when a numba release changes what the notices rely on.
    compile_notice.check_numba()


def _run(code_or_args: list[str], cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "ERMVIZ_OFFLINE": "1"}
    env.pop("ERMVIZ_DATA", None)
    return subprocess.run(
        [sys.executable, *code_or_args], env=env, capture_output=True, text=True, cwd=REPO
    )


def _notices(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(NOTICE)]


@pytest.mark.long(seconds=60)
def test_the_cli_says_it_compiles_once_then_nothing(tmp_path: Path) -> None:
    args = ["-m", "ermviz", "run", "--dataset", "toy-2d", "--problem", "svm-dual",
            "--method", "pfw", "--step", "exact", "--max-iter", "20", "--no-progress"]  # fmt: skip
    cold = _run(args, tmp_path)
    assert cold.returncode == 0, cold.stderr
    assert _notices(cold.stderr) == [
        line for line in cold.stderr.splitlines()
        if line.startswith("ermviz: compiling the PFW kernels for svm-dual, first run only")
    ], cold.stderr  # fmt: skip
    assert len(_notices(cold.stderr)) == 1, cold.stderr
    warm = _run(args, tmp_path)
    assert warm.returncode == 0, warm.stderr
    assert _notices(warm.stderr) == [], warm.stderr


@pytest.mark.long(seconds=60)
def test_an_estimators_first_fit_says_it_once_then_nothing(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        import numpy as np
        from ermviz.estimators import L2SVMClassifier
        rng = np.random.default_rng(0)
        X = rng.standard_normal((60, 4))
        y = np.where(X[:, 0] > 0, 1, -1)
        L2SVMClassifier(max_iter=50).fit(X, y)
        L2SVMClassifier(C=2.0, max_iter=50).fit(X, y)  # same kernels: nothing more to say
        """
    )
    cold = _run(["-c", code], tmp_path)
    assert cold.returncode == 0, cold.stderr
    lines = _notices(cold.stderr)
    # (its default method: primal-newton on problem plq, issue 44)
    assert len(lines) == 1 and "kernels for plq, first run only" in lines[0], cold.stderr
    warm = _run(["-c", code], tmp_path)
    assert warm.returncode == 0, warm.stderr
    assert _notices(warm.stderr) == [], warm.stderr


@pytest.mark.long(seconds=60)
def test_a_notebook_race_of_three_methods_says_it_once(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        from ermviz.app.state.model import DashboardModel
        model = DashboardModel(notifier=lambda level, message: None)  # FW, AFW, PFW on wdbc
        slots = model.prepare()
        assert len(slots) >= 2 and all(s.run is not None for s in slots), slots
        """
    )
    cold = _run(["-c", code], tmp_path)
    assert cold.returncode == 0, cold.stderr
    assert len(_notices(cold.stderr)) == 1, cold.stderr
    warm = _run(["-c", code], tmp_path)
    assert warm.returncode == 0, warm.stderr
    assert _notices(warm.stderr) == [], warm.stderr


def test_a_scope_announces_once_and_nested_scopes_defer_to_the_outer() -> None:
    lines: list[str] = []
    previous = compile_notice.set_sink(lines.append)
    try:
        outer = compile_notice.Scope("logreg-l1", "pfw", "csr")
        with compile_notice.announce(outer):
            with compile_notice.announce("logreg-l1", ""):  # (the registry's own scope)
                compile_notice._on_compile_start()
            compile_notice._on_compile_start()
            assert [c.what for c in compile_notice.compiling_now()] == [outer.what]
        with compile_notice.announce(outer):  # re-entered: said already
            compile_notice._on_compile_start()
        compile_notice._on_compile_start()  # no scope: a kernel called directly
        assert compile_notice.compiling_now() == []
    finally:
        compile_notice.set_sink(previous)
    assert len(lines) == 1
    assert lines[0].startswith("ermviz: compiling the PFW kernels for logreg-l1, first run only")


def test_the_line_quotes_the_measured_estimate(monkeypatch) -> None:
    from ermviz import compile_estimates

    monkeypatch.setitem(compile_estimates.FIRST_RUN, "logreg-l1:pfw:csr", 3.6)
    monkeypatch.setitem(compile_estimates.FIRST_RUN, "logreg-l1:face-newton:dense", 7.2)
    monkeypatch.setitem(compile_estimates.FIRST_RUN, "logreg-l1:face-newton:csr", 5.1)
    scope = compile_notice.Scope("logreg-l1", "pfw", "csr")
    assert scope.line() == "ermviz: compiling the PFW kernels for logreg-l1, first run only: ~4 s"
    # Storage not known yet: the slower of the two.
    newton = compile_notice.Scope("logreg-l1", "face-newton")
    assert newton.line() == (
        "ermviz: compiling the face-newton kernels for logreg-l1, first run only: ~7 s"
    )
    assert compile_notice.Scope("nowhere", "pfw").line().endswith("first run only")
    assert compile_notice.Scope("lssvm", "").what == "the lssvm kernels"
