"""The generic FW-variants kernel (solvers.fw_variants) against cvxpy + Clarabel.

Every allowed method x set pair runs with exact line search to a certificate <= 1e-6 and
its objective must match the optimum Clarabel finds to ``max(1e-6 relative, the
certificate)``; the iterate must lie in the set and, for the active-set methods, equal the
convex combination of its active atoms. Lazy afw / pfw / bpcg must reach the same optimum
with fewer LMO calls than their non-lazy versions, and every step tag must be one the
method may take. Instances: small random logistic regressions (optimum on a face),
least squares with an interior optimum (where vanilla FW and Boosted FW converge
linearly, Guelat & Marcotte 1986), and breast cancer (standardized): the L2-SVM dual with
C = 1 over the simplex and constrained logistic regression.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer

from solvers import fw_variants as fv
from solvers import lmo as sets  # the sets' LMOs
from solvers.linalg import as_kernel_matrix
from solvers.steps import RULE_CODES, default_step_params
from solvers.tags import STATUS_CONVERGED, STEP_NAMES

TOL = 1e-6
LOSS_SQ = fv.LOSS_CODES["squared"]
LOSS_LOG = fv.LOSS_CODES["logistic"]

ALLOWED = {
    ("fw", False): {"none", "fw"},
    ("afw", False): {"none", "fw", "away", "drop"},
    ("afw", True): {"none", "fw", "away", "drop", "lazy"},
    ("pfw", False): {"none", "pairwise", "drop"},
    ("pfw", True): {"none", "pairwise", "drop", "lazy"},
    ("bpcg", False): {"none", "fw", "local", "drop"},
    ("bpcg", True): {"none", "fw", "local", "drop"},
    ("boosted", False): {"none", "boosted"},
    ("dicg", False): {"none", "pairwise", "drop"},
}


class Instance:
    """``min loss(M x) + ridge ||x||^2`` over a set, with the kernel's and cvxpy's inputs."""

    def __init__(self, M, b, set_name, par, loss, loss_par, MT=None):
        self.M = np.asarray(M.toarray() if sp.issparse(M) else M, dtype=float)
        self.MT = as_kernel_matrix(MT if MT is not None else self.M.T)
        self.b = np.asarray(b, dtype=float)
        self.set_code = sets.SET_CODES[set_name]
        self.par = par
        self.loss = loss
        self.loss_par = np.asarray(loss_par, dtype=float)
        self.p = self.M.shape[1]
        self._ref = None

    def objective(self, x):
        z = self.M @ x
        if self.loss == LOSS_SQ:
            f = self.loss_par[0] * np.sum((z - self.b) ** 2)
        else:
            f = np.mean(np.logaddexp(0.0, -self.b * z))
        return f + self.loss_par[1] * x @ x

    def reference(self) -> float:
        """Optimal value by cvxpy + Clarabel (an independent solver)."""
        if self._ref is None:
            x = cp.Variable(self.p)
            z = self.M @ x
            if self.loss == LOSS_SQ:
                f = self.loss_par[0] * cp.sum_squares(z - self.b)
            else:
                f = cp.sum(cp.logistic(-cp.multiply(self.b, z))) / self.b.size
            f = f + self.loss_par[1] * cp.sum_squares(x)
            r, lo, hi = self.par[sets.P_RADIUS], self.par[sets.P_LO], self.par[sets.P_HI]
            K = min(int(self.par[sets.P_K]), self.p)
            cons = {
                sets.SET_SIMPLEX: [x >= 0, cp.sum(x) == 1],
                sets.SET_L1: [cp.norm1(x) <= r],
                sets.SET_L2: [cp.norm2(x) <= r],
                sets.SET_BOX: [x >= lo, x <= hi],
                sets.SET_KSPARSE: [cp.norm_inf(x) <= r, cp.norm1(x) <= K * r],
            }[self.set_code]
            prob = cp.Problem(cp.Minimize(f), cons)
            prob.solve(solver=cp.CLARABEL)
            assert prob.status == cp.OPTIMAL
            self._ref = float(prob.value)
        return self._ref

    def start(self):
        """x_0: the vertex the LMO returns for the all-ones direction."""
        m = sets.max_nnz(self.set_code, self.p, int(self.par[sets.P_K]))
        idx = np.zeros(m, dtype=np.int64)
        val = np.zeros(m)
        nnz = sets.lmo(self.set_code, self.par, np.ones(self.p), idx, val)
        return idx[None], val[None], np.array([nnz]), np.array([1.0])

    def state(self, method, lazy=False, rule="exact", **kw):
        return fv.new_state(
            self.MT, self.b, self.set_code, self.par, self.loss, self.loss_par,
            fv.METHOD_CODES[method], RULE_CODES[rule], default_step_params(),
            *self.start(), lazy=lazy, **kw,
        )  # fmt: skip


def run(inst, method, lazy=False, rule="exact", max_iter=30000, tol=TOL, **kw):
    st = inst.state(method, lazy, rule, **kw)
    rec = np.zeros((max_iter + 1, len(fv.FWV_RECORD_COLUMNS)))
    rows = fv.advance(st, rec, tol, max_iter)
    return st, rec[:rows]


def check_run(inst, method, lazy=False):
    """Run to TOL and check optimum, feasibility, active set and tags; return the trace."""
    st, rec = run(inst, method, lazy)
    last = rec[-1]
    assert st.status == STATUS_CONVERGED, (method, lazy, st.status, last)
    assert last[2] <= TOL
    f = last[1]
    ref = inst.reference()
    assert abs(f - ref) <= max(1e-6 * abs(ref), last[2]), (method, lazy, f, ref, last[2])
    # Every recorded certificate bounds the suboptimality of its iterate (FW gap, or for
    # lazy runs f(x_k) minus the best Wolfe-dual bound so far, which only tightens).
    slack = 1e-8 * max(1.0, abs(ref))
    assert np.all(rec[:, 2] >= rec[:, 1] - ref - slack), (method, lazy)
    if lazy:
        assert np.all(np.diff(rec[:, 2]) <= 1e-12 * max(1.0, abs(ref))), method
    # The kernel's objective is the objective at its iterate, which is feasible.
    assert f == pytest.approx(inst.objective(st.x), rel=1e-9, abs=1e-12)
    assert sets.contains(inst.set_code, inst.par, st.x, tol=1e-9)
    idx, val, w = fv.active_atoms(st)
    if method in ("afw", "pfw", "bpcg"):
        assert len(w) == int(last[5]) or last[4] == 0
        assert np.all(w > 0.0) and w.sum() == pytest.approx(1.0, abs=1e-12)
        x = np.zeros(inst.p)
        for i, v, wi in zip(idx, val, w, strict=True):
            x[i] += wi * v
        assert np.allclose(x, st.x, atol=1e-10)
    else:
        assert len(w) == 0
    tags = {STEP_NAMES[int(t)] for t in rec[:, 4]}
    assert tags <= ALLOWED[(method, lazy)], (method, lazy, tags)
    assert np.all(np.diff(rec[:, 8]) >= 0) and np.all(np.diff(rec[:, 0]) == 1)
    return st, rec


def _random_logistic(set_name, par, seed=0, n=40, p=12):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = np.sign(X @ rng.standard_normal(p) + 0.5 * rng.standard_normal(n))
    return Instance(X, y, set_name, par, LOSS_LOG, [1.0, 0.0])


def _interior_least_squares(set_name, par, x_true, seed=1, n=60):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, x_true.size))
    return Instance(X, X @ x_true, set_name, par, LOSS_SQ, [1.0 / (2 * n), 0.0])


def _face_least_squares(set_name, par, x_out, seed=2, n=50):
    """Least squares whose unconstrained solution ``x_out`` is outside the set (plus
    noise): the constrained optimum lies on a proper face with several active atoms."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, x_out.size))
    b = X @ x_out + 0.1 * rng.standard_normal(n)
    return Instance(X, b, set_name, par, LOSS_SQ, [1.0 / (2 * n), 0.0])


FACE_CASES = {
    "l1": lambda: _random_logistic("l1", sets.set_params(radius=2.0)),
    "box-straddle": lambda: _random_logistic("box", sets.set_params(lo=-0.3, hi=0.5)),
    "box-positive": lambda: _face_least_squares(
        "box", sets.set_params(lo=0.1, hi=0.4), np.random.default_rng(4).uniform(0.0, 0.5, 12)
    ),
    "ksparse": lambda: _random_logistic("ksparse", sets.set_params(radius=0.5, K=3)),
    "simplex": lambda: _face_least_squares(
        "simplex",
        sets.set_params(),
        np.r_[np.random.default_rng(5).dirichlet(np.ones(5)), -0.05 * np.ones(7)],
    ),
}


@pytest.mark.parametrize("case", list(FACE_CASES))
def test_active_set_methods_reach_the_optimum_and_lazy_saves_lmo_calls(case):
    inst = FACE_CASES[case]()
    methods = ["afw", "pfw", "bpcg"] + (["dicg"] if case == "simplex" else [])
    calls = {}
    for method in methods:
        for lazy in (False, True) if method != "dicg" else (False,):
            st, rec = check_run(inst, method, lazy)
            calls[method, lazy] = st.lmo_calls
            assert rec[-1, 8] == st.lmo_calls
            assert rec[:, 5].max() >= 3  # a face, not a vertex: several active atoms
    for method in ("afw", "pfw", "bpcg"):
        assert calls[method, True] < calls[method, False], calls


INTERIOR = [
    ("l1", sets.set_params(radius=3.0), 0.2),
    ("box", sets.set_params(lo=-1.0, hi=1.0), 0.5),
    ("ksparse", sets.set_params(radius=1.0, K=3), 0.3),
]


def test_fw_and_boosted_converge_where_they_are_linear():
    rng = np.random.default_rng(7)
    cases = [_interior_least_squares(s, par, rng.uniform(-a, a, 10)) for s, par, a in INTERIOR]
    cases.append(
        _interior_least_squares("simplex", sets.set_params(), rng.dirichlet(np.ones(10) * 5))
    )
    cases.append(
        _interior_least_squares("box", sets.set_params(lo=0.2, hi=0.9), rng.uniform(0.3, 0.8, 10))
    )
    cases.append(_random_logistic("l2", sets.set_params(radius=1.5)))
    iters = {"fw": 0, "boosted": 0}
    for inst in cases:
        for method in ("fw", "boosted"):
            st, _ = check_run(inst, method)
            iters[method] += st.iteration
            if method == "boosted":
                # Gradient pursuit: several LMO calls per iteration.
                assert st.lmo_calls > st.iteration > 0
            else:
                assert st.lmo_calls == st.iteration + 1
    # Chasing the gradient pays off here (Combettes & Pokutta 2020, Section 4): far fewer
    # iterations than vanilla FW with the same exact line search.
    assert 3 * iters["boosted"] < iters["fw"], iters


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    return X, np.where(y == 1, 1.0, -1.0)


@pytest.mark.slow
def test_breast_cancer_svm_dual(cancer):
    X, y = cancer
    C = 1.0
    Z = (y[:, None] * X).T  # columns y_i x_i
    inst = Instance(Z, np.zeros(X.shape[1]), "simplex", sets.set_params(), LOSS_SQ, [1.0, 1 / C])
    inst.MT = as_kernel_matrix(sp.csr_matrix(y[:, None] * X))  # CSR (n, d) = diag(y) X
    calls = {}
    for method, lazy in [("afw", False), ("afw", True), ("pfw", False), ("pfw", True)]:
        st, _ = check_run(inst, method, lazy)
        calls[method, lazy] = st.lmo_calls
        a = st.x
        # SvmDual.objective of ermviz.families.frank_wolfe: ||Z alpha||^2 + ||alpha||^2 / C.
        f = np.sum((Z @ a) ** 2) + a @ a / C
        assert f == pytest.approx(inst.reference(), rel=1e-6, abs=2 * TOL)
    for method, lazy in [("bpcg", False), ("bpcg", True), ("dicg", False)]:
        check_run(inst, method, lazy)
    assert calls["afw", True] < calls["afw", False]
    assert calls["pfw", True] < calls["pfw", False]


@pytest.mark.parametrize(
    ("set_name", "par", "methods"),
    [
        ("l1", sets.set_params(radius=3.0), ("afw", "pfw", "bpcg")),
        ("box", sets.set_params(lo=-0.3, hi=0.3), ("afw", "pfw", "bpcg")),
        ("ksparse", sets.set_params(radius=0.5, K=4), ("afw", "pfw", "bpcg")),
        ("l2", sets.set_params(radius=2.0), ("fw", "boosted")),
    ],
)
def test_breast_cancer_constrained_logistic(cancer, set_name, par, methods):
    X, y = cancer
    inst = Instance(X, y, set_name, par, LOSS_LOG, [1.0, 0.0])
    for method in methods:
        for lazy in (False, True) if method != "fw" and method != "boosted" else (False,):
            check_run(inst, method, lazy)


def test_every_step_rule_runs_and_the_contract_holds():
    inst = _random_logistic("l1", sets.set_params(radius=2.0))
    f0 = inst.objective(_dense_start(inst))
    for rule in RULE_CODES:
        for method in ("fw", "afw", "pfw", "bpcg", "boosted"):
            st, rec = run(inst, method, rule=rule, max_iter=200, tol=0.0)
            assert len(rec) >= 2 and np.all(np.isfinite(rec[:, 1]))
            assert sets.contains(inst.set_code, inst.par, st.x, tol=1e-9)
            assert rec[-1, 1] < f0
            if rule in ("armijo", "exact", "adaptive"):
                assert np.all(np.diff(rec[:, 1]) <= 1e-12), (rule, method)
    # A 0-row call compiles and writes nothing; pausing and resuming reproduces one call.
    st = inst.state("pfw", lazy=True)
    assert fv.advance(st, np.zeros((0, len(fv.FWV_RECORD_COLUMNS))), TOL, 100) == 0
    assert st.iteration == 0
    _, whole = run(inst, "pfw", lazy=True, max_iter=60, tol=0.0)
    rec = np.zeros((61, len(fv.FWV_RECORD_COLUMNS)))
    done = 0
    while done < 61:
        got = fv.advance(st, rec[done : done + 7], 0.0, 60)
        done += got
        if got < 7:
            break
    np.testing.assert_array_equal(rec[:done], whole)


def _dense_start(inst):
    idx, val, nnz, _ = inst.start()
    x = np.zeros(inst.p)
    x[idx[0, : nnz[0]]] = val[0, : nnz[0]]
    return x


def test_active_set_arrays_grow_on_demand():
    # A box with an interior optimum needs many vertices; start from a tiny capacity.
    rng = np.random.default_rng(3)
    inst = _interior_least_squares(
        "box", sets.set_params(lo=-1.0, hi=1.0), rng.uniform(-0.5, 0.5, 10)
    )
    _, ref_rec = run(inst, "afw")
    st = inst.state("afw")
    for name in ("at_idx", "at_val", "at_nnz", "mu"):
        setattr(st, name, getattr(st, name)[:2].copy())
    rec = np.zeros((30001, len(fv.FWV_RECORD_COLUMNS)))
    rows = fv.advance(st, rec, TOL, 30000)
    assert st.mu.shape[0] > 2 and ref_rec[:, 5].max() > 2
    np.testing.assert_array_equal(rec[:rows], ref_rec)


def test_wrapper_rejects_unsupported_combinations():
    inst = _random_logistic("l2", sets.set_params(radius=1.0))
    for method in ("afw", "pfw", "bpcg", "dicg"):
        with pytest.raises(ValueError, match="fw, boosted"):
            inst.state(method)
    inst = _random_logistic("l1", sets.set_params(radius=1.0))
    with pytest.raises(ValueError, match="simplex"):
        inst.state("dicg")
    with pytest.raises(ValueError, match="lazy"):
        inst.state("fw", lazy=True)
    inst.loss_par = np.array([1.0, 0.1])
    with pytest.raises(ValueError, match="ridge"):
        inst.state("afw")


def _gram_runs_agree(inst, method, lazy, cheaper=True, **kw):
    """The same run with the Gram cache (``kw``) and without it: the same optimum, and
    (``cheaper``) fewer passes over the data with the cache; with Armijo steps the same
    objectives along the first 200 rows (to 1e-9 relative). Returns the cached Armijo
    run's trace.

    Not compared row by row under the exact line search: it leaves the gradient entries
    of a pairwise step's two vertices equal up to rounding, so the next away vertex is
    decided by rounding-level differences in the gradient, which the cache's (equally
    accurate) arithmetic changes; both runs still reach the optimum."""
    out = {}
    for rule in ("exact", "armijo"):
        st_c, rec_c = run(inst, method, lazy, rule=rule, **kw)
        st_n, rec_n = run(inst, method, lazy, rule=rule, gram_cache_mb=0.0)
        assert st_c.gram_slots >= 2 and st_n.gram_slots == 0
        assert st_c.status == st_n.status == STATUS_CONVERGED, (method, lazy, rule)
        ref = inst.reference()
        for rec in (rec_c, rec_n):
            assert abs(rec[-1, 1] - ref) <= max(1e-6 * abs(ref), rec[-1, 2]), (method, rule)
        assert rec_c[-1, 1] == pytest.approx(inst.objective(st_c.x), rel=1e-9, abs=1e-12)
        # Honest work count: without the cache every iteration is a pass over the data.
        assert np.array_equal(rec_n[:, 6], np.arange(1, len(rec_n) + 1))
        assert np.all(np.diff(rec_c[:, 6]) >= 0)
        assert (rec_c[-1, 6] < rec_n[-1, 6]) or not cheaper
        out[rule] = rec_c, rec_n
    rec_c, rec_n = out["armijo"]
    rows = min(200, len(rec_c), len(rec_n))
    assert rows == 200 or len(rec_c) == len(rec_n)
    np.testing.assert_allclose(rec_c[:rows, 1], rec_n[:rows, 1], rtol=1e-9, atol=0.0)
    return rec_c


GRAM_METHODS = [("pfw", False), ("bpcg", False), ("pfw", True), ("dicg", False)]


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.slow
def test_gram_cache_keeps_the_svm_dual_gradient(cancer, sparse):
    X, y = cancer
    C = 1.0
    Z = (y[:, None] * X).T
    inst = Instance(Z, np.zeros(X.shape[1]), "simplex", sets.set_params(), LOSS_SQ, [1.0, 1 / C])
    if sparse:
        inst.MT = as_kernel_matrix(sp.csr_matrix(y[:, None] * X))
    n = X.shape[0]
    tiny = 3 * 8 * n / 2**20  # three slots: columns get evicted and recomputed
    for method, lazy in [*GRAM_METHODS, ("afw", False), ("bpcg", True), ("afw", True)]:
        rec_c = _gram_runs_agree(inst, method, lazy)
        if method in ("pfw", "dicg") and not lazy:
            # Three slots thrash (two misses a step can cost more than recomputing), and
            # the trace counts every miss as a pass.
            rec_t = _gram_runs_agree(inst, method, lazy, cheaper=False, gram_cache_mb=tiny)
            assert rec_t[-1, 6] > rec_c[-1, 6]
    for method, lazy in [*GRAM_METHODS, ("afw", False)]:
        for steps_, mb in ((1500, 256.0), (700, tiny)):
            st = inst.state(method, lazy, gram_cache_mb=mb)
            assert st.gram_slots == (3 if mb == tiny else n)
            rec = np.zeros((steps_ + 1, len(fv.FWV_RECORD_COLUMNS)))
            rows = fv.advance(st, rec, 0.0, steps_)
            assert rows == steps_ + 1 and st.iteration == steps_
            # SvmDual.gradient: 2 (y * (X w) + alpha / C) with w = X^T (alpha * y).
            a = st.x
            g = 2.0 * (y * (X @ (X.T @ (a * y))) + a / C)
            err = np.linalg.norm(st.g - g)
            assert err <= 1e-10 * np.linalg.norm(g), (method, lazy, mb, err)


def test_gram_cache_on_the_l1_ball():
    """Least squares over the l1 ball (b != 0, atoms +-r e_j)."""
    inst = _face_least_squares("l1", sets.set_params(radius=1.0), np.linspace(-1.0, 1.0, 12))
    for method, lazy in [("fw", False), ("afw", False), ("pfw", False), ("bpcg", False)]:
        _gram_runs_agree(inst, method, lazy)
    for method in ("afw", "pfw", "bpcg"):
        st = inst.state(method)
        rec = np.zeros((301, len(fv.FWV_RECORD_COLUMNS)))
        fv.advance(st, rec, 0.0, 300)
        g = 2.0 * inst.loss_par[0] * inst.M.T @ (inst.M @ st.x - inst.b)
        assert np.linalg.norm(st.g - g) <= 1e-10 * np.linalg.norm(g), method
    # The cache is not used where atoms have several entries or for boosted FW.
    assert _random_logistic("l1", sets.set_params(radius=1.0)).state("pfw").gram_slots == 0
    assert inst.state("boosted").gram_slots == 0
    box = _face_least_squares("box", sets.set_params(lo=0.1, hi=0.4), np.full(12, 0.3))
    assert box.state("pfw").gram_slots == 0
    with pytest.raises(ValueError, match="gram_cache_mb"):
        inst.state("pfw", gram_cache_mb=-1.0)
