"""What the dashboard tells its user: one-line error messages, solver notices in the
dashboard's wording, and the Panel toasts that show them.

Errors a user can cause (bad data, a method that does not solve the chosen problem, an
out-of-range value) never escape as exceptions: they become a one-line message
(:func:`one_line`) shown by a model's ``notify`` (see
:meth:`~ermviz.app.state.model.DashboardModel.notify`), by default as a toast
(:func:`_panel_notifier`).
"""

from __future__ import annotations

import re

from ermviz.errors import ErmvizError

#: Command-line wording in solver notices (written for the CLI, see ``Solver.notices``) and
#: the dashboard control doing the same; the criterion stays with the method.
_CLI_TO_DASHBOARD = (
    (re.compile(r"--standardize\b"), "the 'standardize features' checkbox"),
    (re.compile(r"--method ([\w-]+)"), r"a run with method \1"),
)


def one_line(exc: BaseException) -> str:
    """A user-facing one-line message for ``exc`` (ermviz errors are one line already)."""
    if isinstance(exc, ErmvizError):
        return str(exc)
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _panel_notifier(level: str, message: str) -> None:
    """Show ``message`` as a Panel toast when a session with notifications exists."""
    try:
        import panel as pn
    except ImportError:  # pragma: no cover - panel is a dependency
        return
    notifications = getattr(pn.state, "notifications", None)
    if notifications is not None:
        getattr(notifications, level, notifications.info)(message, duration=8000)


def dashboard_wording(notice: str) -> str:
    """``notice`` with its command-line options named as the dashboard's controls."""
    for pattern, words in _CLI_TO_DASHBOARD:
        notice = pattern.sub(words, notice)
    return notice
