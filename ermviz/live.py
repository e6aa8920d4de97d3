"""A live fit in a notebook: an :mod:`ermviz.estimators` estimator fits while a plot in
the cell shows its certificate fall (the runner's background thread, as in the dashboard).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

if TYPE_CHECKING:
    from ermviz.estimators import _RunEstimator

Estimator = TypeVar("Estimator", bound="_RunEstimator")


def live_fit(estimator: Estimator, X: Any, y: Any, *, every: float = 0.1) -> Estimator:
    """Fit ``estimator`` on ``(X, y)`` while a Bokeh plot in the notebook shows its
    certificate falling (log scale, against iterations), then return the fitted estimator.

    In a Jupyter cell: ``model = live_fit(ConstrainedLogisticRegression(radius=5), X, y)``.
    The run goes in a background thread (the runner's own, as in the dashboard); the plot
    is pushed every ``every`` seconds with :func:`bokeh.io.push_notebook`. Outside a
    notebook the fit simply runs (nothing is shown).
    """
    from bokeh.io import output_notebook, push_notebook, show
    from bokeh.models import ColumnDataSource
    from bokeh.plotting import figure
    from bokeh.resources import INLINE

    run = estimator._prepare(X, y)
    kind = run.solver.certificate_kind
    source = ColumnDataSource({"iteration": [], "certificate": []})
    fig = figure(
        title=f"{type(estimator).__name__}: {run.info.method}-{run.info.step}",
        x_axis_label="iteration",
        y_axis_label=kind,
        y_axis_type="log",
        height=300,
        width=600,
    )
    fig.line("iteration", "certificate", source=source, line_width=2)
    handle = None
    try:
        from IPython import get_ipython

        if get_ipython() is not None and getattr(get_ipython(), "kernel", None) is not None:
            # inline: a notebook offline cannot fetch BokehJS from the CDN
            output_notebook(resources=INLINE, hide_banner=True)
            handle = show(fig, notebook_handle=True)
    except ImportError:
        pass

    def refresh() -> None:
        frame = run.trace.to_frame()
        cert = frame["certificate"].to_numpy(dtype=float)
        keep = np.flatnonzero(np.isfinite(cert) & (cert > 0))
        if keep.size > 4000:  # a long run: every k-th row and the last, for the browser
            keep = np.union1d(keep[:: keep.size // 2000], keep[-1:])
        source.data = {
            "iteration": frame["iteration"].to_numpy()[keep],
            "certificate": cert[keep],
        }
        if handle is not None:
            push_notebook(handle=handle)

    run.start()
    while not run.join(every):
        if handle is not None:
            refresh()
    refresh()
    estimator.live_figure_ = fig
    return estimator._finish(run)
