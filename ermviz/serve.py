"""``ermviz serve``: the dashboard with safe serving defaults (README, "Serving a class").

It runs ``panel serve`` on the app file shipped in the package
(:data:`ermviz.app.served.APP`, served at ``/app``) with:

* the loopback interface only (``--address 127.0.0.1``) and websocket connections accepted
  only from pages opened as ``localhost:PORT`` or ``127.0.0.1:PORT`` (plus the address
  itself when it names one host), unless ``--allow-websocket-origin`` says otherwise;
* closed pages' sessions discarded 1-6 s after the browser has gone
  (``--check-unused-sessions 1000 --unused-session-lifetime 5000``);
* the numba kernels compiled in the background while the server already answers
  (``--setup`` :mod:`ermviz.app.warmup`);
* glibc's allocator for Python's objects and two malloc arenas
  (``PYTHONMALLOC=malloc MALLOC_ARENA_MAX=2``, measured in
  ``benchmarks/results/bench_load.txt``). These act only when set before the interpreter
  starts, so the command replaces this process with a new interpreter started with them
  (values already in the environment are kept);
* ``--threads N`` sets how many solver threads compute at once
  (``ERMVIZ_SOLVER_THREADS``, :mod:`ermviz.cores`) and numba's thread count.

This module imports neither Panel nor the dashboard: the command line stays quick.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

#: The allocator settings (README, "Serving a class"); a value already set is kept.
ALLOCATOR_ENV = {"PYTHONMALLOC": "malloc", "MALLOC_ARENA_MAX": "2"}

#: Session clean-up: look for unused sessions every second, drop them after 5 s.
SESSION_FLAGS = ("--check-unused-sessions", "1000", "--unused-session-lifetime", "5000")

DEFAULT_ADDRESS = "127.0.0.1"
DEFAULT_PORT = 5006

_PACKAGE = Path(__file__).resolve().parent
#: The app file ``panel serve`` runs (the same as :data:`ermviz.app.served.APP`, named here
#: without importing the dashboard).
APP = _PACKAGE / "app" / "served" / "app.py"
#: The warm-up set-up script (:mod:`ermviz.app.warmup`).
WARMUP = _PACKAGE / "app" / "warmup.py"

_WILDCARDS = {"0.0.0.0", "::", "", "localhost", "127.0.0.1", "::1"}


def default_origins(address: str, port: int) -> list[str]:
    """The origins accepted when none are given: ``localhost:PORT``, ``127.0.0.1:PORT``,
    and ``ADDRESS:PORT`` when the address names one host (not a wildcard)."""
    origins = [f"localhost:{port}", f"127.0.0.1:{port}"]
    if address not in _WILDCARDS:
        origins.append(f"{address}:{port}")
    return origins


def command(
    address: str = DEFAULT_ADDRESS,
    port: int = DEFAULT_PORT,
    origins: Sequence[str] | None = None,
    show: bool = True,
    warmup: bool = True,
) -> list[str]:
    """The ``panel serve`` command line (``argv``, starting with this interpreter)."""
    argv = [sys.executable, "-m", "panel", "serve", str(APP)]
    argv += ["--address", address, "--port", str(port)]
    for origin in origins or default_origins(address, port):
        argv += ["--allow-websocket-origin", origin]
    if warmup:
        argv += ["--setup", str(WARMUP)]
    argv += list(SESSION_FLAGS)
    if show:
        argv.append("--show")
    return argv


def environment(threads: int | None = None, base: dict[str, str] | None = None) -> dict[str, str]:
    """The server's environment: ``base`` (default: this process's) with the allocator
    settings added where unset, and ``threads`` as the solver and numba thread counts."""
    env = dict(os.environ if base is None else base)
    for key, value in ALLOCATOR_ENV.items():
        env.setdefault(key, value)
    if threads is not None:
        env["ERMVIZ_SOLVER_THREADS"] = str(threads)
        if threads > 0:
            env["NUMBA_NUM_THREADS"] = str(threads)
    return env


def check(address: str, port: int, threads: int | None) -> None:
    """One-line errors for settings ``panel serve`` would reject with a traceback."""
    from ermviz.errors import SettingError

    if not 0 <= port <= 65535:
        raise SettingError(f"--port {port}: a port is 0-65535 (0 picks a free one)")
    if threads is not None and threads < 0:
        raise SettingError(f"--threads {threads}: give 1 or more (0 = no limit)")
    if not address.strip():
        raise SettingError("--address is empty: give an interface, e.g. 127.0.0.1 or 0.0.0.0")
    if not APP.is_file():
        raise SettingError(f"the dashboard's app file {APP} is missing; reinstall ermviz")


def serve(
    address: str = DEFAULT_ADDRESS,
    port: int = DEFAULT_PORT,
    origins: Sequence[str] | None = None,
    threads: int | None = None,
    show: bool = True,
    warmup: bool = True,
    print_only: bool = False,
) -> int:
    """Replace this process with ``panel serve`` (see the module's docstring); with
    ``print_only`` print the environment settings and the command instead and return 0."""
    check(address, port, threads)
    argv = command(address, port, origins, show=show, warmup=warmup)
    env = environment(threads)
    changed = {k: v for k, v in env.items() if os.environ.get(k) != v}
    line = " ".join(
        [*(f"{k}={shlex.quote(v)}" for k, v in sorted(changed.items())), shlex.join(argv)]
    )
    if print_only:
        print(line)
        return 0
    if port:
        url = f"http://{_host(address)}:{port}/app"
        print(f"ermviz: the dashboard will be at {url}", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, argv, env)
    return 1  # pragma: no cover (execve does not return)


def _host(address: str) -> str:
    if address in ("0.0.0.0", "::", ""):
        return "localhost"
    return f"[{address}]" if ":" in address else address
