"""A live fit in a notebook: an :mod:`ermviz.estimators` estimator fits while the
dashboard's own plots (:class:`~ermviz.app.plots.figures.TracePlots`: certificate against
iterations and against solver time) show its certificate fall in the cell.

The run advances on the runner's background thread, as in the dashboard; the cell's
thread pulls its new rows into the plots' sources with the dashboard's thinning
(:class:`~ermviz.app.plots.streaming.RunSources`) and pushes them to the page over Panel's comm,
as the dashboard in a notebook does (:func:`panel.io.push_notebook`; Bokeh's own
``push_notebook`` needs a JupyterLab extension this product does not install).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ermviz.app import compat

if TYPE_CHECKING:
    from ermviz.estimators import SolverEstimator

Estimator = TypeVar("Estimator", bound="SolverEstimator")

#: Seconds between two pushes of new rows to the page (the dashboard's refresh period).
PUSH_SECONDS = 0.35
#: Seconds a page given Panel's JavaScript with the cell has to run it before the kernel
#: opens the output's comm: opened at once, a loaded machine's browser refused it in 3 of
#: 5 runs of tests/test_jupyter_browser.py's live fit after a reload, and the plot stayed
#: empty; the updates of a fit's first seconds wait instead.
JS_GRACE_SECONDS = 4.0


def live_fit(estimator: Estimator, X: Any, y: Any, *, every: float = PUSH_SECONDS) -> Estimator:
    """Fit ``estimator`` on ``(X, y)`` while the dashboard's plots in the notebook cell
    show its certificate falling (log axes, against iterations and solver time), then
    return the fitted estimator.

    In a Jupyter cell::

        from ermviz.app import live_fit
        from ermviz.estimators import ConstrainedLogisticRegression
        model = live_fit(ConstrainedLogisticRegression(radius=5.0), X, y)

    ``every`` is the seconds between two updates of the plots. The figures stay on the
    estimator as ``live_figures_`` (a list of Bokeh figures). Outside a notebook the fit
    runs and the figures are filled, with nothing shown. In a notebook where
    :func:`~ermviz.app.notebook_extension` has not run yet, it runs first (inline
    JavaScript: the plots show offline).
    """
    from bokeh.models import ColumnDataSource

    from ermviz.app.plots.figures import TracePlots
    from ermviz.app.plots.streaming import RunSources
    from ermviz.app.serving.notebook import (
        in_notebook_kernel,
        keep_unsent_changes,
        notebook_extension,
        open_from_kernel,
        page_has_panel_js,
    )
    from ermviz.app.state.race import PALETTE, Slot

    run = estimator.prepare_run(X, y)  # the fit, built and not started
    label = f"{type(estimator).__name__} ({run.info.method}, {run.info.step})"
    slot = Slot(0, label, PALETTE[0], run.info.method, run.info.step, {}, run=run)
    sources = RunSources(0)
    sources.bind(slot)
    best = ColumnDataSource({"best": [np.nan]})
    plots = TracePlots(
        [(label, PALETTE[0], sources.trace, sources.objective, sources.band)],
        best,
        certificate_kind=run.solver.certificate_kind,
        lazy=True,  # the other three are never shown here
    )
    plots.show([label])
    figures = [plots.figure(0), plots.figure(1)]  # certificate vs iterations, vs solver time
    for fig in figures:
        fig.width, fig.height = 460, 320
    shown = None
    open_after = 0.0  # (perf_counter) when the kernel may open the outputs' comms
    if in_notebook_kernel():
        import panel as pn
        from IPython.display import display
        from panel.io.notebook import push

        # Does Panel's JavaScript reach this page with this cell? (A new kernel, or a page
        # reloaded since the last output: notebook.load_into_page sends it first.)
        js_with_this_cell = not compat.extension_loaded() or not page_has_panel_js()
        if not compat.extension_loaded():
            notebook_extension()  # Panel's and Bokeh's JavaScript, inline: offline
        shown = pn.Row(*(pn.pane.Bokeh(fig) for fig in figures))
        display(shown)
        if js_with_this_cell:
            # The page needs seconds to run 7 MB of JavaScript; a comm opened from the
            # kernel before it has is refused ("Exception opening new comm") and every
            # update is lost: the kernel opens it only after this grace.
            open_after = time.perf_counter() + JS_GRACE_SECONDS
        views = compat.notebook_views(shown)
        for doc, comm in views:
            if not doc.callbacks.hold_value:
                doc.hold("combine")  # changes wait for push(), as in Panel's own outputs
            keep_unsent_changes(doc, comm)  # a message from the page meanwhile loses none

    def refresh(final: bool = False) -> None:
        sources.pull()
        if shown is None:
            return
        wait = open_after - time.perf_counter()
        if wait > 0 and not final:
            return  # (the page is still loading the JavaScript: the changes wait)
        if wait > 0:
            time.sleep(wait)  # (a fit shorter than the grace: its one update, once loaded)
        for doc, comm in views:
            # The kernel is busy with this cell until the fit ends, so the page cannot
            # open the output's comm (Panel's own push then waits for the kernel's event
            # loop, which waits for the cell): open it from the kernel's side, and send
            # the changes held on the output's document.
            open_from_kernel(comm)
            push(doc, comm)

    slot.started = True
    run.start()
    while not run.join(every):
        refresh()
    refresh(final=True)
    estimator.live_figures_ = figures
    return estimator.finish_run(run)
