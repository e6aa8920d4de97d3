"""``ermviz serve --procs N``: one server, N worker processes (README, "Serving a class").

Bokeh's own multi-process serving (``panel serve --num-procs N``): the server binds its
port, then Tornado forks N workers (:func:`tornado.process.fork_processes`) that share the
listening socket; the kernel hands each new connection to whichever worker accepts it
first, and the first (master) process only restarts a worker that dies. Nothing of the
dashboard has run before the fork: Panel runs the ``--setup`` module in each worker after
it has started (so the warm-up's thread and child process are each worker's own), and
Bokeh refuses to fork once application code has run.

A page's HTTP request and its websocket may reach different workers. Bokeh allows for it:
the page carries a session token that names the session and holds the request's
arguments, headers and cookies, and a worker that does not know the session builds it
from the token. Without more, a page would then be built twice (once for the HTTP answer,
once for the websocket); ``ermviz serve`` therefore adds ``--reuse-sessions``, with which
Panel answers the HTTP request from one session kept per page address and builds the
page's own document once, where its websocket lands.

This module adds what the fork leaves out:

* :func:`main` (``python -m ermviz.workers serve APP ...``) runs ``panel serve``: a
  Ctrl-C stops the workers (they shut down as one server does) and the master waits for
  them and exits quietly (Tornado's master would print a ``KeyboardInterrupt`` traceback);
  each worker asks the kernel for SIGTERM when the master is gone (Linux's
  ``PR_SET_PDEATHSIG``; elsewhere a thread watches the parent), so killing the server's
  process never leaves workers holding the port;
* one warm-up for all workers: in worker 0 the warm-up (:mod:`ermviz.app.serving.warmup`) runs
  its compiling processes and appends their progress lines to a file private to this
  server (:func:`publisher`, at :func:`share_path`); every other worker follows that file
  (:func:`follower`) instead of compiling the same kernels again, and loads each kernel
  from numba's on-disk cache when worker 0's processes have written it. A lesson loaded
  in another worker's page therefore does not reorder worker 0's queue: its Start waits
  for the kernels in worker 0's order. :func:`popen` wraps one child process the same way.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

#: Seconds between two looks at the shared progress file by a following worker.
FOLLOW_PERIOD = 0.2
#: Seconds a following worker waits for worker 0's file before it gives up (its races
#: then compile their own kernels, as after a failed warm-up).
FOLLOW_TIMEOUT = 120.0
#: Seconds the master waits for its workers after a Ctrl-C.
STOP_WAIT = 15.0
_PR_SET_PDEATHSIG = 1


# -- the launcher ----------------------------------------------------------------------
def main(argv: Sequence[str]) -> int:
    """Run ``panel serve`` with ``argv`` (``["serve", APP, ..., "--num-procs", N]``)."""
    master = os.getpid()
    os.register_at_fork(after_in_child=lambda: _worker_started(master))
    sys.argv = ["panel", *argv]
    from panel.command import main as panel_main

    try:
        panel_main()
    except KeyboardInterrupt:
        if os.getpid() != master:
            raise
        _reap(STOP_WAIT)  # the workers had the Ctrl-C too: let them finish
    return 0


def _worker_started(master: int) -> None:
    """In a process just forked: if it is one of the master's workers, have it stopped
    (SIGTERM, which Bokeh handles as a shutdown) when the master is gone."""
    if os.getppid() != master:
        return  # a process forked by a worker (its warm-up child): not a worker
    if not _die_with_parent():
        threading.Thread(target=_watch_parent, args=(master,), daemon=True).start()
    if os.getppid() != master:  # the master went before the request took hold
        os.kill(os.getpid(), signal.SIGTERM)


def _die_with_parent() -> bool:
    """Ask Linux to send this process SIGTERM when its parent exits; False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(master: int) -> None:
    while os.getppid() == master:
        time.sleep(1.0)
    os.kill(os.getpid(), signal.SIGTERM)


def _reap(timeout: float) -> None:
    """Wait (at most ``timeout`` s) for every child of this process to exit."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        except KeyboardInterrupt:  # a second Ctrl-C: stop waiting
            return
        if pid == 0:
            time.sleep(0.05)


# -- which worker ----------------------------------------------------------------------
def task_id() -> int | None:
    """This worker's number (0 to N - 1) in a multi-process server, else None."""
    try:
        from tornado.process import task_id as tornado_task_id
    except ImportError:
        return None
    return tornado_task_id()


def share_path(master: int | None = None) -> Path:
    """The file where worker 0 publishes the warm-up's progress to the other workers of
    the server whose master is ``master`` (default: this worker's parent); it is this
    user's only (created exclusively, mode 0600, checked by its readers)."""
    master = os.getppid() if master is None else master
    folder = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    return Path(folder) / f"ermviz-warmup-{os.getuid()}-{master}.jsonl"


def popen(argv: Sequence[str], **kwargs: Any) -> Any:
    """Start the warm-up's child (:class:`subprocess.Popen` arguments): in a
    multi-process server, worker 0 starts it and publishes its progress, the other
    workers follow worker 0's (see the module's docstring)."""
    task = task_id()
    if task is None:
        return subprocess.Popen(argv, **kwargs)
    path = share_path()
    if task == 0:
        with contextlib.suppress(OSError):
            return _Published(subprocess.Popen(argv, **kwargs), path)
        return subprocess.Popen(argv, **kwargs)  # (cannot publish: compile here too)
    return _Following(path)


def _create_private(path: Path) -> int:
    """Open ``path`` for appending, created new by this process (an old file of this user,
    from a worker restarted by the master, is replaced)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
    try:
        return os.open(path, flags, 0o600)
    except FileExistsError:
        st = os.lstat(path)
        if st.st_uid != os.getuid():
            raise
        path.unlink()
        return os.open(path, flags, 0o600)


class Publisher:
    """Worker 0's side of the shared progress file: lines appended as the warm-up reads
    them from its compiling processes, then ``{"exit": status}``; the file is removed at
    exit (unless a newer worker 0 replaced it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        fd = _create_private(path)
        self._inode = os.fstat(fd).st_ino
        self._out = os.fdopen(fd, "w")
        self._lock = threading.Lock()  # (one reader thread per compiling process)
        import atexit

        atexit.register(self._remove)

    def write(self, line: str) -> None:
        """Append one message line (with or without its newline)."""
        with self._lock, contextlib.suppress(OSError, ValueError):
            self._out.write(line if line.endswith("\n") else line + "\n")
            self._out.flush()

    def close(self, status: int) -> None:
        """The warm-up has ended with ``status`` (0: every item done): followers stop."""
        self.write(json.dumps({"exit": status}))

    def _remove(self) -> None:
        with contextlib.suppress(OSError):
            self._out.close()
        with contextlib.suppress(OSError):
            if self.path.stat().st_ino == self._inode:
                self.path.unlink()


def publisher() -> Publisher | None:
    """In worker 0 of a multi-process server, where the warm-up publishes its progress for
    the other workers (:func:`follower`); None elsewhere, or when the file cannot be made
    (the other workers then time out and their races compile what they need)."""
    if task_id() != 0:
        return None
    with contextlib.suppress(OSError):
        return Publisher(share_path())
    return None


def follower() -> _Following | None:
    """In a worker other than 0 of a multi-process server, worker 0's warm-up progress (a
    :class:`subprocess.Popen` look-alike whose ``stdout`` yields its lines as they are
    written); None elsewhere (this process runs the warm-up itself)."""
    if task_id() in (None, 0):
        return None
    return _Following(share_path())


class _Published:
    """Worker 0's warm-up child: what it prints is read by this worker and appended to
    the shared file, then ``{"exit": status}``."""

    def __init__(self, child: subprocess.Popen, path: Path) -> None:
        self.child = child
        self._publisher = Publisher(path)
        self.stdout = self._lines()

    def _lines(self) -> Iterator[str]:
        assert self.child.stdout is not None
        for line in self.child.stdout:
            self._publisher.write(line)
            yield line
        self._publisher.close(self.child.wait())

    def poll(self) -> int | None:
        return self.child.poll()

    def wait(self, timeout: float | None = None) -> int:
        return self.child.wait(timeout)

    def kill(self) -> None:
        self.child.kill()
        self._publisher.close(-int(signal.SIGKILL))


class _Following:
    """Another worker's view of worker 0's warm-up child: the shared file's lines, as
    they are written (a :class:`subprocess.Popen` look-alike for the warm-up)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.returncode: int | None = None
        self._stop = threading.Event()
        self.stdout = self._lines()

    def _open(self) -> tuple[Any, int] | None:
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except (FileNotFoundError, OSError):
            return None
        st = os.fstat(fd)
        if st.st_uid != os.getuid():  # not written by this server: never trust it
            os.close(fd)
            raise PermissionError(f"{self.path} belongs to another user")
        return os.fdopen(fd, "r"), st.st_ino

    def _lines(self) -> Iterator[str]:
        opened, partial = None, ""
        deadline = time.monotonic() + FOLLOW_TIMEOUT
        while not self._stop.is_set():
            if opened is None:
                opened = self._open()
                if opened is None:
                    if time.monotonic() > deadline:
                        self.returncode = 1  # (told as a failed warm-up)
                        return
                    self._stop.wait(FOLLOW_PERIOD)
                    continue
            line = opened[0].readline()
            if line:
                partial += line
                if not partial.endswith("\n"):
                    continue
                line, partial = partial, ""
                with contextlib.suppress(ValueError, AttributeError):
                    msg = json.loads(line)
                    if "exit" in msg:
                        self.returncode = int(msg["exit"])
                        opened[0].close()
                        return
                yield line
                continue
            # Nothing new: a worker 0 restarted by the master starts a new file.
            with contextlib.suppress(OSError):
                if os.stat(self.path).st_ino != opened[1]:
                    opened[0].close()
                    opened, partial = None, ""
                    continue
            self._stop.wait(FOLLOW_PERIOD)
        if opened is not None:
            opened[0].close()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        return self.returncode if self.returncode is not None else -int(signal.SIGTERM)

    def kill(self) -> None:
        self._stop.set()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
