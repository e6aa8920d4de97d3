"""Command line: ``python -m ermviz {run, sweep, report, cv-radius, methods, datasets, serve}``.

``run`` solves one problem headless with the same runner as the dashboard, shows a
progress bar with the live certificate on stderr, optionally writes the trace (CSV or
Parquet, atomically), and prints a one-line JSON summary as the last line on stdout.
Bad arguments or data exit with status 2 and one line on stderr; a run that ends in
error exits with status 1, and so does a run whose trace could not be written (``--out``
on a full disk: one line on stderr, no file left behind, the JSON summary still printed).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

from ermviz.errors import ErmvizError, SettingError


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (the CLI contract)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"ermviz: error: {message} (see --help)\n")


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


_DESCRIPTION = """\
ermviz: an interactive laboratory for empirical-risk-minimization solvers. Every command
runs the same solvers and writes the same traces as the dashboard."""

_EXAMPLES = """\
examples:
  {prog} serve                  the dashboard at http://127.0.0.1:5006/app (bundled data)
  {prog} run --dataset a1a --problem logreg-l1 --method pfw --radius 10 --tol 1e-8
  {prog} run --dataset wdbc --standardize --problem svm-dual --C 1 --method pfw --out t.csv
  {prog} methods                the problems, methods, step rules and their settings
  {prog} datasets               the catalog, and where each file was found

{prog} COMMAND --help describes a command's options."""


def _prog() -> str:
    """How the user started us: ``ermviz`` (the installed script) or ``python -m ermviz``
    (``sys.argv[0]`` is then the package's ``__main__.py``)."""
    name = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    return "python -m ermviz" if name in ("__main__.py", "-m", "-c", "") else "ermviz"


def build_parser() -> argparse.ArgumentParser:
    prog = _prog()
    p = _Parser(
        prog=prog,
        description=_DESCRIPTION,
        epilog=_EXAMPLES.format(prog=prog),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    r = sub.add_parser("run", help="solve one problem headless and print a JSON summary")
    r.add_argument(
        "--dataset",
        required=True,
        help="catalog name, bundled name (wdbc, blobs, ...) or a LIBSVM/CSV path",
    )
    r.add_argument("--problem", required=True, help="problem name (see `methods`)")
    r.add_argument("--method", required=True, help="method name (see `methods`)")
    r.add_argument(
        "--step",
        default=None,
        help="step rule (default: the method's own, e.g. exact for fw/afw/pfw; see `methods`)",
    )
    r.add_argument("--C", type=_float, help="svm-dual: penalty C > 0 (shorthand for --set C=)")
    r.add_argument(
        "--radius",
        type=_float,
        help=(
            "logreg-l1, least-squares, matrix-completion: radius in [1e-150, 1e150] of "
            "the l1 / l2 / nuclear-norm ball (K-sparse: tau; shorthand for --set radius=)"
        ),
    )
    r.add_argument("--tol", type=_float, default=1e-6, help="stop at certificate <= tol")
    r.add_argument(
        "--max-iter", type=_int, default=None, help="maximum iterations (default: no limit)"
    )
    r.add_argument(
        "--max-time",
        type=_float,
        default=300.0,
        help="maximum solver seconds (default 300): time in the method's own steps; "
        "certificate evaluations the method does not need, data loading, set-up and JIT "
        "compilation are not counted (--max-wall bounds the run's wall time)",
    )
    r.add_argument(
        "--max-wall",
        type=_float,
        default=None,
        help="maximum wall seconds of the run, certificate evaluations included "
        "(default: no limit)",
    )
    r.add_argument(
        "--max-samples",
        type=_float,
        default=None,
        help="stochastic methods: stop before a step would draw more than this many inner "
        "samples (the trace's `samples`)",
    )
    r.add_argument(
        "--seed",
        type=_int,
        default=0,
        help="seed of the train/test split, and of a stochastic method's samples (unless "
        "--set seed= says otherwise)",
    )
    r.add_argument(
        "--test-size",
        type=_float,
        default=None,
        help="hold out this fraction as a seeded test split",
    )
    r.add_argument(
        "--repeat",
        type=_int,
        default=1,
        help="stochastic methods: run K times with seeds --seed, --seed + 1, ...; the summary "
        "gives each run and the mean and standard deviation of its measures, the trace a "
        "`seed` column",
    )
    r.add_argument("--standardize", action="store_true", help="standardize features")
    r.add_argument("--normalize", action="store_true", help="scale rows to unit l2 norm")
    r.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any other setting the problem, method or step rule declares",
    )
    r.add_argument("--out", help="write the trace to FILE.csv or FILE.parquet")
    r.add_argument("--no-progress", action="store_true", help="no progress bar")

    cv = sub.add_parser("cv-radius", help="choose the logreg-l1 radius by k-fold CV")
    cv.add_argument("--dataset", required=True, help="catalog name, bundled name or path")
    cv.add_argument("--folds", type=_int, default=5, help="number of stratified folds")
    cv.add_argument("--seed", type=_int, default=0, help="seed of the fold assignment")
    cv.add_argument(
        "--radii", default=None, help="comma-separated candidate radii (default 10^-1 ... 10^3)"
    )
    cv.add_argument("--standardize", action="store_true", help="standardize features")

    sw = sub.add_parser("sweep", help="run a grid of cells on Dask (resumable)")
    sw.add_argument("config", help="sweep config (TOML)")
    sw.add_argument("--scheduler", help="address of an existing Dask scheduler")
    sw.add_argument("--out", default="sweep-results", help="results folder")
    sw.add_argument("--workers", type=_int, help="LocalCluster workers (default: cores)")
    sw.add_argument("--retry-failed", action="store_true", help="re-run cells that failed")
    sw.add_argument("--no-progress", action="store_true", help="no progress bar")

    rp = sub.add_parser("report", help="tables, profiles and curves from a results folder")
    rp.add_argument("dir", help="results folder of a sweep")
    rp.add_argument("--eps", type=_float, nargs="+", help="thresholds (default: config's)")
    rp.add_argument("--format", default="md", help="table format: md, csv or html")
    rp.add_argument("--baseline", nargs="*", default=None, help="baseline method labels")
    rp.add_argument("--chosen", nargs="*", default=None, help="labels of the chosen methods")

    sub.add_parser("methods", help="list problems, methods, step rules and their settings")
    sub.add_parser("datasets", help="list the dataset catalog and where each file is")

    from ermviz import serve as serving

    sv = sub.add_parser(
        "serve",
        help="serve the dashboard (at /app) with safe defaults",
        description=(
            "Serve the dashboard with `panel serve`: loopback only, websocket origins "
            "localhost:PORT and 127.0.0.1:PORT, closed sessions dropped after 5 s, "
            "PYTHONMALLOC=malloc MALLOC_ARENA_MAX=2, numba kernels compiled in the background. "
            "Beyond the loopback interface a password is required (--password; the password "
            "itself comes from ERMVIZ_PASSWORD or the terminal, never the command line)."
        ),
    )
    sv.add_argument(
        "--address",
        default=serving.DEFAULT_ADDRESS,
        help="interface to listen on (default 127.0.0.1; 0.0.0.0 lets a classroom in)",
    )
    sv.add_argument("--port", type=_int, default=serving.DEFAULT_PORT, help="default 5006")
    sv.add_argument(
        "--allow-websocket-origin",
        action="append",
        dest="origins",
        metavar="HOST[:PORT]",
        help="an address students type (repeatable; default localhost:PORT, 127.0.0.1:PORT)",
    )
    sv.add_argument(
        "--threads",
        type=_int,
        default=None,
        help="solver threads computing at once, also numba's threads "
        "(default: the usable CPUs; 0 = no limit)",
    )
    sv.add_argument(
        "--procs",
        type=_int,
        default=None,
        help="worker processes building pages (default: 1 on 127.0.0.1; beyond it one per "
        "usable core, at most one per GiB of available memory); they share --threads",
    )
    sv.add_argument(
        "--password",
        action="store_true",
        help="a login page: the class password from ERMVIZ_PASSWORD, else typed here "
        "(required when --address is not a loopback one)",
    )
    sv.add_argument(
        "--admin-password",
        action="store_true",
        help="also the teacher's password (ERMVIZ_ADMIN_PASSWORD, else typed): only the "
        "teacher's sessions may open results folders",
    )
    sv.add_argument(
        "--no-password",
        action="store_true",
        help="serve beyond the loopback interface without a password (a warning)",
    )
    sv.add_argument(
        "--results-for-all",
        action="store_true",
        help="let every session open results folders (default: on 127.0.0.1 without a "
        "password only)",
    )
    sv.add_argument(
        "--show",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="open the page in a browser (default: --show)",
    )
    sv.add_argument(
        "--warmup",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="compile the numba kernels in the background at start (default: --warmup)",
    )
    sv.add_argument(
        "--print-command",
        action="store_true",
        help="print the environment and the panel serve command instead of running it",
    )
    return p


def _check_out(path: str | None) -> Path | None:
    if path is None:
        return None
    out = Path(path)
    if out.suffix.lower() not in (".csv", ".parquet"):
        raise SettingError(f"--out {path}: the file name must end in .csv or .parquet")
    if not out.parent.exists():
        raise SettingError(f"--out {path}: folder {out.parent} does not exist; create it first")
    return out


def _cmd_run(args: argparse.Namespace) -> int:
    from ermviz.experiment import (
        Preprocessing,
        RunConfig,
        make_problem,
        validate_method_side,
    )
    from ermviz.runner import NO_ITER_LIMIT, Budget
    from ermviz.settings import parse_assignments

    t_start = time.perf_counter()
    out = _check_out(args.out)
    settings: dict[str, Any] = parse_assignments(args.set)
    if args.C is not None:
        settings["C"] = args.C
    if args.radius is not None:
        settings["radius"] = args.radius
    budget = Budget(
        tol=args.tol,
        max_iter=NO_ITER_LIMIT if args.max_iter is None else args.max_iter,
        max_time=args.max_time,
        max_wall=args.max_wall,
        max_work=None if args.max_samples is None else ("samples", args.max_samples),
    )
    prep = Preprocessing(
        standardize=args.standardize,
        normalize=args.normalize,
        test_size=args.test_size,
        seed=args.seed,
    )
    from ermviz.registry import get_method

    # An empty step means the method's default (or what an alias implies); RunConfig
    # resolves aliases, so cfg.method is always a listed method.
    cfg = RunConfig(
        args.dataset, args.problem, args.method, args.step or "", settings, budget, prep
    )
    spec = get_method(cfg.method)
    seeded = any(s.name == "seed" for s in spec.settings)
    if args.repeat < 1:
        raise SettingError(f"--repeat {args.repeat} is out of range; allowed [1, inf)")
    if args.repeat > 1 and not seeded:
        raise SettingError(
            f"--repeat needs a stochastic method (one with a seed); {cfg.method} is "
            "deterministic: its runs would be identical"
        )
    if "seed" not in cfg.settings and seeded:
        cfg.settings["seed"] = args.seed  # a stochastic method follows --seed
    resolved = validate_method_side(cfg)  # bad names and settings fail before the data load
    # One scope for the problem and the run: a first run (nothing in numba's cache) says
    # "compiling the PFW kernels for logreg-l1, first run only: ~N s" once, on stderr.
    from ermviz.compile_notice import Scope, announce

    args.compile_scope = Scope(cfg.problem, resolved.method)
    with announce(args.compile_scope):
        problem = make_problem(cfg)
    # Warnings about the set-up go out before the solver is built (compilation may take
    # seconds on a fresh install): the problem's scaling check (badly scaled features,
    # ermviz.families.scaling), then the method's own advice.
    from ermviz.families.scaling import scaling_notices

    advice = spec.advise(problem) if spec.advise else ()
    for notice in dict.fromkeys([*scaling_notices(problem, cfg.method), *advice]):
        print(f"ermviz: warning: {notice}", file=sys.stderr, flush=True)
    if args.repeat == 1:
        result, run = _run_once(cfg, problem, args, t_start, resolved)
        frame, failed = run.frame, result["status"] == "error"
    else:
        result, frame, failed = _run_repeated(cfg, problem, args, t_start)
    if out is not None:
        from ermviz.io import write_frame_atomic

        try:
            write_frame_atomic(frame(), out)
            result["out"] = str(out)
        except OSError as exc:  # a full disk, a folder gone: say so, keep the summary
            # The writer left neither a partial file nor its temporary one behind.
            reason = exc.strerror or " ".join(str(exc).split())
            print(
                f"ermviz: error: --out {out}: the trace was not written ({reason})", file=sys.stderr
            )
            failed = True
    print(json.dumps(_json_safe(result)))
    return 1 if failed else 0


def _run_repeated(cfg: Any, problem: Any, args: argparse.Namespace, t_start: float):
    """``--repeat K``: the run with seeds ``seed, seed + 1, ...`` (one after the other, so
    each has the machine to itself); the summary's measures are their means, with
    ``*_std`` beside them and every run under ``runs``."""
    import dataclasses
    import statistics

    import pandas as pd

    first = int(cfg.settings["seed"])
    results, frames = [], []
    for r in range(args.repeat):
        one = dataclasses.replace(cfg, settings={**cfg.settings, "seed": first + r})
        result, run = _run_once(one, problem, args, t_start)
        results.append(result)
        frames.append(run.frame().assign(seed=first + r))
    summary: dict[str, Any] = {k: results[0][k] for k in ("dataset", "problem", "method", "step")}
    summary["repeat"] = args.repeat
    summary["seeds"] = [first + r for r in range(args.repeat)]
    summary["status"] = sorted({x["status"] for x in results})
    counters = list(run.solver.summary_columns)
    for key in ("objective", "gap", "iterations", "time_s", *counters):
        values = [float("nan") if x.get(key) is None else float(x[key]) for x in results]
        summary[key] = statistics.fmean(values)
        summary[f"{key}_std"] = statistics.stdev(values)
    summary["certificate_kind"] = results[0]["certificate_kind"]
    summary["runs"] = [_json_safe(x) for x in results]
    failed = any(x["status"] == "error" for x in results)
    return summary, (lambda: pd.concat(frames, ignore_index=True)), failed


def _run_once(
    cfg: Any, problem: Any, args: argparse.Namespace, t_start: float, resolved: Any = None
):
    """Run ``cfg`` on ``problem`` (its method side ``resolved`` already, when given): (its
    JSON summary, the finished run)."""
    from ermviz.compile_notice import announce, storage_of
    from ermviz.experiment import make_run

    scope = args.compile_scope
    scope.storage = storage_of(problem)
    with announce(scope):
        run = make_run(cfg, problem=problem, resolved=resolved)
    setup_s = time.perf_counter() - t_start
    run.start()
    try:
        _follow(run, progress=(not args.no_progress and sys.stderr.isatty()) or False)
    except KeyboardInterrupt:
        run.stop()
        run.join()
    summary = run.summary()
    result = {
        "dataset": cfg.dataset,
        "problem": cfg.problem,
        "method": cfg.method,
        "step": cfg.step,
        "status": summary["status"],
        "iterations": summary["iterations"],
        "time_s": round(summary["time_s"], 6),
        "wall_s": round(summary["wall_s"], 6),
        "setup_s": round(setup_s, 6),
        "objective": summary["objective"],
        "gap": summary["gap"],
        "certificate_kind": summary["certificate_kind"],
        "message": summary["message"],
    }
    if "seed" in cfg.settings:
        result["seed"] = int(cfg.settings["seed"])
    last = run.trace.last() or {}
    for column in run.solver.summary_columns:  # a family's work counters
        value = float(last.get(column, float("nan")))
        result[column] = int(value) if value.is_integer() else value
    x = run.solver.iterate()
    result.update(run.solver.problem.solution_summary(x))
    result.update(run.solver.problem.test_metrics(x))
    return result, run


def _json_safe(d: dict[str, Any]) -> dict[str, Any]:
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}


def _follow(run: Any, progress: bool) -> None:
    """Wait for ``run``, showing iterations and the live certificate on stderr."""
    if not progress:
        while not run.join(0.1):
            pass
        return
    from tqdm import tqdm

    from ermviz.runner import NO_ITER_LIMIT

    total = None if run.budget.max_iter >= NO_ITER_LIMIT else run.budget.max_iter
    with tqdm(total=total, unit="it", file=sys.stderr, leave=False, dynamic_ncols=True) as bar:
        shown = 0
        while True:
            finished = run.join(0.1)
            last = run.trace.last()
            if last is not None:
                it = int(last["iteration"])
                bar.update(it - shown)
                shown = it
                bar.set_postfix_str(f"{run.solver.certificate_kind}={last['certificate']:.3e}")
            if finished:
                return


def _cmd_cv_radius(args: argparse.Namespace) -> int:
    from ermviz.experiment import Preprocessing, load_data
    from ermviz.model_selection import choose_radius_cv

    radii = None
    if args.radii:
        try:
            radii = [float(r) for r in args.radii.split(",")]
        except ValueError:
            raise SettingError(
                f"--radii {args.radii!r} is not a comma-separated list of numbers"
            ) from None
    ds = load_data(args.dataset, Preprocessing(standardize=args.standardize))
    result = choose_radius_cv(ds, radii, folds=args.folds, seed=args.seed)
    print(result.table().to_string(index=False), file=sys.stderr)
    print(json.dumps({"dataset": args.dataset, "radius": result.radius, "folds": args.folds}))
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    from ermviz.sweep import sweep

    summ = sweep(
        args.config,
        args.out,
        scheduler=args.scheduler,
        workers=args.workers,
        retry_failed=args.retry_failed,
        progress=not args.no_progress and sys.stderr.isatty(),
    )
    counts = summ["status"].value_counts().to_dict()
    print(json.dumps({"out": str(args.out), "cells": len(summ), "status": counts}))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from ermviz.report import report_options, write_report

    opts = report_options(args.dir)
    eps = args.eps or opts.get("eps") or [1e-2, 1e-4, 1e-6]
    baselines = args.baseline if args.baseline is not None else opts.get("baselines", [])
    chosen = args.chosen if args.chosen is not None else opts.get("chosen", [])
    result = write_report(
        args.dir,
        eps,
        args.format,
        baselines,
        chosen,
        on_skip=lambda message: print(f"ermviz: warning: {message}", file=sys.stderr),
    )
    print(result["text"])
    print(
        json.dumps(
            {
                "report": str(Path(args.dir) / "report"),
                "files": sorted(p.name for p in result["files"].values()),
            }
        )
    )
    return 0


def _cmd_methods() -> int:
    from ermviz.registry import ALIASES, METHODS, PROBLEMS, STEP_RULES

    def settings_lines(decl: Any) -> list[str]:
        return [
            f"      {s.name:<14} {s.kind:<6} default={s.default!s:<8} range={s.range_text():<20}"
            f" {s.help}"
            for s in decl
        ]

    lines = ["Problems:"]
    for name, cls in PROBLEMS.items():
        lines.append(f"  {name:<12} {cls.title}  [certificate: {cls.certificate_kind}]")
        lines += settings_lines(cls.settings_decl)
    lines.append("Methods:")
    for name, spec in METHODS.items():
        lines.append(f"  {name:<12} {spec.title}  ({spec.reference})")
        lines.append(f"      problems: {', '.join(spec.problems)}")
        lines.append(f"      steps:    {', '.join(spec.step_rules)} (default: {spec.step})")
        lines += settings_lines(spec.settings)
    lines.append("Step rules:")
    for name, rule in STEP_RULES.items():
        lines.append(f"  {name:<12} {rule.title}  ({rule.reference})")
        lines += settings_lines(rule.settings)
    lines.append("Aliases (older names, still accepted by run, sweep configs and links):")
    for name, alias in ALIASES.items():
        lines.append(f"  {name:<14} = {alias.note}")
    print("\n".join(lines))
    return 0


def _cmd_datasets() -> int:
    from ermviz.data import list_datasets
    from ermviz.data.sources import PLACE_KINDS, search_places

    frame = list_datasets()
    with_pd_options = frame.to_string(index=False)
    print(with_pd_options)
    # Where the files are looked for, so that a "not found" says where to put them.
    print("\nCatalog files are looked for in these folders, in order (the first match wins):")
    for k, (folder, why) in enumerate(search_places(), start=1):
        missing = "" if folder.is_dir() else "; does not exist"
        print(f"  {k}. {folder} - {PLACE_KINDS.get(why, why)}{missing}")
    data_env = os.environ.get("ERMVIZ_DATA", "")
    state = f"is {data_env!r}" if data_env.strip() else "is not set"
    print(
        f"ERMVIZ_DATA {state}: set it to the folder(s) that hold the LIBSVM files "
        f"({os.pathsep!r}-separated). A running dashboard sees a changed ERMVIZ_DATA only "
        "once restarted; files added to a folder above show on a page reload."
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    try:
        if args.command == "run":
            return _cmd_run(args)
        if args.command == "cv-radius":
            return _cmd_cv_radius(args)
        if args.command == "sweep":
            return _cmd_sweep(args)
        if args.command == "report":
            return _cmd_report(args)
        if args.command == "methods":
            return _cmd_methods()
        if args.command == "serve":
            from ermviz.serve import serve

            return serve(
                address=args.address,
                port=args.port,
                origins=args.origins,
                threads=args.threads,
                show=args.show,
                warmup=args.warmup,
                print_only=args.print_command,
                procs=args.procs,
                password=args.password,
                admin_password=args.admin_password,
                no_password=args.no_password,
                results_for_all=args.results_for_all,
            )
        return _cmd_datasets()
    except ErmvizError as exc:
        print(f"ermviz: error: {exc}", file=sys.stderr)
        return 2
    finally:
        if os.environ.get("ERMVIZ_PROFILE"):
            print(f"ermviz: {time.perf_counter() - t0:.3f} s", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
