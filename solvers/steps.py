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


# exp on (-inf, 0] in a form LLVM vectorizes (libm's exp is a scalar call): Cody-Waite
# reduction t = k ln2 + r, |r| <= ln2/2, a degree-13 Taylor polynomial (truncation error
# below 2e-16 relative) and 2^k from a table (a vector gather).
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e00
_POW2_NEG = 2.0 ** -np.arange(0, 1023, dtype=np.float64)  # 2^0 ... 2^-1022


@njit(cache=True, inline="always")
def exp_nonpositive(t: float) -> float:
    """``exp(t)`` for ``t <= 0`` to 3e-16 relative; ``t < -708`` is treated as -708
    (the result, below 3e-308, is then negligible next to 1 wherever it is used)."""
    t = max(t, -708.0)
    k = math.floor(t * _INV_LN2 + 0.5)
    r = (t - k * _LN2_HI) - k * _LN2_LO
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    return p * _POW2_NEG[int(-k)]


@njit(cache=True, inline="always")
def log1p_unit(e: float) -> float:
    """``log(1 + e)`` for ``e`` in [0, 1] to 5e-16 relative, in a form LLVM vectorizes:
    ``2 atanh(s)``, ``s = e / (2 + e)`` in [0, 1/3], by its odd series to ``s^35``."""
    s = e / (2.0 + e)
    q = s * s
    # Horner written out: a loop here would stop the caller's loop from vectorizing.
    p = 1.0 / 35.0
    p = p * q + 1.0 / 33.0
    p = p * q + 1.0 / 31.0
    p = p * q + 1.0 / 29.0
    p = p * q + 1.0 / 27.0
    p = p * q + 1.0 / 25.0
    p = p * q + 1.0 / 23.0
    p = p * q + 1.0 / 21.0
    p = p * q + 1.0 / 19.0
    p = p * q + 1.0 / 17.0
    p = p * q + 1.0 / 15.0
    p = p * q + 1.0 / 13.0
    p = p * q + 1.0 / 11.0
    p = p * q + 1.0 / 9.0
    p = p * q + 1.0 / 7.0
    p = p * q + 1.0 / 5.0
    p = p * q + 1.0 / 3.0
    p = p * q + 1.0
    return 2.0 * s * p


@njit(cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def logistic_pass(y, z, inv_n, r):
    """Mean logistic loss at margins ``u = y * z`` and ``r = dloss/dz``, in one pass.

    ``log(1 + exp(-u)) = max(-u, 0) + log1p(e)`` and ``sigmoid(-u)`` from
    ``e = exp(-|u|)``, with the vectorizable :func:`exp_nonpositive` and
    :func:`log1p_unit` (libm's ``exp`` and ``log1p`` are scalar calls that would dominate
    the pass). ``error_model="numpy"`` drops numba's zero-division checks, which would
    stop the vectorizer (``1 + e >= 1``); ``reassoc`` lets the loss sum vectorize.
    """
    n = z.shape[0]
    loss = 0.0
    for i in range(n):
        u = y[i] * z[i]
        e = exp_nonpositive(-abs(u))
        num = e if u >= 0.0 else 1.0
        loss += (-u if u < 0.0 else 0.0) + log1p_unit(e)
        r[i] = (-inv_n * y[i]) * (num / (1.0 + e))
    return loss * inv_n


@njit(cache=True)
def line_value(kind, f0, gd, curv, z, zd, y, beta):
    """``phi(beta)``, the objective at ``x + beta d``."""
    if kind == LINE_QUADRATIC:
        return f0 + beta * (gd + beta * curv)
    return _logistic_line_loss(z, zd, y, beta)


@njit(cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def _logistic_line_loss(z, zd, y, beta):
    """Mean logistic loss at margins ``y * (z + beta zd)`` (vectorized like logistic_pass)."""
    n = z.shape[0]
    acc = 0.0
    for i in range(n):
        u = y[i] * (z[i] + beta * zd[i])
        acc += (-u if u < 0.0 else 0.0) + log1p_unit(exp_nonpositive(-abs(u)))
    return acc / n


@njit(cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def _logistic_slope(z, zd, y, beta):
    """First and second derivative of the logistic line model at ``beta``."""
    n = z.shape[0]
    d1 = 0.0
    d2 = 0.0
    for i in range(n):
        u = y[i] * (z[i] + beta * zd[i])
        e = exp_nonpositive(-abs(u))
        inv = 1.0 / (1.0 + e)
        sm = (e if u >= 0.0 else 1.0) * inv  # sigmoid(-u)
        d1 -= y[i] * zd[i] * sm
        d2 += zd[i] * zd[i] * (e * inv * inv)  # sigmoid(u) sigmoid(-u)
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
