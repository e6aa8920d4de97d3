"""Reading data files: LIBSVM (scikit-learn's svmlight loader) and CSV/TSV (pandas).

Files are read exactly as written (plain or ``.bz2``/``.xz``/``.gz``); a file that cannot
be taken raises a :class:`~ermviz.errors.DataError` naming the file and, when it can be
found, the line at fault (malformed LIBSVM fields, non-numeric CSV values, NaN or inf).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np

from ermviz.data.dataset import Matrix
from ermviz.data.sources import _split_compression
from ermviz.errors import DataError

_CSV_SUFFIXES = {".csv": ",", ".tsv": "\t"}


def _open_text(path: Path) -> IO[str]:
    ext = _split_compression(path.name)[1]
    opener: Callable[..., IO[str]] = {".bz2": bz2.open, ".xz": lzma.open, ".gz": gzip.open}.get(
        ext, open
    )
    return opener(path, "rt", encoding="utf-8", errors="replace")


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
    # Imported here: scikit-learn costs ~1 s of start-up that cached loads never pay.
    from sklearn.datasets import load_svmlight_file

    """Parse a LIBSVM file with scikit-learn; explain failures by line."""
    try:
        if _split_compression(path.name)[1] == ".xz":
            # scikit-learn opens .gz and .bz2 itself, but .xz only as a file object.
            with lzma.open(path, "rb") as fh:
                X, y = load_svmlight_file(
                    fh, n_features=n_features, dtype=np.float64, zero_based=zero_based
                )
        else:
            X, y = load_svmlight_file(
                str(path), n_features=n_features, dtype=np.float64, zero_based=zero_based
            )
    except ValueError as exc:
        raise _libsvm_error(path, exc, n_features, zero_based, why_p) from None
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise DataError(
            f"{path}: cannot be read ({type(exc).__name__}: {exc}); the file may be truncated "
            "or not compressed the way its name says; fetch it again"
        ) from None
    if X.shape[0] == 0:
        raise DataError(f"{path}: contains no data lines; it should read 'label index:value ...'")
    if X.shape[1] == 0:
        raise DataError(f"{path}: has no features at all (no 'index:value' pairs)")
    return _Parsed(path, X, np.asarray(y, dtype=np.float64), "libsvm")


def _libsvm_error(
    path: Path, exc: ValueError, n_features: int | None, zero_based: bool | str, why_p: str
) -> DataError:
    found = _scan_libsvm(path, n_features, zero_based, why_p)
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
        return f"the line starts with {label!r}, but its first field must be the label"
    try:
        float(label)
    except ValueError:
        return f"label {label!r} is not a number"
    previous = lowest - 1
    for position, token in enumerate(tokens[1:], start=2):
        key, colon, value = token.partition(":")
        if not colon:
            return f"field {position} {token!r} is not of the form index:value"
        if key == "qid" and position == 2:
            continue
        try:
            index = int(key)
        except ValueError:
            return f"feature index {key!r} in {token!r} is not an integer"
        if index < lowest:
            return f"feature index {index} is below {lowest} (LIBSVM indices start at 1)"
        if highest is not None and index > highest:
            return f"feature index {index} exceeds p = {highest}{why_p}"
        if index <= previous:
            return f"feature indices must increase along a line ({index} follows {previous})"
        try:
            float(value)
        except ValueError:
            return f"value {value!r} of feature {index} is not a number"
        previous = index
    return None


def _csv_hint(content: str) -> str:
    if "," in content and ":" not in content:
        return " (this looks like CSV: give the file a name ending in .csv)"
    return ""


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
    header = _looks_like_header(first[1], None if second is None else second[1], sep)
    try:
        frame = pd.read_csv(
            path, sep=sep, header=0 if header else None, skipinitialspace=True, compression="infer"
        )
    except (ValueError, OSError, EOFError, lzma.LZMAError) as exc:
        message = " ".join(str(exc).split())
        raise DataError(
            f"{path}: not readable as CSV ({message}); every row needs the same number of "
            "comma-separated fields"
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
            shown = [str(c) for c in columns] if header else "none (no header line)"
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
    numeric = features.apply(pd.to_numeric, errors="coerce")
    as_text = numeric.isna().to_numpy() & features.notna().to_numpy()
    if as_text.any():
        row, col = np.argwhere(as_text)[0]
        raise DataError(
            f"{path} line {line(row)}: column {column_name(feature_positions[col])} holds "
            f"{features.iat[row, col]!r}, not a number; CSV features must be numeric"
        )
    X = np.ascontiguousarray(numeric.to_numpy(dtype=np.float64))
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
    numeric_labels = pd.to_numeric(raw_labels, errors="coerce")
    if numeric_labels.isna().any():
        # Text labels ("yes"/"no", "B"/"M") are kept as text for an explicit label_map.
        y = raw_labels.astype(str).str.strip().to_numpy(dtype=object)
    else:
        y = numeric_labels.to_numpy(dtype=np.float64)
    return _Parsed(path, X, y, "csv", header=header)


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
            return f"feature {key} is {value}" if colon else f"label {value} is not finite"
    return "a value is NaN or infinite"
