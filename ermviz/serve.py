"""``ermviz serve``: the dashboard with safe serving defaults (README, "Serving a class").

It runs ``panel serve`` on the app file shipped in the package
(:data:`ermviz.app.served.APP`, served at ``/app``) with:

* the loopback interface only (``--address 127.0.0.1``) and websocket connections accepted
  only from pages opened as ``localhost:PORT`` or ``127.0.0.1:PORT`` (plus the address
  itself when it names one host), unless ``--allow-websocket-origin`` says otherwise;
* a password beyond the loopback interface (:mod:`ermviz.access`): ``--password`` puts a
  login page in front of the page and its websocket (Bokeh's auth module
  :mod:`ermviz.app.serving.login`, Panel's login handler), the class password read from
  ``ERMVIZ_PASSWORD`` or typed at the terminal, never from the command line (``ps`` shows
  a command line to every user); ``--admin-password`` adds the teacher's
  (``ERMVIZ_ADMIN_PASSWORD``), whose sessions alone may open results folders. Another
  address without ``--password`` is refused, unless ``--no-password`` (a loud warning);
* ``--procs N`` worker processes (:mod:`ermviz.workers`; default :func:`default_procs`:
  one on the loopback interface, else one per usable core while memory allows), with
  Panel's ``--reuse-sessions`` so that a page is built once whichever worker its websocket
  reaches; the solver-thread budget is split between them;
* closed pages' sessions discarded 1-6 s after the browser has gone
  (``--check-unused-sessions 1000 --unused-session-lifetime 5000``);
* the numba kernels compiled in the background while the server already answers
  (``--setup`` :mod:`ermviz.app.serving.warmup`; with several workers, one compiles for all);
* glibc's allocator for Python's objects and two malloc arenas
  (``PYTHONMALLOC=malloc MALLOC_ARENA_MAX=2``, measured in
  ``benchmarks/results/bench_load.txt``). These act only when set before the interpreter
  starts, so the command replaces this process with a new interpreter started with them
  (values already in the environment are kept);
* ``--threads N`` sets how many solver threads compute at once, in all (each of P worker
  processes gets ``N // P``: ``ERMVIZ_SOLVER_THREADS``, :mod:`ermviz.cores`, and numba's
  thread count).

This module imports neither Panel nor the dashboard: the command line stays quick.
"""

from __future__ import annotations

import getpass
import os
import secrets
import shlex
import socket
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ermviz import access

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
#: The warm-up set-up script (:mod:`ermviz.app.serving.warmup`).
WARMUP = _PACKAGE / "app" / "serving" / "warmup.py"
#: The login page's Bokeh auth module (:mod:`ermviz.app.serving.login`).
LOGIN = _PACKAGE / "app" / "serving" / "login.py"
#: Memory a worker process is allowed when the default number is chosen: about 0.4 GiB
#: idle with the lessons' kernels loaded, 50 MiB more per racing session
#: (``benchmarks/results/bench_load.txt``).
PROC_MEMORY = 1 << 30
#: Environment values ``--print-command`` does not show.
SECRET_ENV = (access.HASHES_ENV, "PANEL_COOKIE_SECRET", "BOKEH_SECRET_KEY")

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
    procs: int = 1,
    password: bool = False,
) -> list[str]:
    """The ``panel serve`` command line (``argv``, starting with this interpreter); with
    ``procs`` > 1 run by :mod:`ermviz.workers`."""
    if procs > 1:
        argv = [sys.executable, "-m", "ermviz.workers", "serve", str(APP)]
    else:
        argv = [sys.executable, "-m", "panel", "serve", str(APP)]
    argv += ["--address", address, "--port", str(port)]
    for origin in origins or default_origins(address, port):
        argv += ["--allow-websocket-origin", origin]
    if warmup:
        argv += ["--setup", str(WARMUP)]
    argv += list(SESSION_FLAGS)
    if procs > 1:
        # Each worker builds a page's document once, where its websocket lands (ermviz.workers).
        argv += ["--num-procs", str(procs), "--reuse-sessions"]
    if password:
        argv += ["--auth-module", str(LOGIN)]
    if show and procs == 1:  # (several workers would each open a browser: serve() opens one)
        argv.append("--show")
    return argv


def environment(
    threads: int | None = None,
    base: dict[str, str] | None = None,
    procs: int = 1,
) -> dict[str, str]:
    """The server's environment: ``base`` (default: this process's) with the allocator
    settings added where unset, and each of the ``procs`` workers' share of ``threads``
    solver threads (default: the usable CPUs when ``procs`` > 1) as the solver and numba
    thread counts."""
    env = dict(os.environ if base is None else base)
    for key, value in ALLOCATOR_ENV.items():
        env.setdefault(key, value)
    if threads is None and procs > 1:
        threads = usable_cpus()
    if threads is not None:
        share = threads // procs if threads > 0 else 0
        env["ERMVIZ_SOLVER_THREADS"] = str(share)
        if share > 0:
            env["NUMBA_NUM_THREADS"] = str(share)
    return env


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _available_memory() -> int | None:
    """Bytes of memory available for new processes (Linux's MemAvailable), or None."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def default_procs(address: str) -> int:
    """Worker processes when ``--procs`` is not given: 1 on the loopback interface (one
    person's pages), else one per usable core, at most one per :data:`PROC_MEMORY` of
    available memory."""
    if access.is_loopback(address):
        return 1
    procs = usable_cpus()
    memory = _available_memory()
    if memory is not None:
        procs = min(procs, memory // PROC_MEMORY)
    return max(1, procs)


def check(
    address: str,
    port: int,
    threads: int | None,
    procs: int = 1,
    password: bool = False,
    admin_password: bool = False,
    no_password: bool = False,
) -> None:
    """One-line errors for settings ``panel serve`` would reject with a traceback, or that
    would leave the server open to the network by accident."""
    from ermviz.errors import SettingError

    if not 0 <= port <= 65535:
        raise SettingError(f"--port {port}: a port is 0-65535 (0 picks a free one)")
    if threads is not None and threads < 0:
        raise SettingError(f"--threads {threads}: give 1 or more (0 = no limit)")
    if not address.strip():
        raise SettingError("--address is empty: give an interface, e.g. 127.0.0.1 or 0.0.0.0")
    if procs < 1:
        raise SettingError(f"--procs {procs}: give 1 or more worker processes")
    budget = usable_cpus() if threads is None else threads
    if procs > 1 and 0 < budget < procs:
        raise SettingError(
            f"--procs {procs}: more workers than the {budget} solver threads they share "
            f"(each needs one); give --procs {budget} or fewer, or --threads {procs} or more"
        )
    if procs > 1 and sys.platform == "win32":
        raise SettingError("--procs: several worker processes need fork (not on Windows)")
    if password and no_password:
        raise SettingError("--password and --no-password: give one of them")
    if admin_password and not password:
        raise SettingError(
            "--admin-password needs --password (the class logs in with the class password, "
            "the teacher with the teacher's)"
        )
    if not access.is_loopback(address) and not (password or no_password):
        raise SettingError(
            f"--address {address} lets anyone who can reach this machine in: add --password "
            f"(the class password, from {access.PASSWORD_ENV} or typed here), or "
            "--no-password to serve without one"
        )
    if not APP.is_file():
        raise SettingError(f"the dashboard's app file {APP} is missing; reinstall ermviz")


def read_password(env_name: str, what: str) -> str:
    """A password from ``env_name``, else typed twice at the terminal (never from the
    command line); at least :data:`~ermviz.access.MIN_LENGTH` characters."""
    from ermviz.errors import SettingError

    value = os.environ.get(env_name)
    if value is None:
        if not sys.stdin.isatty():
            raise SettingError(
                f"{what}: set {env_name} (or run this in a terminal to type it); a password "
                "is never given on the command line, where `ps` shows it to every user"
            )
        value = getpass.getpass(f"ermviz: {what}: ")
        if getpass.getpass(f"ermviz: {what} again: ") != value:
            raise SettingError(f"{what}: the two passwords typed differ")
    if len(value) < access.MIN_LENGTH:
        raise SettingError(f"{what} ({env_name}): give at least {access.MIN_LENGTH} characters")
    return value


def results_access(address: str, password: bool, admin_password: bool, for_all: bool) -> str:
    """Who may open results folders (:data:`ermviz.access.RESULTS_ACCESS_ENV`): the
    teacher with ``--admin-password``, everyone with ``--results-for-all`` or on the
    loopback interface without a password, else nobody (empty: leave it unset)."""
    if admin_password:
        return "teacher"
    if for_all:
        return "all"
    if password or not access.is_loopback(address):
        return "off"
    return ""


def auth_environment(class_password: str, admin_password: str | None) -> dict[str, str]:
    """The login's settings for the server's environment: the passwords' hashes, the
    cookie secret (kept when set, so logins survive a restart) and signed session ids
    (a page's token cannot be forged or made up)."""
    hashes = {access.STUDENT: access.hash_password(class_password)}
    if admin_password is not None:
        hashes[access.TEACHER] = access.hash_password(admin_password)
    return {
        access.HASHES_ENV: access.encode_hashes(hashes),
        "PANEL_COOKIE_SECRET": os.environ.get("PANEL_COOKIE_SECRET") or secrets.token_urlsafe(32),
        "BOKEH_SIGN_SESSIONS": "yes",
        "BOKEH_SECRET_KEY": os.environ.get("BOKEH_SECRET_KEY") or secrets.token_urlsafe(32),
    }


def serve(
    address: str = DEFAULT_ADDRESS,
    port: int = DEFAULT_PORT,
    origins: Sequence[str] | None = None,
    threads: int | None = None,
    show: bool = True,
    warmup: bool = True,
    print_only: bool = False,
    procs: int | None = None,
    password: bool = False,
    admin_password: bool = False,
    no_password: bool = False,
    results_for_all: bool = False,
) -> int:
    """Replace this process with ``panel serve`` (see the module's docstring); with
    ``print_only`` print the environment settings and the command instead and return 0
    (the passwords are then neither asked for nor shown)."""
    procs = default_procs(address) if procs is None else procs
    check(address, port, threads, procs, password, admin_password, no_password)
    argv = command(address, port, origins, show=show, warmup=warmup, procs=procs, password=password)
    env = environment(threads, procs=procs)
    for name in (access.PASSWORD_ENV, access.ADMIN_PASSWORD_ENV):
        env.pop(name, None)  # the server keeps hashes only
    policy = results_access(address, password, admin_password, results_for_all)
    if policy:
        env[access.RESULTS_ACCESS_ENV] = policy
    if password and print_only:
        env.update({k: "<hidden>" for k in SECRET_ENV} | {"BOKEH_SIGN_SESSIONS": "yes"})
    elif password:
        class_pw = read_password(access.PASSWORD_ENV, "class password")
        admin_pw = None
        if admin_password:
            admin_pw = read_password(access.ADMIN_PASSWORD_ENV, "teacher's password")
            if admin_pw == class_pw:
                from ermviz.errors import SettingError

                raise SettingError("the teacher's password must differ from the class password")
        env.update(auth_environment(class_pw, admin_pw))
    changed = {k: v for k, v in env.items() if os.environ.get(k) != v}
    changed.update({k: "<hidden>" for k in SECRET_ENV if k in changed})
    line = " ".join(
        [
            *(f"{k}={shlex.quote(v)}" for k, v in sorted(changed.items())),
            shlex.join(argv),
        ]
    )
    if print_only:
        print(line)
        return 0
    if no_password and not access.is_loopback(address):
        print(
            f"ermviz: WARNING: serving {address}:{port} WITHOUT A PASSWORD: anyone who can "
            "reach this machine can use the dashboard and its cores",
            file=sys.stderr,
        )
    if port:
        url = f"http://{_host(address)}:{port}/app"
        workers = f" ({procs} worker processes)" if procs > 1 else ""
        login = " behind a password" if password else ""
        print(f"ermviz: the dashboard will be at {url}{login}{workers}", file=sys.stderr)
        if show and procs > 1:
            _open_when_ready(url, port)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, argv, env)
    return 1  # pragma: no cover (execve does not return)


def _open_when_ready(url: str, port: int, timeout: float = 120.0) -> None:
    """Open ``url`` in a browser once the server answers on ``port``, from a detached
    process (the server's workers would each open one): a grandchild, so that nothing is
    left for the server to reap."""
    if not hasattr(os, "fork"):
        return
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        return
    try:
        if os.fork() == 0:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1.0):
                        break
                except OSError:
                    time.sleep(0.5)
            import webbrowser

            webbrowser.open(url)
    finally:
        os._exit(0)


def _host(address: str) -> str:
    if address in ("0.0.0.0", "::", ""):
        return "localhost"
    return f"[{address}]" if ":" in address else address
