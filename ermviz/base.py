"""The contracts every solver family implements: Problem, Solver, MethodSpec, StepRuleSpec.

A family (see :mod:`ermviz.families` and ``docs/ARCHITECTURE.md``) subclasses
:class:`Problem` for each problem it brings (data, settings, reference numpy math and a
certificate) and :class:`Solver` for each method (state advanced in chunks by the runner),
declares each method on a :class:`Method` class (its name, title, problems, step rules,
settings and reference as class attributes) and its step rules with :class:`StepRuleSpec`;
:func:`methods_from` turns the method classes into the :class:`MethodSpec` entries of the
family's ``METHODS``. Settings are declared with :class:`ermviz.settings.Setting`. Nothing
here knows any family; :mod:`ermviz.registry` collects them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ermviz.settings import Setting, resolve_settings

if TYPE_CHECKING:
    from ermviz.geometry import DecisionPlane, Geometry


class Solver(ABC):
    """A method bound to a problem, with its state, advanced in chunks by the runner.

    Attributes
    ----------
    columns : tuple of str
        Names of the record columns ``advance`` returns. The first six are always
        ``iteration, objective, certificate, step_size, step_type, active_size``; a
        family appends its own counters (``grad_evals``, ``epoch``, ``kernel_evals``,
        ``samples``, ``dual_objective`` ...).
    certificate_kind : str
        What ``certificate`` measures (``fw_gap``, ``duality_gap``, ...).
    """

    columns: tuple[str, ...]
    certificate_kind: str = "fw_gap"
    #: Cumulative wall and CPU seconds that ``advance`` spent evaluating certificates a
    #: method does not need itself (e.g. the exact FW gap of an estimated-gradient method);
    #: the runner subtracts them from solver time.
    eval_seconds: float = 0.0
    eval_cpu_seconds: float = 0.0
    #: Warnings about this set-up that the user should see before the run starts; the CLI
    #: prints them, the dashboard shows them as notices. (Badly scaled features are the
    #: problem's ``scaling`` check, :mod:`ermviz.families.scaling`, shown the same way.)
    notices: tuple[str, ...] = ()
    #: Record columns whose final value the CLI's JSON summary reports beside the
    #: objective and gap (work counters such as ``kernel_evals`` or ``samples``).
    summary_columns: tuple[str, ...] = ()
    #: Work counters (record columns) this method spends in jumps, all of a jump before
    #: the row that follows it, rather than along the way between rows: SAA draws every
    #: sample before its first Newton step. Plots against such a counter draw the method's
    #: curve as steps (its certificate holds until the count is spent), not as a line.
    work_jumps: tuple[str, ...] = ()
    #: Set by ``advance`` when it ends a run: why it ended that way (e.g. why it stalled,
    #: or that the best certified point is reported); the runner adds it to its message.
    end_note: str = ""

    @abstractmethod
    def advance(self, max_rows: int, stop_at: int) -> tuple[np.ndarray, int]:
        """Run at most ``max_rows`` iterations; stop (recording, not stepping) at ``stop_at``.

        Returns
        -------
        rows : ndarray of shape (k, len(columns))
            The records written by this call (a view, valid until the next call).
        status : int
            A ``solvers.tags.STATUS_*`` code.
        """

    @abstractmethod
    def iterate(self) -> np.ndarray:
        """A copy of the current iterate."""

    def active_weights(self) -> np.ndarray:
        """A copy of the active-set weights (one per atom); empty if the method has none."""
        return np.zeros(0)

    def set_budget(self, budget: Any) -> bool:
        """The run's :class:`~ermviz.runner.Budget`, given before it starts. A method that
        enforces its work budget (``max_work``) itself, stopping exactly before a step
        that would exceed it, returns True (and raises SettingError when not even one
        step fits); by default False: the runner stops the run between chunks."""
        return False

    def interrupt(self, flag: bool) -> None:
        """Ask a long ``advance`` call to return early (True: pause or stop requested from
        another thread; False: resumed). Methods whose calls are always short ignore it."""
        return None

    def decision_state(self) -> Any:
        """What the problem's :meth:`Problem.decision_plane` needs to evaluate the current
        model (cheap; read from the dashboard while the run goes); None by default."""
        return None

    def warm_point(self, x: Any, current: np.ndarray, what: str) -> np.ndarray:
        """``x`` as a float64 array of ``current``'s shape, for a method's ``warm_start``
        (the start point of a fit from the previous one's solution): one-line errors when
        the run has begun or ``x`` has another length (``what``: its entries, in words)."""
        from ermviz.errors import SettingError

        if self.iteration > 0:
            raise SettingError("warm_start must be called before the first step")
        x = np.asarray(x, dtype=np.float64)
        if x.shape != current.shape:
            raise SettingError(
                f"warm start has {x.shape[0] if x.ndim else 1} {what}; this problem has "
                f"{current.shape[0]}"
            )
        return x

    @property
    @abstractmethod
    def iteration(self) -> int:
        """Index of the current iterate (number of steps taken)."""


@dataclass(frozen=True)
class StepRuleSpec:
    """A step rule: its name, what it does, its settings and its reference."""

    name: str
    title: str
    settings: tuple[Setting, ...]
    reference: str


@dataclass(frozen=True)
class MethodSpec:
    """A method: the problems it solves, the step rules it accepts, its settings.

    ``factory(problem, step, settings, tol)`` builds a :class:`Solver`, where
    ``settings`` holds the validated method and step-rule settings together;
    ``advise(problem)``, when given, returns warnings about using this method on that
    problem (the solver's ``notices``), cheap enough to show before the solver is built.
    """

    name: str
    title: str
    family: str
    problems: tuple[str, ...]
    step_rules: tuple[str, ...]
    settings: tuple[Setting, ...]
    reference: str
    factory: Callable[[Any, str, dict[str, Any], float], Solver]
    default_step: str = ""
    advise: Callable[[Any], Sequence[str]] | None = None

    @property
    def step(self) -> str:
        """The step rule used when none is named: ``default_step`` or the first accepted."""
        return self.default_step or self.step_rules[0]


class Method:
    """A method declared on its class: what :func:`methods_from` turns into a
    :class:`MethodSpec`.

    A method class sets the class attributes below and builds its solver with
    :meth:`build`, whose default constructs the class itself: a :class:`Solver` whose
    constructor takes ``(problem, step, settings, tol)`` subclasses both (``class
    SmoSolver(LssvmSolver, Method)``). A method implemented by different solvers on
    different problems or settings (CSO's ``bsgd`` on ``invariant-logreg`` and on
    ``maml-sine``; every Frank-Wolfe method, dispatched to one of its kernels) overrides
    :meth:`build`. ``advise``, when a method defines it, is a classmethod ``advise(problem)``
    returning warnings about using the method on that problem (:attr:`MethodSpec.advise`).
    Every attribute is read by :func:`methods_from` only, from the class.
    """

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    family: ClassVar[str] = ""
    problems: ClassVar[tuple[str, ...]] = ()
    step_rules: ClassVar[tuple[str, ...]] = ()
    settings: ClassVar[tuple[Setting, ...]] = ()
    reference: ClassVar[str] = ""
    default_step: ClassVar[str] = ""
    advise: ClassVar[Callable[[Any], Sequence[str]] | None] = None

    @classmethod
    def build(cls, problem: Any, step: str, settings: dict[str, Any], tol: float) -> Solver:
        """The solver of this method on ``problem`` with step rule ``step``, the validated
        method and step-rule ``settings`` and certificate tolerance ``tol``."""
        return cls(problem, step, settings, tol)  # type: ignore[call-arg]


#: The class attributes a method class must set (non-empty) to be listed.
_REQUIRED = ("name", "title", "family", "problems", "step_rules", "reference")


def methods_from(*classes: type[Method]) -> dict[str, MethodSpec]:
    """A family's ``METHODS``: the :class:`MethodSpec` of each method class, by name, in
    the order given. A class missing a required declaration, or a name given twice, is
    a TypeError naming the class."""
    specs: dict[str, MethodSpec] = {}
    for cls in classes:
        missing = [attr for attr in _REQUIRED if not getattr(cls, attr, None)]
        if missing:
            raise TypeError(f"method class {cls.__qualname__} declares no {', '.join(missing)}")
        if cls.name in specs:
            raise TypeError(f"method {cls.name!r} is declared twice ({cls.__qualname__})")
        specs[cls.name] = MethodSpec(
            name=cls.name,
            title=cls.title,
            family=cls.family,
            problems=tuple(cls.problems),
            step_rules=tuple(cls.step_rules),
            settings=tuple(cls.settings),
            reference=cls.reference,
            factory=cls.build,
            default_step=cls.default_step,
            advise=cls.advise,
        )
    return specs


@dataclass
class Problem(ABC):
    """Base class: data, settings and reference (numpy) math of one problem."""

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    certificate_kind: ClassVar[str] = "fw_gap"
    settings_decl: ClassVar[tuple[Setting, ...]] = ()
    #: The comparison worth racing on this problem, as ``(method, step rule)`` pairs: what
    #: the dashboard's race becomes when the user switches to this problem.
    default_race: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: Work counters every method of this problem records, as ``(trace column, label)``:
    #: the dashboard's iteration plots can use one as their x axis (e.g. kernel
    #: evaluations, which the LS-SVM papers compare methods by).
    work_axes: ClassVar[tuple[tuple[str, str], ...]] = ()

    dataset: Any
    settings: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(cls, dataset: Any, **given: Any) -> Problem:
        """Validate ``given`` against the declared settings and build the problem."""
        return cls(dataset, resolve_settings(cls.settings_decl, given, owner=cls.name))

    @classmethod
    def implied_settings(cls, given: dict[str, Any]) -> dict[str, Any]:
        """Settings that other given settings fill in when they are not given themselves
        (e.g. a preset naming a loss and a constraint); empty by default. The dashboard
        shows these values, so its sidebar says what the problem will be built with."""
        return {}

    @classmethod
    def certificate_kind_for(cls, settings: dict[str, Any]) -> str:
        """What the certificate column holds on this problem built with ``settings`` (a
        setting may choose it, e.g. a running average); by default
        :attr:`certificate_kind`. The dashboard names it on its plots before a race."""
        return cls.certificate_kind

    # Reference math (numpy), implemented by each problem.
    @abstractmethod
    def objective(self, x: np.ndarray) -> float:
        """See the subclasses."""

    @abstractmethod
    def gradient(self, x: np.ndarray) -> np.ndarray:
        """See the subclasses."""

    @abstractmethod
    def certificate(self, x: np.ndarray) -> float:
        """See the subclasses."""

    @abstractmethod
    def initial_point(self) -> np.ndarray:
        """See the subclasses."""

    @abstractmethod
    def lipschitz(self) -> float:
        """See the subclasses."""

    def test_metrics(self, x: np.ndarray) -> dict[str, float]:
        """Metrics on the dataset's test split (empty when it has none)."""
        return {}

    def solution_summary(self, x: np.ndarray) -> dict[str, float]:
        """Quantities of the solution ``x`` worth reporting beside the objective (e.g. a
        bias recovered from dual variables); the CLI adds them to its JSON summary."""
        return {}

    @classmethod
    def teachable(cls, n: int, p: int) -> bool:
        """Whether data of ``n`` samples and ``p`` features can give a problem the teaching
        view draws: a cheap test made before any data are loaded (False by default)."""
        return False

    def teaching_geometry(self) -> Geometry | None:
        """How the dashboard's teaching view draws this problem's feasible set
        (:mod:`ermviz.geometry`), or None when it is not drawn (the default)."""
        return None

    @classmethod
    def draws_plane(cls, n: int, p: int) -> bool:
        """Whether data of ``n`` samples and ``p`` features can give a problem whose
        decision function the teaching view draws in the plane (cheap, before loading)."""
        return False

    def decision_plane(self) -> DecisionPlane | None:
        """The classifier in the plane (:class:`ermviz.geometry.DecisionPlane`) that the
        teaching view draws live from each solver's ``decision_state()``; None (the
        default) when it is not drawn."""
        return None


@dataclass(frozen=True)
class MethodAlias:
    """A second name for a listed method with some of its choices fixed.

    Aliases keep old names and shorthands working wherever a method name is accepted (CLI,
    sweep configs, links, :func:`ermviz.registry.build_solver`), while ``ermviz methods``
    and the dashboard list each algorithm once. ``method`` is the method it stands for;
    ``method_by_problem`` names another method on the problems where the same algorithm is
    implemented by it; ``step`` (when not empty) is the step rule it implies and
    ``settings`` the settings it fixes.
    """

    name: str
    method: str
    note: str
    step: str = ""
    settings: tuple[tuple[str, Any], ...] = ()
    method_by_problem: tuple[tuple[str, str], ...] = ()

    def target(self, problem: str | None) -> str:
        """The listed method this alias stands for on ``problem``."""
        return dict(self.method_by_problem).get(problem or "", self.method)
