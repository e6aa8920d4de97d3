"""The on-disk cache of parsed catalog files: same data, invalidated by a changed file."""

from __future__ import annotations

import numpy as np
import pytest

from ermviz import data
from ermviz.data.readers import _open_binary


@pytest.mark.requires_data("a1a")
def test_parsed_cache_round_trip_and_invalidation(tmp_path, monkeypatch, real_data):
    folder = tmp_path / "data"
    folder.mkdir()
    src = data.locate("a1a")  # plain, or the .bz2 shipped in datasets/: write it plain
    with _open_binary(src) as fh:
        (folder / "a1a").write_bytes(fh.read())
    monkeypatch.setenv("ERMVIZ_DATA", str(folder))
    monkeypatch.setenv("ERMVIZ_CACHE", str(tmp_path / "cache"))
    data.clear_cache()
    first = data.load_dataset("a1a", with_test=False)
    cached = list((tmp_path / "cache" / "parsed").glob("a1a-*.npz"))
    assert len(cached) == 1
    data.clear_cache()  # forget the in-memory copy: the next load reads the .npz
    second = data.load_dataset("a1a", with_test=False)
    assert (second.X != first.X).nnz == 0 and second.X.shape == (1605, 123)
    np.testing.assert_array_equal(second.y, first.y)
    assert not second.X.data.flags.writeable
    # Changing the file (drop its last row) parses it again under a new key.
    lines = (folder / "a1a").read_text().splitlines(keepends=True)
    (folder / "a1a").write_text("".join(lines[:-1]))
    data.clear_cache()
    third = data.load_dataset("a1a", with_test=False)
    assert third.X.shape[0] == 1604
    assert len(list((tmp_path / "cache" / "parsed").glob("a1a-*.npz"))) == 2
    data.clear_cache()
