"""A Panel output's first click in a notebook is not held back by a message the kernel
dropped (``ermviz.app.serving.notebook.acknowledge_comm_opens``).

The kernel is a real ipykernel driven over the Jupyter protocol the way JupyterLab 4.4+
and Notebook 7.4+ drive it: the page opens its comm on the main shell while a cell still
runs, and sends the comm's first message on a subshell, which handles it at once, before
the kernel knows the comm ("No such comm": the message is dropped). Panel's page then
waits (5 s) for the answer to that message and holds every later change, a click
included. The kernel must say "Ready" on the comm when it opens it.
"""

from __future__ import annotations

import queue
import time

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
