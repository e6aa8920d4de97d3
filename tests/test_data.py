"""Tests of ermviz.data: catalog, lookup, parsing, bundled sets and preprocessing.

Counts on real files are the ones listed in ../shared/datasets/SOURCES.md (counted on the
stored files there), not numbers produced by the code under test.
"""

from __future__ import annotations

import hashlib
import lzma
import shutil
from pathlib import Path

import numpy as np
import pooch
import pytest
import scipy.sparse as sp
from sklearn.preprocessing import StandardScaler

from ermviz import data
from ermviz.data import Dataset, DataWarning, load_dataset
from ermviz.errors import DataError

LIBSVM_BINARY = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Path]:
    """Empty data, cache and repository folders; nothing else is searched."""
    dirs = {key: tmp_path / key for key in ("data", "cache", "repo")}
    for folder in dirs.values():
        folder.mkdir()
    monkeypatch.setenv("ERMVIZ_DATA", str(dirs["data"]))
    monkeypatch.setenv("ERMVIZ_CACHE", str(dirs["cache"]))
    monkeypatch.setattr("ermviz.data.sources.REPO_DATASETS", dirs["repo"])
    return dirs


# ---------------------------------------------------------------------------------------
# Catalog


def test_catalog_has_required_entries_with_official_sizes() -> None:
    entries = data.catalog()
    required = (
        "a1a a2a a8a a9a w1a w2a w7a w8a svmguide3 phishing ijcnn1 covtype breast-cancer "
        "breast-cancer_scale skin_nonskin banana waveform splice cadata kin8nm house_8L "
        "abalone diabetes diabetes_scale liver-disorders"
    ).split()
    assert set(required) <= set(entries)
    assert (entries["a1a"].n, entries["a1a"].p, entries["a1a"].n_test) == (1605, 123, 30956)
    assert entries["a2a"].p == 123
    assert {entries[w].p for w in ("w1a", "w2a", "w7a", "w8a")} == {300}
    assert (entries["covtype"].n, entries["covtype"].p) == (581012, 54)
    assert entries["ijcnn1"].file == "ijcnn1.bz2" and entries["ijcnn1"].test_file == "ijcnn1.t.bz2"
    assert entries["abalone"].file == "abalone_scale"
    assert entries["cadata"].url.endswith("/regression/cadata")
    for name in ("kin8nm", "house_8L", "banana", "waveform"):
        assert not entries[name].downloadable and entries[name].url is None
    assert "openml.org/d/189" in entries["kin8nm"].page


@pytest.mark.parametrize(
    ("name", "mapping"),
    [
        ("phishing", {0.0: -1.0, 1.0: 1.0}),
        ("breast-cancer", {2.0: 1.0, 4.0: -1.0}),
        ("breast-cancer_scale", {2.0: 1.0, 4.0: -1.0}),
        ("skin_nonskin", {1.0: -1.0, 2.0: 1.0}),
        ("liver-disorders", {0.0: -1.0, 1.0: 1.0}),
        ("covtype", {1.0: -1.0, 2.0: 1.0}),
        ("a1a", {-1.0: -1.0, 1.0: 1.0}),
        ("w8a", {-1.0: -1.0, 1.0: 1.0}),
        ("ijcnn1", {-1.0: -1.0, 1.0: 1.0}),
        ("svmguide3", {-1.0: -1.0, 1.0: 1.0}),
        ("banana", {-1.0: -1.0, 1.0: 1.0}),
    ],
)
def test_catalog_label_mappings(name: str, mapping: dict[float, float]) -> None:
    assert data.catalog()[name].label_map == mapping


def test_regression_entries_have_no_mapping() -> None:
    for entry in data.catalog().values():
        assert (entry.task == "regression") == (entry.label_map == {})


def test_catalog_hashes_match_the_shared_copies(shared_data: Path) -> None:
    checked = 0
    for entry in data.catalog().values():
        pairs = [(entry.file, entry.known_sha256), (entry.test_file, entry.test_known_sha256)]
        for filename, known in pairs:
            path = data._find_file(filename, [shared_data]) if filename else None
            if path is None:
                continue
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            assert digest in known, f"{entry.name}: hash {digest} of {path} not recorded"
            checked += 1
    assert checked == 31  # every data file listed in SOURCES.md


# ---------------------------------------------------------------------------------------
# Real files (facts from SOURCES.md)


def test_a1a_loads_as_csr_with_official_shape(shared_data: Path) -> None:
    ds = load_dataset("a1a")
    assert isinstance(ds.X, sp.csr_matrix) and ds.is_sparse
    assert ds.X.shape == (1605, 123) and (ds.n, ds.p) == (1605, 123)
    assert ds.X.dtype == np.float64 and ds.X.has_canonical_format
    assert ds.y.dtype == np.float64
    assert int((ds.y == 1).sum()) == 395 and int((ds.y == -1).sum()) == 1210
    assert ds.task == "binary" and ds.source == str((shared_data / "a1a").resolve())
    # a1a uses indices up to 119 although it declares 123 features.
    assert ds.X.indices.max() == 118


def test_a1a_test_split(shared_data: Path) -> None:
    ds = load_dataset("a1a")
    assert ds.X_test.shape == (30956, 123)
    assert int((ds.y_test == 1).sum()) == 7446 and int((ds.y_test == -1).sum()) == 23510
    assert load_dataset("a1a", with_test=False).X_test is None


def test_a1a_loads_and_is_cached(shared_data: Path) -> None:
    # No wall-clock bound (a loaded machine took 1.5 s): the second load is the same object.
    data.clear_cache()
    first = load_dataset("a1a")
    assert first.X.shape == (1605, 123) and first.X_test.shape == (30956, 123)
    assert load_dataset("a1a") is first


def test_loaded_arrays_are_read_only(shared_data: Path) -> None:
    ds = load_dataset("a1a")
    for array in (ds.X.data, ds.X.indices, ds.X.indptr, ds.y, ds.y_test):
        assert not array.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        ds.y[0] = 5.0
    dense = load_dataset("breast-cancer")
    with pytest.raises(ValueError, match="read-only"):
        dense.X[0, 0] = 1.0


def test_phishing_labels_mapped(shared_data: Path) -> None:
    ds = load_dataset("phishing")
    assert int((ds.y == -1).sum()) == 4898 and int((ds.y == 1).sum()) == 6157
    assert ds.X.shape == (11055, 68)
    assert ds.is_sparse  # density 0.44 <= 0.5 stays sparse


def test_breast_cancer_benign_is_positive(shared_data: Path) -> None:
    ds = load_dataset("breast-cancer")
    assert int((ds.y == 1).sum()) == 444 and int((ds.y == -1).sum()) == 239
    # Fully dense file -> dense C-contiguous array.
    assert isinstance(ds.X, np.ndarray) and ds.X.flags.c_contiguous and ds.X.shape == (683, 10)
    first_label = (shared_data / "breast-cancer").read_text().split(None, 1)[0]
    assert float(first_label) in (2.0, 4.0)
    assert ds.y[0] == (1.0 if float(first_label) == 2.0 else -1.0)


def test_skin_nonskin_from_bz2(shared_data: Path) -> None:
    ds = load_dataset("skin_nonskin")
    assert ds.source.endswith("skin_nonskin.bz2")
    assert ds.X.shape == (245057, 3)
    assert int((ds.y == 1).sum()) == 194198 and int((ds.y == -1).sum()) == 50859
    assert not ds.is_sparse


def test_ijcnn1_shape_and_positives(shared_data: Path) -> None:
    ds = load_dataset("ijcnn1", with_test=False)
    assert ds.X.shape == (49990, 22)
    assert int((ds.y == 1).sum()) == 4853
    assert not ds.is_sparse  # density about 0.59 > 0.5


def test_cadata_regression(shared_data: Path) -> None:
    ds = load_dataset("cadata")
    assert ds.task == "regression" and ds.X.shape == (20640, 8)
    assert ds.y.min() == 14999.0 and ds.y.max() == 500001.0


def test_list_datasets_marks_missing_and_bundled(shared_data: Path) -> None:
    table = data.list_datasets().set_index("name")
    assert list(table.columns) == ["task", "n", "p", "where", "size_bytes"]
    assert table.loc["w2a", "where"] == "not found"
    assert table.loc["covtype", "where"] == "not found"
    assert table.loc["a1a", "where"] == str(shared_data / "a1a")
    assert table.loc["a1a", "size_bytes"] == (shared_data / "a1a").stat().st_size
    assert table.loc["skin_nonskin", "where"].endswith("skin_nonskin.bz2")
    for name in data.bundled_names():
        assert table.loc[name, "where"] == "bundled"
        ds = load_dataset(name)
        assert (ds.n, ds.p) == (table.loc[name, "n"], table.loc[name, "p"])


# ---------------------------------------------------------------------------------------
# Compression, lookup order, downloads


def test_xz_copy_loads_like_plain(shared_data: Path, tmp_path: Path, monkeypatch) -> None:
    plain = load_dataset("a1a", with_test=False)
    folder = tmp_path / "xz"
    folder.mkdir()
    with lzma.open(folder / "a1a.xz", "wb") as fh:
        fh.write((shared_data / "a1a").read_bytes())
    monkeypatch.setenv("ERMVIZ_DATA", str(folder))
    ds = load_dataset("a1a", with_test=False)
    assert ds.source == str((folder / "a1a.xz").resolve())
    assert ds.X.shape == plain.X.shape and (ds.X != plain.X).nnz == 0
    np.testing.assert_array_equal(ds.y, plain.y)
    by_path = load_dataset(folder / "a1a.xz")
    assert by_path.n == 1605 and by_path.p == 119  # a path takes p from the file


@pytest.mark.filterwarnings("ignore:.*has sha256:ermviz.data.DataWarning")
def test_lookup_order_data_then_cache_then_repo(isolated: dict[str, Path]) -> None:
    rows = {"data": 3, "cache": 4, "repo": 5}
    for key, count in rows.items():
        lines = [f"{'+1' if i % 2 else '-1'} {i + 1}:1\n" for i in range(count)]
        write(isolated[key] / "a1a", "".join(lines))
    assert data.search_path() == [isolated["data"], isolated["cache"], isolated["repo"]]
    for key in ("data", "cache", "repo"):
        assert data.locate("a1a") == isolated[key] / "a1a"
        with pytest.warns(DataWarning, match="rows but the catalog says 1605"):
            ds = load_dataset("a1a", with_test=False)
        assert ds.n == rows[key] and ds.source == str((isolated[key] / "a1a").resolve())
        (isolated[key] / "a1a").unlink()
    assert data.locate("a1a") is None


def test_search_path_splits_on_pathsep(monkeypatch, tmp_path: Path) -> None:
    import os

    monkeypatch.setenv("ERMVIZ_DATA", os.pathsep.join([str(tmp_path / "b"), str(tmp_path / "a")]))
    monkeypatch.setenv("ERMVIZ_CACHE", str(tmp_path / "c"))
    assert data.search_path() == [
        tmp_path / "b",
        tmp_path / "a",
        tmp_path / "c",
        data.REPO_DATASETS,
    ]


def test_offline_missing_file_lists_places_and_url(isolated, monkeypatch) -> None:
    monkeypatch.setenv("ERMVIZ_OFFLINE", "1")
    with pytest.raises(DataError) as info:
        load_dataset("a1a")
    message = str(info.value)
    assert "\n" not in message
    for folder in isolated.values():
        assert str(folder) in message
    assert LIBSVM_BINARY + "a1a" in message and "ERMVIZ_OFFLINE=1" in message
    assert data.locate("a1a") is None


def test_download_false_beats_environment(isolated, monkeypatch) -> None:
    monkeypatch.setenv("ERMVIZ_OFFLINE", "0")

    def never(*args, **kwargs):
        raise AssertionError("download=False must not download")

    monkeypatch.setattr(pooch, "retrieve", never)
    with pytest.raises(DataError, match="download=False"):
        load_dataset("w2a", download=False)


def test_network_failure_is_a_one_line_data_error(isolated, monkeypatch) -> None:
    monkeypatch.setenv("ERMVIZ_OFFLINE", "0")
    calls = []

    def unreachable(url, **kwargs):
        calls.append((url, kwargs))
        raise ConnectionError("Failed to establish a new connection: network unreachable")

    monkeypatch.setattr(pooch, "retrieve", unreachable)
    with pytest.raises(DataError) as info:
        load_dataset("a1a")
    message = str(info.value)
    assert "\n" not in message
    assert LIBSVM_BINARY + "a1a" in message and "ConnectionError" in message
    assert str(isolated["data"]) in message and str(isolated["cache"]) in message
    url, kwargs = calls[0]
    assert url == LIBSVM_BINARY + "a1a"
    assert kwargs["fname"] == "a1a" and Path(kwargs["path"]) == isolated["cache"]
    assert kwargs["progressbar"] is True


def test_successful_download_lands_in_cache(isolated, monkeypatch, shared_data) -> None:
    # shared_data re-points ERMVIZ_DATA; put it back on the empty folder.
    monkeypatch.setenv("ERMVIZ_DATA", str(isolated["data"]))
    monkeypatch.setenv("ERMVIZ_CACHE", str(isolated["cache"]))
    monkeypatch.setenv("ERMVIZ_OFFLINE", "0")

    def fake_retrieve(url, known_hash=None, fname=None, path=None, progressbar=False):
        target = Path(path) / fname
        shutil.copy(shared_data / Path(url).name, target)
        return str(target)

    monkeypatch.setattr(pooch, "retrieve", fake_retrieve)
    ds = load_dataset("a1a")
    assert ds.source == str((isolated["cache"] / "a1a").resolve())
    assert ds.n == 1605 and ds.n_test == 30956
    assert data.locate("a1a") == isolated["cache"] / "a1a"


def test_test_split_that_cannot_be_fetched_only_warns(isolated, monkeypatch, shared_data):
    monkeypatch.setenv("ERMVIZ_DATA", str(isolated["data"]))
    shutil.copy(shared_data / "a1a", isolated["data"] / "a1a")
    with pytest.warns(DataWarning, match="without its test split"):
        ds = load_dataset("a1a")
    assert ds.X_test is None and ds.n == 1605


def test_not_downloadable_entry_points_to_its_page(isolated) -> None:
    with pytest.raises(DataError, match=r"openml\.org/d/189.*convert it to LIBSVM"):
        load_dataset("kin8nm")


def test_bad_offline_setting(monkeypatch) -> None:
    monkeypatch.setenv("ERMVIZ_OFFLINE", "maybe")
    with pytest.raises(DataError, match="ERMVIZ_OFFLINE='maybe'"):
        load_dataset("a1a")


def test_sha256_mismatch_only_warns(isolated, shared_data, monkeypatch) -> None:
    monkeypatch.setenv("ERMVIZ_DATA", str(isolated["data"]))
    text = (shared_data / "a1a").read_text()
    write(isolated["data"] / "a1a", "# an extra comment changes the bytes, not the data\n" + text)
    with pytest.warns(DataWarning, match="sha256"):
        ds = load_dataset("a1a", with_test=False)
    assert ds.n == 1605 and int((ds.y == 1).sum()) == 395


def test_unknown_name_suggests_close_matches() -> None:
    with pytest.raises(DataError, match=r"did you mean 'a1a'.*LIBSVM file or of a CSV file"):
        load_dataset("a1b")
    with pytest.raises(DataError, match="unknown dataset"):
        data.locate("no-such-set")


# ---------------------------------------------------------------------------------------
# Malformed files


@pytest.mark.parametrize(
    ("line3", "problem"),
    [
        ("garbage here", "label 'garbage' is not a number"),
        ("+1 1:1 2:abc", "value 'abc' of feature 2 is not a number"),
        ("+1 3:1 2:1", "must increase"),
        ("+1 1:1 2", "is not of the form index:value"),
        ("+1 x:1", "is not an integer"),
    ],
)
def test_malformed_line_is_reported(tmp_path: Path, line3: str, problem: str) -> None:
    path = write(tmp_path / "bad.svm", f"+1 1:0.5 2:1\n-1 2:0.25\n{line3}\n-1 1:2\n")
    with pytest.raises(DataError) as info:
        load_dataset(str(path))
    message = str(info.value)
    assert f"{path.resolve()} line 3:" in message and problem in message


def test_index_above_catalog_p_is_an_error(isolated) -> None:
    write(isolated["data"] / "a1a", "+1 1:1\n-1 130:1\n")
    with pytest.raises(DataError, match=r"line 2: feature index 130 exceeds p = 123"):
        load_dataset("a1a", with_test=False)


def test_index_zero_in_catalog_file(isolated) -> None:
    write(isolated["data"] / "a1a", "+1 1:1\n-1 2:1\n+1 0:1\n")
    with pytest.raises(DataError, match=r"line 3: feature index 0 .*start at 1"):
        load_dataset("a1a", with_test=False)


def test_nan_value_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "nan.svm", "+1 1:1\n# comment line\n-1 1:2\n+1 1:3 2:nan\n-1 2:1\n")
    with pytest.raises(DataError, match=r"line 4: feature 2 is nan"):
        load_dataset(path)


def test_infinite_label_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "inf.svm", "1.5 1:1\n2.5 1:2\ninf 1:3\n")
    with pytest.raises(DataError, match=r"line 3: label inf is not finite"):
        load_dataset(path, task="regression")


@pytest.mark.filterwarnings("ignore:.*has sha256:ermviz.data.DataWarning")
def test_single_class_catalog_file(isolated) -> None:
    write(isolated["data"] / "a1a", "+1 1:1\n+1 2:1\n+1 3:1\n")
    with (
        pytest.warns(DataWarning),
        pytest.raises(DataError, match=r"has only label \+1; a binary problem needs both"),
    ):
        load_dataset("a1a", with_test=False)


def test_single_class_user_file(tmp_path: Path) -> None:
    path = write(tmp_path / "one.svm", "3 1:1\n3 2:1\n")
    with pytest.raises(DataError, match="needs both classes"):
        load_dataset(path)
    with pytest.raises(DataError, match="needs both classes"):
        load_dataset(path, task="binary")


@pytest.mark.filterwarnings("ignore:.*has sha256:ermviz.data.DataWarning")
def test_label_outside_mapping(isolated) -> None:
    write(isolated["data"] / "phishing", "1 1:1\n3 2:1\n0 3:1\n")
    with pytest.warns(DataWarning), pytest.raises(DataError) as info:
        load_dataset("phishing")
    message = str(info.value)
    assert "line 2: label 3 is not in the label mapping" in message
    assert "{0: -1, +1: +1}" in message and "label_map" in message


def test_empty_file(tmp_path: Path) -> None:
    path = write(tmp_path / "empty.svm", "# nothing\n")
    with pytest.raises(DataError, match="no data lines"):
        load_dataset(path)


# ---------------------------------------------------------------------------------------
# Users' own files


def test_user_libsvm_labels_1_2_larger_is_positive(tmp_path: Path) -> None:
    path = write(tmp_path / "mine.txt", "1 1:1 3:2\n2 2:1\n2 1:3\n1 3:1\n2 2:2\n")
    ds = load_dataset(path)
    assert ds.task == "binary" and ds.p == 3 and ds.n == 5
    np.testing.assert_array_equal(ds.y, [-1, 1, 1, -1, 1])
    flipped = load_dataset(path, label_map={1: 1, 2: -1})
    np.testing.assert_array_equal(flipped.y, [1, -1, -1, 1, -1])


def test_user_file_with_many_labels_is_regression(tmp_path: Path) -> None:
    path = write(tmp_path / "reg.txt", "0.5 1:1\n1.5 1:2\n-2 2:1\n")
    ds = load_dataset(path)
    assert ds.task == "regression"
    np.testing.assert_array_equal(ds.y, [0.5, 1.5, -2.0])
    with pytest.raises(DataError, match="3 distinct labels"):
        load_dataset(path, task="binary")


def test_csv_with_header(tmp_path: Path) -> None:
    path = write(tmp_path / "points.csv", "x1,x2,label\n1.0,2.0,0\n3,4,1\n5,6,1\n0,0,0\n")
    ds = load_dataset(path)
    assert isinstance(ds.X, np.ndarray) and ds.X.shape == (4, 2)
    np.testing.assert_array_equal(ds.X, [[1, 2], [3, 4], [5, 6], [0, 0]])
    np.testing.assert_array_equal(ds.y, [-1, 1, 1, -1])
    by_name = load_dataset(path, label_column="x1", task="regression")
    np.testing.assert_array_equal(by_name.y, [1, 3, 5, 0])
    np.testing.assert_array_equal(by_name.X[:, 1], [0, 1, 1, 0])


def test_csv_without_header_and_text_labels(tmp_path: Path) -> None:
    plain = write(tmp_path / "plain.csv", "1,2,5\n3,4,7\n")
    ds = load_dataset(plain)
    np.testing.assert_array_equal(ds.X, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(ds.y, [-1, 1])
    text = write(tmp_path / "text.csv", "a,b,diagnosis\n1,2,M\n3,4,B\n5,6,B\n")
    with pytest.raises(DataError, match="labels are text"):
        load_dataset(text)
    ds = load_dataset(text, label_map={"B": 1, "M": -1})
    np.testing.assert_array_equal(ds.y, [-1, 1, 1])
    # No header, text labels: the first line is data, not a header.
    bare = write(tmp_path / "bare.csv", "1,2,M\n3,4,B\n")
    ds = load_dataset(bare, label_map={"B": 1, "M": -1})
    np.testing.assert_array_equal(ds.X, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(ds.y, [-1, 1])


def test_csv_bad_cell_and_missing_value(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.csv", "a,b,y\n1,2,0\n3,oops,1\n")
    with pytest.raises(DataError, match=r"line 3: column 'b' holds 'oops'"):
        load_dataset(bad)
    missing = write(tmp_path / "missing.csv", "a,b,y\n1,2,0\n3,4,1\n5,,1\n")
    with pytest.raises(DataError, match=r"line 4: column 'b' is empty or NaN"):
        load_dataset(missing)
    with pytest.raises(DataError, match="no column named 'label'"):
        load_dataset(missing, label_column="label")


def test_label_column_only_for_csv(tmp_path: Path) -> None:
    path = write(tmp_path / "mine.svm", "1 1:1\n2 1:2\n")
    with pytest.raises(DataError, match="CSV files only"):
        load_dataset(path, label_column=0)


# ---------------------------------------------------------------------------------------
# Bundled sets


def test_wdbc_is_sklearn_breast_cancer_benign_positive() -> None:
    ds = load_dataset("wdbc")
    assert ds.X.shape == (569, 30) and not ds.is_sparse
    assert int((ds.y == 1).sum()) == 357 and int((ds.y == -1).sum()) == 212
    assert ds.source == "bundled:wdbc"


def test_blobs_seeded_with_documented_shape_and_separation() -> None:
    a = load_dataset("blobs", n=51, p=7, seed=3)
    b = load_dataset("blobs", n=51, p=7, seed=3)
    c = load_dataset("blobs", n=51, p=7, seed=4)
    assert a.X.shape == (51, 7) and int((a.y == 1).sum()) == 26
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(a.X, c.X)
    big = load_dataset("blobs", n=20000, p=4, separation=2.0, seed=0)
    direction = np.ones(4) / 2.0
    gap = big.X[big.y == 1].mean(axis=0) @ direction - big.X[big.y == -1].mean(axis=0) @ direction
    assert abs(gap - 2.0) < 0.1


def test_sparse_synthetic_seeded_csr_with_density() -> None:
    a = load_dataset("sparse-synthetic", n=400, p=3000, density=0.02, seed=1)
    b = load_dataset("sparse-synthetic", n=400, p=3000, density=0.02, seed=1)
    assert isinstance(a.X, sp.csr_matrix) and a.X.shape == (400, 3000)
    assert abs(a.X.nnz / (400 * 3000) - 0.02) < 0.002
    assert (a.X != b.X).nnz == 0 and np.array_equal(a.y, b.y)
    assert set(np.unique(a.y)) == {-1.0, 1.0}
    c = load_dataset("sparse-synthetic", n=400, p=3000, density=0.02, seed=2)
    assert (a.X != c.X).nnz > 0


def test_toy_sets() -> None:
    toy = load_dataset("toy-2d")
    assert toy.X.shape == (40, 2) and set(np.unique(toy.y)) == {-1.0, 1.0}
    tri = load_dataset("toy-simplex-3")
    tet = load_dataset("toy-simplex-4")
    assert tri.X.shape == (3, 2) and tet.X.shape == (4, 2)
    for ds in (tri, tet):
        assert set(np.unique(ds.y)) == {-1.0, 1.0}
    np.testing.assert_array_equal(
        load_dataset("toy-simplex-3", seed=5).X, load_dataset("toy-simplex-3", seed=5).X
    )


def test_regression_generators() -> None:
    diabetes = load_dataset("sk-diabetes")
    assert diabetes.task == "regression" and diabetes.X.shape == (442, 10)
    f1 = load_dataset("friedman", n=120, p=6, seed=2)
    assert f1.X.shape == (120, 6) and f1.task == "regression"
    np.testing.assert_array_equal(f1.y, load_dataset("friedman", n=120, p=6, seed=2).y)
    # Friedman #1 features are uniform on [0, 1].
    assert f1.X.min() >= 0.0 and f1.X.max() <= 1.0
    with pytest.raises(DataError, match="p must be an integer >= 5"):
        load_dataset("friedman", p=3)


def test_generator_arguments_are_checked() -> None:
    with pytest.raises(DataError, match="blobs does not take density; it takes n, p"):
        load_dataset("blobs", density=0.1)
    with pytest.raises(DataError, match="only the bundled generators"):
        load_dataset("a1a", n=10)
    with pytest.raises(DataError, match="density must be a number in"):
        load_dataset("sparse-synthetic", density=0.0)
    with pytest.raises(DataError, match="drop label_map"):
        load_dataset("wdbc", label_map={0: -1, 1: 1})


# ---------------------------------------------------------------------------------------
# Preprocessing


def test_standardize_uses_training_statistics_only() -> None:
    split = data.train_test_split(load_dataset("wdbc"), test_size=0.3, seed=0)
    scaled = data.standardize(split)
    scaler = StandardScaler().fit(np.asarray(split.X))
    np.testing.assert_allclose(scaled.X_test, scaler.transform(split.X_test), rtol=1e-12)
    np.testing.assert_allclose(scaled.X.mean(axis=0), 0.0, atol=1e-10)
    np.testing.assert_allclose(scaled.X.std(axis=0), 1.0, rtol=1e-10)
    # The test part is not standardized with its own statistics.
    assert np.abs(scaled.X_test.mean(axis=0)).max() > 1e-3
    np.testing.assert_array_equal(scaled.y, split.y)


def test_standardize_sparse_scales_without_centering() -> None:
    ds = load_dataset("sparse-synthetic", n=300, p=200, density=0.05, seed=0)
    scaled = data.standardize(ds)
    assert scaled.is_sparse and scaled.X.nnz == ds.X.nnz
    reference = StandardScaler(with_mean=False).fit_transform(ds.X)
    np.testing.assert_allclose(scaled.X.toarray(), reference.toarray(), rtol=1e-12)


def test_add_intercept_dense_and_csr() -> None:
    dense = data.train_test_split(load_dataset("wdbc"), test_size=0.2, seed=1)
    out = data.add_intercept(dense)
    assert out.X.shape == (dense.n, 31) and not out.is_sparse
    np.testing.assert_array_equal(out.X[:, -1], 1.0)
    np.testing.assert_array_equal(out.X_test[:, -1], 1.0)
    np.testing.assert_array_equal(out.X[:, :-1], dense.X)
    sparse = load_dataset("sparse-synthetic", n=50, p=40, density=0.1, seed=0)
    out = data.add_intercept(sparse)
    assert isinstance(out.X, sp.csr_matrix) and out.X.shape == (50, 41)
    np.testing.assert_array_equal(out.X[:, -1].toarray().ravel(), 1.0)
    assert out.X.nnz == sparse.X.nnz + 50 and out.X.has_canonical_format


def test_normalize_rows_unit_norm() -> None:
    ds = data.normalize_rows(load_dataset("blobs", n=30, p=3, seed=0))
    np.testing.assert_allclose(np.linalg.norm(ds.X, axis=1), 1.0, rtol=1e-12)


def test_train_test_split_is_seeded_and_stratified() -> None:
    ds = load_dataset("wdbc")
    a = data.train_test_split(ds, test_size=0.25, seed=7)
    b = data.train_test_split(ds, test_size=0.25, seed=7)
    c = data.train_test_split(ds, test_size=0.25, seed=8)
    np.testing.assert_array_equal(a.X_test, b.X_test)
    assert not np.array_equal(a.X_test, c.X_test)
    assert a.n_test == 143 and a.n == 569 - 143
    overall = (ds.y == 1).mean()
    # Stratified: each part holds the overall share of positives up to one row.
    assert abs((a.y_test == 1).sum() - overall * a.n_test) <= 1
    assert abs((a.y == 1).sum() - overall * a.n) <= 1
    with pytest.raises(DataError, match="already has a test split"):
        data.train_test_split(a, test_size=0.2)


def test_preprocess_composition() -> None:
    ds = load_dataset("wdbc")
    out = data.preprocess(ds, intercept=True, standardize=True, test_size=0.2, seed=0)
    assert out.p == 31 and out.n_test == 114
    np.testing.assert_array_equal(out.X[:, -1], 1.0)
    np.testing.assert_allclose(out.X[:, :-1].mean(axis=0), 0.0, atol=1e-10)
    assert data.preprocess(ds) is ds


def test_dataset_validates_its_fields() -> None:
    with pytest.raises(DataError, match="binary y must hold only"):
        Dataset("x", np.zeros((2, 1)), np.array([0.0, 1.0]), "binary", "test")
    with pytest.raises(DataError, match="2 entries for 3 rows"):
        Dataset("x", np.zeros((3, 1)), np.array([1.0, -1.0]), "binary", "test")


@pytest.mark.parametrize(
    ("text", "said", "not_said"),
    [
        # One broken line among data lines: that line is the problem.
        ("+1 1:1 2:1\n-1 2:1 1:1\n", "line 2: feature indices must increase", "not a data file"),
        ("+1 3:1 2:1\n", "line 1: feature indices must increase", "not a data file"),
        # No line of data at all (notes, a letter): the file is of another kind.
        (
            "Meeting notes\nWe agreed: ship on Friday.\n",
            "is not a data file (none of its first 20 lines reads 'label index:value ...'",
            "fix the line",
        ),
    ],
)
def test_a_broken_line_and_a_file_that_is_not_data_get_different_advice(
    tmp_path: Path, text: str, said: str, not_said: str
) -> None:
    path = tmp_path / "upload.txt"
    path.write_text(text)
    with pytest.raises(DataError) as err:
        load_dataset(str(path))
    assert said in str(err.value) and not_said not in str(err.value)
