"""The layout rules of docs/ARCHITECTURE.md, checked on the source tree.

* No import cycle among ``ermviz`` and ``solvers`` modules (module-level imports, which are
  the ones executed at import time; imports inside functions are deliberate and lazy).
* ``solvers`` imports nothing from ``ermviz``; the contracts (``ermviz.base``,
  ``ermviz.settings``, ``ermviz.errors``, ``ermviz.geometry``) import no family; a family
  imports neither the registry nor the runner, CLI, sweeps or dashboard; only
  ``ermviz.app`` imports the app.
* No module is over 700 lines unless its docstring says why (a paragraph starting "Size:").
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("ermviz", "solvers")
MAX_LINES = 700


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path, *, top_level_only: bool) -> set[str]:
    """Project modules ``name`` imports (a ``from pkg import sub`` counts as ``pkg.sub``)."""
    tree = ast.parse(path.read_text())
    is_pkg = path.name == "__init__.py"
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.If) and top_level_only:
            continue  # `if TYPE_CHECKING:` blocks are not executed
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")[: len(name.split(".")) - node.level + (1 if is_pkg else 0)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            found |= {f"{mod}.{a.name}" for a in node.names}
    return {m for m in found if m in MODULES and m != name}


def _graph(top_level_only: bool) -> dict[str, set[str]]:
    return {n: _imports(n, p, top_level_only=top_level_only) for n, p in MODULES.items()}


def test_the_tree_has_the_modules_this_test_expects():
    # Guards the checks below against silently checking nothing.
    for name in ("ermviz.base", "ermviz.registry", "ermviz.families.plq.problem", "solvers.fw"):
        assert name in MODULES
    assert "ermviz.base" in _graph(True)["ermviz.registry"]


def test_no_import_cycle():
    graph = _graph(top_level_only=True)
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = [*path[path.index(nxt) :], nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def _violations(allowed: callable, sources: callable) -> list[str]:
    out = []
    for name, path in MODULES.items():
        if not sources(name):
            continue
        for dep in sorted(_imports(name, path, top_level_only=False)):
            if not allowed(name, dep):
                out.append(f"{name} imports {dep}")
    return out


def test_layers():
    def family_of(mod: str) -> str:
        parts = mod.split(".")
        return ".".join(parts[:3]) if mod.startswith("ermviz.families.") else mod

    def allowed(name: str, dep: str) -> bool:
        if name.startswith("solvers"):
            return dep.startswith("solvers")
        leaves = ("ermviz.base", "ermviz.settings", "ermviz.errors", "ermviz.geometry")
        if name in leaves:
            return dep in leaves
        if name.startswith("ermviz.families"):
            return dep.startswith(("solvers", "ermviz.families", "ermviz.data")) or dep in leaves
        if name.startswith("ermviz.data"):
            return dep.startswith("ermviz.data") or dep == "ermviz.errors"
        if dep.startswith("ermviz.app"):
            return name.startswith("ermviz.app")
        return True

    assert _violations(allowed, lambda n: True) == []


def test_families_import_only_their_own_modules_and_declared_neighbours():
    # One family may build on another's problems and methods (TUFW reuses the FW family's
    # logreg-l1 and FW solver), never on a family that builds on it.
    graph = _graph(top_level_only=False)
    fam = {
        n: n.split(".")[2]
        for n in MODULES
        if n.startswith("ermviz.families.") and n.count(".") >= 2
    }
    deps = {
        (fam[a], fam[b])
        for a in fam
        for b in graph[a]
        if b in fam and fam[a] != fam[b] and fam[b] != "common"
    }
    assert not {(a, b) for a, b in deps if (b, a) in deps}, deps


def test_no_module_is_long_without_a_reason():
    long = []
    for path in MODULES.values():
        lines = path.read_text().count("\n")
        if lines > MAX_LINES:
            doc = ast.get_docstring(ast.parse(path.read_text())) or ""
            if "\nSize:" not in "\n" + doc:
                long.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert long == []


def test_each_public_module_imports_in_a_fresh_interpreter():
    # The static graph above sees what is written; this sees what Python does: every
    # family module and the registry import on their own, first, in a new process.
    names = [
        n for n in MODULES if n.startswith(("ermviz.families", "ermviz.registry", "ermviz.base"))
    ]
    bad = {}
    for name in names:
        out = subprocess.run(
            [sys.executable, "-c", f"import {name}"], capture_output=True, text=True, timeout=300
        )
        if out.returncode:
            bad[name] = out.stderr.strip().splitlines()[-1]
    assert bad == {}
