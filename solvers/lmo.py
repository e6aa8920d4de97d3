"""Linear minimization oracles (LMOs) and away oracles of the two feasible sets.

Each oracle answers one question about a gradient ``g``:

* the LMO returns the atom ``s`` minimizing ``<g, s>`` over the set;
* the away oracle returns the active atom ``v`` maximizing ``<g, v>`` (its weight > 0).

Atoms are integer ids (see :mod:`solvers.active_set`). References: Jaggi (2013),
"Revisiting Frank-Wolfe: projection-free sparse convex optimization", ICML (LMOs of the
simplex and the l1 ball); Lacoste-Julien & Jaggi (2015) (away oracle).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def simplex_lmo(g):
    """Vertex ``e_s`` of the unit simplex minimizing ``<g, e_s>``: returns ``s``."""
    s = 0
    best = g[0]
    for i in range(1, g.shape[0]):
        if g[i] < best:
            best = g[i]
            s = i
    return s


@njit(cache=True)
def simplex_away(g, mu):
    """Active vertex maximizing ``<g, e_v>``: returns ``v`` (or -1 if none is active)."""
    v = -1
    best = -np.inf
    for i in range(g.shape[0]):
        if mu[i] > 0.0 and g[i] > best:
            best = g[i]
            v = i
    return v


@njit(cache=True)
def l1_atom(a, radius):
    """Coordinate and signed value of atom ``a`` of the l1 ball: ``(j, +-radius)``."""
    j = a // 2
    return j, (radius if a % 2 == 0 else -radius)


@njit(cache=True)
def l1_lmo(g, radius):
    """Vertex ``-radius * sign(g_j) e_j``, ``j = argmax |g_j|``: returns its atom id."""
    j = 0
    best = abs(g[0])
    for c in range(1, g.shape[0]):
        if abs(g[c]) > best:
            best = abs(g[c])
            j = c
    return 2 * j if g[j] < 0.0 else 2 * j + 1


@njit(cache=True)
def l1_away(g, mu, radius):
    """Active atom maximizing ``<g, v>``: returns its atom id (or -1 if none is active)."""
    v = -1
    best = -np.inf
    for j in range(g.shape[0]):
        if mu[2 * j] > 0.0 and radius * g[j] > best:
            best = radius * g[j]
            v = 2 * j
        if mu[2 * j + 1] > 0.0 and -radius * g[j] > best:
            best = -radius * g[j]
            v = 2 * j + 1
    return v
