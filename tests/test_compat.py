"""The Panel and Bokeh internals the dashboard relies on (:mod:`ermviz.app.compat`): the
installed versions fall inside the ranges ``pyproject.toml`` declares, compat's
assumptions hold for them, and no other module of the app touches one of those internals
itself (issue 46: they were patched or read in 8 places, with no upper version bound)."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

from ermviz.app import compat

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "ermviz" / "app"


def _declared() -> dict[str, str]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    out = {}
    for dep in deps:
        name = re.match(r"[A-Za-z0-9_.\-]+", dep).group(0)
        out[name] = dep[len(name) :].replace(" ", "")
    return out


def test_pyproject_declares_compat_s_ranges_with_upper_bounds():
    declared = _declared()
    for name, (low, high) in compat.SUPPORTED.items():
        assert declared[name] == f">={low},<{high}", (name, declared[name])


def test_the_installed_panel_and_bokeh_fall_inside_the_supported_ranges():
    assert compat.version_problems() == []


def test_the_version_check_sees_a_version_outside(monkeypatch):
    monkeypatch.setitem(compat.SUPPORTED, "panel", ("0.1", "1.0"))
    (problem,) = compat.version_problems()
    assert problem.startswith("panel ") and "outside the supported >=0.1,<1.0" in problem


def test_every_assumption_holds_on_the_installed_versions():
    assert compat.broken_assumptions() == []


def test_the_assumption_check_sees_a_missing_name(monkeypatch):
    planted = (
        ("bokeh.document", "Document().models._no_such_freeze", "planted"),
        ("panel.widgets", "Select._no_such_hook", "planted"),
        ("panel.no_such_module", "x", "planted"),
        ("bokeh.server.session", "ServerSession.__init__:_no_such_attr", "planted"),
    )
    monkeypatch.setattr(compat, "ASSUMPTIONS", (*compat.ASSUMPTIONS, *planted))
    assert compat.broken_assumptions() == [f"{m}: {p} (planted)" for m, p, _ in planted]


def _private_names() -> set[str]:
    """The private attribute names compat lists (``_models``, ``_push_freeze``, ...)."""
    names = set()
    for _, path, _ in compat.ASSUMPTIONS:
        for part in re.split(r"[.:]", path):
            part = part.removesuffix("()")
            if part.startswith("_") and not part.endswith("_"):
                names.add(part)
    return names


def _direct_reads(root: Path) -> list[str]:
    """Where a module under ``root`` (not compat) reads a private name compat lists, other
    than as an override (``def _update``), through ``super()``/``self``, or as the class
    attribute of the class compat names (``Fast._resources``)."""
    names = _private_names()
    owners = {p.split(".")[0] for _, p, _ in compat.ASSUMPTIONS if "." in p}
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "compat.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Attribute) or node.attr not in names:
                continue
            value = node.value
            if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "super":
                continue
            if isinstance(value, ast.Name) and value.id in ({"self", "cls"} | owners):
                continue
            found.append(f"{path.relative_to(root)}:{node.lineno}: .{node.attr}")
    return found


def test_no_app_module_but_compat_reads_a_listed_internal():
    assert {"_models", "_views", "_push_freeze", "_held_events", "_resources"} <= _private_names()
    assert _direct_reads(APP) == []


def test_the_scan_sees_a_direct_read_and_allows_an_override(tmp_path):
    (tmp_path / "probe.py").write_text(
        "import panel as pn\nfrom panel.theme.fast import Fast\n"
        "views = pn.state._views\nfonts = Fast._resources\n"
        "class P(pn.pane.HTML):\n    def _update(self, ref, model):\n"
        "        super()._update(ref, model)\n        return self._models\n"
    )
    assert _direct_reads(tmp_path) == ["probe.py:3: ._views"]
