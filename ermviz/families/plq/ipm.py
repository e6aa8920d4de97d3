"""Interior-point method ``ipm`` for the ``plq`` problem (the PLQ family's second method).

A primal-dual interior-point method on the dual box QP of the PLQ problem, whose Newton
steps reduce to one d x d system ``I + X^T diag(omega) X + A^T E A`` per iteration, or, on
wide data (fewer dual variables m than features d, d > :data:`NSIDE_MIN_D`), to one m x m
system ``B^T B + D`` (kernels and references in :mod:`solvers.plq_ipm`). Where coordinate
descent (``rehline``) needs many cheap epochs and slows down on badly scaled features or
on constraints that bind, the interior-point method takes some 10-60 expensive but
scale-robust steps and converges superlinearly: racing the two shows the classic
trade-off between first-order and second-order methods.

Certificate (``duality_gap``, as for ``rehline``). At every iteration the dual point ``mu``
is inside its box, so ``D(mu) = -L(mu)`` is a lower bound on ``P*``. The primal point is
``beta_mu = B mu`` projected onto the constraint set when it violates a constraint
(``nonnegative``: a clip; ``monotone``: isotonic regression; a slab (``fairness``) or any
other rows: Hildreth's cyclic projections, :func:`solvers.rehline.xi_block` from
``xi = 0``). The certificate is ``P(beta) - D(mu)``, computed term by term
(:func:`solvers.rehline.evaluate`), and bounds ``P(beta) - P*`` for that feasible
``beta``; the trace's ``objective`` is ``P(beta)``, and ``beta`` is the iterate reported.
Rows after the first also carry ``complementarity`` (the barrier parameter ``mu``) and
``step_length`` (the fraction of the Newton step taken).

Settings: ``gap`` (absolute or relative duality gap, as for ``rehline``) and ``feas_tol``
(largest constraint violation accepted at convergence). When float64 cannot resolve a
smaller gap (the barrier parameter has fallen below the rounding level of the objective,
or the step length collapses), the run ends as ``stalled``, reporting the best certified
point it saw.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from ermviz.base import Method, MethodSpec, Solver, StepRuleSpec, methods_from
from ermviz.errors import SettingError
from ermviz.families.lazy import kernel_module
from ermviz.families.plq.certificate import (
    CERTIFICATE_SETTINGS,
    BestPoint,
    GapReading,
    end_row_values,
    eval_cpu_share,
    gap_status,
    read_gap,
)
from ermviz.families.plq.packing import (
    constraint_kind,
    kernel_csr32,
    kernel_rows,
    kernel_type_key,
    pack_pieces,
)
from ermviz.families.plq.problem import PlqProblem
from ermviz.settings import with_defaults
from solvers.tags import (
    BASE_COLUMNS,
    STATUS_CONVERGED,
    STATUS_MAX_ITER,
    STATUS_RUNNING,
    STATUS_STALLED,
    STEP_NEWTON,
    STEP_NONE,
)

ipm = kernel_module("solvers.plq_ipm", globals())
linalg = kernel_module("solvers.linalg", globals())
kern = kernel_module("solvers.rehline", globals())

REFERENCE = (
    "Mehrotra (1992), On the implementation of a primal-dual interior point method, "
    "SIAM J. Optim.; Ferris & Munson (2002), Interior-point methods for massive support "
    "vector machines, SIAM J. Optim.; Gertz & Wright (2003), Object-oriented software for "
    "quadratic programming, ACM TOMS"
)

#: The d x d system is formed and factored densely up to this many features.
MAX_DENSE_D = 6000
#: Wide data: the m x m n-side system (m dual variables) replaces the d x d one when m < d
#: and d exceeds this (a d x d factor then costs more than an m x m one; below it the
#: d-side form, whose free-set split is the better tested path, is kept).
NSIDE_MIN_D = 1000
#: The n-side system is formed and factored densely up to this many dual variables.
MAX_NSIDE_M = 6000
#: The free set F of the split Newton solve holds at most max(MIN_FREE_SET, FREE_PER_D d)
#: variables. Its QR factor costs O((d + F) F^2) a step: F = max(200, 2 d) was most of a
#: step on small data (raw breast-cancer 5 of 6 ms) and 7x the rest on w1a (d = 300,
#: smoothed hinge), while max(20, d) gave the same iterates (iteration counts, objectives
#: to 1e-10) on issue 20's thirteen cases and on w1a, a9a and w7a with free duals.
MIN_FREE_SET = 20
FREE_PER_D = 1.0
#: Consecutive iterations with a step shorter than this end the run as stalled.
MIN_STEP = 1e-8

IPM_SETTINGS = CERTIFICATE_SETTINGS

STEP_RULES: dict[str, StepRuleSpec] = {
    "newton": StepRuleSpec(
        name="newton",
        title="Mehrotra predictor-corrector Newton step (fraction to the boundary)",
        settings=(),
        reference=REFERENCE,
    ),
}

RECORD_COLUMNS = (
    *BASE_COLUMNS,
    "dual_objective",
    "infeasibility",
    "complementarity",
    "step_length",
)

LOADED_KERNEL_TYPES: set[tuple] = set()


class PlqIpmSolver(Solver, Method):
    """Method ``ipm``: primal-dual interior-point method (Mehrotra 1992; Ferris & Munson
    2002; Gertz & Wright 2003) on a :class:`PlqProblem` (module docstring).

    Parameters
    ----------
    problem : PlqProblem
    step : str
        ``"newton"``.
    settings : dict
        Validated method settings (:data:`IPM_SETTINGS`).
    tol : float
        Stop when the certificate is at most ``tol`` (and the infeasibility at most
        ``feas_tol``).
    """

    name = "ipm"
    title = "primal-dual interior-point method (Mehrotra), d x d Newton systems"
    family = "rehline"
    problems = (PlqProblem.name,)
    step_rules = ("newton",)
    settings = IPM_SETTINGS
    reference = REFERENCE
    default_step = "newton"

    columns = RECORD_COLUMNS
    certificate_kind = "duality_gap"

    def __init__(
        self,
        problem: PlqProblem,
        step: str = "newton",
        settings: dict[str, Any] | None = None,
        tol: float = 1e-6,
    ) -> None:
        # Resolved by the registry (resolve_method): trusted here.
        settings = with_defaults(IPM_SETTINGS, settings or {})
        self.problem = pb = problem
        m_duals = pb.K + pb.n * (pb.L + pb.H) + 2 * pb.l1w.shape[0]
        self.nside = bool(m_duals < pb.d and pb.d > NSIDE_MIN_D and m_duals <= MAX_NSIDE_M)
        if pb.d > MAX_DENSE_D and not self.nside:
            raise SettingError(
                f"ipm factors a dense {pb.d} x {pb.d} Newton matrix (at most {MAX_DENSE_D} "
                f"features), or, for wide data, an m x m one over the m = {m_duals} dual "
                f"variables (at most {MAX_NSIDE_M}, and fewer than the features); use "
                "--method rehline for this problem"
            )
        self.tol = float(tol)
        self.relative = settings["gap"] == "relative"
        # The trace and the summary say which gap the certificate column holds.
        self.certificate_kind = "rel_duality_gap" if self.relative else "duality_gap"
        self.feas_tol = float(settings["feas_tol"])
        n, d, K, L, H = pb.n, pb.d, pb.K, pb.L, pb.H
        nl1 = pb.l1w.shape[0]
        self._X = kernel_rows(pb.X)
        self._A = kernel_csr32(pb.A)
        self._b = np.ascontiguousarray(pb.b, dtype=np.float64)
        self._asq = np.ascontiguousarray(pb.asq, dtype=np.float64)
        self._U = np.ascontiguousarray(pb.U, dtype=np.float64)
        self._S = np.ascontiguousarray(pb.S, dtype=np.float64)
        self._l1w = np.ascontiguousarray(pb.l1w, dtype=np.float64)
        self._pieces = pack_pieces(pb, self._X)
        self._data = kern.PlqData(  # the certificate's struct (solvers.plq_state)
            self._X, *self._pieces, self._l1w, kern.PlqRows(self._A, self._b, self._asq)
        )
        self._kind = constraint_kind(pb.A, pb.b)
        m = K + n * (L + H) + 2 * nl1
        self._off = (K, K + n * L, K + n * (L + H))
        hi = np.concatenate([np.full(K, np.inf), np.ones(n * L), pb.tau.ravel(), np.ones(2 * nl1)])
        self._hi = hi
        self._dg = np.concatenate([np.zeros(K + n * L), np.ones(n * H), np.zeros(2 * nl1)])
        self._cost = np.concatenate([pb.b, -pb.V.ravel(), -pb.T.ravel(), np.zeros(2 * nl1)])
        vkind = np.where(np.isinf(hi), ipm.V_LOWER, ipm.V_BOX).astype(np.int8)
        vkind[hi <= 0.0] = ipm.V_FIXED
        self._vkind = vkind
        self.mu = np.zeros(m)
        self.su = np.zeros(m)
        self.zl = np.zeros(m)
        self.zu = np.zeros(m)
        self._wm = np.zeros((ipm.N_WM, m))
        self._wd = np.zeros((ipm.N_WD, d))
        self._bn2 = self._column_norms()
        if self.nside:
            self._M = self._btb()  # constant: only the diagonal D changes
            nfree, size = 0, m
            self._Y = np.zeros((1, 1))
        else:
            self._M = np.zeros((d, d))
            nfree, size = int(min(m, max(MIN_FREE_SET, FREE_PER_D * d))), d
            self._Y = np.zeros((n, d)) if isinstance(self._X, np.ndarray) else np.zeros((1, 1))
        self._sysf = _system_arrays(size, d, nfree)
        self._sysi = np.zeros(1 + nfree, dtype=np.int64)
        self._fstate = np.zeros(ipm.N_FSTATE)
        self.beta_var = np.zeros(d)  # the primal iterate of the method
        self.beta_mu = np.zeros(d)  # B mu
        self._rp = np.zeros(d)
        # The kernels' workspace structs (solvers.plq_state): the same arrays, grouped.
        self._B = ipm.BMatrix(self._X, self._A, self._U, self._S, self._l1w)
        self._qp = ipm.BoxQP(self._dg, self._cost, self._vkind, self._bn2)
        self._point = ipm.IpmPoint(self.beta_var, self.mu, self.su, self.zl, self.zu)
        self._work = ipm.IpmWork(
            self.beta_mu,
            self._rp,
            self._wm,
            self._wd,
            self._M,
            self._Y,
            self._sysf,
            self._sysi,
            self._fstate,
        )
        self.beta = np.zeros(d)  # the reported point: beta_var made feasible
        self._proj_xi = np.zeros(K)
        self._proj_buf = np.zeros(4 * (K + 1) + 5)
        self._eval = np.zeros(kern.N_EVAL)
        self._rec = np.empty((64, len(self.columns)))
        self._k = 0
        self._short_steps = 0
        self._last = (math.nan, math.nan)  # complementarity, step length of the last step
        self.best = BestPoint(self.feas_tol)
        self._stall_message = ""
        key = (kernel_type_key(self._X), kernel_type_key(self._A))
        if key not in LOADED_KERNEL_TYPES:
            LOADED_KERNEL_TYPES.add(key)
            self._warm_up()
        self._start()

    # -- set-up ----------------------------------------------------------------------------
    def _column_norms(self) -> np.ndarray:
        """``||b_j||^2`` for every dual variable (layout of :func:`solvers.plq_ipm.bmul`)."""
        pb = self.problem
        q = self._pieces[0][:, 0]  # ||x_i||^2
        return (
            np.concatenate(
                [
                    self._asq,
                    (self._U**2 * q[:, None]).ravel(),
                    (self._S**2 * q[:, None]).ravel(),
                    np.repeat(self._l1w**2, 2),
                ]
            )
            if pb.n
            else np.zeros(0)
        )

    def _btb(self) -> np.ndarray:
        """``B^T B`` (m, m), dense, from a sparse ``B^T`` in the variable layout of
        :func:`solvers.plq_ipm.bmul` (rows: constraint duals, sample duals sample-major,
        l1 pairs)."""
        pb = self.problem
        n, L, H = pb.n, pb.L, pb.H
        X = sp.csr_matrix(pb.X)
        # Row i * (L + H) + j of R is -U[i, j] x_i (j < L), then -S[i, j - L] x_i.
        coef = -np.hstack([pb.U, pb.S]).ravel()
        R = sp.diags(coef) @ X[np.repeat(np.arange(n), L + H)]
        base = np.arange(n)[:, None] * (L + H)
        lam = R[(base + np.arange(L)).ravel()]
        gam = R[(base + L + np.arange(H)).ravel()]
        w = pb.l1w
        k = w.shape[0]
        l1 = sp.csr_matrix(
            (np.column_stack([-w, w]).ravel(), (np.arange(2 * k), np.repeat(np.arange(k), 2))),
            shape=(2 * k, pb.d),
        )
        Bt = sp.vstack([sp.csr_matrix(pb.A), lam, gam, l1]).tocsr()
        return np.ascontiguousarray((Bt @ Bt.T).toarray())

    def _warm_up(self) -> None:
        """Compile (or load from numba's cache) the kernels on a zero-sample copy, so that
        solver time excludes compilation."""
        X0 = self._X[:0] if isinstance(self._X, np.ndarray) else _empty_rows(self._X)
        d = self.problem.d
        # One benign constraint row with the real index types: the real rows may be
        # ill-conditioned, and compiling needs only the types.
        data, indices, indptr = self._A
        A0 = tuple(  # read-only, as every kernel matrix (solvers.linalg): the same types
            linalg.read_only(a)
            for a in (
                np.ones(1, dtype=data.dtype),
                np.zeros(1, dtype=indices.dtype),
                np.array([0, 1], dtype=indptr.dtype),
            )
        )
        m = 1
        U0, S0 = self._U[:0], self._S[:0]
        vk = np.full(m, ipm.V_LOWER, dtype=np.int8)
        mu = np.ones(m)
        sysf = _system_arrays(m, d, 0)
        ipm.iterate(
            ipm.BMatrix(X0, A0, U0, S0, self._l1w[:0]),
            ipm.BoxQP(np.zeros(m), np.zeros(m), vk, np.ones(m)),
            ipm.IpmPoint(np.zeros(d), mu, np.ones(m), np.ones(m), np.ones(m)),
            ipm.IpmWork(
                np.zeros(d),
                np.zeros(d),
                np.zeros((ipm.N_WM, max(m, 1))),
                np.zeros((ipm.N_WD, d)),
                np.ones((m, m)),  # B^T B of the one constraint row
                self._Y[:0] if isinstance(self._X, np.ndarray) else self._Y,
                sysf,
                np.zeros(1, dtype=np.int64),
                np.zeros(ipm.N_FSTATE),
            ),
            True,  # the m x m path: no d x d factor on wide data; both paths compile
        )
        PL, PH = self._pieces
        rows = self._data.rows
        empty = self._data._replace(
            PL=PL[:0], PH=PH[:0], l1w=self._l1w[:0], rows=rows._replace(b=rows.b[:0])
        )
        duals = kern.PlqDuals(
            np.zeros(d),
            self.mu[:0],
            self.mu[:0].reshape(0, self.problem.L),
            self.mu[:0].reshape(0, 2),
            self.mu[:0].reshape(0, self.problem.H),
        )
        kern.evaluate_sized(empty, np.zeros(d), duals, np.zeros(kern.N_EVAL))

    def _start(self) -> None:
        """The start: ``beta = 0`` (a sane primal point whatever the scale of the data,
        where ``B mu`` at a mid-box ``mu`` is of the order of ``sum_i ||x_i||``), duals
        mid-box (``max(t, 0) + 1`` for a ReHU dual without an upper bound, 1 for a
        constraint dual), multipliers from the gradient there shifted by 1 so that every one
        is positive (Mehrotra's heuristic for the slack/multiplier pairs). At ``beta = 0``
        the gradient is ``Dg mu + c``: the loss parameters, not the features, set the
        scale of the start."""
        hi, vkind = self._hi, self._vkind
        box = vkind == ipm.V_BOX
        lower = vkind == ipm.V_LOWER
        self.beta_var[:] = 0.0
        self.mu[:] = 0.0
        self.mu[box] = 0.5 * hi[box]
        self.mu[lower] = np.where(
            self._dg[lower] > 0.0, np.maximum(-self._cost[lower], 0.0) + 1.0, 1.0
        )
        self.su[:] = 0.0
        self.su[box] = hi[box] - self.mu[box]
        grad = self._dg * self.mu + self._cost
        free = vkind != ipm.V_FIXED
        shift = 1.0
        self.zl[:] = 0.0
        self.zu[:] = 0.0
        self.zl[free] = np.maximum(grad[free], 0.0) + shift
        self.zu[box] = np.maximum(-grad[box], 0.0) + shift

    # -- the primal point ------------------------------------------------------------------
    def _feasible(self, beta_mu: np.ndarray) -> np.ndarray:
        """``beta_mu`` projected onto ``{A beta + b >= 0}`` when it violates a row."""
        pb = self.problem
        if pb.K == 0:
            return beta_mu
        r = np.asarray(pb.A @ beta_mu).ravel() + pb.b
        if r.min() >= 0.0:
            return beta_mu
        beta = beta_mu.copy()
        self._proj_xi[:] = 0.0
        scale = float(beta @ beta) + 1.0
        kern.xi_block(
            self._data.rows,
            beta,
            self._proj_xi,
            self._kind,
            kern.XI_EXACT_SWEEPS * 5,
            1e-32 * scale,
            self._proj_buf,
        )
        return beta

    def _evaluate(self) -> GapReading:
        """The certificate of the current iterate: ``beta`` (the primal iterate made
        feasible) against the dual point ``mu``."""
        pb = self.problem
        K, o_h, o_1 = self._off
        mu = self.mu
        ipm.bmul(self._B, mu, self.beta_mu)
        self.beta = self._feasible(self.beta_var)
        duals = kern.PlqDuals(
            self.beta_mu,
            mu[:K],
            mu[K:o_h].reshape(pb.n, pb.L),
            mu[o_1:].reshape(pb.l1w.shape[0], 2),
            mu[o_h:o_1].reshape(pb.n, pb.H),
        )
        kern.evaluate_sized(self._data, self.beta, duals, self._eval)
        return read_gap(self._eval, self.relative)

    def _interior_count(self) -> int:
        """Dual variables the method sees strictly inside their box (support vectors and
        the like): the slack exceeds its multiplier on both sides."""
        free = self._vkind != ipm.V_FIXED
        inside = (self.mu > self.zl) & free
        box = self._vkind == ipm.V_BOX
        inside[box] &= self.su[box] > self.zu[box]
        return int(inside.sum())

    # -- the runner's interface ----------------------------------------------------------------
    def advance(self, max_rows: int, stop_at: int) -> tuple[np.ndarray, int]:
        with eval_cpu_share(self):  # the evaluations' CPU time, two clock reads a call
            return self._rows(max_rows, stop_at)

    def _rows(self, max_rows: int, stop_at: int) -> tuple[np.ndarray, int]:
        if max_rows > self._rec.shape[0]:
            self._rec = np.empty((max(max_rows, 2 * self._rec.shape[0]), len(self.columns)))
        rec = self._rec
        for row in range(max_rows):
            k = self._k
            t0 = time.perf_counter()
            reading = self._evaluate()
            self.eval_seconds += time.perf_counter() - t0
            self.best.offer(reading, k, self.beta)
            comp, alpha = self._last
            status, note = gap_status(reading, self.tol, self.feas_tol)
            if status == STATUS_RUNNING:
                if self._stall_message:
                    status, note = STATUS_STALLED, self._stall_message
                elif k >= stop_at:
                    status = STATUS_MAX_ITER
            if status != STATUS_RUNNING:
                if status != STATUS_CONVERGED:
                    final = end_row_values(self.best, reading)
                    if final is not reading:
                        self.beta = self.best.beta.copy()
                        note = "; ".join(
                            t
                            for t in (
                                note,
                                f"reporting the best certified point, from iteration "
                                f"{self.best.iteration} (certificate {final.certificate:.3g})",
                            )
                            if t
                        )
                        reading = final
                self.end_note = note
                rec[row] = (
                    k,
                    reading.primal,
                    reading.certificate,
                    0.0,
                    STEP_NONE,
                    self._interior_count(),
                    reading.dual,
                    reading.infeasibility,
                    comp,
                    alpha,
                )
                return rec[: row + 1], status
            beta_before = self.beta_var.copy()
            try:
                self._step()
            except np.linalg.LinAlgError as exc:
                self._stall_message = f"the Newton matrix could not be factored ({exc})"
            step = float(np.linalg.norm(self.beta_var - beta_before))
            rec[row] = (
                k,
                reading.primal,
                reading.certificate,
                step,
                STEP_NEWTON,
                self._interior_count(),
                reading.dual,
                reading.infeasibility,
                comp,
                alpha,
            )
            self._k = k + 1
        return rec[:max_rows], STATUS_RUNNING

    def _step(self) -> None:
        f = self._fstate
        ipm.iterate(self._B, self._qp, self._point, self._work, self.nside)
        self._last = (float(f[ipm.F_MU]), float(f[ipm.F_ALPHA]))
        if not (np.isfinite(self.mu).all() and np.isfinite(self.zl).all()):
            self._stall_message = "the Newton step produced NaN/inf"
            return
        if f[ipm.F_ALPHA] < MIN_STEP:
            self._short_steps += 1
            if self._short_steps >= 3:
                self._stall_message = (
                    f"the step length stayed below {MIN_STEP:g} for 3 iterations "
                    "(the Newton direction is no longer accurate in float64)"
                )
        else:
            self._short_steps = 0

    @property
    def stall_message(self) -> str:
        """Why the run stalled (empty unless it did)."""
        return self._stall_message

    def iterate(self) -> np.ndarray:
        return self.beta.copy()

    @property
    def iteration(self) -> int:
        return self._k


def _system_arrays(size: int, d: int, nfree: int) -> tuple[np.ndarray, ...]:
    """Factor storage of :func:`solvers.plq_ipm.iterate`: ``(Lc (size, size), scale (size,),
    Bf (nfree, d), C (nfree, d), LF (nfree, nfree), scaleF (nfree,))``."""
    return (
        np.zeros((size, size)),
        np.zeros(size),
        np.zeros((nfree, d)),
        np.zeros((nfree, d)),
        np.zeros((nfree, nfree)),
        np.zeros(nfree),
    )


def _empty_rows(X: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple:
    data, indices, indptr = X
    return data[:0], indices[:0], indptr[:1]


METHODS: dict[str, MethodSpec] = methods_from(PlqIpmSolver)
