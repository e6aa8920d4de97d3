"""Reports from a results folder: time-to-threshold tables, performance profiles, curves.

Shapes follow the published tables: one row per problem instance (dataset, problem and its
settings) and threshold, one column per method label holding the solver time (median over
seeds) at which the certificate first reached the threshold, blank where the budget ran
out; a speed-up column divides the best baseline time by the best time of the chosen
methods (``>= x`` when no baseline finished: x is then the baselines' budget over the best
chosen time).

Performance profiles are those of Dolan & More (2002), "Benchmarking optimization software
with performance profiles", Math. Programming 91: for each method, the fraction of
(instance, threshold) pairs it solves within a factor tau of the fastest method.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ermviz.errors import SettingError
from ermviz.io import write_bytes_atomic, write_text_atomic
from ermviz.sweep import load_summaries, load_traces

#: Certificates are drawn on log axes: values below this floor (zeros) are drawn at it.
CERT_FLOOR = 1e-16


def _instance(row: pd.Series) -> str:
    settings = json.loads(row["settings"]) if isinstance(row["settings"], str) else {}
    extra = " ".join(
        f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in sorted(settings.items())
    )
    return f"{row['dataset']} {row['problem']}" + (f" {extra}" if extra else "")


def report_options(out_dir: str | Path) -> dict[str, Any]:
    """The ``[report]`` table of ``DIR/config.toml`` (eps, baselines, chosen), or ``{}``."""
    path = Path(out_dir) / "config.toml"
    if not path.is_file():
        return {}
    try:
        opts = tomllib.loads(path.read_text()).get("report", {})
    except tomllib.TOMLDecodeError as exc:
        raise SettingError(f"{path}: not valid TOML ({exc})") from None
    return opts if isinstance(opts, dict) else {}


def times_from_frames(
    summaries: pd.DataFrame, traces: pd.DataFrame, eps: Sequence[float]
) -> pd.DataFrame:
    """:func:`times_to_threshold` on frames already loaded (``load_summaries``,
    ``load_traces``)."""
    by_cell = dict(tuple(traces.groupby("cell_id", sort=False))) if len(traces) else {}
    rows = []
    for _, s in summaries.iterrows():
        t = by_cell.get(s["cell_id"])
        cert = t["certificate"].to_numpy() if t is not None else np.zeros(0)
        tim = t["time_s"].to_numpy() if t is not None else np.zeros(0)
        budget = json.loads(s["budget"]) if isinstance(s["budget"], str) else {}
        for e in eps:
            hit = np.flatnonzero(cert <= e)
            rows.append(
                {
                    "instance": _instance(s),
                    "dataset": s["dataset"],
                    "label": s["label"],
                    "seed": s["seed"],
                    "eps": float(e),
                    "time_s": float(tim[hit[0]]) if hit.size else math.nan,
                    "status": s["status"],
                    "max_time": float(budget.get("max_time", math.nan)),
                }
            )
    return pd.DataFrame(rows)


def times_to_threshold(out_dir: str | Path, eps: Sequence[float]) -> pd.DataFrame:
    """One row per (cell, threshold): instance, label, seed, time (NaN if never reached)."""
    return times_from_frames(load_summaries(out_dir), load_traces(out_dir), eps)


def threshold_table(
    ttt: pd.DataFrame, baselines: Sequence[str] = (), chosen: Sequence[str] = ()
) -> pd.DataFrame:
    """The published-table shape: rows (instance, eps), columns labels (+ speed-up)."""
    med = ttt.groupby(["instance", "eps", "label"])["time_s"].median().unstack("label")
    med = med.sort_index(level=["instance", "eps"], ascending=[True, False])
    table = med.copy()
    if baselines and chosen:
        missing = sorted((set(baselines) | set(chosen)) - set(med.columns))
        if missing:
            raise SettingError(
                f"unknown method label {missing[0]!r}; labels in the results: "
                f"{', '.join(med.columns)}"
            )
        budget = ttt.groupby(["instance", "eps"])["max_time"].max()
        best_base = med[list(baselines)].min(axis=1)
        best_chosen = med[list(chosen)].min(axis=1)
        speed = []
        for key in med.index:
            b, c = best_base[key], best_chosen[key]
            if not np.isfinite(c):
                speed.append("")
            elif np.isfinite(b):
                speed.append(f"{b / c:.3g}")
            else:
                speed.append(f">= {budget[key] / c:.3g}")
        table["speed-up"] = speed
    return table


def format_table(table: pd.DataFrame, fmt: str) -> str:
    """The table as text (``md``, ``csv`` or ``html``): times to 4 significant digits,
    blank where the budget ran out."""
    shown = table.copy()
    for col in shown.columns:
        if col != "speed-up":
            shown[col] = [("" if not np.isfinite(v) else f"{v:.4g}") for v in shown[col]]
    shown = shown.reset_index()
    shown["eps"] = [f"{e:g}" for e in shown["eps"]]
    if fmt == "csv":
        return shown.to_csv(index=False)
    if fmt == "html":
        return shown.to_html(index=False)
    header = "| " + " | ".join(map(str, shown.columns)) + " |"
    sep = "|" + "---|" * len(shown.columns)
    body = ["| " + " | ".join(map(str, r)) + " |" for r in shown.itertuples(index=False)]
    return "\n".join([header, sep, *body]) + "\n"


def performance_profile(ttt: pd.DataFrame, taus: np.ndarray | None = None) -> pd.DataFrame:
    """Dolan-More profile: columns tau, label, fraction solved within tau x the best time."""
    med = ttt.groupby(["instance", "eps", "label"])["time_s"].median().unstack("label")
    best = med.min(axis=1)
    ratio = med.div(best, axis=0).replace(np.nan, np.inf)
    finite = ratio.to_numpy()[np.isfinite(ratio.to_numpy())]
    top = max(2.0, float(finite.max()) * 1.1) if finite.size else 2.0
    taus = np.logspace(0, math.log10(top), 200) if taus is None else taus
    rows = [
        {"tau": t, "label": lab, "fraction": float(np.mean(ratio[lab].to_numpy() <= t))}
        for lab in ratio.columns
        for t in taus
    ]
    return pd.DataFrame(rows)


def curves(summaries: pd.DataFrame, traces: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """Certificate-vs-time lines of one dataset, one line per cell.

    Columns: ``line`` (legend name: ``label (seed s)``, plus the instance when the dataset
    has several, e.g. two problems), ``label``, ``seed``, ``instance``, ``cell_id``,
    ``time_s`` and ``certificate`` (at least :data:`CERT_FLOOR`, for log axes). Rows keep
    trace order within a line; lines are sorted by label, seed and instance.
    """
    cols = ["line", "label", "seed", "instance", "cell_id", "time_s", "certificate"]
    if not len(traces):
        return pd.DataFrame(columns=cols)
    t = traces[traces["dataset"] == dataset]
    instance = {row["cell_id"]: _instance(row) for _, row in summaries.iterrows()}
    keys = (
        t[["cell_id", "label", "seed"]]
        .drop_duplicates("cell_id")
        .assign(instance=lambda k: [instance.get(c, dataset) for c in k["cell_id"]])
        .sort_values(["label", "seed", "instance"], kind="stable")
    )
    several = keys["instance"].nunique() > 1
    names = [
        f"{r.label} (seed {r.seed})" + (f" {r.instance}" if several else "")
        for r in keys.itertuples(index=False)
    ]
    seen = pd.Series(names).duplicated(keep=False).to_numpy()
    keys["line"] = [
        f"{n} [{c[:8]}]" if dup else n
        for n, c, dup in zip(names, keys["cell_id"], seen, strict=True)
    ]
    by_cell = dict(tuple(t.groupby("cell_id", sort=False)))
    parts = []
    for k in keys.itertuples(index=False):
        g = by_cell[k.cell_id]
        parts.append(
            pd.DataFrame(
                {
                    "line": k.line,
                    "label": k.label,
                    "seed": k.seed,
                    "instance": k.instance,
                    "cell_id": k.cell_id,
                    "time_s": g["time_s"].to_numpy(dtype=float),
                    "certificate": np.maximum(g["certificate"].to_numpy(dtype=float), CERT_FLOOR),
                }
            )
        )
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=cols)


def _save_png_profile(prof: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for lab, g in prof.groupby("label"):
        ax.step(g["tau"], g["fraction"], where="post", label=lab)
    ax.set_xscale("log")
    ax.set_xlabel("tau (time / best time)")
    ax.set_ylabel("fraction of (instance, threshold) solved")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8)
    ax.set_title("Performance profile (Dolan & More 2002)")
    fig.tight_layout()
    _save_figure(fig, path)
    plt.close(fig)


def _save_figure(fig: Any, path: Path) -> None:
    """``fig`` as PNG at ``path``, written atomically (:mod:`ermviz.io`)."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    write_bytes_atomic(buf.getvalue(), path)


def _save_png_curves(lines: pd.DataFrame, dataset: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, g in lines.groupby("line", sort=False):
        ax.plot(g["time_s"], g["certificate"], label=name)
    ax.set_yscale("log")
    ax.set_xlabel("solver time (s)")
    ax.set_ylabel("certificate")
    ax.set_title(dataset)
    ax.legend(fontsize=8)
    fig.tight_layout()
    _save_figure(fig, path)
    plt.close(fig)


def _html_figure(
    lines: dict[str, tuple[np.ndarray, np.ndarray]],
    title: str,
    xlabel: str,
    ylabel: str,
    log_x: bool,
    log_y: bool,
) -> str:
    from bokeh.embed import file_html
    from bokeh.palettes import Category10_10
    from bokeh.plotting import figure
    from bokeh.resources import INLINE

    fig = figure(
        title=title,
        x_axis_label=xlabel,
        y_axis_label=ylabel,
        width=700,
        height=420,
        x_axis_type="log" if log_x else "linear",
        y_axis_type="log" if log_y else "linear",
        tools="pan,wheel_zoom,box_zoom,reset,hover,save",
    )
    for i, (name, (x, y)) in enumerate(lines.items()):
        fig.line(x, y, legend_label=name, line_width=2, color=Category10_10[i % 10])
    fig.legend.click_policy = "hide"
    return file_html(fig, INLINE, title)


def write_report(
    out_dir: str | Path,
    eps: Sequence[float] = (1e-2, 1e-4, 1e-6),
    fmt: str = "md",
    baselines: Sequence[str] = (),
    chosen: Sequence[str] = (),
    on_skip: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Write table, profiles and curves to ``DIR/report``; return the table and file paths.

    A results file that cannot be read (truncated, not Parquet) is left out and named to
    ``on_skip`` (default: a warning), so one damaged file does not cost the whole report;
    the traces read are those of the summaries read.
    """
    if fmt not in ("md", "csv", "html"):
        raise SettingError(f"--format {fmt!r} is not one of md, csv, html")
    if not eps or any((not math.isfinite(e)) or e <= 0 for e in eps):
        raise SettingError("--eps needs positive thresholds, e.g. --eps 1e-2 1e-4")
    rep = Path(out_dir) / "report"
    rep.mkdir(parents=True, exist_ok=True)
    summaries = load_summaries(out_dir, on_skip)
    traces = load_traces(out_dir, summaries["cell_id"], on_skip)
    ttt = times_from_frames(summaries, traces, eps)
    table = threshold_table(ttt, baselines, chosen)
    text = format_table(table, fmt)
    files = {}
    files["table"] = rep / f"table.{fmt}"
    write_text_atomic(text, files["table"])
    prof = performance_profile(ttt)
    files["profile_png"] = rep / "profile.png"
    _save_png_profile(prof, files["profile_png"])
    files["profile_html"] = rep / "profile.html"
    write_text_atomic(
        _html_figure(
            {
                lab: (g["tau"].to_numpy(), g["fraction"].to_numpy())
                for lab, g in prof.groupby("label")
            },
            "Performance profile",
            "tau",
            "fraction solved",
            True,
            False,
        ),
        files["profile_html"],
    )
    for ds in sorted(traces["dataset"].unique()) if len(traces) else []:
        lines = curves(summaries, traces, ds)
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(ds))
        png = rep / f"curves_{safe}.png"
        _save_png_curves(lines, str(ds), png)
        html = rep / f"curves_{safe}.html"
        write_text_atomic(
            _html_figure(
                {
                    name: (g["time_s"].to_numpy(), g["certificate"].to_numpy())
                    for name, g in lines.groupby("line", sort=False)
                },
                str(ds),
                "solver time (s)",
                "certificate",
                False,
                True,
            ),
            html,
        )
        files[f"curves_{safe}_png"] = png
        files[f"curves_{safe}_html"] = html
    return {"table": table, "text": text, "files": files, "times": ttt}
