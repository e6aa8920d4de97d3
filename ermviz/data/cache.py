"""Downloads (pooch) and the caches of loaded files: in memory and parsed on disk.

A LIBSVM catalog file missing from every search folder is downloaded into the per-user
cache with pooch, unless ``download=False`` or ``ERMVIZ_OFFLINE=1``.

Loaded datasets are cached in memory (key: resolved path, modification time, size and the
options), so the same :class:`~ermviz.data.Dataset` object comes back on every call; parsed
catalog files are also kept on disk (``<cache>/parsed/*.npz``). Problems that do not stop
a load (row count differing from the catalog, a file hash not among the checked copies)
are reported as :class:`~ermviz.data.DataWarning` on the first load.
"""

from __future__ import annotations

import bz2
import functools
import gzip
import hashlib
import lzma
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
import scipy.sparse as sp

from ermviz.data.dataset import Dataset, DataWarning, _make_dataset, _wants_dense
from ermviz.data.generators import _bundled_cached
from ermviz.data.labels import _auto_mapping, _map_labels, _single_class
from ermviz.data.readers import _check_finite, _Parsed, _read_csv, _read_libsvm
from ermviz.data.sources import (
    _ENV_DATA,
    CatalogEntry,
    _describe_places,
    _find_file,
    _parse_catalog,
    _split_compression,
    cache_dir,
)
from ermviz.errors import DataError

_ENV_OFFLINE = "ERMVIZ_OFFLINE"


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
        import pooch  # only a download needs it (a tenth of a second to import)

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
