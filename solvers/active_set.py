"""Active sets: a point of a polytope kept as exact convex weights over its atoms.

The weights ``mu`` (float64 array, one entry per atom, ``mu >= 0``, ``sum(mu) = 1``) are
the active set: atom ``a`` is active when ``mu[a] > 0``. For the unit simplex the atoms
are ``e_i`` and ``mu`` *is* the iterate; for the l1 ball of radius ``r`` atom ``2j`` is
``+r e_j`` and atom ``2j+1`` is ``-r e_j``. Each update below is the weight update of one
step type of Lacoste-Julien & Jaggi (2015), "On the global linear convergence of
Frank-Wolfe optimization variants", NeurIPS; a drop sets the weight to exactly 0.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True)
def fw_update(mu, s, gamma):
    """Frank-Wolfe step toward atom ``s``: ``mu <- (1 - gamma) mu + gamma e_s``."""
    mu *= 1.0 - gamma
    mu[s] += gamma


@njit(cache=True)
def away_gamma_max(mu_v):
    """Largest away step that keeps the weights feasible: ``mu_v / (1 - mu_v)``."""
    if mu_v >= 1.0:
        return 0.0
    return mu_v / (1.0 - mu_v)


@njit(cache=True)
def away_update(mu, v, gamma, gamma_max):
    """Away step from atom ``v``: ``mu <- (1 + gamma) mu - gamma e_v``; True if ``v`` dropped."""
    mu *= 1.0 + gamma
    if gamma >= gamma_max:
        mu[v] = 0.0
        return True
    mu[v] -= gamma
    return False


@njit(cache=True)
def pairwise_update(mu, s, v, gamma, gamma_max):
    """Move ``gamma`` of weight from atom ``v`` to atom ``s``; True if ``v`` dropped.

    ``s == v`` is a zero direction: nothing moves (adding and then zeroing the same
    weight would lose it)."""
    if s == v:
        return False
    mu[s] += gamma
    if gamma >= gamma_max:
        mu[v] = 0.0
        return True
    mu[v] -= gamma
    return False


@njit(cache=True)
def active_count(mu):
    """Number of atoms with positive weight."""
    c = 0
    for a in range(mu.shape[0]):
        if mu[a] > 0.0:
            c += 1
    return c
