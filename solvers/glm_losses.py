"""Loss triples ``(l, l', l'')`` of the l1-constrained GLM problems, chosen by an integer code.

Problem: ``min_{||x||_1 <= r} F(x) = (1/n) sum_i l_i(a_i^T x)`` with a loss chosen by an
integer code (:data:`LOSS_CODES`): the logistic loss (problem (7.1) of Xiong & Freund,
"Using Taylor-approximated gradients to improve the Frank-Wolfe method for empirical risk
minimization", SIAM J. Optim.) and two bounded non-convex losses for their problem (7.2)
(``1 - tanh(y t)`` and the sigmoid loss ``sigma(-y t)``; the paper's exact choice is not
known, see :mod:`ermviz.families.tufw.problem`). Every kernel of :mod:`solvers.tufw`,
:mod:`solvers.stochastic_fw` and :mod:`solvers.glm_fw_exact` evaluates its loss through
these functions: derivatives (:func:`loss_d12`), value and slope (:func:`loss_vd1`), the
mean loss and scaled slopes in one pass (:func:`loss_pass`) and the mean loss along a line
(``_line_value``, the backtracking line model). ``@njit(cache=True)``, overflow-free.
"""

from __future__ import annotations

import math

from numba import njit

from solvers.steps import logistic_pass

# Loss codes: the (l, l', l'') triple used by every GLM FW kernel.
LOSS_LOGISTIC = 0  # log(1 + exp(-y t))
LOSS_TANH = 1  # 1 - tanh(y t)
LOSS_SIGMOID = 2  # sigma(-y t) = 1 / (1 + exp(y t))
LOSS_CODES = {"logistic": LOSS_LOGISTIC, "tanh": LOSS_TANH, "sigmoid": LOSS_SIGMOID}


@njit(cache=True, inline="always")
def _sig_pair(u):
    """``(sigma(u), sigma(-u))`` without overflow."""
    e = math.exp(-abs(u))
    inv = 1.0 / (1.0 + e)
    if u >= 0.0:
        return inv, e * inv
    return e * inv, inv


@njit(cache=True)
def loss_d12(code, y, t):
    """``(l'(t), l''(t))`` of loss ``code`` for label ``y`` (derivatives in ``t``)."""
    u = y * t
    if code == LOSS_TANH:
        e = math.exp(-2.0 * abs(u))
        inv = 1.0 / (1.0 + e)
        sech2 = 4.0 * e * inv * inv
        th = (1.0 - e) * inv
        if u < 0.0:
            th = -th
        return -y * sech2, 2.0 * th * sech2
    a, b = _sig_pair(u)
    if code == LOSS_SIGMOID:
        return -y * a * b, a * b * (a - b)
    return -y * b, a * b


@njit(cache=True)
def loss_vd1(code, y, t):
    """``(l(t), l'(t))`` of loss ``code`` for label ``y``."""
    u = y * t
    if code == LOSS_TANH:
        e = math.exp(-2.0 * abs(u))
        inv = 1.0 / (1.0 + e)
        val = 2.0 * e * inv if u >= 0.0 else 2.0 * inv
        return val, -y * 4.0 * e * inv * inv
    a, b = _sig_pair(u)
    if code == LOSS_SIGMOID:
        return b, -y * a * b
    lv = -u + math.log1p(math.exp(u)) if u < 0.0 else math.log1p(math.exp(-u))
    return lv, -y * b


@njit(cache=True)
def loss_pass(code, y, z, inv_n, r):
    """Mean loss at margins ``z`` and ``r_i = l'(z_i) / n``, in one pass."""
    if code == LOSS_LOGISTIC:
        return logistic_pass(y, z, inv_n, r)
    acc = 0.0
    for i in range(z.shape[0]):
        v, d1 = loss_vd1(code, y[i], z[i])
        acc += v
        r[i] = d1 * inv_n
    return acc * inv_n


@njit(cache=True)
def _line_value(code, y, z, zd, gamma, inv_n):
    """Mean loss at margins ``z + gamma zd``."""
    acc = 0.0
    for i in range(z.shape[0]):
        v, _ = loss_vd1(code, y[i], z[i] + gamma * zd[i])
        acc += v
    return acc * inv_n
