"""Method ``rehline`` (step rule ``cd``, exact coordinate minimization)
--------------------------------------------------------------------
The coordinate updates of ALGORITHMS.md D.4 with ``beta`` maintained (kernels in
:mod:`solvers.rehline`); one epoch = all ``xi``, then all ``lambda`` (fake l1 samples after
the real ones), then all ``gamma`` (D.5). Settings:

* ``shrink`` (default on, as in the reference code): working-set shrinking (D.5);
* ``order``: cyclic or random permutation per epoch; ``auto`` = random with shrinking,
  cyclic without (the reference code's rule); ``seed`` seeds the permutations;
* ``start``: ``zero`` (all duals 0, ``beta = 0``; the start of the installed ``rehline``
  0.1.4 package, whose cyclic iterates ours reproduce to rounding) or ``legacy``
  (``xi = 1, Lambda = 0.5, Gamma = min(tau/2, 1)``, ALGORITHMS.md D.4, the older reference
  code); any dual point through :meth:`ReHLineSolver.warm_start` (clipped into the boxes);
* ``gap``: ``tol`` applies to the absolute duality gap (default) or to the relative one;
  ``feas_tol``: largest constraint violation accepted at convergence;
* ``check_work``: one trace row (one certificate evaluation) per group of epochs worth at
  least this many full passes of coordinate updates (default 1). Without shrinking every
  epoch is a full pass, so there is one row per epoch; with shrinking, epochs over small
  working sets are grouped (``check_work=0`` gives one row per epoch always). The
  ``iteration`` column counts rows, ``epoch`` counts epochs.

Certificate and columns. The certificate is the duality gap ``P(beta) - D(mu)`` with
``D = -L`` the dual objective in maximization form (ALGORITHMS.md D.3), computed term by
term (no cancellation). Weak duality makes it an upper bound on ``P(beta) - P*`` at every
iterate, but it certifies ``beta`` only when ``beta`` is feasible: with constraints the
maintained ``beta`` is feasible only in the limit. The certificate column therefore holds
``gap + sum_k xi_k max(0, -(a_k^T beta + b_k))`` (never negative, equal to the gap when
``beta`` is feasible, still an upper bound on ``P(beta) - P*``) and the column
``infeasibility`` holds ``max_k max(0, -(a_k^T beta + b_k))``; the run converges when the
certificate is at most ``tol`` **and** the infeasibility at most ``feas_tol`` (so a
converged ``beta`` is ``feas_tol``-feasible and within ``tol`` of ``P*`` in objective).
With ``gap=relative`` the certificate column is divided by ``D`` when ``D > 0`` (by
``|P|`` when ``P < 0``), so it bounds the relative suboptimality ``(P(beta) - P*) / |P*|``;
when ``D <= 0 <= P`` (first rows only) it is divided by ``max(|P|, |D|)`` and is not a bound;
when ``P*`` may be 0 use the absolute gap. The absolute gap is always
``objective - dual_objective`` (for feasible ``beta``). Extra columns: ``dual_objective``
(``D``, a lower bound on ``P*`` at every row, for the primal/dual curves), ``epoch``,
``infeasibility`` and ``coord_updates`` (cumulative coordinate visits, the work measure
under shrinking). ``step_size`` is ``||beta_{k+1} - beta_k||_2`` over the row's epochs and
``active_size`` the number of coordinates they visited. Evaluating the certificate (one pass
over the data per row) is not needed by the method and is reported through
``eval_seconds``, so it is excluded from solver time (the trace's ``time_s``).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ermviz.base import Method, MethodSpec, Solver, StepRuleSpec, methods_from
from ermviz.errors import SettingError
from ermviz.families.lazy import kernel_module
from ermviz.families.plq.certificate import (
    CERTIFICATE_SETTINGS,
    MAG_FRESH,
    MAG_REUSE_MAX,
    BestPoint,
    GapReading,
    end_row_values,
    eval_cpu_share,
    gap_status,
    read_gap,
)
from ermviz.families.plq.losses import REFERENCE
from ermviz.families.plq.packing import (
    LOADED_KERNEL_TYPES,
    kernel_csr32,
    kernel_rows,
    kernel_type_key,
    pack_pieces,
    xi_schedule,
)
from ermviz.families.plq.problem import PlqProblem
from ermviz.families.scaling import scaling_notices as shared_scaling_notices
from ermviz.settings import Setting, with_defaults
from solvers.tags import (
    BASE_COLUMNS,
    STATUS_CONVERGED,
    STATUS_MAX_ITER,
    STATUS_RUNNING,
    STATUS_STALLED,
    STEP_CD,
    STEP_NONE,
)

kern = kernel_module("solvers.rehline", globals())


# ---- feature scales ---------------------------------------------------------------------
def scaling_notices(pb: PlqProblem) -> list[str]:
    """The scaling warning for rehline on ``pb`` (the shared check,
    :func:`ermviz.families.scaling.scaling_notices`, that ``PlqProblem.scaling`` declares)."""
    return shared_scaling_notices(pb, "rehline")


# ---- the method ------------------------------------------------------------------------
STEP_RULES: dict[str, StepRuleSpec] = {
    "cd": StepRuleSpec(
        name="cd", title="exact coordinate minimization", settings=(), reference=REFERENCE
    ),
}


REHLINE_SETTINGS = (
    Setting("shrink", "bool", True, "shrink the working sets (reference code's default)"),
    Setting(
        "order",
        "choice",
        "auto",
        "coordinate order in each block: cyclic, random (new permutation every epoch), "
        "auto = random with shrinking, cyclic without",
        choices=("auto", "cyclic", "random"),
    ),
    Setting("seed", "int", 0, "seed of the random permutations", low=0),
    *CERTIFICATE_SETTINGS,
    Setting(
        "xi_block",
        "choice",
        "interleaved",
        "constraint duals: interleaved (solved exactly at the start of each epoch and "
        "after every xi_every sample visits) or epoch (one coordinate sweep at the start "
        "of each epoch, the reference code's order)",
        choices=("interleaved", "epoch"),
    ),
    Setting(
        "xi_every",
        "int",
        0,
        "with constraints: solve the constraint duals' block after this many sample visits "
        "(0 = auto, from the relative costs of that block and of a sample visit)",
        low=0,
    ),
    Setting(
        "check_work",
        "float",
        1.0,
        "evaluate the certificate (one trace row) after epochs worth this many full passes "
        "of coordinate updates; 0 = after every epoch (matters only with shrinking)",
        low=0.0,
    ),
    Setting(
        "start",
        "choice",
        "zero",
        "initial duals: zero (beta = 0, as the rehline 0.1.4 package) or legacy "
        "(xi=1, Lambda=0.5, Gamma=min(tau/2,1), the older reference code)",
        choices=("zero", "legacy"),
    ),
)

RECORD_COLUMNS = (
    *BASE_COLUMNS,
    "dual_objective",
    "epoch",
    "infeasibility",
    "coord_updates",
)


class ReHLineSolver(Solver, Method):
    """Method ``rehline``: ReHLine coordinate descent (Dai & Qiu, NeurIPS 2023) on a
    :class:`PlqProblem` (see the module docstring).

    Parameters
    ----------
    problem : PlqProblem
    step : str
        ``"cd"``.
    settings : dict
        Validated method settings (:data:`REHLINE_SETTINGS`).
    tol : float
        Stop when the certificate is at most ``tol`` (and the infeasibility at most
        ``feas_tol``).
    warm_start : dict, optional
        Dual point to start from (keys ``xi``, ``Lambda``, ``Gamma``, ``l1``; shapes as
        :meth:`PlqProblem.initial_duals`); clipped into the boxes.
    """

    name = "rehline"
    title = "ReHLine: dual coordinate descent with beta maintained"
    family = "rehline"
    problems = (PlqProblem.name,)
    step_rules = ("cd",)
    settings = REHLINE_SETTINGS
    reference = REFERENCE
    default_step = "cd"

    columns = RECORD_COLUMNS
    certificate_kind = "duality_gap"

    def __init__(
        self,
        problem: PlqProblem,
        step: str = "cd",
        settings: dict[str, Any] | None = None,
        tol: float = 1e-6,
        warm_start: dict[str, Any] | None = None,
    ) -> None:
        # Resolved by the registry (resolve_method): trusted here.
        settings = with_defaults(REHLINE_SETTINGS, settings or {})
        self.problem = pb = problem
        self.tol = float(tol)
        self.relative = settings["gap"] == "relative"
        # The trace and the summary say which gap the certificate column holds.
        self.certificate_kind = "rel_duality_gap" if self.relative else "duality_gap"
        self.feas_tol = float(settings["feas_tol"])
        self._X = kernel_rows(pb.X)
        self._A = kernel_csr32(pb.A)
        self._b = np.ascontiguousarray(pb.b, dtype=np.float64)
        self._asq = np.ascontiguousarray(pb.asq, dtype=np.float64)
        self._pieces = pack_pieces(pb, self._X)
        self._l1w = np.ascontiguousarray(pb.l1w, dtype=np.float64)
        n, d = pb.n, pb.d
        nl1 = self._l1w.shape[0]
        self.istate = np.zeros(kern.N_ISTATE, dtype=np.int64)
        self.fstate = np.zeros(kern.N_FSTATE)
        shrink = bool(settings["shrink"])
        order = settings["order"]
        self.istate[kern.I_SHRINK] = int(shrink)
        self.istate[kern.I_RANDOM] = int(order == "random" or (order == "auto" and shrink))
        if settings["xi_block"] == "epoch":
            # The reference code's schedule (ALGORITHMS.md D.5): one sweep per epoch.
            kind, every, sweeps, exact = kern.XI_ROWS, 0, 1, 0
        else:
            kind, every, sweeps = xi_schedule(pb.A, pb.b, self._X, int(settings["xi_every"]))
            exact = 1
        self.istate[kern.I_XI_KIND] = kind
        self.istate[kern.I_XI_EVERY] = every
        self.istate[kern.I_XI_SWEEPS] = sweeps
        self.istate[kern.I_XI_EXACT] = exact
        seed = (int(settings["seed"]) * 0x9E3779B97F4A7C15 + 1) % 2**64
        self.rng = np.array([seed], dtype=np.uint64)
        lam_idx = [np.arange(n, dtype=np.int64)] if pb.L else []
        if nl1:
            lam_idx.append(n + np.arange(nl1, dtype=np.int64))
        self._idx_lam = np.concatenate(lam_idx) if lam_idx else np.zeros(0, dtype=np.int64)
        self._idx_gam = np.arange(n if pb.H else 0, dtype=np.int64)
        self._buf = np.zeros(4 * (pb.K + 1) + 5)
        self._reset_working_sets()
        self.beta = np.zeros(d)
        self.xi = np.zeros(pb.K)
        self.lam = np.zeros((n, pb.L))
        self.lam1 = np.zeros((nl1, 2))
        self.gam = np.zeros((n, pb.H))
        self._beta_start = np.zeros(d)
        # The kernels' workspace structs (solvers.plq_state): the same arrays, grouped.
        PL, PH = self._pieces
        self._data = kern.PlqData(
            self._X, PL, PH, self._l1w, kern.PlqRows(self._A, self._b, self._asq)
        )
        self._duals = kern.PlqDuals(self.beta, self.xi, self.lam, self.lam1, self.gam)
        self._work = kern.CdWork(
            self._idx_lam,
            self._idx_gam,
            self._buf,
            self._beta_start,
            self.istate,
            self.fstate,
            self.rng,
        )
        total = pb.K + self._idx_lam.shape[0] + self._idx_gam.shape[0]
        self._min_visits = math.ceil(float(settings["check_work"]) * total)
        self._k = 0
        self._eval = np.zeros(kern.N_EVAL)
        self._mag = -1.0  # size of the gap's terms at the last sized evaluation
        self._mag_reused = 0  # evaluations since then
        self._last_reading: GapReading | None = None
        self._reading_before: GapReading | None = None  # the one before that
        self._rec = np.empty((256, len(self.columns)))
        self._start = settings["start"]
        self._at_origin = True  # beta = 0 and every dual 0, until a step or a warm start
        self._fixed_point = False
        self.best = BestPoint(self.feas_tol)
        self._reported: np.ndarray | None = None
        if warm_start is not None or self._start != "zero":
            self._set_duals(pb.initial_duals(self._start) if warm_start is None else warm_start)
        # (the zero start is the state as allocated: all duals 0, beta = 0)
        key = (kernel_type_key(self._X), kernel_type_key(self._A))
        if key in LOADED_KERNEL_TYPES:
            return
        LOADED_KERNEL_TYPES.add(key)
        # Compile (or load from numba's cache) now, so solver time excludes compilation:
        # an epoch over empty working sets and no constraint rows (which reads the state
        # and writes only the scratch, the integer and float state and the generator:
        # copies of those), and an
        # evaluation over no samples (the same argument types, none of the work).
        dummy_i = self.istate.copy()
        dummy_i[kern.I_N_LAM] = dummy_i[kern.I_N_GAM] = 0
        self._epochs(
            1,
            min_visits=0,
            work=self._work._replace(
                istate=dummy_i, fstate=self.fstate.copy(), rng=self.rng.copy()
            ),
            warmup=True,
        )
        empty = self._data._replace(
            PL=PL[:0], PH=PH[:0], l1w=self._l1w[:0], rows=self._data.rows._replace(b=self._b[:0])
        )
        for evaluate in (kern.evaluate, kern.evaluate_sized):
            evaluate(empty, self.beta, self._duals, np.zeros(kern.N_EVAL))

    # -- state ---------------------------------------------------------------------------
    def _reset_working_sets(self) -> None:
        kern.reset_shrinking(
            self.istate, self.fstate, self._idx_lam.shape[0], self._idx_gam.shape[0]
        )
        self.fstate[kern.F_EPS_SHRINK] = -1.0

    def _set_duals(self, duals: dict[str, Any]) -> None:
        self._at_origin = False
        pb = self.problem
        clipped = pb.clip_duals(duals)
        self.xi[:] = clipped["xi"]
        self.lam[:] = clipped["Lambda"].T
        self.gam[:] = clipped["Gamma"].T
        self.lam1[:] = clipped["l1"].T
        self.beta[:] = pb.beta_of(clipped)

    def warm_start(self, duals: dict[str, Any]) -> None:
        """Start from the dual point ``duals`` (clipped into its boxes); before the first
        step only. Keys: ``xi`` (K,), ``Lambda`` (L, n), ``Gamma`` (H, n), ``l1`` (2, d)."""
        if self.iteration > 0:
            raise SettingError("warm_start must be called before the first step")
        self._set_duals(duals)
        self._reset_working_sets()

    def duals(self) -> dict[str, np.ndarray]:
        """Copies of the dual variables, in the shapes :meth:`warm_start` takes."""
        return {
            "xi": self.xi.copy(),
            "Lambda": self.lam.T.copy(),
            "Gamma": self.gam.T.copy(),
            "l1": self.lam1.T.copy(),
        }

    # -- kernels -------------------------------------------------------------------------
    def _evaluate(self, decide: bool = False) -> GapReading:
        """The certificate of the current point. The size of its terms (``E_MAG``, for the
        rounding resolution; ~40 % of an evaluation on 8-feature data) is reused from the
        last sized evaluation while :data:`MAG_FRESH` times the resolution stays below both
        the certificate and ``tol``, for at most :data:`MAG_REUSE_MAX` evaluations in a
        row. A reading that would end the run, or lands near the resolution, or is asked
        for with ``decide`` (the caller ends the run on it), is sized afresh; at the zero
        start the size is the primal value, without the sized kernel, and the next
        evaluation is sized."""
        prev, before = self._last_reading, self._reading_before
        # The next certificate, extrapolated geometrically from the last two: when it is
        # expected at tol, this evaluation is sized at once rather than evaluated twice.
        end_expected = (
            prev is not None
            and before is not None
            and 0.0 < prev.certificate < before.certificate
            and prev.certificate * (prev.certificate / before.certificate) <= self.tol
        )
        reuse = (
            not decide
            and not end_expected
            and prev is not None
            and self._mag >= 0.0
            and self._mag_reused < MAG_REUSE_MAX
            and MAG_FRESH * prev.resolution <= min(prev.certificate, self.tol)
        )
        args = (self._data, self.beta, self._duals, self._eval)
        reading = None
        if self._at_origin:
            # beta = 0 and every dual 0 (the zero start): every size term but the losses
            # vanishes, so the size is the primal value, exactly as the sized kernel sums it.
            # It says nothing of the sizes to come (the duals' terms grow from 0), so the
            # next evaluation is sized.
            kern.evaluate(*args)
            self._eval[kern.E_MAG] = self._eval[kern.E_PRIMAL]
            self._mag = -1.0
            reading = read_gap(self._eval, self.relative)
        elif reuse:
            kern.evaluate(*args)
            self._eval[kern.E_MAG] = self._mag
            reading = read_gap(self._eval, self.relative)
            near = MAG_FRESH * reading.resolution > min(reading.certificate, self.tol)
            ends = gap_status(reading, self.tol, self.feas_tol)[0] != STATUS_RUNNING
            if near or ends:
                reading = None
            else:
                self._mag_reused += 1
        if reading is None:
            kern.evaluate_sized(*args)
            self._mag = float(self._eval[kern.E_MAG])
            self._mag_reused = 0
            reading = read_gap(self._eval, self.relative)
        self._reading_before, self._last_reading = prev, reading
        return reading

    def _epochs(
        self,
        max_epochs: int = 2**62,
        *,
        min_visits: int | None = None,
        work: Any = None,
        warmup: bool = False,
    ) -> None:
        """One kernel call on the solver's state (the warm-up passes a ``work`` with copies
        of the state to leave it be, and no constraint rows, so that the xi block does not
        run either)."""
        self._at_origin = self._at_origin and warmup
        data, duals = self._data, self._duals
        if warmup:
            rows = data.rows
            data = data._replace(rows=rows._replace(b=rows.b[:0], asq=rows.asq[:0]))
            duals = duals._replace(xi=duals.xi[:0])
        kern.epochs(
            data,
            duals,
            self._work if work is None else work,
            self._min_visits if min_visits is None else min_visits,
            max_epochs,
        )

    def run_epochs(self, n_epochs: int) -> None:
        """Run exactly ``n_epochs`` epochs in one kernel call, without recording rows or
        evaluating the certificate (the benchmark's time-to-target runs; the trace-driven
        path is :meth:`advance`). ``iteration`` does not move; ``istate[I_K]`` does."""
        if n_epochs > 0:
            saved = self._min_visits
            self._min_visits = np.iinfo(np.int64).max
            try:
                self._epochs(int(n_epochs))
            finally:
                self._min_visits = saved

    def _working_set_size(self) -> int:
        return int(self.problem.K + self.istate[kern.I_N_LAM] + self.istate[kern.I_N_GAM])

    def advance(self, max_rows: int, stop_at: int) -> tuple[np.ndarray, int]:
        with eval_cpu_share(self):  # the evaluations' CPU time, two clock reads a call
            return self._rows(max_rows, stop_at)

    def _rows(self, max_rows: int, stop_at: int) -> tuple[np.ndarray, int]:
        if max_rows > self._rec.shape[0]:
            self._rec = np.empty((max(max_rows, 2 * self._rec.shape[0]), len(self.columns)))
        rec = self._rec
        ist = self.istate
        for row in range(max_rows):
            k = self._k
            t0 = time.perf_counter()
            reading = self._evaluate(decide=self._fixed_point or k >= stop_at)
            self.eval_seconds += time.perf_counter() - t0
            self.best.offer(reading, k, self.beta)
            updates = float(ist[kern.I_UPDATES])
            status, note = gap_status(reading, self.tol, self.feas_tol)
            if status == STATUS_RUNNING:
                if self._fixed_point:
                    status = STATUS_STALLED
                    note = (
                        f"a full epoch changed no dual variable at certificate "
                        f"{reading.certificate:.3g}: a fixed point of coordinate descent in "
                        "float64"
                    )
                elif k >= stop_at:
                    status = STATUS_MAX_ITER
            if status != STATUS_RUNNING:
                if status != STATUS_CONVERGED:
                    reading = self._end_on_best(reading, k)
                self.end_note = note or self.end_note
                rec[row] = (
                    k,
                    reading.primal,
                    reading.certificate,
                    0.0,
                    STEP_NONE,
                    self._working_set_size(),
                    reading.dual,
                    ist[kern.I_K],
                    reading.infeasibility,
                    updates,
                )
                ist[kern.I_STATUS] = status
                return rec[: row + 1], status
            epochs_before = int(ist[kern.I_K])
            self._epochs()
            # A full sweep that moved nothing is a fixed point of coordinate descent: if the
            # certificate is still above tol there, float64 cannot do better.
            self._fixed_point = bool(ist[kern.I_CHANGED] == 0 and ist[kern.I_FULL] == 1)
            rec[row] = (
                k,
                reading.primal,
                reading.certificate,
                self.fstate[kern.F_STEP],
                STEP_CD,
                ist[kern.I_VISITED],
                reading.dual,
                epochs_before,
                reading.infeasibility,
                updates,
            )
            self._k = k + 1
        ist[kern.I_STATUS] = STATUS_RUNNING
        return rec[:max_rows], STATUS_RUNNING

    def _end_on_best(self, reading: GapReading, k: int) -> GapReading:
        """Switch the reported point to the best certified one when it beats ``reading``."""
        final = end_row_values(self.best, reading)
        if final is not reading:
            self._reported = self.best.beta
            self.end_note = (
                f"reporting the best certified point, from iteration {self.best.iteration} "
                f"(certificate {final.certificate:.3g}; the last iterate's: "
                f"{reading.certificate:.3g})"
            )
        return final

    def iterate(self) -> np.ndarray:
        """The reported coefficients: the current ``beta``, or the best certified point
        when the run ended unconverged on a worse one."""
        if self._reported is not None:
            return self._reported.copy()
        return self.beta.copy()

    @property
    def iteration(self) -> int:
        return self._k


METHODS: dict[str, MethodSpec] = methods_from(ReHLineSolver)
