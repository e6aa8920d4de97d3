"""The chunked upload's server side: the browser's messages, replayed from Python.

The reference is the file itself: what reaches ``on_file`` must be its exact bytes, and
every malformed transfer must end in one clear message and no file.
"""

from __future__ import annotations

import base64

import numpy as np
import pytest

from ermviz.app.upload import CHUNK_BYTES, ChunkedUpload


def _messages(content: bytes, name: str = "f.csv", transfer: int = 1) -> list[dict]:
    """The messages the page's script sends for ``content`` (same slicing)."""
    out = [{"kind": "start", "id": transfer, "name": name, "size": len(content)}]
    for offset in range(0, len(content), CHUNK_BYTES):
        part = content[offset : offset + CHUNK_BYTES]
        out.append(
            {
                "kind": "chunk",
                "id": transfer,
                "offset": offset,
                "data": base64.b64encode(part).decode(),
            }
        )
    out.append({"kind": "end", "id": transfer})
    return out


@pytest.fixture
def widget():
    got: dict[str, list] = {"files": [], "errors": []}
    w = ChunkedUpload(
        on_file=lambda name, content: got["files"].append((name, content)),
        on_error=got["errors"].append,
        max_bytes=5 * CHUNK_BYTES,
    )
    return w, got


@pytest.mark.parametrize("size", [0, 1, CHUNK_BYTES, 2 * CHUNK_BYTES + 12345, 5 * CHUNK_BYTES])
def test_a_file_arrives_byte_for_byte(widget, size):
    w, got = widget
    content = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes()
    for msg in _messages(content):
        w._handle_msg(msg)
    assert got["errors"] == []
    assert got["files"] == [("f.csv", content)]
    assert w.status.startswith("received f.csv")


def test_too_large_files_are_refused_before_and_after_sending(widget):
    w, got = widget
    w._handle_msg({"kind": "too_big", "name": "big.svm", "size": 6 * CHUNK_BYTES})
    assert got["errors"] == [
        "big.svm: 6.0 MB is over the 5 MB upload limit; use a catalog dataset or a smaller file"
    ]
    # A page that lies about the size cannot send more than it announced.
    msgs = _messages(b"x" * 10)
    msgs[0]["size"] = 4
    for msg in msgs:
        w._handle_msg(msg)
    assert got["files"] == [] and "more data arrived than the file's size" in got["errors"][-1]


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda m: m.pop(1), "arrived out of order"),
        (lambda m: m[1].update(data="@@not base64@@"), "arrived damaged"),
        (lambda m: m.pop(-2), "2097152 of 2103150 bytes arrived"),
        (lambda m: m[0].update(size=-1), "no valid file size"),
    ],
)
def test_broken_transfers_end_in_one_message_and_no_file(widget, damage, message):
    w, got = widget
    msgs = _messages(b"0.5,1\n" * (2 * CHUNK_BYTES // 6 + 1000))
    damage(msgs)
    for msg in msgs:
        w._handle_msg(msg)
    assert got["files"] == []
    assert len(got["errors"]) == 1 and message in got["errors"][0]


def test_a_newer_transfer_replaces_an_unfinished_one(widget):
    w, got = widget
    first, second = _messages(b"a" * 100, "a.csv", 1), _messages(b"b" * 50, "b.csv", 2)
    for msg in first[:1] + second + first[1:]:  # a's chunks arrive after b started
        w._handle_msg(msg)
    assert got == {"files": [("b.csv", b"b" * 50)], "errors": []}
