"""Hostile links, fuzzed: the URL query string through ``urlstate.load``.

Property: whatever the query (unknown keys, out-of-range, negative, NaN or infinite
numbers, file paths, uploads, very long values, raw junk), loading it never raises and
leaves a set-up a Start can run (every run solves the problem, every setting declared and
in range, the budget within the runner's limits) whose own link reproduces it; a link
with bad elements has each dropped and named in one one-line notification while the rest
is applied (one bad field among good ones changes nothing the good ones set); and no file
the query names is ever opened or even looked at.

Hypothesis profiles live in tests/conftest.py (``ERMVIZ_FUZZ=long`` for a long local run).
"""

from __future__ import annotations

import atexit
import builtins
import io
import os
import shutil
import tempfile
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from ermviz import data as data_mod
from ermviz.app.state import urlstate
from ermviz.app.state.datasets import preset_for
from ermviz.app.state.model import MAX_RUNS, DashboardModel
from ermviz.app.state.runspec import parse_settings, settings_of
from ermviz.registry import METHODS, PROBLEMS, STEP_RULES
from ermviz.runner import NO_ITER_LIMIT

EXAMPLES = settings().max_examples

#: Every path a link names carries this marker (or is a well-known secret file); the
#: recorder below fails the test if any file access mentions one.
SECRET = "fuzz-secret"
FORBIDDEN = (SECRET, "passwd", "id_rsa", "/dev/zero", "shadow")


def _secret_file() -> Path:
    """An existing CSV file that a link names by its absolute path (removed at exit)."""
    folder = Path(tempfile.mkdtemp(prefix=f"ermviz-{SECRET}-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / f"{SECRET}.csv"
    path.write_text("1,2,1\n3,4,-1\n")
    return path


SECRET_FILE = _secret_file()
PATHS = [
    str(SECRET_FILE), f"../../{SECRET}", f"upload:{SECRET}.csv", f"upload:{SECRET_FILE}",
    "/etc/passwd", "../../etc/passwd", "file:///etc/passwd", "~/.ssh/id_rsa", "/dev/zero",
    f"C:\\{SECRET}\\x.csv", f"\\\\server\\{SECRET}", f"{SECRET_FILE.parent}/../{SECRET}.csv",
    f"%2Fetc%2F{SECRET}", "/etc/shadow",
]  # fmt: skip

SCALARS = list(urlstate._SCALARS)
PROBLEM_SETTINGS = sorted({s.name for cls in PROBLEMS.values() for s in cls.settings_decl})
OFFERED = list(DashboardModel(notifier=lambda *_: None).param.dataset.objects)
DATASETS = [*OFFERED, *data_mod.catalog(), "no-such-set", "WDBC", " wdbc"]

EDGES = [0, 1, -1, 2**31 - 1, 2**31, 2**53 + 1, 2**62, 2**62 + 1, 2**63, 2**64, 10**23, 10**400]
numbers = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.sampled_from(EDGES).map(str),
    st.sampled_from(EDGES).map(lambda v: str(-v)),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "inf", "-inf", "1e400", "-0", "0x10", "1_000", "1e-320", "", " 1",
                     "1e308", "1.7976931348623157e308", "5e-324", "0.9", "0.90000001", "1.0"]),
)  # fmt: skip
junk = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["x" * 1001, "y" * 20_000, "\x00", "%00", "&", "=", "?", "#", "\u202e"]),
)
hostile = st.one_of(numbers, junk, st.sampled_from(PATHS))


@st.composite
def mostly(draw, valid, bad=hostile, one_in: int = 12):
    """A draw from ``valid``, or about one time in ``one_in`` from ``bad``."""
    return draw(bad if draw(st.integers(1, one_in)) == 1 else valid)


def setting_values(setting) -> st.SearchStrategy[str]:
    """Values for one declared setting: mostly in range, else just outside it or hostile."""
    inside: list[str] = []
    outside: list[str] = []
    if setting.kind == "choice":
        inside = list(setting.choices or ())
    elif setting.kind == "bool":
        inside = ["true", "false", "1", "0"]
    elif setting.kind in ("int", "float"):
        low, high = setting.low, setting.high
        if setting.default is not None:
            inside.append(str(setting.default))
        if low is not None and not setting.low_open:
            inside.append(repr(low))
        if high is not None and not setting.high_open:
            inside.append(repr(high))
        if low is not None:
            outside += [repr(low - 1), repr(-abs(low) - 1)] + ([repr(low)] * setting.low_open)
        if high is not None:
            outside += [repr(high + 1), repr(high * 2 + 1)] + ([repr(high)] * setting.high_open)
    out = st.sampled_from(outside) if outside else hostile
    return mostly(st.sampled_from(inside or ["1"]), st.one_of(out, hostile))


def scalar_values(key: str) -> st.SearchStrategy[str]:
    """Values for one scalar of the page, the same way."""
    par = DashboardModel.param[key]
    if key in ("standardize", "normalize", "animate"):
        return mostly(st.sampled_from(["0", "1", "true", "no", " YES "]))
    inside = {"tol": ["1e-6", "1e-300", "1e300"], "max_time": ["0.5", "1e-300", "1e300"]}.get(
        key, []
    )
    outside = {"tol": ["0", "-1e-6"], "max_time": ["0", "-0.5"]}.get(key, [])
    low, high = getattr(par, "bounds", None) or (None, None)
    as_text = str if isinstance(par.default, int) else repr
    if low is not None:
        inside += [as_text(low), as_text(low + 1)]
        outside += [as_text(low - 1)]
    if high is not None:
        inside += [as_text(high)]
        outside += [as_text(high + 1), as_text(2 * high + 1)]
    if key in ("max_iter", "max_samples"):
        inside += [str(2**62)]
        outside += [str(2**62 + 1), str(2**63), str(10**23), "1e300"]
    return mostly(st.sampled_from(inside or ["1"]), st.sampled_from(outside or ["-1"]) | hostile)


@st.composite
def run_values(draw, problem: str):
    solving = sorted(m for m, spec in METHODS.items() if problem in spec.problems)
    others = st.sampled_from([*sorted(METHODS), "fw-ada", "tufw-sbd-k4"])
    method = draw(mostly(st.sampled_from(solving or sorted(METHODS)), st.one_of(others, junk)))
    rules = list(METHODS[method].step_rules) if method in METHODS else []
    step = draw(mostly(st.sampled_from(rules or sorted(STEP_RULES)), junk))
    declared = settings_of(method, step) if method in METHODS else []
    pairs = []
    for setting in draw(st.lists(st.sampled_from(declared), max_size=3, unique_by=lambda s: s.name)
                        if declared else st.just([])):  # fmt: skip
        pairs.append(f"{setting.name}={draw(setting_values(setting))}")
    if draw(st.integers(0, 9)) == 0:
        pairs.append(f"{draw(junk)}={draw(hostile)}")
    return f"{method}:{step}" + (":" + ",".join(pairs) if pairs else "")


keys = st.one_of(
    st.sampled_from(["dataset", "problem", "run", *SCALARS]),
    st.sampled_from(PROBLEM_SETTINGS).map(lambda name: f"p.{name}"),
    st.sampled_from(["file", "path", "upload", "results", "colour", "p.", "p.x", "Dataset"]),
    junk,
)


@st.composite
def queries(draw):
    """Mostly well-formed links with some values pushed out of range or replaced by paths
    and junk; now and then raw text."""
    if draw(st.integers(0, 14)) == 0:
        return draw(st.one_of(st.text(max_size=200), st.sampled_from(PATHS)))
    pairs: list[tuple[str, str]] = []
    dataset = draw(mostly(st.one_of(st.none(), st.sampled_from(OFFERED)),
                          st.sampled_from(DATASETS + PATHS)))  # fmt: skip
    problem = draw(mostly(st.one_of(st.none(), st.sampled_from(sorted(PROBLEMS))), junk))
    if dataset is not None:
        pairs.append(("dataset", dataset))
    if problem is not None:
        pairs.append(("problem", problem))
    target = problem if problem in PROBLEMS else None
    if target is None:
        target = preset_for(dataset)["problem"] if dataset in OFFERED else "svm-dual"
    for key in draw(st.lists(st.sampled_from(SCALARS), unique=True, max_size=4)):
        pairs.append((key, draw(scalar_values(key))))
    declared = list(PROBLEMS[target].settings_decl)
    for setting in draw(st.lists(st.sampled_from(declared), unique_by=lambda s: s.name,
                                 max_size=2)):  # fmt: skip
        pairs.append((f"p.{setting.name}", draw(setting_values(setting))))
    for _ in range(draw(st.integers(0, 3))):
        pairs.append(("run", draw(run_values(target))))
    if draw(st.integers(0, 5)) == 0:  # one more field, anything at all
        pairs.append((draw(keys), draw(hostile)))
    pairs = draw(st.permutations(pairs))
    query = urlencode(pairs, safe=":,/") if draw(st.booleans()) else urlencode(pairs)
    return ("?" if draw(st.booleans()) else "") + query


class FileAccess:
    """Records the path of every open, stat and directory listing while active."""

    def __init__(self, mp: pytest.MonkeyPatch) -> None:
        self.paths: list[str] = []
        watched = [(builtins, "open"), (io, "open"), (os, "open"), (os, "stat"), (os, "lstat"),
                   (os, "scandir"), (os, "listdir"), (os, "access")]  # fmt: skip
        for module, name in watched:
            mp.setattr(module, name, self._wrap(getattr(module, name)))

    def _wrap(self, real):
        def recorded(path=".", *args, **kwargs):
            self.paths.append(os.fsdecode(path) if isinstance(path, str | bytes | os.PathLike)
                              else repr(path))  # fmt: skip
            return real(path, *args, **kwargs)

        return recorded

    def forbidden(self) -> list[str]:
        return [p for p in self.paths if any(word in p for word in FORBIDDEN)]


def make_model() -> DashboardModel:
    notes: list[tuple[str, str]] = []
    model = DashboardModel(notifier=lambda level, message: notes.append((level, message)))
    model.notes = notes
    return model


DEFAULTS = urlstate.config(make_model())


def assert_startable(m: DashboardModel) -> None:
    """What a Start needs: a listed dataset, a known problem, runs that solve it, declared
    settings in range and a budget the runner takes."""
    assert m.dataset in m.param.dataset.objects and not m.dataset.startswith("upload:")
    assert m.problem in PROBLEMS
    assert 1 <= len(m.specs) <= MAX_RUNS
    for spec in m.specs:
        method = METHODS[spec.method]
        assert m.problem in method.problems and spec.step in method.step_rules
        parse_settings(settings_of(spec.method, spec.step), spec.settings, spec.method)
    parse_settings(PROBLEMS[m.problem].settings_decl, m.problem_settings, m.problem)
    budget = m.budget()
    assert budget.max_iter <= NO_ITER_LIMIT
    assert budget.max_work is None or budget.max_work[1] <= NO_ITER_LIMIT
    assert m.run_configs()


@given(query=queries())
def test_any_link_opens_a_valid_page_and_reads_no_file_it_names(query):
    m = make_model()
    with pytest.MonkeyPatch.context() as mp:
        access = FileAccess(mp)
        message = urlstate.load(m, query)
        applied = urlstate.config(m)
        assert_startable(m)
    assert access.forbidden() == [], f"{query!r} reached {access.forbidden()}"
    event("applied" if message is None else "partly applied")
    # The page can share itself again, and the link it shares reproduces it.
    other = make_model()
    assert urlstate.load(other, urlstate.encode(m)) is None
    assert urlstate.config(other) == applied
    if message is None:
        assert m.notes == []
    else:
        assert message.splitlines() == [message] and message.startswith("link: ")
        assert len(message) < 2500, message[:300]
        assert m.notes == [("error", message)]
        if "ignored" in message:  # not read at all (too many fields): the defaults stay
            assert applied == DEFAULTS


UNKNOWN_KEYS = st.sampled_from(["file", "path", "upload", "results", "colour", "p.", "Dataset"])


@given(query=queries(), key=UNKNOWN_KEYS, value=hostile, at=st.integers(0, 40))
def test_one_unknown_field_among_good_ones_drops_only_itself(query, key, value, at):
    good = make_model()
    urlstate.load(good, query)
    pairs = parse_qsl(urlstate.encode(good), keep_blank_values=True)
    pairs.insert(at % (len(pairs) + 1), (key, value))
    m = make_model()
    message = urlstate.load(m, urlencode(pairs))
    assert urlstate.config(m) == urlstate.config(good)
    assert message is not None and "dropped 1 element" in message
    assert "the rest of the link is applied" in message and m.notes == [("error", message)]


@given(key=keys, value=hostile)
def test_one_bad_field_leaves_the_defaults_and_says_why(key, value):
    # A link with one field: applied, or dropped with one notification naming it.
    m = make_model()
    message = urlstate.load(m, urlencode([(key, value)]))
    assert_startable(m)
    if message is not None:
        assert urlstate.config(m) == DEFAULTS and len(m.notes) == 1
        assert "dropped 1 element" in message or "ignored" in message


@pytest.mark.parametrize(
    "query, reason, kept",
    [
        ("dataset=moons&run=fw:exact", "does not solve problem 'lssvm'", "dataset=moons"),
        ("dataset=toy-2d&p.C=5", "unknown setting 'C' for logreg-l1", "dataset=toy-2d"),
        ("seed=4294967296", "out of range [0, 2147483647]", ""),
        ("max_iter=99999999999999999999999", "out of range [1, 4611686018427387904]", ""),
        (
            "dataset=cso-synthetic&max_samples=1e300",
            "max_samples=1e+300 is out of range",
            "dataset=cso-synthetic",
        ),
        ("p.C=1e400", "C=inf is not a finite number", ""),
        (
            "problem=logreg-l1&p.radius=inf",
            "radius=inf is not a finite number",
            "problem=logreg-l1",
        ),
        ("run=" + "x" * 5000, "5000 characters long", ""),
        ("&".join(["seed=1"] * 300), "more than 200 fields", ""),
    ],
)
def test_links_the_fuzzer_found_drop_their_bad_element_in_one_line(query, reason, kept):
    m = make_model()
    message = urlstate.load(m, query)
    assert message is not None and reason in message and len(message) < 300
    expected = make_model()
    assert urlstate.load(expected, kept) is None
    assert urlstate.config(m) == urlstate.config(expected)


def test_a_failure_while_applying_restores_the_page(monkeypatch):
    # decode_partial() checks everything, but should applying fail anyway, the page is
    # unchanged.
    m = make_model()

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(urlstate, "_fit_applied", broken)
    message = urlstate.load(m, "dataset=toy-2d&tol=1e-3&max_iter=50")
    assert message is not None and "RuntimeError: boom" in message
    assert urlstate.config(m) == DEFAULTS


@settings(max_examples=max(3, EXAMPLES // 20))
@given(query=queries())
def test_the_whole_page_builds_from_any_link(query):
    # The page (controls, race, teaching and export views) on top of the model; outside a
    # server, as in a notebook (a bad link used to end in an AttributeError there).
    from ermviz.app.views.page import build_dashboard

    dash = build_dashboard(query)
    try:
        assert_startable(dash.model)
    finally:
        dash.model.shutdown()
