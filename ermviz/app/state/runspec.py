"""The racing runs as the user sets them up: :class:`RunSpec` (method + step rule + that
pair's settings), the settings' validation, and a problem's default race.

Settings are never hard-coded: every value goes through the :class:`~ermviz.settings.Setting`
declarations of the problem, method and step rule, so a new setting in the core shows up
in the dashboard without a change here. An invalid value raises a one-line
:class:`~ermviz.errors.SettingError`, which the widgets revert and notify.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import param

from ermviz.errors import SettingError
from ermviz.registry import METHODS, STEP_RULES, get_problem
from ermviz.settings import Setting


def default_specs(problem: str) -> list[RunSpec]:
    """New run specs for ``problem``'s declared default race (``Problem.default_race``);
    a problem declaring none races its first method alone."""
    race = [
        (m, s)
        for m, s in get_problem(problem).default_race
        if m in METHODS and problem in METHODS[m].problems
    ]
    if not race:
        first = next((m for m, spec in METHODS.items() if problem in spec.problems), None)
        race = [(first, METHODS[first].step)] if first is not None else []
    return [RunSpec(method=m, step=s) for m, s in race]


def settings_of(method: str, step: str) -> list[Setting]:
    """Declared settings of ``method`` together with those of its step rule ``step``."""
    out = list(METHODS[method].settings) if method in METHODS else []
    names = {s.name for s in out}
    if step in STEP_RULES:
        out += [s for s in STEP_RULES[step].settings if s.name not in names]
    return out


def parse_settings(decl: Iterable[Setting], given: dict[str, Any], owner: str) -> dict[str, Any]:
    """Validate ``given`` against ``decl``; values equal to the default are dropped.

    Raises :class:`SettingError` (one line) for an unknown name or a bad value.
    """
    by_name = {s.name: s for s in decl}
    out = {}
    for name, value in given.items():
        if name not in by_name:
            raise SettingError(
                f"unknown setting {name!r} for {owner}; its settings: "
                f"{', '.join(sorted(by_name)) or 'none'}"
            )
        parsed = by_name[name].parse(value, where=name)
        if parsed is not None and parsed != by_name[name].default:
            out[name] = parsed
    return out


def valid_settings(decl: Iterable[Setting], given: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``given`` that ``decl`` declares and accepts (defaults dropped).

    Used when the owner changes (a new problem, method or step rule): a setting the new
    owner does not declare, or declares with other choices or range, is dropped rather than
    carried over (it would fail the next race with a message about the previous set-up).
    """
    by_name = {s.name: s for s in decl}
    out = {}
    for name, value in given.items():
        if name not in by_name:
            continue
        try:
            parsed = by_name[name].parse(value, where=name)
        except SettingError:
            continue
        if parsed is not None and parsed != by_name[name].default:
            out[name] = parsed
    return out


class RunSpec(param.Parameterized):
    """One racing run as the user set it up: method, step rule and that pair's settings.

    ``settings`` holds only values that differ from the declared defaults, already
    validated; :meth:`set_setting` is the way to change one.
    """

    method = param.Selector(default="fw", objects=list(METHODS), doc="Method (fw, afw, pfw ...)")
    step = param.Selector(default="exact", objects=list(STEP_RULES), doc="Step rule")
    settings = param.Dict(default={}, doc="Validated non-default method and step settings")

    def __init__(self, **params: Any) -> None:
        settings = params.pop("settings", {}) or {}
        super().__init__(**params)
        self._check_step()
        self.settings = parse_settings(self.declared(), settings, self.owner)

    @property
    def owner(self) -> str:
        return f"{self.method} with step {self.step}"

    def declared(self) -> list[Setting]:
        """The settings this method and step rule declare (widgets are built from these)."""
        return settings_of(self.method, self.step)

    @param.depends("method", "step", watch=True)
    def _on_pair(self) -> None:
        self._check_step()
        kept = valid_settings(self.declared(), self.settings)
        if kept != self.settings:
            self.settings = kept

    def _check_step(self) -> None:
        spec = METHODS[self.method]
        if self.step not in spec.step_rules:
            self.step = spec.step

    def set_setting(self, name: str, value: Any) -> None:
        """Set one declared setting (``None`` or the default removes the override)."""
        self.settings = with_setting(self.settings, self.declared(), name, value, self.owner)

    def value_of(self, name: str) -> Any:
        """Current value of a declared setting (the default when not overridden)."""
        if name in self.settings:
            return self.settings[name]
        decl = {s.name: s for s in self.declared()}
        return decl[name].default

    def copy(self) -> RunSpec:
        return RunSpec(method=self.method, step=self.step, settings=dict(self.settings))

    def as_tuple(self) -> tuple[str, str, tuple[tuple[str, Any], ...]]:
        return self.method, self.step, tuple(sorted(self.settings.items()))


def with_setting(
    current: dict[str, Any], declared: list[Setting], name: str, value: Any, owner: str
) -> dict[str, Any]:
    """``current`` with setting ``name`` set to ``value`` (validated against ``declared``);
    ``None`` or an empty string removes the override."""
    decl = {s.name: s for s in declared}
    if name not in decl:
        raise SettingError(
            f"unknown setting {name!r} for {owner}; its settings: "
            f"{', '.join(sorted(decl)) or 'none'}"
        )
    rest = {k: v for k, v in current.items() if k != name}
    if value is None or (isinstance(value, str) and not value.strip()):
        return rest
    return {**rest, **parse_settings([decl[name]], {name: value}, owner)}
