"""The chunked upload's server side: the browser's messages, replayed from Python.

The reference is the file itself: what reaches ``on_file`` must be its exact bytes, and
every malformed transfer must end in one clear message and no file.
"""

from __future__ import annotations

import base64

import numpy as np
import pytest

from ermviz.app.views.upload import CHUNK_BYTES, ChunkedUpload


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
    # Received, not loaded: on_file (which here reports nothing) decides that.
    assert w.status.startswith("received f.csv") and w.status.endswith("checking it…")


def test_too_large_files_are_refused_before_and_after_sending(widget):
    w, got = widget
    w._handle_msg({"kind": "too_big", "name": "big.svm", "size": 6 * CHUNK_BYTES})
    assert got["errors"] == [
        "big.svm: 6.0 MB is over the 5 MB upload limit, so nothing was loaded; use a catalog "
        "dataset or a smaller file"
    ]
    assert w.status == got["errors"][0]
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
    assert "nothing was loaded" in got["errors"][0] and w.status == got["errors"][0]


def test_a_newer_transfer_replaces_an_unfinished_one(widget):
    w, got = widget
    first, second = _messages(b"a" * 100, "a.csv", 1), _messages(b"b" * 50, "b.csv", 2)
    for msg in first[:1] + second + first[1:]:  # a's chunks arrive after b started
        w._handle_msg(msg)
    assert got == {"files": [("b.csv", b"b" * 50)], "errors": []}


# -- through the dashboard's controls (no browser) -------------------------------------------

PROSE = (
    b"Homework notes, week 3.\nRead chapter two, then answer questions 1 to 4.\n"
    b"Remember: the deadline is Friday.\n"
)


def _dashboard():
    pytest.importorskip("panel")
    from ermviz.app.state.model import DashboardModel
    from ermviz.app.views.page import Dashboard

    notes: list[tuple[str, str]] = []
    model = DashboardModel(notifier=lambda level, msg: notes.append((level, msg)))
    return Dashboard(model), model, notes


def test_a_refused_upload_says_what_was_wrong_and_that_nothing_was_loaded():
    dash, model, notes = _dashboard()
    before = (model.dataset, list(model.param.dataset.objects))
    for msg in _messages(PROSE, "homework_notes.txt"):
        dash.controls_view.upload._handle_msg(msg)
    assert [level for level, _ in notes] == ["error"]
    message = notes[0][1]
    assert message.startswith("could not read homework_notes.txt, so nothing was loaded: ")
    assert "line 1: label 'Homework' is not a number" in message
    # Not one line is data: no advice to fix (or delete) a line, the file is of another kind.
    assert "is not a data file" in message and "fix the line" not in message
    assert "upload a LIBSVM file, or a CSV file with a name ending in .csv" in message
    assert "this looks like CSV" not in message  # prose is not CSV: no rename advice
    # The drop zone says the same, not "received homework_notes.txt".
    assert dash.controls_view.upload.status == message
    assert (model.dataset, list(model.param.dataset.objects)) == before
    assert model.uploads == {}


def test_a_csv_file_named_txt_is_refused_with_the_csv_hint():
    dash, _, notes = _dashboard()
    for msg in _messages(b"0.5,1.5,1\n2.0,0.1,-1\n", "points.txt"):
        dash.controls_view.upload._handle_msg(msg)
    assert len(notes) == 1 and "nothing was loaded" in notes[0][1]
    assert "this looks like CSV: give the file a name ending in .csv" in notes[0][1]
    assert dash.controls_view.upload.status == notes[0][1]


def test_an_accepted_upload_is_loaded_and_the_drop_zone_says_so():
    dash, model, notes = _dashboard()
    for msg in _messages(b"0.5,1.5,1\n2.0,0.1,-1\n1.0,1.0,1\n", "points.csv"):
        dash.controls_view.upload._handle_msg(msg)
    assert notes == [("success", "loaded points.csv; it is selected")]
    assert dash.controls_view.upload.status == "loaded points.csv; it is selected"
    assert model.dataset == "upload:points.csv"
