"""The Frank-Wolfe step, written once for every FW kernel.

The kernels (:func:`solvers.fw.svm_dual_advance`, :func:`solvers.fw.logreg_l1_advance`,
:func:`solvers.nuclear.completion_advance`, :func:`solvers.fw_variants.fwv_advance`) keep
their iterates differently (simplex weights, l1-ball atom weights, rank-one atoms, sparse
atoms), so each computes its own gradient, oracles, ``<g, d>``, ``||d||^2`` and curvature.
The step around those is the same and lives here:

1. :func:`terminal_status`: stop at this iterate (converged, non-finite, iteration cap)?
2. :func:`step_kind`: FW, away, pairwise or local step, from the gaps of the candidate
   directions (Lacoste-Julien & Jaggi 2015, "On the global linear convergence of
   Frank-Wolfe optimization variants", NeurIPS, Algorithms 1 and 2; Tsuji, Tanaka &
   Pokutta 2022, ICML, Algorithm 1 for BPCG's local step);
3. :func:`max_step`: the largest step that keeps the weights feasible;
4. :func:`fw_step_size`: the step rule's size (:func:`solvers.steps.step_size`), or 0 when
   the direction does not descend (the kernel then stops, stalled);
5. the weight update: :mod:`solvers.active_set` (every kernel's weights);
6. :func:`record_base`: the six base columns of the trace row (:data:`BASE_COLUMNS`).

Method codes are those of :mod:`solvers.fw_methods`. :func:`step_kind` and
:func:`max_step` are plain numba calls (``inline="never"``, numba's default: compiled once,
about 0.06 CPU s each); the record, the status and :func:`fw_step_size` (a branch around
:func:`solvers.steps.step_size`, which compiled on its own cost 0.66 CPU s for its two
signatures) are inlined into the kernels. The kernels' results are bit-identical to
those of the code before this module, at the same speed (``benchmarks/fw_ab_inproc.py``).
"""

from __future__ import annotations

import math

from numba import njit

from solvers import fw_methods
from solvers.active_set import away_gamma_max
from solvers.steps import step_size
from solvers.tags import (
    BASE_COLUMNS,
    STATUS_CONVERGED,
    STATUS_MAX_ITER,
    STATUS_NONFINITE,
    STATUS_RUNNING,
)

# The six base record columns (solvers.tags.BASE_COLUMNS), in order.
REC_ITER = 0
REC_OBJECTIVE = 1
REC_CERTIFICATE = 2
REC_STEP_SIZE = 3
REC_STEP_TYPE = 4
REC_ACTIVE = 5
assert BASE_COLUMNS[REC_ACTIVE] == "active_size" and len(BASE_COLUMNS) == REC_ACTIVE + 1

# Step kinds (what a kernel then does to its iterate and weights).
K_FW = 1  # toward the FW atom s: d = s - x
K_AWAY = 2  # away from the away atom v: d = x - v
K_PAIR = 3  # pairwise: d = s - v
K_LOCAL = 4  # BPCG's local pairwise step between two active atoms: d = a_local - v

_AFW = fw_methods.AFW.code
_PFW = fw_methods.PFW.code
_BPCG = fw_methods.BPCG.code


@njit(cache=True, inline="always")
def record_base(rec, row, k, f, cert, gamma, step_type, active):
    """Write the base columns of row ``row``: iteration ``k``, the objective ``f`` and
    certificate ``cert`` at ``x_k``, the step size and type taken from it, the active size."""
    rec[row, REC_ITER] = k
    rec[row, REC_OBJECTIVE] = f
    rec[row, REC_CERTIFICATE] = cert
    rec[row, REC_STEP_SIZE] = gamma
    rec[row, REC_STEP_TYPE] = step_type
    rec[row, REC_ACTIVE] = active


@njit(cache=True, inline="always")
def terminal_status(gap, tol, f, k, stop_at):
    """Status to stop with at this iterate, or STATUS_RUNNING to keep stepping."""
    if not (math.isfinite(f) and math.isfinite(gap)):
        return STATUS_NONFINITE
    if gap <= tol:
        return STATUS_CONVERGED
    if k >= stop_at:
        return STATUS_MAX_ITER
    return STATUS_RUNNING


@njit(cache=True)
def step_kind(method, gap_fw, gap_away, gap_local):
    """The step of a non-lazy iteration of ``method`` (a :mod:`solvers.fw_methods` code).

    ``gap_fw = <g, x - s>``, ``gap_away = <g, v - x>``, ``gap_local = <g, v - a>`` (``s``
    the FW atom, ``v`` the away atom, ``a`` the best active atom; ``-inf`` where a kernel
    rules the step out). AFW steps away when that gap is larger (ties go to FW); PFW always
    steps pairwise; BPCG takes its local step when its gap is at least the FW gap; every
    other method steps toward ``s``."""
    if method == _AFW:
        return K_AWAY if gap_away > gap_fw else K_FW
    if method == _PFW:
        return K_PAIR
    if method == _BPCG and gap_local >= gap_fw:
        return K_LOCAL
    return K_FW


@njit(cache=True)
def max_step(kind, mu_v):
    """The largest step of kind ``kind`` that keeps the weights feasible (``mu_v``: the
    weight of the atom stepped away from): 1 for a FW step, ``mu_v / (1 - mu_v)`` away,
    ``mu_v`` pairwise or local."""
    if kind == K_FW:
        return 1.0
    if kind == K_AWAY:
        return away_gamma_max(mu_v)
    return mu_v


@njit(cache=True, inline="always")
def fw_step_size(rule, k, gd, dnorm2, gmax, start, line, f, curv, z, zd, b, params, lstate):
    """``(gamma, line evaluations)`` of the step rule (:func:`solvers.steps.step_size`,
    same arguments), or ``(0, 0)`` when ``gd = <g, d> >= 0``: not a descent direction (a
    zero direction, or a gap at rounding level), along which no step makes progress."""
    if gd >= 0.0:
        return 0.0, 0
    return step_size(rule, k, gd, dnorm2, gmax, start, line, f, curv, z, zd, b, params, lstate)
