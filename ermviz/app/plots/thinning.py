"""Which trace rows the live plots draw: a geometric grid in the iteration count.

A row is drawn when its iteration crosses the next point of a geometric grid (ratio
:data:`GRID_RATIO`: every iteration up to ~10, then ~24 points per decade), and the newest
row is always drawn so curves end at the current iterate. :mod:`ermviz.app.plots.streaming`
thins each tick's new rows this way before sending them to the browser, and
:mod:`ermviz.app.state.references` thins a kept race's whole trace on the same grid, so a
reference is drawn with the points its live curves had.

numpy only (no Bokeh, no Panel): the model imports it through the references.
"""

from __future__ import annotations

import math

import numpy as np

#: Ratio of the geometric grid in the iteration count that decides which rows are sent:
#: every iteration up to ~10, then ~24 points per decade (a point every 4 px or so of a
#: log axis). The repaint cost grows with the points drawn: measured with the browser on
#: the server's 2 cores, chromium's share of a core was ~27 % at 1.02, ~20 % at 1.05
#: (with three live plots), and 8.2-8.5 % at 1.05 against 7.7-7.8 % at 1.1 (two).
GRID_RATIO = 1.1
_LOG_RATIO = math.log(GRID_RATIO)


def thin_rows(iteration: np.ndarray, last_bin: float) -> tuple[np.ndarray, float]:
    """Indices of the rows to send and the new last grid bin.

    A row is kept when its grid bin ``floor(log(it + 1) / log(GRID_RATIO))`` is beyond
    ``last_bin`` and it is the first row of that bin; the last row is always kept. Pass
    ``last_bin=-1.0`` for a trace's first rows, then the returned bin with the next ones.
    """
    if iteration.size == 0:
        return np.zeros(0, dtype=np.int64), last_bin
    bins = np.floor(np.log1p(np.maximum(iteration, 0.0)) / _LOG_RATIO)
    first = np.ones(bins.size, dtype=bool)
    first[1:] = bins[1:] != bins[:-1]
    keep = first & (bins > last_bin)
    keep[-1] = True
    idx = np.flatnonzero(keep)
    return idx, max(last_bin, float(bins[-1]))
