"""Declarations of settings: declared once, validated and listed everywhere.

Each problem, method and step rule declares its settings as :class:`Setting` objects
(name, type, default, allowed range, help). The CLI's ``--set KEY=VALUE`` and
``methods`` listing, the dashboard's widgets and sweep configs all read the same
declarations, so adding a setting is one line.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ermviz.errors import SettingError


@dataclass(frozen=True)
class Setting:
    """One tunable parameter.

    Parameters
    ----------
    name : str
        Key used by ``--set name=value`` and in traces.
    kind : {"float", "int", "bool", "choice", "str"}
    default : Any
        Value used when the user gives none (``None`` means "derived", see ``help``).
    low, high : float, optional
        Allowed range for numbers; ``low_open`` / ``high_open`` make a bound strict.
    choices : tuple of str, optional
        Allowed values for ``kind="choice"``.
    help : str
        One line shown by ``python -m ermviz methods`` and as widget tooltips.
    range_note : str, optional
        Why the range is what it is, appended to an out-of-range error (e.g. the float64
        limit behind a set's largest radius).
    """

    name: str
    kind: str
    default: Any
    help: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] | None = None
    range_note: str = ""

    def range_text(self) -> str:
        """Human-readable allowed range, e.g. ``(0, inf)`` or ``{fw, afw}``."""
        if self.kind == "choice":
            return "{" + ", ".join(self.choices or ()) + "}"
        if self.kind == "bool":
            return "{true, false}"
        if self.kind == "str":
            return "text"
        lo = "-inf" if self.low is None else _fmt(self.low)
        hi = "inf" if self.high is None else _fmt(self.high)
        left = "(" if (self.low is None or self.low_open) else "["
        right = ")" if (self.high is None or self.high_open) else "]"
        return f"{left}{lo}, {hi}{right}"

    def parse(self, value: Any, *, where: str = "") -> Any:
        """Convert ``value`` (a string from the command line or a Python value) and check it.

        Raises
        ------
        SettingError
            With a message that names the setting, the value and the allowed range.
        """
        label = where or self.name
        if value is None and self.default is None:
            return None
        try:
            if self.kind == "float":
                out: Any = float(value)
            elif self.kind == "int":
                if isinstance(value, float) and not value.is_integer():
                    raise ValueError
                out = int(str(value)) if isinstance(value, str) else int(value)
            elif self.kind == "bool":
                out = _to_bool(value)
            elif self.kind == "choice":
                out = str(value)
            else:
                out = str(value)
        except (TypeError, ValueError):
            raise SettingError(
                f"{label}={value!r} is not a valid {self.kind}; allowed: {self.range_text()}"
            ) from None
        if self.kind == "choice" and out not in (self.choices or ()):
            raise SettingError(f"{label}={out!r} is not one of {self.range_text()}")
        if self.kind in ("float", "int"):
            if isinstance(out, float) and math.isnan(out):
                raise SettingError(f"{label} is NaN; allowed range {self.range_text()}")
            if isinstance(out, float) and math.isinf(out):
                # "(0, inf)" excludes inf: an infinite radius or C breaks the solvers.
                raise SettingError(
                    f"{label}={out} is not a finite number; allowed range {self.range_text()}"
                )
            if not self._in_range(out):
                note = f" ({self.range_note})" if self.range_note else ""
                raise SettingError(
                    f"{label}={_fmt(out)} is out of range; allowed range {self.range_text()}{note}"
                )
        return out

    def _in_range(self, v: float) -> bool:
        if self.low is not None and (v < self.low or (self.low_open and v == self.low)):
            return False
        if self.high is not None and (v > self.high or (self.high_open and v == self.high)):
            return False
        return True


def _fmt(x: float) -> str:
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:g}"


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(value)


def resolve_settings(
    declared: Iterable[Setting], given: Mapping[str, Any], *, owner: str
) -> dict[str, Any]:
    """Defaults overlaid with ``given``, every value validated.

    Unknown keys raise :class:`SettingError` listing the keys ``owner`` accepts.
    """
    decl = {s.name: s for s in declared}
    unknown = sorted(set(given) - set(decl))
    if unknown:
        known = ", ".join(sorted(decl)) or "none"
        raise SettingError(f"unknown setting {unknown[0]!r} for {owner}; its settings: {known}")
    out = {}
    for name, s in decl.items():
        out[name] = s.parse(given[name], where=name) if name in given else s.default
    return out


def with_defaults(declared: Iterable[Setting], settings: Mapping[str, Any]) -> dict[str, Any]:
    """Defaults overlaid with ``settings``, trusted: for a solver whose settings were
    resolved at the boundary (:func:`ermviz.registry.resolve_method`), or that code built
    directly with some of them."""
    return {**{s.name: s.default for s in declared}, **settings}


def parse_assignments(items: Iterable[str]) -> dict[str, str]:
    """Turn ``["C=1", "radius=10"]`` into a dict; a malformed item raises SettingError."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SettingError(f"--set {item!r} is not KEY=VALUE (e.g. --set armijo_c=0.01)")
        out[key.strip()] = value.strip()
    return out
