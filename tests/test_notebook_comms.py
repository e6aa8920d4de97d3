"""Panel's outputs in a notebook kernel driven over the Jupyter protocol, as JupyterLab 4.4+
and Notebook 7.4+ drive it (``ermviz.app.serving.notebook``).

A Panel output's first click is not held back by a message the kernel dropped
(``acknowledge_comm_opens``): the page opens its comm on the main shell while a cell still
runs, and sends the comm's first message on a subshell, which handles it at once, before
the kernel knows the comm ("No such comm": the message is dropped). Panel's page then
waits (5 s) for the answer to that message and holds every later change, a click
included. The kernel must say "Ready" on the comm when it opens it.

Each browser page gets BokehJS once (``load_into_page``): a page is a client session (the
``session`` of its requests' headers; a reloaded page has a new one), so the test plays
pages by switching the client's session. BokehJS is recognized by a slice of Bokeh's own
shipped ``bokeh.min.js`` inside an output.
"""

from __future__ import annotations

import json
import queue
import time
import uuid
from pathlib import Path

import pytest

jupyter_client = pytest.importorskip("jupyter_client")

SETUP = """
from ermviz.app.serving.notebook import notebook_extension
notebook_extension()
from panel.io.state import state
received = []
client = state._comm_manager.get_client_comm(on_msg=received.append)
print("TARGET", client.id)
"""


def _reply(channel, msg_id: str, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = channel.get_msg(timeout=deadline - time.monotonic())
        if msg["parent_header"].get("msg_id") == msg_id:
            return msg
    raise TimeoutError(msg_id)


def _stdout_of(kc, msg_id: str, timeout: float = 120) -> str:
    """What the cell ``msg_id`` printed, once it is idle."""
    out, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = kc.get_iopub_msg(timeout=deadline - time.monotonic())
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            raise AssertionError("\n".join(msg["content"]["traceback"]))
        elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return "".join(out)
    raise TimeoutError(msg_id)


@pytest.mark.long(seconds=30)
def test_a_comm_opened_behind_a_running_cell_says_ready() -> None:
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:
        setup = kc.execute(SETUP)
        target = _stdout_of(kc, setup).split("TARGET", 1)[1].split()[0]
        subshell = kc.session.msg("create_subshell_request", {})
        kc.control_channel.send(subshell)
        reply = _reply(kc.control_channel, subshell["header"]["msg_id"])
        subshell_id = reply["content"]["subshell_id"]

        # A cell runs on the main shell; the page opens its comm (queued behind the cell)
        # and sends the comm's first message on the subshell (handled at once: dropped).
        kc.execute("import time; time.sleep(3)")
        time.sleep(0.5)
        comm_id = "page-comm-0001"
        kc.shell_channel.send(
            kc.session.msg("comm_open", {"comm_id": comm_id, "target_name": target, "data": {}})
        )
        first = kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {"first": True}})
        first["header"]["subshell_id"] = subshell_id
        kc.shell_channel.send(first)

        ready, t0 = None, time.monotonic()
        while ready is None and time.monotonic() - t0 < 30:
            try:
                msg = kc.get_iopub_msg(timeout=1)
            except queue.Empty:
                continue
            if msg["msg_type"] == "comm_msg" and msg["content"]["comm_id"] == comm_id:
                ready = msg
        assert ready is not None, "the kernel never told the page the comm is ready"
        assert ready["metadata"].get("msg_type") == "Ready", ready["metadata"]
        # The first message was indeed dropped (that is the case being guarded against):
        # the comm's callback never saw it.
        check = kc.execute("print('RECEIVED', len(received))")
        assert "RECEIVED 0" in _stdout_of(kc, check)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


LOAD_MIME = "application/vnd.holoviews_load.v0+json"
EXEC_MIME = "application/vnd.holoviews_exec.v0+json"


def _bokehjs_slice() -> str:
    """400 characters from the middle of BokehJS's longest line, as Bokeh ships it (Panel's
    load indents the lines of what it inlines)."""
    import bokeh

    text = (Path(bokeh.__file__).parent / "server/static/js/bokeh.min.js").read_text("utf-8")
    line = max(text.splitlines(), key=len)
    middle = len(line) // 2
    return line[middle : middle + 400]


def _outputs_of(kc, msg_id: str, timeout: float = 180) -> list[dict]:
    """The display data and results the cell ``msg_id`` sent, in order, once it is idle."""
    out, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = kc.get_iopub_msg(timeout=deadline - time.monotonic())
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] in ("display_data", "execute_result"):
            out.append(msg["content"])
        elif msg["msg_type"] == "error":
            raise AssertionError("\n".join(msg["content"]["traceback"]))
        elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return out
    raise TimeoutError(msg_id)


class Cell:
    """What one cell sent: its outputs, their size (as sent, JSON), which carry BokehJS."""

    def __init__(self, kc, code: str, bokehjs: str) -> None:
        self.outputs = _outputs_of(kc, kc.execute(code))
        self.size = sum(len(json.dumps(o)) for o in self.outputs)
        self.with_bokehjs = [
            i for i, o in enumerate(self.outputs) if bokehjs in o["data"].get(LOAD_MIME, "")
        ]
        self.shown = [i for i, o in enumerate(self.outputs) if EXEC_MIME in o["data"]]
        self.notice = any("already shows" in o["data"].get("text/html", "") for o in self.outputs)


@pytest.mark.long(seconds=60)
def test_each_page_gets_bokehjs_once_and_a_reloaded_page_shows_the_dashboard_again() -> None:
    bokehjs = _bokehjs_slice()
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:
        # Page 1: the README's snippet, then notebook_extension() again.
        first = Cell(
            kc,
            "from ermviz.app import Dashboard, notebook_extension\nnotebook_extension()",
            bokehjs,
        )
        assert len(first.with_bokehjs) == 1, f"BokehJS sent {len(first.with_bokehjs)} times"
        # Nothing else heavy: Panel's and HoloViews' own "reloading" bundles (1.4 MB each,
        # without BokehJS) are not sent on top.
        others = sum(
            len(o["data"].get(LOAD_MIME, ""))
            for i, o in enumerate(first.outputs)
            if i not in first.with_bokehjs
        )
        assert others < 100_000, f"{others} bytes of other loads"
        again = Cell(kc, "notebook_extension()", bokehjs)
        assert again.size < 10_000, f"notebook_extension() again sent {again.size} bytes"
        dash = Cell(kc, "dash = Dashboard()\ndash.panel()", bokehjs)
        assert dash.with_bokehjs == [] and dash.shown and not dash.notice
        second = Cell(kc, "dash.plots", bokehjs)
        assert second.notice, "a second display on the same page is refused with a notice"

        # Page 2 (page 1 reloaded): the dashboard of page 1 displays, BokehJS first.
        kc.session.session = str(uuid.uuid4())
        moved = Cell(kc, "dash.panel()", bokehjs)
        assert not moved.notice, "the dashboard of the reloaded page was refused"
        assert len(moved.with_bokehjs) == 1 and moved.shown, (moved.with_bokehjs, moved.shown)
        assert moved.with_bokehjs[0] < moved.shown[-1], "BokehJS came after the dashboard"
        curve = Cell(kc, "import holoviews as hv\nhv.Curve([1, 2])", bokehjs)
        assert curve.with_bokehjs == [] and curve.shown, "page 2 was sent BokehJS twice"

        # Page 3: a HoloViews plot alone brings BokehJS along.
        kc.session.session = str(uuid.uuid4())
        plot = Cell(kc, "hv.Curve([1, 2])", bokehjs)
        assert len(plot.with_bokehjs) == 1 and plot.with_bokehjs[0] < plot.shown[-1]
        print(
            f"bytes sent: first notebook_extension() {first.size:,}, again {again.size:,}, "
            f"dashboard {dash.size:,}, dashboard on a new page {moved.size:,}, "
            f"a curve {curve.size:,}, a curve on a new page {plot.size:,}"
        )
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


QUIET_CELL = """
import time
from IPython.display import display
from ermviz.app.serving.notebook import _unpublished
with _unpublished():
    display("hidden from the page")
    time.sleep(3)
print("MAIN DONE")
"""


@pytest.mark.long(seconds=20)
def test_what_notebook_extension_keeps_from_the_page_leaves_other_threads_alone() -> None:
    # notebook_extension() keeps Panel's and HoloViews' own loads from the page while they
    # run; a message the page sends meanwhile runs on a subshell (another thread) and must
    # be handled and publish as usual.
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:
        subshell = kc.session.msg("create_subshell_request", {})
        kc.control_channel.send(subshell)
        subshell_id = _reply(kc.control_channel, subshell["header"]["msg_id"])["content"][
            "subshell_id"
        ]
        main = kc.execute(QUIET_CELL)
        time.sleep(1.5)  # inside the quiet block
        other = kc.session.msg(
            "execute_request",
            {"code": "display('from the subshell')", "silent": False, "store_history": False},
        )
        other["header"]["subshell_id"] = subshell_id
        kc.shell_channel.send(other)
        shown, errors, done = [], [], False
        deadline = time.monotonic() + 60
        while not done and time.monotonic() < deadline:
            try:
                msg = kc.get_iopub_msg(timeout=1)
            except queue.Empty:
                continue
            content = msg["content"]
            if msg["msg_type"] == "display_data":
                shown.append(content["data"].get("text/plain", ""))
            elif msg["msg_type"] == "stream" and content["name"] == "stderr":
                errors.append(content["text"])
            elif msg["msg_type"] == "error":
                errors.append(content["evalue"])
            elif msg["msg_type"] == "stream" and "MAIN DONE" in content["text"]:
                done = msg["parent_header"].get("msg_id") == main
        assert done, "the quiet cell did not finish"
        assert not errors, errors
        assert "'from the subshell'" in shown, shown
        assert "'hidden from the page'" not in shown, shown
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
