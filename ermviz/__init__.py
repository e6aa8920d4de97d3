"""ermviz: an interactive laboratory for empirical-risk-minimization solvers.

The numerical core lives in the separate package :mod:`solvers` (numpy + numba only).
This package holds everything around it: data loading, problem definitions, the method
registry, the runner (threads, chunked stepping, traces), the CLI and the dashboard.

Public API (what users may import; everything else, and every name starting with ``_``,
may change without notice):

* :mod:`ermviz.data`: :func:`~ermviz.data.load_dataset`, :func:`~ermviz.data.list_datasets`,
  :class:`~ermviz.data.Dataset` and the preprocessing functions of its ``__all__``;
* :mod:`ermviz.estimators`: the scikit-learn estimators;
* :mod:`ermviz.experiment`: :class:`~ermviz.experiment.RunConfig`,
  :class:`~ermviz.experiment.Preprocessing` and :func:`~ermviz.experiment.execute` (one
  run, headless: its trace and summary), with :class:`ermviz.runner.Budget`;
* :mod:`ermviz.registry`: ``PROBLEMS``, ``METHODS``, ``STEP_RULES`` (what can be raced)
  and :func:`~ermviz.registry.build_problem` / :func:`~ermviz.registry.build_solver`;
* :mod:`ermviz.sweep` and :mod:`ermviz.report`: grids of runs on Dask and their reports;
* :mod:`ermviz.app`: the names of its ``__all__`` (:class:`~ermviz.app.Dashboard`,
  :func:`~ermviz.app.notebook_extension`, :func:`~ermviz.app.live_fit`,
  :class:`~ermviz.app.DashboardModel`, ...; its docstring lists them), and
  :mod:`ermviz.app.compat`'s version bounds;
* :mod:`ermviz.errors`: the error types (re-exported here);
* for a new family (``docs/ARCHITECTURE.md``, "How to add a family"): :mod:`ermviz.base`
  (``Problem``, ``Solver``, ``Method``, ``methods_from``) and :mod:`ermviz.settings`
  (``Setting``);
* the command line, ``ermviz`` (``python -m ermviz``), and the trace schema (README).

The most used names are also attributes of this package, imported on first use (so
``import ermviz`` stays cheap: it loads neither numba nor pandas)::

    import ermviz
    ds = ermviz.load_dataset("a1a")
    frame, summary = ermviz.execute(ermviz.RunConfig("a1a", "logreg-l1", "pfw", "exact"))
"""

from __future__ import annotations

import importlib
from typing import Any

from ermviz._version import __version__
from ermviz.errors import DataError, ErmvizError, SettingError

#: Lazily imported public names: name -> module that defines it.
_LAZY = {
    "load_dataset": "ermviz.data",
    "list_datasets": "ermviz.data",
    "Dataset": "ermviz.data",
    "RunConfig": "ermviz.experiment",
    "Preprocessing": "ermviz.experiment",
    "execute": "ermviz.experiment",
    "Budget": "ermviz.runner",
}

__all__ = ["DataError", "ErmvizError", "SettingError", "__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ermviz' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once imported, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
