"""Every Panel and Bokeh internal the dashboard relies on, in one place, with the versions
it was checked against.

The dashboard uses Panel's and Bokeh's public API, and, where that could not do the job
(the reason is at each use), a few internals. Those are all here:

* the private attributes it reads or writes, each behind a function of this module:
  :func:`document_locked` (a served session's pending writes), :func:`frozen_graph`
  (Bokeh's model-graph freeze), :func:`displayed_models` and :func:`notebook_views`
  (where a viewable is displayed), :func:`notebook_view_refs` and
  :func:`forget_notebook_view` (Panel's registry of notebook outputs),
  :func:`extension_loaded`, :func:`kernel_comm`,
  :func:`template_variables`, :func:`hold_event` (a notebook document's held events);
* the one monkeypatch, :func:`wrap_patch_stylesheet` (Panel's stylesheet patching);
* the private hooks ermviz's subclasses override (a widget's ``_process_param_change``,
  ``FileDownload._sync_data``, ``HTML._update``/``_get_properties``, the Fast design's
  ``_resources``, the login handlers' templates, a comm's ``_handle_open``) and the
  undocumented module names it imports: listed in :data:`ASSUMPTIONS`.

:data:`SUPPORTED` holds the version ranges ``pyproject.toml`` declares for Panel and Bokeh;
``tests/test_compat.py`` checks that the installed versions fall inside them, that
``pyproject.toml`` states the same ranges, and that every assumption holds
(:func:`broken_assumptions`), so a Panel or Bokeh release that moves one of these fails
one named test instead of a page in a browser. Raising an upper bound means running that
test (and the browser tests) on the new release first.

This module imports Panel and Bokeh only inside its functions, and nothing of ermviz.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterator
from typing import Any

#: The versions ``pyproject.toml`` accepts, as ``(lowest, first excluded)``: the upper bound
#: is the next minor release, which nobody has checked :data:`ASSUMPTIONS` against.
SUPPORTED: dict[str, tuple[str, str]] = {
    "panel": ("1.4", "1.10"),
    "bokeh": ("3.4", "3.10"),
}
#: The versions :data:`ASSUMPTIONS` and the browser tests were last checked with.
CHECKED_WITH: dict[str, str] = {"panel": "1.9.4", "bokeh": "3.9.2"}

#: Private or undocumented names the dashboard relies on: ``(module, attribute path, why)``.
#: An attribute path may name a class attribute (``Class.attr``) or an attribute of an
#: instance made by :func:`_instance` (``Document().models._push_freeze``).
ASSUMPTIONS: tuple[tuple[str, str, str], ...] = (
    # Read or written through this module's functions.
    ("bokeh.server.session", "ServerSession.__init__:_pending_writes", "document_locked"),
    ("bokeh.document", "Document().models._push_freeze", "frozen_graph"),
    ("bokeh.document", "Document().models._freeze_count", "frozen_graph"),
    ("bokeh.document", "Document().models.invalidate", "frozen_graph"),
    ("bokeh.document", "Document().models.recompute", "frozen_graph"),
    ("bokeh.document", "Document().callbacks._held_events", "hold_event"),
    ("bokeh.document", "Document()._template_variables", "template_variables"),
    ("panel.io.state", "state._views", "notebook_views"),
    ("panel.pane", "HTML()._models", "displayed_models"),
    ("panel.config", "panel_extension._loaded", "extension_loaded"),
    ("pyviz_comms", "Comm.__init__:_comm", "kernel_comm"),
    ("panel.viewable", "Viewable._cleanup", "forget_notebook_view"),
    ("panel.io.resources", "patch_stylesheet", "wrap_patch_stylesheet"),
    ("panel.reactive", "patch_stylesheet", "wrap_patch_stylesheet"),
    # Private hooks overridden by ermviz's subclasses.
    ("panel.widgets", "Select._process_param_change", "widgets.Select: plain descriptions"),
    ("panel.widgets", "IntInput._process_param_change", "widgets.IntInput"),
    ("panel.widgets", "FloatInput._process_param_change", "widgets.FloatInput"),
    ("panel.widgets", "TextInput._process_param_change", "widgets.TextInput"),
    ("panel.widgets", "FileDownload._sync_data", "widgets.GuardedDownload"),
    ("panel.pane", "HTML._update", "notebook.LiveHTML: a new text alone"),
    ("panel.pane", "HTML._get_properties", "notebook.LiveHTML: inline stylesheets"),
    ("panel.theme.fast", "Fast._resources", "notebook.OfflineFast: no web font"),
    ("panel.viewable", "Viewable._repr_mimebundle_", "page.Dashboard: a notice shown instead"),
    ("panel.auth", "BasicLoginHandler._login_endpoint", "login.LoginHandler"),
    ("panel.auth", "BasicLoginHandler._login_template", "login.LoginHandler"),
    ("panel.auth", "LogoutHandler._logout_template", "login.LogoutHandler"),
    ("pyviz_comms", "JupyterCommManager.client_comm._handle_open", "notebook: comm acks"),
    # Undocumented module names imported where they are used.
    ("panel.io.notebook", "JupyterCommManagerBinary", "notebook.acknowledge_comm_opens"),
    ("panel.io.notebook", "LOAD_MIME", "notebook: Notyf's load"),
    ("panel.io.notebook", "push", "live.live_fit"),
    ("panel.io.notebook", "EXEC_MIME", "notebook: an output's page"),
    ("panel.io.notebook", "replace_inline_css", "notebook.LiveHTML"),
    ("panel.io.notebook", "patch_inline_stylesheets", "race_view: inline stylesheets"),
    ("panel.io.resources", "CDN_DIST", "notebook: local stylesheets"),
    ("panel.io.resources", "DIST_DIR", "notebook: local stylesheets, Notyf"),
    ("panel.io.resources", "LOCAL_DIST", "notebook: local stylesheets"),
    ("panel.io.resources", "use_cdn", "notebook: local stylesheets"),
    ("panel.io.state", "state.rel_path", "notebook: local stylesheets"),
    ("panel.io.callbacks", "PeriodicCallback", "streaming: the session's pull"),
)


def _instance(expr: str, module: Any) -> Any:
    """The object an assumption's first step names: ``Document()`` makes one."""
    if expr.endswith("()"):
        return getattr(module, expr[:-2])()
    return getattr(module, expr)


def broken_assumptions() -> list[str]:
    """The entries of :data:`ASSUMPTIONS` the installed Panel and Bokeh do not satisfy,
    each as ``module: attribute path (why)``; empty when all hold."""
    broken = []
    for module_name, path, why in ASSUMPTIONS:
        try:
            module = importlib.import_module(module_name)
            if ":" in path:  # an attribute an __init__ sets: named in its source
                import inspect

                func, name = path.split(":")
                owner, method = func.split(".")
                source = inspect.getsource(getattr(getattr(module, owner), method))
                ok = f"self.{name}" in source
            else:
                first, *rest = path.split(".")
                obj = _instance(first, module)
                for name in rest:
                    obj = getattr(obj, name)
                ok = True
        except (ImportError, AttributeError, TypeError, OSError):
            ok = False
        if not ok:
            broken.append(f"{module_name}: {path} ({why})")
    return broken


def version_problems() -> list[str]:
    """Why the installed Panel or Bokeh is outside :data:`SUPPORTED` (empty when both are
    inside)."""
    from importlib.metadata import version

    from packaging.version import Version

    out = []
    for name, (low, high) in SUPPORTED.items():
        have = Version(version(name))
        if not Version(low) <= have < Version(high):
            out.append(f"{name} {have} is outside the supported >={low},<{high}")
    return out


# -- private attributes, read or written --------------------------------------------------


def document_locked(doc: Any) -> bool:
    """Whether Bokeh's lock on ``doc`` is held now (True outside a server: no lock).

    Panel dispatches a click that arrives while one of its change events is still
    pending through a coroutine, outside the document lock; a callback there that
    changes Bokeh models directly (the streamer's sources) fails in Bokeh with
    "_pending_writes should be non-None" (seen: a lesson's Load right after a Stop).
    Bokeh has no public test of the lock: its session's ``_pending_writes`` is one.
    """
    session = getattr(getattr(doc, "session_context", None), "_session", None)
    return session is None or getattr(session, "_pending_writes", None) is not None


@contextlib.contextmanager
def frozen_graph() -> Iterator[None]:
    """Defer the served document's model-graph recomputation to the end of the block, and
    skip it when the block added or removed no model.

    Bokeh's own ``freeze`` recomputes the whole graph on exit, changed or not: measured
    0.2-0.5 s with this dashboard, most of a second Start whose figures are all reused.
    In a notebook (no session) nothing is frozen: there, a frozen hold kept the Race tab's
    new figures out of the patch sent to the page. Uses the document's model manager's
    ``_push_freeze``/``_freeze_count`` and hears ``invalidate``, the one call a graph change
    makes (``bokeh.model``).
    """
    import panel as pn

    doc = pn.state.curdoc
    served = doc is not None and doc.session_context is not None
    models = getattr(doc, "models", None) if served else None
    if models is None or not hasattr(models, "_push_freeze"):
        yield
        return
    changed = False
    invalidate = models.invalidate  # an enclosing block's, when nested: it hears too
    outer = models.__dict__.get("invalidate")

    def note_change() -> None:
        nonlocal changed
        changed = True
        invalidate()

    models.invalidate = note_change
    models._push_freeze()
    try:
        yield
    finally:
        if outer is None:
            del models.invalidate
        else:
            models.invalidate = outer
        models._freeze_count -= 1
        if models._freeze_count == 0 and changed:
            models.recompute()


def displayed_models(viewable: Any) -> list[Any]:
    """The Bokeh root models of each current display of ``viewable`` (a notebook output or
    a served page): Panel keeps them in the viewable's private ``_models``."""
    return [model for model, _ in list(getattr(viewable, "_models", {}).values())]


def notebook_views(viewable: Any) -> list[tuple[Any, Any]]:
    """(document, comm) of each display of ``viewable`` in a notebook: Panel's registry of
    notebook outputs, ``state._views`` (ref -> (viewable, root, doc, comm))."""
    import panel as pn

    views = pn.state._views
    return [views[ref][2:] for ref in list(getattr(viewable, "_models", {})) if ref in views]


def extension_loaded() -> bool:
    """Whether ``pn.extension`` has run in this notebook kernel (its ``_loaded`` flag)."""
    import panel as pn

    return bool(getattr(pn.extension, "_loaded", False))


def notebook_view_refs() -> set[str]:
    """The root-model ids of every notebook output Panel knows (``state._views``' keys)."""
    import panel as pn

    return set(pn.state._views)


def forget_notebook_view(ref: str) -> None:
    """Forget the notebook output whose root model is ``ref``, as Panel does when a page
    deletes an output: out of ``state._views``, its models out of the viewable that made
    them (``Viewable._cleanup``)."""
    import panel as pn

    view = pn.state._views.pop(ref, None)
    if view is not None:
        view[0]._cleanup(view[1])


def kernel_comm(comm: Any) -> Any:
    """The kernel-side comm of a pyviz_comms comm (its ``_comm``: None until opened)."""
    return comm._comm


def template_variables(doc: Any) -> dict[str, Any]:
    """The variables Panel renders a served document's page with (Bokeh's
    ``Document._template_variables``): the live dict, to read or fill."""
    return doc._template_variables


def hold_event(doc: Any, event: Any) -> None:
    """Put ``event`` back on ``doc``'s held events, to leave with its next push
    (``doc.callbacks._held_events``; ``list.append`` is atomic across threads)."""
    doc.callbacks._held_events.append(event)


# -- the one monkeypatch ------------------------------------------------------------------


def wrap_patch_stylesheet(after: Callable[[Any, str], None]) -> None:
    """Make Panel call ``after(stylesheet, dist_url)`` after each of its own
    ``patch_stylesheet`` calls (once; later calls change nothing).

    Panel's components call ``patch_stylesheet`` (imported by name into ``panel.reactive``)
    on every stylesheet they link, and its designs import it from ``panel.io.resources`` at
    call time (Panel 1.4 imported it into ``panel.theme.base`` too: wrapped there when
    present); wrapping it in those modules covers every component, ours and HoloViews'
    panes alike. Panel has no hook for it."""
    import panel.io.resources
    import panel.reactive
    import panel.theme.base

    for module in (panel.io.resources, panel.reactive, panel.theme.base):
        original = getattr(module, "patch_stylesheet", None)
        if original is None or getattr(original, "_ermviz_local", False):
            continue

        def patched(stylesheet: Any, dist_url: str, _original: Any = original) -> None:
            _original(stylesheet, dist_url)
            after(stylesheet, dist_url)

        patched._ermviz_local = True  # type: ignore[attr-defined]
        module.patch_stylesheet = patched
