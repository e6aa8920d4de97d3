"""Widget helpers shared by the dashboard's views.

:func:`guard` wraps every widget callback: an exception becomes a notification (and,
during a race, a run status) instead of a frozen page (run on the event loop when Bokeh's
lock is not held: :func:`ermviz.app.compat.document_locked`); :class:`GuardedDownload` is the
download button whose guarded callback may fail. :func:`setting_widget` builds the
widget of one declared :class:`~ermviz.settings.Setting` (problem, method or step-rule
setting): invalid input is reverted and notified, never stored.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import panel as pn

from ermviz.app.compat import document_locked, frozen_graph  # noqa: F401  (its old home)
from ermviz.app.state.messages import one_line
from ermviz.app.state.model import DashboardModel
from ermviz.errors import SettingError
from ermviz.settings import Setting


def guard(model: DashboardModel, what: str) -> Callable:
    """Decorator: run a callback, turning any exception into a notification.

    A synchronous callback that Panel runs outside the document lock is run again on
    the next tick of the event loop, under the lock (see :func:`document_locked`)."""

    def wrap(fn: Callable) -> Callable:
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                try:
                    return await fn(*args, **kwargs)
                except Exception as exc:
                    model.notify(f"{what}: {one_line(exc)}")
                    return None

            return async_wrapper

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            doc = pn.state.curdoc
            if doc is not None and not document_locked(doc):
                doc.add_next_tick_callback(functools.partial(wrapper, *args, **kwargs))
                return None
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                model.notify(f"{what}: {one_line(exc)}")
                return None

        return wrapper

    return wrap


class GuardedDownload(pn.widgets.FileDownload):
    """A download button whose callback returns None when the export failed (a
    :func:`guard`-ed callback, which has notified why): then nothing is sent, so the
    browser downloads nothing.

    Panel's own button raises on None (``Cannot transfer unknown object``: a traceback in
    the server's log for a failure the user was already told about), and returning an
    empty buffer instead would hand the user an empty file under the export's name.
    """

    def _sync_data(self, fileobj: Any) -> None:
        if fileobj is None:
            return
        super()._sync_data(fileobj)


def _plain_description(params: dict[str, Any], process: Callable) -> dict[str, Any]:
    """Panel's processing of a widget's properties, with its ``description`` kept as the
    plain text it is.

    Panel renders a text description through markdown-it into a Tooltip holding an HTML
    model, two more Bokeh models per widget and page: 52 of the 331 models of a page, 26
    markdown renderings each time one is opened. Bokeh's input widgets take the text
    itself and show it as the help icon's hover title, which is all these short plain
    sentences need (no markdown in them). Panel never sees the text: given it, Panel
    renders the markdown and builds the Tooltip before they could be dropped (py-spy on a
    served page: 12 % of the sidebar's build)."""
    text = params.get("description")
    if not isinstance(text, str):
        return process(params)
    out = process({k: v for k, v in params.items() if k != "description"})
    out["description"] = text
    return out


class Select(pn.widgets.Select):
    """:class:`panel.widgets.Select` whose description is sent as plain text."""

    def _process_param_change(self, params: dict[str, Any]) -> dict[str, Any]:
        return _plain_description(params, super()._process_param_change)


class IntInput(pn.widgets.IntInput):
    """:class:`panel.widgets.IntInput` whose description is sent as plain text."""

    def _process_param_change(self, params: dict[str, Any]) -> dict[str, Any]:
        return _plain_description(params, super()._process_param_change)


class FloatInput(pn.widgets.FloatInput):
    """:class:`panel.widgets.FloatInput` whose description is sent as plain text."""

    def _process_param_change(self, params: dict[str, Any]) -> dict[str, Any]:
        return _plain_description(params, super()._process_param_change)


class TextInput(pn.widgets.TextInput):
    """:class:`panel.widgets.TextInput` whose description is sent as plain text."""

    def _process_param_change(self, params: dict[str, Any]) -> dict[str, Any]:
        return _plain_description(params, super()._process_param_change)


def setting_widget(
    s: Setting, value: Any, on_change: Callable[[str, Any], None], model: DashboardModel
) -> pn.widgets.Widget:
    """A widget for the declared setting ``s``; invalid input is reverted and notified."""
    default = "derived" if s.default is None else s.default
    tip = f"{s.help} (allowed: {s.range_text()}; default: {default})"
    common = {"label": s.name, "description": tip, "sizing_mode": "stretch_width"}
    if s.kind == "bool":
        # Checkboxes take no description: the help goes in the label's hover title.
        w = pn.widgets.Checkbox(value=bool(value), label=s.name, sizing_mode="stretch_width")
    elif s.kind == "choice":
        w = Select(options=list(s.choices or ()), value=value, **common)
    elif s.kind == "int":
        w = IntInput(value=value, **common)
    elif s.kind == "float":
        w = FloatInput(value=value, placeholder="derived" if s.default is None else "", **common)
    else:
        w = TextInput(value="" if value is None else str(value), **common)
    reverting = {"on": False}

    def changed(event: Any) -> None:
        if reverting["on"]:
            return
        try:
            on_change(s.name, event.new)
        except SettingError as exc:
            model.notify(str(exc))
            reverting["on"] = True
            try:
                w.value = event.old
            finally:
                reverting["on"] = False
        except Exception as exc:
            model.notify(f"{s.name}: {one_line(exc)}")

    w.param.watch(changed, "value")
    return w
