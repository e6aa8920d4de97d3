"""A least-recently-used cache of Gram columns ``K[:, j] = Z^T z_j`` for the SVM dual.

With ``Z = [y_1 x_1, ..., y_n x_n]``, a Frank-Wolfe-type step on the simplex moves
``alpha`` towards (or away from) a vertex ``e_j``, so the gradient ``2 (Z^T Z alpha +
alpha / C)`` changes by a multiple of itself plus a multiple of the column
``Z^T z_j`` (Joachims 1999 and LIBSVM, Chang & Lin 2011, cache kernel columns for the
same reason). The columns FW methods visit repeat heavily (they are the support vectors),
so a cached column turns a step's cost from one pass over the nonzeros into O(n).

The cache lives in caller-owned arrays, like all kernel state:

* ``cols`` (slots, n): the cached columns, one per row (contiguous);
* ``slot_of`` (n,) int64: the slot holding column j, or -1;
* ``atom_of`` (slots,) int64: the column a slot holds, or -1;
* ``stamp`` (slots,) int64: when a slot was last used (0 = never); the slot with the
  smallest stamp is evicted.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solvers.linalg import n_rows, row_axpy, row_dot_long


def new_gram_cache(n: int, megabytes: float) -> tuple[np.ndarray, ...]:
    """Empty cache arrays for ``n`` columns of length ``n`` within ``megabytes``.

    At most ``n`` slots; fewer than 2 slots (a pairwise step needs two columns at once)
    gives a cache with no slots, which the kernel reads as "recompute the gradient".
    """
    slots = min(n, int(megabytes * 2**20 // (8 * max(n, 1))))
    if slots < 2:
        slots = 0
    return (
        np.zeros((slots, n)),
        np.full(n, -1, dtype=np.int64),
        np.full(slots, -1, dtype=np.int64),
        np.zeros(slots, dtype=np.int64),
    )


@njit(cache=True)
def gram_column(X, y, j, xj, out):
    """``out[i] = y_i y_j x_i^T x_j`` for every row i: one pass over ``X``.

    ``xj`` is a zeroed scratch vector of length d; it is zero again on return.
    """
    row_axpy(X, j, 1.0, xj)
    yj = y[j]
    for i in range(n_rows(X)):
        out[i] = y[i] * yj * row_dot_long(X, i, xj)
    for t in range(xj.shape[0]):
        xj[t] = 0.0


@njit(cache=True)
def lru_slot(j, now, slot_of, atom_of, stamp):
    """The slot for column ``j`` and 1 if it must be (re)computed into it: the slot already
    holding ``j``, or the least recently used one, handed over to ``j``. ``now`` > 0
    stamps it. Shared by every column cache of the kernels (here and :mod:`solvers.lssvm`)."""
    slot = slot_of[j]
    if slot >= 0:
        stamp[slot] = now
        return slot, 0
    slot = 0
    for t in range(1, stamp.shape[0]):
        if stamp[t] < stamp[slot]:
            slot = t
    old = atom_of[slot]
    if old >= 0:
        slot_of[old] = -1
    atom_of[slot] = j
    slot_of[j] = slot
    stamp[slot] = now
    return slot, 1


@njit(cache=True)
def cached_column(X, y, j, now, cols, slot_of, atom_of, stamp, xj):
    """Slot of ``cols`` holding column ``j`` (computed on a miss, evicting the least
    recently used slot); ``now`` > 0 stamps it. Returns (slot, 1 if it was computed)."""
    slot, miss = lru_slot(j, now, slot_of, atom_of, stamp)
    if miss:
        gram_column(X, y, j, xj, cols[slot])
    return slot, miss
