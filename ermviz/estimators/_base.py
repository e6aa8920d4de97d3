"""What every ermviz estimator shares: validate once, build the family's problem and
solver, advance it to ``tol`` in the caller's thread, report the certificate.

A fit is the CLI's run without the machinery a watcher needs: the data are validated once
(:func:`sklearn.utils.validation.validate_data`; a dense array is not copied when it is
already ``float64``, sparse input stays CSR and is not copied either), the method side is
resolved once (:func:`ermviz.registry.resolve_method`), the problem and its solver are built
(:func:`build_fit_solver`, where a fit first builds, and on a fresh install compiles, the
method's numba kernels), and :func:`drive` calls the solver's ``advance`` in large chunks,
keeping only the last record: no runner thread, no core gate, no trace. With
``keep_trace=True``, or through :meth:`SolverEstimator.prepare_run` (what
:func:`ermviz.app.live_fit` uses), the same solver runs under :class:`ermviz.runner.Run`
instead and ``trace_`` holds its trace, the CLI's ``--out`` schema.

Budgets are deterministic by default, as scikit-learn's: ``max_iter`` iterations (None: the
method's own budget, :data:`DEFAULT_MAX_ITER`); a wall-clock budget only when ``max_time``
is given. A fit that ends unconverged warns with a ``ConvergenceWarning`` naming the
certificate it reached and the fix; badly scaled features (the shared check of
:mod:`ermviz.families.scaling`) warn once per fit with a ``UserWarning`` naming
``StandardScaler``.
"""

from __future__ import annotations

import math
import time
import warnings
from abc import ABCMeta, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ermviz.errors import SettingError

if TYPE_CHECKING:
    from ermviz.base import Problem, Solver
    from ermviz.registry import ResolvedMethod
    from ermviz.runner import Run

#: Iterations a method gets when ``max_iter`` is None (others: :data:`FALLBACK_MAX_ITER`).
#: Second-order and CG methods converge in tens of iterations on data they suit;
#: ``rehline`` counts certificate checks, each after at least one pass of coordinate
#: updates (liblinear's ``max_iter=1000`` epochs); SMO steps two coordinates at a time,
#: so its budget grows with the rows (:func:`default_max_iter`).
DEFAULT_MAX_ITER: dict[str, int] = {
    "face-newton": 1000,
    "primal-newton": 1000,
    "rehline": 1000,
    "ipm": 200,
    "cg-reduced": 1000,
    "cg-two-system": 1000,
}
#: First-order methods (Frank-Wolfe variants, stochastic methods) when ``max_iter`` is None.
FALLBACK_MAX_ITER = 100_000
#: SMO steps per row of the data when ``max_iter`` is None (at least 10^4 steps).
SMO_STEPS_PER_ROW = 20
#: Rows asked of the solver per call when nobody watches and no time budget is set.
CHUNK_ROWS = 4096
#: :func:`drive`'s status for a fit ended by ``max_time`` (the runner's "max_time"; no
#: kernel status has this value).
_TIMED_OUT = -1

CERTIFICATE_WORDS = {
    "fw_gap": "Frank-Wolfe gap",
    "primal_dual_gap": "primal-dual gap",
    "duality_gap": "duality gap",
    "rel_duality_gap": "relative duality gap",
}


def default_max_iter(method: str, n_samples: int) -> int:
    """The iteration budget of ``method`` on ``n_samples`` rows when ``max_iter`` is None."""
    if method == "smo":
        return max(10_000, SMO_STEPS_PER_ROW * n_samples)
    return DEFAULT_MAX_ITER.get(method, FALLBACK_MAX_ITER)


@dataclass(frozen=True)
class Plan:
    """What one fit runs, from the estimator's parameters and the data's shape.

    Attributes
    ----------
    problem : str
        The registry's problem name.
    settings : dict
        Problem settings and method settings together (split by declaration, as the CLI's
        ``--set``).
    method : str
        A listed method (``"auto"`` already resolved by the estimator).
    step : str or None
        Step rule (None: the method's default).
    tol : float
        The tolerance handed to the solver, in the certificate's own units.
    """

    problem: str
    settings: dict[str, Any]
    method: str
    step: str | None
    tol: float


@dataclass
class Setup:
    """A fit ready to advance: the plan, its resolution, the problem and the solver."""

    plan: Plan
    resolved: ResolvedMethod
    problem: Problem
    solver: Solver
    max_iter: int
    dataset_name: str


@dataclass
class Outcome:
    """How a fit ended: status (the runner's names), message and the last record."""

    status: str
    message: str
    n_iter: int
    objective: float
    certificate: float
    time_s: float


def check_choice(owner: str, name: str, value: Any, choices: tuple[str, ...]) -> None:
    """One-line error naming ``owner.name`` and its choices when ``value`` is not one."""
    if value not in choices:
        raise SettingError(
            f"{owner}: {name}={value!r} is not one of its choices; choose one of: "
            f"{', '.join(map(str, choices))}"
        )


def build_fit_solver(problem: Problem, resolved: ResolvedMethod, tol: float) -> Solver:
    """The solver of ``resolved`` on ``problem``: where a fit first builds its method's
    numba kernels (the solvers load them from numba's cache, or compile them on a fresh
    install, in their constructors, so that solver time excludes compilation)."""
    from ermviz.registry import build_solver

    return build_solver(problem, resolved, tol=tol)


def drive(solver: Solver, max_iter: int, max_time: float | None) -> Outcome:
    """Advance ``solver`` until it converges, stalls or uses up ``max_iter`` iterations or
    ``max_time`` seconds of solver time, in the caller's thread, keeping only the last
    record. Solver time excludes certificate evaluations the method does not need itself
    (``Solver.eval_seconds``), as the runner counts it."""
    from solvers.tags import (
        KERNEL_STATUS_NAMES,
        STATUS_CONVERGED,
        STATUS_NONFINITE,
        STATUS_RUNNING,
    )

    cols = solver.columns
    i_obj, i_cert, i_it = (
        cols.index("objective"),
        cols.index("certificate"),
        cols.index("iteration"),
    )
    last: np.ndarray | None = None
    spent = 0.0
    rows = 1  # with a time budget, chunks grow from one row toward ~50 ms
    status = STATUS_RUNNING
    timed_out = False
    while status == STATUS_RUNNING:
        at = solver.iteration
        if max_time is not None and spent >= max_time:
            want, stop_at, timed_out = 1, at, True  # record the last iterate, no step
        elif max_time is None:
            want, stop_at = min(CHUNK_ROWS, max(1, max_iter - at + 1)), max_iter
        else:
            want, stop_at = min(rows, max(1, max_iter - at + 1)), max_iter
        e0 = solver.eval_seconds
        t0 = time.perf_counter()
        rec, status = solver.advance(want, stop_at)
        dt = max(time.perf_counter() - t0 - (solver.eval_seconds - e0), 0.0)
        spent += dt
        if rec.shape[0]:
            bad = ~np.isfinite(rec[:, i_obj]) | np.isnan(rec[:, i_cert])
            bad |= rec[:, i_cert] == -np.inf
            if bad.any():
                last, status = rec[int(np.argmax(bad))].copy(), STATUS_NONFINITE
                break
            last = rec[-1].copy()
        if timed_out and status not in (STATUS_CONVERGED, STATUS_NONFINITE):
            status = _TIMED_OUT
            break
        if max_time is not None and dt > 0:
            rows = int(min(max(rows * 0.05 / dt, 1), 4 * rows + 1, CHUNK_ROWS))
    if last is None:  # pragma: no cover - every solver records its start
        raise SettingError("the solver recorded no iterate")
    outcome = Outcome(
        status="max_time" if status == _TIMED_OUT else KERNEL_STATUS_NAMES.get(status, "error"),
        message="",
        n_iter=int(last[i_it]),
        objective=float(last[i_obj]),
        certificate=float(last[i_cert]),
        time_s=spent,
    )
    if status == STATUS_NONFINITE:
        outcome.status = "error"
        outcome.message = (
            f"the objective or certificate became NaN/inf at iteration {outcome.n_iter}; "
            "scale the features (e.g. sklearn.preprocessing.StandardScaler)"
        )
    elif status == _TIMED_OUT:
        outcome.message = f"reached max_time={max_time:g} s"
    elif status != STATUS_CONVERGED and getattr(solver, "end_note", ""):
        outcome.message = solver.end_note
    return outcome


class SolverEstimator(BaseEstimator, metaclass=ABCMeta):
    """Base of the ermviz estimators: ``fit`` validates once, builds the family's problem
    and solver and advances it to ``tol``; subclasses declare what to run
    (:meth:`_plan`) and what to keep (:meth:`_set_model`).

    Every subclass takes ``tol``, ``max_iter``, ``max_time``, ``warm_start``,
    ``keep_trace``, ``method``, ``step`` and ``method_settings`` (see any estimator's
    docstring) and sets, after ``fit``: ``n_iter_``, ``certificate_``,
    ``certificate_kind_``, ``objective_``, ``status_``, ``method_``, ``fit_time_`` and
    ``trace_``.

    A watcher (:func:`ermviz.app.live_fit`) calls :meth:`prepare_run`, runs the
    returned :class:`ermviz.runner.Run` (on a thread, reading its trace as it grows),
    then :meth:`finish_run`.
    """

    _classifier: ClassVar[bool] = False

    # -- what each estimator declares -----------------------------------------------------
    @abstractmethod
    def _plan(self, X: Any, y: np.ndarray) -> Plan:
        """The problem, method and tolerance of this fit (``X``, ``y`` validated)."""

    @abstractmethod
    def _set_model(self, problem: Any, x: np.ndarray) -> None:
        """The fitted attributes (``coef_``, ...) from the solver's final iterate ``x``."""

    def _warm_state(self, setup: Setup) -> Any:
        """What the next fit with ``warm_start=True`` starts from (default: the iterate)."""
        return setup.solver.iterate()

    def _warm_start(self, setup: Setup, state: Any) -> None:
        """Start ``setup.solver`` from ``state`` when the method and shapes allow it
        (default: a solver with ``warm_start(x)`` and an iterate of the same shape)."""
        start = getattr(setup.solver, "warm_start", None)
        if start is not None and np.shape(state) == np.shape(setup.solver.iterate()):
            start(state)

    # -- scikit-learn plumbing --------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _validate_params(self) -> None:
        """The parameters every estimator shares, checked once per fit (one-line errors
        naming the parameter and its allowed range)."""
        name = type(self).__name__
        tol = self.tol
        if not (isinstance(tol, int | float) and math.isfinite(tol) and tol > 0):
            raise SettingError(f"{name}: tol={tol!r} is out of range; allowed range (0, inf)")
        it = self.max_iter
        if it is not None and not (isinstance(it, int | np.integer) and 1 <= it < 2**62):
            raise SettingError(
                f"{name}: max_iter={it!r} is out of range; allowed: None (the method's own "
                "budget) or an integer >= 1"
            )
        mt = self.max_time
        if mt is not None and not (isinstance(mt, int | float) and mt > 0 and mt == mt):
            raise SettingError(
                f"{name}: max_time={mt!r} is out of range; allowed: None (no time budget) or "
                "seconds in (0, inf)"
            )
        for flag in ("warm_start", "keep_trace"):
            if not isinstance(getattr(self, flag), bool | np.bool_):
                raise SettingError(f"{name}: {flag}={getattr(self, flag)!r} must be True or False")
        if self.method_settings is not None and not isinstance(self.method_settings, dict):
            raise SettingError(
                f"{name}: method_settings must be a dict of settings (or None), got "
                f"{type(self.method_settings).__name__}"
            )

    def _validate_xy(self, X: Any, y: Any) -> tuple[Any, np.ndarray, str]:
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse="csr",
            dtype=np.float64,
            y_numeric=not self._classifier,
            ensure_min_samples=2,
        )
        if sp.issparse(X) and not isinstance(X, sp.csr_matrix):
            # A csr_array: the same arrays as a csr_matrix (the Dataset type), no copy.
            X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=X.shape, copy=False)
        if not self._classifier:
            return X, np.asarray(y, dtype=np.float64), "regression"
        check_classification_targets(y)
        # np.unique without return_inverse: a sort, not an argsort (3x faster on 4e4 labels).
        self.classes_ = np.unique(y)
        if len(self.classes_) != 2:
            raise ValueError(
                f"Only binary classification is supported. {type(self).__name__} got y with "
                f"{len(self.classes_)} class(es); give exactly two classes (or wrap it in "
                "sklearn.multiclass.OneVsRestClassifier)"
            )
        return X, np.where(y == self.classes_[1], 1.0, -1.0), "binary"

    # -- the fit ----------------------------------------------------------------------
    def _setup(self, X: Any, y: Any) -> Setup:
        """Validate the parameters and the data, build the problem and the solver (warm
        started when asked and possible), warn about badly scaled features."""
        from ermviz import compile_notice
        from ermviz.data.dataset import Dataset
        from ermviz.experiment import split_settings
        from ermviz.registry import build_problem, resolve_alias, resolve_method

        self._validate_params()
        X, y, task = self._validate_xy(X, y)
        plan = self._plan(X, y)
        method, step, given = resolve_alias(plan.method, plan.step, plan.settings, plan.problem)
        psettings, msettings = split_settings(plan.problem, method, step, given)
        resolved = resolve_method(method, step, plan.problem, msettings)  # before the data
        name = f"{type(self).__name__} data"
        # A first fit (nothing in numba's cache) says "compiling ..." once, on stderr.
        storage = "csr" if sp.issparse(X) else "dense"
        with compile_notice.announce(plan.problem, resolved.method, storage):
            # The caller's arrays as they are: a problem never writes into its dataset.
            dataset = Dataset(name, X, y, task, "array")
            problem = build_problem(plan.problem, dataset, **psettings)
            self._warn_setup(problem, resolved)
            solver = build_fit_solver(problem, resolved, plan.tol)
        max_iter = self.max_iter or default_max_iter(resolved.method, X.shape[0])
        setup = Setup(plan, resolved, problem, solver, int(max_iter), name)
        warm = getattr(self, "_warm", None)
        if self.warm_start and warm is not None and warm[0] == self._warm_key(setup):
            self._warm_start(setup, warm[1])
        return setup

    def _warm_key(self, setup: Setup) -> tuple:
        """What must not change between two fits for one to start from the other."""
        return (setup.plan.problem, setup.resolved.method, setup.solver.iterate().shape)

    def _warn_setup(self, problem: Problem, resolved: ResolvedMethod) -> None:
        """Badly scaled features (once per fit) and the method's own advice, as
        ``UserWarning``s."""
        from ermviz.families.scaling import scaling_issue

        name = type(self).__name__
        issue = scaling_issue(problem, resolved.method)
        if issue is not None:
            copes = issue.check.copes
            alternative = (
                f", or use method={copes!r}, which solves the problem as posed" if copes else ""
            )
            warnings.warn(
                f"{name}: the features are badly scaled for {issue.check.slow} "
                f"({issue.describe()}), which may need very many iterations; scale them "
                f"first, e.g. make_pipeline(StandardScaler(), {name}(...)) with "
                f"sklearn.preprocessing.StandardScaler{alternative}",
                UserWarning,
                stacklevel=4,
            )
        spec = resolved.spec
        for notice in spec.advise(problem) if spec.advise else ():
            warnings.warn(f"{name}: {notice}", UserWarning, stacklevel=4)

    def fit(self, X: Any, y: Any) -> SolverEstimator:
        """Fit on ``X`` (n_samples, n_features), dense or sparse (kept CSR), and targets
        ``y`` (n_samples,).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        if self.keep_trace:
            run = self.prepare_run(X, y)
            run.run()
            return self.finish_run(run)
        setup = self._setup(X, y)
        outcome = self._drive(setup)
        return self._finish(setup, outcome, None)

    def _drive(self, setup: Setup) -> Outcome:
        try:
            return drive(setup.solver, setup.max_iter, self.max_time)
        except SettingError:
            raise
        except Exception as exc:  # a solver's failure as one line, the cause chained
            text = " ".join(str(exc).split())
            raise SettingError(
                f"{type(self).__name__}.fit failed: {type(exc).__name__}: {text}"
            ) from exc

    def prepare_run(self, X: Any, y: Any) -> Run:
        """Validate, build the problem and the solver as :meth:`fit` does, and return the
        fit as an unstarted :class:`ermviz.runner.Run`, whose trace fills as it advances.

        Run it (``run.start()`` on a background thread, or ``run.run()`` in this one),
        then call :meth:`finish_run` with it to set the fitted attributes. This is how
        :func:`ermviz.app.live_fit` draws the certificate falling while the estimator
        fits; ``fit`` with ``keep_trace=True`` does the same in one call.
        """
        from ermviz.runner import Budget, Run, RunInfo

        setup = self._setup(X, y)
        budget = Budget(
            tol=setup.plan.tol,
            max_iter=setup.max_iter,
            max_time=math.inf if self.max_time is None else float(self.max_time),
        )
        info = RunInfo(
            dataset=setup.dataset_name,
            problem=setup.plan.problem,
            method=setup.resolved.method,
            step=setup.resolved.step,
            settings=dict(setup.problem.settings),
            label=f"{setup.resolved.method}-{setup.resolved.step}",
        )
        run = Run(setup.solver, budget, info)
        self._pending = (run, setup)
        return run

    def finish_run(self, run: Run) -> SolverEstimator:
        """Set the fitted attributes from ``run``, a run :meth:`prepare_run` returned that
        has ended (``trace_`` is its trace); returns the fitted estimator."""
        pending = getattr(self, "_pending", None)
        if pending is None or pending[0] is not run:
            raise SettingError(
                f"{type(self).__name__}.finish_run takes the run its own prepare_run returned last"
            )
        if not run.done and run.status != "ready":
            run.join()
        if run.status == "ready":
            raise SettingError("finish_run needs a run that has been run (run.run())")
        setup = pending[1]
        del self._pending
        s = run.summary()
        outcome = Outcome(
            s["status"], s["message"], int(s["iterations"]), float(s["objective"]),
            float(s["gap"]), float(s["time_s"]),
        )  # fmt: skip
        return self._finish(setup, outcome, run.frame())

    def _finish(self, setup: Setup, outcome: Outcome, trace: Any) -> SolverEstimator:
        name = type(self).__name__
        if outcome.status == "error":
            raise SettingError(f"{name}.fit failed: {outcome.message}")
        self.status_ = outcome.status
        self.n_iter_ = outcome.n_iter
        self.objective_ = outcome.objective
        self.certificate_ = outcome.certificate
        self.certificate_kind_ = setup.solver.certificate_kind
        self.method_ = setup.resolved.method
        self.fit_time_ = outcome.time_s
        self.trace_ = trace
        self._set_model(setup.problem, setup.solver.iterate())
        self._warm = (self._warm_key(setup), self._warm_state(setup))
        if outcome.status != "converged":
            self._warn_unconverged(setup, outcome)
        return self

    def _warn_unconverged(self, setup: Setup, outcome: Outcome) -> None:
        words = CERTIFICATE_WORDS.get(self.certificate_kind_, self.certificate_kind_)
        why = {
            "max_iter": f"it used up max_iter={setup.max_iter} iterations",
            "max_time": f"it used up max_time={self.max_time} s",
            "stalled": "it stalled",
        }.get(outcome.status, f"it ended with status {outcome.status!r}")
        note = f" ({outcome.message})" if outcome.message else ""
        fix = (
            "raise tol, or scale the features (e.g. StandardScaler)"
            if outcome.status == "stalled"
            else "scale the features (e.g. sklearn.preprocessing.StandardScaler) or raise "
            + ("max_time" if outcome.status == "max_time" else "max_iter")
        )
        warnings.warn(
            f"{type(self).__name__} ({setup.resolved.method}) did not converge: {why}{note} "
            f"with its {words} at {outcome.certificate:.3g}, above the {setup.plan.tol:.3g} "
            f"that tol={self.tol:g} asks; {fix}",
            ConvergenceWarning,
            stacklevel=3,
        )

    # -- predictions -----------------------------------------------------------------
    def _check_X(self, X: Any) -> Any:
        check_is_fitted(self)
        return validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)

    def _raw(self, X: Any) -> np.ndarray:
        X = self._check_X(X)
        return np.asarray(X @ np.ravel(self.coef_)).ravel() + float(np.ravel(self.intercept_)[0])


class LinearClassifierMixin:
    """``decision_function`` / ``predict`` of a binary linear classifier (``classes_[1]``
    coded +1)."""

    classes_: np.ndarray

    def decision_function(self, X: Any) -> np.ndarray:
        """Signed score of ``classes_[1]`` (the class coded +1), shape (n_samples,)."""
        return self._raw(X)

    def predict(self, X: Any) -> np.ndarray:
        """``classes_[1]`` where ``decision_function > 0``, else ``classes_[0]``."""
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]


def classifier_tags(tags: Any) -> Any:
    """The tags of a binary classifier (no multi-class)."""
    tags.classifier_tags.multi_class = False
    return tags


def shared_doc(cls: type) -> type:
    """Fill the docstring's ``{run_params}`` and ``{run_attributes}`` with the parameters
    and attributes every estimator shares (:data:`RUN_PARAMS`, :data:`RUN_ATTRIBUTES`), and
    ``{linear_classifier_attributes}`` with a linear classifier's
    (:data:`LINEAR_CLASSIFIER_ATTRIBUTES`)."""
    cls.__doc__ = (cls.__doc__ or "").replace("    {run_params}\n", RUN_PARAMS)
    cls.__doc__ = cls.__doc__.replace("    {run_attributes}\n", RUN_ATTRIBUTES)
    cls.__doc__ = cls.__doc__.replace(
        "    {linear_classifier_attributes}\n", LINEAR_CLASSIFIER_ATTRIBUTES
    )
    return cls


LINEAR_CLASSIFIER_ATTRIBUTES = """\
    coef_ : ndarray of shape (1, n_features)
        Weights.
    intercept_ : ndarray of shape (1,)
        Offset (0 without ``fit_intercept``).
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the class of positive scores.
"""


RUN_PARAMS = """\
    step : str or None, default=None
        Step rule of ``method`` (None: the method's own; ``python -m ermviz methods``
        lists them), as the CLI's ``--step``.
    method_settings : dict or None, default=None
        Further method, step-rule or problem settings, as the CLI's ``--set KEY=VALUE``
        (checked at ``fit`` against their declarations, one-line errors).
    max_iter : int or None, default=None
        Iteration budget; a fit that uses it up warns (``ConvergenceWarning``). None: the
        method's own budget, deterministic: 1000 for ``face-newton``, ``rehline`` and
        the CG methods, 200 for ``ipm``, 20 steps per row (at least 10^4) for ``smo``,
        10^5 for first-order methods. An iteration is a step of the method; for
        ``rehline`` a certificate check, made after at least one pass of coordinate
        updates over the data.
    max_time : float or None, default=None
        Optional budget of solver seconds (wall-clock time, so the result then depends on
        the machine's load); None: none.
    warm_start : bool, default=False
        Start the next ``fit`` from this fit's solution (a grid over ``C`` or the radius,
        a regularization path) when the problem's size and the method allow it:
        ``face-newton``, ``rehline``, ``cg-reduced`` and ``smo`` start from it; the
        other methods start cold, as liblinear in ``LogisticRegression`` does.
    keep_trace : bool, default=False
        Record the run's trace (one row per iteration, thinned past 10^5 rows) as
        ``trace_``, a pandas DataFrame in the CLI's ``--out`` schema; False records
        nothing (less work per fit) and ``trace_`` is None.
"""

RUN_ATTRIBUTES = """\
    n_iter_ : int
        Iterations run (see ``max_iter``).
    certificate_ : float
        The final certificate, of kind ``certificate_kind_``: it bounds how far
        ``objective_`` is from the optimum (for a relative kind, as a fraction of it).
    certificate_kind_ : str
        ``"fw_gap"`` (Frank-Wolfe gap), ``"duality_gap"``, ``"rel_duality_gap"`` (relative
        duality gap) or ``"primal_dual_gap"``.
    objective_ : float
        The objective at the solution, in the units of the problem ``method_`` solved (see
        above).
    status_ : str
        ``"converged"`` (certificate <= tol), ``"max_iter"``, ``"max_time"`` or
        ``"stalled"`` (float64 cannot resolve a smaller certificate).
    method_ : str
        The method that ran (``"auto"`` resolved).
    fit_time_ : float
        Solver seconds (certificate evaluations the method does not need excluded).
    trace_ : pandas.DataFrame or None
        The run's trace with ``keep_trace=True``, else None.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen during ``fit`` (only when ``X`` has string column
        names).
"""


def split_linear(x: np.ndarray, p: int, intercept: bool) -> tuple[np.ndarray, float]:
    """``(coef (p,), intercept)`` from a solution with the constant feature last."""
    x = np.asarray(x, dtype=np.float64)
    return x[:p].copy(), (float(x[p]) if intercept else 0.0)
