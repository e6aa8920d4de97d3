"""Helpers every benchmark script shares: the commit measured and plain-text tables.

The scripts run as ``python benchmarks/<name>.py``, so this folder is on ``sys.path`` and
they import this module as ``bench_common``.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def core_version(paths: Sequence[str] = ("solvers", "ermviz"), digests: Sequence[str] = ()) -> str:
    """Commit of the core measured (the repository changes while benchmarks run), flagged
    when ``paths`` hold uncommitted changes, with sha256 prefixes of the ``digests`` files."""

    def git(*a: str) -> str:
        try:
            r = subprocess.run(["git", "-C", str(REPO), *a], capture_output=True, text=True)
        except OSError:
            return ""
        return r.stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown (no git)"
    dirty = git("status", "--porcelain", "--", *paths)
    out = head + (f" + uncommitted changes in {', '.join(paths)}" if dirty else "")
    if digests:
        out += (
            " ("
            + ", ".join(
                f"{f} sha256 {hashlib.sha256((REPO / f).read_bytes()).hexdigest()[:12]}"
                for f in digests
            )
            + ")"
        )
    return out


def table(
    headers: list[str],
    rows: list[list[object]],
    *,
    sci_above: float = 1e6,
    digits: int = 4,
    sci_digits: int = 3,
) -> str:
    """Plain-text table, right-aligned columns; floats below 1e-3 or at least
    ``sci_above`` in magnitude in scientific notation, NaN as ``-``."""

    def cell(v: object) -> str:
        if isinstance(v, float):
            if math.isnan(v):
                return "-"
            if v != 0 and (abs(v) < 1e-3 or abs(v) >= sci_above):
                return f"{v:.{sci_digits}e}"
            return f"{v:.{digits}g}"
        return str(v)

    cells = [[cell(v) for v in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file in the same folder and a rename:
    a reader sees the old results or the new ones, never half of them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give it the usual mode
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


#: Debian's chromium (no browser downloads here) and the flags the browser benchmarks use.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (all its threads), from /proc; 0 once
    it has gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # After the command name: fields 14 (utime) and 15 (stime) are at offsets 11 and 12.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def descendants(pid: int) -> list[int]:
    """Processes below ``pid`` (from /proc), e.g. the chromium a benchmark launched."""
    parent = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


def save_figure(fig, path: Path, dpi: int = 120) -> None:
    """Save a matplotlib figure to ``path`` atomically (temporary file, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=dpi)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def load_str() -> str:
    """The machine's load averages (1, 5, 15 min), for result headers."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


class Report:
    """A benchmark's printed lines, kept for its ``--out`` file."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def emit(self, line: str = "") -> None:
        """Print a line and keep it for the output file."""
        print(line, flush=True)
        self.lines.append(line)

    def finish(self, checks: Sequence[tuple[str, bool | None, str]], t_start: float) -> None:
        """The CHECKS section (PASS/FAIL, or INFO for None: what, [detail]) and the closing
        time line."""
        import time

        self.emit()
        self.emit("CHECKS")
        for what, passed, detail in checks:
            tag = "INFO" if passed is None else "PASS" if passed else "FAIL"
            self.emit(f"  {tag}  {what}" + (f"  [{detail}]" if detail else ""))
        self.emit(
            f"\nfinished {time.strftime('%Y-%m-%d %H:%M:%S')}, total "
            f"{time.perf_counter() - t_start:.0f} s, load average {load_str()}"
        )

    def write(self, path: str | Path) -> None:
        """The lines to ``path``, atomically."""
        write_atomic(Path(path), "\n".join(self.lines) + "\n")


def seeded_subset(full, rows: int, seed: int):
    """``rows`` rows of the dataset ``full`` drawn at random with ``seed`` (kept in file
    order), as an ermviz Dataset named ``<name>-<rows>``; ``full`` itself when it has
    no more rows than that."""
    import numpy as np

    from ermviz.data import Dataset

    if rows >= full.n:
        return full
    idx = np.sort(np.random.default_rng(seed).permutation(full.n)[:rows])
    X = full.X[idx]
    return Dataset(
        name=f"{full.name}-{rows}",
        X=X if hasattr(X, "tocsr") else np.ascontiguousarray(X),
        y=np.array(full.y[idx]),
        task="binary",
        source=full.source,
        description=f"{rows} rows of {full.name}, seeded ({seed}) random subset",
    )


def alternate_ab(run_old, run_new, rounds: int) -> tuple[list[float], list[float]]:
    """Time ``run_old`` and ``run_new`` (each returns its own seconds) ``rounds`` times,
    the order swapped every round so that neither always runs second."""
    t_old: list[float] = []
    t_new: list[float] = []
    for r in range(rounds):
        pair = ((run_old, t_old), (run_new, t_new))
        for fn, out in pair if r % 2 == 0 else pair[::-1]:
            out.append(fn())
    return t_old, t_new


def ab_line(label: str, t_old: Sequence[float], t_new: Sequence[float]) -> str:
    """One line of an A/B: min and median of each side and the ratios new/old."""
    import os
    import statistics

    mo, mn = statistics.median(t_old), statistics.median(t_new)
    return (
        f"{label} old min {min(t_old):.4f} med {mo:.4f}  new min {min(t_new):.4f} med "
        f"{mn:.4f}  ratio min {min(t_new) / min(t_old):.3f} med {mn / mo:.3f}  "
        f"load {os.getloadavg()[0]:.1f}"
    )
