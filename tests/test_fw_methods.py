"""The Frank-Wolfe methods' declared facts (:mod:`solvers.fw_methods`) against the kernels.

Each row of :data:`solvers.fw_methods.METHODS` states a method's code, whether it keeps an
active set, the sets it runs over, its data-pass accounting, the step types it records and
the kernels that run it; the kernels' tables and ermviz's checks are derived from it. The
kernels' numba branches are not: these tests run every kernel a method names, on every
set it declares (and lazified where it keeps an active set), and check that

* its recorded step types are exactly the declared ones (over all its runs);
* it keeps an active set (live rows of :mod:`solvers.fw_variants`' active set) exactly
  when it declares one;
* a declared set runs to a decreasing objective, an undeclared one is refused by the
  kernel's boundary (:func:`solvers.fw_variants.new_state`), and the registry's
  ``supports`` hook refuses exactly those;
* its ``columns_per_step`` is the most atoms one of its step types moves;
* each kernel's ``METHOD_CODES`` and branch constants are the declared codes, and each
  ermviz method class carries its row and solves the problems its sets reach.

Breaking one fact (e.g. ``PFW.columns_per_step = 1.0``, or ``AFW.active_set = False``)
fails these tests.
"""

from __future__ import annotations

import numpy as np
import pytest

from ermviz.data import load_dataset
from ermviz.errors import SettingError
from ermviz.registry import METHODS, build_problem, build_solver
from solvers import fw, fw_methods, fw_variants, fw_vparts, nuclear
from solvers import lmo as sets
from solvers.linalg import as_kernel_matrix
from solvers.steps import RULE_CODES, default_step_params
from solvers.tags import STEP_NAMES

#: Atoms a step of each type moves (its columns of the data): the accounting's ground truth.
ATOMS_MOVED = {"fw": 1, "away": 1, "pairwise": 2, "local": 2, "boosted": 1}
#: The registered method classes that carry kernel facts, by name: the rows of
#: solvers.fw_methods.METHODS, and any method a family adds from its own row (as
#: tests/demo_method does, registered through ERMVIZ_FAMILIES).
CLASSES = {
    name: spec.factory.__self__
    for name, spec in METHODS.items()
    if isinstance(getattr(spec.factory.__self__, "kernel", None), fw_methods.FWMethod)
}
FACTS = [cls.kernel for cls in CLASSES.values()]
VECTOR_SETS = ("simplex", "l1", "l2", "box", "ksparse")
ITERS = 150


def _instance(set_name: str, seed: int = 0):
    """Least squares ``||M x - b||^2 / (2 n)`` whose optimum lies inside a face of the
    set, away from its vertices (``b = M x_t``, ``x_t`` just outside that face), and a
    start of two opposite atoms."""
    rng = np.random.default_rng(seed)
    n, p = 60, 6
    M = rng.normal(size=(n, p))
    x_t = np.array([0.9, -0.7, 0.6, -0.5, 0.3, 0.1])
    if set_name == "simplex":
        x_t = np.array([-0.1, 0.4, 0.3, 0.3, 0.2, -0.1])  # e_0 (a start atom) leaves
    b = M @ x_t
    par = sets.set_params(radius=1.0, lo=-1.0, hi=1.0, K=2)
    code = sets.SET_CODES[set_name]
    m = sets.max_nnz(code, p, 2)
    atoms = []
    for g in (np.arange(1.0, p + 1.0), -np.arange(1.0, p + 1.0)[::-1]):
        idx, val = np.zeros(m, dtype=np.int64), np.zeros(m)
        nnz = sets.lmo(code, par, g, idx, val)
        atoms.append((idx, val, nnz))
    x0_idx = np.array([a[0] for a in atoms])
    x0_val = np.array([a[1] for a in atoms])
    x0_nnz = np.array([a[2] for a in atoms])
    return (as_kernel_matrix(M.T), b, code, par), (x0_idx, x0_val, x0_nnz, np.array([0.5, 0.5]))


def _variants_run(method: fw_methods.FWMethod, set_name: str, lazy: bool):
    (MT, b, code, par), start = _instance(set_name)
    st = fw_variants.new_state(
        MT, b, code, par, fw_variants.LOSS_CODES["squared"], np.array([0.5 / b.size, 0.0]),
        method.code, RULE_CODES["exact"], default_step_params(), *start, lazy=lazy,
    )  # fmt: skip
    rec = np.zeros((ITERS + 1, len(fw_variants.FWV_RECORD_COLUMNS)))
    rows = fw_variants.advance(st, rec, 1e-14, ITERS)
    return st, rec[:rows]


def _tags(rec: np.ndarray) -> set[str]:
    return {STEP_NAMES[int(t)] for t in rec[:, 4]} - {"none"}


def _registry_tags(problem: str, dataset: str, method: str, **settings) -> set[str]:
    pb = build_problem(problem, load_dataset(dataset), **settings)
    solver = build_solver(pb, method, "exact", {}, 1e-14)
    rows, _ = solver.advance(ITERS, ITERS)
    return _tags(np.asarray(rows))


def _lazifiable(method: fw_methods.FWMethod) -> bool:
    """Whether the method class offers ``lazy`` (only an active-set method may)."""
    offered = any(s.name == "lazy" for s in CLASSES[method.name].settings)
    assert not offered or method.active_set, method
    return offered


_SEEN: dict[str, set[str]] = {}


def _seen_tags(method: fw_methods.FWMethod) -> set[str]:
    """The step types ``method`` recorded over all its kernels, sets and lazy settings."""
    if method.name not in _SEEN:
        seen: set[str] = set()
        for set_name in set(method.sets) & set(VECTOR_SETS):
            for lazy in (False, True) if _lazifiable(method) else (False,):
                seen |= _tags(_variants_run(method, set_name, lazy)[1])
        if "fw" in method.kernels and "simplex" in method.sets:
            seen |= _registry_tags("svm-dual", "toy-2d", method.name)
        if "fw" in method.kernels and "l1" in method.sets:
            seen |= _registry_tags("logreg-l1", "toy-2d", method.name, radius=3.0)
        if "nuclear" in method.kernels:
            seen |= _registry_tags("matrix-completion", "lowrank-ratings", method.name)
        _SEEN[method.name] = seen
    return _SEEN[method.name]


@pytest.mark.parametrize("method", FACTS, ids=lambda m: m.name)
def test_the_kernels_record_exactly_the_declared_step_types(method):
    assert _seen_tags(method) == set(method.step_types)


@pytest.mark.parametrize("method", FACTS, ids=lambda m: m.name)
def test_columns_per_step_is_the_most_atoms_a_step_moves(method):
    moved = [ATOMS_MOVED[t] for t in method.step_types if t in ATOMS_MOVED]
    assert method.columns_per_step == max(moved), method
    # boosted reads one column per LMO call of its pursuit, not per step
    assert method.per_lmo_call == ("boosted" in method.step_types)


@pytest.mark.parametrize("method", FACTS, ids=lambda m: m.name)
@pytest.mark.parametrize("set_name", VECTOR_SETS)
def test_active_sets_and_sets_as_declared(method, set_name):
    if set_name not in method.sets:
        if method in fw_methods.METHODS:  # the row that owns its kernel branch
            with pytest.raises(ValueError, match=f"not {set_name}"):
                _variants_run(method, set_name, lazy=False)
        return
    st, rec = _variants_run(method, set_name, lazy=False)
    f = rec[:, 1]
    assert np.all(np.isfinite(f)) and f[-1] < f[0] - 1e-6, (method.name, set_name, f[[0, -1]])
    live = int(st.istate[fw_variants.I_NACT])
    assert (live > 0) == method.active_set, (method.name, set_name, live)
    if method.active_set:  # the iterate is the convex combination of the live atoms
        idx, val, mu = fw_variants.active_atoms(st)
        x = np.zeros_like(st.x)
        for i, v, w in zip(idx, val, mu, strict=True):
            x[i] += w * v
        np.testing.assert_allclose(x, st.x, atol=1e-9)
    else:
        with pytest.raises(ValueError, match="lazy"):
            _variants_run(method, set_name, lazy=True)


def test_the_kernel_tables_are_the_declared_codes():
    assert fw_variants.METHOD_CODES == fw_methods.codes("fw_variants")
    for module, kernel in ((fw, "fw"), (fw_vparts, "fw_variants"), (nuclear, "nuclear")):
        assert module.METHOD_CODES == fw_methods.codes(kernel), kernel
        for name, code in module.METHOD_CODES.items():  # the constants its branches test
            assert getattr(module, f"METHOD_{name.upper()}") == code, (kernel, name)
    flags = [bool(f) for f in fw_variants.KEEPS_ACTIVE_SET]
    assert flags == [m.active_set for m in fw_methods.METHODS]
    assert [m.code for m in fw_methods.METHODS] == list(range(len(fw_methods.METHODS)))
    for m in FACTS:
        # A row reusing a branch (its code) agrees with the row that owns the branch.
        owner = fw_methods.METHODS[m.code]
        assert m.active_set == owner.active_set and set(m.kernels) <= set(owner.kernels), m
        assert set(m.sets) <= set(owner.sets), m
        assert ("nuclear" in m.sets) == ("nuclear" in m.kernels), m.name
        assert set(m.sets) <= set(fw_methods.SETS) and set(m.step_types) <= set(STEP_NAMES.values())


def test_every_declared_method_is_listed_with_its_problems():
    from ermviz.families.frank_wolfe.methods import PROBLEM_SETS

    assert set(fw_methods.BY_NAME) <= set(CLASSES)
    for name, cls in CLASSES.items():
        spec = METHODS[name]
        assert spec.name == cls.kernel.name == name and spec.family == "frank-wolfe"
        sets_of = set(cls.kernel.sets)
        reach = {pb for pb, s in PROBLEM_SETS.items() if sets_of & set(s)}
        assert set(spec.problems) == reach, name


@pytest.mark.parametrize("constraint", ("l1", "l2", "box", "ksparse"))
@pytest.mark.parametrize("name", sorted(CLASSES))
def test_the_supports_hook_refuses_exactly_what_the_kernel_refuses(name, constraint):
    spec = METHODS[name]
    if "least-squares" not in spec.problems:
        return
    pb = build_problem("least-squares", load_dataset("sk-diabetes"), constraint=constraint)
    reason = spec.supports(pb, {})
    if constraint in CLASSES[name].kernel.sets:
        assert reason is None
        solver = build_solver(pb, name, "exact", {}, 1e-12)
        rows, _ = solver.advance(3, 3)
        assert len(rows) >= 1
    else:
        assert reason and f"constraint={constraint}" in reason
        with pytest.raises(SettingError, match="use fw"):
            build_solver(pb, name, "exact", {}, 1e-12)
