"""Reference solutions from an external modelling tool, for the tests and the benchmarks.

:func:`plq_cvxpy` writes a :class:`~ermviz.families.plq.problem.PlqProblem` in cvxpy from its
ReLU-ReHU pieces, independently of the family's own kernels, and solves it with any solver
cvxpy knows (Clarabel by default). It needs the ``test`` or ``bench`` extra (cvxpy is not a
dependency of the product).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp


@dataclass
class CvxResult:
    """What a cvxpy solve returned.

    ``beta`` is None when the solver gave no point (``status`` says why); ``seconds`` is
    the CPU time of ``Problem.solve`` (canonicalization included) and ``wall_seconds`` its
    wall time; ``solver_seconds`` is the time the solver itself reports (0 if none).
    """

    status: str
    beta: np.ndarray | None
    objective: float
    infeasibility: float
    seconds: float
    wall_seconds: float
    solver_seconds: float
    iterations: int


def _column_scales(X: Any) -> np.ndarray:
    """``1 / ||X[:, j]||`` (1 for an all-zero column), shape (d,)."""
    if sp.issparse(X):
        sq = np.asarray(X.multiply(X).sum(axis=0)).ravel()
    else:
        sq = np.einsum("ij,ij->j", X, X)
    norms = np.sqrt(sq)
    return np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 1.0)


def _opposite_pairs(S: np.ndarray, T: np.ndarray, tau: np.ndarray) -> list[tuple[int, int]]:
    """Pairs ``(h, h')`` of quadratic pieces (``tau = inf``) with ``w_h' = -w_h`` exactly:
    ``0.5 (w)_+^2 + 0.5 (-w)_+^2 = 0.5 w^2``, a plain sum of squares (mse, squared loss)."""
    quad = [h for h in range(S.shape[1]) if np.all(np.isinf(tau[:, h]))]
    pairs, used = [], set()
    for i, h in enumerate(quad):
        for g in quad[i + 1 :]:
            if h in used or g in used:
                continue
            if np.array_equal(S[:, h], -S[:, g]) and np.array_equal(T[:, h], -T[:, g]):
                pairs.append((h, g))
                used |= {h, g}
    return pairs


def plq_cvxpy(
    pb: Any, solver: str = "CLARABEL", *, rescale: bool = False, **options: Any
) -> CvxResult:
    """Solve ``pb`` (a PLQ problem) with cvxpy and ``solver`` (keyword ``options`` go to the
    solver). ``ReHU_tau(w) = min_{c >= 0} 0.5 (w - c)_+^2 + tau c`` is written as
    ``0.5 a^2 + tau c`` with ``a + c >= w``, ``c >= 0``; ReLU pieces as ``pos``; the l1 term
    as ``abs``; two quadratic pieces of opposite arguments (mse) as one sum of squares.

    ``rescale=True`` hands the solver the same problem in better units: ``beta = D c``
    with ``D = diag(1 / ||X[:, j]||)``, every piece's argument divided by
    ``s = max(1, max |V|, max |T|)`` (``ReLU(w) = s ReLU(w / s)``,
    ``ReHU_tau(w) = s^2 ReHU_{tau / s}(w / s)``) and the objective by ``P(0)``. Interior-
    point solvers stop on tolerances relative to the data's magnitudes, so raw features
    and targets of 1e3-1e6 make Clarabel stop early or declare the problem infeasible
    (house_8L, cadata); the rescaled problem has the same minimizer. A solver failure is
    a result (``status`` ``failed: ...``), not an error."""
    import cvxpy as cp

    X = sp.csr_matrix(pb.X) if sp.issparse(pb.X) else np.asarray(pb.X)
    U, V, S, T, tau = pb.U, pb.V, pb.S, pb.T, pb.tau
    if rescale:
        D = _column_scales(X)
        X = X @ sp.diags(D) if sp.issparse(X) else X * D
        s = max(1.0, float(np.abs(V).max(initial=0.0)), float(np.abs(T).max(initial=0.0)))
        obj_scale = max(float(pb.objective(np.zeros(pb.d))), 1e-300)
    else:
        D = np.ones(pb.d)
        s = obj_scale = 1.0
    c = cp.Variable(pb.d)
    beta = cp.multiply(D, c) if rescale else c
    z = X @ c
    obj = 0.5 * cp.sum_squares(beta)
    cons = []
    for l_ in range(pb.L):
        obj += s * cp.sum(cp.pos(cp.multiply(U[:, l_] / s, z) + V[:, l_] / s))
    pairs = _opposite_pairs(S, T, tau)
    paired = {h for pair in pairs for h in pair}
    for h, _ in pairs:
        obj += 0.5 * s**2 * cp.sum_squares(cp.multiply(S[:, h] / s, z) + T[:, h] / s)
    for h in range(pb.H):
        if h in paired:
            continue
        w = cp.multiply(S[:, h] / s, z) + T[:, h] / s
        t = tau[:, h] / s
        if np.all(np.isinf(t)):
            obj += 0.5 * s**2 * cp.sum_squares(cp.pos(w))
            continue
        a, r = cp.Variable(pb.n), cp.Variable(pb.n)
        cons += [r >= 0, a + r >= w]
        obj += s**2 * (0.5 * cp.sum_squares(a) + np.where(np.isinf(t), 0.0, t) @ r)
        if np.any(np.isinf(t)):
            cons.append(r[np.isinf(t)] == 0)
    if pb.l1w.size:
        obj += pb.l1w @ cp.abs(beta)
    if pb.K:
        cons.append(pb.A @ beta + pb.b >= 0)
    prob = cp.Problem(cp.Minimize(obj / obj_scale), cons)
    c0, t0 = time.process_time(), time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prob.solve(solver=solver, **options)
    except Exception as exc:  # a failing reference is a result, not a crash
        return CvxResult(
            f"failed: {type(exc).__name__}: {str(exc)[:80]}",
            None,
            float("nan"),
            float("nan"),
            time.process_time() - c0,
            time.perf_counter() - t0,
            0.0,
            0,
        )
    seconds, wall = time.process_time() - c0, time.perf_counter() - t0
    stats = prob.solver_stats
    if c.value is None:
        return CvxResult(prob.status, None, float("nan"), float("nan"), seconds, wall, 0.0, 0)
    b = D * np.asarray(c.value, dtype=np.float64).ravel()
    return CvxResult(
        prob.status,
        b,
        pb.objective(b),
        pb.infeasibility(b),
        seconds,
        wall,
        float(stats.solve_time or 0.0),
        int(stats.num_iters or 0),
    )


def rehline_package_args(pb: Any) -> dict[str, Any]:
    """Keyword arguments of ``rehline.ReHLine_solver`` (the ``rehline`` package, 0.1.4) for
    ``pb``: its loss pieces sample-major (``U, V, S, T, Tau``), the constraints as a dense
    ``A, b`` and the l1 weights as its native ``rho``."""
    args: dict[str, Any] = {
        "U": pb.U.T.copy(),
        "V": pb.V.T.copy(),
        "S": pb.S.T.copy(),
        "T": pb.T.T.copy(),
        "Tau": pb.tau.T.copy(),
    }
    if pb.K:
        args["A"] = pb.A.toarray()
        args["b"] = pb.b.copy()
    if pb.l1w.size:
        args["rho"] = pb.l1w.copy()
    return args


#: Clarabel options for a reference optimum (tolerances far below the 1e-6 the tests ask).
TIGHT_CLARABEL = {"tol_gap_abs": 1e-11, "tol_gap_rel": 1e-11, "tol_feas": 1e-11}
