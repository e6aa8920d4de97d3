"""The old import paths of the modules issue 46 moved into subpackages: each old module
(``ermviz/app/figures.py``, ...) is a deprecated alias of its new home.

Importing an old path warns (:class:`DeprecationWarning`, naming the new path) and gives
the new module itself (the same object: setting or patching an attribute through either
name changes both). Run as a file, an alias runs its new module: ``panel serve --setup
ermviz/app/warmup.py`` (Panel runs the file as ``panel_setup_module``), ``python -m
ermviz.app.warmup``, and a Bokeh ``--auth-module ermviz/app/login.py`` (loaded under a name
of Bokeh's own: the alias then holds the new module's names).
"""

from __future__ import annotations

import importlib
import runpy
import sys
import warnings
from pathlib import Path
from typing import Any

#: Old module name (under ``ermviz.app``) -> its path under ``ermviz.app`` now.
MOVED: dict[str, str] = {
    "background": "views.background",
    "boundary": "plots.boundary",
    "controls": "views.controls",
    "datasets": "state.datasets",
    "export_view": "views.export_view",
    "figure_style": "plots.figure_style",
    "figures": "plots.figures",
    "lesson_claims": "lessons.claims",
    "lessons_view": "lessons.view",
    "live": "serving.live",
    "login": "serving.login",
    "memory": "serving.memory",
    "messages": "state.messages",
    "model": "state.model",
    "notebook": "serving.notebook",
    "page": "views.page",
    "png": "plots.png",
    "problem_cache": "state.problem_cache",
    "race": "state.race",
    "race_status": "views.race_status",
    "race_view": "views.race_view",
    "references": "state.references",
    "results_model": "results.model",
    "results_view": "results.view",
    "runspec": "state.runspec",
    "streaming": "plots.streaming",
    "teaching_plot": "plots.teaching_plot",
    "teaching_view": "views.teaching_view",
    "thinning": "plots.thinning",
    "upload": "views.upload",
    "urlstate": "state.urlstate",
    "warmup": "serving.warmup",
    "warmup_plan": "serving.warmup_plan",
    "warmup_schedule": "serving.warmup_schedule",
    "warmup_terminal": "serving.warmup_terminal",
    "widgets": "views.widgets",
}


def alias(namespace: dict[str, Any]) -> None:
    """Make the alias module whose globals are ``namespace`` stand for its new module."""
    short = Path(namespace["__file__"]).stem
    new = f"ermviz.app.{MOVED[short]}"
    name = namespace["__name__"]
    if name in ("__main__", "panel_setup_module"):  # run as a script or Panel's set-up
        runpy.run_module(new, run_name=name, alter_sys=name == "__main__")
        return
    old = f"ermviz.app.{short}"
    warnings.warn(
        f"{old} moved to {new}; import it from there (the old path will be removed)",
        DeprecationWarning,
        stacklevel=3,  # the importer (importlib's own frames are skipped)
    )
    module = importlib.import_module(new)
    namespace.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
    if name == old:
        sys.modules[old] = module  # `import` hands out the new module itself
