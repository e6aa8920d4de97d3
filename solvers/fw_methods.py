"""The Frank-Wolfe methods' kernel facts, declared once: one :class:`FWMethod` row each.

Why the declaration lives here, in :mod:`solvers`: the kernels branch on a method's
integer code and on whether it keeps an active set inside numba, and :mod:`solvers`
never imports :mod:`ermviz`; so the facts both layers need sit at the bottom, in this
plain-Python module (no numpy, no numba: the registry imports it without loading a
kernel). Everything else is derived from :data:`METHODS`:

* the kernels' method codes: :mod:`solvers.fw_vparts` (``METHOD_*``, ``METHOD_CODES``,
  the active-set flags the kernel reads), :mod:`solvers.fw` and :mod:`solvers.nuclear`
  (:func:`codes` of the kernel), and :func:`solvers.fw_variants.new_state`'s checks
  (:func:`unsupported`);
* on the :mod:`ermviz` side, each method class of
  :mod:`ermviz.families.frank_wolfe.methods` names its row (``kernel = fw_methods.PFW``)
  and adds what only ermviz knows (title, settings, reference); its problems, its one
  compatibility hook ``supports(problem, settings)`` and the data-pass accounting
  (:mod:`ermviz.families.frank_wolfe.passes`) read the row.

Each row states:

* ``code``: the integer the kernels branch on (the same in every kernel that runs it);
* ``active_set``: the method keeps the iterate as convex weights over atoms (away and
  pairwise steps need them); only such a method can be lazified (its lazy test looks
  at the active atoms) and it needs a set whose points are convex combinations of
  finitely many stored atoms;
* ``sets``: the feasible sets it runs over (:data:`SETS`);
* ``columns_per_step``: data columns a step reads to update ``M x`` (one per atom the
  step moves); with ``per_lmo_call`` the count is per LMO call instead of per step;
* ``step_types``: the step tags (:data:`solvers.tags.STEP_NAMES`) its steps record, the
  final ``none`` aside;
* ``kernels``: the kernels that run it (``fw``: the tuned simplex / l1-ball kernels of
  :mod:`solvers.fw`; ``fw_variants``: :mod:`solvers.fw_variants`, every vector set;
  ``nuclear``: :mod:`solvers.nuclear`, the nuclear-norm ball).

``tests/test_fw_methods.py`` runs the kernels against each fact (a fact the kernels do
not keep fails it); ``docs/ARCHITECTURE.md`` ("How to add a method") says where a new
method goes.
"""

from __future__ import annotations

from typing import NamedTuple

#: The feasible sets: those of :mod:`solvers.sets` (by their ``SET_CODES`` names) and the
#: nuclear-norm ball of :mod:`solvers.nuclear`.
SETS = ("simplex", "l1", "l2", "box", "ksparse", "nuclear")
#: The sets whose points are convex combinations of finitely many vertices, or of stored
#: rank-one atoms (nuclear): where an active set can be kept.
ATOMIC_SETS = ("simplex", "l1", "box", "ksparse", "nuclear")


class FWMethod(NamedTuple):
    """One Frank-Wolfe method's kernel facts (module docstring)."""

    name: str
    code: int
    active_set: bool
    sets: tuple[str, ...]
    columns_per_step: float
    step_types: tuple[str, ...]
    kernels: tuple[str, ...]
    per_lmo_call: bool = False


_VECTOR_AND_NUCLEAR = ("fw", "fw_variants", "nuclear")

FW = FWMethod(
    name="fw",
    code=0,
    active_set=False,
    sets=SETS,
    columns_per_step=1.0,
    step_types=("fw",),
    kernels=_VECTOR_AND_NUCLEAR,
)
AFW = FWMethod(
    name="afw",
    code=1,
    active_set=True,
    sets=ATOMIC_SETS,
    columns_per_step=1.0,
    step_types=("fw", "away", "drop", "lazy"),
    kernels=_VECTOR_AND_NUCLEAR,
)
PFW = FWMethod(
    name="pfw",
    code=2,
    active_set=True,
    sets=ATOMIC_SETS,
    columns_per_step=2.0,
    step_types=("pairwise", "drop", "lazy"),
    kernels=_VECTOR_AND_NUCLEAR,
)
BPCG = FWMethod(
    name="bpcg",
    code=3,
    active_set=True,
    sets=ATOMIC_SETS,
    columns_per_step=2.0,
    step_types=("fw", "local", "drop"),
    kernels=("fw_variants", "nuclear"),
)
BOOSTED = FWMethod(
    name="boosted",
    code=4,
    active_set=False,
    sets=("simplex", "l1", "l2", "box", "ksparse"),
    columns_per_step=1.0,
    per_lmo_call=True,
    step_types=("boosted",),
    kernels=("fw_variants",),
)
DICG = FWMethod(
    name="dicg",
    code=5,
    active_set=False,
    sets=("simplex",),
    columns_per_step=2.0,
    step_types=("pairwise", "drop"),
    kernels=("fw_variants",),
)

#: Every method, in code order (the code is the index).
METHODS: tuple[FWMethod, ...] = (FW, AFW, PFW, BPCG, BOOSTED, DICG)
BY_NAME: dict[str, FWMethod] = {m.name: m for m in METHODS}


def codes(kernel: str) -> dict[str, int]:
    """``{name: code}`` of the methods ``kernel`` (``fw``, ``fw_variants``, ``nuclear``)
    runs: that kernel's ``METHOD_CODES``."""
    return {m.name: m.code for m in METHODS if kernel in m.kernels}


def lookup(method: str | FWMethod) -> FWMethod:
    """The row of ``method``: a row itself (a method declared outside this table, such as
    the demo method of ``tests/demo_method``) or the name of one of :data:`METHODS`."""
    if isinstance(method, FWMethod):
        return method
    if method not in BY_NAME:
        raise ValueError(f"unknown Frank-Wolfe method {method!r}; expected one of {tuple(BY_NAME)}")
    return BY_NAME[method]


def names(where) -> tuple[str, ...]:
    """Names of the methods for which ``where(method)`` holds, in code order."""
    return tuple(m.name for m in METHODS if where(m))


def unsupported(method: FWMethod, set_name: str, lazy: bool, label: str = "") -> str:
    """Why ``method`` cannot run over ``set_name`` (lazified with ``lazy``), or ``""``
    when it can: the one compatibility rule of the kernel facts. ``label`` names the set
    as the caller's user chose it (e.g. ``constraint=l2``; default ``set_name``)."""
    if set_name not in method.sets:
        fits = names(lambda m: set_name in m.sets)
        why = " (it keeps an active set of atoms)" if method.active_set else ""
        return (
            f"{method.name} runs only over the sets {', '.join(method.sets)}{why}, not "
            f"{label or set_name}: use {_either(fits)} there"
        )
    if lazy and not method.active_set:
        return f"lazy applies to {', '.join(names(lambda m: m.active_set))} only"
    if lazy and set_name == "nuclear":
        return "the nuclear-norm kernel is not lazified: drop lazy"
    return ""


def _either(words: tuple[str, ...]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return " or ".join(filter(None, (", ".join(words[:-1]), words[-1])))
