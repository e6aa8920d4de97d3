"""The dashboard in a Jupyter notebook (JupyterLab 4, Notebook 7, VS Code).

:func:`notebook_extension` is the one call a notebook makes before it displays the
dashboard, a part of it or a HoloViews plot::

    from ermviz.app import Dashboard, notebook_extension

    notebook_extension()
    Dashboard().panel()

It loads HoloViews' Bokeh backend and Panel's extensions with every JavaScript and
stylesheet *inline* (inside the notebook's output), so a notebook renders offline and makes
no request to a CDN, and it enables Panel's notifications (the dashboard's toasts).
"""

from __future__ import annotations

import base64
import threading
import weakref
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


def notebook_extension(*extensions: str, **params: Any) -> None:
    """Load what the dashboard needs in a notebook, offline: Panel's extensions
    (:data:`EXTENSIONS` and ``extensions``) and HoloViews' Bokeh backend, with inline
    resources and notifications; ``params`` go to :func:`panel.extension`.

    Call it once, in the notebook's first cells, before anything is displayed (calling it
    again is harmless). Outside a notebook it only configures Panel.
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
    _load_notyf()
    with resources.set_resource_mode("inline"):
        # Panel first, with notifications on: its load holds Notyf (the toasts' library);
        # loaded after HoloViews' it came as a reload without it ("Notyf is not defined").
        pn.extension(*EXTENSIONS, *extensions, notifications=True, inline=True, **params)
        # Then HoloViews' display hooks, inline too (by default it loads from the CDN).
        hv.extension("bokeh", inline=True, logo=False)


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
    before it is pushed (:class:`_KeepUnsent`), and no click held back by a message the
    kernel dropped (:func:`acknowledge_comm_opens`); a no-op for a served page or when
    done."""
    if comm is None or doc is None or doc.session_context is not None:
        return
    acknowledge_comm_opens()
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
