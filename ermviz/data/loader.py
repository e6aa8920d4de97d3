"""The public loader: a catalog name, a bundled name or a path becomes a Dataset.

Data are returned exactly as read, with binary labels mapped to -1/+1 by the catalog's
explicit mapping; nothing is scaled or centred unless asked
(:func:`ermviz.data.preprocess`). A catalog test split that cannot be found or fetched
only warns (:class:`~ermviz.data.DataWarning`). Paths may name the user's own LIBSVM or
CSV/TSV files.
"""

from __future__ import annotations

import difflib
import os
import stat
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ermviz.data.cache import _downloads_allowed, _FileRef, _load_request, _obtain, _Request
from ermviz.data.dataset import TASKS, Dataset, DataWarning
from ermviz.data.generators import _BUNDLED, _load_bundled
from ermviz.data.labels import _normalize_label_map
from ermviz.data.readers import _CSV_SUFFIXES
from ermviz.data.sources import (
    _ENV_DATA,
    CATALOG_PATH,
    CatalogEntry,
    _find_file,
    _places,
    _split_compression,
    catalog,
    search_path,
)
from ermviz.errors import DataError

if TYPE_CHECKING:
    import pandas as pd


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
    path = _user_path(name)
    if _file_kind(path) == "file":
        return path.resolve()
    raise _unknown_name(name)


def _user_path(name: str) -> Path:
    """``name`` as a path, ``~`` expanded (left as is for a ``~user`` with no home, or a
    user name no system takes: a NUL byte, a lone surrogate)."""
    try:
        return Path(name).expanduser()
    except (RuntimeError, ValueError):
        return Path(name)


def _file_kind(path: Path) -> str:
    """ "file", "folder", "other" or "none" (also for names no file can have: too long,
    a NUL byte, characters the file system cannot encode)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return "none"
    return "file" if stat.S_ISREG(mode) else "folder" if stat.S_ISDIR(mode) else "other"


def _unknown_name(name: str) -> DataError:
    known = [*catalog(), *_BUNDLED]
    close = difflib.get_close_matches(name, known, n=4, cutoff=0.6)
    close += [k for k in known if k.lower() == name.lower() and k not in close]
    hint = f"did you mean {', '.join(repr(c) for c in close)}? " if close else ""
    where = os.path.abspath(_user_path(name))  # no file-system access
    where = "".join(c if c.isprintable() else repr(c)[1:-1] for c in where[:300])
    shown = f"{name[:200]!r}..." if len(name) > 200 else repr(name)
    return DataError(
        f"unknown dataset {shown}: not in the catalog ({CATALOG_PATH}), "
        f"not a bundled set, and there is no file {where}; {hint}"
        "list_datasets() shows every name; to load your own data pass the path of a LIBSVM "
        "file or of a CSV file (name ending .csv, label in the last column)"
    )


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
    path = _user_path(name)
    kind = _file_kind(path)
    if kind == "folder":
        raise DataError(
            f"{path} is a folder; pass a file, or add the folder to {_ENV_DATA} and load a "
            "catalog name"
        )
    if kind == "other":
        raise DataError(
            f"{path} is not a regular file (a device, a pipe or a socket); pass a LIBSVM or "
            "CSV file"
        )
    if kind == "none":
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
