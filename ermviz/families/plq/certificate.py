"""The certificate both PLQ methods stream: the duality gap, read and judged.

How ``tol`` applies (absolute or relative gap, ``feas_tol``), how a row of
:func:`solvers.rehline.evaluate` becomes a certificate with its rounding resolution, the
best certified point kept for the end of a run, and when a run has converged or stalled.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from ermviz.families.lazy import kernel_module
from ermviz.settings import Setting
from solvers.tags import (
    STATUS_CONVERGED,
    STATUS_NONFINITE,
    STATUS_RUNNING,
    STATUS_STALLED,
)

kern = kernel_module("solvers.rehline", globals())

# ---- the certificate both methods of the family stream ---------------------------------
#: The computed duality gap is exact to about this many eps times the size of the terms
#: it is computed from (``solvers.rehline.E_MAG``).
ROUNDING = 4.0 * float(np.finfo(np.float64).eps)


def relative_scale(primal: float, dual: float) -> float:
    """What a relative gap divides by: ``D`` when ``D > 0`` (then ``gap / D`` bounds the
    relative suboptimality ``(P - P*) / P*``), ``|P|`` when ``P < 0``, else
    ``max(|P|, |D|)`` (first rows only; not a bound) or 1."""
    if dual > 0.0:
        return dual
    if primal < 0.0:
        return -primal
    scale = max(abs(primal), abs(dual))
    return scale if scale > 0.0 else 1.0


@dataclass
class GapReading:
    """One evaluation of the certificate, in the units ``tol`` applies to.

    ``certificate`` is ``max(computed gap, 0) + resolution`` (divided by
    :func:`relative_scale` for a relative gap): an upper bound on the suboptimality of the
    (feasible) primal point that also covers the rounding of its own computation, whose
    size is ``resolution``.
    """

    primal: float
    dual: float
    certificate: float
    infeasibility: float
    resolution: float
    #: False for a relative gap whose dual value is not positive: ``gap / max(|P|, |D|)``
    #: is then only a scale, not a bound on ``(P - P*) / P*``.
    bound: bool = True

    @property
    def finite(self) -> bool:
        return math.isfinite(self.primal) and math.isfinite(self.certificate)


def read_gap(out: np.ndarray, relative: bool) -> GapReading:
    """The :class:`GapReading` of a :func:`solvers.rehline.evaluate` output."""
    primal = float(out[kern.E_PRIMAL])
    dual = primal - float(out[kern.E_GAP])
    res = ROUNDING * float(out[kern.E_MAG])
    cert = max(float(out[kern.E_CERT]), 0.0) + res
    if relative:
        scale = relative_scale(primal, dual)
        cert /= scale
        res /= scale
    bound = not relative or dual > 0.0 or primal < 0.0
    return GapReading(primal, dual, cert, float(out[kern.E_INFEAS]), res, bound)


class BestPoint:
    """The best certified point a run has seen: the feasible row with the smallest
    certificate, with its coefficients (reported when a run ends unconverged). Rows whose
    certificate is a bound rank before rows whose relative certificate is only a scale
    (dual value <= 0: the start, or a run on badly scaled data whose dual barely moves)."""

    def __init__(self, feas_tol: float) -> None:
        self.feas_tol = feas_tol
        self.reading: GapReading | None = None
        self.iteration = -1
        self.beta: np.ndarray | None = None

    def rank(self, reading: GapReading) -> tuple[bool, bool, float]:
        """Sort key, smaller is better: feasible first, then rows whose certificate is a
        bound, then the smaller certificate."""
        return (reading.infeasibility > self.feas_tol, not reading.bound, reading.certificate)

    def offer(self, reading: GapReading, iteration: int, beta: np.ndarray) -> None:
        if not reading.finite or reading.infeasibility > self.feas_tol:
            return
        if self.reading is None or self.rank(reading) < self.rank(self.reading):
            self.reading = reading
            self.iteration = iteration
            self.beta = beta.copy()


def gap_status(reading: GapReading, tol: float, feas_tol: float) -> tuple[int, str]:
    """``(status, message)`` for a reading: converged, at the float64 resolution of the
    certificate (stalled: ``tol`` is below what can be certified), non-finite, or running."""
    if not reading.finite:
        return STATUS_NONFINITE, ""
    if reading.infeasibility <= feas_tol:
        if reading.certificate <= tol:
            return STATUS_CONVERGED, ""
        if reading.certificate <= 2.0 * reading.resolution:
            return STATUS_STALLED, (
                f"the certificate {reading.certificate:.3g} is at the float64 resolution of "
                f"the duality gap on this problem ({reading.resolution:.3g}); tol={tol:g} "
                "cannot be certified (use gap=relative or a larger tol)"
            )
    return STATUS_RUNNING, ""


def end_row_values(best: BestPoint, reading: GapReading) -> GapReading:
    """What a final row reports: ``reading``, or the best certified point when that is
    better (an unconverged run ends on the best point it saw)."""
    if best.reading is not None and best.rank(best.reading) < best.rank(reading):
        return best.reading
    return reading


#: The size of the gap's terms (for its rounding resolution) is reused from the last
#: evaluation that computed it while this many times that resolution stays below both the
#: certificate and tol (see ``ReHLineSolver._evaluate``) ...
MAG_FRESH = 1e3
#: ... for at most this many evaluations in a row (the size drifts as the duals grow).
MAG_REUSE_MAX = 16


@contextmanager
def eval_cpu_share(solver: Any) -> Iterator[None]:
    """Charge ``solver.eval_cpu_seconds`` with the CPU time of the certificate evaluations
    made in the block (an ``advance`` call): the block's thread CPU time times the share of
    its wall time the evaluations took (``eval_seconds``). Two CPU-clock reads per call
    instead of two per row: a read is a system call (5 us on an idle machine, and on a
    loaded one each may yield the core: 0.5 ms a read measured at load 13, more than a
    small fit's whole certificate evaluation)."""
    c0, t0, e0 = time.thread_time(), time.perf_counter(), solver.eval_seconds
    try:
        yield
    finally:
        wall = time.perf_counter() - t0
        if wall > 0.0:
            share = min(1.0, (solver.eval_seconds - e0) / wall)
            solver.eval_cpu_seconds += (time.thread_time() - c0) * share


#: How ``tol`` applies to the duality gap: settings of every method of the family.
CERTIFICATE_SETTINGS = (
    Setting(
        "gap",
        "choice",
        "absolute",
        "tol applies to the absolute duality gap or to the relative one (gap / D; the "
        "certificate kind is then rel_duality_gap)",
        choices=("absolute", "relative"),
    ),
    Setting(
        "feas_tol",
        "float",
        1e-8,
        "converge only when max constraint violation <= feas_tol",
        low=0.0,
        low_open=True,
    ),
)
