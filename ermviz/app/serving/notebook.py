"""The dashboard in a Jupyter notebook (JupyterLab 4, Notebook 7, VS Code).

:func:`notebook_extension` is the one call a notebook makes before it displays the
dashboard, a part of it or a HoloViews plot::

    from ermviz.app import Dashboard, notebook_extension

    notebook_extension()
    Dashboard().panel()

It loads HoloViews' Bokeh backend and Panel's extensions with every JavaScript and
stylesheet *inline* (inside the notebook's output), so a notebook renders offline and makes
no request to a CDN, and it enables Panel's notifications (the dashboard's toasts).

Pages, not kernels, hold that JavaScript: a browser page reloaded while the kernel runs has
none of it. Panel and HoloViews remember per kernel that they loaded it, so after a reload
their extensions sent only a "reloading" bundle without BokehJS and every output stayed
blank ("Unable to run Panel code because Bokeh or Panel library is missing"). Here the
JavaScript goes once to each page (:func:`load_into_page`): the kernel tells pages apart by
the client session of the request it runs (each front-end connection has its own), and the
first Panel or HoloViews output a new page asks for brings it along.
"""

from __future__ import annotations

import base64
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import panel as pn
from bokeh.document.events import (
    ColumnDataChangedEvent,
    ColumnsPatchedEvent,
    ColumnsStreamedEvent,
    ModelChangedEvent,
)
from panel.theme.fast import Fast

from ermviz.app import compat

#: Panel extensions the dashboard's views need (the Results tab's Tabulator).
EXTENSIONS = ("tabulator",)
#: The served page's font: fonts every desktop has, so nothing is fetched (Panel's Fast
#: design links Open Sans from fonts.googleapis.com; offline that request fails in the
#: console, online it tells Google who opened the page).
PAGE_FONT = (
    "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', "
    "'DejaVu Sans', 'Liberation Sans', Arial, sans-serif"
)


def _pin_local_dist() -> None:
    """In a served session, record where the server serves Panel's files on the session's
    document, as Panel does when it renders the page's HTML.

    A session whose page took longer to load than the server's unused-session lifetime is
    recreated by Bokeh when its websocket connects, without that HTML: Panel then points
    every stylesheet of the page at cdn.holoviz.org (measured: 19 requests to the CDN,
    failing offline, with ``--unused-session-lifetime 1000``)."""
    from panel.io.resources import LOCAL_DIST, use_cdn
    from panel.io.state import state

    doc = state.curdoc
    if doc is None or doc.session_context is None or use_cdn():
        return
    local = f"{state.rel_path}/{LOCAL_DIST}" if state.rel_path else LOCAL_DIST
    compat.template_variables(doc).setdefault("dist_url", local)


class OfflineFast(Fast):
    """Panel's Fast design without its web font: the served page's FastListTemplate
    (``design=OfflineFast, font=PAGE_FONT``) requests no Google Fonts stylesheet, nor any
    other file from outside the server (checked by tests/test_app_browser.py)."""

    _resources: ClassVar[dict[str, Any]] = {**Fast._resources, "font": {}}

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        _pin_local_dist()
        _keep_stylesheets_local()  # stylesheets patched in callbacks stay on the server


# Named Fast too: Panel finds a design's own files (fast/js/fast_design.js) by class name.
OfflineFast.__name__ = OfflineFast.__qualname__ = "Fast"


def notebook_extension(*extensions: str, reload: bool = False, **params: Any) -> None:
    """Load what the dashboard needs in a notebook, offline: Panel's extensions
    (:data:`EXTENSIONS` and ``extensions``) and HoloViews' Bokeh backend, with inline
    resources and notifications; ``params`` go to :func:`panel.extension`.

    Call it once, in the notebook's first cells, before anything is displayed. Calling it
    again is harmless and sends nothing the page already holds; after a browser reload it
    sends the page everything again (and so does the first Panel or HoloViews output the
    new page shows, without it). ``reload=True`` sends it even to a page this kernel
    already sent it to: the fix a blank output names (:data:`MISSING_JS_NOTICE`) on a
    page the kernel could not tell from the one it loaded. Outside a notebook it only
    configures Panel.
    """
    import holoviews as hv
    import panel as pn
    from panel.io import resources

    # Inline resources: Bokeh's and Panel's JavaScript inside the output, and every
    # stylesheet a component links (theme, loading spinner, layouts, markdown) inlined
    # at display time instead of fetched from the CDN.
    pn.config.inline = True
    _keep_stylesheets_local()
    acknowledge_comm_opens()
    order_comm_messages()
    with resources.set_resource_mode("inline"), _unpublished():
        # Their Python side only (models, display hooks, comms, notifications on): what they
        # would send the page is sent by load_into_page, once per page.
        pn.extension(*EXTENSIONS, *extensions, notifications=True, inline=True, **params)
        hv.extension("bokeh", inline=True, logo=False)
    _load_with_each_page()
    if reload:
        _loaded_pages.discard(current_page() or "")
    load_into_page()


# -- one load per page ------------------------------------------------------------------
#: The pages (client sessions, see :func:`current_page`) sent Panel's load.
_loaded_pages: set[str] = set()
#: The page each Panel or HoloViews output went to, by the output's root model id.
_output_pages: dict[str, str] = {}


def current_page() -> str | None:
    """The front-end connection whose request the kernel is running: the ``session`` of
    the request's header (None outside a kernel).

    JupyterLab and Notebook 7 give each kernel connection a session id of its own (a new
    one on each page load), and every request a page sends carries it; a reloaded page is
    a new page. (A console attached to the notebook's kernel is a page of its own too.)"""
    if not in_notebook_kernel():
        return None
    from IPython import get_ipython

    # The request outputs are sent in reply to: ipykernel 7 keeps the whole message there
    # (per thread), ipykernel 6 its header.
    parent = getattr(get_ipython(), "parent_header", None) or {}
    header = parent.get("header") or parent
    return str(header.get("session", ""))


def page_has_panel_js() -> bool:
    """Whether the page whose request the kernel is running was sent Panel's JavaScript
    by this kernel (:func:`load_into_page`); True outside a kernel."""
    page = current_page()
    return page is None or page in _loaded_pages


def _publishing() -> bool:
    """False while what is displayed does not reach the page: inside :func:`_unpublished`,
    or while IPython captures it (``%%capture``)."""
    from IPython import get_ipython
    from IPython.core.displaypub import CapturingDisplayPublisher

    if getattr(_unpublishing, "on", False):
        return False
    return not isinstance(getattr(get_ipython(), "display_pub", None), CapturingDisplayPublisher)


def load_into_page() -> None:
    """Send the page whose request the kernel is running what Panel's and HoloViews' outputs
    need, unless it was sent before (a no-op outside a kernel).

    That is Panel's load with BokehJS, Panel's models and extensions inline
    (:func:`panel.io.notebook.load_notebook`, about 7.3 MB, as its extension sends it the
    first time), the toasts' library (:func:`_load_notyf`), and Panel's notification area
    and browser information, as :func:`panel.extension` shows them."""
    page = current_page()
    if page is None or page in _loaded_pages or not _publishing():
        return
    _loaded_pages.add(page)  # first: the notification area below displays through here
    from panel.config import panel_extension
    from panel.io.notebook import load_notebook
    from panel.io.resources import set_resource_mode

    _load_notyf()  # before Panel's load (see _load_notyf)
    with set_resource_mode("inline"):
        load_notebook(inline=True)
    # (HoloViews calls it the same way: Panel's own display of its page-wide views.)
    display_globals = getattr(panel_extension, "_display_globals", None)
    if display_globals is not None:
        display_globals()


#: Appended to each Panel or HoloViews output: a line the page shows if, 8 s after the
#: output arrived, it still lacks Panel's JavaScript (Panel's own output gives up after 5 s
#: and stays blank, saying so in the browser's console only). Normally never shown: the
#: kernel sends the JavaScript to each new page (:func:`load_into_page`).
MISSING_JS_NOTICE = (
    '<div class="ermviz-missing-js" hidden style="display:none; color:#a94442; '
    "padding:4px 0\">This output is blank: the page lacks Panel's JavaScript. Run "
    "<code>notebook_extension(reload=True)</code> (from ermviz.app), then this cell again.</div>"
    "<script>(function (note) { setTimeout(function () { var B = window.Bokeh; "
    "var ok = B && (B.Panel || (B.versions && Array.from(B.versions.values()).some("
    "function (v) { return v.Panel; }))); if (!ok && note) { note.hidden = false; "
    'note.style.display = "block"; } }, 8000); })(document.currentScript && '
    "document.currentScript.previousElementSibling);</script>"
)


def _shown_on_page(obj: Any) -> Any:
    """IPython's mime-bundle printer for Panel's and HoloViews' objects: their own bundle,
    after the page got Panel's load if it lacks it (:func:`load_into_page`), with
    :data:`MISSING_JS_NOTICE`; the output's page is noted (:func:`shown_here`)."""
    load_into_page()
    bundle = obj._repr_mimebundle_()
    if not (isinstance(bundle, tuple) and len(bundle) == 2):
        return bundle
    data, metadata = bundle
    from panel.io.notebook import EXEC_MIME

    ref = ((metadata or {}).get(EXEC_MIME) or {}).get("id")
    if not ref or not isinstance(data, dict):
        return bundle
    page = current_page()
    if page is not None and _publishing():
        shown = compat.notebook_view_refs()
        for gone in [r for r in _output_pages if r not in shown]:
            del _output_pages[gone]  # (outputs the page deleted since)
        _output_pages[ref] = page
    if isinstance(data.get("text/html"), str):
        data = {**data, "text/html": data["text/html"] + MISSING_JS_NOTICE}
    return data, metadata


def _load_with_each_page() -> None:
    """Route the display of every Panel and HoloViews object through :func:`_shown_on_page`
    (IPython's ``for_type`` printers; once per kernel, a no-op outside one)."""
    if not in_notebook_kernel():
        return
    import holoviews as hv
    from IPython import get_ipython
    from panel.viewable import Viewable, Viewer

    formatter = get_ipython().display_formatter.mimebundle_formatter
    for cls in (Viewable, Viewer, hv.core.Dimensioned):
        formatter.for_type(cls, _shown_on_page)


def _drop_output(ref: str) -> None:
    """Forget the notebook output whose root model is ``ref``, as Panel does when a page
    deletes an output: its models leave the views that made them."""
    _output_pages.pop(ref, None)
    compat.forget_notebook_view(ref)


def shown_here(viewables: list[Any]) -> list[Any]:
    """The ``viewables`` still displayed once their notebook outputs sent to another page
    than the one whose request the kernel is running are forgotten: a page reloaded (or
    closed) since, whose outputs are gone with it. Bokeh models belong to one document, so
    a view whose live figures are shared (the dashboard's parts) can show again only once
    its old outputs are let go. (An output still open in another browser tab or console
    stops updating.)"""
    page = current_page()
    for viewable in viewables if page is not None else ():
        for ref in list(getattr(viewable, "_models", {})):
            shown_on = _output_pages.get(ref)
            if shown_on is not None and shown_on != page:
                _drop_output(ref)
    return [v for v in viewables if getattr(v, "_models", None)]


#: Set in the thread running :func:`_unpublished`'s block.
_unpublishing = threading.local()


def _drop_message(msg: Any) -> None:
    """An ipykernel display-publisher hook that sends nothing."""
    return None


@contextmanager
def _unpublished() -> Iterator[None]:
    """Run the block with nothing it displays reaching the page, and the outputs it built
    forgotten (in a kernel; outside one, just run it).

    The display publisher's hooks are per thread (ipykernel keeps them so, for ipywidgets'
    Output): messages the page sends meanwhile, handled on other threads (ipykernel 7's
    subshells), publish as usual. (IPython's ``capture_output`` swaps the publisher for
    every thread: a click handled meanwhile failed, "'CapturingDisplayPublisher' object has
    no attribute 'set_parent'", and was lost.)"""
    from IPython import get_ipython

    publisher = getattr(get_ipython(), "display_pub", None)
    if not in_notebook_kernel() or not hasattr(publisher, "register_hook"):
        yield
        return
    before = compat.notebook_view_refs()
    publisher.register_hook(_drop_message)
    _unpublishing.on = True
    try:
        yield
    finally:
        _unpublishing.on = False
        publisher.unregister_hook(_drop_message)
        for ref in compat.notebook_view_refs() - before:
            _drop_output(ref)


_data_urls: dict[str, str] = {}


def _local_stylesheet(stylesheet: Any, dist_url: str) -> None:
    """After Panel's own patch: a stylesheet still linked to Panel's CDN, in a notebook
    (no server session) with inline resources, links its shipped file as a ``data:`` URL.

    Panel inlines stylesheets when a component is first displayed, but the layouts, themes
    and loading spinners it adds or updates later (a rebuilt sidebar, a pane updated
    during a race) link ``cdn.holoviz.org`` again; offline those requests fail. A ``data:``
    URL carries the same file, so no request leaves the page in any front end."""
    from panel.io.resources import CDN_DIST, DIST_DIR, LOCAL_DIST, use_cdn
    from panel.io.state import state

    url = str(getattr(stylesheet, "url", "") or "")
    if not url.startswith(CDN_DIST):
        return
    doc = state.curdoc
    if doc is not None and doc.session_context is not None:
        # A served page: its server serves Panel's files. A component built in a callback
        # (a lesson's Load: new run cards) has its design's stylesheets patched against a
        # model not yet in the document, so against the CDN (measured: loading.css asked
        # 5 times of cdn.holoviz.org); point them back at the server's copy.
        if use_cdn():
            return
        local = compat.template_variables(doc).get("dist_url") or (
            f"{state.rel_path}/{LOCAL_DIST}" if state.rel_path else LOCAL_DIST
        )
        if not str(local).startswith(CDN_DIST):
            stylesheet.url = str(local) + url[len(CDN_DIST) :]
        return
    if not pn.config.inline:
        return
    if url not in _data_urls:
        path = DIST_DIR / url[len(CDN_DIST) :].split("?")[0]
        if not path.is_file():
            return
        encoded = base64.b64encode(path.read_bytes()).decode("ascii")
        _data_urls[url] = f"data:text/css;base64,{encoded}"
    stylesheet.url = _data_urls[url]


def _keep_stylesheets_local() -> None:
    """Route Panel's stylesheet patching through :func:`_local_stylesheet` (once), for
    every component, ours and HoloViews' panes alike
    (:func:`ermviz.app.compat.wrap_patch_stylesheet`)."""
    compat.wrap_patch_stylesheet(_local_stylesheet)


_warming: list[threading.Thread] = []


def warm_default_race() -> None:
    """Build the dashboard's default race and advance each of its runs a few steps, in
    this thread: numba then has every kernel of that race compiled (or loaded from its
    on-disk cache), so a Start that follows plots at once."""
    from ermviz.app.serving.warmup import STEPS
    from ermviz.app.state.model import DashboardModel

    for slot in DashboardModel(notifier=lambda level, message: None).prepare():
        if slot.run is not None:
            slot.run.solver.advance(STEPS, STEPS)


def warm_in_background() -> None:
    """:func:`warm_default_race` on a thread of its own (once per process): a notebook's
    kernel then has the data and numba's kernels loaded before the first Start (measured
    cold: 5.7 s to build that race in a fresh process, and on a fresh install, whose
    on-disk cache is empty, the kernels' compilation on top; ``panel serve`` does the same
    with ``--setup ermviz/app/serving/warmup.py``)."""
    if _warming:
        return

    def work() -> None:
        try:
            warm_default_race()
        except Exception:  # only a slower first Start: the Start itself reports any error
            pass

    thread = threading.Thread(target=work, name="ermviz-warm-up", daemon=True)
    _warming.append(thread)
    thread.start()


def in_notebook_kernel() -> bool:
    """True when this code runs in a Jupyter kernel (a notebook's outputs can show)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return getattr(get_ipython(), "kernel", None) is not None


def _load_notyf() -> None:
    """Define ``window.Notyf`` (the toasts' library, shipped in Panel's dist) in the page.

    notyf.min.js declares ``var Notyf``; Panel's inline load runs each library inside a
    function, where that declaration stays local, so ``window.Notyf`` was never defined and
    no toast showed ("Notyf is not defined"). Here the global is set explicitly."""
    if not in_notebook_kernel():
        return
    from IPython.display import publish_display_data
    from panel.io.notebook import LOAD_MIME
    from panel.io.resources import DIST_DIR

    path = DIST_DIR / "bundled" / "notificationarea" / "notyf@3" / "notyf.min.js"
    if not path.exists():  # another Panel: its own load is all there is
        return
    source = path.read_text(encoding="utf-8")
    js = (
        "if (window.Notyf === undefined) { (function () {\n"
        f"{source}\nwindow.Notyf = Notyf; }})(); }}"
    )
    # As Panel's own load: the pyviz extension of JupyterLab and Notebook 7 runs this type.
    publish_display_data({LOAD_MIME: js, "application/javascript": js})


_inline_sheets: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class LiveHTML(pn.pane.HTML):
    """An HTML pane updated during a race: a new text sends the text alone, and its
    stylesheets stay inline in a notebook.

    Panel rebuilds a pane's properties on each update, linking its stylesheets (theme,
    loading spinner) to its CDN again, outside the inline resources of the first display;
    here they become inline stylesheets, one per document and address (served pages keep
    Panel's own, which their server serves)."""

    _text_update = False

    def _update(self, ref: str, model: Any) -> None:
        # A new text only: the pane's stylesheets stay those of its first display. Panel
        # resends them with every text, and its design lists them one way at creation and
        # another at update (the theme's default.css added, then dropped again), so each
        # update of a live pane reloaded its stylesheets in the browser (measured, 0.1-0.5 s
        # of BokehJS per message on this machine: most of the wait from Start to the first
        # point) and made the server recompute the document's model graph.
        self._text_update = True
        try:
            super()._update(ref, model)
        finally:
            self._text_update = False

    def _get_properties(self, doc: Any) -> dict[str, Any]:
        props = super()._get_properties(doc)
        if self._text_update:
            props.pop("stylesheets", None)
            return props
        sheets = props.get("stylesheets")
        if not sheets or doc is None or doc.session_context is not None or not pn.config.inline:
            return props
        from bokeh.models import ImportedStyleSheet
        from panel.io.notebook import replace_inline_css

        cache = _inline_sheets.setdefault(doc, {})
        out = []
        for sheet in sheets:
            if isinstance(sheet, ImportedStyleSheet):
                url = str(sheet.url)
                if url not in cache:
                    cache[url] = replace_inline_css(sheet)
                sheet = cache[url]
            out.append(sheet)
        props["stylesheets"] = out
        return props


class _KeepUnsent:
    """A document callback of one notebook output: it puts back on the document's held
    events the changes a notebook would otherwise lose.

    In a notebook, changes made to Bokeh models directly (a race's sources renamed,
    streamed rows, figures retitled) wait on the output's held document until a push sends
    them (Panel's own updates, :func:`panel.io.push_notebook`). Panel handles each message
    from the page with ``doc.hold(); apply; doc.unhold()``, and that unhold hands every
    waiting change to the document's callbacks, where nothing sends it: the changes were
    lost. Since ipykernel 7 the front ends send widget messages on a subshell, a second
    thread, so such a message can arrive in the middle of a Start (seen in CI: a race's
    sources kept their idle names in the page while their rows arrived, so nothing was
    drawn). Put back, they leave with the next push. Changes that came from the page itself
    (their setter is this output's comm) are not sent back."""

    def __init__(self, doc: Any, comm_id: str) -> None:
        self._doc = weakref.ref(doc)
        self.comm_id = comm_id

    #: What is kept: property changes and data changes (not roots added, titles, messages).
    KEPT = (ModelChangedEvent, ColumnDataChangedEvent, ColumnsStreamedEvent, ColumnsPatchedEvent)

    def __call__(self, event: Any) -> None:
        if not isinstance(event, self.KEPT) or getattr(event, "setter", None) == self.comm_id:
            return
        doc = self._doc()
        if doc is not None:
            # (atomic: the page's thread may be handling a message meanwhile)
            compat.hold_event(doc, event)


def keep_unsent_changes(doc: Any, comm: Any) -> None:
    """Let no change to ``doc`` (a notebook output's document, shown over ``comm``) be lost
    before it is pushed (:class:`_KeepUnsent`), no click held back by a message the kernel
    dropped (:func:`acknowledge_comm_opens`) and no message out of order
    (:func:`order_comm_messages`); a no-op for a served page or when done."""
    if comm is None or doc is None or doc.session_context is not None:
        return
    acknowledge_comm_opens()
    order_comm_messages()
    if any(isinstance(cb, _KeepUnsent) for cb in doc.callbacks.change_callbacks()):
        return
    doc.on_change(_KeepUnsent(doc, comm.id))


def _acking(client_comm: type) -> type:
    """``client_comm`` (a pyviz_comms page-to-kernel comm class) made to acknowledge its
    opening (see :func:`acknowledge_comm_opens`)."""

    class AckingComm(client_comm):  # type: ignore[misc, valid-type]
        """A page-to-kernel comm that, once the kernel has opened it, tells the page it is
        ready (the "Ready" Panel's page waits for after each message it sends)."""

        _ermviz_acks = True

        def _handle_open(self, comm: Any, msg: Any) -> None:
            super()._handle_open(comm, msg)
            try:
                self.send(metadata={"msg_type": "Ready"})
            except Exception:  # (a comm closed meanwhile: nothing is waiting)
                pass

    AckingComm.__name__ = AckingComm.__qualname__ = f"Acking{client_comm.__name__}"
    return AckingComm


def acknowledge_comm_opens() -> None:
    """Make every Panel output's page-to-kernel comm acknowledge its opening (once per
    kernel; a no-op outside one).

    Why: JupyterLab 4.4+ and Notebook 7.4+ send a comm's messages on a kernel *subshell*
    (ipykernel 7) once one exists, but its ``comm_open`` on the main shell, behind the cells
    still running. During a Run All, an output's first message (its figures' ranges and
    sizes) reached the subshell before the kernel knew the comm and was dropped ("No such
    comm", measured in Notebook 7.6 with ipykernel 7.4). Panel's page then waits up to 5 s
    for the answer to that message and holds every later change meanwhile, a click
    included, until the next change: a Start pressed in those seconds was never run (the
    first Start failed in 6 of 21 runs of ``tests/test_jupyter_browser.py``). The "Ready"
    sent when the kernel opens the comm releases the page, and whatever it held leaves
    then."""
    if not in_notebook_kernel():
        return
    import panel.io.notebook
    import pyviz_comms

    # Panel's own manager (binary messages) and pyviz_comms' (HoloViews' outputs).
    for manager in (
        getattr(panel.io.notebook, "JupyterCommManagerBinary", None),
        pyviz_comms.JupyterCommManager,
    ):
        client_comm = getattr(manager, "client_comm", None)
        if client_comm is not None and not getattr(client_comm, "_ermviz_acks", False):
            manager.client_comm = _acking(client_comm)


#: Held while the parts of one Bokeh message go to a notebook output, and while an output's
#: kernel-to-page comm opens (:func:`order_comm_messages`).
_SEND_LOCK = threading.RLock()


class _Waiting:
    """What an output's kernel-to-page comm holds until the page opens it: the messages
    sent meanwhile, in order (:func:`order_comm_messages`)."""

    def __init__(self) -> None:
        self.messages: list[tuple[Any, Any, Any]] = []

    def send(self, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
        self.messages.append((data, metadata, buffers))

    def close(self) -> None:
        self.messages.clear()


def _ordered(server_comm: type) -> type:
    """``server_comm`` (pyviz_comms' kernel-to-page comm class) made to keep the messages
    sent before the page opened it, and send them first, in order, once it does."""

    class OrderedComm(server_comm):  # type: ignore[misc, valid-type]
        _ermviz_orders = True

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._comm = _Waiting()  # (Panel sends at once, no retry, when one is set)

        def init(self) -> None:
            with _SEND_LOCK:
                waiting = self._comm if isinstance(self._comm, _Waiting) else None
                super().init()
                for data, metadata, buffers in waiting.messages if waiting else ():
                    self._comm.send(data, metadata=metadata, buffers=buffers)

    OrderedComm.__name__ = OrderedComm.__qualname__ = f"Ordered{server_comm.__name__}"
    return OrderedComm


def open_from_kernel(comm: Any) -> None:
    """Open an output's kernel-to-page ``comm`` from the kernel's side if the page has not
    yet (:func:`ermviz.app.live_fit`: the page cannot while the kernel runs the cell)."""
    opened = compat.kernel_comm(comm)
    if opened is None or isinstance(opened, _Waiting):
        comm.init()


def order_comm_messages() -> None:
    """Make the messages the kernel sends to Panel's outputs arrive whole and in order
    (once per kernel; a no-op outside one).

    Why: a Bokeh message reaches an output in several comm messages (header, metadata,
    content, buffers), and since ipykernel 7 two threads send them: the kernel's event loop
    (a race's streamer) and a subshell answering the page (its first message, a click).
    Interleaved, the page read one message's header as another's content ("TypeError: s is
    not iterable" in BokehJS) and every later update failed: measured after a reload with a
    race running, the dashboard shown again stopped updating in 3 of 3 test runs on a
    loaded machine. And before the page opens an output's comm, Panel retries each message
    every 0.1 s on a timer of its own, so they arrived out of order (a stale status, rows
    streamed in the wrong order). Here the parts of a message are sent under one lock, and
    the messages before the page opened the comm wait in order and go first."""
    if not in_notebook_kernel():
        return
    import panel.io.notebook as notebook
    import pyviz_comms

    send = notebook.send
    if not getattr(send, "_ermviz_whole", False):

        def whole(comm: Any, msg: Any, _send: Any = send) -> None:
            with _SEND_LOCK:
                _send(comm, msg)

        whole._ermviz_whole = True  # type: ignore[attr-defined]
        notebook.send = whole  # (push() looks it up in its module at each call)
    for manager in (
        getattr(notebook, "JupyterCommManagerBinary", None),
        pyviz_comms.JupyterCommManager,
    ):
        server_comm = getattr(manager, "server_comm", None)
        if server_comm is not None and not getattr(server_comm, "_ermviz_orders", False):
            manager.server_comm = _ordered(server_comm)
