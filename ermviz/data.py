"""Datasets: the catalog, where files are looked for, parsing, bundled sets, preprocessing.

Every dataset reaches the rest of ermviz as a :class:`Dataset`: a design matrix ``X`` of
shape ``(n, p)`` (dense C-contiguous ``float64`` or canonical CSR), a target ``y`` of shape
``(n,)`` (``-1.0``/``+1.0`` for binary tasks, raw values for regression) and, when the data
comes with one, a test split.

Where data comes from
---------------------
* **Catalog names** (``datasets/catalog.toml``: ``a1a``, ``ijcnn1``, ``cadata``, ...) are
  looked for, in this order, in the folders of ``ERMVIZ_DATA`` (``os.pathsep``-separated),
  in the per-user cache (``ERMVIZ_CACHE``, default ``pooch.os_cache("ermviz")``) and in the
  repository's ``datasets/`` folder. Each file name is tried plain and as ``.bz2``, ``.xz``
  and ``.gz``. A LIBSVM file missing everywhere is downloaded into the cache with pooch,
  unless ``download=False`` or ``ERMVIZ_OFFLINE=1``.
* **Bundled names** (``wdbc``, ``blobs``, ``sparse-synthetic``, ``toy-2d``,
  ``toy-simplex-3``, ``toy-simplex-4``, ``sk-diabetes``, ``friedman``) never touch a data
  file: they come from scikit-learn or from seeded generators.
* **Paths** to the user's own LIBSVM or CSV files.

What loading does (and does not do)
-----------------------------------
Data are returned exactly as read, with binary labels mapped to -1/+1 by the catalog's
explicit mapping; nothing is scaled or centred unless asked (:func:`preprocess`).
Storage follows one rule: a sparse file stays CSR (``float64``, sorted indices, duplicates
summed, explicit zeros dropped) unless more than half of its entries are non-zero
(``nnz > DENSE_MIN_DENSITY * n * p``) and the dense matrix is small enough
(``n * p <= DENSE_MAX_ENTRIES``, 5e7 entries = 400 MB); then it becomes a dense C-contiguous
``float64`` array. The test split always uses the training part's storage.

Loaded datasets are cached in memory (key: resolved path, modification time, size and the
options), so the same :class:`Dataset` object comes back on every call. Its arrays are
therefore **read-only** (``flags.writeable = False``; for CSR: ``data``, ``indices`` and
``indptr``): copy before changing them (``X = ds.X.copy()``). Problems that do not stop
a load (row count differing from the catalog, a file hash not among the checked copies, a
test split that cannot be found) are reported as :class:`DataWarning` on the first load.

Size: over 800 lines because it holds catalog, search path, cache, readers, generators
and preprocessing; issue 12 (one home per solver family) splits it along these jobs, and
nothing here depends on the split.
"""

from __future__ import annotations

import bz2
import dataclasses
import difflib
import functools
import gzip
import hashlib
import inspect
import lzma
import math
import os
import tomllib
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import urlparse

import numpy as np
import pooch
import scipy.sparse as sp

from ermviz.errors import DataError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CATALOG_PATH",
    "DENSE_MAX_ENTRIES",
    "DENSE_MIN_DENSITY",
    "REPO_DATASETS",
    "TASKS",
    "CatalogEntry",
    "DataWarning",
    "Dataset",
    "add_intercept",
    "bundled_names",
    "cache_dir",
    "catalog",
    "clear_cache",
    "list_datasets",
    "load_dataset",
    "locate",
    "normalize_rows",
    "preprocess",
    "search_path",
    "standardize",
    "train_test_split",
]

#: The repository's ``datasets/`` folder: holds ``catalog.toml`` and is the last place
#: searched for data files.
REPO_DATASETS: Path = Path(__file__).resolve().parent.parent / "datasets"

#: The dataset catalog (always the repository's, wherever data files are searched).
CATALOG_PATH: Path = REPO_DATASETS / "catalog.toml"

#: Learning tasks a dataset can carry.
TASKS: tuple[str, ...] = ("binary", "regression")

#: A sparse file becomes dense when its density exceeds this ...
DENSE_MIN_DENSITY: float = 0.5
#: ... and the dense matrix has at most this many entries (float64: 400 MB).
DENSE_MAX_ENTRIES: int = 50_000_000

_ENV_DATA = "ERMVIZ_DATA"
_ENV_CACHE = "ERMVIZ_CACHE"
_ENV_OFFLINE = "ERMVIZ_OFFLINE"
_COMPRESSIONS = (".bz2", ".xz", ".gz")
_CSV_SUFFIXES = {".csv": ",", ".tsv": "\t"}


class DataWarning(UserWarning):
    """A dataset loaded, but something about it deserves a look (row count, hash, split)."""


# ---------------------------------------------------------------------------------------
# The Dataset container


Matrix = np.ndarray | sp.csr_matrix


@dataclass(frozen=True, eq=False, repr=False)
class Dataset:
    """A learning problem's data: features, targets and an optional test split.

    Parameters
    ----------
    name : str
        Catalog or bundled name, or the file name for user files.
    X : ndarray of shape (n, p) or scipy.sparse.csr_matrix of shape (n, p)
        Features, ``float64``; dense arrays are C-contiguous, CSR matrices canonical
        (sorted indices, no duplicates).
    y : ndarray of shape (n,)
        Targets, ``float64``; exactly ``-1.0`` or ``+1.0`` when ``task == "binary"``.
    task : {"binary", "regression"}
        The learning task.
    source : str
        Path of the file read, or ``"bundled:<name>"``.
    X_test : ndarray or csr_matrix of shape (n_test, p), optional
        Test features, same storage as ``X``.
    y_test : ndarray of shape (n_test,), optional
        Test targets, coded like ``y``.
    description : str
        One or two sentences about the data and what was done to it.

    Notes
    -----
    Datasets made by this module have read-only arrays and are shared through an
    in-memory cache: copy an array before modifying it.
    """

    name: str
    X: Matrix
    y: np.ndarray
    task: str
    source: str
    X_test: Matrix | None = None
    y_test: np.ndarray | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise DataError(f"dataset {self.name!r}: task {self.task!r} is not one of {TASKS}")
        _check_matrix(self.name, "X", self.X)
        _check_target(self.name, "y", self.y, self.X.shape[0], self.task)
        if (self.X_test is None) != (self.y_test is None):
            raise DataError(
                f"dataset {self.name!r}: X_test and y_test must be given together (or neither)"
            )
        if self.X_test is not None:
            _check_matrix(self.name, "X_test", self.X_test)
            if self.X_test.shape[1] != self.X.shape[1]:
                raise DataError(
                    f"dataset {self.name!r}: X_test has {self.X_test.shape[1]} features but X "
                    f"has {self.X.shape[1]}; both parts must share the feature space"
                )
            _check_target(self.name, "y_test", self.y_test, self.X_test.shape[0], self.task)

    @property
    def n(self) -> int:
        """Number of training rows."""
        return int(self.X.shape[0])

    @property
    def p(self) -> int:
        """Number of features (columns of ``X``)."""
        return int(self.X.shape[1])

    @property
    def is_sparse(self) -> bool:
        """True when ``X`` is a CSR matrix, False when it is a dense array."""
        return sp.issparse(self.X)

    @property
    def n_test(self) -> int:
        """Number of test rows (0 without a test split)."""
        return 0 if self.X_test is None else int(self.X_test.shape[0])

    def __repr__(self) -> str:
        storage = f"CSR nnz={self.X.nnz}" if self.is_sparse else "dense"
        test = f", n_test={self.n_test}" if self.X_test is not None else ""
        return (
            f"Dataset(name={self.name!r}, task={self.task!r}, n={self.n}, p={self.p}, "
            f"{storage}{test}, source={self.source!r})"
        )


def _check_matrix(name: str, what: str, X: Any) -> None:
    if sp.issparse(X):
        if not isinstance(X, sp.csr_matrix) or X.dtype != np.float64:
            raise DataError(
                f"dataset {name!r}: sparse {what} must be a float64 scipy.sparse.csr_matrix, "
                f"got {type(X).__name__} of {X.dtype}"
            )
    elif not (isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype == np.float64):
        raise DataError(
            f"dataset {name!r}: {what} must be a 2-D float64 array or a CSR matrix, "
            f"got {type(X).__name__} {getattr(X, 'shape', '')} {getattr(X, 'dtype', '')}"
        )


def _check_target(name: str, what: str, y: Any, n: int, task: str) -> None:
    if not (isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype == np.float64):
        raise DataError(f"dataset {name!r}: {what} must be a 1-D float64 array")
    if y.shape[0] != n:
        raise DataError(f"dataset {name!r}: {what} has {y.shape[0]} entries for {n} rows")
    if task == "binary" and not np.all((y == 1.0) | (y == -1.0)):
        raise DataError(f"dataset {name!r}: binary {what} must hold only -1.0 and +1.0")


# ---------------------------------------------------------------------------------------
# The catalog


@dataclass(frozen=True)
class CatalogEntry:
    """One named dataset of ``datasets/catalog.toml``.

    Attributes
    ----------
    name, task : str
        Catalog name; ``"binary"`` or ``"regression"``.
    n, p : int
        Official number of rows and features (``p`` may exceed the largest index used).
    file : str
        File name looked up on the search path (compression variants accepted).
    page : str
        Human-readable page about the data.
    downloadable : bool
        Whether ermviz may download ``url`` itself.
    url : str or None
        Official download address of ``file``.
    n_test : int or None
        Official number of test rows.
    test_file, test_url : str or None
        File name and download address of the test split.
    known_sha256, test_known_sha256 : tuple of str
        Hashes of copies that were checked; other hashes only warn.
    labels : tuple of (float, float)
        Raw label -> -1.0/+1.0 pairs (binary tasks only).
    description, citation, note : str
        Free text; ``note`` is appended to row-count warnings.
    """

    name: str
    task: str
    n: int
    p: int
    file: str
    page: str
    downloadable: bool = False
    url: str | None = None
    n_test: int | None = None
    test_file: str | None = None
    test_url: str | None = None
    known_sha256: tuple[str, ...] = ()
    test_known_sha256: tuple[str, ...] = ()
    labels: tuple[tuple[float, float], ...] = ()
    description: str = ""
    citation: str = ""
    note: str = ""

    @property
    def label_map(self) -> dict[float, float]:
        """The raw-label -> -1.0/+1.0 mapping as a dict (empty for regression)."""
        return dict(self.labels)


_ENTRY_KEYS = {field.name for field in dataclasses.fields(CatalogEntry)} - {"name"}


def catalog() -> dict[str, CatalogEntry]:
    """Return the dataset catalog, parsed once from ``datasets/catalog.toml``.

    Returns
    -------
    dict of str to CatalogEntry
        A fresh dict (the parsed entries themselves are immutable and cached).

    Raises
    ------
    DataError
        If the catalog file is missing or malformed.
    """
    path = CATALOG_PATH
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        raise DataError(
            f"the dataset catalog {path} is missing; it lives in the repository's datasets/ "
            "folder, so run ermviz from a checkout (pip install -e .)"
        ) from None
    return dict(_parse_catalog(str(path), mtime))


@functools.lru_cache(maxsize=4)
def _parse_catalog(path: str, mtime_ns: int) -> dict[str, CatalogEntry]:
    try:
        with open(path, "rb") as fh:
            raw = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"{path}: not valid TOML ({exc}); fix that line") from None
    entries = {}
    for name, table in raw.items():
        if not isinstance(table, dict):
            raise DataError(f"{path}: top-level key {name!r} must be a [table] of one dataset")
        entries[name] = _parse_entry(path, name, table)
    return entries


def _parse_entry(path: str, name: str, table: dict[str, Any]) -> CatalogEntry:
    def bad(message: str) -> DataError:
        return DataError(
            f"{path} [{name}]: {message}; fix the entry (the keys are described in "
            "datasets/README.md)"
        )

    unknown = sorted(set(table) - _ENTRY_KEYS)
    if unknown:
        raise bad(f"unknown key(s) {unknown}")
    for key in ("task", "n", "p", "file", "page"):
        if key not in table:
            raise bad(f"missing key {key!r}")
    task = table["task"]
    if task not in TASKS:
        raise bad(f"task {task!r} is not one of {TASKS}")
    ints = {}
    for key in ("n", "p", "n_test"):
        value = table.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise bad(f"{key} must be a positive integer, got {value!r}")
        if value is not None and value < 1:
            raise bad(f"{key} must be a positive integer, got {value!r}")
        ints[key] = value
    strings = {}
    for key in ("file", "page", "url", "test_file", "test_url", "description", "citation", "note"):
        value = table.get(key)
        if value is not None and not isinstance(value, str):
            raise bad(f"{key} must be a string, got {value!r}")
        strings[key] = value
    for key in ("file", "test_file"):
        value = strings[key]
        if value is not None and (not value or "/" in value or "\\" in value):
            raise bad(f"{key} must be a bare file name, got {value!r}")
    downloadable = table.get("downloadable", False)
    if not isinstance(downloadable, bool):
        raise bad(f"downloadable must be true or false, got {downloadable!r}")
    if downloadable:
        pairs = [("file", "url")]
        if strings["test_file"]:
            pairs.append(("test_file", "test_url"))
        for file_key, url_key in pairs:
            url = strings[url_key]
            if not url:
                raise bad(f"downloadable entries need {url_key}")
            # The download is saved under the URL's base name; it must be found again later.
            url_stem = _split_compression(Path(urlparse(url).path).name)[0]
            if url_stem != _split_compression(strings[file_key])[0]:
                raise bad(f"{url_key} {url!r} does not end in a variant of {file_key}")
    if (strings["test_file"] is None) != (ints["n_test"] is None):
        raise bad("test_file and n_test go together")
    hashes = {}
    for key in ("known_sha256", "test_known_sha256"):
        value = table.get(key, [])
        if not isinstance(value, list) or not all(_is_sha256(h) for h in value):
            raise bad(f"{key} must be a list of 64-digit hex sha256 strings")
        hashes[key] = tuple(h.lower() for h in value)
    labels = table.get("labels")
    if task == "regression":
        if labels is not None:
            raise bad("regression entries have no labels mapping")
        pairs_out: tuple[tuple[float, float], ...] = ()
    else:
        if not isinstance(labels, dict) or not labels:
            raise bad('binary entries need labels = { "<raw label>" = -1 or 1, ... }')
        mapped = []
        for key, value in labels.items():
            try:
                raw_label = float(key)
            except ValueError:
                raise bad(f"label key {key!r} is not a number") from None
            if isinstance(value, bool) or value not in (-1, 1):
                raise bad(f"label {key!r} maps to {value!r}; use -1 or 1")
            mapped.append((raw_label, float(value)))
        if {v for _, v in mapped} != {-1.0, 1.0}:
            raise bad("the labels mapping must produce both -1 and +1")
        pairs_out = tuple(sorted(mapped))
    return CatalogEntry(
        name=name,
        task=task,
        n=ints["n"],
        p=ints["p"],
        file=strings["file"],
        page=strings["page"],
        downloadable=downloadable,
        url=strings["url"],
        n_test=ints["n_test"],
        test_file=strings["test_file"],
        test_url=strings["test_url"],
        known_sha256=hashes["known_sha256"],
        test_known_sha256=hashes["test_known_sha256"],
        labels=pairs_out,
        description=strings["description"] or "",
        citation=strings["citation"] or "",
        note=strings["note"] or "",
    )


def _is_sha256(value: Any) -> bool:
    return (
        isinstance(value, str)
        and len(value) == 64
        and all(c in "0123456789abcdef" for c in value.lower())
    )


# ---------------------------------------------------------------------------------------
# Where files are looked for


def cache_dir() -> Path:
    """Per-user download cache: ``$ERMVIZ_CACHE`` or ``pooch.os_cache("ermviz")``."""
    raw = os.environ.get(_ENV_CACHE, "").strip()
    return Path(raw).expanduser() if raw else Path(pooch.os_cache("ermviz"))


def _places() -> list[tuple[Path, str]]:
    """Search folders in order, each with the reason it is searched."""
    raw = os.environ.get(_ENV_DATA, "")
    places = [(Path(part).expanduser(), _ENV_DATA) for part in raw.split(os.pathsep) if part]
    places += [(cache_dir(), "cache"), (REPO_DATASETS, "repository")]
    seen: set[Path] = set()
    unique = []
    for folder, why in places:
        key = folder.resolve()
        if key not in seen:
            seen.add(key)
            unique.append((folder, why))
    return unique


def search_path() -> list[Path]:
    """Folders searched for catalog files, first match wins.

    Returns
    -------
    list of Path
        The ``ERMVIZ_DATA`` folders in order, then :func:`cache_dir`, then the repository's
        ``datasets/`` folder. Folders that do not exist are listed too (and skipped).
    """
    return [folder for folder, _ in _places()]


def _describe_places(places: list[tuple[Path, str]]) -> str:
    parts = []
    for folder, why in places:
        missing = "" if folder.is_dir() else ", missing"
        parts.append(f"{folder} ({why}{missing})")
    return "; ".join(parts)


def _split_compression(filename: str) -> tuple[str, str]:
    for ext in _COMPRESSIONS:
        if filename.endswith(ext) and len(filename) > len(ext):
            return filename[: -len(ext)], ext
    return filename, ""


def _variants(filename: str) -> list[str]:
    """The catalog's own spelling first, then the plain and other compressed names."""
    stem, _ = _split_compression(filename)
    return [filename] + [stem + ext for ext in ("", *_COMPRESSIONS) if stem + ext != filename]


def _find_file(filename: str, folders: list[Path]) -> Path | None:
    for folder in folders:
        for variant in _variants(filename):
            candidate = folder / variant
            if candidate.is_file():
                return candidate
    return None


def locate(name: str) -> Path | None:
    """Return the file a catalog name resolves to, or None.

    Parameters
    ----------
    name : str
        A catalog name, a bundled name or a path.

    Returns
    -------
    Path or None
        The first existing candidate on :func:`search_path` for a catalog name (None when
        it is nowhere, which also means :func:`load_dataset` would try to download it);
        None for bundled names, which need no file; the resolved path for an existing file.

    Raises
    ------
    DataError
        If ``name`` is neither a catalog name, a bundled name nor an existing file.
    """
    name = os.fspath(name)
    entries = catalog()
    if name in entries:
        return _find_file(entries[name].file, search_path())
    if name in _BUNDLED:
        return None
    path = Path(name).expanduser()
    if path.is_file():
        return path.resolve()
    raise _unknown_name(name)


def _unknown_name(name: str) -> DataError:
    known = [*catalog(), *_BUNDLED]
    close = difflib.get_close_matches(name, known, n=4, cutoff=0.6)
    close += [k for k in known if k.lower() == name.lower() and k not in close]
    hint = f"did you mean {', '.join(repr(c) for c in close)}? " if close else ""
    return DataError(
        f"unknown dataset {name!r}: not in the catalog ({CATALOG_PATH}), "
        f"not a bundled set, and there is no file {Path(name).expanduser().resolve()}; {hint}"
        "list_datasets() shows every name; to load your own data pass the path of a LIBSVM "
        "file or of a CSV file (name ending .csv, label in the last column)"
    )


# ---------------------------------------------------------------------------------------
# Downloads


def _downloads_allowed(download: bool | None) -> tuple[bool, str]:
    """Whether a missing file may be fetched, and why not."""
    if download is not None:
        return download, "download=False"
    raw = os.environ.get(_ENV_OFFLINE, "").strip().lower()
    if raw in ("", "0", "false", "no", "off"):
        return True, ""
    if raw in ("1", "true", "yes", "on"):
        return False, f"{_ENV_OFFLINE}={raw}"
    raise DataError(
        f"{_ENV_OFFLINE}={raw!r} is not understood; set it to 1 (never download) "
        "or 0 (download missing LIBSVM files)"
    )


def _obtain(
    entry: CatalogEntry,
    filename: str,
    url: str | None,
    folders: list[Path],
    places: list[tuple[Path, str]],
    download: tuple[bool, str],
) -> Path:
    """Find ``filename`` on the search path, or download it into the cache."""
    found = _find_file(filename, folders)
    if found is not None:
        return found
    stem = _split_compression(filename)[0]
    wanted = f"'{stem}' (plain, .bz2, .xz or .gz)"
    where = _describe_places(places)
    if not entry.downloadable or url is None:
        raise DataError(
            f"{entry.name}: no file {wanted} in {where}. This is not a LIBSVM download, so "
            f"ermviz does not fetch it: get the data from {entry.page}, convert it to LIBSVM "
            f"format ('label index:value ...') and save it as '{filename}' in one of those "
            f"folders or in a folder listed in {_ENV_DATA}"
        )
    allowed, why_not = download
    if not allowed:
        raise DataError(
            f"{entry.name}: no file {wanted} in {where}, and downloads are off ({why_not}); "
            f"fetch {url} by hand into one of those folders, or point {_ENV_DATA} at the "
            "folder that has it"
        )
    cache = cache_dir()
    try:
        fetched = pooch.retrieve(
            url,
            known_hash=None,  # official hashes are unknown; known_sha256 is checked after
            fname=Path(urlparse(url).path).name,
            path=cache,
            progressbar=True,
        )
    except Exception as exc:  # network, TLS, HTTP and disk errors alike: fetch by hand
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        raise DataError(
            f"{entry.name}: no file {wanted} in {where}, and downloading {url} into {cache} "
            f"failed ({reason}); fetch that URL by hand into one of those folders, or point "
            f"{_ENV_DATA} at the folder that has it"
        ) from None
    return Path(fetched)


# ---------------------------------------------------------------------------------------
# Reading files


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


# ---------------------------------------------------------------------------------------
# Labels


def _label_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return f"{value:+g}" if value in (-1.0, 1.0) else f"{value:g}"
    return repr(value) if isinstance(value, str) else f"{value:g}"


def _mapping_text(mapping: Mapping[Any, float]) -> str:
    return "{" + ", ".join(f"{_label_text(k)}: {v:+g}" for k, v in mapping.items()) + "}"


def _normalize_label_map(label_map: Mapping[Any, Any]) -> tuple[tuple[Any, float], ...]:
    """Validate a user's label_map; numeric keys become floats, text keys stay text."""
    if not isinstance(label_map, Mapping) or not label_map:
        raise DataError(
            f"label_map must be a non-empty dict from raw label to -1 or +1, got {label_map!r}"
        )
    pairs = []
    for key, value in label_map.items():
        if isinstance(value, bool) or value not in (-1, 1):
            raise DataError(
                f"label_map maps {key!r} to {value!r}; every raw label must map to -1 or +1"
            )
        if isinstance(key, bool):
            raise DataError(f"label_map key {key!r} must be a number or a text label")
        if isinstance(key, str):
            try:
                norm: Any = float(key)
            except ValueError:
                norm = key.strip()
        elif isinstance(key, int | float | np.integer | np.floating):
            norm = float(key)
        else:
            raise DataError(f"label_map key {key!r} must be a number or a text label")
        pairs.append((norm, float(value)))
    return tuple(pairs)


def _auto_mapping(parsed: _Parsed) -> dict[Any, float]:
    """Two distinct labels: the larger becomes +1 (user files without a label_map)."""
    values = np.unique(parsed.y)
    if parsed.y.dtype == object:
        raise DataError(
            f"{parsed.path}: the labels are text ({', '.join(map(repr, values[:4]))}); pass "
            f"label_map={{{values[0]!r}: -1, {values[-1]!r}: 1}} (or your choice of +1)"
        )
    if values.size == 1:
        raise _single_class(parsed.path, values[0], None)
    if values.size > 2:
        shown = ", ".join(_label_text(float(v)) for v in values[:5])
        raise DataError(
            f"{parsed.path}: has {values.size} distinct labels ({shown}, ...) but the task is "
            "binary; pass label_map={raw: -1 or 1, ...} covering each label, or "
            "task='regression'"
        )
    return {values[0]: -1.0, values[1]: 1.0}


def _single_class(path: Path, raw: Any, mapped: float | None) -> DataError:
    sign = _label_text(mapped if mapped is not None else raw)
    detail = f" (raw label {_label_text(raw)})" if mapped not in (None, raw) else ""
    return DataError(
        f"{path}: has only label {sign}{detail}; a binary problem needs both classes; "
        "use a file with both classes, or task='regression'"
    )


def _map_labels(parsed: _Parsed, mapping: Mapping[Any, float], name: str) -> np.ndarray:
    y = parsed.y
    out = np.zeros(y.shape[0], dtype=np.float64)
    known = np.zeros(y.shape[0], dtype=bool)
    for raw, target in mapping.items():
        if (y.dtype == object) != isinstance(raw, str):
            continue
        hit = y == raw
        out[hit] = target
        known |= hit
    if not known.all():
        row = int(np.flatnonzero(~known)[0])
        raw = y[row]
        raw_text = _label_text(raw if isinstance(raw, str) else float(raw))
        raise DataError(
            f"{parsed.path} line {parsed.line_of(row)}: label {raw_text} is not in the label "
            f"mapping {_mapping_text(mapping)} of {name}; pass label_map={{...}} covering it, "
            "or fix the file"
        )
    return out


# ---------------------------------------------------------------------------------------
# Storage


def _canonical_csr(X: Any) -> sp.csr_matrix:
    X = sp.csr_matrix(X, dtype=np.float64)
    if not (X.data.flags.writeable and X.indices.flags.writeable and X.indptr.flags.writeable):
        X = X.copy()  # the canonicalisation below works in place
    X.sum_duplicates()  # also sorts the indices
    X.eliminate_zeros()  # explicit ":0" entries carry no information
    X.sort_indices()
    return X


def _wants_dense(X: sp.csr_matrix) -> bool:
    entries = X.shape[0] * X.shape[1]
    return entries <= DENSE_MAX_ENTRIES and X.nnz > DENSE_MIN_DENSITY * entries


def _store(X: Any, dense: bool) -> Matrix:
    """Return X in the chosen storage, read-only (X must be an array made by this module)."""
    if dense:
        out = np.ascontiguousarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
        out.flags.writeable = False
        return out
    out = _canonical_csr(X)
    for array in (out.data, out.indices, out.indptr):
        array.flags.writeable = False
    return out


def _frozen_vector(y: np.ndarray) -> np.ndarray:
    out = np.array(y, dtype=np.float64, copy=True)
    out.flags.writeable = False
    return out


def _make_dataset(
    name: str,
    X: Any,
    y: np.ndarray,
    task: str,
    source: str,
    description: str,
    X_test: Any = None,
    y_test: np.ndarray | None = None,
    dense: bool | None = None,
) -> Dataset:
    if dense is None:
        dense = not sp.issparse(X)
    return Dataset(
        name=name,
        X=_store(X, dense),
        y=_frozen_vector(y),
        task=task,
        source=source,
        X_test=None if X_test is None else _store(X_test, dense),
        y_test=None if y_test is None else _frozen_vector(y_test),
        description=description,
    )


# ---------------------------------------------------------------------------------------
# Loading files (cached)


@dataclass(frozen=True)
class _FileRef:
    path: str
    mtime_ns: int
    size: int

    @classmethod
    def of(cls, path: Path) -> _FileRef:
        resolved = path.resolve()
        stat = resolved.stat()
        return cls(str(resolved), stat.st_mtime_ns, stat.st_size)


@dataclass(frozen=True)
class _Request:
    name: str
    train: _FileRef
    test: _FileRef | None
    fmt: str  # "libsvm" or "csv"
    n_features: int | None
    zero_based: bool | str
    task: str | None  # None: infer from the labels (user files)
    labels: tuple[tuple[Any, float], ...] | None  # None: catalog's or automatic
    label_column: int | str
    entry: CatalogEntry | None


def _sha256(path: Path, decompress: bool = False) -> str:
    opener = open
    if decompress:
        ext = _split_compression(path.name)[1]
        opener = {".bz2": bz2.open, ".xz": lzma.open, ".gz": gzip.open}.get(ext, open)
    digest = hashlib.sha256()
    with opener(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _known_copy(path: Path, hashes: tuple[str, ...]) -> tuple[bool, str]:
    """Whether the file, as stored or decompressed, is one of the checked copies."""
    digest = _sha256(path)
    if digest in hashes:
        return True, digest
    if _split_compression(path.name)[1]:
        # A recompressed copy (say a1a.xz made from a1a) holds the same bytes inside.
        return _sha256(path, decompress=True) in hashes, digest
    return False, digest


def _check_copy(
    name: str, path: Path, rows: int, expected: int, hashes: tuple[str, ...], note: str
) -> None:
    if rows != expected:
        extra = f" {note}" if note else ""
        warnings.warn(
            f"{name}: {path} has {rows} rows but the catalog says {expected}; it may be "
            f"another version of the data.{extra}",
            DataWarning,
            stacklevel=2,
        )
    if hashes:
        known, digest = _known_copy(path, hashes)
        if not known:
            warnings.warn(
                f"{name}: {path} has sha256 {digest}, which is not among the copies checked "
                "for the catalog; that is expected for official downloads, but compare the "
                "row count and labels if results look odd",
                DataWarning,
                stacklevel=2,
            )


_PARSED_VERSION = 1  # bump when the parsed-cache layout or the parsing rules change


def _parsed_cache_path(req: _Request) -> Path | None:
    """Where a catalog dataset parsed from ``req``'s files is kept (None: not cached).

    Keyed on the files' resolved paths, sizes and modification times and on every option
    that shapes the result, so a changed file or option is parsed again. Only catalog
    entries are kept: they are the large, re-read-every-session files."""
    if req.entry is None or req.fmt != "libsvm":
        return None
    key = repr(
        (
            _PARSED_VERSION,
            req.name,
            req.train,
            req.test,
            req.n_features,
            req.zero_based,
            req.task,
            req.labels,
            req.entry.labels,
        )
    )
    digest = hashlib.sha1(key.encode()).hexdigest()[:20]
    return cache_dir() / "parsed" / f"{req.name}-{digest}.npz"


def _save_parsed(path: Path, ds: Dataset) -> None:
    arrays: dict[str, Any] = {"y": ds.y, "meta": np.array([ds.task, ds.source, ds.description])}
    for prefix, X in (("X", ds.X), ("Xt", ds.X_test)):
        if X is None:
            continue
        if sp.issparse(X):
            arrays.update(
                {
                    f"{prefix}_data": X.data,
                    f"{prefix}_indices": X.indices,
                    f"{prefix}_indptr": X.indptr,
                    f"{prefix}_shape": np.array(X.shape),
                }
            )
        else:
            arrays[f"{prefix}_dense"] = X
    if ds.y_test is not None:
        arrays["yt"] = ds.y_test
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp.npz")
        np.savez(tmp, **arrays)
        os.replace(tmp, path)
    except OSError:  # a read-only cache only costs speed
        pass


def _load_parsed(path: Path, name: str) -> Dataset | None:
    try:
        with np.load(path, allow_pickle=False) as z:
            files = set(z.files)

            def matrix(prefix: str) -> Any:
                if f"{prefix}_dense" in files:
                    return z[f"{prefix}_dense"]
                if f"{prefix}_data" not in files:
                    return None
                shape = tuple(int(v) for v in z[f"{prefix}_shape"])
                return sp.csr_matrix(
                    (z[f"{prefix}_data"], z[f"{prefix}_indices"], z[f"{prefix}_indptr"]),
                    shape=shape,
                )

            task, source, description = (str(v) for v in z["meta"])
            X, Xt = matrix("X"), matrix("Xt")
            y = z["y"]
            yt = z["yt"] if "yt" in files else None
    except (OSError, ValueError, KeyError):
        return None
    return _make_dataset(
        name, X, y, task, source, description, X_test=Xt, y_test=yt, dense=not sp.issparse(X)
    )


@functools.lru_cache(maxsize=8)
def _load_request(req: _Request) -> Dataset:
    """Load ``req``, from the parsed cache when its files have not changed."""
    cached = _parsed_cache_path(req)
    if cached is not None and cached.exists():
        ds = _load_parsed(cached, req.name)
        if ds is not None:
            return ds
    ds = _parse_request(req)
    if cached is not None:
        _save_parsed(cached, ds)
    return ds


def _parse_request(req: _Request) -> Dataset:
    entry = req.entry
    why_p = f", the feature count the catalog gives for {entry.name}" if entry else ""

    def read(ref: _FileRef) -> _Parsed:
        path = Path(ref.path)
        if req.fmt == "csv":
            return _read_csv(path, req.label_column)
        parsed = _read_libsvm(path, req.n_features, req.zero_based, why_p)
        _check_finite(parsed)
        return parsed

    train = read(req.train)
    test = read(req.test) if req.test is not None else None
    if entry is not None:
        _check_copy(
            entry.name, train.path, train.X.shape[0], entry.n, entry.known_sha256, entry.note
        )
        if test is not None and entry.n_test is not None:
            _check_copy(
                entry.name,
                test.path,
                test.X.shape[0],
                entry.n_test,
                entry.test_known_sha256,
                entry.note,
            )

    task = req.task or _infer_task(train, req.labels)
    if task == "binary":
        if req.labels is not None:
            mapping: dict[Any, float] = dict(req.labels)
        elif entry is not None and entry.task == "binary":
            mapping = entry.label_map
        else:
            mapping = _auto_mapping(train)
        y = _map_labels(train, mapping, req.name)
        if np.unique(y).size < 2:
            raw = train.y[0]
            raise _single_class(train.path, raw if isinstance(raw, str) else float(raw), y[0])
        y_test = _map_labels(test, mapping, req.name) if test is not None else None
    else:
        if train.y.dtype == object:
            raise DataError(
                f"{train.path}: the labels are text, which a regression task cannot use; "
                "pass task='binary' with a label_map"
            )
        y = train.y
        y_test = test.y if test is not None else None

    dense = True if req.fmt == "csv" else _wants_dense(train.X)
    description = entry.description if entry is not None else f"user file {train.path.name}"
    if test is not None:
        description += f" Test split: {test.path}."
    return _make_dataset(
        req.name,
        train.X,
        y,
        task,
        str(train.path),
        description,
        X_test=None if test is None else test.X,
        y_test=y_test,
        dense=dense,
    )


def _infer_task(train: _Parsed, labels: tuple[tuple[Any, float], ...] | None) -> str:
    if labels is not None or train.y.dtype == object:
        return "binary"
    distinct = np.unique(train.y).size
    if distinct == 1:
        raise _single_class(train.path, float(train.y[0]), None)
    return "binary" if distinct == 2 else "regression"


def clear_cache() -> None:
    """Forget every loaded dataset and the parsed catalog (files are re-read next time)."""
    _load_request.cache_clear()
    _bundled_cached.cache_clear()
    _parse_catalog.cache_clear()


# ---------------------------------------------------------------------------------------
# Bundled datasets (no files)


def _int_arg(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise DataError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _float_arg(name: str, value: Any, low: float, high: float, *, open_low: bool = False) -> float:
    ok = isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)
    if ok:
        value = float(value)
        ok = math.isfinite(value) and (value > low if open_low else value >= low) and value <= high
    if not ok:
        bracket = "(" if open_low else "["
        raise DataError(f"{name} must be a number in {bracket}{low}, {high}], got {value!r}")
    return value


def _rng(seed: Any) -> np.random.Generator:
    return np.random.default_rng(_int_arg("seed", seed, 0))


def _make_blobs(
    n: int = 200, p: int = 2, separation: float = 3.0, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Two Gaussian blobs with identity covariance; ``ceil(n/2)`` points are +1.

    The class means are ``±(separation / 2) * (1, ..., 1) / sqrt(p)``, so ``separation``
    is the distance between them in units of the within-class standard deviation
    (0: the classes coincide; about 4: nearly separable).
    """
    n = _int_arg("n", n, 2)
    p = _int_arg("p", p, 1)
    separation = _float_arg("separation", separation, 0.0, 1e6)
    rng = _rng(seed)
    n_pos = (n + 1) // 2
    y = np.concatenate([np.ones(n_pos), -np.ones(n - n_pos)])
    direction = np.full(p, 1.0 / math.sqrt(p))
    X = rng.standard_normal((n, p)) + 0.5 * separation * y[:, None] * direction
    order = rng.permutation(n)
    return X[order], y[order]


def _make_sparse_synthetic(
    n: int = 1000,
    p: int = 5000,
    density: float = 0.01,
    n_informative: int | None = None,
    noise: float = 0.1,
    seed: int = 0,
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Sparse high-dimensional binary classification with a sparse true weight vector.

    Each of the ``n * p`` entries is non-zero with probability ``density`` (standard
    normal values). The label is ``sign(X @ w + noise * N(0, 1))`` where ``w`` has
    ``n_informative`` standard-normal non-zeros (default ``max(1, p // 10)``).
    """
    n = _int_arg("n", n, 2)
    p = _int_arg("p", p, 1)
    density = _float_arg("density", density, 0.0, 1.0, open_low=True)
    k = max(1, p // 10) if n_informative is None else _int_arg("n_informative", n_informative, 1)
    if k > p:
        raise DataError(f"n_informative must be at most p = {p}, got {k}")
    noise = _float_arg("noise", noise, 0.0, 1e6)
    rng = _rng(seed)
    nnz = int(rng.binomial(n * p, density))
    flat = rng.choice(n * p, size=nnz, replace=False)
    X = sp.csr_matrix(
        (rng.standard_normal(nnz), (flat // p, flat % p)), shape=(n, p), dtype=np.float64
    )
    w = np.zeros(p)
    w[rng.choice(p, size=k, replace=False)] = rng.standard_normal(k)
    score = X @ w + noise * rng.standard_normal(n)
    y = np.where(score > 0, 1.0, -1.0)
    ties = score == 0  # rows with no informative feature and no noise: fair coin
    y[ties] = rng.choice([-1.0, 1.0], size=int(ties.sum()))
    return X, y


def _make_toy_2d(
    n: int = 40, separation: float = 3.0, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Two Gaussian blobs in the plane (see ``blobs``), small enough to see every point."""
    return _make_blobs(n=n, p=2, separation=separation, seed=seed)


# Canonical simplex toys: separable, both classes present, easy to draw.
_SIMPLEX_POINTS = {
    3: ([[1.0, 2.0], [2.0, 0.5], [-1.0, -1.0]], [1.0, 1.0, -1.0]),
    4: ([[1.0, 2.0], [2.0, 0.5], [-1.0, -1.5], [-2.0, 0.0]], [1.0, 1.0, -1.0, -1.0]),
}


def _make_simplex(k: int, seed: int | None) -> tuple[np.ndarray, np.ndarray]:
    points, labels = _SIMPLEX_POINTS[k]
    X, y = np.array(points), np.array(labels)
    if seed is not None:
        # Random points around (+1, +1) and (-1, -1), with the same labels.
        X = y[:, None] * np.ones(2) + 0.75 * _rng(seed).standard_normal((k, 2))
    return X, y


def _make_toy_simplex_3(seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exactly 3 points in the plane (two +1, one -1): the SVM dual lives on a triangle.

    ``seed=None`` gives fixed points; an integer seed draws random ones.
    """
    return _make_simplex(3, seed)


def _make_toy_simplex_4(seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exactly 4 points in the plane (two per class): the dual lives on a tetrahedron.

    ``seed=None`` gives fixed points; an integer seed draws random ones.
    """
    return _make_simplex(4, seed)


def _make_wdbc() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's Wisconsin diagnostic breast cancer set; benign (target 1) is +1."""
    from sklearn.datasets import load_breast_cancer

    X, target = load_breast_cancer(return_X_y=True)
    return X, np.where(target == 1, 1.0, -1.0)


def _make_sk_diabetes() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's diabetes regression set as shipped (features centred and scaled)."""
    from sklearn.datasets import load_diabetes

    return load_diabetes(return_X_y=True)


def _make_friedman(
    n: int = 500, p: int = 10, noise: float = 1.0, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Friedman #1 regression (``sklearn.datasets.make_friedman1``); needs ``p >= 5``."""
    from sklearn.datasets import make_friedman1

    n = _int_arg("n", n, 2)
    p = _int_arg("p", p, 5)
    noise = _float_arg("noise", noise, 0.0, 1e6)
    return make_friedman1(
        n_samples=n, n_features=p, noise=noise, random_state=_int_arg("seed", seed, 0)
    )


@dataclass(frozen=True)
class _Bundled:
    task: str
    n: int  # with default arguments
    p: int
    description: str
    make: Callable[..., tuple[Any, np.ndarray]]


_BUNDLED: dict[str, _Bundled] = {
    "wdbc": _Bundled(
        "binary",
        569,
        30,
        "Wisconsin diagnostic breast cancer as bundled with scikit-learn; benign = +1.",
        _make_wdbc,
    ),
    "blobs": _Bundled(
        "binary",
        200,
        2,
        "Two Gaussian blobs (n, p, separation, seed).",
        _make_blobs,
    ),
    "sparse-synthetic": _Bundled(
        "binary",
        1000,
        5000,
        "Sparse random features, labels from a sparse linear model "
        "(n, p, density, n_informative, noise, seed).",
        _make_sparse_synthetic,
    ),
    "toy-2d": _Bundled(
        "binary",
        40,
        2,
        "Two small Gaussian blobs in the plane (n, separation, seed).",
        _make_toy_2d,
    ),
    "toy-simplex-3": _Bundled(
        "binary", 3, 2, "Three points: the SVM dual is a triangle (seed).", _make_toy_simplex_3
    ),
    "toy-simplex-4": _Bundled(
        "binary", 4, 2, "Four points: the SVM dual is a tetrahedron (seed).", _make_toy_simplex_4
    ),
    "sk-diabetes": _Bundled(
        "regression",
        442,
        10,
        "Diabetes progression as bundled with scikit-learn (Efron et al. 2004).",
        _make_sk_diabetes,
    ),
    "friedman": _Bundled(
        "regression", 500, 10, "Friedman #1 regression (n, p, noise, seed).", _make_friedman
    ),
}


def bundled_names() -> list[str]:
    """Names of the datasets that need no file (scikit-learn's and generated ones)."""
    return list(_BUNDLED)


def _load_bundled(name: str, task: str | None, label_map: Any, kwargs: dict[str, Any]) -> Dataset:
    spec = _BUNDLED[name]
    if label_map is not None:
        raise DataError(f"{name} is a bundled set with fixed -1/+1 labels; drop label_map")
    if task is not None and task != spec.task:
        raise DataError(f"{name} is a {spec.task} set; drop task={task!r} or pick another set")
    accepted = list(inspect.signature(spec.make).parameters)
    unknown = sorted(set(kwargs) - set(accepted))
    if unknown:
        takes = ", ".join(accepted) if accepted else "no arguments"
        raise DataError(f"{name} does not take {', '.join(unknown)}; it takes {takes}")
    key = tuple(sorted(kwargs.items()))
    try:
        hash(key)
    except TypeError:
        raise DataError(f"arguments of {name} must be plain numbers, got {kwargs!r}") from None
    return _bundled_cached(name, key)


@functools.lru_cache(maxsize=32)
def _bundled_cached(name: str, key: tuple[tuple[str, Any], ...]) -> Dataset:
    spec = _BUNDLED[name]
    X, y = spec.make(**dict(key))
    if spec.task == "binary" and np.unique(y).size < 2:
        raise DataError(
            f"{name} with {dict(key)} produced only one class; change the seed or make n larger"
        )
    description = spec.description
    if key:
        description += " Arguments: " + ", ".join(f"{k}={v!r}" for k, v in key) + "."
    return _make_dataset(name, X, y, spec.task, f"bundled:{name}", description)


# ---------------------------------------------------------------------------------------
# The public loader


def load_dataset(
    name_or_path: str | os.PathLike[str],
    *,
    label_map: Mapping[Any, int] | None = None,
    task: str | None = None,
    download: bool | None = None,
    with_test: bool = True,
    label_column: int | str = -1,
    **generator_kwargs: Any,
) -> Dataset:
    """Load a catalog dataset, a bundled one or the user's own file.

    Parameters
    ----------
    name_or_path : str or path-like
        A catalog name (``"a1a"``), a bundled name (``"blobs"``) or the path of a LIBSVM
        file (``.bz2``/``.xz``/``.gz`` accepted) or a CSV/TSV file (name ending ``.csv`` or
        ``.tsv``, optionally compressed).
    label_map : dict, optional
        Raw label -> -1 or +1. Defaults: the catalog's mapping; for user files the larger
        of the two labels becomes +1. Text labels of CSV files need it.
    task : {"binary", "regression"}, optional
        Override the task. Default: the catalog's; for user files, binary with two
        distinct labels and regression with more.
    download : bool, optional
        Whether a missing catalog file may be downloaded. Default: yes, unless the
        environment variable ``ERMVIZ_OFFLINE`` is 1.
    with_test : bool, default=True
        Attach the catalog's test split when there is one. A test file that cannot be
        found or fetched only warns.
    label_column : int or str, default=-1
        CSV files: position or header name of the label column.
    **generator_kwargs
        Arguments of a bundled generator, e.g. ``n``, ``p``, ``separation``, ``density``,
        ``seed``.

    Returns
    -------
    Dataset
        ``X`` of shape (n, p), ``y`` of shape (n,), read-only and shared through a cache.

    Raises
    ------
    DataError
        For an unknown name, a file that is missing and cannot be downloaded, a malformed
        file (message gives the line), non-finite values, labels outside the mapping, a
        binary problem with one class, or invalid arguments.
    """
    if not isinstance(name_or_path, str | os.PathLike):
        raise DataError(
            f"load_dataset takes a dataset name or a file path, got {type(name_or_path).__name__}"
        )
    name = os.fspath(name_or_path)
    if task is not None and task not in TASKS:
        raise DataError(f"task must be one of {TASKS} (or None for the default), got {task!r}")
    if download is not None and not isinstance(download, bool):
        raise DataError(f"download must be True, False or None, got {download!r}")
    if not isinstance(with_test, bool):
        raise DataError(f"with_test must be True or False, got {with_test!r}")
    if isinstance(label_column, bool) or not isinstance(label_column, int | str):
        raise DataError(f"label_column must be a column position or name, got {label_column!r}")
    if label_map is not None and task == "regression":
        raise DataError("label_map only applies to binary tasks; drop it or use task='binary'")

    if name in _BUNDLED:
        if label_column != -1:
            raise DataError(f"{name} is a bundled set; label_column applies to CSV files only")
        return _load_bundled(name, task, label_map, generator_kwargs)
    if generator_kwargs:
        raise DataError(
            f"{', '.join(sorted(generator_kwargs))}: only the bundled generators "
            f"({', '.join(_BUNDLED)}) take keyword arguments"
        )
    labels = None if label_map is None else _normalize_label_map(label_map)
    entries = catalog()
    if name in entries:
        if label_column != -1:
            raise DataError(f"{name} is a LIBSVM file; label_column applies to CSV files only")
        return _load_catalog(entries[name], labels, task, download, with_test)
    path = Path(name).expanduser()
    if path.is_dir():
        raise DataError(
            f"{path} is a folder; pass a file, or add the folder to {_ENV_DATA} and load a "
            "catalog name"
        )
    if not path.is_file():
        raise _unknown_name(name)
    is_csv = Path(_split_compression(path.name)[0]).suffix.lower() in _CSV_SUFFIXES
    if label_column != -1 and not is_csv:
        raise DataError(f"{path}: label_column applies to CSV files only (name ending .csv)")
    request = _Request(
        name=path.name,
        train=_FileRef.of(path),
        test=None,
        fmt="csv" if is_csv else "libsvm",
        n_features=None,
        zero_based="auto",
        task=task,
        labels=labels,
        label_column=label_column,
        entry=None,
    )
    return _load_request(request)


def _load_catalog(
    entry: CatalogEntry,
    labels: tuple[tuple[Any, float], ...] | None,
    task: str | None,
    download: bool | None,
    with_test: bool,
) -> Dataset:
    allowed = _downloads_allowed(download)
    places = _places()
    folders = [folder for folder, _ in places]
    train = _obtain(entry, entry.file, entry.url, folders, places, allowed)
    test = None
    if with_test and entry.test_file is not None:
        try:
            # Prefer the test file that sits next to the training file.
            test = _obtain(
                entry, entry.test_file, entry.test_url, [train.parent, *folders], places, allowed
            )
        except DataError as exc:
            warnings.warn(
                f"{entry.name}: loading without its test split (with_test=False skips this "
                f"check): {exc}",
                DataWarning,
                stacklevel=3,
            )
    request = _Request(
        name=entry.name,
        train=_FileRef.of(train),
        test=None if test is None else _FileRef.of(test),
        fmt="libsvm",
        n_features=entry.p,
        zero_based=False,
        # A label_map asks for a binary problem even on a regression entry.
        task=task or ("binary" if labels is not None else entry.task),
        labels=labels,
        label_column=-1,
        entry=entry,
    )
    return _load_request(request)


def list_datasets() -> pd.DataFrame:
    """Every catalog and bundled dataset with where it would be loaded from.

    Returns
    -------
    pandas.DataFrame
        Columns ``name``, ``task``, ``n``, ``p`` (official sizes; defaults for
        generators), ``where`` (the file found, ``"not found"`` or ``"bundled"``) and
        ``size_bytes`` (of the training file; missing for the others).
    """
    import pandas as pd

    folders = search_path()
    rows = []
    for name, entry in catalog().items():
        path = _find_file(entry.file, folders)
        rows.append(
            {
                "name": name,
                "task": entry.task,
                "n": entry.n,
                "p": entry.p,
                "where": str(path) if path is not None else "not found",
                "size_bytes": path.stat().st_size if path is not None else None,
            }
        )
    for name, spec in _BUNDLED.items():
        rows.append(
            {
                "name": name,
                "task": spec.task,
                "n": spec.n,
                "p": spec.p,
                "where": "bundled",
                "size_bytes": None,
            }
        )
    frame = pd.DataFrame(rows, columns=["name", "task", "n", "p", "where", "size_bytes"])
    frame["size_bytes"] = frame["size_bytes"].astype("Int64")
    return frame


# ---------------------------------------------------------------------------------------
# Preprocessing (only when asked)


def _derived(ds: Dataset, X: Any, X_test: Any, what: str) -> Dataset:
    return _make_dataset(
        ds.name,
        X,
        ds.y,
        ds.task,
        ds.source,
        f"{ds.description} [{what}]".strip(),
        X_test=X_test,
        y_test=ds.y_test,
        dense=not ds.is_sparse,
    )


def add_intercept(ds: Dataset) -> Dataset:
    """Append a constant-1 feature as the last column (to train and test parts).

    Parameters
    ----------
    ds : Dataset
        Data with ``X`` of shape (n, p).

    Returns
    -------
    Dataset
        ``X`` of shape (n, p + 1) in the same storage (CSR stays CSR).
    """

    def widen(X: Matrix) -> Matrix:
        ones = np.ones((X.shape[0], 1))
        if sp.issparse(X):
            return sp.hstack([X, sp.csr_matrix(ones)], format="csr")
        return np.hstack([X, ones])

    X_test = None if ds.X_test is None else widen(ds.X_test)
    return _derived(ds, widen(ds.X), X_test, "intercept column appended")


def standardize(ds: Dataset) -> Dataset:
    """Scale features to unit variance; dense data are also centred to zero mean.

    The means and standard deviations come from the training part only and are applied
    unchanged to the test part. Sparse data are **not centred** (centring would fill in
    every zero); each column is only divided by its standard deviation. Constant columns
    are left unscaled (scikit-learn's ``StandardScaler`` convention). The targets ``y``
    are never changed.

    Parameters
    ----------
    ds : Dataset
        Data with ``X`` of shape (n, p).

    Returns
    -------
    Dataset
        Same shapes and storage.
    """
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler(with_mean=not ds.is_sparse).fit(ds.X)
    X_test = None if ds.X_test is None else scaler.transform(ds.X_test)
    what = "scaled to unit variance (train statistics, not centred: sparse)"
    if not ds.is_sparse:
        what = "standardized with train mean and standard deviation"
    return _derived(ds, scaler.transform(ds.X), X_test, what)


def normalize_rows(ds: Dataset) -> Dataset:
    """Scale every row (train and test) to unit Euclidean norm; all-zero rows stay zero.

    Parameters
    ----------
    ds : Dataset
        Data with ``X`` of shape (n, p).

    Returns
    -------
    Dataset
        Same shapes and storage.
    """
    from sklearn.preprocessing import normalize

    X_test = None if ds.X_test is None else normalize(ds.X_test, norm="l2")
    return _derived(ds, normalize(ds.X, norm="l2"), X_test, "rows scaled to unit l2 norm")


def train_test_split(ds: Dataset, test_size: float | int = 0.25, seed: int = 0) -> Dataset:
    """Split the rows into a training and a test part, reproducibly.

    Binary sets are split stratified, so both parts keep the class proportions.

    Parameters
    ----------
    ds : Dataset
        Data without a test split, ``X`` of shape (n, p).
    test_size : float in (0, 1) or int in [1, n - 1], default=0.25
        Fraction or number of rows that go to the test part.
    seed : int, default=0
        Seed of the shuffle; the same seed gives the same split.

    Returns
    -------
    Dataset
        ``X`` of shape (n - n_test, p) and ``X_test`` of shape (n_test, p).

    Raises
    ------
    DataError
        If ``ds`` already has a test split or the sizes do not allow a split.
    """
    from sklearn.model_selection import train_test_split as sk_split

    if ds.X_test is not None:
        raise DataError(
            f"{ds.name} already has a test split ({ds.n_test} rows); load it with "
            "with_test=False to make your own split"
        )
    if isinstance(test_size, bool) or not isinstance(test_size, int | float | np.integer):
        raise DataError(f"test_size must be a fraction or a row count, got {test_size!r}")
    if isinstance(test_size, int | np.integer):
        if not 1 <= test_size <= ds.n - 1:
            raise DataError(f"test_size={test_size} rows must be between 1 and n - 1 = {ds.n - 1}")
    elif not 0.0 < test_size < 1.0:
        raise DataError(f"test_size={test_size} must be a fraction strictly between 0 and 1")
    seed = _int_arg("seed", seed, 0)
    stratify = ds.y if ds.task == "binary" else None
    try:
        X_tr, X_te, y_tr, y_te = sk_split(
            ds.X, ds.y, test_size=test_size, random_state=seed, stratify=stratify
        )
    except ValueError as exc:
        raise DataError(
            f"{ds.name}: cannot split {ds.n} rows with test_size={test_size} "
            f"({' '.join(str(exc).split())}); use a larger data set or another test_size"
        ) from None
    return _make_dataset(
        ds.name,
        X_tr,
        y_tr,
        ds.task,
        ds.source,
        f"{ds.description} [split: test_size={test_size}, seed={seed}]".strip(),
        X_test=X_te,
        y_test=y_te,
        dense=not ds.is_sparse,
    )


def preprocess(
    ds: Dataset,
    *,
    intercept: bool = False,
    standardize: bool = False,
    normalize: bool = False,
    test_size: float | int | None = None,
    seed: int = 0,
) -> Dataset:
    """Apply the requested steps in a fixed order: split, standardize, normalize, intercept.

    Splitting first keeps test rows out of the standardization statistics; the intercept
    comes last so that its column stays exactly 1.

    Parameters
    ----------
    ds : Dataset
        Data with ``X`` of shape (n, p).
    intercept : bool, default=False
        Append a constant-1 column (:func:`add_intercept`).
    standardize : bool, default=False
        :func:`standardize` with training statistics.
    normalize : bool, default=False
        :func:`normalize_rows`.
    test_size : float or int, optional
        Make a seeded split (:func:`train_test_split`); ``None`` keeps the data as is.
    seed : int, default=0
        Seed of the split.

    Returns
    -------
    Dataset
        The processed data; ``ds`` itself when no step is requested.
    """
    for flag, value in (
        ("intercept", intercept),
        ("standardize", standardize),
        ("normalize", normalize),
    ):
        if not isinstance(value, bool):
            raise DataError(f"preprocess: {flag} must be True or False, got {value!r}")
    out = ds
    if test_size is not None:
        out = train_test_split(out, test_size=test_size, seed=seed)
    if standardize:
        out = _standardize(out)
    if normalize:
        out = normalize_rows(out)
    if intercept:
        out = add_intercept(out)
    return out


# ``preprocess`` has a parameter called ``standardize``; keep a handle on the function.
_standardize = standardize
