"""Where data comes from: the dataset catalog and the folders searched for its files.

**Catalog names** (``datasets/catalog.toml``: ``a1a``, ``ijcnn1``, ``cadata``, ...) are
looked for, in this order, in the folders of ``ERMVIZ_DATA`` (``os.pathsep``-separated), in
the per-user cache (``ERMVIZ_CACHE``, default ``pooch.os_cache("ermviz")``) and in the
repository's ``datasets/`` folder (installed from the wheel: its copy ``ermviz/_bundled``,
:data:`REPO_DATASETS`). Each file name is tried plain and as ``.bz2``, ``.xz``
and ``.gz``. (A LIBSVM file missing everywhere is downloaded into the cache: see
:mod:`ermviz.data.cache`.)
"""

from __future__ import annotations

import dataclasses
import functools
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ermviz.data.dataset import TASKS
from ermviz.errors import DataError

#: The checkout's ``datasets/`` folder (the source of the bundled data; absent once
#: installed from the wheel).
CHECKOUT_DATASETS: Path = Path(__file__).resolve().parent.parent.parent / "datasets"

#: The copy of ``datasets/`` the wheel ships inside the package (``pyproject.toml`` maps
#: the repository's folder to ``ermviz/_bundled``).
PACKAGE_DATASETS: Path = Path(__file__).resolve().parent.parent / "_bundled"


def _bundled_folder() -> Path:
    """The checkout's ``datasets/`` when run from a checkout (editable install included),
    else the package's bundled copy."""
    if (CHECKOUT_DATASETS / "catalog.toml").is_file():
        return CHECKOUT_DATASETS
    return PACKAGE_DATASETS


#: The folder of the bundled data: holds ``catalog.toml``, the shipped data files and
#: ``sweeps/``, and is the last place searched for data files. The repository's
#: ``datasets/`` from a checkout, the package's copy when installed from the wheel.
REPO_DATASETS: Path = _bundled_folder()

#: The dataset catalog (always the bundled one, wherever data files are searched).
CATALOG_PATH: Path = REPO_DATASETS / "catalog.toml"

_ENV_DATA = "ERMVIZ_DATA"
_ENV_CACHE = "ERMVIZ_CACHE"
_COMPRESSIONS = (".bz2", ".xz", ".gz")


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
            f"the dataset catalog {path} is missing; reinstall ermviz (its wheel ships it) "
            "or run it from a checkout (pip install -e .)"
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
    if raw:
        return Path(raw).expanduser()
    # pooch.os_cache is this call; importing pooch itself took 0.1 s of every run.
    import platformdirs

    return Path(platformdirs.user_cache_dir("ermviz"))


#: Why each kind of folder is searched, as :func:`search_places` names it.
PLACE_KINDS = {
    _ENV_DATA: f"from {_ENV_DATA}",
    "cache": f"the download cache: {_ENV_CACHE}, else the per-user default",
    "repository": (
        "the repository's datasets/ folder"
        if REPO_DATASETS == CHECKOUT_DATASETS
        else "the data sets bundled in the installed package"
    ),
}


def search_places() -> list[tuple[Path, str]]:
    """The folders searched for catalog files, in order, each with the reason it is
    searched: ``"ERMVIZ_DATA"``, ``"cache"`` or ``"repository"`` (see :data:`PLACE_KINDS`).
    Folders that do not exist are listed too (and skipped when searching)."""
    return _places()


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
