"""A file drop zone that sends the file to the server in chunks.

Why not Panel's ``FileDropper``: its file widget (FilePond) runs a ``requestAnimationFrame``
loop from the moment its script is loaded, on every page that merely includes it, so the
browser repainted about 60 times a second even when nothing changed: measured with the
browser on the server's 2 cores, chromium took 4-5 % of a core idle (0.7 % without) and
2-3 % more of a core during a race, CPU the solver threads then lacked. Why not
``FileInput``: it sends the whole file as one websocket message, which the Bokeh server
refuses above its message limit (20 MB by default), without telling the user.

The browser reads the chosen or dropped file in slices of :data:`CHUNK_BYTES` and sends
each as one message (base64); the server appends them in order, checks offsets and sizes
itself (a page can send anything), and hands the complete file to ``on_file``.

The line under the prompt (``status``) never reads like success before the file is
loaded: "received X; checking it…" once the bytes are in, then what ``on_file`` reports
(:meth:`ChunkedUpload.show_outcome`: "loaded X" or why nothing was loaded). A transfer
refused here (too large, broken) says so, and that nothing was loaded, there and through
``on_error``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any, ClassVar

import param
from panel.custom import JSComponent

#: Bytes per message (before base64): well under the websocket message limit.
CHUNK_BYTES = 1 << 20


class ChunkedUpload(JSComponent):
    """Drop zone / file picker for one file at a time, with a size limit.

    Parameters
    ----------
    on_file : callable(filename: str, content: bytes)
        Called on the server's event loop once a file has fully arrived; it reports what
        became of the file with :meth:`show_outcome` (until then the drop zone says the
        file is being checked).
    on_error : callable(message: str)
        Called with a one-line message when a file is refused (too large, broken
        transfer): what was wrong, and that nothing was loaded.
    max_bytes : int
        Largest file accepted, in bytes (checked in the browser before sending and again
        on the server).
    """

    accept = param.String(default="", doc="File types offered by the picker (HTML accept).")
    max_bytes = param.Integer(default=50 * 2**20, bounds=(1, None))
    prompt = param.String(default="Drop a file here, or click to choose one")
    status = param.String(default="", doc="Last transfer's outcome, shown under the prompt.")

    _esm = (
        f"const CHUNK = {CHUNK_BYTES};"
        + """

function toBase64(buffer) {
  const bytes = new Uint8Array(buffer);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

export function render({ model }) {
  const zone = document.createElement("label");
  zone.className = "ermviz-upload";
  const input = document.createElement("input");
  input.type = "file";
  input.accept = model.accept;
  const prompt = document.createElement("span");
  prompt.className = "prompt";
  prompt.textContent = model.prompt;
  const status = document.createElement("span");
  status.className = "status";
  status.textContent = model.status;
  model.on("status", () => { status.textContent = model.status; });
  zone.append(input, prompt, status);
  let next = 0;

  async function send(file) {
    if (file.size > model.max_bytes) {
      model.send_msg({ kind: "too_big", name: file.name, size: file.size });
      return;
    }
    const id = ++next;
    model.send_msg({ kind: "start", id, name: file.name, size: file.size });
    for (let offset = 0; offset < file.size; offset += CHUNK) {
      const part = await file.slice(offset, offset + CHUNK).arrayBuffer();
      model.send_msg({ kind: "chunk", id, offset, data: toBase64(part) });
      const done = Math.min(offset + CHUNK, file.size) / file.size;
      status.textContent = `sending ${file.name}: ${Math.round(100 * done)} %`;
    }
    model.send_msg({ kind: "end", id });
  }

  input.addEventListener("change", () => {
    const file = input.files && input.files[0];
    input.value = "";  // the same file can be picked again
    if (file) send(file);
  });
  zone.addEventListener("dragover", (e) => { e.preventDefault(); zone.classList.add("over"); });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    zone.classList.remove("over");
    const file = e.dataTransfer.files[0];
    if (file) send(file);
  });
  return zone;
}
"""
    )

    _stylesheets: ClassVar[list[str]] = [
        """
.ermviz-upload {
  display: flex; flex-direction: column; align-items: center; justify-content: center;
  gap: 4px; padding: 14px 8px; border: 2px dashed #aab; border-radius: 6px;
  background: #f7f7fa; color: #444; cursor: pointer; font-size: 0.95em; text-align: center;
}
.ermviz-upload.over { border-color: #1f77b4; background: #eaf2fb; }
.ermviz-upload input {
  position: absolute; width: 1px; height: 1px; opacity: 0; overflow: hidden;
}
.ermviz-upload .status { color: #666; font-size: 0.9em; }
"""
    ]

    def __init__(
        self,
        on_file: Callable[[str, bytes], Any],
        on_error: Callable[[str], Any],
        **params: Any,
    ) -> None:
        super().__init__(**params)
        self._on_file = on_file
        self._on_error = on_error
        self._transfer: dict[str, Any] | None = None

    def show_outcome(self, text: str) -> None:
        """Show what became of the last file under the prompt: ``loaded X ...``, or the
        one-line reason nothing was loaded."""
        self.status = text

    def _refuse(self, name: str, problem: str, fix: str = "please try again") -> None:
        self._transfer = None
        message = f"{name}: {problem}, so nothing was loaded; {fix}"
        self.status = message
        self._on_error(message)

    def _handle_msg(self, msg: Any) -> None:
        """One message of the browser's protocol: too_big, start, chunk (in order), end."""
        if not isinstance(msg, dict):
            return
        kind = msg.get("kind")
        if kind in ("too_big", "start"):
            name = str(msg.get("name", "file"))
            size = msg.get("size")
            if not isinstance(size, int) or size < 0:
                self._refuse(name, "the browser sent no valid file size")
                return
            if size > self.max_bytes:
                self._refuse(
                    name,
                    f"{size / 2**20:.1f} MB is over the {self.max_bytes / 2**20:g} MB upload limit",
                    "use a catalog dataset or a smaller file",
                )
                return
            if kind == "start":
                self._transfer = {
                    "id": msg.get("id"),
                    "name": name,
                    "size": size,
                    "buf": bytearray(),
                }
                self.status = f"receiving {name}…"
            return
        t = self._transfer
        if t is None or msg.get("id") != t["id"]:
            return  # a transfer already refused, or replaced by a newer one
        if kind == "chunk":
            if msg.get("offset") != len(t["buf"]):
                self._refuse(t["name"], "the upload arrived out of order")
                return
            try:
                part = base64.b64decode(str(msg.get("data", "")), validate=True)
            except (binascii.Error, ValueError):
                self._refuse(t["name"], "the upload arrived damaged")
                return
            if len(t["buf"]) + len(part) > t["size"]:
                self._refuse(t["name"], "more data arrived than the file's size")
                return
            t["buf"] += part
        elif kind == "end":
            self._transfer = None
            if len(t["buf"]) != t["size"]:
                self._refuse(t["name"], f"{len(t['buf'])} of {t['size']} bytes arrived")
                return
            # Not "loaded" yet: on_file checks the file, then shows the outcome.
            self.status = f"received {t['name']} ({t['size'] / 2**20:.2f} MB); checking it…"
            self._on_file(t["name"], bytes(t["buf"]))
