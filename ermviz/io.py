"""Atomic file output: nothing half-written is ever left under a result's name."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd


def write_bytes_atomic(data: bytes, path: str | Path) -> Path:
    """Write ``data`` to ``path`` via a temporary file in the same folder and a rename
    (readers see the old file or the whole new one). Creates the folder if needed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_frame_atomic(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` to ``path`` (CSV for ``.csv``, else Parquet) via a temporary file
    in the same folder and a rename, so readers see the old file or the new one, never a
    partial one. Creates the folder if needed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        if path.suffix.lower() == ".csv":
            frame.to_csv(tmp, index=False)
        else:
            frame.to_parquet(tmp, index=False)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
