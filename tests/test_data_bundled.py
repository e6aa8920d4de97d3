"""The catalog files shipped in the repository's datasets/ folder (issue 32: every lesson
works offline on a fresh install).

Each shipped file belongs to a catalog entry, loads with no data folder and no network
with the entry's row and feature counts and a checked sha256 (no DataWarning), and is
listed with its hashes in datasets/README.md; the shipped files stay small. Independent
references: the copies in ../shared/datasets (the shipped a1a and banana decompress to
them byte for byte, and ijcnn1-20k is the README's recipe applied to the shared ijcnn1).
"""

from __future__ import annotations

import bz2
import hashlib
import lzma
import warnings
from pathlib import Path

import numpy as np
import pytest

from ermviz import data
from ermviz.data.sources import REPO_DATASETS

#: The files the lessons need, by catalog name (test splits included).
SHIPPED = {
    "a1a": ("a1a.bz2", "a1a.t.bz2"),
    "banana": ("banana.bz2",),
    "ijcnn1-20k": ("ijcnn1-20k.xz",),
}
#: The budget the issue set for what ships with the product.
MAX_BYTES = 1_500_000


def _decompressed(path: Path) -> bytes:
    opener = {".bz2": bz2.open, ".xz": lzma.open}[path.suffix]
    with opener(path, "rb") as fh:
        return fh.read()


def _shipped_files() -> list[Path]:
    return sorted(
        p
        for p in REPO_DATASETS.iterdir()
        if p.is_file() and p.name not in ("catalog.toml", "README.md")
    )


@pytest.fixture
def fresh_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ERMVIZ_DATA", raising=False)
    monkeypatch.setenv("ERMVIZ_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("ERMVIZ_OFFLINE", "1")


def test_every_shipped_file_is_a_catalog_file_with_a_checked_hash() -> None:
    files = _shipped_files()
    assert [p.name for p in files] == sorted(f for group in SHIPPED.values() for f in group)
    assert sum(p.stat().st_size for p in files) < MAX_BYTES
    entries = data.catalog()
    readme = (REPO_DATASETS / "README.md").read_text()
    for name, names in SHIPPED.items():
        entry = entries[name]
        for filename in names:
            path = REPO_DATASETS / filename
            is_test = entry.test_file is not None and filename.startswith(entry.test_file)
            known = entry.test_known_sha256 if is_test else entry.known_sha256
            raw = hashlib.sha256(_decompressed(path)).hexdigest()
            assert raw in known, (filename, raw)
            stored = hashlib.sha256(path.read_bytes()).hexdigest()
            assert stored in readme and raw in readme, filename
            assert f"`{filename}`" in readme


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_a_shipped_dataset_loads_offline_with_no_data_folder(fresh_install, name) -> None:
    entry = data.catalog()[name]
    path = data.locate(name)
    assert path is not None and path.parent == REPO_DATASETS
    data.clear_cache()
    with warnings.catch_warnings():
        warnings.simplefilter("error", data.DataWarning)  # row count and sha256 both known
        ds = data.load_dataset(name)
    assert ds.X.shape == (entry.n, entry.p)
    assert set(np.unique(ds.y)) == {-1.0, 1.0}
    if entry.test_file is not None:
        assert ds.X_test is not None and ds.X_test.shape == (entry.n_test, entry.p)
    else:
        assert ds.X_test is None
    data.clear_cache()


def test_the_ijcnn1_sample_is_its_documented_recipe(shared_data: Path) -> None:
    lines = _decompressed(shared_data / "ijcnn1.bz2").splitlines(keepends=True)
    assert len(lines) == 49990
    keep = np.sort(np.random.default_rng(0).choice(len(lines), 20000, replace=False))
    expected = b"".join(lines[i] for i in keep)
    assert _decompressed(REPO_DATASETS / "ijcnn1-20k.xz") == expected
    positives = sum(lines[i].startswith(b"1") for i in keep)
    assert positives == 1913  # as the catalog's description says
    assert "1 913 positives" in data.catalog()["ijcnn1-20k"].description


@pytest.mark.parametrize("filename", ["a1a.bz2", "a1a.t.bz2", "banana.bz2"])
def test_shipped_files_are_the_shared_copies(shared_data: Path, filename: str) -> None:
    original = (shared_data / filename.removesuffix(".bz2")).read_bytes()
    assert _decompressed(REPO_DATASETS / filename) == original
