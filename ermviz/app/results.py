"""The dashboard's Results tab: a sweep's results folder, shown interactively.

The tab's state and numbers are in :mod:`ermviz.app.results_model`
(:class:`ResultsModel`, no widgets), its widgets and plots in
:mod:`ermviz.app.results_view` (:class:`ResultsView`, :func:`profile_plot`,
:func:`curves_plot`); this module re-exports both. The folder is never part of the URL.

Module constants such as :data:`~ermviz.app.results_model.MAX_CURVE_POINTS` are read
where they are defined: change (or monkeypatch) them there, not here.
"""

from __future__ import annotations

from ermviz.app.results_model import (
    DASHES,
    DEFAULT_EPS,
    DEFAULT_ROOTS,
    MAX_CURVE_POINTS,
    MAX_FOUND,
    RESULTS_ENV,
    SCAN_DEPTH,
    ResultsModel,
    eps_text,
    find_results_folders,
    is_results_folder,
    label_styles,
    parse_eps,
    results_roots,
)
from ermviz.app.results_view import ResultsView, curves_plot, profile_plot

__all__ = [
    "DASHES",
    "DEFAULT_EPS",
    "DEFAULT_ROOTS",
    "MAX_CURVE_POINTS",
    "MAX_FOUND",
    "RESULTS_ENV",
    "SCAN_DEPTH",
    "ResultsModel",
    "ResultsView",
    "curves_plot",
    "eps_text",
    "find_results_folders",
    "is_results_folder",
    "label_styles",
    "parse_eps",
    "profile_plot",
    "results_roots",
]
