"""What a fresh install compiles, kernel by kernel (issue 43).

A child process with an empty numba cache (``NUMBA_CACHE_DIR`` a new temporary folder)
builds and advances every run of the dashboard's warm-up plan
(:func:`ermviz.app.serving.warmup.plan`: the lessons' races, then the Frank-Wolfe methods on a
small dense and a small sparse problem), then the first CLI run on a bundled set and a
first fit of each estimator. numba's ``numba:compile`` event (fired only for a real
compilation, not for a cache load) gives each compilation's wall time; a compilation
nested inside another (a jitted helper typed while its caller compiles) is charged to
the helper, so the per-kernel times are exclusive and add up to the total.

The report:

* the total from an empty cache, split into compiling (the events) and the rest
  (imports, data, the few steps each run takes);
* per kernel (function x signature): compile seconds; per function: its number of
  specializations (signatures) and their total; the top ten;
* per warm-up group (a lesson, or a family problem): when its last kernel was ready,
  counted from the child's start: when a class could start that lesson.

Usage::

    .venv/bin/python benchmarks/compile_times.py [--out benchmarks/results/compile_times.txt]
        [--tag before] [--skip-estimators] [--skip-cli]

It deletes nothing: the cache folder is its own temporary one.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from bench_common import core_version, table, write_atomic

REPO = Path(__file__).resolve().parent.parent


# -- the child: compile everything, report events ---------------------------------------
def _child(skip_cli: bool, skip_estimators: bool, groups: list[str] | None = None) -> None:
    import numba.core.event as ev

    t_start = time.perf_counter()
    c_start = time.process_time()
    stack: list[list] = []  # [key, t0, nested seconds, cpu t0, nested cpu seconds]
    kernels: dict[str, float] = defaultdict(float)
    kernels_cpu: dict[str, float] = defaultdict(float)
    first_seen: dict[str, float] = {}

    class Recorder(ev.Listener):
        def on_start(self, event):
            stack.append([_key(event.data), time.perf_counter(), 0.0, time.thread_time(), 0.0])

        def on_end(self, event):
            key, t0, nested, c0, nested_cpu = stack.pop()
            dt = time.perf_counter() - t0
            dc = time.thread_time() - c0
            kernels[key] += dt - nested
            kernels_cpu[key] += dc - nested_cpu
            first_seen.setdefault(key, t0 - t_start)
            if stack:
                stack[-1][2] += dt
                stack[-1][4] += dc

    def _key(data) -> str:
        disp = data["dispatcher"]
        func = disp.py_func
        name = f"{func.__module__}.{func.__qualname__}"
        sig = ", ".join(str(a) for a in data["args"])
        return f"{name}({sig})"

    ev.register("numba:compile", Recorder())  # for the whole process
    phases: list[tuple[str, str, float, float]] = []  # (group, label, t_end, seconds)

    from ermviz.app.serving import warmup

    items = warmup.plan()
    if groups is not None:
        items = [it for it in items if it.group in groups]
    builder = warmup._Builder()
    try:
        from ermviz.app.serving.warmup_plan import kind_of
    except ImportError:  # (an older tree measured for a before table)

        def kind_of(solver) -> str:
            return type(solver).__name__

    items_cpu: dict[str, float] = {}
    items_kind: dict[str, str] = {}
    for item in items:
        t, c = time.perf_counter(), time.process_time()
        try:
            solver = builder.build(item)
            items_kind[item.label] = kind_of(solver) if solver is not None else ""
            err = ""
        except Exception as exc:  # reported, the others go on
            err = f" FAILED {type(exc).__name__}: {exc}"
        items_cpu[item.label] = time.process_time() - c
        phases.append(
            (item.group, item.label + err, time.perf_counter() - t_start, time.perf_counter() - t)
        )
    if not skip_cli:
        t = time.perf_counter()
        from ermviz import cli

        with open(os.devnull, "w") as null:
            saved = sys.stdout
            sys.stdout = null
            try:
                cli.main(
                    ["run", "--dataset", "a1a", "--problem", "logreg-l1", "--method", "pfw",
                     "--radius", "10", "--max-iter", "50"]
                )  # fmt: skip
            except SystemExit:
                pass
            finally:
                sys.stdout = saved
        phases.append(("cli", "ermviz run a1a logreg-l1 pfw", time.perf_counter() - t_start,
                       time.perf_counter() - t))  # fmt: skip
    if not skip_estimators:
        import warnings

        import numpy as np
        from sklearn.base import is_classifier

        from ermviz import estimators as est

        rng = np.random.default_rng(0)
        X = rng.standard_normal((60, 5))
        y = np.where(X[:, 0] + 0.3 * rng.standard_normal(60) > 0, 1, -1)
        yr = X @ rng.standard_normal(5)
        for name in sorted(n for n in dir(est) if n[:1].isupper()):
            cls = getattr(est, name)
            if not (
                isinstance(cls, type)
                and hasattr(cls, "fit")
                and cls.__module__.startswith("ermviz")
            ):
                continue
            t = time.perf_counter()
            target = y if is_classifier(cls()) else yr
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    cls().fit(X, target)
                err = ""
            except Exception as exc:
                err = f" FAILED {type(exc).__name__}: {exc}"
            phases.append(("estimators", name + err, time.perf_counter() - t_start,
                           time.perf_counter() - t))  # fmt: skip
    total = time.perf_counter() - t_start
    json.dump(
        {
            "total": total,
            "total_cpu": time.process_time() - c_start,
            "kernels": kernels,
            "kernels_cpu": kernels_cpu,
            "first_seen": first_seen,
            "phases": phases,
            "items_cpu": items_cpu,
            "items_kind": items_kind,
        },
        sys.stdout,
    )


# -- the parent: run the child, print the report ------------------------------------------
def _by_function(kernels: dict[str, float]) -> dict[str, list[float]]:
    by_func: dict[str, list[float]] = defaultdict(list)
    for key, sec in kernels.items():
        by_func[key.split("(", 1)[0]].append(sec)
    return by_func


def _ready(phases: list) -> tuple[dict[str, float], dict[str, float], dict[str, int]]:
    ready: dict[str, float] = {}
    spent: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    for group, _label, t_end, sec in phases:
        ready[group] = t_end
        spent[group] += sec
        count[group] += 1
    return ready, spent, count


def _report(data: dict, tag: str, before: dict | None = None) -> str:
    kernels: dict[str, float] = data["kernels"]
    # CPU seconds (thread time) are what a loaded machine leaves comparable; older runs
    # recorded wall seconds only.
    cpu: dict[str, float] = data.get("kernels_cpu") or {}
    by_func = _by_function(kernels)
    compile_total = sum(kernels.values())
    lines = [
        f"# compile_times.py ({tag}); core {core_version()}",
        f"# {time.strftime('%Y-%m-%d %H:%M:%S')}, load average at start {os.getloadavg()[0]:.2f}"
        f", {os.cpu_count()} cores",
        "",
        f"total from an empty cache: {data['total']:.1f} s (compiling {compile_total:.1f} s,"
        f" the rest {data['total'] - compile_total:.1f} s)",
    ]
    if cpu:
        lines.append(
            f"CPU seconds: {data['total_cpu']:.1f} (compiling {sum(cpu.values()):.1f}); wall"
            " above CPU is time the machine's other processes took"
        )
    lines += [
        f"kernels (function x signature) compiled: {len(kernels)}; functions: {len(by_func)}",
        "",
        "## top ten kernels (function x signature), exclusive compile seconds",
    ]
    top = sorted(kernels.items(), key=lambda kv: -kv[1])[:10]
    lines.append(
        table(
            ["seconds", "cpu s", "kernel"],
            [[round(s, 2), round(cpu.get(k, float("nan")), 2), k[:160]] for k, s in top],
        )
    )
    lines += ["", "## per function: specializations and total compile seconds (top 25)"]
    funcs = sorted(by_func.items(), key=lambda kv: -sum(kv[1]))
    lines.append(
        table(
            ["seconds", "specializations", "function"],
            [[round(sum(v), 2), len(v), k] for k, v in funcs[:25]],
        )
    )
    lines += ["", "## when each group was ready (seconds from the child's start)"]
    ready, spent, count = _ready(data["phases"])
    lines.append(
        table(
            ["ready at s", "own s", "items", "group"],
            [[round(ready[g], 1), round(spent[g], 1), count[g], g] for g in ready],
        )
    )
    if before is not None:
        lines += ["", _compare(before, data)]
    failed = [p for p in data["phases"] if "FAILED" in p[1]]
    if failed:
        lines += ["", "## failed items"] + [f"- {p[0]}: {p[1]}" for p in failed]
    lines += ["", "## all kernels", table(
        ["seconds", "cpu s", "kernel"],
        [[round(s, 3), round(cpu.get(k, float("nan")), 3), k[:200]]
         for k, s in sorted(kernels.items(), key=lambda kv: -kv[1])],
    )]  # fmt: skip
    return "\n".join(lines) + "\n"


def _compare(before: dict, after: dict) -> str:
    """Before/after: totals, the functions of the before's top 25, groups' ready times."""
    b_f, a_f = _by_function(before["kernels"]), _by_function(after["kernels"])
    lines = [
        "## before -> after",
        f"total from an empty cache: {before['total']:.1f} s -> {after['total']:.1f} s"
        f" ({after['total'] / before['total']:.2f}x); compiling"
        f" {sum(before['kernels'].values()):.1f} s -> {sum(after['kernels'].values()):.1f} s;"
        f" kernels {len(before['kernels'])} -> {len(after['kernels'])}, functions"
        f" {len(b_f)} -> {len(a_f)}",
    ]
    if before.get("kernels_cpu") and after.get("kernels_cpu"):
        lines.append(
            f"CPU seconds: {before['total_cpu']:.1f} -> {after['total_cpu']:.1f}"
            f" ({after['total_cpu'] / before['total_cpu']:.2f}x)"
        )
    rows = []
    for name, secs in sorted(b_f.items(), key=lambda kv: -sum(kv[1]))[:25]:
        new = a_f.get(name, [])
        rows.append([round(sum(secs), 2), len(secs), round(sum(new), 2), len(new), name])
    lines += ["", table(["before s", "n", "after s", "n", "function"], rows), ""]
    rb, _, _ = _ready(before["phases"])
    ra, _, _ = _ready(after["phases"])
    lines.append(
        table(
            ["before ready at s", "after ready at s", "group"],
            [[round(rb.get(g, float("nan")), 1), round(ra.get(g, float("nan")), 1), g]
             for g in dict.fromkeys([*rb, *ra])],
        )
    )  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--tag", default="")
    ap.add_argument("--skip-cli", action="store_true")
    ap.add_argument("--skip-estimators", action="store_true")
    ap.add_argument(
        "--groups", default="", help="comma-separated warm-up groups to compile (default all)"
    )
    ap.add_argument("--before", type=Path, default=None, help="a before .json to compare with")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    groups = [g for g in args.groups.split(",") if g] or None
    if args.child:
        _child(args.skip_cli, args.skip_estimators, groups)
        return 0
    with tempfile.TemporaryDirectory(prefix="ermviz-numba-cache-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "ERMVIZ_OFFLINE": "1"}
        env.pop("ERMVIZ_DATA", None)  # what a fresh install sees: bundled data only
        cmd = [sys.executable, __file__, "--child"]
        cmd += ["--skip-cli"] * args.skip_cli + ["--skip-estimators"] * args.skip_estimators
        cmd += ["--groups", args.groups] if groups else []
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=REPO)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        return proc.returncode
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    before = json.loads(args.before.read_text()) if args.before else None
    text = _report(data, args.tag or "run", before)
    print(text)
    if args.out:
        write_atomic(args.out, text)
        write_atomic(args.out.with_suffix(".json"), json.dumps(data, indent=0))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
