"""Integer codes shared by kernels and the runner: step types and run status.

Kernels write these codes into their record arrays (numba has no strings in hot loops);
the runner turns them into the names that appear in traces.
"""

from __future__ import annotations

#: The first six record columns every kernel writes, in this order; a family appends its
#: own counters after them.
BASE_COLUMNS = ("iteration", "objective", "certificate", "step_size", "step_type", "active_size")

# Step types: what the step taken from the recorded iterate was (FrankWolfe.jl-style tags).
STEP_NONE = 0  # no step taken from this iterate (final row: converged, budget, stop)
STEP_FW = 1  # toward the LMO vertex
STEP_AWAY = 2  # away from the worst active atom, atom kept
STEP_PAIRWISE = 3  # weight moved from the away atom to the FW atom, atom kept
STEP_DROP = 4  # away or pairwise step that removed an atom from the active set
STEP_CD = 5  # coordinate-descent sweep
STEP_CG = 6  # conjugate-gradient iteration
STEP_SGD = 7  # stochastic gradient step
STEP_SMO = 8  # two-coordinate (SMO) step
STEP_NEWTON = 9  # interior-point (Newton) iteration
STEP_PROJECTED = 10  # projected-gradient step
STEP_LOCAL = 11  # BPCG local pairwise step between two active atoms
STEP_LAZY = 12  # step toward (or pairwise with) an active atom chosen without an LMO call
STEP_BOOSTED = 13  # Boosted FW step along the gradient-pursuit direction

STEP_NAMES = {
    STEP_NONE: "none",
    STEP_FW: "fw",
    STEP_AWAY: "away",
    STEP_PAIRWISE: "pairwise",
    STEP_DROP: "drop",
    STEP_CD: "cd",
    STEP_CG: "cg",
    STEP_SGD: "sgd",
    STEP_SMO: "smo",
    STEP_NEWTON: "newton",
    STEP_PROJECTED: "projected",
    STEP_LOCAL: "local",
    STEP_LAZY: "lazy",
    STEP_BOOSTED: "boosted",
}

# Kernel status: why a kernel returned before its row budget ran out.
STATUS_RUNNING = 0  # row budget of this call used up; call again
STATUS_CONVERGED = 1  # certificate <= tolerance
STATUS_MAX_ITER = 2  # reached the iteration the runner asked it to stop at
STATUS_STALLED = 3  # the step rule returned no progress (e.g. Armijo exhausted)
STATUS_NONFINITE = 4  # NaN or inf in the objective or certificate
STATUS_MAX_WORK = 5  # the work budget (e.g. samples) leaves no room for another step

KERNEL_STATUS_NAMES = {
    STATUS_RUNNING: "running",
    STATUS_CONVERGED: "converged",
    STATUS_MAX_ITER: "max_iter",
    STATUS_STALLED: "stalled",
    STATUS_NONFINITE: "error",
    STATUS_MAX_WORK: "max_work",
}

# Choice codes that method declarations name (ermviz lists the keys as a setting's choices
# without importing numba; the kernels branch on the values).
# Open-loop step codes of the GLM FW kernels (solvers.glm_fw_state; not solvers.steps').
OL_DIMINISHING = 0  # 2 / (k + 2)
OL_NONCONVEX = 1  # 1 / sqrt(k + 1)
OL_CONSTANT_SQRT = 2  # 1 / sqrt(K + 1), K fixed in advance
OL_ONE = 3  # 1 (only as the cap of the Taylor-model step)
OPEN_LOOP_CODES = {
    "diminishing": OL_DIMINISHING,
    "nonconvex": OL_NONCONVEX,
    "constant-sqrt": OL_CONSTANT_SQRT,
    "one": OL_ONE,
}
# Taylor-point (batch) rules of TUFW (docs/ALGORITHMS.md B.4; solvers.tufw).
TAYLOR_SBD_SQRTK = 0
TAYLOR_DBD_SQRTK = 1
TAYLOR_SBD_K4 = 2
TAYLOR_DBD_K4 = 3
TAYLOR_CODES = {
    "sbd-sqrtk": TAYLOR_SBD_SQRTK,
    "dbd-sqrtk": TAYLOR_DBD_SQRTK,
    "sbd-k4": TAYLOR_SBD_K4,
    "dbd-k4": TAYLOR_DBD_K4,
}
# SMO working-pair rules of the LS-SVM kernels (solvers.lssvm).
PAIR_CODES = {"max-violating": 0, "second-order": 1}
