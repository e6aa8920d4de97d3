"""Reading data files: LIBSVM (scikit-learn's svmlight loader) and CSV/TSV (pandas).

Files are read exactly as written (plain or ``.bz2``/``.xz``/``.gz``, UTF-8 with or without
a byte-order mark); a file that cannot be taken raises a :class:`~ermviz.errors.DataError`
naming the file and, when it can be found, the line at fault (malformed LIBSVM fields,
non-numeric CSV values, NaN or inf).

Hostile files are refused before they cost memory or time: a compressed file is first
decompressed once without keeping anything, and refused as soon as it expands past
:data:`MAX_EXPANSION` times its size (at least 64 MiB) or :data:`MAX_DECOMPRESSED_BYTES`,
whichever is less (a "zip bomb" is refused in milliseconds and never fills memory); a
LIBSVM file whose largest feature index exceeds :data:`MAX_FEATURES` is refused before
anything sized by the feature count is allocated (the parser's arrays grow only with the
entries read); a CSV file with more than :data:`MAX_CSV_COLUMNS` columns is refused before
pandas builds its columns. Dense conversions are bounded by
:data:`~ermviz.data.dataset.DENSE_MAX_ENTRIES`.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import math
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from ermviz.data.dataset import Matrix
from ermviz.data.sources import _split_compression
from ermviz.errors import DataError

_CSV_SUFFIXES = {".csv": ",", ".tsv": "\t"}

#: A compressed file may expand to at most this many times its own size (real LIBSVM files
#: expand 5-40 times) ...
MAX_EXPANSION: int = 100
#: ... and never past this many bytes (1 GiB); files too small for the ratio to make sense
#: may always expand to 64 MiB. Past the limit, reading stops with a DataError.
MAX_DECOMPRESSED_BYTES: int = 2**30
_MIN_DECOMPRESSED_BYTES = 64 * 2**20
#: Most features a LIBSVM file may index (2**25 = 33 554 432): one float64 vector over the
#: features then takes 256 MiB, and solvers and preprocessing keep several.
MAX_FEATURES: int = 2**25
#: Most columns a CSV/TSV file may have (pandas spends ~20 us per column; wide data belong
#: in a sparse LIBSVM file).
MAX_CSV_COLUMNS: int = 20_000

_OPENERS: dict[str, Callable[..., Any]] = {".bz2": bz2.open, ".xz": lzma.open, ".gz": gzip.open}
# Decompressors report bad data as OSError (gzip, bz2), EOFError (truncated), LZMAError or
# zlib.error (a damaged gzip stream).
_DECOMPRESSION_ERRORS = (OSError, EOFError, lzma.LZMAError, zlib.error)
_UTF8_BOM = b"\xef\xbb\xbf"
_WIDE_BOMS = {
    b"\xff\xfe": "UTF-16 (or UTF-32)",
    b"\xfe\xff": "UTF-16",
    b"\x00\x00\xfe\xff": "UTF-32",
}


def decompressed_limit(compressed_bytes: int) -> int:
    """Most bytes a compressed file of ``compressed_bytes`` may expand to."""
    ratio_cap = max(_MIN_DECOMPRESSED_BYTES, MAX_EXPANSION * compressed_bytes)
    return min(MAX_DECOMPRESSED_BYTES, ratio_cap)


def _unreadable(path: Path, exc: BaseException) -> DataError:
    return DataError(
        f"{path}: cannot be read ({type(exc).__name__}: {exc}); the file may be truncated "
        "or not compressed the way its name says; fetch it again"
    )


def _too_expansive(path: Path, limit: int) -> DataError:
    return DataError(
        f"{path}: expands past {limit / 2**20:.0f} MiB when decompressed (the limit: "
        f"{MAX_EXPANSION} times the compressed size, at least {_MIN_DECOMPRESSED_BYTES // 2**20}"
        f" MiB, at most {MAX_DECOMPRESSED_BYTES // 2**20} MiB; "
        "ermviz.data.readers.MAX_EXPANSION); a file this compressible is not data: decompress "
        "it yourself and check it"
    )


# Compressed files already measured (resolved path, mtime, size): not decompressed twice.
_MEASURED: set[tuple[str, int, int]] = set()


def _check_expansion(path: Path, ext: str, limit: int) -> None:
    """Decompress ``path`` once without keeping anything, stopping past ``limit`` bytes.

    A bomb is refused in the time it takes to decompress ``limit`` bytes (milliseconds),
    before a parser spends seconds, and memory, on what it expands to.
    """
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if key in _MEASURED:
        return
    total = 0
    try:
        with _OPENERS[ext](path, "rb") as fh:
            while block := fh.read(1 << 20):
                total += len(block)
                if total > limit:
                    raise _too_expansive(path, limit)
    except _DECOMPRESSION_ERRORS as exc:
        raise _unreadable(path, exc) from None
    if len(_MEASURED) > 256:
        _MEASURED.clear()
    _MEASURED.add(key)


class _Bounded(io.RawIOBase):
    """A decompressing reader that stops with a DataError past ``limit`` bytes (in case the
    file grew since it was measured)."""

    def __init__(self, fh: Any, path: Path, limit: int) -> None:
        super().__init__()
        self._fh, self._path, self._limit, self._count = fh, path, limit, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            n = self._fh.readinto(buffer)
        except _DECOMPRESSION_ERRORS as exc:
            raise _unreadable(self._path, exc) from None
        self._count += n
        if self._count > self._limit:
            raise _too_expansive(self._path, self._limit)
        return n

    def close(self) -> None:
        if not self.closed:
            self._fh.close()
        super().close()


def _open_binary(path: Path) -> IO[bytes]:
    """The file's bytes (decompressed, bounded), without a UTF-8 byte-order mark.

    Raises DataError for a UTF-16/UTF-32 file (a byte-order mark) and for a compressed file
    that is damaged or expands too far.
    """
    ext = _split_compression(path.name)[1]
    try:
        if ext:
            limit = decompressed_limit(path.stat().st_size)
            _check_expansion(path, ext, limit)
            raw = _Bounded(_OPENERS[ext](path, "rb"), path, limit)
            stream: Any = io.BufferedReader(raw, buffer_size=1 << 16)
        else:
            stream = open(path, "rb")
    except _DECOMPRESSION_ERRORS as exc:
        raise _unreadable(path, exc) from None
    try:
        head = stream.peek(4)[:4]
    except BaseException:
        stream.close()
        raise
    wide = next((name for bom, name in _WIDE_BOMS.items() if head.startswith(bom)), None)
    if wide is not None:
        stream.close()
        raise DataError(
            f"{path}: is {wide} text (it starts with a byte-order mark); save it as UTF-8 or "
            "ASCII text and load it again"
        )
    if head.startswith(_UTF8_BOM):
        stream.read(len(_UTF8_BOM))
    return stream


def _open_text(path: Path) -> IO[str]:
    return io.TextIOWrapper(_open_binary(path), encoding="utf-8", errors="replace")


def _content_lines(path: Path, comment: str | None) -> Iterator[tuple[int, str]]:
    """(line number, content) of lines that hold data, as the parsers count them."""
    with _open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            content = line.split(comment, 1)[0] if comment else line
            if content.strip():
                yield lineno, content


def _line_of_row(path: Path, row: int, fmt: str, header: bool = False) -> tuple[int, str]:
    """1-based line number and content of data row ``row`` (0-based) of a file."""
    skip = 1 if header else 0
    comment = "#" if fmt == "libsvm" else None
    for count, (lineno, content) in enumerate(_content_lines(path, comment)):
        if count == row + skip:
            return lineno, content
    return -1, ""


@dataclass(frozen=True)
class _Parsed:
    """A file as read: features, raw targets and how to map a row back to its line."""

    path: Path
    X: Matrix
    y: np.ndarray  # float64, or object (text labels in a CSV file)
    fmt: str  # "libsvm" or "csv"
    header: bool = False

    def line_of(self, row: int) -> int:
        """1-based line number of data row ``row`` (0-based)."""
        return _line_of_row(self.path, row, self.fmt, self.header)[0]


def _read_libsvm(path: Path, n_features: int | None, zero_based: bool | str, why_p: str) -> _Parsed:
    """Parse a LIBSVM file with scikit-learn; explain failures by line."""
    # Imported here: scikit-learn costs ~1 s of start-up that cached loads never pay.
    from sklearn.datasets import load_svmlight_file

    try:
        with _open_binary(path) as fh:
            X, y = load_svmlight_file(
                fh, n_features=n_features, dtype=np.float64, zero_based=zero_based
            )
    except DataError:
        raise
    except (ValueError, OverflowError) as exc:
        # OverflowError: an index past what the parser's C integers hold (2**31 and up).
        raise _libsvm_error(path, exc, n_features, zero_based, why_p) from None
    except _DECOMPRESSION_ERRORS as exc:
        raise _unreadable(path, exc) from None
    if X.shape[0] == 0:
        raise DataError(f"{path}: contains no data lines; it should read 'label index:value ...'")
    if X.shape[1] == 0 or X.indices.size == 0:
        raise DataError(
            f"{path}: has no features at all (no 'index:value' pairs); LIBSVM lines read "
            "'label index:value ...'"
        )
    if X.shape[1] > MAX_FEATURES:
        # Only the entries read exist so far: nothing of size p has been allocated.
        entry = int(np.argmax(X.indices))
        row = int(np.searchsorted(X.indptr, entry, side="right")) - 1
        lineno, content = _line_of_row(path, row, "libsvm")
        written = [int(k) for k, _, _ in (t.partition(":") for t in content.split()[1:])
                   if k.isdigit()]  # fmt: skip
        index = max(written, default=X.shape[1])  # as written (the parser may shift by 1)
        raise DataError(
            f"{path} line {lineno}: {_too_many_features(index)}; number the features "
            "compactly from 1, or delete the line"
        )
    return _Parsed(path, X, np.asarray(y, dtype=np.float64), "libsvm")


def _too_many_features(index: int) -> str:
    gib = 8 * index / 2**30
    return (
        f"feature index {index} is over the limit of {MAX_FEATURES} features "
        f"(ermviz.data.readers.MAX_FEATURES; one float64 vector over {index} features alone "
        f"would take {gib:.3g} GiB)"
    )


def _libsvm_error(
    path: Path, exc: Exception, n_features: int | None, zero_based: bool | str, why_p: str
) -> DataError:
    found = _scan_libsvm(path, n_features, zero_based, why_p)
    if found is not None and not _looks_like_data(path):
        # Not one line of data: a file of another kind (prose, a table), not a broken line.
        lineno, problem = found
        return DataError(
            f"{path}: is not a data file (none of its first {_FIRST_LINES} lines reads "
            f"'label index:value ...'; line {lineno}: {problem}); upload a LIBSVM file, or "
            "a CSV file with a name ending in .csv"
        )
    if found is not None:
        lineno, problem = found
        return DataError(
            f"{path} line {lineno}: {problem}; fix the line or delete it (LIBSVM lines read "
            "'label index:value index:value ...' with increasing indices)"
        )
    return DataError(
        f"{path}: not readable as LIBSVM ({exc}); lines must read 'label index:value ...'; "
        "a CSV file needs a name ending in .csv"
    )


#: How many of a file's first content lines decide whether it is data at all.
_FIRST_LINES = 20


def _looks_like_data(path: Path) -> bool:
    """Whether any of the first :data:`_FIRST_LINES` content lines looks like data: a
    number first, an ``index:value`` pair, or comma-separated fields (CSV). A file with a
    broken line among such lines gets "fix the line"; one with none, "not a data file"."""
    for count, (_, content) in enumerate(_content_lines(path, "#")):
        if count >= _FIRST_LINES:
            break
        tokens = content.split()
        if _csv_hint(content) or any(_is_pair(t) for t in tokens[1:]):
            return True
        try:
            float(tokens[0])
            return True
        except ValueError:
            continue
    return False


def _is_pair(token: str) -> bool:
    key, colon, value = token.partition(":")
    try:
        int(key)
        float(value)
    except ValueError:
        return False
    return bool(colon)


def _scan_libsvm(
    path: Path, n_features: int | None, zero_based: bool | str, why_p: str
) -> tuple[int, str] | None:
    """Find the first line scikit-learn cannot take: only to locate an error, not to parse."""
    lowest = 1 if zero_based is False else 0
    highest = None
    if n_features is not None:
        highest = n_features if zero_based is False else n_features - 1
    for lineno, content in _content_lines(path, "#"):
        problem = _line_problem(content.split(), lowest, highest, why_p)
        if problem is not None:
            return lineno, problem + _csv_hint(content)
    return None


def _line_problem(tokens: list[str], lowest: int, highest: int | None, why_p: str) -> str | None:
    label = tokens[0]
    if ":" in label:
        return f"the line starts with {_shorten(label)}, but its first field must be the label"
    try:
        float(label)
    except ValueError:
        return f"label {_shorten(label)} is not a number"
    previous = lowest - 1
    for position, token in enumerate(tokens[1:], start=2):
        key, colon, value = token.partition(":")
        if not colon:
            return f"field {position} {_shorten(token)} is not of the form index:value"
        if key == "qid" and position == 2:
            continue
        try:
            index = int(key)
        except ValueError:
            return f"feature index {_shorten(key)} in {_shorten(token)} is not an integer"
        if index < lowest:
            return f"feature index {index} is below {lowest} (LIBSVM indices start at 1)"
        if index > MAX_FEATURES:
            return _too_many_features(index)
        if highest is not None and index > highest:
            return f"feature index {index} exceeds p = {highest}{why_p}"
        if index <= previous:
            return f"feature indices must increase along a line ({index} follows {previous})"
        try:
            float(value)
        except ValueError:
            return f"value {_shorten(value)} of feature {index} is not a number"
        previous = index
    return None


def _csv_hint(content: str) -> str:
    """A hint for a CSV line in a file read as LIBSVM: comma-separated single tokens
    (numbers or a header's names), not prose, whose comma-separated parts hold spaces."""
    fields = content.split(",")
    if ":" in content or len(fields) < 2 or any(len(f.split()) > 1 for f in fields):
        return ""
    return " (this looks like CSV: give the file a name ending in .csv)"


def _read_csv(path: Path, label_column: int | str) -> _Parsed:
    """Read a delimited text file: one row per sample, one label column."""
    import pandas as pd

    sep = _CSV_SUFFIXES[Path(_split_compression(path.name)[0]).suffix.lower()]
    lines = _content_lines(path, None)
    first = next(lines, None)
    if first is None:
        raise DataError(f"{path}: the file is empty")
    second = next(lines, None)
    lines.close()
    width = first[1].count(sep) + 1
    if width > MAX_CSV_COLUMNS:
        raise DataError(
            f"{path} line {first[0]}: has {width} columns, over the limit of {MAX_CSV_COLUMNS} "
            "for CSV/TSV files (ermviz.data.readers.MAX_CSV_COLUMNS); save wide data as a "
            "sparse LIBSVM file ('label index:value ...')"
        )
    header = _looks_like_header(first[1], None if second is None else second[1], sep)
    try:
        with _open_binary(path) as fh:
            frame = pd.read_csv(
                fh, sep=sep, header=0 if header else None, skipinitialspace=True, encoding="utf-8"
            )
    except DataError:
        raise
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{path}: is not UTF-8 text (byte {exc.object[exc.start : exc.start + 1]!r} cannot be "
            "decoded); save it as UTF-8 (or ASCII) text and load it again"
        ) from None
    except _DECOMPRESSION_ERRORS as exc:
        raise _unreadable(path, exc) from None
    except (ValueError, OverflowError) as exc:
        message = " ".join(str(exc).split())
        raise DataError(
            f"{path}: not readable as CSV ({message}); every row needs the same number of "
            f"fields separated by {sep!r}"
        ) from None
    if frame.shape[1] < 2:
        raise DataError(
            f"{path}: has {frame.shape[1]} column; a CSV needs feature columns and a label "
            f"column (separator {sep!r})"
        )
    if frame.shape[0] == 0:
        raise DataError(f"{path}: has a header but no data rows")
    columns = list(frame.columns)
    if isinstance(label_column, str):
        if label_column not in columns:
            shown = str([str(c) for c in columns[:12]]) if header else "none (no header line)"
            if header and len(columns) > 12:
                shown = f"{shown[:-1]}, ... ({len(columns)} in all)]"
            raise DataError(
                f"{path}: no column named {label_column!r}; the columns are {shown}; pass "
                "label_column as a name from that list or as a position (-1 = last)"
            )
        position = columns.index(label_column)
    else:
        if not -len(columns) <= label_column < len(columns):
            raise DataError(
                f"{path}: label_column={label_column} is out of range for {len(columns)} "
                "columns; use a position in that range (-1 = last) or a column name"
            )
        position = label_column % len(columns)

    def line(row: int) -> int:
        return _line_of_row(path, row, "csv", header)[0]

    def column_name(index: int) -> str:
        return repr(str(columns[index])) if header else f"{index + 1}"

    features = frame.drop(columns=columns[position])
    feature_positions = [i for i in range(len(columns)) if i != position]
    X = np.empty(features.shape, dtype=np.float64)
    is_text = np.array([not pd.api.types.is_numeric_dtype(t) for t in features.dtypes], bool)
    if (~is_text).any():
        X[:, ~is_text] = features.iloc[:, ~is_text].to_numpy(dtype=np.float64)
    if is_text.any():
        # Columns pandas left as text (a word, or a number too large for int64): converted
        # in one vectorized call, whatever the column count.
        block = features.iloc[:, is_text].to_numpy(dtype=object)
        values, missing = _to_float(block.ravel())
        values = values.reshape(block.shape)
        as_text = np.isnan(values) & ~missing.reshape(block.shape)
        if as_text.any():
            row, k = np.argwhere(as_text)[0]
            col = int(np.flatnonzero(is_text)[k])
            raise DataError(
                f"{path} line {line(row)}: column {column_name(feature_positions[col])} holds "
                f"{_shorten(features.iat[row, col])}, not a number; CSV features must be numeric"
            )
        X[:, is_text] = values
    not_finite = ~np.isfinite(X)
    if not_finite.any():
        row, col = np.argwhere(not_finite)[0]
        raise DataError(
            f"{path} line {line(row)}: column {column_name(feature_positions[col])} is "
            f"{'empty or NaN' if np.isnan(X[row, col]) else 'infinite'}; fill in the value "
            "or delete the row"
        )
    raw_labels = frame.iloc[:, position]
    if raw_labels.isna().any():
        row = int(np.flatnonzero(raw_labels.isna().to_numpy())[0])
        raise DataError(
            f"{path} line {line(row)}: the label (column {column_name(position)}) is empty; "
            "fill it in or delete the row"
        )
    numeric_labels, _ = _to_float(raw_labels.to_numpy(dtype=object))
    if np.isnan(numeric_labels).any():
        # Text labels ("yes"/"no", "B"/"M") are kept as text for an explicit label_map.
        y = raw_labels.astype(str).str.strip().to_numpy(dtype=object)
    else:
        y = numeric_labels
        infinite = np.flatnonzero(~np.isfinite(y))
        if infinite.size:
            row = int(infinite[0])
            raise DataError(
                f"{path} line {line(row)}: the label (column {column_name(position)}) is "
                f"{_shorten(str(raw_labels.iat[row]))}, not a finite number; fix it or delete the "
                "row"
            )
    return _Parsed(path, X, y, "csv", header=header)


def _shorten(value: Any, most: int = 40) -> str:
    """``repr`` of a cell, cut to about ``most`` characters (a cell can be megabytes)."""
    text = repr(value)
    return text if len(text) <= most else f"{text[: most - 5]}...{text[-2:]}"


def _to_float(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cells (objects) as float64 (NaN where not a number) and where they were missing.

    Goes through text, so that an integer too large for float64 becomes inf (refused
    later as not finite) instead of raising OverflowError.
    """
    import pandas as pd

    missing = pd.isna(values)
    text = pd.Series(values, dtype=object).astype(str)
    out = np.array(pd.to_numeric(text, errors="coerce"), dtype=np.float64)
    out[missing] = np.nan
    return out, np.asarray(missing, dtype=bool)


def _looks_like_header(first: str, second: str | None, sep: str) -> bool:
    """A first line is a header if it has text where the next line has a number.

    Comparing with the second line keeps a text label column ("1,2,M") from passing for a
    header.
    """

    def fields(line: str) -> list[str]:
        return [field.strip().strip("\"'") for field in line.strip().split(sep)]

    def is_number(field: str) -> bool:
        try:
            float(field)
        except ValueError:
            return False
        return True

    below = None if second is None else fields(second)
    for i, field in enumerate(fields(first)):
        if field and not is_number(field):
            if below is None or i >= len(below) or is_number(below[i]):
                return True
    return False


def _check_finite(parsed: _Parsed) -> None:
    """Non-finite values -> DataError naming the file and line (LIBSVM files)."""
    X, y = parsed.X, parsed.y
    bad_label = ~np.isfinite(y)
    bad_entry = ~np.isfinite(X.data)
    if not bad_label.any() and not bad_entry.any():
        return
    entry_rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))[bad_entry]
    row = int(np.concatenate([np.flatnonzero(bad_label), entry_rows]).min())
    lineno, content = _line_of_row(parsed.path, row, "libsvm")
    raise DataError(
        f"{parsed.path} line {lineno}: {_non_finite_field(content)}; fix the value or delete "
        "the line"
    )


def _non_finite_field(content: str) -> str:
    """Describe the first NaN/inf field of a LIBSVM line, as written in the file."""
    tokens = content.split()
    for position, token in enumerate(tokens):
        key, colon, value = token.partition(":") if position else ("", "", token)
        try:
            finite = math.isfinite(float(value))
        except ValueError:
            continue
        if not finite:
            value = value if len(value) <= 40 else f"{value[:35]}..."
            return f"feature {key} is {value}" if colon else f"label {value} is not finite"
    return "a value is NaN or infinite"
