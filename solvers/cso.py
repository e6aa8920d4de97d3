"""Conditional stochastic optimization kernels: BSGD, BSpiderBoost and the SAA sample draw
for invariant logistic regression (Hu, Chen & He, "Biased stochastic first-order methods
for conditional stochastic optimization and applications in meta learning", NeurIPS
2020; ALGORITHMS.md F).

The problem (F.2): ``F(x) = E_(a,b) log(1 + exp(-b E[eta | a]^T x)) + l2/2 ||x||^2``;
an outer sample ``xi = (a, b)`` is a uniformly drawn row of the data (``A`` dense or CSR,
labels ``y``), an inner sample ``eta | xi ~ N(a, noise_var I)``. The biased estimator
(3) from one ``xi`` and ``m`` inner samples is, with ``eta_bar`` their mean,
``g = -b sigma(-b eta_bar^T x) eta_bar + l2 x``: the exact gradient of the surrogate
``F_hat(x) = log(1 + exp(-b eta_bar^T x)) + l2/2 ||x||^2`` (F.3).

Randomness is counter-based: draw ``c`` of a run is a function of ``(key, c)`` only
(splitmix64 of ``key + c * golden``; Steele, Lea & Flood 2014), and the counter lives in
the run's own state. A run is reproducible from its seed bit for bit, whatever runs
beside it in other threads. Normals come from Box-Muller on two uniforms. Every inner
sample is drawn (``m d`` normals), as an oracle would deliver it, and counted in
``I_SAMPLES`` (the budget of F.7: inner samples).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from solvers.linalg import n_rows, row_axpy, row_dot
from solvers.tags import STATUS_MAX_ITER, STATUS_MAX_WORK, STATUS_RUNNING

# Integer state.
I_K = 0  # iteration
I_CTR = 1  # RNG counter (draws so far)
I_SAMPLES = 2  # inner samples drawn (the budget)
I_LIMIT = 3  # stop before the samples would exceed this (-1: no limit)
I_STATUS = 4
N_ISTATE = 5

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_TWO_PI = 2.0 * math.pi


@njit(cache=True)
def _mix(z):
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def uniform(key, istate):
    """The next uniform in [0, 1) of the stream ``key`` (a uint64); advances ``I_CTR``."""
    c = np.uint64(istate[I_CTR]) + np.uint64(1)
    istate[I_CTR] += 1
    z = _mix(key + c * _GOLDEN)
    return float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def normal(key, istate):
    """A standard normal (Box-Muller; one of the pair is used, so draws stay independent
    of how many a caller asks for)."""
    u1 = 1.0 - uniform(key, istate)  # (0, 1]
    u2 = uniform(key, istate)
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(_TWO_PI * u2)


@njit(cache=True)
def draw_pair(A, y, key, istate, m, noise_sd, eta):
    """One outer sample (a row ``i`` of ``A``, label ``y[i]``) and the mean of ``m`` inner
    samples ``eta_j ~ N(a_i, noise_sd^2 I)`` into ``eta``; returns ``b = y[i]``."""
    n = n_rows(A)
    i = int(uniform(key, istate) * n)
    if i >= n:
        i = n - 1
    d = eta.shape[0]
    for t in range(d):
        eta[t] = 0.0
    for _ in range(m):
        for t in range(d):
            eta[t] += normal(key, istate)
    scale = noise_sd / m
    for t in range(d):
        eta[t] *= scale
    row_axpy(A, i, 1.0, eta)
    istate[I_SAMPLES] += m
    return y[i]


@njit(cache=True)
def _sigmoid(s):
    if s >= 0.0:
        return 1.0 / (1.0 + math.exp(-s))
    e = math.exp(s)
    return e / (1.0 + e)


@njit(cache=True)
def estimator_coef(x, eta, b):
    """``c`` with ``grad F_hat(x) = c eta + l2 x``: ``c = -b sigma(-b eta^T x)``."""
    s = 0.0
    for t in range(x.shape[0]):
        s += eta[t] * x[t]
    return -b * _sigmoid(-b * s)


@njit(cache=True)
def _budget_allows(istate, need):
    limit = istate[I_LIMIT]
    return limit < 0 or istate[I_SAMPLES] + need <= limit


@njit(cache=True, nogil=True)
def bsgd_advance(A, y, key, x, xavg, eta, istate, fstate, m, growth, gamma0, decay, l2, stop_at):
    """BSGD (Algorithm 1, F.4) from iteration ``I_K`` up to ``stop_at``.

    Inner batch ``m_t = ceil(m (t + 1)^growth)``; step ``gamma_t = gamma0`` (``decay`` 0)
    or ``gamma0 / sqrt(t + 1)`` (1). ``xavg`` is the step-weighted average of the
    iterates ``x_1..x_t`` (F.4's output for convex problems), its weight sum in
    ``fstate[0]``; ``fstate[1]`` gets the last step size. Stops before a step whose inner
    samples would exceed ``I_LIMIT`` (status :data:`STATUS_MAX_WORK`)."""
    noise_sd = fstate[2]
    d = x.shape[0]
    while istate[I_K] < stop_at:
        t = istate[I_K]
        mt = m if growth == 0.0 else math.ceil(m * (t + 1.0) ** growth)
        if not _budget_allows(istate, mt):
            istate[I_STATUS] = STATUS_MAX_WORK
            return
        b = draw_pair(A, y, key, istate, mt, noise_sd, eta)
        gamma = gamma0 if decay == 0 else gamma0 / math.sqrt(t + 1.0)
        c = estimator_coef(x, eta, b)
        w = fstate[0]
        for j in range(d):
            xavg[j] = (w * xavg[j] + gamma * x[j]) / (w + gamma)
        fstate[0] = w + gamma
        for j in range(d):
            x[j] -= gamma * (c * eta[j] + l2 * x[j])
        fstate[1] = gamma
        istate[I_K] += 1
    istate[I_STATUS] = STATUS_MAX_ITER if istate[I_K] >= stop_at else STATUS_RUNNING


@njit(cache=True, nogil=True)
def spider_advance(A, y, key, x, xprev, v, eta, istate, fstate, m, q, n1, n2, gamma, l2, stop_at):
    """BSpiderBoost (Algorithm 2, F.5) from iteration ``I_K`` up to ``stop_at``.

    At ``t mod q == 0``: ``v = mean`` of the estimator over ``n1`` fresh pairs at ``x``;
    otherwise ``v += mean over n2 fresh pairs of [g(x; pair) - g(xprev; pair)]``, the same
    pair at both points. Then ``xprev = x``, ``x -= gamma v``. Stops before a step whose
    inner samples would exceed ``I_LIMIT`` (status :data:`STATUS_MAX_WORK`)."""
    noise_sd = fstate[2]
    d = x.shape[0]
    while istate[I_K] < stop_at:
        t = istate[I_K]
        start = t % q == 0
        batch = n1 if start else n2
        if not _budget_allows(istate, batch * m):
            istate[I_STATUS] = STATUS_MAX_WORK
            return
        if start:
            for j in range(d):
                v[j] = 0.0
            for _ in range(batch):
                b = draw_pair(A, y, key, istate, m, noise_sd, eta)
                c = estimator_coef(x, eta, b)
                for j in range(d):
                    v[j] += (c * eta[j] + l2 * x[j]) / batch
        else:
            for _ in range(batch):
                b = draw_pair(A, y, key, istate, m, noise_sd, eta)
                c = estimator_coef(x, eta, b)
                cp = estimator_coef(xprev, eta, b)
                for j in range(d):
                    v[j] += ((c - cp) * eta[j] + l2 * (x[j] - xprev[j])) / batch
        for j in range(d):
            xprev[j] = x[j]
            x[j] -= gamma * v[j]
        fstate[1] = gamma
        istate[I_K] += 1
    istate[I_STATUS] = STATUS_MAX_ITER if istate[I_K] >= stop_at else STATUS_RUNNING


@njit(cache=True, nogil=True)
def saa_draw(A, y, key, istate, m, noise_sd, E, b):
    """SAA's sample (F.6): ``E[i]`` = the mean of ``m`` inner samples around a uniformly
    drawn row, ``b[i]`` its label, for every row of ``E``."""
    for i in range(E.shape[0]):
        b[i] = draw_pair(A, y, key, istate, m, noise_sd, E[i])


@njit(cache=True, nogil=True)
def logistic_value(A, y, x, l2):
    """``mean_i log(1 + exp(-y_i a_i^T x)) + l2/2 ||x||^2`` (stable log1p form); the
    evaluation of F on the fixed evaluation sample (F.7)."""
    n = n_rows(A)
    total = 0.0
    for i in range(n):
        s = -y[i] * row_dot(A, i, x)
        total += s + math.log1p(math.exp(-s)) if s > 0.0 else math.log1p(math.exp(s))
    reg = 0.0
    for j in range(x.shape[0]):
        reg += x[j] * x[j]
    return total / n + 0.5 * l2 * reg
