"""ermviz.estimators at their defaults against scikit-learn's and the ``rehline`` package's
estimators of the same models at theirs (issue 44's acceptance), in one run.

Models (offset appended as a penalized constant feature on every side, as liblinear's
``intercept_scaling=1`` does), each side constructed with its defaults but the model's
parameters:

* l1 logistic regression: ``LogisticRegression(l1_ratio=1.0, C=0.5, solver="liblinear")``
  against ``ConstrainedLogisticRegression(radius=||(w, b)||_1 of the tight liblinear
  solution)``: the penalized and the constrained forms share their solution. Objective:
  the mean logistic loss.
* L2-SVM: ``LinearSVC()`` (squared hinge, C=1) against ``L2SVMClassifier()`` (the same
  model at the same C). Objective: ``1/2 ||(w, b)||^2 + C sum sqhinge``.
* hinge SVM: ``LinearSVC(loss="hinge")`` and ``rehline.plq_Ridge_Classifier(svm, C=1)``
  against ``PLQClassifier()`` (hinge, C=1). Objective ``1/2 ||(w, b)||^2 + C sum hinge``.

Data: a1a and ijcnn1 with their official test files; w8a and phishing (no test file here)
split 75/25, stratified, seed 0. "excess" is the relative excess of a side's training
objective over the best one known (the minimum over every fit, ermviz's tight fits
included); "acc" the test accuracy. Times: the medians of rounds that fit every side in
turn (A/B alternating, after a warm-up fit of each: numba's first compile is not a fit's
cost): ``--repeats`` rounds, more for fast fits (at least 2 s of rounds, at most 40), one
BLAS/OpenMP thread everywhere (threadpoolctl), of CPU time (``process_time``: the work a
fit does, every thread counted) and of wall time. The machine is shared (load averages of
10-16 on 2 cores while this ran): a fit of a few ms then takes 5-10x its CPU time in wall
time, at random, so ``ratio`` (the check) is ermviz's median CPU time over the
reference's, and the wall-time ratio is shown beside it; ``solver`` is ermviz's solver
seconds (``fit_time_``, wall time, certificate evaluations the method does not need
excluded).

Also measured: the fixed cost per fit on a 100 x 5 problem against
``LogisticRegression()``'s (medians of interleaved fits); a fit of each estimator on raw
(unscaled) wdbc (warnings, status, iterations against the default budget); and
``check_estimator`` on each default-constructed estimator, twice, each in its own process
(seconds, checks failed, and a digest of a fit on the checks' kind of data).

    .venv/bin/python benchmarks/bench_estimators.py [--repeats 5] [--out FILE] [--skip-checks]
        [--data a1a w8a ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from bench_common import REPO, Report, core_version, load_str, table

sys.path.insert(0, str(REPO))

from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.svm import LinearSVC

from ermviz import estimators as E
from ermviz.data import load_dataset

DATASETS = ("a1a", "w8a", "ijcnn1", "phishing")
#: Largest accepted |accuracy difference| and time ratio (issue 44).
ACC_TOL = 0.005
RATIO_MAX = 1.0
FIXED_MAX = 3.0
CHECK_SECONDS = 60.0


def with_ones(X):
    one = np.ones((X.shape[0], 1))
    return sp.hstack([X, one], format="csr") if sp.issparse(X) else np.hstack([X, one])


def wb(est) -> np.ndarray:
    return np.append(np.ravel(est.coef_), np.ravel(getattr(est, "intercept_", 0.0)))


def logloss(X1, y, w) -> float:
    return float(np.mean(np.logaddexp(0.0, -y * np.asarray(X1 @ w).ravel())))


def svm_obj(X1, y, w, C, squared) -> float:
    h = np.maximum(0.0, 1.0 - y * np.asarray(X1 @ w).ravel())
    return float(0.5 * w @ w + C * np.sum(h * h if squared else h))


def int32(X):
    """``X`` with 32-bit sparse indices, for every side: liblinear refuses 64-bit ones,
    which a set read back from ermviz's parsed cache may have (w8a, phishing here)."""
    if not sp.issparse(X):
        return X
    X = sp.csr_matrix(X)
    return sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), X.shape)


def split(name: str):
    if name in ("a1a", "ijcnn1"):
        ds = load_dataset(name)
        return int32(ds.X), ds.y, int32(ds.X_test), ds.y_test
    ds = load_dataset(name, with_test=False)
    Xtr, Xte, ytr, yte = train_test_split(ds.X, ds.y, test_size=0.25, stratify=ds.y, random_state=0)
    return int32(Xtr), ytr, int32(Xte), yte


#: Rounds of a race run at least this many seconds (fits of a few ms are noisy on a shared
#: machine: more rounds, at most :data:`MAX_ROUNDS`).
ROUND_SECONDS = 2.0
MAX_ROUNDS = 40


def race(makers: dict, X, y, repeats: int) -> dict:
    """{side: (median CPU seconds, median wall seconds, last fitted estimator)}: a warm-up
    fit each, then rounds fitting every side in turn: ``repeats`` rounds, more (up to
    :data:`MAX_ROUNDS`) while they take less than :data:`ROUND_SECONDS` in all. CPU time
    (``time.process_time``, every thread of the process) is the work a fit does; wall time
    adds whatever the other jobs on this shared machine take from it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        for make in makers.values():
            make().fit(X, y)
        per_round = time.perf_counter() - t
        rounds = int(min(MAX_ROUNDS, max(repeats, ROUND_SECONDS / max(per_round, 1e-9))))
        cpu = {k: [] for k in makers}
        wall = {k: [] for k in makers}
        last = {}
        for _ in range(rounds):
            for k, make in makers.items():
                est = make()
                c, t = time.process_time(), time.perf_counter()
                est.fit(X, y)
                wall[k].append(time.perf_counter() - t)
                cpu[k].append(time.process_time() - c)
                last[k] = est
    return {k: (statistics.median(cpu[k]), statistics.median(wall[k]), last[k]) for k in makers}


def rehline_maker():
    try:
        from rehline import plq_Ridge_Classifier
    except ImportError:
        return None
    return lambda: plq_Ridge_Classifier(loss={"name": "svm"}, C=1.0)


def models(Xtr, ytr):
    """(model, objective(w), {reference: maker}, ours maker, tight ermviz maker)."""
    X1 = with_ones(Xtr)
    C = 0.5
    tight = LogisticRegression(l1_ratio=1.0, C=C, solver="liblinear", tol=1e-10, max_iter=10**5)
    radius = float(np.abs(wb(tight.fit(Xtr, ytr))).sum())
    yield (
        f"l1 logistic (C={C}, radius={radius:.4g})",
        lambda w: logloss(X1, ytr, w),
        {"liblinear": lambda: LogisticRegression(l1_ratio=1.0, C=C, solver="liblinear")},
        lambda: E.ConstrainedLogisticRegression(radius=radius),
        lambda: E.ConstrainedLogisticRegression(radius=radius, tol=1e-10),
    )
    yield (
        "L2-SVM (squared hinge, C=1)",
        lambda w: svm_obj(X1, ytr, w, 1.0, True),
        {"LinearSVC": lambda: LinearSVC()},
        lambda: E.L2SVMClassifier(),
        lambda: E.L2SVMClassifier(tol=1e-12),
    )
    refs = {"LinearSVC hinge": lambda: LinearSVC(loss="hinge")}
    if rehline_maker() is not None:
        refs["rehline package"] = rehline_maker()
    yield (
        "hinge SVM (C=1)",
        lambda w: svm_obj(X1, ytr, w, 1.0, False),
        refs,
        lambda: E.PLQClassifier(),
        lambda: E.PLQClassifier(method="rehline", tol=1e-9, max_iter=10**5),
    )


#: The trace columns that count a method's work (the measured reason of a ratio).
WORK_COLUMNS = ("data_passes", "hvps", "epoch", "coord_updates")


def work(est, X, y) -> str:
    """What ermviz's fit did, from its trace (a refit with ``keep_trace=True``)."""
    from sklearn.base import clone

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = clone(est).set_params(keep_trace=True).fit(X, y)
    last = traced.trace_.iloc[-1]
    counts = [f"{c} {last[c]:.4g}" for c in WORK_COLUMNS if c in traced.trace_.columns]
    return ", ".join(counts) or "no work counters"


def reference_work(est) -> str:
    """A reference's iterations, and whether its iteration cap ended it."""
    n_iter = int(np.max(np.atleast_1d(getattr(est, "n_iter_", -1))))
    cap = getattr(est, "max_iter", None)
    capped = cap is not None and n_iter >= cap
    return f"{n_iter} iterations" + (
        f" (its max_iter={cap}: stopped unconverged)" if capped else ""
    )


def comparisons(rep: Report, names: list[str], repeats: int, checks: list) -> list[list]:
    summary = []
    for name in names:
        Xtr, ytr, Xte, yte = split(name)
        rep.emit(f"\n== {name}: train {Xtr.shape[0]} x {Xtr.shape[1]}, test {Xte.shape[0]}")
        for model, objective, refs, ours, tight in models(Xtr, ytr):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                best = objective(wb(tight().fit(Xtr, ytr)))
            res = race({**refs, "ermviz": ours}, Xtr, ytr, repeats)
            objs = {k: objective(wb(e)) for k, (_, _, e) in res.items()}
            best = min(best, *objs.values())
            t_ours, m_ours, est = res["ermviz"]  # CPU, wall
            acc_ours = est.score(Xte, yte)
            rows = []
            for k, (t, m, e) in res.items():
                acc = e.score(Xte, yte)
                excess = (objs[k] - best) / abs(best)
                if k == "ermviz":
                    rows.append([f"ermviz {est.method_}", t, m, objs[k], excess, acc, "-", "-"])
                else:
                    rows.append([k, t, m, objs[k], excess, acc, t_ours / t, acc_ours - acc])
            rep.emit(f"-- {model}")
            rep.emit(
                table(
                    ["side", "cpu s", "wall s", "objective", "excess", "acc", "ratio",
                     "acc diff"], rows,
                )
            )  # fmt: skip
            rep.emit(
                f"   ermviz: {est.n_iter_} iterations, status {est.status_}, solver "
                f"{est.fit_time_:.4g} s (wall) of {m_ours:.4g} s; {work(est, Xtr, ytr)}"
            )
            for k, (_, _, e) in res.items():
                if k != "ermviz":
                    rep.emit(f"   {k}: {reference_work(e)}")
            for k, (t, m, e) in res.items():
                if k == "ermviz":
                    continue
                ratio, diff = t_ours / t, acc_ours - e.score(Xte, yte)
                summary.append(
                    [name, model.split(" (")[0], k, est.method_, ratio, m_ours / m, diff]
                )
                checks.append(
                    (f"{name}, {model}: ermviz/{k} time ratio <= {RATIO_MAX:g}",
                     ratio <= RATIO_MAX, f"{ratio:.3g}")
                )  # fmt: skip
                checks.append(
                    (f"{name}, {model}: test accuracy within {ACC_TOL:g} of {k}",
                     abs(diff) <= ACC_TOL, f"{diff:+.4f}")
                )  # fmt: skip
    return summary


def fixed_cost(rep: Report, checks: list, fits: int = 300) -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 5))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(100) > 0, 1, -1)
    yr = X @ rng.standard_normal(5) + 0.1 * rng.standard_normal(100)
    makers = {"LogisticRegression": (LogisticRegression, y)}
    for name in E.__all__:
        cls = getattr(E, name)
        makers[name] = (cls, y if cls._classifier else yr)
    times = {k: [] for k in makers}  # CPU seconds
    wall = {k: [] for k in makers}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for cls, target in makers.values():
            cls().fit(X, target)
        for _ in range(fits):
            for k, (cls, target) in makers.items():
                est = cls()
                c, t = time.process_time(), time.perf_counter()
                est.fit(X, target)
                wall[k].append(time.perf_counter() - t)
                times[k].append(time.process_time() - c)
    ref = statistics.median(times["LogisticRegression"])
    rows = []
    for k, v in times.items():
        med = statistics.median(v)
        rows.append([k, 1e3 * med, 1e3 * min(v), med / ref, 1e3 * statistics.median(wall[k])])
        if k != "LogisticRegression":
            checks.append(
                (f"fixed cost per fit on 100 x 5: {k} <= {FIXED_MAX:g}x LogisticRegression's",
                 med / ref <= FIXED_MAX, f"{med / ref:.2f}")
            )  # fmt: skip
    rep.emit(f"\n== fixed cost per fit, 100 x 5 dense, defaults, {fits} interleaved fits each "
             "(CPU ms; wall ms beside)")  # fmt: skip
    rep.emit(
        table(["estimator", "median ms", "min ms", "median / LogisticRegression",
               "wall median ms"], rows)
    )  # fmt: skip


def raw_wdbc(rep: Report, checks: list) -> None:
    from sklearn.exceptions import ConvergenceWarning

    ds = load_dataset("wdbc")
    rows = []
    for name in E.__all__:
        cls = getattr(E, name)
        X, y = (ds.X, ds.y) if cls._classifier else (ds.X[:, 1:], ds.X[:, 0])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t = time.perf_counter()
            est = cls().fit(X, y)
            t = time.perf_counter() - t
        scaling = sum("badly scaled" in str(w.message) for w in caught)
        conv = sum(w.category is ConvergenceWarning for w in caught)
        from ermviz.estimators._base import default_max_iter

        budget = default_max_iter(est.method_, X.shape[0])
        rows.append([name, est.method_, scaling, conv, est.status_, est.n_iter_, budget, t])
        checks.append(
            (f"raw wdbc: {name} warns at most once about scaling and ends within its budget",
             scaling <= 1 and est.n_iter_ <= budget, f"{scaling} warning(s), "
             f"{est.n_iter_}/{budget} iterations")
        )  # fmt: skip
    rep.emit("\n== raw (unscaled) wdbc, defaults (regressors: column 0 from the others)")
    rep.emit(
        table(
            ["estimator", "method", "scaling warn", "conv warn", "status", "iters", "budget",
             "s"], rows,
        )
    )  # fmt: skip


CHILD = """
import hashlib, json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from sklearn.utils.estimator_checks import check_estimator
from ermviz import estimators as E
cls = getattr(E, sys.argv[1])
t = time.perf_counter()
res = check_estimator(cls(), on_fail=None)
seconds = time.perf_counter() - t
bad = sorted(r["check_name"] for r in res if r["status"] == "failed")
rng = np.random.default_rng(0)
X = 100.0 + 10.0 * rng.standard_normal((60, 4))
y = rng.integers(0, 2, 60) if cls._classifier else rng.standard_normal(60)
est = cls().fit(X, y)
coef = getattr(est, "coef_", None)
coef = est.dual_coef_ if coef is None else coef
digest = hashlib.sha256(np.ascontiguousarray(coef).tobytes()).hexdigest()[:12]
print(json.dumps({"seconds": seconds, "checks": len(res), "failed": bad, "digest": digest,
                  "n_iter": est.n_iter_}))
"""


def estimator_checks(rep: Report, checks: list) -> None:
    rows = []
    for name in E.__all__:
        runs = []
        for _ in range(2):
            out = subprocess.run(
                [sys.executable, "-c", CHILD, name], capture_output=True, text=True, cwd=REPO
            )
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        a, b = runs
        same = a["failed"] == b["failed"] and a["digest"] == b["digest"]
        rows.append([name, a["checks"], a["seconds"], b["seconds"], len(a["failed"]),
                     f"{a['digest']}/{b['digest']}"])  # fmt: skip
        worst = max(a["seconds"], b["seconds"])
        checks.append(
            (f"check_estimator({name}()) under {CHECK_SECONDS:g} s, no check failed, "
             "same result twice", worst < CHECK_SECONDS and not a["failed"] and same,
             f"{a['seconds']:.1f} s, {b['seconds']:.1f} s, failed {a['failed']}")
        )  # fmt: skip
    rep.emit("\n== check_estimator at the defaults, twice, each in its own process")
    rep.emit(table(["estimator", "checks", "run 1 s", "run 2 s", "failed", "fit digest"], rows))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", help="also write the report to this file")
    ap.add_argument("--skip-checks", action="store_true", help="skip check_estimator")
    ap.add_argument("--data", nargs="+", default=list(DATASETS), help="data sets to race on")
    args = ap.parse_args(argv)
    import sklearn
    from threadpoolctl import threadpool_limits

    t0 = time.perf_counter()
    rep = Report()
    try:
        import rehline

        rv = getattr(rehline, "__version__", "installed")
    except ImportError:
        rv = "not installed"
    rep.emit(
        f"bench_estimators.py: core {core_version()}, scikit-learn {sklearn.__version__}, "
        f"rehline {rv}, load {load_str()}; median of {args.repeats} interleaved rounds after "
        "a warm-up fit; one BLAS/OpenMP thread"
    )
    checks: list = []
    with threadpool_limits(1):
        summary = comparisons(rep, args.data, args.repeats, checks)
        rep.emit("\n== summary: time ratio ermviz / reference (medians of CPU and of wall "
                 "time; <= 1: ermviz faster), test accuracy difference")  # fmt: skip
        rep.emit(
            table(["data", "model", "reference", "ermviz method", "cpu ratio", "wall ratio",
                   "acc diff"], summary)
        )  # fmt: skip
        fixed_cost(rep, checks)
        raw_wdbc(rep, checks)
    if not args.skip_checks:
        estimator_checks(rep, checks)
    rep.finish(checks, t0)
    if args.out:
        rep.write(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
