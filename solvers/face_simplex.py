"""Face-Newton's steps on the unit simplex: the projected path and the pairwise fallback.

On the simplex the face step of :mod:`solvers.face_newton` starts along the Newton
direction ``d`` on the working set ``W`` (``sum d = 0``), where the ratio test
``t_max = min_{d_j < 0} x_j / (-d_j)`` bounds the straight line. Two floating-point facts
shape the step (issue 47: face-newton stalled on the L2-SVM dual of phishing):

* **The step size minimizes an exact model**, not an Armijo search on function values.
  ``f(x + t d) - f(x)`` computed as a difference of two sums is rounding noise of size
  ``eps |f|`` once ``t |<g, d>|`` falls below it: a coordinate left at 1e-22 by rounding
  caps the ratio test at ``t ~ 1e-18``, and Armijo backtracking from there compared noise
  with noise (it rejected all 60 trials on phishing, or accepted a shorter step, 3e-34,
  that reached no bound, so the same face came back at every iteration). The squared
  loss along a line is the quadratic ``f + t slope + t^2 curv`` (``curv = scale ||M d||^2 +
  ridge ||d||^2``), free of cancellation; on the logistic loss
  :func:`solvers.steps.exact_line_search` works on ``phi'``. Its minimizer satisfies
  Armijo's condition for every constant ``c <= 1/2``.
* **A step that reaches the bound drops the blocking coordinates exactly**: a coordinate
  whose remainder ``x_j + t d_j`` is within rounding of 0 (at most ``_DROP_RTOL`` times
  where it started: the blocker, and its ties, e.g. duplicated samples of the SVM dual)
  is set to 0. Left positive, such a residue becomes a later blocker; the residues of
  ties were where the stalls on phishing began.

On the squared loss (the SVM dual) the step then goes on past the bound along the
projected path (:func:`_path_step`): one iteration drops every coordinate a projected
Newton step would, instead of one per Newton solve (phishing, C = 1: 38 iterations
instead of 475).

When no face step makes measurable progress (a descent direction whose predicted
decrease is below the resolution of ``f`` and that drops nothing), the iteration takes
the pairwise step of Lacoste-Julien & Jaggi (2015), "On the global linear convergence of
Frank-Wolfe optimization variants", NeurIPS: weight moves from the held coordinate with
the largest gradient to the FW vertex (the smallest), with the same exact line model,
capped at the held weight (a drop when reached). Unlike a FW step it leaves the other
coordinates untouched, so it creates no tiny remainders.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solvers.fw_vparts import L_RIDGE, L_SCALE, LOSS_SQUARED
from solvers.linalg import dot, row_axpy
from solvers.steps import LINE_LOGISTIC, exact_line_search
from solvers.tags import STEP_DROP, STEP_NEWTON, STEP_NONE, STEP_PAIRWISE

__all__ = ["RESOLUTION", "line_min", "simplex_face_step", "simplex_pairwise_step"]

_EPS = float(np.finfo(np.float64).eps)
#: A remainder ``x_j + t d_j <= _DROP_RTOL x_j`` is rounding (the ratio ``x_b / -d_b``, the
#: product and the sum each round by eps / 2): the coordinate reached 0.
_DROP_RTOL = 8.0 * _EPS
#: A decrease of at most ``RESOLUTION |f|`` is below what ``f`` (a sum over the data,
#: computed from scratch at every row) resolves.
RESOLUTION = 4.0 * _EPS
#: A later piece of the path whose curvature per unit length exceeds this many times the
#: Newton piece's ends the step (see :func:`_path_step`).
_STIFF = 100.0


@njit(cache=True)
def line_min(loss_code, loss_par, gd, dd, z, zd, b, t_max):
    """Minimizer over ``[0, t_max]`` of ``f`` along ``x + t d`` and the O(n) evaluations.

    ``gd = <g, d>``, ``dd = ||d||^2``, ``zd = M d``. Squared loss ``scale ||z - b||^2 +
    ridge ||x||^2``: the closed form of the exact quadratic ``f + t gd + t^2 curv``; logistic
    loss (no ridge in this family's logistic problems): safeguarded Newton on ``phi'``.
    """
    if loss_code == LOSS_SQUARED:
        curv = loss_par[L_SCALE] * dot(zd, zd) + loss_par[L_RIDGE] * dd
        if curv <= 0.0:
            return (t_max if gd < 0.0 else 0.0), 0
        return min(max(-gd / (2.0 * curv), 0.0), t_max), 0
    return exact_line_search(np.int64(LINE_LOGISTIC), gd, 0.0, z, zd, b, t_max)


@njit(cache=True)
def simplex_face_step(MT, loss_code, loss_par, b, x, g, z, zd, wk, m, d, f, nv, y, wfrac, passes):
    """The face step along ``d`` (on ``W = wk[:m]``, ``zd = M_W d``), in place on ``x``.

    Squared loss: :func:`_path_step`; logistic loss: the straight line to the minimizer of
    the line model on ``[0, t_max]``. ``nv`` (3+, n) and ``y`` (p,) are scratch; ``wk`` and
    ``d`` may be reordered. Returns ``(kind, t, evals)``: ``STEP_DROP`` when a held
    coordinate reached 0 (set exactly), ``STEP_NEWTON`` otherwise, ``STEP_NONE`` (``x``
    unchanged) when ``d`` is no descent direction or the step would neither drop a
    coordinate nor decrease ``f`` measurably.
    """
    if loss_code == LOSS_SQUARED:
        return _path_step(MT, loss_par, x, g, zd, wk, m, d, f, nv, y, wfrac, passes)
    gd = 0.0
    dd = 0.0
    t_max = np.inf
    for t in range(m):
        dt = d[t]
        gd += g[wk[t]] * dt
        dd += dt * dt
        if dt < 0.0:
            t_max = min(t_max, x[wk[t]] / -dt)
    if not (gd < 0.0 and t_max < np.inf):
        return STEP_NONE, 0.0, 0
    step, evals = line_min(loss_code, loss_par, gd, dd, z, zd, b, t_max)
    if not step > 0.0:
        return STEP_NONE, 0.0, evals
    if step < t_max and -0.5 * step * gd <= RESOLUTION * abs(f):
        return STEP_NONE, 0.0, evals  # no measurable progress on this face
    kind = STEP_NEWTON
    for t in range(m):
        j = wk[t]
        v = x[j] + step * d[t]
        if d[t] < 0.0 and v <= _DROP_RTOL * x[j]:
            v = 0.0
            kind = STEP_DROP
        x[j] = v
    return kind, step, evals


@njit(cache=True)
def _path_step(MT, loss_par, x, g, zd, wk, m, d, f, nv, y, wfrac, passes):
    """Squared loss: to the first minimizer of ``f`` along the projected path
    ``y(s) = P(x + s d)``, ``P`` the projection onto the face's simplex ``{y_W >= 0,
    sum y_W = sum x_W}`` (projected Newton, Bertsekas 1982; the path search of Moré &
    Toraldo 1991, "On the solution of large quadratic programming problems with bound
    constraints", SIAM J. Optim.).

    The path is piecewise linear: on each piece the live coordinates move along ``d' = d +
    C`` (``C`` keeps ``sum d' = 0``) and ``f`` is the exact quadratic ``f(y) + s slope + s^2
    curv`` (``slope = <grad f(y), d'>`` from ``g``, ``M (y - x)`` and ``M d' = A + C B``
    with ``A = sum_live d_j M_j``, ``B = sum_live M_j``): no difference of rounded sums. A
    piece ends at its minimizer (the step ends) or at the ratio test's bound, where the
    blocking coordinates (and ties within rounding, and entering ones at 0 whose
    direction is negative) are set to 0 exactly and leave; the path goes on without them.
    So one step drops every coordinate a projected Newton step would, each exactly.

    Past a bound the direction is the Newton direction re-centred by a uniform shift, not
    a new Newton solve. On badly scaled data that shift can point where the Hessian is
    far stiffer (raw breast-cancer, a feature near 1e7: 1e6 times the Newton piece's
    curvature per unit length), and tiny moves there change the gradient wildly; so a
    later piece whose curvature per unit length exceeds ``_STIFF`` (100) times the Newton
    piece's ends the step at its start, and the next iteration solves again.
    """
    scale = loss_par[L_SCALE]
    ridge = loss_par[L_RIDGE]
    A = zd
    B = nv[0]
    v = nv[1]
    dz = nv[2]
    B[:] = 0.0
    dz[:] = 0.0
    for t in range(m):
        j = wk[t]
        row_axpy(MT, j, 1.0, B)
        passes[0] += wfrac[j]
        y[t] = x[j]
    live = m
    C = 0.0
    s_last = 0.0
    total = 0.0
    dec = 0.0
    dropped = False
    stiff = np.inf
    for _piece in range(m + 1):
        # Leave: live coordinates at 0 (to rounding of where they were) whose direction
        # is negative, the last piece's blockers and entering ones alike.
        t = 0
        while t < live:
            dt = d[t] + C
            if dt < 0.0 and y[t] <= _DROP_RTOL * (y[t] - s_last * dt):
                j = wk[t]
                dropped = dropped or x[j] > 0.0
                row_axpy(MT, j, -d[t], A)
                row_axpy(MT, j, -1.0, B)
                passes[0] += 2.0 * wfrac[j]
                live -= 1
                wk[t], wk[live] = wk[live], j
                d[t], d[live] = d[live], d[t]
                y[t], y[live] = y[live], 0.0
            else:
                t += 1
        if live <= 1:
            break
        dsum = 0.0
        for t in range(live):
            dsum += d[t]
        C = -dsum / live
        slope = 0.0
        dd = 0.0
        s_break = np.inf
        t_block = -1
        for t in range(live):
            dt = d[t] + C
            slope += (g[wk[t]] + 2.0 * ridge * (y[t] - x[wk[t]])) * dt
            dd += dt * dt
            if dt < 0.0 and y[t] < s_break * -dt:
                s_break = y[t] / -dt
                t_block = t
        for i in range(v.shape[0]):
            v[i] = A[i] + C * B[i]
        slope += 2.0 * scale * dot(dz, v)
        curv = scale * dot(v, v) + ridge * dd
        if not slope < 0.0:
            break
        if total == 0.0:
            stiff = _STIFF * curv / dd  # the Newton piece's curvature per unit length
        elif curv > stiff * dd:
            break  # the re-centred direction is far stiffer than Newton's: stop here
        step = -slope / (2.0 * curv) if curv > 0.0 else np.inf
        last = step < s_break
        if not last:
            step = s_break
        if not step < np.inf:
            break
        for t in range(live):
            y[t] += step * (d[t] + C)
        for i in range(dz.shape[0]):
            dz[i] += step * v[i]
        dec -= step * (slope + step * curv)
        total += step
        s_last = step
        if last:
            break
        y[t_block] = 0.0  # the ratio test's blocker: exactly at its bound
    if not dropped and dec <= RESOLUTION * abs(f):
        return STEP_NONE, 0.0, 0  # no measurable progress on this face (x untouched)
    for t in range(m):
        x[wk[t]] = y[t]
    return (STEP_DROP if dropped else STEP_NEWTON), total, 0


@njit(cache=True)
def simplex_pairwise_step(MT, loss_code, loss_par, b, x, g, z, zd, v, wfrac, passes):
    """Pairwise step from the held coordinate with the largest gradient to ``v`` (the FW
    vertex), in place on ``x``; ``zd`` is scratch. Returns ``(kind, t, evals)``: ``kind``
    ``STEP_DROP`` (the held weight moved entirely), ``STEP_PAIRWISE``, or ``STEP_NONE``
    when no pair decreases ``f``. ``passes[0]`` counts the two rows of ``MT`` read."""
    a = -1
    ga = -np.inf
    for j in range(x.shape[0]):
        if x[j] > 0.0 and g[j] > ga:
            ga = g[j]
            a = j
    gd = g[v] - ga
    if a < 0 or a == v or not gd < 0.0:
        return STEP_NONE, 0.0, 0
    zd[:] = 0.0
    row_axpy(MT, v, 1.0, zd)
    row_axpy(MT, a, -1.0, zd)
    passes[0] += wfrac[v] + wfrac[a]
    xa = x[a]
    step, evals = line_min(loss_code, loss_par, gd, 2.0, z, zd, b, xa)
    if not step > 0.0:
        return STEP_NONE, 0.0, evals
    if xa - step <= _DROP_RTOL * xa:
        x[v] += xa
        x[a] = 0.0
        return STEP_DROP, step, evals
    x[v] += step
    x[a] = xa - step
    return STEP_PAIRWISE, step, evals
