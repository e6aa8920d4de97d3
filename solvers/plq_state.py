"""The workspace structs of the PLQ kernels: named groups of arrays passed as one argument.

The ReHLine coordinate-descent kernels (:mod:`solvers.rehline`,
:mod:`solvers.rehline_blocks`) and the certificate (:mod:`solvers.plq_certificate`) take
the problem's arrays, the dual point and the method's working arrays as three structs
rather than as 18-21 separate arrays:

* :class:`PlqRows`: the constraint rows ``A beta + b >= 0`` (``A``, ``b``, ``||a_k||^2``);
* :class:`PlqData`: the problem (samples ``X``, packed pieces ``PL``/``PH``, l1 weights
  and the rows), read-only;
* :class:`PlqDuals`: a dual point and its map ``beta(mu)``, updated in place by coordinate
  descent;
* :class:`CdWork`: coordinate descent's working sets, scratch, integer and float state and
  random generator.

The interior-point kernels (:mod:`solvers.plq_ipm`, :mod:`solvers.plq_newton`) take
:class:`BMatrix` (the factors of the dual's matrix ``B``), :class:`BoxQP` (the rest of the
dual box QP), :class:`IpmPoint` (the iterate) and :class:`IpmWork` (outputs, factors,
scratch).

Each is a ``typing.NamedTuple`` of arrays (and, for ``X`` / ``A``, CSR triples). numba
types it as a tuple of its members' types: attribute access compiles to a field read,
calls between kernels pass the members as flattened arguments (the same machine code as
separate arrays), a kernel compiled for a struct is cached on disk (``cache=True``) like
one compiled for arrays, and the dispatcher reads a struct's type at about the cost of
reading its arrays' (measured: 2.4 us against 2.1 us for 7 separate arrays). A
``jitclass`` lives on the heap behind a boxed Python object and numba cannot cache its
methods on disk (numba/numba#3588); a ``structref`` needs boxing code and a registered
type for each struct; ``FWVState`` of :mod:`solvers.fw_variants` is a plain Python object
whose arrays are still passed to its kernel one by one. Build the structs once per solver
and call the kernels with them; ``_replace`` gives a variant with other arrays of the same
types (the warm-ups' zero-sample copies). This module imports no numba.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np


class PlqRows(NamedTuple):
    """The constraint rows ``A beta + b >= 0``."""

    A: Any  # CSR triple (data, indices, indptr) of the (K, d) matrix, no zero rows
    b: np.ndarray  # (K,) float64
    asq: np.ndarray  # (K,) float64, ||a_k||^2


class PlqData(NamedTuple):
    """The problem's arrays, as the kernels read them (never written)."""

    X: Any  # dense (n, d) float64 or CSR triple: the samples (intercept column appended)
    PL: np.ndarray  # (n, 1 + 3 L): ||x_i||^2, then u, v, 1/(u^2 ||x_i||^2) per ReLU piece
    PH: np.ndarray  # (n, 1 + 4 H): ||x_i||^2, then s, t, tau, 1/(s^2 ||x_i||^2 + 1) per ReHU
    l1w: np.ndarray  # (d,) l1 weights (fake samples); empty when there is no l1 term
    rows: PlqRows  # the constraints


class PlqDuals(NamedTuple):
    """A dual point and its map ``beta = beta(xi, Lambda, Gamma)``."""

    beta: np.ndarray  # (d,) float64, beta(mu) (kept equal to it by coordinate descent)
    xi: np.ndarray  # (K,) constraint duals
    lam: np.ndarray  # (n, L) ReLU duals
    lam1: np.ndarray  # (d, 2) duals of the l1 term's fake samples (+w, -w)
    gam: np.ndarray  # (n, H) ReHU duals


class CdWork(NamedTuple):
    """Coordinate descent's working arrays (:func:`solvers.rehline.epochs`)."""

    idx_lam: np.ndarray  # int64 permutation of the lambda block; first istate[I_N_LAM] active
    idx_gam: np.ndarray  # int64 permutation of the gamma block; first istate[I_N_GAM] active
    buf: np.ndarray  # float64 scratch, at least 4 (K + 1) entries (the chain's xi block)
    beta_start: np.ndarray  # (d,) float64 scratch (beta at the start of a group)
    istate: np.ndarray  # int64 state, layout I_* of solvers.rehline
    fstate: np.ndarray  # float64 state, layout F_* of solvers.rehline
    rng: np.ndarray  # (1,) uint64 splitmix64 state


# ---- the interior-point method (solvers.plq_ipm, solvers.plq_newton) ---------------------
class BMatrix(NamedTuple):
    """The matrix ``B`` of the dual box QP (column ``j``: ``a_k``, ``-u_li x_i``,
    ``-s_hi x_i`` or ``-+w e_j``), as its factors (:func:`solvers.plq_newton.bmul`)."""

    X: Any  # dense (n, d) float64 or CSR triple
    A: Any  # CSR triple (K, d); K may be 0
    U: np.ndarray  # (n, L) ReLU slopes
    S: np.ndarray  # (n, H) ReHU slopes
    l1w: np.ndarray  # (d,) l1 weights or empty


class BoxQP(NamedTuple):
    """The rest of the dual box QP, per dual variable (constant during a run)."""

    dg: np.ndarray  # (m,) 1 for ReHU duals else 0
    cost: np.ndarray  # (m,) linear term c
    vkind: np.ndarray  # (m,) int8 V_FIXED, V_LOWER or V_BOX
    bn2: np.ndarray  # (m,) ||b_j||^2


class IpmPoint(NamedTuple):
    """The interior-point iterate (updated in place by :func:`solvers.plq_ipm.iterate`)."""

    beta: np.ndarray  # (d,) the primal iterate
    mu: np.ndarray  # (m,) the duals
    su: np.ndarray  # (m,) hi - mu on boxed variables
    zl: np.ndarray  # (m,) multipliers of mu >= 0
    zu: np.ndarray  # (m,) multipliers of mu <= hi


class IpmWork(NamedTuple):
    """The interior-point method's outputs, factors and scratch."""

    beta_mu: np.ndarray  # (d,) out: B mu before the step
    rp: np.ndarray  # (d,) out: beta - B mu before the step
    wm: np.ndarray  # (N_WM, m) scratch rows W_*
    wd: np.ndarray  # (N_WD, d) scratch rows D_*
    M: np.ndarray  # (d, d) scratch, or (m, m) B^T B (constant) in the n-side form
    Y: np.ndarray  # (n, d) scratch for dense X (any 2-D array for CSR)
    sysf: tuple  # (Lc, scale, Bf, C, LF, scaleF): the factors of the Newton system
    sysi: np.ndarray  # (1 + F,) int64: size and members of the free set F
    fstate: np.ndarray  # (N_FSTATE,) out, layout F_* of solvers.plq_ipm


__all__ = [
    "BMatrix",
    "BoxQP",
    "CdWork",
    "IpmPoint",
    "IpmWork",
    "PlqData",
    "PlqDuals",
    "PlqRows",
]
