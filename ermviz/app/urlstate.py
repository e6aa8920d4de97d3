"""The configuration in the URL query string, so that a shared link opens the same set-up.

Format (every key optional; unknown keys are rejected)::

    ?dataset=wdbc&problem=svm-dual&p.C=1000&standardize=1&normalize=0&test_size=0
    &seed=0&tol=1e-10&max_iter=100000000&max_time=10&animate=0&step_delay=0.03
    &run=fw:exact&run=afw:exact&run=pfw:armijo:armijo_c=0.02,max_trials=30

``p.<name>`` are problem settings; each ``run`` is ``method:step`` optionally followed by
``:name=value,...`` (that method's and step rule's settings). Every value is parsed by the
same declarations the widgets use, so a link can only say what the controls can.

A link names its dataset only by a catalog or bundled name, never by a path: anything
else (a path, an uploaded file's name, a name that is in neither list) is rejected, so a
link cannot make the server read a file of its choosing. A catalog name whose file is not
on this server is rejected as well (the dashboard never downloads on a link's behalf).
"""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import parse_qsl, urlencode

from ermviz import data as data_mod
from ermviz.app.model import (
    DashboardModel,
    RunSpec,
    parse_settings,
    settings_of,
)
from ermviz.errors import ErmvizError, SettingError
from ermviz.registry import ALIASES, METHODS, PROBLEMS, STEP_RULES, resolve_alias
from ermviz.runner import Budget

_BOOL = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}
_SCALARS = (
    "standardize",
    "normalize",
    "test_size",
    "seed",
    "tol",
    "max_iter",
    "max_time",
    "max_samples",
    "repeat",
    "animate",
    "step_delay",
)
#: Most runs a link may describe.
MAX_LINK_RUNS = 10


class LinkError(ErmvizError):
    """A query string that does not describe a valid configuration."""


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value) if not value.is_integer() or abs(value) >= 1e15 else str(int(value))
    return str(value)


def config(model: DashboardModel) -> dict[str, Any]:
    """The shareable configuration of ``model`` as plain values (what a link carries)."""
    return {
        "dataset": model.dataset,
        "problem": model.problem,
        # Normalized through the declarations: values equal to a default are dropped.
        "problem_settings": dict(
            sorted(
                parse_settings(
                    PROBLEMS[model.problem].settings_decl, model.problem_settings, model.problem
                ).items()
            )
        ),
        "standardize": bool(model.standardize),
        "normalize": bool(model.normalize),
        "test_size": float(model.test_size),
        "seed": int(model.seed),
        "tol": float(model.tol),
        "max_iter": int(model.max_iter),
        "max_time": float(model.max_time),
        "max_samples": float(model.max_samples),
        "repeat": int(model.repeat),
        "animate": bool(model.animate),
        "step_delay": float(model.step_delay),
        "runs": [spec.as_tuple() for spec in model.specs],
    }


def is_linkable_dataset(name: str) -> bool:
    """Whether a link may name ``name``: a bundled name or a catalog name, nothing else."""
    try:
        names = set(data_mod.bundled_names()) | set(data_mod.catalog())
    except ErmvizError:
        names = set(data_mod.bundled_names())
    return name in names


def encode(model: DashboardModel) -> str:
    """The query string (without ``?``) of ``model``'s configuration.

    An uploaded dataset is left out: a link never carries a file.
    """
    cfg = config(model)
    items: list[tuple[str, str]] = []
    if is_linkable_dataset(cfg["dataset"]):
        items.append(("dataset", cfg["dataset"]))
    items.append(("problem", cfg["problem"]))
    items += [(f"p.{k}", _fmt(v)) for k, v in cfg["problem_settings"].items()]
    items += [(k, _fmt(cfg[k])) for k in _SCALARS]
    for method, step, settings in cfg["runs"]:
        text = f"{method}:{step}"
        if settings:
            text += ":" + ",".join(f"{k}={_fmt(v)}" for k, v in settings)
        items.append(("run", text))
    return urlencode(items, safe=":,")


def _float(key: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise LinkError(f"link: {key}={text!r} is not a number") from None
    if not math.isfinite(value):
        raise LinkError(f"link: {key}={text!r} is not a finite number")
    return value


def _int(key: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise LinkError(f"link: {key}={text!r} is not an integer") from None


def _bool(key: str, text: str) -> bool:
    try:
        return _BOOL[text.strip().lower()]
    except KeyError:
        raise LinkError(f"link: {key}={text!r} is not 0/1 or true/false") from None


def _run(text: str, problem: str) -> tuple[str, str, dict[str, Any]]:
    parts = text.split(":", 2)
    if len(parts) < 2:
        raise LinkError(f"link: run={text!r} is not method:step[:name=value,...]")
    method, step = parts[0].strip(), parts[1].strip()
    given: dict[str, str] = {}
    if len(parts) == 3 and parts[2].strip():
        for item in parts[2].split(","):
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise LinkError(f"link: run setting {item!r} is not name=value")
            given[key.strip()] = value.strip()
    if method in ALIASES:  # links made with an older method name keep working
        try:
            method, step, fixed = resolve_alias(method, step, given, problem)
        except ErmvizError as exc:
            raise LinkError(f"link: {exc}") from None
        given = {k: str(v) for k, v in fixed.items()}
    if method not in METHODS:
        raise LinkError(f"link: unknown method {method!r}; methods: {', '.join(METHODS)}")
    if problem not in METHODS[method].problems:
        raise LinkError(f"link: method {method!r} does not solve problem {problem!r}")
    if step not in STEP_RULES or step not in METHODS[method].step_rules:
        raise LinkError(
            f"link: method {method!r} does not take step rule {step!r}; it takes "
            f"{', '.join(METHODS[method].step_rules)}"
        )
    try:
        settings = parse_settings(settings_of(method, step), given, f"{method} with step {step}")
    except SettingError as exc:
        raise LinkError(f"link: {exc}") from None
    return method, step, settings


def decode(query: str) -> dict[str, Any]:
    """Parse and validate a query string; returns only the keys it sets.

    Raises
    ------
    LinkError
        For a dataset that is not a catalog or bundled name (a path, say), an unknown key,
        or any value the controls would not accept; the message is one line.
    """
    pairs = parse_qsl(query.lstrip("?"), keep_blank_values=True)
    out: dict[str, Any] = {}
    runs: list[str] = []
    psettings: dict[str, str] = {}
    for key, value in pairs:
        if key == "run":
            runs.append(value)
        elif key.startswith("p."):
            psettings[key[2:]] = value
        elif key in ("dataset", "problem") or key in _SCALARS:
            if key in out:
                raise LinkError(f"link: {key} is given twice")
            out[key] = value
        else:
            raise LinkError(
                f"link: unknown key {key!r}; a link may set dataset, problem, p.<setting>, "
                f"{', '.join(_SCALARS)} and run"
            )
    if "dataset" in out and not is_linkable_dataset(out["dataset"]):
        raise LinkError(
            f"link: dataset {out['dataset']!r} is not a catalog or bundled name; a link names "
            "datasets only by those names (upload your own file instead)"
        )
    problem = out.get("problem", None)
    if problem is not None and problem not in PROBLEMS:
        raise LinkError(f"link: unknown problem {problem!r}; problems: {', '.join(PROBLEMS)}")
    problem = problem or "svm-dual"
    if psettings:
        try:
            out["problem_settings"] = parse_settings(
                PROBLEMS[problem].settings_decl, psettings, problem
            )
        except SettingError as exc:
            raise LinkError(f"link: {exc}") from None
    for key in ("standardize", "normalize", "animate"):
        if key in out:
            out[key] = _bool(key, out[key])
    for key in ("test_size", "tol", "max_time", "max_samples", "step_delay"):
        if key in out:
            out[key] = _float(key, out[key])
    for key in ("seed", "max_iter", "repeat"):
        if key in out:
            out[key] = _int(key, out[key])
    if "test_size" in out and not 0.0 <= out["test_size"] <= 0.9:
        raise LinkError(f"link: test_size={out['test_size']} is out of range [0, 0.9]")
    if "seed" in out and out["seed"] < 0:
        raise LinkError(f"link: seed={out['seed']} must be >= 0")
    if "repeat" in out and not 1 <= out["repeat"] <= 10:
        raise LinkError(f"link: repeat={out['repeat']} is out of range [1, 10]")
    if "max_samples" in out and not out["max_samples"] >= 0.0:
        raise LinkError(f"link: max_samples={out['max_samples']} must be >= 0 (0: none)")
    if "step_delay" in out and not 0.0 <= out["step_delay"] <= 1.0:
        raise LinkError(f"link: step_delay={out['step_delay']} is out of range [0, 1]")
    try:
        Budget(
            tol=out.get("tol", 1e-6),
            max_iter=out.get("max_iter", 1000),
            max_time=out.get("max_time", 1.0),
        )
    except SettingError as exc:
        raise LinkError(f"link: {exc}") from None
    if len(runs) > MAX_LINK_RUNS:
        raise LinkError(f"link: at most {MAX_LINK_RUNS} runs, got {len(runs)}")
    if runs:
        out["runs"] = [_run(text, problem) for text in runs]
    return out


def apply(model: DashboardModel, state: dict[str, Any]) -> None:
    """Set ``model`` to the decoded ``state``.

    The dataset's preset (:data:`~ermviz.app.datasets.DATASET_PRESETS`) is applied first,
    then every value the link gives.

    Raises :class:`LinkError` when the dataset is a catalog name whose file is not on this
    server (nothing is changed then).
    """
    dataset = state.get("dataset")
    if dataset is not None and dataset not in model.param.dataset.objects:
        raise LinkError(
            f"link: dataset {dataset!r} is not available on this server (its file is not on "
            "disk); pick one of the listed datasets"
        )
    if dataset is not None:
        # The dataset's suggested set-up first (a link "?dataset=toy-2d" is a teaching
        # set-up); whatever else the link says overrides it.
        model.dataset = dataset
    with model.quietly():
        if "problem" in state:
            model.problem = state["problem"]
        if "problem" in state or "problem_settings" in state:
            # A link that names its problem describes all of its non-default settings.
            model.problem_settings = dict(state.get("problem_settings", {}))
        scalars = {k: state[k] for k in _SCALARS if k in state}
        if scalars:
            model.param.update(**scalars)
        if "runs" in state:
            model.specs = [
                RunSpec(method=m, step=s, settings=dict(st)) for m, s, st in state["runs"]
            ]


def load(model: DashboardModel, query: str, report: bool = True) -> str | None:
    """Apply a page's query string; a bad link leaves the defaults.

    Returns None when the link was applied (or empty), else the one-line reason, which
    is also notified unless ``report`` is False (a page not shown yet cannot show it).
    """
    if not query.lstrip("?"):
        return None
    try:
        apply(model, decode(query))
    except ErmvizError as exc:
        message = f"{exc} — the link was ignored and the defaults are shown"
        if report:
            model.notify(message)
        return message
    return None


def write(model: DashboardModel, location: Any) -> None:
    """Set ``location.search`` (the browser's URL) to the model's configuration."""
    search = "?" + encode(model)
    if location.search != search:
        location.search = search


def follow(model: DashboardModel, location: Any) -> None:
    """Keep ``location.search`` equal to the model's configuration from now on.

    One user action (a dataset with its preset, say) changes several parameters; the URL
    is written once, on the next tick, so the browser history gets one entry per action.
    """
    pending = {"on": False}

    def flush() -> None:
        pending["on"] = False
        write(model, location)

    def schedule(*_: Any) -> None:
        if pending["on"]:
            return
        import panel as pn

        doc = pn.state.curdoc
        if doc is not None and doc.session_context is not None:
            pending["on"] = True
            doc.add_next_tick_callback(flush)
        else:
            flush()

    model.param.watch(schedule, "revision")
