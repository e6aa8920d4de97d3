"""Meta-learning kernels: a two-hidden-layer ReLU network on sine-wave few-shot regression,
its exact gradient and Hessian-vector product, and the biased meta-gradient methods of
Hu, Chen & He ("Biased stochastic first-order methods for conditional stochastic
optimization and applications in meta learning", NeurIPS 2020; ALGORITHMS.md F.8).

The MAML objective (Finn, Abbeel & Levine, ICML 2017) is a conditional stochastic
objective: ``F(w) = E_task L_task(w - alpha grad L_task(w))`` with ``L_task`` the expected
squared error of the network on the task's inputs. A task is a row ``(amplitude, phase)``
of the task pool ``T``; its samples are ``x ~ U[x_lo, x_hi]``, ``y = amplitude *
sin(x - phase)`` (Finn et al.'s sine task). The biased estimator (3) from ``m`` support
and ``mq`` query samples of one task is, with ``u = w - alpha grad L_S(w)``,
``v = (I - alpha H_S(w)) grad L_Q(u)``: the exact gradient of the surrogate
``L_Q(w - alpha grad L_S(w))``. First-order MAML drops the Hessian term (``v = grad
L_Q(u)``), a bias that no batch size removes.

The network ``1 -> H -> H -> 1`` (ReLU) lives in one flat float64 vector ``w`` of
:func:`n_params` entries: ``W1 (H), b1 (H), W2 (H x H, row-major: z2_i = sum_j W2[i, j]
a1_j + b2_i), b2 (H), W3 (H), b3 (1)``. Hessian-vector products use Pearlmutter's R-operator
(Pearlmutter 1994, "Fast exact multiplication by the Hessian"): exact, at the cost of about
two gradients.

Randomness is the counter-based stream of :mod:`solvers.cso` (a run is a function of its
seed); every drawn ``(x, y)`` pair, support or query, counts in ``I_SAMPLES``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from solvers.cso import I_K, I_LIMIT, I_SAMPLES, I_STATUS, N_ISTATE, uniform
from solvers.tags import STATUS_MAX_ITER, STATUS_MAX_WORK, STATUS_RUNNING

__all__ = [
    "I_K",
    "I_LIMIT",
    "I_SAMPLES",
    "I_STATUS",
    "N_ISTATE",
    "RULE_ADAM",
    "RULE_FIXED",
    "RULE_INV_SQRT",
    "hess_vec",
    "init_params",
    "loss_grad",
    "maml_advance",
    "maml_objective",
    "n_params",
    "predict",
    "spider_advance",
]

# Update rules of maml_advance.
RULE_FIXED = 0
RULE_INV_SQRT = 1
RULE_ADAM = 2


def n_params(hidden: int) -> int:
    """Entries of the flat parameter vector of the ``1 -> hidden -> hidden -> 1`` network."""
    return hidden * hidden + 4 * hidden + 1


def init_params(hidden: int, seed: int) -> np.ndarray:
    """PyTorch's default initialisation of linear layers: weights and biases uniform in
    ``+-1/sqrt(fan_in)``; shape ``(n_params(hidden),)``."""
    rng = np.random.default_rng(seed)
    H = hidden
    w = np.empty(n_params(H))
    w[: 2 * H] = rng.uniform(-1.0, 1.0, 2 * H)  # fan_in 1
    w[2 * H : 3 * H + H * H] = rng.uniform(-1.0, 1.0, H * H + H) / math.sqrt(H)
    w[3 * H + H * H :] = rng.uniform(-1.0, 1.0, H + 1) / math.sqrt(H)
    return w


@njit(cache=True)
def _forward(w, H, x, z1, a1, z2, a2):
    """The network at input ``x``; keeps the pre-activations and activations."""
    oW2 = 2 * H
    ob2 = oW2 + H * H
    oW3 = ob2 + H
    for i in range(H):
        z = w[i] * x + w[H + i]
        z1[i] = z
        a1[i] = z if z > 0.0 else 0.0
    f = w[oW3 + H]
    for i in range(H):
        s = w[ob2 + i]
        base = oW2 + i * H
        for j in range(H):
            s += w[base + j] * a1[j]
        z2[i] = s
        a = s if s > 0.0 else 0.0
        a2[i] = a
        f += w[oW3 + i] * a
    return f


@njit(cache=True)
def _backward(w, H, x, df, z1, a1, z2, a2, d2, d1, grad, scale):
    """``grad += scale * df * d f(x) / d w`` from the kept forward pass."""
    oW2 = 2 * H
    ob2 = oW2 + H * H
    oW3 = ob2 + H
    grad[oW3 + H] += scale * df
    for i in range(H):
        grad[oW3 + i] += scale * df * a2[i]
        d2[i] = df * w[oW3 + i] if z2[i] > 0.0 else 0.0
        grad[ob2 + i] += scale * d2[i]
    for j in range(H):
        d1[j] = 0.0
    for i in range(H):
        di = d2[i]
        if di != 0.0:
            base = oW2 + i * H
            for j in range(H):
                grad[base + j] += scale * di * a1[j]
                d1[j] += w[base + j] * di
    for j in range(H):
        if z1[j] > 0.0:
            grad[j] += scale * d1[j] * x
            grad[H + j] += scale * d1[j]


@njit(cache=True)
def _scratch(H):
    return np.empty((10, H))


@njit(cache=True)
def loss_grad(w, H, xs, ys, grad, buf):
    """Mean squared error ``mean_k (f(xs[k]) - ys[k])^2`` and its gradient, written into
    ``grad`` (shape ``(n_params(H),)``); ``buf`` is scratch of shape ``(10, H)``."""
    for p in range(grad.shape[0]):
        grad[p] = 0.0
    n = xs.shape[0]
    scale = 1.0 / n
    total = 0.0
    z1, a1, z2, a2, d2, d1 = buf[0], buf[1], buf[2], buf[3], buf[4], buf[5]
    for k in range(n):
        r = _forward(w, H, xs[k], z1, a1, z2, a2) - ys[k]
        total += r * r
        _backward(w, H, xs[k], 2.0 * r, z1, a1, z2, a2, d2, d1, grad, scale)
    return total * scale


@njit(cache=True)
def mse(w, H, xs, ys, buf):
    """Mean squared error of the network on ``(xs, ys)`` (no gradient)."""
    total = 0.0
    for k in range(xs.shape[0]):
        r = _forward(w, H, xs[k], buf[0], buf[1], buf[2], buf[3]) - ys[k]
        total += r * r
    return total / xs.shape[0]


@njit(cache=True)
def hess_vec(w, H, xs, ys, v, out, buf):
    """``out = (Hessian of the mean squared error at w) @ v``, exactly (R-operator; the
    ReLU's second derivative is zero almost everywhere)."""
    for p in range(out.shape[0]):
        out[p] = 0.0
    oW2 = 2 * H
    ob2 = oW2 + H * H
    oW3 = ob2 + H
    n = xs.shape[0]
    s = 1.0 / n
    z1, a1, z2, a2 = buf[0], buf[1], buf[2], buf[3]
    d2, d1, ra1, ra2, rd2, rd1 = buf[4], buf[5], buf[6], buf[7], buf[8], buf[9]
    for k in range(n):
        x = xs[k]
        f = _forward(w, H, x, z1, a1, z2, a2)
        df = 2.0 * (f - ys[k])
        # R-forward
        for i in range(H):
            rz = v[i] * x + v[H + i]
            ra1[i] = rz if z1[i] > 0.0 else 0.0
        rf = v[oW3 + H]
        for i in range(H):
            rz = v[ob2 + i]
            base = oW2 + i * H
            for j in range(H):
                rz += v[base + j] * a1[j] + w[base + j] * ra1[j]
            r = rz if z2[i] > 0.0 else 0.0
            ra2[i] = r
            rf += v[oW3 + i] * a2[i] + w[oW3 + i] * r
        rdf = 2.0 * rf
        # R-backward
        out[oW3 + H] += s * rdf
        for i in range(H):
            out[oW3 + i] += s * (rdf * a2[i] + df * ra2[i])
            if z2[i] > 0.0:
                d2[i] = df * w[oW3 + i]
                rd2[i] = rdf * w[oW3 + i] + df * v[oW3 + i]
            else:
                d2[i] = 0.0
                rd2[i] = 0.0
            out[ob2 + i] += s * rd2[i]
        for j in range(H):
            d1[j] = 0.0
            rd1[j] = 0.0
        for i in range(H):
            base = oW2 + i * H
            di, rdi = d2[i], rd2[i]
            if di != 0.0 or rdi != 0.0:
                for j in range(H):
                    out[base + j] += s * (rdi * a1[j] + di * ra1[j])
                    rd1[j] += v[base + j] * di + w[base + j] * rdi
        for j in range(H):
            if z1[j] > 0.0:
                out[j] += s * rd1[j] * x
                out[H + j] += s * rd1[j]


@njit(cache=True)
def predict(w, H, xs, out):
    """The network's outputs at the inputs ``xs`` into ``out``."""
    buf = _scratch(H)
    for k in range(xs.shape[0]):
        out[k] = _forward(w, H, xs[k], buf[0], buf[1], buf[2], buf[3])


@njit(cache=True)
def _draw_task(T, key, istate):
    n = T.shape[0]
    i = int(uniform(key, istate) * n)
    if i >= n:
        i = n - 1
    return T[i, 0], T[i, 1]


@njit(cache=True)
def _draw_points(amp, phase, key, istate, x_lo, x_hi, xs, ys):
    for k in range(xs.shape[0]):
        x = x_lo + (x_hi - x_lo) * uniform(key, istate)
        xs[k] = x
        ys[k] = amp * math.sin(x - phase)
    istate[I_SAMPLES] += xs.shape[0]


@njit(cache=True)
def _task_estimate(w, H, alpha, xs, ys, xq, yq, second_order, v, u, gs, hv, buf):
    """The meta-gradient estimate of one task into ``v``; returns the query loss at the
    adapted parameters. ``u``, ``gs``, ``hv``: scratch of the parameter size."""
    P = w.shape[0]
    loss_grad(w, H, xs, ys, gs, buf)
    for p in range(P):
        u[p] = w[p] - alpha * gs[p]
    lq = loss_grad(u, H, xq, yq, v, buf)
    if second_order:
        hess_vec(w, H, xs, ys, v, hv, buf)
        for p in range(P):
            v[p] -= alpha * hv[p]
    return lq


@njit(cache=True)
def _budget_allows(istate, need):
    limit = istate[I_LIMIT]
    return limit < 0 or istate[I_SAMPLES] + need <= limit


@njit(cache=True, nogil=True)
def maml_advance(
    T, key, w, istate, fstate, mom1, mom2, H, alpha, x_lo, x_hi, m, mq, tasks,
    second_order, rule, gamma0, beta1, beta2, eps, stop_at,
):  # fmt: skip
    """BSGD (Algorithm 1, ``second_order`` 1) or first-order MAML (0) from iteration
    ``I_K`` up to ``stop_at``: each step draws ``tasks`` tasks, ``m`` support and ``mq``
    query samples of each, and moves along the mean estimate. Updates: ``RULE_FIXED``
    (``w -= gamma0 v``), ``RULE_INV_SQRT`` (``gamma0 / sqrt(t + 1)``) or ``RULE_ADAM``
    (Kingma & Ba 2015, moments ``mom1``/``mom2``, bias-corrected). ``fstate[0]`` gets the
    step's mean query loss, ``fstate[1]`` its step size. Stops before a step whose samples
    would exceed ``I_LIMIT`` (status :data:`STATUS_MAX_WORK`)."""
    P = w.shape[0]
    buf = _scratch(H)
    xs, ys, xq, yq = np.empty(m), np.empty(m), np.empty(mq), np.empty(mq)
    g, v, u, gs, hv = np.empty(P), np.empty(P), np.empty(P), np.empty(P), np.empty(P)
    need = tasks * (m + mq)
    while istate[I_K] < stop_at:
        if not _budget_allows(istate, need):
            istate[I_STATUS] = STATUS_MAX_WORK
            return
        for p in range(P):
            g[p] = 0.0
        lq = 0.0
        for _ in range(tasks):
            amp, phase = _draw_task(T, key, istate)
            _draw_points(amp, phase, key, istate, x_lo, x_hi, xs, ys)
            _draw_points(amp, phase, key, istate, x_lo, x_hi, xq, yq)
            lq += _task_estimate(w, H, alpha, xs, ys, xq, yq, second_order, v, u, gs, hv, buf)
            for p in range(P):
                g[p] += v[p] / tasks
        t = istate[I_K]
        if rule == RULE_ADAM:
            b1t = 1.0 - beta1 ** (t + 1.0)
            b2t = 1.0 - beta2 ** (t + 1.0)
            for p in range(P):
                mom1[p] = beta1 * mom1[p] + (1.0 - beta1) * g[p]
                mom2[p] = beta2 * mom2[p] + (1.0 - beta2) * g[p] * g[p]
                w[p] -= gamma0 * (mom1[p] / b1t) / (math.sqrt(mom2[p] / b2t) + eps)
            gamma = gamma0
        else:
            gamma = gamma0 if rule == RULE_FIXED else gamma0 / math.sqrt(t + 1.0)
            for p in range(P):
                w[p] -= gamma * g[p]
        fstate[0] = lq / tasks
        fstate[1] = gamma
        istate[I_K] += 1
    istate[I_STATUS] = STATUS_MAX_ITER if istate[I_K] >= stop_at else STATUS_RUNNING


@njit(cache=True, nogil=True)
def spider_advance(
    T, key, w, wprev, vrec, istate, fstate, H, alpha, x_lo, x_hi, m, mq, q, n1, n2, gamma,
    stop_at,
):  # fmt: skip
    """BSpiderBoost (Algorithm 2, F.5) on the MAML objective from iteration ``I_K`` up to
    ``stop_at``: at ``t mod q == 0`` the estimate ``vrec`` is the mean over ``n1`` fresh
    tasks at ``w``; otherwise ``vrec += mean over n2 fresh tasks of [v(w) - v(wprev)]``,
    the same samples at both points. Then ``wprev = w``, ``w -= gamma vrec``."""
    P = w.shape[0]
    buf = _scratch(H)
    xs, ys, xq, yq = np.empty(m), np.empty(m), np.empty(mq), np.empty(mq)
    v, vp, u, gs, hv = np.empty(P), np.empty(P), np.empty(P), np.empty(P), np.empty(P)
    while istate[I_K] < stop_at:
        t = istate[I_K]
        start = t % q == 0
        batch = n1 if start else n2
        if not _budget_allows(istate, batch * (m + mq)):
            istate[I_STATUS] = STATUS_MAX_WORK
            return
        if start:
            for p in range(P):
                vrec[p] = 0.0
        lq = 0.0
        for _ in range(batch):
            amp, phase = _draw_task(T, key, istate)
            _draw_points(amp, phase, key, istate, x_lo, x_hi, xs, ys)
            _draw_points(amp, phase, key, istate, x_lo, x_hi, xq, yq)
            lq += _task_estimate(w, H, alpha, xs, ys, xq, yq, 1, v, u, gs, hv, buf)
            if start:
                for p in range(P):
                    vrec[p] += v[p] / batch
            else:
                _task_estimate(wprev, H, alpha, xs, ys, xq, yq, 1, vp, u, gs, hv, buf)
                for p in range(P):
                    vrec[p] += (v[p] - vp[p]) / batch
        for p in range(P):
            wprev[p] = w[p]
            w[p] -= gamma * vrec[p]
        fstate[0] = lq / batch
        fstate[1] = gamma
        istate[I_K] += 1
    istate[I_STATUS] = STATUS_MAX_ITER if istate[I_K] >= stop_at else STATUS_RUNNING


@njit(cache=True, nogil=True)
def maml_objective(w, H, alpha, amps, phases, xs_support, xs_query):
    """The MAML objective on fixed evaluation tasks: the mean over tasks ``t`` of the
    squared error on ``xs_query`` after one step ``w - alpha grad L_S(w)`` on the support
    inputs ``xs_support[t]`` (shape ``(n_tasks, K)``); targets ``amps[t] sin(x -
    phases[t])``."""
    P = w.shape[0]
    buf = _scratch(H)
    gs, u = np.empty(P), np.empty(P)
    K = xs_support.shape[1]
    ys, yq = np.empty(K), np.empty(xs_query.shape[0])
    total = 0.0
    for t in range(amps.shape[0]):
        for k in range(K):
            ys[k] = amps[t] * math.sin(xs_support[t, k] - phases[t])
        for k in range(xs_query.shape[0]):
            yq[k] = amps[t] * math.sin(xs_query[k] - phases[t])
        loss_grad(w, H, xs_support[t], ys, gs, buf)
        for p in range(P):
            u[p] = w[p] - alpha * gs[p]
        total += mse(u, H, xs_query, yq, buf)
    return total / amps.shape[0]
