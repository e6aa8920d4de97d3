"""One line when numba compiles, nothing when it loads from its cache (issue 43).

numba compiles a kernel the first time it is called with new argument types and keeps the
machine code in its on-disk cache (``NUMBA_CACHE_DIR``, else ``__pycache__`` beside the
sources), so only the first run after an install compiles (seconds per kernel); later
processes load it (a fraction of a second). The CLI, an estimator's first fit and a
notebook run say so in one line on stderr, before the wait::

    ermviz: compiling the PFW kernels for logreg-l1, first run only: ~4 s

and print nothing when every kernel comes from the cache.

How it knows: :func:`announce` opens a scope (a ``with`` block, per thread) around building
a problem and its solver (:func:`ermviz.registry.build_problem`,
:func:`ermviz.registry.build_solver`; the CLI and the estimators open one scope around
both, so a run says it once; a notebook's race builds each run through the registry, so it
says it once per set of kernels compiled: a race of FW, AFW and PFW, which share theirs,
once). numba broadcasts its ``numba:compile`` event when, and only
when, a dispatcher starts compiling: a kernel found in the on-disk cache is loaded without
it (``numba.core.event``, numba's documented Event API; :func:`check_numba` verifies the
behaviour this module relies on, and ``tests/test_compile_notice.py`` fails loudly if a
numba release changes it). The first such event inside a scope prints the line, before
that compilation runs; the rest of the scope's compilations stay silent. No numba
internals are touched: a cache probe by signature would need the dispatcher's private
cache index, and the event says the same thing at the moment it matters.

The estimate ``~N s`` is the measured first-run compile time of the same problem, method
and storage (dense or CSR) on the project's 2-core reference machine
(:data:`ermviz.compile_estimates.FIRST_RUN`, written by
``benchmarks/compile_estimates.py``); it is left out for a combination never measured.

Where the line goes: :func:`set_sink` (default: stderr). The dashboard's warm-up process
sends it to the server instead (``ermviz.app.serving.warmup``), and :func:`compiling_now` lists the
compilations in progress in this process (for a status line).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

__all__ = [
    "Compiling",
    "Scope",
    "announce",
    "check_numba",
    "compiling_now",
    "estimate",
    "method_label",
    "set_sink",
    "storage_of",
]


class Compiling(NamedTuple):
    """A compilation in progress: what (``the PFW kernels for logreg-l1``), since when
    (``time.perf_counter()``) and the expected seconds (None: not measured)."""

    what: str
    started: float
    expected: float | None


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


_SINK: Callable[[str], None] | None = _stderr
_LOCAL = threading.local()
_ACTIVE: dict[int, Compiling] = {}  # thread id -> its scope's compilation, while it runs
_LOCK = threading.Lock()
_LISTENING = False


def set_sink(sink: Callable[[str], None] | None) -> Callable[[str], None] | None:
    """Send the lines to ``sink`` (None: nowhere); returns the previous sink."""
    global _SINK
    previous, _SINK = _SINK, sink
    return previous


def method_label(method: str) -> str:
    """How a line names a method: short acronyms upper-case (``PFW``, ``SMO``), longer
    names as they are (``face-newton``)."""
    return method.upper() if len(method) <= 4 else method


def storage_of(problem: Any) -> str | None:
    """``"csr"`` or ``"dense"``: how ``problem``'s data are stored (None: no matrix)."""
    X = getattr(problem, "X", None)
    if X is None:
        return None
    import scipy.sparse as sp

    return "csr" if sp.issparse(X) else "dense"


def estimate(problem: str, method: str, storage: str | None = None) -> float | None:
    """Measured first-run compile seconds of ``method`` on ``problem`` with ``storage``
    (``"dense"`` or ``"csr"``; None: the slower of the two), or None if never measured."""
    from ermviz.compile_estimates import FIRST_RUN

    forms = (storage,) if storage else ("dense", "csr")
    found = [FIRST_RUN[k] for form in forms if (k := f"{problem}:{method}:{form}") in FIRST_RUN]
    return max(found) if found else None


class Scope:
    """What a scope announces. ``storage`` may be set once known (after the data load):
    the estimate is looked up when the first compilation starts."""

    def __init__(self, problem: str, method: str, storage: str | None = None) -> None:
        self.problem = problem
        self.method = method
        self.storage = storage
        self.announced = False

    @property
    def what(self) -> str:
        if not self.method:  # a problem whose construction compiles (before any method)
            return f"the {self.problem} kernels"
        return f"the {method_label(self.method)} kernels for {self.problem}"

    def line(self) -> str:
        expected = estimate(self.problem, self.method, self.storage)
        tail = f": ~{max(1, round(expected))} s" if expected is not None else ""
        return f"ermviz: compiling {self.what}, first run only{tail}"


@contextlib.contextmanager
def announce(what: Scope | str, method: str = "", storage: str | None = None) -> Iterator[Scope]:
    """Within the block, the first numba compilation of this thread prints
    :meth:`Scope.line` for ``Scope(what, method, storage)``, or for ``what`` itself when it
    is a :class:`Scope` (re-entered: a run built in two steps says it once). A scope
    nested in another defers to the outermost."""
    _listen()
    scope = what if isinstance(what, Scope) else Scope(what, method, storage)
    outer = getattr(_LOCAL, "scope", None)
    if outer is None:
        _LOCAL.scope = scope
    try:
        yield scope
    finally:
        if outer is None:
            _LOCAL.scope = None
            with _LOCK:
                _ACTIVE.pop(threading.get_ident(), None)


def compiling_now() -> list[Compiling]:
    """The compilations running in this process now, one per thread that announced one."""
    with _LOCK:
        return list(_ACTIVE.values())


def _on_compile_start() -> None:
    scope = getattr(_LOCAL, "scope", None)
    if scope is None:
        return
    expected = estimate(scope.problem, scope.method, scope.storage)
    with _LOCK:
        _ACTIVE.setdefault(
            threading.get_ident(), Compiling(scope.what, time.perf_counter(), expected)
        )
    if scope.announced:
        return
    scope.announced = True
    sink = _SINK
    if sink is not None:
        sink(scope.line())


def _listen() -> None:
    """Register the numba event listener (once per process)."""
    global _LISTENING
    if _LISTENING:
        return
    with _LOCK:
        if _LISTENING:
            return
        from numba.core import event

        class _Listener(event.Listener):
            def on_start(self, event: Any) -> None:
                _on_compile_start()

            def on_end(self, event: Any) -> None:
                pass

        event.register("numba:compile", _Listener())
        _LISTENING = True


def check_numba() -> None:
    """Raise RuntimeError unless numba broadcasts ``numba:compile`` for a compilation and
    not for a load from its on-disk cache (what this module relies on); run by the
    tests against the installed numba."""
    import os
    import subprocess
    import tempfile
    import textwrap

    probe = textwrap.dedent(
        """
        import sys
        from numba import njit
        from numba.core import event
        seen = []
        class L(event.Listener):
            def on_start(self, e): seen.append(e.data["dispatcher"].py_func.__name__)
            def on_end(self, e): pass
        event.register("numba:compile", L())
        sys.path.insert(0, sys.argv[1])
        from probe_mod import twice
        twice(1.0)
        print(",".join(seen))
        """
    )
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "probe_mod.py"), "w") as f:
            f.write("from numba import njit\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n")
        env = {**os.environ, "NUMBA_CACHE_DIR": os.path.join(tmp, "cache")}
        runs = [
            subprocess.run(
                [sys.executable, "-c", probe, tmp], env=env, capture_output=True, text=True
            )
            for _ in range(2)
        ]
    got = [r.stdout.strip() for r in runs]
    if any(r.returncode for r in runs) or got != ["twice", ""]:
        raise RuntimeError(
            "numba's numba:compile event no longer fires exactly for compilations (first "
            f"process saw {got[0]!r}, the second, loading from the cache, {got[1]!r}; "
            f"expected 'twice' and ''): ermviz.compile_notice needs updating "
            f"({' '.join(r.stderr for r in runs).strip()[:300]})"
        )
