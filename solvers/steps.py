"""Step rules for Frank-Wolfe-type methods: each returns a step size along a direction.

A step rule sees the current objective along the search direction ``d`` through a
*line model*: ``phi(beta) = f(x + beta d)`` for ``beta`` in ``[0, gamma_max]``.
Two line models cover the problems in :mod:`solvers.fw`:

* ``LINE_QUADRATIC``: ``phi(beta) = f0 + beta * gd + beta**2 * curv`` exactly
  (``curv = ||A d||^2`` for ``f = ||A x||^2``), evaluated in O(1);
* ``LINE_LOGISTIC``: ``phi(beta) = mean_i log(1 + exp(-y_i (z_i + beta zd_i)))`` with
  ``z = X x`` and ``zd = X d`` kept by the kernel, evaluated in O(n).

Every rule is a small numba function dispatched by an integer code inside
:func:`step_size` (an integer code keeps numba's on-disk cache valid across processes,
which a jitted function passed as an argument would not).

References
----------
* Frank & Wolfe (1956); Jaggi (2013), "Revisiting Frank-Wolfe", ICML: ``2/(k+2)``.
* Lacoste-Julien (2016), "Convergence rate of Frank-Wolfe for non-convex objectives":
  ``1/sqrt(k+1)``.
* Armijo (1966); the seed report on the L2-SVM dual (delta 0.5, gamma 0.01, starting at
  the maximal step for away/pairwise steps).
* Demyanov & Rubinov (1970): the short step ``min(g_t / (L ||d||^2), gamma_max)``.
* Pedregosa, Negiar, Askari & Jaggi (2020), "Linearly convergent Frank-Wolfe with
  backtracking line-search", AISTATS: the adaptive estimate of ``L``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

# Step rule codes (the registry in ermviz maps names to these).
RULE_DIMINISHING = 0
RULE_NONCONVEX = 1
RULE_ARMIJO = 2
RULE_EXACT = 3
RULE_SHORT = 4
RULE_ADAPTIVE = 5

RULE_CODES = {
    "diminishing": RULE_DIMINISHING,
    "nonconvex": RULE_NONCONVEX,
    "armijo": RULE_ARMIJO,
    "exact": RULE_EXACT,
    "short": RULE_SHORT,
    "adaptive": RULE_ADAPTIVE,
}

LINE_QUADRATIC = 0
LINE_LOGISTIC = 1

# Layout of the float parameter vector every kernel passes to step_size.
P_ARMIJO_DELTA = 0  # backtracking factor in (0, 1)
P_ARMIJO_C = 1  # sufficient-decrease constant in (0, 1)
P_L = 2  # Lipschitz constant of the gradient (short step), > 0
P_ETA = 3  # adaptive: shrink factor applied to the previous L estimate, in (0, 1]
P_TAU = 4  # adaptive: growth factor on failed trials, > 1
P_MAX_TRIALS = 5  # cap on backtracking trials
N_STEP_PARAMS = 6


@njit(cache=True, inline="always")
def log1pexp(t: float) -> float:
    """``log(1 + exp(t))`` without overflow."""
    if t > 0.0:
        return t + math.log1p(math.exp(-t))
    return math.log1p(math.exp(t))


@njit(cache=True, inline="always")
def sigmoid(t: float) -> float:
    """``1 / (1 + exp(-t))`` without overflow."""
    if t >= 0.0:
        return 1.0 / (1.0 + math.exp(-t))
    e = math.exp(t)
    return e / (1.0 + e)


@njit(cache=True)
def logistic_pass(y, z, inv_n, r):
    """Mean logistic loss at margins ``y * z`` and ``r = dloss/dz``, in one pass.

    ``log(1 + exp(-u)) = max(-u, 0) + log(1 + e)`` with ``e = exp(-|u|)``; the logs are
    taken of products of 64 factors ``1 + e`` (each in (1, 2], so no overflow), which
    replaces ``n`` calls of ``log1p`` by ``n / 64`` calls of ``log`` at a relative error
    below 1e-14 of the loss: the transcendental functions, not the data, dominate this
    pass otherwise.
    """
    n = z.shape[0]
    linear = 0.0
    logs = 0.0
    prod = 1.0
    for i in range(n):
        u = y[i] * z[i]
        e = math.exp(-abs(u))
        inv = 1.0 / (1.0 + e)
        if u >= 0.0:
            s = e * inv
        else:
            s = inv
            linear -= u
        r[i] = -y[i] * s * inv_n
        prod *= 1.0 + e
        if (i & 63) == 63:
            logs += math.log(prod)
            prod = 1.0
    logs += math.log(prod)
    return (linear + logs) * inv_n


@njit(cache=True)
def line_value(kind, f0, gd, curv, z, zd, y, beta):
    """``phi(beta)``, the objective at ``x + beta d``."""
    if kind == LINE_QUADRATIC:
        return f0 + beta * (gd + beta * curv)
    n = z.shape[0]
    acc = 0.0
    for i in range(n):
        acc += log1pexp(-y[i] * (z[i] + beta * zd[i]))
    return acc / n


@njit(cache=True)
def _logistic_slope(z, zd, y, beta):
    """First and second derivative of the logistic line model at ``beta``."""
    n = z.shape[0]
    d1 = 0.0
    d2 = 0.0
    for i in range(n):
        u = y[i] * (z[i] + beta * zd[i])
        sm = sigmoid(-u)
        d1 -= y[i] * zd[i] * sm
        d2 += zd[i] * zd[i] * sm * (1.0 - sm)
    return d1 / n, d2 / n


@njit(cache=True)
def exact_line_search(kind, gd, curv, z, zd, y, gamma_max):
    """Minimizer of ``phi`` over ``[0, gamma_max]`` and the number of O(n) evaluations.

    Quadratic model: the closed form ``clip(-gd / (2 curv), 0, gamma_max)``.
    Logistic model: safeguarded Newton on ``phi'`` (``phi`` is convex), bracketed by
    bisection, to machine precision.
    """
    if kind == LINE_QUADRATIC:
        if curv <= 0.0:
            return (gamma_max if gd < 0.0 else 0.0), 0
        return min(max(-gd / (2.0 * curv), 0.0), gamma_max), 0
    evals = 1
    d1_hi, _ = _logistic_slope(z, zd, y, gamma_max)
    if d1_hi <= 0.0:
        return gamma_max, evals
    lo = 0.0
    hi = gamma_max
    _, d2 = _logistic_slope(z, zd, y, 0.0)
    evals += 1
    beta = -gd / d2 if d2 > 0.0 else 0.5 * hi
    if not (lo < beta < hi):
        beta = 0.5 * (lo + hi)
    scale = max(abs(gd), 1e-300)
    for _ in range(100):
        d1, d2 = _logistic_slope(z, zd, y, beta)
        evals += 1
        if abs(d1) <= 1e-14 * scale:
            break
        if d1 > 0.0:
            hi = beta
        else:
            lo = beta
        if hi - lo <= 1e-16 * max(1.0, hi):
            break
        nxt = beta - d1 / d2 if d2 > 0.0 else 0.5 * (lo + hi)
        beta = nxt if lo < nxt < hi else 0.5 * (lo + hi)
    return beta, evals


@njit(cache=True)
def step_size(rule, k, gd, dnorm2, gamma_max, start, kind, f0, curv, z, zd, y, params, lstate):
    """Step size along ``d`` from the current iterate.

    Parameters
    ----------
    rule : int
        One of the ``RULE_*`` codes.
    k : int
        Iteration counter (0 for the first step).
    gd : float
        Directional derivative ``<grad f(x), d>`` (< 0 for a descent direction).
    dnorm2 : float
        ``||d||^2`` in the variable space (short and adaptive steps).
    gamma_max : float
        Largest feasible step along ``d``.
    start : float
        First trial of Armijo backtracking.
    kind, f0, curv, z, zd, y
        The line model (see the module docstring); ``f0 = phi(0)``.
    params : float64 array of length ``N_STEP_PARAMS``
    lstate : float64 array of length 1
        The adaptive rule's running estimate of ``L`` (read and updated in place).

    Returns
    -------
    gamma : float
        Step size in ``[0, gamma_max]``; 0 means no progress was possible.
    evals : int
        Number of O(cost of phi) evaluations spent.
    """
    if rule == RULE_DIMINISHING:
        return min(2.0 / (k + 2.0), gamma_max), 0
    if rule == RULE_NONCONVEX:
        return min(1.0 / math.sqrt(k + 1.0), gamma_max), 0
    if rule == RULE_EXACT:
        return exact_line_search(kind, gd, curv, z, zd, y, gamma_max)
    if rule == RULE_SHORT:
        if dnorm2 <= 0.0:
            return 0.0, 0
        return min(-gd / (params[P_L] * dnorm2), gamma_max), 0
    if rule == RULE_ARMIJO:
        delta = params[P_ARMIJO_DELTA]
        c = params[P_ARMIJO_C]
        beta = min(start, gamma_max)
        trials = int(params[P_MAX_TRIALS])
        for m in range(trials):
            if line_value(kind, f0, gd, curv, z, zd, y, beta) <= f0 + c * beta * gd:
                return beta, m + 1
            beta *= delta
        return 0.0, trials
    # RULE_ADAPTIVE (Pedregosa et al. 2020, Algorithm 2's backtracking loop)
    if dnorm2 <= 0.0:
        return 0.0, 0
    eta = params[P_ETA]
    tau = params[P_TAU]
    trials = int(params[P_MAX_TRIALS])
    M = eta * lstate[0]
    for m in range(trials):
        gamma = min(-gd / (M * dnorm2), gamma_max)
        q = f0 + gamma * gd + 0.5 * gamma * gamma * M * dnorm2
        if line_value(kind, f0, gd, curv, z, zd, y, gamma) <= q:
            lstate[0] = M
            return gamma, m + 1
        M *= tau
    lstate[0] = M
    return 0.0, trials


def default_step_params(
    *,
    armijo_delta: float = 0.5,
    armijo_c: float = 0.01,
    lipschitz: float = 1.0,
    eta: float = 0.9,
    tau: float = 2.0,
    max_trials: int = 60,
) -> np.ndarray:
    """Pack step-rule parameters in the layout :func:`step_size` reads."""
    p = np.empty(N_STEP_PARAMS)
    p[P_ARMIJO_DELTA] = armijo_delta
    p[P_ARMIJO_C] = armijo_c
    p[P_L] = lipschitz
    p[P_ETA] = eta
    p[P_TAU] = tau
    p[P_MAX_TRIALS] = max_trials
    return p
