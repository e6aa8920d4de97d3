"""The configuration in the URL query string, so that a shared link opens the same set-up.

Format (every key optional; unknown keys are dropped)::

    ?dataset=wdbc&problem=svm-dual&p.C=1000&standardize=1&normalize=0&test_size=0
    &seed=0&tol=1e-10&max_iter=100000000&max_time=10&animate=0&step_delay=0.03
    &run=fw:exact&run=afw:exact&run=pfw:armijo:armijo_c=0.02,max_trials=30

``p.<name>`` are problem settings; each ``run`` is ``method:step`` optionally followed by
``:name=value,...`` (that method's and step rule's settings). Every value is parsed by the
same declarations the widgets use, so a link can only say what the controls can.

A link names its dataset only by a catalog or bundled name, never by a path: anything
else (a path, an uploaded file's name, a name that is in neither list) is dropped, so a
link cannot make the server read a file of its choosing. A catalog name whose file is not
on this server is dropped as well (the dashboard never downloads on a link's behalf).

A link is taken element by element (:func:`load`): each bad element (an unknown or
repeated key, a value out of the range of the control it sets or of the runner's limits,
a run whose method does not solve the problem, a setting the problem or run does not
take, a dropped dataset) is left out with its own one-line reason, everything valid is
applied (on the default dataset when the dataset was dropped), and one notification
lists what was dropped; a link with nothing valid leaves the defaults. After a refusal the
address bar is rewritten to the set-up applied (:func:`rewrite_refused`). Keys and values
longer than :data:`MAX_LINK_VALUE` characters are dropped unread, and a link of more
than :data:`MAX_LINK_FIELDS` fields is not read at all. ``lesson=`` is handled by
:mod:`ermviz.app.views.page` before this module sees the link (here it is an unknown key).
:func:`decode` is the strict form: it refuses a link with any bad element.
"""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import parse_qsl, urlencode

from ermviz import data as data_mod
from ermviz.app.state.datasets import preset_for
from ermviz.app.state.messages import one_line
from ermviz.app.state.model import (
    CONFIG_PARAMS,
    DashboardModel,
    RunSpec,
    parse_settings,
    settings_of,
)
from ermviz.app.state.runspec import default_specs, valid_settings
from ermviz.errors import ErmvizError, SettingError
from ermviz.registry import ALIASES, METHODS, PROBLEMS, STEP_RULES, resolve_alias
from ermviz.runner import NO_ITER_LIMIT, Budget

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
#: Longest key or value a link may hold, in characters (the longest real one is ~60).
MAX_LINK_VALUE = 1000
#: Most ``key=value`` fields a link may hold.
MAX_LINK_FIELDS = 200
#: Largest iteration or samples budget a link may ask for: the solvers count in 64-bit
#: integers (a larger one made every run of the race fail with an OverflowError).
MAX_LINK_COUNT = NO_ITER_LIMIT


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


def _show(text: str, most: int = 60) -> str:
    """``repr`` of a link's text, cut to about ``most`` characters."""
    shown = repr(text)
    return shown if len(shown) <= most else f"{shown[: most - 6]}...{shown[-3:]}"


def _in_bounds(key: str, value: float) -> None:
    """Refuse ``value`` outside the range of the dashboard control ``key`` sets."""
    par = DashboardModel.param[key]
    low, high = par.bounds or (None, None)
    low_open, high_open = (not side for side in getattr(par, "inclusive_bounds", (True, True)))
    if key in ("max_iter", "max_samples"):
        high = MAX_LINK_COUNT if high is None else min(high, MAX_LINK_COUNT)
    too_low = low is not None and (value < low or (low_open and value == low))
    too_high = high is not None and (value > high or (high_open and value == high))
    if too_low or too_high:
        left = "(" if low is None or low_open else "["
        right = ")" if high is None or high_open else "]"
        shown_low = "-inf" if low is None else _fmt(low)
        shown_high = "inf" if high is None else _fmt(high)
        raise LinkError(
            f"link: {key}={_show(_fmt(value))[1:-1]} is out of range "
            f"{left}{shown_low}, {shown_high}{right}"
        )


def _float(key: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise LinkError(f"link: {key}={_show(text)} is not a number") from None
    if not math.isfinite(value):
        raise LinkError(f"link: {key}={_show(text)} is not a finite number")
    return value


def _int(key: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise LinkError(f"link: {key}={_show(text)} is not an integer") from None


def _bool(key: str, text: str) -> bool:
    try:
        return _BOOL[text.strip().lower()]
    except KeyError:
        raise LinkError(f"link: {key}={_show(text)} is not 0/1 or true/false") from None


def _run(text: str, problem: str) -> tuple[str, str, dict[str, Any]]:
    parts = text.split(":", 2)
    if len(parts) < 2:
        raise LinkError(f"link: run={_show(text)} is not method:step[:name=value,...]")
    method, step = parts[0].strip(), parts[1].strip()
    given: dict[str, str] = {}
    if len(parts) == 3 and parts[2].strip():
        for item in parts[2].split(","):
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise LinkError(f"link: run setting {_show(item)} is not name=value")
            given[key.strip()] = value.strip()
    if method in ALIASES:  # links made with an older method name keep working
        try:
            method, step, fixed = resolve_alias(method, step, given, problem)
        except ErmvizError as exc:
            raise LinkError(f"link: {exc}") from None
        given = {k: str(v) for k, v in fixed.items()}
    if method not in METHODS:
        raise LinkError(f"link: unknown method {_show(method)}; methods: {', '.join(METHODS)}")
    if problem not in METHODS[method].problems:
        raise LinkError(f"link: method {method!r} does not solve problem {problem!r}")
    if step not in STEP_RULES or step not in METHODS[method].step_rules:
        raise LinkError(
            f"link: method {method!r} does not take step rule {_show(step)}; it takes "
            f"{', '.join(METHODS[method].step_rules)}"
        )
    try:
        settings = parse_settings(settings_of(method, step), given, f"{method} with step {step}")
    except SettingError as exc:
        raise LinkError(f"link: {exc}") from None
    return method, step, settings


def _reason(exc: Exception) -> str:
    """A dropped element's one-line reason, without the ``link:`` prefix."""
    return str(exc).removeprefix("link: ")


def decode_partial(query: str) -> tuple[dict[str, Any], list[str]]:
    """Parse and validate a query string element by element.

    Returns the keys the valid elements set, and one one-line reason per element that was
    dropped (an unknown key, a repeated one, a bad value, a dataset that is not a catalog or
    bundled name, a run its problem cannot take, a bad setting).

    Raises
    ------
    LinkError
        Only for a link over :data:`MAX_LINK_FIELDS` fields, which is not read at all.
    """
    try:
        pairs = parse_qsl(query.lstrip("?"), keep_blank_values=True, max_num_fields=MAX_LINK_FIELDS)
    except ValueError:
        raise LinkError(
            f"link: more than {MAX_LINK_FIELDS} fields; a link holds far fewer"
        ) from None
    dropped: list[str] = []
    out: dict[str, Any] = {}
    runs: list[str] = []
    psettings: dict[str, str] = {}
    for key, value in pairs:
        if len(key) > MAX_LINK_VALUE or len(value) > MAX_LINK_VALUE:
            dropped.append(
                f"{_show(key)} is {max(len(key), len(value))} characters long; a link's "
                f"keys and values are at most {MAX_LINK_VALUE}"
            )
        elif key == "run":
            runs.append(value)
        elif key.startswith("p.") and key[2:]:
            if key[2:] in psettings:
                dropped.append(f"{_show(key)} is given twice (the first is kept)")
            else:
                psettings[key[2:]] = value
        elif key in ("dataset", "problem") or key in _SCALARS:
            if key in out:
                dropped.append(f"{key} is given twice (the first is kept)")
            else:
                out[key] = value
        else:
            dropped.append(
                f"unknown key {_show(key)}; a link may set dataset, problem, p.<setting>, "
                f"{', '.join(_SCALARS)} and run"
            )
    if "dataset" in out and not is_linkable_dataset(out["dataset"]):
        dropped.append(
            f"dataset {_show(out.pop('dataset'))} is not a catalog or bundled name; a link "
            "names datasets only by those names (upload your own file instead)"
        )
    if "problem" in out and out["problem"] not in PROBLEMS:
        dropped.append(
            f"unknown problem {_show(out.pop('problem'))}; problems: {', '.join(PROBLEMS)}"
        )
    # Runs and settings are checked against the problem the page will end up on: a
    # dataset's preset sets its own ("dataset=moons" races lssvm), else the default.
    problem = out.get("problem") or (
        preset_for(out["dataset"])["problem"] if "dataset" in out else "svm-dual"
    )
    if psettings:
        decl = PROBLEMS[problem].settings_decl
        kept: dict[str, Any] = {}
        for name, value in psettings.items():
            try:
                kept.update(parse_settings(decl, {name: value}, problem))
            except SettingError as exc:
                dropped.append(str(exc))
        if kept or "problem" in out:
            out["problem_settings"] = kept
    parsers = {
        **dict.fromkeys(("standardize", "normalize", "animate"), _bool),
        **dict.fromkeys(("test_size", "tol", "max_time", "max_samples", "step_delay"), _float),
        **dict.fromkeys(("seed", "max_iter", "repeat"), _int),
    }
    budget_defaults = {"tol": 1e-6, "max_iter": 1000, "max_time": 1.0}
    for key in _SCALARS:
        if key not in out:
            continue
        try:
            value = parsers[key](key, out[key])
            if key != "tol" and not isinstance(value, bool):
                _in_bounds(key, value)
            if key in budget_defaults:
                try:  # each budget value on its own: one bad value drops only itself
                    Budget(**{**budget_defaults, key: value})
                except SettingError as exc:
                    raise LinkError(f"link: {exc}") from None
        except LinkError as exc:
            dropped.append(_reason(exc))
            del out[key]
        else:
            out[key] = value
    if len(runs) > MAX_LINK_RUNS:
        dropped.append(f"at most {MAX_LINK_RUNS} runs, got {len(runs)}: the first are kept")
        runs = runs[:MAX_LINK_RUNS]
    parsed_runs = []
    for text in runs:
        try:
            parsed_runs.append(_run(text, problem))
        except LinkError as exc:
            dropped.append(f"run={_show(text)}: {_reason(exc)}")
    if parsed_runs:
        out["runs"] = parsed_runs
    return out, dropped


def decode(query: str) -> dict[str, Any]:
    """Parse and validate a query string that must be valid whole; returns the keys it sets.

    Raises
    ------
    LinkError
        For the first element :func:`decode_partial` would drop (one line).
    """
    state, dropped = decode_partial(query)
    if dropped:
        raise LinkError(f"link: {dropped[0]}")
    return state


def apply(model: DashboardModel, state: dict[str, Any]) -> list[str]:
    """Set ``model`` to the decoded ``state``; returns the reasons of what was dropped.

    The dataset's preset (:data:`~ermviz.app.state.datasets.DATASET_PRESETS`) is applied first,
    then every value the link gives. A catalog name whose file is not on this server is
    dropped (the rest is applied on the current dataset), and so are runs or settings the
    resulting problem does not take.
    """
    dropped: list[str] = []
    dataset = state.get("dataset")
    if dataset is not None and dataset not in model.param.dataset.objects:
        dropped.append(
            f"dataset {dataset!r} is not available on this server (its file is not on "
            "disk); pick one of the listed datasets"
        )
    elif dataset is not None:
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
    return dropped + _fit_applied(model)


def _fit_applied(model: DashboardModel) -> list[str]:
    """Drop what the applied set-up cannot take (runs or settings decoded against another
    problem, when the dataset was dropped); returns the reasons."""
    dropped = []
    keep = []
    for spec in model.specs:
        method = METHODS.get(spec.method)
        if method is None or model.problem not in method.problems:
            dropped.append(f"method {spec.method!r} does not solve {model.problem!r}")
        elif spec.step not in method.step_rules:
            dropped.append(f"method {spec.method!r} does not take step {spec.step!r}")
        else:
            keep.append(spec)
    if len(keep) != len(model.specs):
        model.specs = keep or default_specs(model.problem)
    decl = PROBLEMS[model.problem].settings_decl
    kept = valid_settings(decl, model.problem_settings)
    for name, value in model.problem_settings.items():
        try:
            parse_settings(decl, {name: value}, model.problem)
        except SettingError as exc:
            dropped.append(str(exc))
    if kept != model.problem_settings:
        model.problem_settings = kept
    return dropped


#: Most dropped elements a notification names one by one (the rest are counted).
MAX_REASONS_SHOWN = 5


def dropped_message(dropped: list[str]) -> str:
    """One line telling what a link lost: each dropped element's reason."""
    shown = "; ".join(dropped[:MAX_REASONS_SHOWN])
    more = len(dropped) - MAX_REASONS_SHOWN
    if more > 0:
        shown += f"; and {more} more"
    what = "1 element" if len(dropped) == 1 else f"{len(dropped)} elements"
    return f"link: dropped {what} ({shown}); the rest of the link is applied"


def load(model: DashboardModel, query: str, report: bool = True) -> str | None:
    """Apply a page's query string: every valid element, dropping each bad one.

    Returns None when the whole link was applied (or it is empty), else one line naming
    each dropped element and why, which is also notified unless ``report`` is False (a page
    not shown yet cannot show it). A link over the size limit, or one that fails to apply
    anyway, leaves the set-up the page had.
    """
    if not query.lstrip("?"):
        return None
    saved = {name: getattr(model, name) for name in CONFIG_PARAMS}
    try:
        state, dropped = decode_partial(query)
        dropped += apply(model, state)
    except Exception as exc:
        # decode_partial() checks every value, so apply() should not fail; if it does
        # anyway the page must still open, on the set-up it had.
        with model.quietly():
            model.param.update(**saved)
        text = str(exc) if isinstance(exc, ErmvizError) else f"link: {one_line(exc)}"
        message = f"{text} — the link was ignored and the defaults are shown"
    else:
        if not dropped:
            return None
        message = dropped_message(dropped)
    if report:
        model.notify(message)
    return message


def write(model: DashboardModel, location: Any) -> None:
    """Set ``location.search`` (the browser's URL) to the model's configuration (nothing
    outside a served page, which has no location)."""
    if location is None:
        return
    search = "?" + encode(model)
    if location.search != search:
        location.search = search


def _pairs(search: str) -> list[tuple[str, str]]:
    try:
        return parse_qsl(search.lstrip("?"), keep_blank_values=True, max_num_fields=MAX_LINK_FIELDS)
    except ValueError:  # over the field limit: compared as text
        return [("", search)]


def rewrite_refused(model: DashboardModel, location: Any) -> None:
    """After a link was refused in part or whole: set ``location.search`` (the address
    bar) to the set-up applied, so that the refused elements are no longer shown (nor
    copied into a shared link), and keep it so.

    The browser reports its address once its page has rendered, and that report may reach
    the server after this rewrite (on a busy server, seen as an address bar that kept
    ``?dataset=/etc/passwd``): whenever the browser reports the refused link again (that
    report, or Back to it), the applied set-up is written once more.
    """
    if location is None:
        return
    refused = _pairs(location.search)
    write(model, location)

    def again(event: Any) -> None:
        if event.new != event.old and _pairs(event.new) == refused:
            write(model, location)

    location.param.watch(again, "search")


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
