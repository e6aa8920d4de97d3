"""One exception type for everything a user can get wrong.

Every check at the boundary (data files, settings, CLI arguments) raises
:class:`ErmvizError` with a single-line message that names the problem and the fix.
The CLI prints that line and exits non-zero; the dashboard shows it as a notification.
Nothing inside the numba kernels validates input: they trust what the boundary let in.
"""

from __future__ import annotations


class ErmvizError(ValueError):
    """A user-facing error with a one-line message (problem and fix)."""

    def __init__(self, message: str) -> None:
        # Keep messages on one line so the CLI contract (one line on stderr) holds.
        super().__init__(" ".join(str(message).split()))


class DataError(ErmvizError):
    """A dataset could not be found, read or used as asked."""


class SettingError(ErmvizError):
    """A problem, method, step-rule or budget setting is unknown or out of range."""
