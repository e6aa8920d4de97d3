"""Atomic file output: nothing half-written is ever left under a result's name.

Each file is written to a temporary name in the destination folder, flushed to disk
(``fsync``), given the permissions a plain ``open()`` would have given it (``0666`` minus
the process's umask: ``mkstemp`` creates ``0600``, which a rename would otherwise keep,
so other users of a shared results folder could not read it), and renamed over the
result's name. A reader sees the old file or the whole new one.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pandas as pd


def _umask() -> int:
    """The process's umask (read by setting it and putting it back: there is no getter
    before Python 3.13's ``os.umask`` variants; the two calls are immediate)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write_atomic(path: str | Path, write: Callable[[str], None]) -> Path:
    """``write(tmp)`` fills a temporary file beside ``path``; then fsync, umask mode and
    rename. Creates the folder if needed; removes the temporary file on any failure."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_bytes_atomic(data: bytes, path: str | Path) -> Path:
    """Write ``data`` to ``path`` atomically (see the module docstring)."""
    return _write_atomic(path, lambda tmp: Path(tmp).write_bytes(data))


def write_text_atomic(text: str, path: str | Path) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (see the module docstring)."""
    return _write_atomic(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def write_frame_atomic(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` to ``path`` (CSV for ``.csv``, else Parquet) atomically (see the
    module docstring)."""

    def write(tmp: str) -> None:
        if Path(path).suffix.lower() == ".csv":
            frame.to_csv(tmp, index=False)
        else:
            frame.to_parquet(tmp, index=False)

    return _write_atomic(path, write)
