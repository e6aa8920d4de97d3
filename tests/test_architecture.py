"""The layout rules of docs/ARCHITECTURE.md, checked on the source tree.

* No import cycle among ``ermviz`` and ``solvers`` modules, counting every import: those
  at module level and those inside functions (a function-level import that closes a
  cycle only hides it until the function runs; a lazy import is fine when the
  dependency goes one way). Imports under ``if TYPE_CHECKING:`` are never executed and
  do not count. ``from pkg import sub`` counts as an import of the module ``pkg.sub``
  (as ``import pkg.sub`` does), ``from pkg import name`` as one of ``pkg``; a module that
  calls ``importlib.import_module`` imports every project module it names in a string
  (the registry's ``FAMILIES``), and so does one naming its kernel modules through
  ``ermviz.families.lazy`` (loaded on first use).
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


def _modules(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    out = {}
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(name: str, path: Path, modules: dict[str, Path] | None = None) -> set[str]:
    """Project modules ``name`` imports anywhere in its file (module level, functions,
    methods; not under ``if TYPE_CHECKING:``). ``from pkg import sub`` counts as
    ``pkg.sub`` when that is a module, else as ``pkg``. A module calling
    ``importlib.import_module`` counts as importing each module named by a string in it."""
    modules = MODULES if modules is None else modules
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()
    named: set[str] = set()  # module names written as strings
    called: set[str] = set()  # names of the functions called

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:  # the `else:` branch does run
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = name.split(".")
                base = parts[: len(parts) - node.level + (1 if is_pkg else 0)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for alias in node.names:
                sub = f"{mod}.{alias.name}"
                found.add(sub if sub in modules else mod)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            named.add(node.value)
        elif isinstance(node, ast.Call):
            func = node.func
            called.add(getattr(func, "attr", getattr(func, "id", "")))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text()))
    # importlib, and the families' lazy kernel modules (ermviz.families.lazy), by name
    if called & {"import_module", "kernel_module", "KernelConstant"}:
        found |= named
    return {m for m in found if m in modules and m != name}


def _graph(modules: dict[str, Path] | None = None) -> dict[str, set[str]]:
    modules = MODULES if modules is None else modules
    return {n: _imports(n, p, modules) for n, p in modules.items()}


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` as ``[a, b, ..., a]``, or None (depth-first search)."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_tree_has_the_modules_this_test_expects():
    # Guards the checks below against silently checking nothing: a top-level import and a
    # function-level one (the page builds the Results tab's model only when asked) are seen.
    for name in ("ermviz.base", "ermviz.registry", "ermviz.families.plq.problem", "solvers.fw"):
        assert name in MODULES
    graph = _graph()
    assert "ermviz.base" in graph["ermviz.registry"]
    assert "ermviz.app.results.model" in graph["ermviz.app.views.page"]
    assert "ermviz.families.plq" in graph["ermviz.registry"]  # importlib, by name


def test_no_import_cycle():
    cycle = _find_cycle(_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def _write(root: Path, files: dict[str, str]) -> dict[str, Path]:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return _modules(root, ("pkg",))


def test_the_cycle_check_sees_a_cycle_closed_inside_a_function(tmp_path):
    # A planted cycle: pkg.a imports pkg.b at module level, pkg.b imports pkg.a only
    # inside a method (the shape of the model -> references -> streaming -> model cycle).
    modules = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg.b import helper\n",
            "pkg/b.py": (
                "class C:\n    def m(self):\n        from pkg import a\n        return a\n"
                "def helper():\n    return 1\n"
            ),
            "pkg/c.py": "import pkg.a\n",
        },
    )
    assert _find_cycle(_graph(modules)) == ["pkg.a", "pkg.b", "pkg.a"]


def test_the_cycle_check_ignores_type_checking_imports_and_sees_their_else(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg.b import helper\n",
        "pkg/b.py": (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import X\n"
            "def helper():\n    return 1\n"
        ),
    }
    assert _find_cycle(_graph(_write(tmp_path, files))) is None
    files["pkg/b.py"] += "if TYPE_CHECKING:\n    pass\nelse:\n    import pkg.a\n"
    assert _find_cycle(_graph(_write(tmp_path, files))) == ["pkg.a", "pkg.b", "pkg.a"]


def test_a_lazy_package_attribute_counts_as_an_import_of_the_package(tmp_path):
    # `from pkg import name` (not a module) needs pkg's __init__; `from pkg import sub`
    # needs only the module pkg.sub.
    modules = _write(
        tmp_path,
        {
            "pkg/__init__.py": "def __getattr__(name):\n    from pkg import view\n"
            "    return view.View\n",
            "pkg/view.py": "class View:\n    pass\n",
            "pkg/other.py": "def f():\n    from pkg import View\n    return View\n",
        },
    )
    graph = _graph(modules)
    assert graph["pkg"] == {"pkg.view"} and graph["pkg.other"] == {"pkg"}
    assert _find_cycle(graph) is None
    (tmp_path / "pkg/view.py").write_text("from pkg import View as Base\n")
    assert _find_cycle(_graph(modules)) == ["pkg", "pkg.view", "pkg"]


def _violations(allowed: callable, sources: callable) -> list[str]:
    out = []
    for name, path in MODULES.items():
        if not sources(name):
            continue
        for dep in sorted(_imports(name, path)):
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
    graph = _graph()
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


@pytest.mark.slow
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


def test_importing_the_registry_loads_no_kernel():
    # Listing methods, validating settings and the CLI's start cost no numba: a family's
    # kernels load when one of its solvers (or certificates) is first used.
    code = (
        "import sys, ermviz.registry as r; assert r.METHODS;"
        "print(sorted(m for m in sys.modules if m == 'numba' or m.startswith('solvers.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    # (the declarations ermviz reads, plain Python: solvers.fw_methods, solvers.tags)
    assert out.stdout.split() == ["['solvers.fw_methods',", "'solvers.tags']"]


def test_every_cited_algorithms_section_exists():
    """Code and docs cite the implementation notes as ``ALGORITHMS.md X.Y``: the file is
    in the repository (docs/ALGORITHMS.md) and has each cited section (issue 46: the
    citations pointed at a file outside the repository)."""
    import re

    notes = (ROOT / "docs" / "ALGORITHMS.md").read_text()
    sections = set(re.findall(r"^#{2,3} ([A-G](?:\.\d+)?)[ .]", notes, flags=re.MULTILINE))
    cited: dict[str, set[str]] = {}
    files = [*_modules().values(), *(ROOT / "benchmarks").glob("*.py")]
    files += [*(ROOT / "docs").glob("*.md"), ROOT / "README.md"]
    for path in files:
        text = " ".join(path.read_text().split())  # a citation may wrap onto the next line
        for ref in re.findall(r"ALGORITHMS\.md[ ,;]*([A-G](?:\.\d+)?)\b", text):
            cited.setdefault(ref, set()).add(str(path.relative_to(ROOT)))
    assert cited, "no citation found: the pattern no longer matches how the code cites"
    missing = {ref: sorted(where) for ref, where in cited.items() if ref not in sections}
    assert not missing, f"cited sections not in docs/ALGORITHMS.md: {missing}"


def test_the_readme_layout_names_every_family():
    """README's Layout lists each family package of the registry (issue 46: it named
    three of the five)."""
    import re

    from ermviz.registry import FAMILIES

    readme = " ".join((ROOT / "README.md").read_text().split())
    line = readme.split("`families/<family>/`", 1)[1].split("`data/`", 1)[0]
    named = set(re.findall(r"`([a-z_]+)`", line))
    assert named == {name.rsplit(".", 1)[1] for name in FAMILIES}, line


def test_the_public_api_resolves_and_importing_ermviz_stays_cheap():
    """``ermviz.__all__`` is the package's stated API (its docstring names the public
    modules): every name resolves, to the object of the module the docstring names, and
    ``import ermviz`` alone loads neither numba nor pandas."""
    code = (
        "import sys, ermviz\n"
        "heavy = [m for m in ('numba', 'pandas', 'scipy', 'panel') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "import ermviz.data, ermviz.experiment, ermviz.runner\n"
        "for name in ermviz.__all__:\n"
        "    getattr(ermviz, name)\n"
        "assert ermviz.load_dataset is ermviz.data.load_dataset\n"
        "assert ermviz.execute is ermviz.experiment.execute\n"
        "assert ermviz.Budget is ermviz.runner.Budget\n"
        "assert set(ermviz.__all__) <= set(dir(ermviz))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
