"""Fit time of ermviz.estimators against scikit-learn's and the ``rehline`` package's
estimators of the same models, at matched objectives, in one run.

Models (same problem for every row of a block, offset appended as a penalized/constrained
constant feature everywhere):

* l1 logistic regression: ``LogisticRegression(l1_ratio=1.0, C)`` by liblinear and by saga
  (offset as an appended column, so it is penalized like liblinear's) against
  ``ConstrainedLogisticRegression(radius=||(w, b)||_1 of the tight liblinear solution)``
  (pfw, afw): the constrained and penalized forms share their solution. Objective: mean
  logistic loss; "excess" is its excess over the best value found (a penalized solver
  stopped early may end slightly outside the ball, with a lower loss than the ball's
  optimum: saga on wdbc, 2.6e-5).
* L2-SVM (squared hinge): ``LinearSVC(loss="squared_hinge", C/2)`` against
  ``L2SVMClassifier(C)`` (pfw on the dual; same solution, see its docstring) and
  ``PLQClassifier(loss="svm2", C/2)`` (rehline, ipm). Objective: ``1/2 ||w||^2 +
  (C/2) sum sqhinge``.
* hinge SVM: ``LinearSVC(loss="hinge", C)`` and ``rehline.plq_Ridge_Classifier(svm, C)``
  against ``PLQClassifier(loss="svm", C)``. Objective ``1/2 ||w||^2 + C sum hinge``.

Every solver runs at a tolerance that reaches the best objective to a relative 1e-5 or
better (the "excess" column shows it); times are the median of ``--repeats`` fits after a
warm-up fit (numba compilation excluded). Ratios are ermviz's time over the reference's.

    .venv/bin/python benchmarks/bench_estimators.py [--repeats 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from bench_common import REPO, Report, core_version, load_str, seeded_subset, table

sys.path.insert(0, str(REPO))

from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from ermviz import estimators as E
from ermviz.data import load_dataset


def with_ones(X):
    one = np.ones((X.shape[0], 1))
    return sp.hstack([X, one], format="csr") if sp.issparse(X) else np.hstack([X, one])


def wb(est) -> np.ndarray:
    return np.append(np.ravel(est.coef_), np.ravel(getattr(est, "intercept_", 0.0)))


def logloss(X1, y, w) -> float:
    z = y * np.asarray(X1 @ w).ravel()
    return float(np.mean(np.logaddexp(0.0, -z)))


def svm_obj(X1, y, w, C, squared) -> float:
    h = np.maximum(0.0, 1.0 - y * np.asarray(X1 @ w).ravel())
    return float(0.5 * w @ w + C * np.sum(h * h if squared else h))


def timed(make, X, y, repeats: int):
    make().fit(X, y)  # warm-up: numba compilation, caches
    times, est = [], None
    for _ in range(repeats):
        est = make()
        t = time.perf_counter()
        est.fit(X, y)
        times.append(time.perf_counter() - t)
    return statistics.median(times), est


def datasets():
    a1a = load_dataset("a1a")
    yield "a1a", a1a.X, a1a.y
    ij = seeded_subset(load_dataset("ijcnn1-20k"), 5000, 0)
    yield "ijcnn1-20k, 5000 seeded rows", ij.X, ij.y
    wdbc = load_dataset("wdbc")
    yield "wdbc (std)", StandardScaler().fit_transform(wdbc.X), wdbc.y


def blocks(name, X, y, repeats):
    """(model, [(solver, seconds, objective, is_ermviz)]) for one dataset."""
    X1 = with_ones(X)
    out = []
    # l1 logistic regression
    C = 0.5
    tight = LogisticRegression(l1_ratio=1.0, C=C, solver="liblinear", tol=1e-10, max_iter=100000)
    tight.fit(X, y)
    radius = float(np.abs(wb(tight)).sum())
    rows = []
    t, e = timed(
        lambda: LogisticRegression(l1_ratio=1.0, C=C, solver="liblinear", tol=1e-6), X, y, repeats
    )
    rows.append(("sklearn liblinear", t, logloss(X1, y, wb(e)), False))
    t, e = timed(
        lambda: LogisticRegression(
            l1_ratio=1.0, C=C, solver="saga", tol=1e-6, max_iter=100000, fit_intercept=False
        ),
        X1,
        y,
        repeats,
    )
    rows.append(("sklearn saga", t, logloss(X1, y, wb(e)[:-1]), False))
    for m in ("pfw", "afw"):
        t, e = timed(
            lambda m=m: E.ConstrainedLogisticRegression(radius=radius, method=m, tol=1e-7),
            X,
            y,
            repeats,
        )
        rows.append((f"ermviz {m}", t, logloss(X1, y, wb(e)), True))
    out.append((f"l1 logistic (C={C}, radius={radius:.3g})", rows))
    # L2-SVM
    C = 1.0
    rows = []
    t, e = timed(
        lambda: LinearSVC(C=C / 2, loss="squared_hinge", tol=1e-6, max_iter=100000), X, y, repeats
    )
    rows.append(("sklearn LinearSVC", t, svm_obj(X1, y, wb(e), C / 2, True), False))
    t, e = timed(lambda: E.L2SVMClassifier(C=C, method="pfw", tol=1e-6), X, y, repeats)
    rows.append(("ermviz L2SVM pfw", t, svm_obj(X1, y, wb(e), C / 2, True), True))
    for m in ("rehline", "ipm"):
        t, e = timed(
            lambda m=m: E.PLQClassifier(loss="svm2", C=C / 2, method=m, tol=1e-6), X, y, repeats
        )
        rows.append((f"ermviz PLQ {m}", t, svm_obj(X1, y, wb(e), C / 2, True), True))
    out.append((f"L2-SVM (squared hinge, C={C})", rows))
    # hinge SVM
    rows = []
    t, e = timed(lambda: LinearSVC(C=C, loss="hinge", tol=1e-6, max_iter=100000), X, y, repeats)
    rows.append(("sklearn LinearSVC", t, svm_obj(X1, y, wb(e), C, False), False))
    try:
        from rehline import plq_Ridge_Classifier

        t, e = timed(
            lambda: plq_Ridge_Classifier(
                loss={"name": "svm"}, C=C, tol=1e-6, max_iter=100000, fit_intercept=True
            ),
            X,
            y,
            repeats,
        )
        rows.append(("rehline package", t, svm_obj(X1, y, wb(e), C, False), False))
    except ImportError:
        pass
    t, e = timed(lambda: E.PLQClassifier(loss="svm", C=C, tol=1e-6), X, y, repeats)
    rows.append(("ermviz PLQ rehline", t, svm_obj(X1, y, wb(e), C, False), True))
    out.append((f"hinge SVM (C={C})", rows))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", help="also write the report to this file")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    rep = Report()
    import sklearn

    try:
        import rehline

        rv = rehline.__version__ if hasattr(rehline, "__version__") else "installed"
    except ImportError:
        rv = "not installed"
    rep.emit(
        f"bench_estimators.py: core {core_version()}, scikit-learn {sklearn.__version__}, "
        f"rehline {rv}, load {load_str()}, median of {args.repeats} fits after a warm-up"
    )
    checks = []
    for name, X, y in datasets():
        rep.emit(f"\n== {name}: n={X.shape[0]}, p={X.shape[1]}")
        for model, rows in blocks(name, X, y, args.repeats):
            best = min(r[2] for r in rows)
            refs = [r for r in rows if not r[3]]
            fastest_ref = min(refs, key=lambda r: r[1])
            lines = []
            for solver, t, obj, ours in rows:
                excess = (obj - best) / max(abs(best), 1e-300)
                ratio = t / fastest_ref[1]
                lines.append([solver, t, obj, excess, ratio if ours else float("nan")])
            rep.emit(f"-- {model}; ratio = time / {fastest_ref[0]}'s")
            rep.emit(table(["solver", "time s", "objective", "rel. excess", "ratio"], lines))
            worst = max((obj - best) / max(abs(best), 1e-300) for _, _, obj, _ in rows)
            checks.append(
                (f"{name}, {model}: objectives matched to 1e-4", worst <= 1e-4, f"{worst:.1e}")
            )
    rep.finish(checks, t0)
    if args.out:
        rep.write(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
