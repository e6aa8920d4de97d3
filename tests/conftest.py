"""Shared pytest fixtures.

The real benchmark files live outside the repository, in ``../shared/datasets`` next to
the checkout (CI clones the repository with ``shared/`` beside it). ermviz finds data only
through ``ERMVIZ_DATA``, so the session points that variable at the shared folder unless
the caller already set it. Tests never download: ``ERMVIZ_OFFLINE=1`` unless set.

A test that needs catalog files says which (``@pytest.mark.requires_data("a1a")``, or the
``requires_data`` fixture from a fixture of any scope): without them it skips with the
reason, so ``make test`` passes on a fresh clone with no data folder; under CI (``CI``
set) every skip fails the run, so there a missing file is still an error.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATASETS = REPO.parent / "shared" / "datasets"


# Property-based tests (Hypothesis, tests/test_fuzz_*.py). The default profile, "ci", is
# bounded and reproducible: a fixed number of examples per test, drawn from a fixed seed
# (derandomize), no example database. ERMVIZ_FUZZ=long draws 2000 random examples per test
# and keeps failures in .hypothesis/ to replay them (a run of several minutes).
try:
    from hypothesis import HealthCheck, settings
except ImportError:  # pragma: no cover - hypothesis is in the test extra
    pass
else:
    settings.register_profile(
        "ci",
        max_examples=60,
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    settings.register_profile(
        "long",
        max_examples=2000,
        deadline=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    settings.load_profile(os.environ.get("ERMVIZ_FUZZ", "ci"))


# Under CI (``CI`` set) a skip means a broken set-up (a missing package, browser or data
# folder), not a reason to pass quietly: every skip, at collection or in a test, fails.
def _fail_skips_under_ci(report: pytest.CollectReport | pytest.TestReport) -> None:
    if os.environ.get("CI") and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    outcome = yield
    _fail_skips_under_ci(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    _fail_skips_under_ci(outcome.get_result())


# Two tiers (README, "Tests"): ``make test-fast`` runs ``pytest -m "not slow"`` (unit,
# contract and correctness checks on small data: a contributor's loop, under 5 minutes on
# 2 cores); ``make test`` (CI) runs everything. A test is in the full tier only when it is
# marked ``slow``: by its own ``@pytest.mark.slow`` (a check on catalog data, a race of
# every lesson, a subprocess CLI run: measured over 10 s on a loaded 2-core machine), or
# here, by what it drives: a browser, a long reference check, or a module below.
FULL_TIER_MODULES = {
    "test_notebooks.py": "executes every shipped notebook in a Jupyter kernel",
    "test_notebook_comms.py": "a Jupyter kernel's comms",
    "test_bench_sessions.py": "smoke runs of the load benchmarks (servers, sessions)",
    "test_soak.py": "a server soaked with sessions for minutes",
    "test_wheel.py": "builds the wheel and installs it in a fresh environment",
    "test_serving.py": "real `ermviz serve` servers, one per test",
    "test_png_export.py": "figures rendered by headless Chromium",
}


def _tier(item: pytest.Item) -> None:
    """Mark ``item`` slow when what it drives puts it in the full tier."""
    if item.get_closest_marker("slow"):
        return
    module = item.path.name if item.path is not None else ""
    if (
        item.get_closest_marker("browser")
        or item.get_closest_marker("long")
        or module in FULL_TIER_MODULES
    ):
        item.add_marker(pytest.mark.slow)


# Parallel runs (pytest-xdist, ``--dist loadgroup`` in pyproject.toml). The long reference
# checks (marked ``long(seconds=...)``) are spread over the workers by their measured cost,
# longest first, each worker's share as one group, so no worker gets two of the longest;
# the browser tests share one group (each starts a server and a browser: one at a time keeps
# their timing honest). Everything else is handed out test by test as workers free up.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        _tier(item)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0") or 0)
    if workers < 2:
        return
    long = [(it.get_closest_marker("long").kwargs.get("seconds", 60), it) for it in items
            if it.get_closest_marker("long")]  # fmt: skip
    loads = [0.0] * workers
    for cost, item in sorted(long, key=lambda pair: (-pair[0], pair[1].nodeid)):
        k = loads.index(min(loads))
        loads[k] += cost
        item.add_marker(pytest.mark.xdist_group(f"long-{k}"))
    for item in items:
        if item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.xdist_group("browser"))


@pytest.fixture(scope="session", autouse=True)
def ermviz_data_env() -> Iterator[str | None]:
    """Set ERMVIZ_DATA (and ERMVIZ_OFFLINE) for the whole session, then restore them."""
    saved = {key: os.environ.get(key) for key in ("ERMVIZ_DATA", "ERMVIZ_OFFLINE")}
    data = os.environ.get("ERMVIZ_DATA") or (
        str(SHARED_DATASETS) if SHARED_DATASETS.is_dir() else None
    )
    if data:
        os.environ["ERMVIZ_DATA"] = data
    os.environ.setdefault("ERMVIZ_OFFLINE", "1")  # a test must never reach the network
    yield data
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture
def shared_data(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shared datasets folder, searched first and alone (cache: an empty folder).

    Skips only when the folder does not exist.
    """
    if not SHARED_DATASETS.is_dir():
        pytest.skip(
            f"needs the shared datasets folder ../shared/datasets next to the repository "
            f"({SHARED_DATASETS} does not exist)"
        )
    monkeypatch.setenv("ERMVIZ_DATA", str(SHARED_DATASETS))
    monkeypatch.setenv("ERMVIZ_CACHE", str(tmp_path_factory.mktemp("empty-cache")))
    return SHARED_DATASETS


@pytest.fixture(scope="session")
def real_data(ermviz_data_env: str | None) -> str:
    """The folders ERMVIZ_DATA points at for the session; skips when there is none, or
    when none of them holds a single catalog file (an empty data folder). A test that
    needs particular files also asks for them with :func:`requires_data`."""
    if not ermviz_data_env or not Path(ermviz_data_env.split(os.pathsep)[0]).is_dir():
        pytest.skip(
            "needs the real datasets: set ERMVIZ_DATA or put ../shared/datasets next to the "
            "repository"
        )
    from ermviz.data.sources import _find_file, catalog

    folders = [Path(part) for part in ermviz_data_env.split(os.pathsep) if part]
    if not any(_find_file(entry.file, folders) for entry in catalog().values()):
        pytest.skip(
            f"needs the real datasets: ERMVIZ_DATA={ermviz_data_env} holds no catalog file "
            "(set ERMVIZ_DATA to the folder that holds them)"
        )
    return ermviz_data_env


def missing_catalog_files(names: tuple[str, ...]) -> str | None:
    """Why catalog datasets ``names`` cannot be loaded here (their files are on none of
    the folders searched, and tests never download), or None when all are found."""
    from ermviz.data import locate
    from ermviz.data.sources import catalog

    entries = catalog()
    unknown = [n for n in names if n not in entries]
    if unknown:  # a typo in a test, not a missing file
        raise ValueError(f"requires_data: {unknown} are not catalog names")
    missing = [n for n in names if locate(n) is None]
    if not missing:
        return None
    files = ", ".join(entries[n].file for n in missing)
    return (
        f"catalog file {files} not found (set ERMVIZ_DATA to the folder that holds it; "
        "`python -m ermviz datasets` lists the folders searched)"
    )


@pytest.fixture(scope="session")
def requires_data(ermviz_data_env: str | None) -> Callable[..., None]:
    """``requires_data("a1a", ...)`` skips the calling test (or fixture, of any scope)
    with the reason when a catalog file is not found; under CI the skip fails the run.

    The marker ``@pytest.mark.requires_data("a1a", ...)`` does the same for a test (or a
    ``pytest.param``); a module- or class-scoped fixture that loads a catalog file runs
    before the marker is read, so it calls this fixture itself.
    """

    def need(*names: str) -> None:
        reason = missing_catalog_files(names)
        if reason:
            pytest.skip(reason)

    return need


@pytest.fixture(autouse=True)
def _requires_data_marker(request: pytest.FixtureRequest) -> None:
    names = tuple(n for mark in request.node.iter_markers("requires_data") for n in mark.args)
    if names:
        request.getfixturevalue("requires_data")(*names)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "requires_data(*names): skips (fails under CI) when a catalog file is not found",
    )
