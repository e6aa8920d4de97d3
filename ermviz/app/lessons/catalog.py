"""The lessons, as data: one :class:`~ermviz.app.lessons.declaration.Lesson` declaration
each, in gallery order (:data:`LESSONS`), and the one a page without a query opens on
(:data:`FIRST_LESSON`). No logic: :mod:`ermviz.app.lessons` finds and loads them.

The figure in the comment above each declaration was measured on the 2-core development
machine (the lesson raced headless through the dashboard's model, as
``tests/test_lessons.py`` does, or the CLI with the same settings, one run at a time, where
the comment says so).

A new lesson is one more declaration here (about 40 lines) and nothing elsewhere.
"""

from __future__ import annotations

from ermviz.app.lessons.claims import (
    Above,
    Ahead,
    Cost,
    Decades,
    Falls,
    Level,
    OnBoundary,
    Reaches,
    Status,
    Steps,
)
from ermviz.app.lessons.declaration import Lesson, Promise

#: The three classic Frank-Wolfe variants, each with exact line search.
_FW3 = "run=fw:exact&run=afw:exact&run=pfw:exact"
#: The face-Newton run of the a1a lesson, and the work counter it is raced on.
_FACE_NEWTON = "FACE-NEWTON armijo"
_PASSES = "data_passes"

LESSONS: tuple[Lesson, ...] = (
    # Measured (headless, the three runs racing on a loaded 2-core machine): PFW reaches
    # 1e-8 at iteration 273 394 after 0.51 s of solver time, AFW at 398 426 after 0.65 s;
    # per decade from 1e-3 down PFW takes 35-60 k iterations, AFW 57-85 k (constant:
    # linear); at PFW's 0.51 s FW is 6 000x above it, and ends at its 2 000 000-iteration
    # cap at a best of 1.0e-5 (3.2-3.5 s of solver time; the race took 9-11 s of wall time
    # at load 2-4). The budget is iterations, not time: under load the three runs share
    # the cores, and the former 5 s time cap ended the race with PFW at only 0.15-0.39 s
    # of CPU time (issue 32); max_time only bounds a hang.
    Lesson(
        name="pairwise-wdbc",
        title="Pairwise FW converges, vanilla FW crawls",
        text=(
            "The SVM dual on the bundled WDBC set: away-step and pairwise FW can take mass "
            "off bad vertices, so they converge linearly and reach the 1e-8 gap in under two "
            "seconds of CPU time. Vanilla FW can only add vertices: by the CPU time the "
            "others are done, its gap has flattened out around 1e-5."
        ),
        query=(
            "dataset=wdbc&problem=svm-dual&p.C=100&standardize=1&tol=1e-8&max_iter=2000000"
            "&max_time=30&" + _FW3
        ),
        tab="race",
        promise=Promise(faster="PFW exact", slower="FW exact", factor=100.0, seconds=5.0),
        claims=(
            Decades("they converge linearly", "PFW exact", 1e-2, 1e-8, per=80_000),
            Decades("they converge linearly", "AFW exact", 1e-2, 1e-8, per=100_000),
            Reaches("in under two seconds of CPU time", "PFW exact", 1e-8, "cpu_s", 2.0),
            Reaches("in under two seconds of CPU time", "AFW exact", 1e-8, "cpu_s", 2.0),
            Level("flattened out around 1e-5", "FW exact", low=1e-6, high=1e-4, which="best"),
            Ahead("by the CPU time the others are done", "PFW exact", "FW exact", 100.0, tol=1e-8),
            Ahead("by the CPU time the others are done", "AFW exact", "FW exact", 100.0, tol=1e-8),
        ),
    ),
    # Measured (CLI): on toy-2d (radius 3), PFW converges in 4 iterations and AFW in 6
    # (gap <= 1e-17); FW stops at the 400-iteration cap with a gap of 3.1e-4.
    Lesson(
        name="zigzag-toy",
        title="FW's zig-zag on a drawing",
        text=(
            "Two features, an l1 ball you can see: the optimum lies inside an edge, so "
            "vanilla FW zig-zags between the two end vertices and slows to a crawl. Away and "
            "pairwise steps move along the edge and land on the optimum in a handful of steps."
        ),
        query="dataset=toy-2d&problem=logreg-l1&p.radius=3&tol=1e-6&max_iter=400&" + _FW3,
        tab="teaching",
        promise=Promise(
            faster="PFW exact", slower="FW exact", factor=100.0, seconds=20.0, axis="iteration"
        ),
        claims=(
            # The optimum (1.144, 1.856): l1 norm 3, two vertices active (an edge's ends).
            Level("the optimum lies inside an edge", "PFW exact", 2, 2, column="active_size"),
            Status("slows to a crawl", "FW exact", "max_iter"),
            Level("slows to a crawl", "FW exact", low=1e-5),
            Reaches("in a handful of steps", "PFW exact", 1e-6, within=10),
            Reaches("in a handful of steps", "AFW exact", 1e-6, within=10),
        ),
    ),
    # Measured (headless, loaded machine): PFW converges at iteration 417 after 0.04 s of
    # solver time; FW is at 2.0e-4 after 20 000 iterations and 1.0e-4 after 36 173 (its 5 s
    # budget there; 4.9e-5 after 104 738 alone, CLI); 70 us per step for FW, 97 for PFW.
    Lesson(
        name="pairwise-a1a",
        title="Linear convergence on real data: a1a logistic regression",
        text=(
            "The l1-constrained logistic regression on a1a (a catalog file bundled with "
            "ermviz). Pairwise FW "
            "reaches a gap of 1e-8 in a few hundred iterations and milliseconds of CPU time; "
            "vanilla FW is still above 1e-4 after 20 000 iterations. Set the two plots side "
            "by side, against iterations and against CPU time: both cost about the same per "
            "step."
        ),
        query=(
            "dataset=a1a&problem=logreg-l1&p.radius=10&standardize=0&tol=1e-8&max_time=5"
            "&run=fw:exact&run=pfw:exact"
        ),
        tab="race",
        promise=Promise(faster="PFW exact", slower="FW exact", factor=100.0, seconds=8.0),
        claims=(
            Reaches("in a few hundred iterations", "PFW exact", 1e-8, within=1000),
            Reaches("and milliseconds of CPU time", "PFW exact", 1e-8, "cpu_s", within=0.2),
            Above("still above 1e-4 after 20 000 iterations", "FW exact", 1e-4, 20_000),
            Cost(
                "both cost about the same per step",
                "FW exact",
                "PFW exact",
                1 / 3,
                3.0,
                per="iteration",
            ),
        ),
        background=("The l1-constrained logistic regression on a1a",),
    ),
    # Measured (headless, loaded machine): PFW exact converges after 0.60 s of solver time;
    # the open-loop 2/(k+2) ends at 5.3e-4 and the short step (a global L bound) at 2.9e-3
    # (1.8e-4 and 7.6e-4 after 5 s alone, CLI).
    Lesson(
        name="step-rules",
        title="Open-loop steps vs line search",
        text=(
            "One method, pairwise FW, three step rules. The open-loop rule 2/(k+2) ignores "
            "the objective and the short step trusts a worst-case curvature bound, so both "
            "crawl, still above 1e-5 when their budget ends; the exact line search takes the "
            "best step along each direction and converges in under two seconds of CPU time."
        ),
        query=(
            "dataset=wdbc&problem=svm-dual&p.C=100&standardize=1&tol=1e-8&max_time=5"
            "&run=pfw:diminishing&run=pfw:short&run=pfw:exact"
        ),
        tab="race",
        promise=Promise(faster="PFW exact", slower="PFW diminishing", factor=100.0, seconds=5.0),
        claims=(
            Level("still above 1e-5 when their budget ends", "PFW diminishing", low=1e-5),
            Level("still above 1e-5 when their budget ends", "PFW short", low=1e-5),
            Ahead("so both crawl", "PFW exact", "PFW short", 100.0, tol=1e-8),
            Reaches("in under two seconds of CPU time", "PFW exact", 1e-8, "cpu_s", within=2.0),
        ),
        background=("One method, pairwise FW, three step rules",),
    ),
    # On ijcnn1-20k, the seeded 20 000-row subsample of ijcnn1 bundled in datasets/ (the
    # full 49 990 rows are 790 KB even as .xz, the test split 2.6 MB more), measured
    # headless (as tests/test_lessons.py races it, no data folder, loaded 2-core machine,
    # three races): TUFW reaches the 1e-6 tol (8.5e-7) at iteration 277 987 after 2.3-2.7 s
    # of solver time, 8-10 us a step; FW-ada, 460-590 us a step (a full pass over the
    # rows), ends its 10 s budget at a best of 1.9e-5 to 3.9e-5 (10 700-21 500 steps); at
    # TUFW's 2.3 s FW-ada is at 8.7e-5, 100x above. On the full ijcnn1 (same race): TUFW
    # 9.9e-7 after 5.2 s, 17 us a step; FW-ada 1.6 ms a step, 1.2e-4 at TUFW's 5.2 s (118x
    # above): the same picture.
    Lesson(
        name="tufw-ijcnn1",
        title="TUFW vs FW-ada on ijcnn1",
        text=(
            "Logistic regression on 20 000 rows of ijcnn1 (a seeded sample bundled with "
            "ermviz). TUFW replaces the gradient by a Taylor model refreshed on a shrinking "
            "batch of rows, so a step costs far less than FW-ada's full pass; its gap falls "
            "ten times lower in the same CPU time."
        ),
        query=(
            "dataset=ijcnn1-20k&problem=logreg-l1&p.radius=10&standardize=0&tol=1e-6&max_time=10"
            "&run=tufw:taylor-adaptive&run=fw:adaptive"
        ),
        tab="race",
        promise=Promise(
            faster="TUFW taylor-adaptive", slower="FW adaptive", factor=10.0, seconds=15.0
        ),
        claims=(
            Cost(
                "a step costs far less",
                "TUFW taylor-adaptive",
                "FW adaptive",
                0.0,
                0.1,
                per="iteration",
            ),
            Ahead(
                "ten times lower in the same CPU time", "TUFW taylor-adaptive", "FW adaptive", 10.0
            ),
        ),
        background=("Logistic regression on 20 000 rows of ijcnn1",),
    ),
    # Measured (headless, as tests/test_lessons.py races it; bundled fairness-synthetic,
    # 100 000 rows x 40 features, standardized, C = 0.1, tol 1e-6, loaded machine):
    # ReHLine reaches 6.1e-7 at epoch 77 after 1.28 s of solver time (1.41 s alone, CLI),
    # 2 to 17 epochs per decade from 1e2 down; the interior-point method 5.5e-8 in 16
    # Newton steps, 2.8 s; constraint violation 0 at the end of both (the seed is fixed,
    # so epochs and steps are the same on any machine).
    Lesson(
        name="rehline-fairness",
        title="ReHLine: primal and dual meet, fairness constraint included",
        text=(
            "An SVM on 100 000 rows whose scores may not correlate with a sensitive feature "
            "beyond 0.01: the constraint holds at the end of both runs. The certificate is "
            "the duality gap, primal minus dual objective of a feasible point: ReHLine's "
            "coordinate descent closes it linearly, a decade every few epochs (its "
            "iterations), to 1e-6 in a second or two of CPU time, while the interior-point "
            "method gets there in under twenty Newton steps."
        ),
        query=(
            "dataset=fairness-synthetic&problem=plq&p.C=0.1&p.constraint=fairness&p.rho=0.01"
            "&standardize=1&tol=1e-6&max_time=120&run=rehline:cd&run=ipm:newton"
        ),
        tab="race",
        promise=Promise(faster="REHLINE cd", slower=None, factor=1.0, seconds=10.0),
        claims=(
            Level("the constraint holds", "REHLINE cd", high=1e-8, column="infeasibility"),
            Level("the constraint holds", "IPM newton", high=1e-8, column="infeasibility"),
            Decades("a decade every few epochs", "REHLINE cd", 1e2, 1e-6, per=20),
            Reaches("in a second or two of CPU time", "REHLINE cd", 1e-6, "cpu_s", within=3.0),
            Cost("in a second or two of CPU time", "REHLINE cd", None, 0.5, axis="cpu_s"),
            Reaches("in under twenty Newton steps", "IPM newton", 1e-6, within=20),
        ),
    ),
    # Measured (headless, load 4 on 2 cores): SMO counts 2n = 10 600 kernel evaluations an
    # iteration, reduced CG about 1.4e7. At equal kernel evaluations CG's best relative gap
    # is 10x below SMO's at 1e9, 216x at 1.5e9, 450x at 2e9 and 42 000x at 3e9 (3.2e-4
    # against 13.5); SMO is still at 4.8 after 20 s alone (CLI), CG converges at iteration
    # 284. The budget is iterations: SMO stops at 300 000 (3.18e9 kernel evaluations, 4.5 s
    # of solver time, best 12.7), CG converges at 284 (6.6 s; 3.3e-7); the race took 27 s
    # of wall time at load 4-5. A 15 s time cap ended SMO after only 4.8e8-1.95e9
    # evaluations under load, before CG had fallen (issue 32); max_time only bounds a hang.
    Lesson(
        name="lssvm-banana",
        title="LS-SVM: SMO vs conjugate gradients on banana",
        text=(
            "A kernel least-squares SVM with a large C = 1e4, which makes the system badly "
            "conditioned. SMO's two-coordinate steps crawl, its relative gap still above 1 at "
            "the end, while conjugate gradients on the reduced system get a hundred times "
            "lower for the same kernel evaluations, the cost that matters when the kernel "
            "matrix does not fit in memory (the x axis counts them)."
        ),
        query=(
            "dataset=banana&problem=lssvm&p.C=10000&standardize=0&tol=1e-6&max_iter=300000"
            "&max_time=120"
            "&run=smo:smo&run=cg-reduced:cg"
        ),
        tab="race",
        promise=Promise(
            faster="CG-REDUCED cg",
            slower="SMO smo",
            factor=100.0,
            seconds=15.0,
            axis="kernel_evals",
        ),
        x_axis="kernel_evals",
        claims=(
            Level("its relative gap still above 1 at the end", "SMO smo", low=1.0),
            Ahead(
                "a hundred times lower for the same kernel evaluations",
                "CG-REDUCED cg",
                "SMO smo",
                100.0,
                "kernel_evals",
            ),
        ),
        background=("A kernel least-squares SVM with a large C",),
    ),
    # Measured (headless, loaded machine): at equal solver time (3.4 s) the adaptive step's
    # running-average gap is 13x below the open-loop rule's (5.0e-4 against 7.0e-3); the
    # adaptive run's average never rises (the open-loop one's does, early on).
    Lesson(
        name="nonconvex-avg-gap",
        title="A non-convex loss: the running-average FW gap",
        text=(
            "A bounded, non-convex loss (1 - tanh) over an l1 ball: FW only finds stationary "
            "points, and the FW gap at the iterate jumps around. The certificate here is its "
            "running average; with the adaptive step (a backtracking estimate of the "
            "curvature) it falls steadily, at least five times lower than the open-loop "
            "rule's in the same CPU time."
        ),
        query=(
            "dataset=wdbc&problem=nonconvex-l1&p.radius=10&p.metric=avg-fw-gap&standardize=1"
            "&tol=1e-8&max_time=8&run=fw-nc:nonconvex&run=fw-nc:adaptive"
        ),
        tab="race",
        promise=Promise(
            faster="FW-NC adaptive", slower="FW-NC nonconvex", factor=5.0, seconds=15.0
        ),
        claims=(
            Falls("it falls steadily", "FW-NC adaptive"),
            Ahead(
                "five times lower than the open-loop rule's in the same CPU time",
                "FW-NC adaptive",
                "FW-NC nonconvex",
                5.0,
            ),
        ),
        background=("A bounded, non-convex loss",),
    ),
    # Measured (headless, m = 50, 1e6 samples, seed 0; the samples stream is seeded, so
    # these are the same on any machine): FO-MAML's meta-test loss falls to 2.29 at 3e5
    # samples, then jumps to 3.3 and ends at 3.15; BSGD's ends at 0.76 (best 0.76): 4.1x
    # below FO-MAML's end, 3.0x below its best. Solver time 5.6 s for BSGD, 2.3 s for
    # FO-MAML (loaded machine).
    Lesson(
        name="maml-bias",
        title="Meta-learning: BSGD vs first-order MAML's bias",
        text=(
            "MAML on sine-wave tasks with 50 inner samples per task. First-order MAML drops "
            "the Hessian term of the meta-gradient, so its steps take less CPU time but are "
            "biased: its meta-test loss falls to about 2.3, then climbs back and ends above 3. "
            "BSGD keeps the term and keeps falling, to below 1, ending at least three times "
            "below FO-MAML on the same samples."
        ),
        query=(
            "dataset=sine-tasks&problem=maml-sine&tol=1e-8&max_time=120&max_samples=1000000"
            "&run=bsgd:fixed:inner_batch=50&run=fo-maml:fixed:inner_batch=50"
        ),
        tab="race",
        promise=Promise(
            faster="BSGD fixed inner_batch=50",
            slower="FO-MAML fixed inner_batch=50",
            factor=2.0,
            seconds=40.0,
            axis="samples",
        ),
        x_axis="samples",
        claims=(
            Cost(
                "its steps take less CPU time",
                "BSGD fixed inner_batch=50",
                "FO-MAML fixed inner_batch=50",
                1.3,
            ),
            Level("falls to about 2.3", "FO-MAML fixed inner_batch=50", 2.1, 2.5, "best"),
            Level("ends above 3", "FO-MAML fixed inner_batch=50", low=3.0),
            Level("to below 1", "BSGD fixed inner_batch=50", high=1.0),
            Cost(
                "at least three times below FO-MAML",
                "FO-MAML fixed inner_batch=50",
                "BSGD fixed inner_batch=50",
                3.0,
                axis="certificate",
            ),
        ),
        background=("MAML on sine-wave tasks",),
    ),
    # Measured (headless): toy-2d's unconstrained logistic optimum has ||x|| = 2.24 (the
    # drawing's (1.18, 1.90)), so over the disc of radius 1.5 the optimum (0.826, 1.252)
    # is on the boundary (the gradient's norm there 0.060): FW reaches 3.4e-11 at
    # iteration 12, boosted FW 2.5e-12 at 14.
    Lesson(
        name="strongly-convex-disc",
        title="A round set: vanilla FW converges linearly",
        text=(
            "The zig-zag toy again, over an l2 disc of radius 1.5 instead of the l1 diamond. "
            "The unconstrained optimum lies outside the disc, so the optimum sits on its "
            "boundary, where the disc is strongly convex and each FW vertex points almost at "
            "the optimum. Vanilla FW converges linearly, to a gap of 1e-10 in about a dozen "
            "steps."
        ),
        query=(
            "dataset=toy-2d&problem=logreg-l1&p.radius=1.5&p.constraint=l2&tol=1e-10"
            "&max_iter=400&run=fw:exact&run=boosted:exact"
        ),
        tab="teaching",
        promise=Promise(faster="FW exact", slower=None, factor=1.0, seconds=20.0),
        claims=(
            OnBoundary("the optimum sits on its boundary", "FW exact", 1.5),
            Reaches("in about a dozen steps", "FW exact", 1e-10, within=16),
        ),
        background=("The zig-zag toy again",),
    ),
    # Measured (headless): PFW converges at iteration 417 with one LMO call per iteration;
    # BPCG at 416 with 417 LMO calls (it asks for the FW vertex at every step to compare),
    # 396 of its 416 steps local ones; lazified PFW at 413 with 30 LMO calls in all.
    Lesson(
        name="bpcg-lazy-a1a",
        title="BPCG and lazy PFW: local steps and fewer LMO calls",
        text=(
            "Pairwise FW asks the linear minimization oracle for a new vertex at every step. "
            "BPCG asks too, but most of its steps are local ones, moving weight between the "
            "vertices it already holds; lazified PFW calls the oracle only when no held vertex "
            "is good enough, a few dozen times in all where the others make hundreds of calls "
            "(the summary counts them)."
        ),
        query=(
            "dataset=a1a&problem=logreg-l1&p.radius=10&standardize=0&tol=1e-8&max_time=5"
            "&run=pfw:exact&run=bpcg:exact&run=pfw:exact:lazy=true"
        ),
        tab="race",
        promise=Promise(faster="PFW exact lazy=True", slower=None, factor=1.0, seconds=15.0),
        claims=(
            Steps("most of its steps are local ones", "BPCG exact", "local", 0.5),
            Level("a few dozen times in all", "PFW exact lazy=True", 10, 100, column="lmo_calls"),
            Level("the others make hundreds of calls", "BPCG exact", 200, column="lmo_calls"),
            Status("the others make hundreds of calls", "PFW exact", "converged"),
            Level("the others make hundreds of calls", "PFW exact", 200, column="lmo_calls"),
        ),
        background=("Pairwise FW asks the linear minimization oracle",),
    ),
    # Measured: PFW 417 steps, 425 passes; face-newton 12 steps, 77; PFW at 77 passes 3.3e-2.
    Lesson(
        name="newton-vs-pfw-a1a",
        title="First-order vs second-order on a1a: PFW vs face-Newton",
        text=(
            "The x axis counts passes over the data, the fair unit when one step of one method "
            "costs many of the other's. Pairwise FW pays about one pass per step and needs about "
            "420 passes to certify the 1e-8 gap; face-Newton takes Newton steps on the current "
            "face, each worth about six passes of Hessian-vector products, and certifies 1e-8 "
            "in 12 steps and about 80 passes, where PFW's gap is still above 1e-2."
        ),
        query="dataset=a1a&problem=logreg-l1&p.radius=10&standardize=0&tol=1e-8&max_time=5"
        "&run=pfw:exact&run=face-newton:armijo",
        tab="race",
        promise=Promise(
            faster=_FACE_NEWTON,
            slower="PFW exact",
            factor=100.0,
            seconds=5.0,
            axis=_PASSES,
        ),
        x_axis="data_passes",
        claims=(
            Cost(
                "about one pass per step",
                "PFW exact",
                other=None,
                low=0.9,
                high=1.2,
                axis=_PASSES,
                per="iteration",
            ),
            Level("needs about 420 passes", "PFW exact", low=350, high=500, column=_PASSES),
            Status("needs about 420 passes", "PFW exact", "converged"),
            Cost(
                "each worth about six passes",
                _FACE_NEWTON,
                other=None,
                low=4.0,
                high=9.0,
                axis=_PASSES,
                per="iteration",
            ),
            Reaches("certifies 1e-8 in 12 steps", _FACE_NEWTON, 1e-8, within=18),
            Reaches("and about 80 passes", _FACE_NEWTON, 1e-8, axis=_PASSES, within=110),
            Above("is still above 1e-2", "PFW exact", level=1e-2, until=77.0, axis=_PASSES),
        ),
        background=("The x axis counts passes over the data",),
    ),
    # Measured (CLI, the lesson's runs at the CSO defaults, 2e6 samples, seed 0 = the race's
    # run; means over seeds 0..3 in brackets): BSGD m = 50 ends at 1.3e-4 (1.7e-4), m = 1
    # at 2.7e-3 (2.6e-3), 2.7e-3 already at 1e6 samples (stalled), SAA m = 1000 at 1.1e-3
    # (3.2e-3). Checked by tests/test_cso_defaults.py (from the CLI's traces); the
    # defaults' calibration: ermviz/families/cso/problem.py.
    Lesson(
        name="cso-inner-batch",
        title="Conditional SO: BSGD's inner batch against its bias and against SAA",
        text=(
            "Invariant logistic regression at noise ratio 100, every run on one budget of 2e6 "
            "inner samples: BSGD with m = 50 inner samples per step (the paper's best at this "
            "ratio) ends more than five times below both BSGD with m = 1, whose biased "
            "one-sample estimator stalls, and SAA with the paper's m = 1000, left with 2,000 "
            "outer samples. The defaults are calibrated on Hu, Chen & He's Table 4 "
            "(benchmarks/cso_table4.py): inner-sample variance = noise ratio x 1e-3 of the "
            "feature variance, and a constant step 0.03, the value a grid search on seeds "
            "disjoint from the reported ones picked most often. The paper fixes neither, so "
            "both are our choices: with the literal unit (the whole feature variance) the "
            "noise swamps the signal and every m stalls alike."
        ),
        query=(
            "dataset=cso-synthetic&problem=invariant-logreg&p.noise_ratio=100&p.eval_size=200000"
            "&tol=1e-8&max_time=60&max_samples=2000000&run=bsgd:fixed:inner_batch=50"
            "&run=bsgd:fixed:inner_batch=1&run=saa:newton-ls:inner_batch=1000"
        ),
        tab="race",
        promise=Promise(
            faster="BSGD fixed inner_batch=50",
            slower="BSGD fixed inner_batch=1",
            factor=5.0,
            seconds=40.0,
            axis="samples",
        ),
        x_axis="samples",
        claims=(
            Ahead(
                "ends more than five times below both BSGD with m = 1",
                "BSGD fixed inner_batch=50",
                "BSGD fixed inner_batch=1",
                5.0,
                "samples",
            ),
            Ahead(
                "and SAA with the paper's m = 1000",
                "BSGD fixed inner_batch=50",
                "SAA newton-ls inner_batch=1000",
                5.0,
                "samples",
            ),
            # Stalls: at 4e-3 or below by 1e6 samples, still above 2e-3 at 2e6.
            Reaches(
                "one-sample estimator stalls", "BSGD fixed inner_batch=1", 4e-3, "samples", 1e6
            ),
            Above("one-sample estimator stalls", "BSGD fixed inner_batch=1", 2e-3, 2e6, "samples"),
            # SAA drew the whole budget at once: 2,000 outer samples x 1000 inner.
            Level(
                "left with 2,000 outer samples",
                "SAA newton-ls inner_batch=1000",
                2e6,
                2e6,
                column="samples",
            ),
        ),
        background=(
            "The defaults are calibrated on Hu, Chen & He's Table 4",
            "The paper fixes neither, so both are our choices",
        ),
    ),
)

#: The lesson a page without a query opens on (bundled data, so it works offline).
FIRST_LESSON = "pairwise-wdbc"
