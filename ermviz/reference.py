"""Reference solutions from an external modelling tool, for the tests and the benchmarks.

:func:`plq_cvxpy` writes a :class:`~ermviz.methods.rehline.PlqProblem` in cvxpy from its
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


def plq_cvxpy(pb: Any, solver: str = "CLARABEL", **options: Any) -> CvxResult:
    """Solve ``pb`` (a PLQ problem) with cvxpy and ``solver`` (keyword ``options`` go to the
    solver). ``ReHU_tau(w) = min_{c >= 0} 0.5 (w - c)_+^2 + tau c`` is written as
    ``0.5 a^2 + tau c`` with ``a + c >= w``, ``c >= 0``; ReLU pieces as ``pos``; the l1 term
    as ``abs``. A solver failure is a result (``status`` ``failed: ...``), not an error."""
    import cvxpy as cp

    b = cp.Variable(pb.d)
    X = sp.csr_matrix(pb.X) if sp.issparse(pb.X) else pb.X
    z = X @ b
    obj = 0.5 * cp.sum_squares(b)
    cons = []
    for l_ in range(pb.L):
        obj += cp.sum(cp.pos(cp.multiply(pb.U[:, l_], z) + pb.V[:, l_]))
    for h in range(pb.H):
        w = cp.multiply(pb.S[:, h], z) + pb.T[:, h]
        tau = pb.tau[:, h]
        if np.all(np.isinf(tau)):
            obj += 0.5 * cp.sum_squares(cp.pos(w))
            continue
        a, c = cp.Variable(pb.n), cp.Variable(pb.n)
        cons += [c >= 0, a + c >= w]
        obj += 0.5 * cp.sum_squares(a) + np.where(np.isinf(tau), 0.0, tau) @ c
        if np.any(np.isinf(tau)):
            cons.append(c[np.isinf(tau)] == 0)
    if pb.l1w.size:
        obj += pb.l1w @ cp.abs(b)
    if pb.K:
        cons.append(pb.A @ b + pb.b >= 0)
    prob = cp.Problem(cp.Minimize(obj), cons)
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
    if b.value is None:
        return CvxResult(prob.status, None, float("nan"), float("nan"), seconds, wall, 0.0, 0)
    beta = np.asarray(b.value, dtype=np.float64).ravel()
    return CvxResult(
        prob.status,
        beta,
        pb.objective(beta),
        pb.infeasibility(beta),
        seconds,
        wall,
        float(stats.solve_time or 0.0),
        int(stats.num_iters or 0),
    )


#: Clarabel options for a reference optimum (tolerances far below the 1e-6 the tests ask).
TIGHT_CLARABEL = {"tol_gap_abs": 1e-11, "tol_gap_rel": 1e-11, "tol_feas": 1e-11}
