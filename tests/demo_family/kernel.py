"""Demo kernel (numpy + numba only): projected-gradient steps on a box, in chunks.

Each row records the iterate ``w_k`` (objective, FW gap, number of free coordinates) and
then the step taken from it, as every kernel of ``solvers/`` does.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from solvers.tags import (
    STATUS_CONVERGED,
    STATUS_MAX_ITER,
    STATUS_NONFINITE,
    STATUS_RUNNING,
    STEP_NONE,
    STEP_PROJECTED,
)

COLUMNS = ("iteration", "objective", "certificate", "step_size", "step_type", "active_size")
I_K, I_STOP_AT, I_STATUS = 0, 1, 2
N_ISTATE = 3


@njit(cache=True, nogil=True)
def pgd_advance(X, y, lo, hi, step, w, istate, tol, rec):  # pragma: no cover - jitted
    n, p = X.shape
    r = np.empty(n)
    g = np.empty(p)
    rows = 0
    while rows < rec.shape[0]:
        for i in range(n):
            acc = -y[i]
            for j in range(p):
                acc += X[i, j] * w[j]
            r[i] = acc
        obj = 0.0
        for i in range(n):
            obj += r[i] * r[i]
        obj /= 2.0 * n
        g[:] = 0.0
        for i in range(n):
            for j in range(p):
                g[j] += X[i, j] * r[i] / n
        gap = 0.0
        free = 0
        for j in range(p):
            gap += g[j] * (w[j] - (lo if g[j] > 0.0 else hi))
            if lo < w[j] < hi:
                free += 1
        k = istate[I_K]
        rec[rows, 0] = k
        rec[rows, 1] = obj
        rec[rows, 2] = gap
        rec[rows, 3] = 0.0
        rec[rows, 4] = STEP_NONE
        rec[rows, 5] = free
        if not (math.isfinite(obj) and math.isfinite(gap)):
            istate[I_STATUS] = STATUS_NONFINITE
            return rows + 1
        if gap <= tol:
            istate[I_STATUS] = STATUS_CONVERGED
            return rows + 1
        if k >= istate[I_STOP_AT]:
            istate[I_STATUS] = STATUS_MAX_ITER
            return rows + 1
        moved = 0.0
        for j in range(p):
            new = min(max(w[j] - step * g[j], lo), hi)
            moved += (new - w[j]) ** 2
            w[j] = new
        rec[rows, 3] = math.sqrt(moved)
        rec[rows, 4] = STEP_PROJECTED
        istate[I_K] = k + 1
        rows += 1
    istate[I_STATUS] = STATUS_RUNNING
    return rows
