"""Hostile input, fuzzed: data files through the loader, the dashboard upload and the CLI.

Property: whatever the bytes, loading ends in a correct load or in one
:class:`~ermviz.errors.DataError` whose message is one line naming the file, quickly and in
bounded memory; never another exception, a hang or a memory blow-up. Valid files (and
files changed in ways that keep their meaning: a byte-order mark, CRLF, comments, blank
lines, compression) must load exactly as an independent parse written here reads them.
Huge feature indices and compressed "bombs" are refused, before memory is spent, with a
message naming the limit.

Hypothesis profiles live in tests/conftest.py (``ERMVIZ_FUZZ=long`` for a long local run).
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import itertools
import json
import lzma
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.datasets  # noqa: F401 - imported before tracemalloc measures a load
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

import ermviz.data as data_mod
from ermviz import cli
from ermviz.app.state.datasets import UPLOAD_PREFIX
from ermviz.app.state.model import DashboardModel
from ermviz.data import load_dataset, readers
from ermviz.errors import DataError

REPO = Path(__file__).resolve().parent.parent
#: Examples of the profile in use; the costlier properties draw a fraction of them.
EXAMPLES = settings().max_examples
#: One example of the loader may take this long at most (the largest fuzzed file is a few
#: kilobytes: anything slower is a hang in the making).
SLOW_S = 5.0

_counter = itertools.count()


@contextlib.contextmanager
def fresh_dir():
    """A new folder per example (the loader caches by path, size and modification time)."""
    with tempfile.TemporaryDirectory(prefix=f"fuzz{next(_counter)}-") as folder:
        yield Path(folder)


def assert_one_line_error(message: str, name: str) -> None:
    assert message.splitlines() == [message], f"not one line: {message!r}"
    assert name in message, f"does not name {name}: {message!r}"
    assert len(message) < 1500, f"{len(message)} characters: {message[:200]!r}..."


def load_outcome(path: Path) -> data_mod.Dataset | DataError:
    """Load ``path``: the dataset or the DataError; anything else fails the test."""
    start = time.perf_counter()
    try:
        ds: data_mod.Dataset | DataError = load_dataset(path)
    except DataError as exc:
        assert_one_line_error(str(exc), path.name)
        ds = exc
    assert time.perf_counter() - start < SLOW_S, f"{path.name} took over {SLOW_S} s"
    event("refused" if isinstance(ds, DataError) else "loaded")
    if not isinstance(ds, DataError):
        assert ds.n >= 1 and 1 <= ds.p <= readers.MAX_FEATURES
        values = ds.X.data if sp.issparse(ds.X) else ds.X
        assert np.isfinite(values).all() and np.isfinite(ds.y).all()
    return ds


# ---------------------------------------------------------------------------------------
# Files: valid ones, an independent parse, and the ways hostile ones differ


@st.composite
def libsvm_tables(draw, binary: bool | None = None):
    """(labels, rows of (index, value) pairs) of a valid LIBSVM file, indices from 1."""
    n = draw(st.integers(2, 12))
    binary = draw(st.booleans()) if binary is None else binary
    if binary:
        labels = draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=n, max_size=n))
        assume(len(set(labels)) == 2)
    else:
        labels = draw(
            st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=n, max_size=n, unique=True)
        )
    p = draw(st.integers(1, 40))
    values = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False).map(lambda v: v or 1.0)
    rows = []
    for _ in range(n):
        idx = draw(st.lists(st.integers(1, p), max_size=8, unique=True))
        rows.append([(i, draw(values)) for i in sorted(idx)])
    assume(any(rows))  # a file needs at least one index:value pair
    return labels, rows


def render_libsvm(labels, rows) -> list[str]:
    return [
        " ".join([f"{y:g}" if y in (-1.0, 1.0) else repr(y)] + [f"{i}:{v!r}" for i, v in row])
        for y, row in zip(labels, rows, strict=True)
    ]


def parse_libsvm(text: str) -> tuple[np.ndarray, np.ndarray]:
    """The reference: a plain Python reading of a LIBSVM file (one-based indices)."""
    labels, rows = [], []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        label, *pairs = line.split()
        labels.append(float(label))
        rows.append({int(k): float(v) for k, v in (pair.split(":") for pair in pairs)})
    p = max(max(row, default=0) for row in rows)
    X = np.zeros((len(rows), p))
    for r, row in enumerate(rows):
        for k, v in row.items():
            X[r, k - 1] = v
    return X, np.array(labels)


@st.composite
def csv_tables(draw):
    """(header or None, feature rows, labels) of a valid numeric CSV file."""
    n = draw(st.integers(2, 12))
    k = draw(st.integers(1, 6))
    cells = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
    X = [[draw(cells) for _ in range(k)] for _ in range(n)]
    labels = draw(st.lists(st.sampled_from([0, 1]), min_size=n, max_size=n))
    assume(len(set(labels)) == 2)
    header = [f"f{j}" for j in range(k)] + ["label"] if draw(st.booleans()) else None
    return header, X, labels


def render_csv(header, X, labels, sep: str = ",") -> list[str]:
    lines = [sep.join(header)] if header else []
    lines += [sep.join([*(repr(v) for v in row), str(y)]) for row, y in zip(X, labels, strict=True)]
    return lines


def expected_y(raw: np.ndarray) -> np.ndarray:
    """Labels as the loader maps a user file's: two values -> the larger is +1."""
    values = np.unique(raw)
    return np.where(raw == values[-1], 1.0, -1.0) if values.size == 2 else raw


def assert_loads_as(ds: data_mod.Dataset | DataError, X: np.ndarray, raw_y: np.ndarray):
    assert not isinstance(ds, DataError), f"a valid file was refused: {ds}"
    got = ds.X.toarray() if sp.issparse(ds.X) else ds.X
    assert got.shape == X.shape
    np.testing.assert_array_equal(got, X)
    np.testing.assert_array_equal(ds.y, expected_y(raw_y))


def compress(data: bytes, suffix: str) -> bytes:
    return {"": lambda b: b, ".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}[
        suffix
    ](data)


# Changes that keep a file's meaning: the load must equal the reference.
HARMLESS = {
    "as is": lambda lines: "\n".join(lines) + "\n",
    "utf-8 bom": lambda lines: "\ufeff" + "\n".join(lines) + "\n",
    "crlf": lambda lines: "\r\n".join(lines) + "\r\n",
    "blank lines": lambda lines: "\n\n".join(lines) + "\n\n\n",
    "no final newline": lambda lines: "\n".join(lines),
}


def mutate(lines: list[str], kind: str, where: int, cut: float, fmt: str) -> bytes:
    """One hostile change to a valid file (given as lines), as bytes."""
    lines = list(lines)
    i = where % len(lines)
    line = lines[i]
    sep = " " if fmt == "libsvm" else ","
    fields = line.split(sep)
    if kind == "truncated line":
        lines[i] = line[: int(cut * len(line))]
    elif kind == "truncated file":
        text = "\n".join(lines)
        return text[: int(cut * len(text))].encode()
    elif kind in ("nan", "inf", "-inf", "1e999", "9" * 400):
        j = int(cut * (len(fields) - 1))  # any field, the label included
        if fmt == "libsvm" and ":" in fields[j]:
            fields[j] = fields[j].split(":")[0] + ":" + kind
        else:
            fields[j] = kind
        lines[i] = sep.join(fields)
    elif kind == "duplicate index" and fmt == "libsvm" and len(fields) > 1:
        lines[i] = sep.join([*fields, fields[-1]])
    elif kind == "decreasing indices" and fmt == "libsvm" and len(fields) > 2:
        lines[i] = sep.join([fields[0], *reversed(fields[1:])])
    elif kind == "mixed delimiters":
        other = {"libsvm": ",", "csv": ";"}[fmt]
        lines[i] = line.replace(sep, other if cut < 0.5 else "\t", 1 + int(cut * 3))
    elif kind in ("huge index", "int32 index", "over-limit index"):
        index = {
            "huge index": 4_000_000_000,
            "int32 index": 2**31 - 1,
            "over-limit index": readers.MAX_FEATURES + 1,
        }[kind]
        lines[i] = line + (f" {index}:1" if fmt == "libsvm" else f",{index}")
    elif kind == "text cell":
        fields[int(cut * (len(fields) - 1))] = "abc"
        lines[i] = sep.join(fields)
    elif kind == "extra field":
        lines[i] = line + sep + ("7:1" if fmt == "libsvm" else "1")
    elif kind == "nul byte":
        lines[i] = line[: int(cut * len(line))] + "\x00" + line[int(cut * len(line)) :]
    elif kind == "stray quote":
        lines[i] = '"' + line
    elif kind == "utf-16":
        return ("\n".join(lines) + "\n").encode("utf-16")
    elif kind == "utf-16 without bom":
        return ("\n".join(lines) + "\n").encode("utf-16-le")
    elif kind == "latin-1 text":
        lines[i] = line + (" # caf\xe9" if fmt == "libsvm" else ",caf\xe9")
        return ("\n".join(lines) + "\n").encode("latin-1")
    elif kind == "only labels" and fmt == "libsvm":
        lines = [ln.split(" ")[0] for ln in lines]
    return ("\n".join(lines) + "\n").encode()


MUTATIONS = [
    "truncated line", "truncated file", "nan", "inf", "-inf", "1e999", "9" * 400,
    "duplicate index", "decreasing indices", "mixed delimiters", "huge index", "int32 index",
    "over-limit index", "text cell", "extra field", "nul byte", "stray quote", "utf-16",
    "utf-16 without bom", "latin-1 text", "only labels",
]  # fmt: skip
SUFFIXES = ["", "", ".gz", ".bz2", ".xz"]
#: A mutation, or (half the time) none: the paths after a successful load get exercised too.
MAYBE_MUTATED = st.one_of(st.just("none"), st.sampled_from(MUTATIONS))


# ---------------------------------------------------------------------------------------
# (a) the loader: what the CLI and the upload both call


@given(table=libsvm_tables(), harmless=st.sampled_from(sorted(HARMLESS)),
       comp=st.sampled_from(SUFFIXES), comment=st.booleans())  # fmt: skip
def test_valid_libsvm_loads_as_an_independent_parse(table, harmless, comp, comment):
    lines = render_libsvm(*table)
    if comment:
        lines = ["# written by hand", *(f"{ln} # row {r}" for r, ln in enumerate(lines))]
    text = HARMLESS[harmless](lines)
    X, y = parse_libsvm(text.replace("\ufeff", ""))
    with fresh_dir() as folder:
        path = folder / f"data.svm{comp}"
        path.write_bytes(compress(text.encode(), comp))
        assert_loads_as(load_outcome(path), X, y)


@given(table=csv_tables(), harmless=st.sampled_from(sorted(HARMLESS)),
       comp=st.sampled_from(SUFFIXES), tsv=st.booleans())  # fmt: skip
def test_valid_csv_loads_as_an_independent_parse(table, harmless, comp, tsv):
    header, X, labels = table
    text = HARMLESS[harmless](render_csv(header, X, labels, "\t" if tsv else ","))
    with fresh_dir() as folder:
        path = folder / f"data.{'tsv' if tsv else 'csv'}{comp}"
        path.write_bytes(compress(text.encode(), comp))
        assert_loads_as(load_outcome(path), np.array(X), np.array(labels, float))


@given(table=libsvm_tables(), kind=st.sampled_from(MUTATIONS), where=st.integers(0, 50),
       cut=st.floats(0, 1), comp=st.sampled_from(SUFFIXES))  # fmt: skip
@pytest.mark.slow
def test_mutated_libsvm_loads_or_fails_in_one_line(table, kind, where, cut, comp):
    lines = render_libsvm(*table)
    content = mutate(lines, kind, where, cut, "libsvm")
    with fresh_dir() as folder:
        path = folder / f"mutated.svm{comp}"
        path.write_bytes(compress(content, comp))
        outcome = load_outcome(path)
    if content == mutate(lines, "none", 0, 0, "libsvm"):
        return  # nothing to change on that line (a label without features)
    if kind in ("huge index", "int32 index", "over-limit index"):
        assert isinstance(outcome, DataError) and "MAX_FEATURES" in str(outcome)
    if kind in ("nan", "inf", "-inf", "1e999", "9" * 400, "duplicate index", "utf-16"):
        assert isinstance(outcome, DataError), f"{kind} was taken: {outcome!r}"


@given(table=csv_tables(), kind=st.sampled_from(MUTATIONS), where=st.integers(0, 50),
       cut=st.floats(0, 1), comp=st.sampled_from(SUFFIXES))  # fmt: skip
def test_mutated_csv_loads_or_fails_in_one_line(table, kind, where, cut, comp):
    header, X, labels = table
    lines = render_csv(header, X, labels)
    content = mutate(lines, kind, where, cut, "csv")
    with fresh_dir() as folder:
        path = folder / f"mutated.csv{comp}"
        path.write_bytes(compress(content, comp))
        outcome = load_outcome(path)
    in_data = header is None or where % len(lines) != 0  # a header cell may read "nan"
    if in_data and kind in ("nan", "inf", "-inf", "1e999", "9" * 400):
        assert isinstance(outcome, DataError), f"{kind} was taken: {outcome!r}"
    if kind in ("utf-16", "latin-1 text"):
        assert isinstance(outcome, DataError), f"{kind} was taken: {outcome!r}"


@given(content=st.binary(max_size=3000),
       name=st.sampled_from(["x.svm", "x.txt", "x.csv", "x.tsv", "x.gz", "x.bz2", "x.xz",
                             "x.csv.gz"]),
       wrap=st.booleans())  # fmt: skip
def test_random_bytes_load_or_fail_in_one_line(content, name, wrap):
    comp = readers._split_compression(name)[1]
    if wrap and comp:  # well-formed compression around random bytes
        content = compress(content, comp)
    with fresh_dir() as folder:
        path = folder / name
        path.write_bytes(content)
        load_outcome(path)


@given(text=st.text(st.characters(codec="utf-8"), max_size=400),
       name=st.sampled_from(["t.svm", "t.csv", "t.tsv"]))  # fmt: skip
def test_random_text_loads_or_fails_in_one_line(text, name):
    with fresh_dir() as folder:
        path = folder / name
        path.write_bytes(text.encode("utf-8"))
        load_outcome(path)


#: Names that are no dataset and no regular file: too long for the file system, a home
#: folder that does not exist, devices, folders, bytes argv could not decode.
NAMES = st.sampled_from(
    ["~nouser-fuzz/x.svm", "x" * 5000, "a/" * 3000, "/dev/zero", "/dev/null", "/tmp", ".", "",
     "\udcff.svm", "wdbc ", "A1A", "~\x00", "~\udd00/x", "a\x00b"]
)  # fmt: skip


@given(name=st.one_of(NAMES, st.text(max_size=60)))
def test_any_dataset_name_loads_or_fails_in_one_line(name):
    # The Python API takes any string: NUL bytes and lone surrogates included.
    assume(name not in data_mod.catalog())  # real catalog files are tested elsewhere
    start = time.perf_counter()
    try:
        load_dataset(name)
    except DataError as exc:
        message = str(exc)
        assert message.splitlines() == [message] and len(message) < 1500
    assert time.perf_counter() - start < SLOW_S


# ---------------------------------------------------------------------------------------
# (b) the dashboard upload and (c) the CLI


@pytest.fixture(scope="module")
def upload_model():
    notes: list[tuple[str, str]] = []
    model = DashboardModel(notifier=lambda level, message: notes.append((level, message)))
    model.notes = notes
    yield model
    model.shutdown()


_UPLOAD_NAMES = st.one_of(
    st.sampled_from(["mine.csv", "mine.svm", "x.csv.gz", "../../etc/passwd", "", ".csv",
                     "a" * 300 + ".csv", "C:\\Users\\me\\data.tsv", "名前.csv", "x\x00.svm"]),
    st.text(max_size=40),
)  # fmt: skip


@settings(max_examples=max(10, EXAMPLES // 2))
@given(
    data=st.data(),
    name=_UPLOAD_NAMES,
    source=st.sampled_from(["libsvm", "csv", "bytes"]),
)
def test_upload_stores_a_file_or_says_why_in_one_line(upload_model, data, name, source):
    m = upload_model
    if source == "bytes":
        content = data.draw(st.binary(max_size=2000))
    elif source == "libsvm":
        lines = render_libsvm(*data.draw(libsvm_tables()))
        content = mutate(lines, data.draw(MAYBE_MUTATED), 0, 0.5, "libsvm")
    else:
        header, X, labels = data.draw(csv_tables())
        content = mutate(render_csv(header, X, labels), data.draw(MAYBE_MUTATED), 1, 0.5, "csv")
    seen: list[BaseException] = []
    real = data_mod.load_dataset

    def recording(*args, **kwargs):
        try:
            return real(*args, **kwargs)
        except BaseException as exc:
            seen.append(exc)
            raise

    before = len(m.notes)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(data_mod, "load_dataset", recording)
        got = m.add_upload(name, content)
    # store_upload turns any failure into a notification: it must have been a DataError.
    assert all(isinstance(exc, DataError) for exc in seen), seen
    event("stored" if got else "refused")
    if got is None:
        assert len(m.notes) == before + 1
        level, message = m.notes[-1]
        assert level == "error" and message.splitlines() == [message] and len(message) < 1500
        assert "ermviz-upload-" not in message  # the server's temporary path stays hidden
    else:
        assert got.startswith(UPLOAD_PREFIX) and m.dataset == got
        assert len(got) <= len(UPLOAD_PREFIX) + 100
        assert Path(m.dataset_source()).is_file()


@settings(max_examples=max(10, EXAMPLES // 3))
@given(data=st.data(), fmt=st.sampled_from(["libsvm", "csv", "bytes", "name"]))
def test_cli_run_loads_or_exits_2_with_one_line(data, fmt):
    with fresh_dir() as folder:
        if fmt == "name":  # --dataset is any text: a name, a path, nonsense
            dataset = data.draw(st.one_of(NAMES, st.text(st.characters(exclude_characters="\x00"))))
            assume(dataset not in data_mod.catalog() and not dataset.startswith("-"))
        else:
            if fmt == "bytes":
                content = data.draw(st.binary(max_size=1500))
            elif fmt == "libsvm":
                lines = render_libsvm(*data.draw(libsvm_tables(binary=True)))
                kind = data.draw(MAYBE_MUTATED)
                content = mutate(lines, kind, 0, data.draw(st.floats(0, 1)), "libsvm")
            else:
                header, X, labels = data.draw(csv_tables())
                content = mutate(
                    render_csv(header, X, labels), data.draw(MAYBE_MUTATED), 1, 0.5, "csv"
                )
            suffix = ".csv" if fmt == "csv" else ".svm"
            path = folder / f"cli{suffix}{data.draw(st.sampled_from(SUFFIXES))}"
            path.write_bytes(compress(content, readers._split_compression(path.name)[1]))
            dataset = str(path)
        out, err = io.StringIO(), io.StringIO()
        argv = ["run", "--dataset", dataset, "--problem", "logreg-l1", "--method", "fw",
                "--max-iter", "3", "--max-time", "2", "--no-progress"]  # fmt: skip
        start = time.perf_counter()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(argv)
        assert time.perf_counter() - start < 3 * SLOW_S
    errors = [line for line in err.getvalue().splitlines() if line.startswith("ermviz: error")]
    event(f"exit status {code}")
    if code == 2:
        assert len(errors) == 1, err.getvalue()
        if fmt != "name":
            assert Path(dataset).name in errors[0]
    else:
        assert code in (0, 1) and not errors, (code, err.getvalue())
        summary = json.loads(out.getvalue().splitlines()[-1])
        assert summary["status"] in ("max_iter", "converged", "max_time", "error")
        assert code == 0 or summary["status"] == "error"


# ---------------------------------------------------------------------------------------
# Memory: declared dimensions and compressed bombs


@pytest.mark.parametrize(
    "text",
    [
        "+1 3000000000:1\n",
        "+1 1:1 4000000000:1\n-1 1:1\n",
        "+1 1:1 2147483647:1\n-1 2:1\n",
        f"+1 1:1\n-1 {readers.MAX_FEATURES + 1}:0.5\n",
        "+1 1:1\n-1 99999999999999999999999999:1\n",
    ],
)
def test_a_huge_feature_index_is_refused_before_allocating(tmp_path, text):
    path = tmp_path / "wide.svm"
    path.write_text(text)
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(DataError) as info:
            load_dataset(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - start < SLOW_S
    assert peak < 64 * 2**20, f"{peak / 2**20:.0f} MiB allocated"
    message = str(info.value)
    assert_one_line_error(message, path.name)
    assert f"limit of {readers.MAX_FEATURES} features" in message and "MAX_FEATURES" in message
    assert "line " in message  # and where


def test_the_feature_limit_itself_is_accepted(tmp_path):
    path = tmp_path / "edge.svm"
    path.write_text(f"+1 1:1\n-1 {readers.MAX_FEATURES}:2\n")
    ds = load_dataset(path)
    assert ds.p == readers.MAX_FEATURES and ds.is_sparse and ds.X.nnz == 2


def test_a_csv_wider_than_the_limit_is_refused_quickly(tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text(",".join(["1"] * (readers.MAX_CSV_COLUMNS + 1)) + "\n")
    start = time.perf_counter()
    with pytest.raises(DataError, match="MAX_CSV_COLUMNS") as info:
        load_dataset(path)
    assert time.perf_counter() - start < 1.0
    assert_one_line_error(str(info.value), path.name)


# Each bomb is one small compressed block repeated: gzip, bzip2 and xz all read
# concatenated streams as one, so a file of a few kilobytes expands to gigabytes.
_BOMB_SCRIPT = textwrap.dedent(
    """
    import bz2, gzip, json, lzma, os, resource, sys, time
    from pathlib import Path
    from ermviz.data import load_dataset
    from ermviz.errors import DataError

    folder = Path(sys.argv[1])
    unit = 1 << 20
    kinds = {
        "spaces.svm.gz": (gzip.compress, b" " * unit, 2048),
        "newlines.svm.bz2": (bz2.compress, b"\\n" * unit, 4096),
        "zeros.csv.xz": (lzma.compress, b"0" * unit, 2048),
        "nul.svm.gz": (gzip.compress, b"\\0" * unit, 2048),
        "rows.svm.bz2": (bz2.compress, b"+1 1:1\\n-1 2:1\\n" * (unit // 14), 2048),
        "rows.csv.gz": (gzip.compress, b"1,2,1\\n3,4,-1\\n" * (unit // 12), 2048),
        "a1a.xz": (lzma.compress, b"+1 1:1\\n" * (unit // 7), 2048),  # a catalog name
    }
    for name, (pack, block, times) in kinds.items():
        (folder / name).write_bytes(pack(block) * times)
    load_dataset("wdbc")  # imports and a first load before the baseline
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out = {}
    for name in kinds:
        target = name[:-3] if name == "a1a.xz" else str(folder / name)
        start = time.perf_counter()
        try:
            load_dataset(target, with_test=False) if name == "a1a.xz" else load_dataset(target)
            out[name] = ["loaded", "", 0.0]
        except DataError as exc:
            out[name] = ["DataError", str(exc), 0.0]
        except BaseException as exc:
            out[name] = [type(exc).__name__, str(exc)[:300], 0.0]
        out[name][2] = time.perf_counter() - start
        out[name].append((folder / name).stat().st_size)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base
    print(json.dumps({"grown": grown, "results": out}))
    """
)


@pytest.mark.slow
def test_compressed_bombs_are_refused_before_memory_explodes(tmp_path):
    env = {**os.environ, "ERMVIZ_DATA": str(tmp_path), "ERMVIZ_CACHE": str(tmp_path / "c")}
    done = subprocess.run(
        [sys.executable, "-c", _BOMB_SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    for name, (kind, message, seconds, size) in report["results"].items():
        assert kind == "DataError", (name, kind, message)
        assert message.splitlines() == [message] and "MAX_EXPANSION" in message, message
        assert seconds < SLOW_S, (name, seconds)
        assert size < 2**23  # a few megabytes at most, that expand to 2-4 GiB
    # Every bomb expands to at least 2 GiB; the process grew by a small fraction of one.
    assert report["grown"] < 300 * 2**20, f"grew by {report['grown'] / 2**20:.0f} MiB"


def test_decompressed_limit_follows_the_stated_constants():
    floor = readers._MIN_DECOMPRESSED_BYTES
    assert readers.decompressed_limit(1000) == floor
    assert readers.decompressed_limit(10 * 2**20) == readers.MAX_EXPANSION * 10 * 2**20
    assert readers.decompressed_limit(10**12) == readers.MAX_DECOMPRESSED_BYTES


def test_real_compressed_files_are_well_under_the_limit(shared_data):
    # The shared copies expand 7-17 times; xz recompressions of the plain files up to ~35.
    for path in shared_data.glob("*.bz2"):
        limit = readers.decompressed_limit(path.stat().st_size)
        with bz2.open(path, "rb") as fh:
            size = sum(len(block) for block in iter(lambda: fh.read(1 << 20), b""))
        assert size < limit / 2, path.name
