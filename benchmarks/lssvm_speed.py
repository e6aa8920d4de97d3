"""Speed of the LS-SVM reduced CG (``cg-reduced``, cached kernel) against direct solves.

Issue 13's acceptance point: reduced CG (Chu, Ong & Keerthi 2005) with the kernel matrix
cached, run to relative duality gap 1e-6, against

* scipy's Cholesky solve of the same bordered system: ``Q = K + I / C`` formed from the
  same kernel, ``cho_factor(Q)`` and two ``cho_solve`` (``Q eta = y``, ``Q nu = 1``), then
  ``b = 1^T eta / 1^T nu`` and ``alpha = eta - b nu`` (ALGORITHMS.md E.3, solved directly);
* scikit-learn's ``KernelRidge(alpha=1/C, kernel="rbf", gamma=1/(2 sigma2))``, whose
  ``fit`` forms the kernel and solves ``Q c = y``: the same matrix, without the bias
  (its ``dual_coef_`` is the ``eta`` above, which is checked);

on the first n = 2000 and 5000 rows of a real binary set (default ijcnn1), sigma2 by the
median heuristic (the problem's ``sigma2=0``), log10 C in {-2, 0, 2} (plus off-grid rows
that bracket the crossover). Target: at least as fast as Cholesky wherever CG needs
fewer than n/10 iterations.

Timed separately: our set-up (problem object with sigma2 given + ``build_solver``, which
forms and caches the kernel matrix with the numba kernel) and our solve (``advance``
until converged); numpy's kernel formation for the direct solves (BLAS ``X X^T``, then
in place) and the factorization + solves. Every figure is a ratio of timings taken in
the same process, best of ``--repeats`` rounds in which the contenders alternate (the
machine is shared and noisy); BLAS and OpenMP are limited to one thread (environment
variables set before numpy is imported, and threadpoolctl), like our numba kernels,
which are single-threaded. Diagnostics: one BLAS product ``K v`` (numpy ``dgemv``, and
scipy's ``dsymv`` on the lower triangle) per n, the floor of a CG iteration with a BLAS
product, to say how far a faster product could move the crossover.

Usage::

    export ERMVIZ_DATA=/work/shared/datasets ERMVIZ_OFFLINE=1
    .venv/bin/python benchmarks/lssvm_speed.py                     # ~5 min
    .venv/bin/python benchmarks/lssvm_speed.py --out benchmarks/results/lssvm_speed.txt
    .venv/bin/python benchmarks/lssvm_speed.py --sizes 2000 --logc -2,0,2 --extra-logc ""
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy is imported: one BLAS thread for everyone

import argparse  # noqa: E402
import io  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.linalg as sla  # noqa: E402
import scipy.sparse as sp  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from bench_common import core_version  # noqa: E402
from bench_common import table as _table  # noqa: E402

#: Files whose digests the header records (the code the figures depend on).
LSSVM_CODE = ("solvers/lssvm.py", "ermviz/families/lssvm/methods.py")


def table(headers: list[str], rows: list[list[object]]) -> str:
    return _table(headers, rows, sci_digits=2)


os.environ.setdefault("ERMVIZ_DATA", str(REPO.parent / "shared" / "datasets"))
os.environ.setdefault("ERMVIZ_OFFLINE", "1")

from threadpoolctl import threadpool_info, threadpool_limits  # noqa: E402

from ermviz.data import Dataset, load_dataset  # noqa: E402
from ermviz.registry import build_problem, build_solver  # noqa: E402
from solvers.tags import STATUS_CONVERGED, STATUS_RUNNING  # noqa: E402

GAP = 1e-6  # relative duality gap (P - D) / D, the paper's stopping rule
D_AGREE = 1e-6  # relative agreement of D between reduced CG and the Cholesky solve
CHUNK = 256  # rows per advance call: the solver's record buffer, never reallocated


# --------------------------------------------------------------------------- helpers
def numpy_kernel(X, sigma2: float) -> np.ndarray:
    """``K_ij = exp(-||x_i - x_j||^2 / (2 sigma2))`` with numpy: one BLAS ``X X^T``,
    then in place (the usual way to form a Gaussian kernel matrix with numpy)."""
    if sp.issparse(X):
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        G = (X @ X.T).toarray()
    else:
        sq = np.einsum("ij,ij->i", X, X)
        G = X @ X.T
    G *= -2.0
    G += sq[:, None]
    G += sq[None, :]
    np.maximum(G, 0.0, out=G)
    G *= -1.0 / (2.0 * sigma2)
    np.exp(G, out=G)
    return G


def dual_value(K: np.ndarray, y: np.ndarray, alpha: np.ndarray, C: float) -> float:
    """``D = y^T alpha - alpha^T (K + I / C) alpha / 2`` (numpy, independent of ours)."""
    return float(y @ alpha - 0.5 * (alpha @ (K @ alpha) + alpha @ alpha / C))


def best_time(fn, reps: int) -> float:
    best = math.inf
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


# --------------------------------------------------------------------------- contenders
def run_ours(ds: Dataset, C: float, sigma2: float) -> dict:
    """Reduced CG, kernel cached at set-up; set-up and solve timed separately."""
    t0 = time.perf_counter()
    pb = build_problem("lssvm", ds, C=C, sigma2=sigma2)
    s = build_solver(pb, "cg-reduced", "cg", {}, GAP)
    t1 = time.perf_counter()
    status = STATUS_RUNNING
    last = None
    while status == STATUS_RUNNING:
        rec, status = s.advance(CHUNK, 10**12)
        if rec.shape[0]:
            last = rec[-1]
    t2 = time.perf_counter()
    if status != STATUS_CONVERGED:
        raise RuntimeError(f"cg-reduced ended with status {status} at C={C:g}")
    if not s.cached:
        raise RuntimeError("cg-reduced did not cache the kernel matrix")
    return {
        "setup": t1 - t0,
        "solve": t2 - t1,
        "its": int(s.iteration),
        "gap": float(last[2]),
        "D_rec": float(last[7]),
        "alpha": s.iterate(),
        "solver": s,
    }


def run_cholesky(X, y: np.ndarray, C: float, sigma2: float) -> dict:
    """numpy kernel formation, then Q = K + I / C, cho_factor, two cho_solve, b, alpha."""
    n = y.shape[0]
    t0 = time.perf_counter()
    K = numpy_kernel(X, sigma2)
    t1 = time.perf_counter()
    K.flat[:: n + 1] += 1.0 / C  # Q, in place
    c = sla.cho_factor(K, lower=True, overwrite_a=True, check_finite=False)
    eta = sla.cho_solve(c, y, check_finite=False)
    nu = sla.cho_solve(c, np.ones(n), check_finite=False)
    b = eta.sum() / nu.sum()
    alpha = eta - b * nu
    t2 = time.perf_counter()
    return {"kernel": t1 - t0, "factor": t2 - t1, "alpha": alpha, "b": b, "eta": eta}


def run_krr(X, y: np.ndarray, C: float, sigma2: float) -> dict:
    from sklearn.kernel_ridge import KernelRidge

    t0 = time.perf_counter()
    m = KernelRidge(alpha=1.0 / C, kernel="rbf", gamma=1.0 / (2.0 * sigma2)).fit(X, y)
    t1 = time.perf_counter()
    return {"fit": t1 - t0, "coef": np.asarray(m.dual_coef_).ravel()}


def warm_up() -> None:
    """JIT compilation / cache loading and first-call costs, outside every timing."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    ds = Dataset(name="warm-up", X=X, y=y, task="binary", source="benchmark")
    run_ours(ds, 1.0, 2.0)
    run_cholesky(X, y, 1.0, 2.0)
    run_krr(X, y, 1.0, 2.0)


# --------------------------------------------------------------------------- main part
def measure(name: str, sizes: list[int], grid: list[float], extra: list[float], reps: int):
    full = load_dataset(name, with_test=False)
    rows, checks, cross, diag = [], [], [], []
    for n in sizes:
        if n > full.X.shape[0]:
            raise SystemExit(f"{name} has {full.X.shape[0]} rows, fewer than n = {n}")
        X = full.X[:n]
        X = X.copy() if sp.issparse(X) else np.array(X)
        y = np.array(full.y[:n])
        ds = Dataset(name=f"{name}[:{n}]", X=X, y=y, task="binary", source=full.source)
        sigma2 = build_problem("lssvm", ds, sigma2=0.0).sigma2  # median heuristic
        Kref = numpy_kernel(X, sigma2)  # for the checks only
        v = np.random.default_rng(1).standard_normal(n)
        t_gemv = best_time(lambda Kref=Kref, v=v: Kref @ v, 20)
        # Kref.T: the same symmetric matrix, Fortran-ordered, so f2py passes it uncopied.
        t_symv = best_time(lambda Kt=Kref.T, v=v: sla.blas.dsymv(1.0, Kt, v, lower=1), 20)
        diag.append(
            {
                "n": n,
                "sigma2": sigma2,
                "pos": float(np.mean(y > 0)),
                "gemv": t_gemv,
                "symv": t_symv,
                "mem": 8.0 * n * n / 2**20,
            }
        )
        per_it = []
        for log_c in [*grid, *extra]:
            C = 10.0**log_c
            print(f"  [{name} n={n}] log10 C = {log_c:g} ...", file=sys.stderr, flush=True)
            best = {"setup": math.inf, "solve": math.inf, "kernel": math.inf}
            best |= {"factor": math.inf, "fit": math.inf}
            its = None
            for _ in range(reps):  # the three contenders alternate within each round
                o = run_ours(ds, C, sigma2)
                if its is not None and o["its"] != its:
                    raise RuntimeError("reduced CG is not deterministic across repeats")
                its = o["its"]
                best["setup"] = min(best["setup"], o["setup"])
                best["solve"] = min(best["solve"], o["solve"])
                kmax = float(np.abs(o["solver"]._K - Kref).max())  # cached kernel vs numpy
                del o["solver"]
                ch = run_cholesky(X, y, C, sigma2)
                best["kernel"] = min(best["kernel"], ch["kernel"])
                best["factor"] = min(best["factor"], ch["factor"])
                kr = run_krr(X, y, C, sigma2)
                best["fit"] = min(best["fit"], kr["fit"])
            d_ours = dual_value(Kref, y, o["alpha"], C)
            d_chol = dual_value(Kref, y, ch["alpha"], C)
            rel_d = abs(d_ours - d_chol) / abs(d_chol)
            rel_rec = abs(o["D_rec"] - d_ours) / abs(d_ours)
            rel_eta = float(np.linalg.norm(kr["coef"] - ch["eta"]) / np.linalg.norm(ch["eta"]))
            on_grid = log_c in grid
            solve_ratio = best["factor"] / best["solve"]
            total_ratio = (best["kernel"] + best["factor"]) / (best["setup"] + best["solve"])
            krr_ratio = best["fit"] / (best["setup"] + best["solve"])
            under = its < n / 10
            verdict = ("PASS" if solve_ratio >= 1.0 else "FAIL") if under else "n/a"
            verdict_t = ("PASS" if total_ratio >= 1.0 else "FAIL") if under else "n/a"
            per_it.append(best["solve"] / max(its, 1))
            rows.append(
                [
                    n,
                    f"{log_c:g}" + ("" if on_grid else "*"),
                    its,
                    f"{its / n:.3f}",
                    best["solve"],
                    best["setup"],
                    best["factor"],
                    best["kernel"],
                    best["fit"],
                    solve_ratio,
                    total_ratio,
                    krr_ratio,
                    verdict,
                    verdict_t,
                ]
            )
            checks.append(
                (
                    on_grid,
                    n,
                    log_c,
                    o["gap"],
                    d_ours,
                    d_chol,
                    rel_d,
                    rel_rec,
                    rel_eta,
                    kmax,
                    float(abs(o["alpha"].sum())),
                )
            )
            sys.stdout.flush()
        t_it = float(np.median(per_it))
        chol = [r[6] for r in rows if r[0] == n]
        kern = [r[7] for r in rows if r[0] == n]
        setup = [r[5] for r in rows if r[0] == n]
        t_chol = float(np.median(chol))
        t_over = float(np.median(np.array(kern) + np.array(chol) - np.array(setup)))
        cross.append(
            {
                "n": n,
                "t_it": t_it,
                "t_chol": t_chol,
                "k_solve": t_chol / t_it,
                "k_total": max(t_over, 0.0) / t_it,  # 0: never (set-up alone is slower)
                "k_gemv": t_chol / diag[-1]["gemv"],
                "k_symv": t_chol / diag[-1]["symv"],
            }
        )
        del Kref
    return rows, checks, cross, diag


def report(name, sizes, grid, extra, reps, note="") -> int:
    print("LS-SVM reduced CG (cg-reduced, cached kernel) against scipy Cholesky and")
    print("scikit-learn KernelRidge (ratios of timings measured in the same run)")
    print(
        f"started {time.strftime('%Y-%m-%d %H:%M:%S')}, {os.cpu_count()} cores,"
        f" load average {tuple(round(x, 2) for x in os.getloadavg())}"
        + (f"; {note}" if note else "")
    )
    print(f"core: {core_version(digests=('solvers/lssvm.py', 'ermviz/families/lssvm/methods.py'))}")
    import numba
    import sklearn

    print(
        f"numpy {np.__version__}, scipy {scipy.__version__}, scikit-learn {sklearn.__version__},"
        f" numba {numba.__version__}"
    )
    libs = sorted({f"{i['internal_api']} {i.get('version')}: {i['num_threads']} thread(s)"
                   for i in threadpool_info()})  # fmt: skip
    print("thread pools inside the timings: " + "; ".join(libs))
    warm_up()
    rows, checks, cross, diag = measure(name, sizes, grid, extra, reps)

    print(f"\n=== data: first n rows of {name}; sigma2 by the median heuristic (sigma2=0)")
    print(
        table(
            ["n", "sigma2", "share +1", "K MB", "dgemv K v ms", "dsymv K v ms"],
            [
                [d["n"], d["sigma2"], d["pos"], d["mem"], d["gemv"] * 1e3, d["symv"] * 1e3]
                for d in diag
            ],
        )
    )
    print(
        f"\n=== times (best of {reps}); reduced CG to relative gap {GAP:g}; log10 C marked *"
        " is off the acceptance grid (added to bracket the crossover)"
    )
    print(
        "ours solve = advance() until converged; ours set-up = problem (sigma2 given) +"
        " build_solver (numba kernel matrix, cached);"
    )
    print(
        "chol = Q = K + I/C, cho_factor + 2 cho_solve + b, alpha; kernel = numpy formation"
        " of K; KRR = KernelRidge.fit (kernel + one Cholesky solve, no bias)"
    )
    print(
        "chol/ours = chol / ours solve; total = (kernel + chol) / (set-up + solve);"
        " KRR/ours = KRR fit / (set-up + solve); target verdicts only where its < n/10"
    )
    print(
        table(
            [
                "n",
                "log10 C",
                "CG its",
                "its/n",
                "ours solve s",
                "ours set-up s",
                "chol s",
                "kernel s",
                "KRR fit s",
                "chol/ours",
                "total",
                "KRR/ours",
                "target (solve)",
                "target (total)",
            ],
            rows,
        )
    )
    print("\n=== checks: same solution")
    print(
        "D by numpy from each alpha (independent of our kernels); rel dD = |D_ours - D_chol|"
        f" / D_chol <= {D_AGREE:g}; rec = our recorded D against numpy's at our alpha;"
    )
    print(
        "KRR eta = ||KernelRidge dual_coef_ - eta|| / ||eta|| (eta: Cholesky's Q eta = y);"
        " K max diff = max |cached kernel - numpy kernel|"
    )
    ok_all = True
    crow = []
    for on_grid, n, log_c, gap, d_o, d_c, rel_d, rel_rec, rel_eta, kmax, asum in checks:
        ok = rel_d <= D_AGREE and rel_eta <= 1e-6 and gap <= GAP
        ok_all &= ok
        crow.append(
            [
                n,
                f"{log_c:g}" + ("" if on_grid else "*"),
                gap,
                d_o,
                d_c,
                rel_d,
                rel_rec,
                rel_eta,
                kmax,
                asum,
                "PASS" if ok else "FAIL",
            ]
        )
    print(
        table(
            [
                "n",
                "log10 C",
                "our gap",
                "D ours",
                "D chol",
                "rel dD",
                "rec",
                "KRR eta",
                "K max diff",
                "|1^T alpha|",
                "check",
            ],
            crow,
        )
    )
    print("\n=== crossover (iterations at which reduced CG's solve equals the Cholesky solve)")
    print(
        "k_x = chol s / (ours s per iteration, median over the C values); total: (kernel +"
        " chol - ours set-up) / (s per iteration); with a BLAS product instead of ours:"
        " chol s / (one dgemv or dsymv), the floor of a CG iteration"
    )
    print(
        table(
            [
                "n",
                "n/10",
                "ours ms/it",
                "chol s",
                "k_x solve",
                "k_x total",
                "k_x/n",
                "k_x dgemv",
                "k_x dsymv",
            ],
            [
                [
                    c["n"],
                    c["n"] // 10,
                    c["t_it"] * 1e3,
                    c["t_chol"],
                    c["k_solve"],
                    c["k_total"],
                    c["k_solve"] / c["n"],
                    c["k_gemv"],
                    c["k_symv"],
                ]
                for c in cross
            ],
        )
    )
    grid_rows = [r for r in rows if not str(r[1]).endswith("*")]
    under = [r for r in grid_rows if r[12] != "n/a"]
    fails = [r for r in under if r[12] == "FAIL"]
    print("\n=== Checks")
    print(
        f"  {'PASS' if ok_all else 'FAIL'}  same solution: rel dD <= {D_AGREE:g}, KernelRidge"
        " coefficients = Cholesky eta, our gap <= tolerance, every row"
    )
    print(
        f"  {'PASS' if not fails else 'FAIL'}  target (solve): reduced CG at least as fast as"
        f" Cholesky wherever its < n/10 (log10 C in {{{', '.join(f'{c:g}' for c in grid)}}}):"
        f" {len(under) - len(fails)}/{len(under)} rows"
        + (
            "; fails at " + ", ".join(f"n={r[0]} log10 C={r[1]} ({r[2]} its)" for r in fails)
            if fails
            else ""
        )
    )
    for c in cross:
        print(
            f"  crossover n={c['n']}: reduced CG beats the Cholesky solve below about"
            f" {c['k_solve']:.0f} iterations ({c['k_solve'] / c['n']:.3f} n, against the target's"
            f" n/10 = {c['n'] // 10}); counting set-up on both sides, below about"
            f" {c['k_total']:.0f}; with a BLAS dgemv product it would be about"
            f" {c['k_gemv']:.0f} (dsymv {c['k_symv']:.0f})"
        )
    print(
        f"\nfinished {time.strftime('%Y-%m-%d %H:%M:%S')}, load average"
        f" {tuple(round(x, 2) for x in os.getloadavg())}"
    )
    return 0


class Tee(io.TextIOBase):
    def __init__(self, *streams):
        self.streams = streams

    def write(self, s: str) -> int:
        for st in self.streams:
            st.write(s)
        return len(s)

    def flush(self) -> None:
        for st in self.streams:
            st.flush()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="ijcnn1", help="a binary catalog set (first n rows)")
    ap.add_argument("--sizes", default="2000,5000")
    ap.add_argument("--logc", default="-2,0,2", help="the acceptance grid of log10 C")
    ap.add_argument("--extra-logc", default="1,3", help="off-grid log10 C (crossover)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", help="also write the output here (atomically, at the end)")
    ap.add_argument("--note", default="", help="a line on the machine's state for the header")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    grid = [float(s) for s in args.logc.split(",") if s]
    extra = [float(s) for s in args.extra_logc.split(",") if s and float(s) not in grid]
    buf = io.StringIO()
    real = sys.stdout
    sys.stdout = Tee(real, buf)
    try:
        with threadpool_limits(limits=1):
            rc = report(args.dataset, sizes, grid, extra, args.repeats, args.note)
    finally:
        sys.stdout = real
    if args.out:
        out = Path(args.out)
        fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(buf.getvalue())
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
        print(f"written to {out}", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
