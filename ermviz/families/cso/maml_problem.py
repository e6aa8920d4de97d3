"""The conditional stochastic optimization family's meta-learning problem ``maml-sine``.

Model-agnostic meta-learning (Finn, Abbeel & Levine, ICML 2017) on sine-wave few-shot
regression, as Hu, Chen & He (NeurIPS 2020, Section 5 and Appendix D; ALGORITHMS.md F.8)
cast it: ``F(w) = E_task L_task(w - alpha grad L_task(w))``, where ``L_task`` is the
expected squared error of a ``1 -> H -> H -> 1`` ReLU network on the task's inputs
``x ~ U[x_low, x_high]`` and ``alpha`` the inner (adaptation) step. The inner expectation
sits inside the adaptation step, so an unbiased gradient needs infinitely many samples
per task: the conditional stochastic structure of F.1.

The tasks are the rows ``(amplitude, phase)`` of a task pool (the bundled ``sine-tasks``).
``eval_tasks`` seeded rows are held out: the methods draw from the others, and ``F`` is
estimated on the held-out ones (meta-test tasks), outside the timed region, with the
expectations over ``x`` replaced by a midpoint rule on ``eval_points`` inputs
(``eval_shots = 0``: the objective ``F`` itself) or, with ``eval_shots = K``, the
adaptation made from ``K`` fixed random inputs per task (the K-shot meta-test loss).

Certificate ``meta_test_loss``: the estimate of ``F(w)``. ``F >= 0`` and a large enough
network can fit every sine, so it bounds the optimality gap from above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ermviz.base import Problem
from ermviz.errors import DataError, SettingError
from ermviz.families.lazy import kernel_module
from ermviz.settings import Setting

mk = kernel_module("solvers.maml", globals())


@dataclass
class MamlSineProblem(Problem):
    """MAML on sine tasks (module docstring); variable: the flat network weights ``w`` of
    shape ``(n_params(hidden),)`` (layout in :mod:`solvers.maml`)."""

    name: ClassVar[str] = "maml-sine"
    title: ClassVar[str] = "MAML: sine-wave few-shot regression (conditional stochastic)"
    certificate_kind: ClassVar[str] = "meta_test_loss"
    default_race: ClassVar[tuple[tuple[str, str], ...]] = (
        ("bsgd", "fixed"),
        ("fo-maml", "fixed"),
        ("adam", "adam"),
        ("bspiderboost", "fixed"),
    )
    work_axes: ClassVar[tuple[tuple[str, str], ...]] = (("samples", "samples (x, y)"),)
    #: The constant step the step rules use when their ``gamma`` is 0 (auto).
    suggested_step: ClassVar[float] = 1e-2
    settings_decl: ClassVar[tuple[Setting, ...]] = (
        Setting(
            "inner_step",
            "float",
            0.01,
            "adaptation step alpha of w - alpha grad L_task(w) (Finn et al.: 0.01)",
            low=0.0,
            high=10.0,
        ),
        Setting(
            "hidden",
            "int",
            40,
            "units of each hidden ReLU layer (Finn et al.: 40)",
            low=1,
            high=256,
        ),
        Setting("x_low", "float", -5.0, "lowest input x of a task", low=-1e3, high=1e3),
        Setting("x_high", "float", 5.0, "highest input x of a task", low=-1e3, high=1e3),
        Setting(
            "meta_batch",
            "int",
            5,
            "tasks per step of bsgd, fo-maml and adam (bspiderboost: n1, n2)",
            low=1,
            high=1e5,
        ),
        Setting(
            "query_size",
            "int",
            0,
            "query samples per task (the outer loss); 0 = the method's inner_batch m",
            low=0,
            high=1e6,
        ),
        Setting(
            "eval_tasks", "int", 200, "held-out meta-test tasks F is estimated on", low=1, high=1e5
        ),
        Setting(
            "eval_points",
            "int",
            100,
            "inputs of the midpoint rule for the expectations over x in the estimate of F",
            low=2,
            high=1e5,
        ),
        Setting(
            "eval_shots",
            "int",
            0,
            "adaptation inputs per meta-test task: 0 = the population (F itself), K = a "
            "K-shot support drawn once",
            low=0,
            high=1e5,
        ),
        Setting("eval_seed", "int", 0, "seed of the held-out tasks and K-shot inputs", low=0),
        Setting("init_seed", "int", 0, "seed of the network's initial weights", low=0),
    )

    def __post_init__(self) -> None:
        ds = self.dataset
        X = ds.X
        if hasattr(X, "toarray"):
            X = X.toarray()
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != 2 or not np.all(np.isfinite(X)) or np.any(X[:, 0] < 0):
            raise DataError(
                f"maml-sine needs a pool of tasks: two columns (amplitude >= 0, phase), such "
                f"as the bundled sine-tasks; {ds.name!r} has shape {X.shape}"
                + (" with a negative amplitude (turn standardization off)" if X.ndim == 2
                   and X.shape[1] == 2 and np.any(X[:, 0] < 0) else "")
            )  # fmt: skip
        s = self.settings
        self.hidden = int(s["hidden"])
        self.alpha = float(s["inner_step"])
        self.x_low, self.x_high = float(s["x_low"]), float(s["x_high"])
        if not self.x_low < self.x_high:
            raise SettingError(
                f"maml-sine: x_low = {self.x_low} must be below x_high = {self.x_high}"
            )
        n_eval = int(s["eval_tasks"])
        if n_eval >= X.shape[0]:
            raise SettingError(
                f"maml-sine holds out eval_tasks = {n_eval} of the {X.shape[0]} tasks and "
                f"trains on the rest; lower eval_tasks below {X.shape[0]} (e.g. 200)"
            )
        rng = np.random.default_rng(int(s["eval_seed"]))
        held = np.zeros(X.shape[0], dtype=bool)
        held[rng.choice(X.shape[0], n_eval, replace=False)] = True
        self.tasks = np.ascontiguousarray(X[~held])
        self.eval_amp = np.ascontiguousarray(X[held, 0])
        self.eval_phase = np.ascontiguousarray(X[held, 1])
        points = int(s["eval_points"])
        width = (self.x_high - self.x_low) / points
        self.eval_grid = self.x_low + width * (np.arange(points) + 0.5)
        shots = int(s["eval_shots"])
        if shots == 0:
            grid = np.broadcast_to(self.eval_grid, (n_eval, points))
            self.eval_support = np.ascontiguousarray(grid)
        else:
            self.eval_support = rng.uniform(self.x_low, self.x_high, (n_eval, shots))
        self.meta_batch = int(s["meta_batch"])
        self.d = mk.n_params(self.hidden)
        self.f_star = 0.0  # F >= 0: the certificate is F itself, an upper bound on the gap
        self.noise_var = 0.0

    # -- reference math ------------------------------------------------------------------
    def objective(self, x: np.ndarray) -> float:
        """The estimate of ``F(w)`` on the held-out tasks (module docstring)."""
        return float(
            mk.maml_objective(np.ascontiguousarray(x), self.hidden, self.alpha, self.eval_amp,
                              self.eval_phase, self.eval_support, self.eval_grid)
        )  # fmt: skip

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """The exact gradient of the estimate of ``F``: the mean over held-out tasks of
        ``(I - alpha H_S(w)) grad L_Q(w - alpha grad L_S(w))``."""
        H, P = self.hidden, self.d
        w = np.ascontiguousarray(x, dtype=np.float64)
        buf = np.empty((10, H))
        gs, gq, hv = np.empty(P), np.empty(P), np.empty(P)
        total = np.zeros(P)
        for a, ph, xs in zip(self.eval_amp, self.eval_phase, self.eval_support, strict=True):
            ys = a * np.sin(xs - ph)
            yq = a * np.sin(self.eval_grid - ph)
            mk.loss_grad(w, H, xs, ys, gs, buf)
            mk.loss_grad(w - self.alpha * gs, H, self.eval_grid, yq, gq, buf)
            mk.hess_vec(w, H, xs, ys, gq, hv, buf)
            total += gq - self.alpha * hv
        return total / self.eval_amp.size

    def certificate(self, x: np.ndarray) -> float:
        """The meta-test loss (``F(w) - 0``, an upper bound on the optimality gap)."""
        return self.objective(x)

    def initial_point(self) -> np.ndarray:
        return mk.init_params(self.hidden, int(self.settings["init_seed"]))

    def lipschitz(self) -> float:
        """Not available for a network; the step rules take their own sizes."""
        return math.nan

    def query_size(self, inner_batch: int) -> int:
        """Query samples per task for a method with inner batch ``m``."""
        return int(self.settings["query_size"]) or int(inner_batch)

    def adapt(self, x: np.ndarray, xs: np.ndarray, ys: np.ndarray, steps: int = 1) -> np.ndarray:
        """The weights after ``steps`` adaptation steps ``w - alpha grad L_S(w)`` on the
        support ``(xs, ys)`` (what a meta-learned model does with a new task)."""
        H = self.hidden
        w = np.array(x, dtype=np.float64)
        xs = np.ascontiguousarray(xs, dtype=np.float64)
        ys = np.ascontiguousarray(ys, dtype=np.float64)
        g, buf = np.empty(w.size), np.empty((10, H))
        for _ in range(steps):
            mk.loss_grad(w, H, xs, ys, g, buf)
            w -= self.alpha * g
        return w

    def predict(self, x: np.ndarray, inputs: np.ndarray) -> np.ndarray:
        """The network with weights ``x`` at ``inputs`` (shape ``(k,)``)."""
        out = np.empty(len(inputs))
        mk.predict(np.ascontiguousarray(x, dtype=np.float64), self.hidden,
                   np.ascontiguousarray(inputs, dtype=np.float64), out)  # fmt: skip
        return out

    def solution_summary(self, x: np.ndarray) -> dict[str, float]:
        """The meta-test loss without adaptation (how much one step buys)."""
        yq = self.eval_amp[:, None] * np.sin(self.eval_grid[None, :] - self.eval_phase[:, None])
        f0 = self.predict(x, self.eval_grid)
        return {"loss_before_adaptation": float(np.mean((f0[None, :] - yq) ** 2))}


PROBLEMS: dict[str, type[Problem]] = {MamlSineProblem.name: MamlSineProblem}
