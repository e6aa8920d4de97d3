"""Feasible sets of the vector problems, chosen by a setting (``constraint``).

``logreg-l1`` and ``least-squares`` take ``constraint`` in {l1, l2, box, ksparse} with
``radius`` (l1 / l2 radius, K-sparse tau), ``lo`` / ``hi`` (box) and ``K`` (K-sparse);
the default, the l1 ball, keeps the meaning of every earlier command. A
:class:`ConstraintSet` validates them at the boundary (one-line errors naming the fix),
and gives what the problems and solvers need: the minimum of a linear function over the
set (the FW gap's second term, in numpy, as an independent check of the kernels' LMOs),
the start point as explicit atoms, and the set's codes for :mod:`solvers.lmo`.

Scale rule (radii and box bounds). Every method squares the set's scale: the squared loss
and the line searches' curvature ``||M d||^2`` (``d`` a difference of two points of the
set, ``M`` the data), and the logistic line search's second derivative, sum the squares
of margins ``a_i . x`` over the data. float64 squares a number only up to
``sqrt(DBL_MAX) = 1.34e154``, and squares below ``1.5e-154`` are no longer normal. So:

* data-free, on the settings themselves (every surface: CLI, dashboard widgets, links,
  estimators): a radius lies in ``[RADIUS_MIN, SCALE_MAX] = [1e-150, 1e150]``, a box
  bound in ``[-1e150, 1e150]``: squares of the scale stay normal numbers with four
  decades of room for the data;
* with the data (:meth:`ConstraintSet.check_scale`, when a problem is built): the
  largest margin the set allows, ``Z = scale x reach`` (``reach`` = ``max |a_ij|`` times
  1 (l1 ball), ``sqrt(p)`` (l2 ball), ``K`` (K-sparse), ``p`` (box)), must keep
  ``n (2 Z)^2`` (a direction between two points, squared and summed over ``n`` rows) and
  the loss's constants within float64: ``Z <= sqrt(DBL_MAX / n) / 4``.

A radius of 1e12 passes both, on purpose: it is representable, and a run with it makes
real progress. What it cannot do is certify a small absolute tolerance: the FW gap is
``<g, x> + radius ||g||_inf``, so a gap of 1e-8 needs ``||g||_inf <= 1e-20``, below the
rounding of a gradient that sums n products. On a1a (logistic loss, tol 1e-8) every
method then runs to its time budget while ``f`` still decreases (face-newton: by about
1e-13 per step after 12 000 steps; its stall rule only stops a run whose ``f`` is flat).

References: Jaggi (2013), "Revisiting Frank-Wolfe", ICML (LMOs of the l1 and l2 balls);
Garber & Hazan (2015), "Faster rates for the Frank-Wolfe method over strongly-convex
sets", ICML (the l2 ball); Lacoste-Julien & Jaggi (2015) (polytopes, active sets);
FrankWolfe.jl's K-sparse polytope (the l1 ball of radius tau K intersected with the
l_inf ball of radius tau).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ermviz.errors import SettingError
from ermviz.families.lazy import kernel_module
from ermviz.settings import Setting

lmo = kernel_module("solvers.lmo", globals())

CONSTRAINTS = ("l1", "l2", "box", "ksparse")

#: Largest radius or box bound magnitude, and smallest radius (module docstring).
SCALE_MAX = 1e150
RADIUS_MIN = 1e-150
_SCALE_NOTE = (
    "the line searches and the squared loss square the set's scale, and float64 squares "
    "numbers only within about 1e-154 to 1e154"
)
_DBL_MAX = float(np.finfo(np.float64).max)


def radius_setting(default: float | None, help: str) -> Setting:
    """The ``radius`` setting of a problem over a ball or polytope, in the scale rule's
    range (module docstring)."""
    return Setting(
        "radius", "float", default, help, low=RADIUS_MIN, high=SCALE_MAX, range_note=_SCALE_NOTE
    )


def margin_limit(n: int) -> float:
    """Largest margin ``|a_i . x|`` a set may allow over ``n`` rows: ``sqrt(DBL_MAX / n) /
    4`` (the squares of ``n`` differences of two margins, and the loss's constants)."""
    return math.sqrt(_DBL_MAX / max(int(n), 1)) / 4.0


def check_margin_scale(problem: str, name: str, value: float, reach: float, n: int) -> None:
    """A one-line SettingError when the set's scale ``value`` (setting ``name``) allows
    margins ``value x reach`` beyond :func:`margin_limit` of ``n`` rows."""
    if not (reach > 0.0 and math.isfinite(reach)):
        return
    limit = margin_limit(n) / reach
    if value > limit:
        raise SettingError(
            f"{problem}: {name}={value:g} is too large for this data: margins a_i.x over "
            f"the set reach {name} x {reach:.3g} = {value * reach:.3g}, and float64 cannot "
            f"square and sum {n} of them; allowed {name} <= {limit:.3g} here (the limit is "
            f"sqrt(DBL_MAX / n) / 4 / {reach:.3g}; rescale the features or shrink the set)"
        )


#: The settings every constrained vector problem declares (after its own ``radius``).
CONSTRAINT_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "constraint",
        "choice",
        "l1",
        "feasible set: l1 ball, l2 ball, box [lo, hi]^p, or K-sparse polytope "
        "(l1 ball of radius radius*K within the l_inf ball of radius radius)",
        choices=CONSTRAINTS,
    ),
    Setting(
        "lo",
        "float",
        -1.0,
        "box: lower bound of every coordinate (< hi)",
        low=-SCALE_MAX,
        high=SCALE_MAX,
        range_note=_SCALE_NOTE,
    ),
    Setting(
        "hi",
        "float",
        1.0,
        "box: upper bound of every coordinate (> lo)",
        low=-SCALE_MAX,
        high=SCALE_MAX,
        range_note=_SCALE_NOTE,
    ),
    Setting("K", "int", 5, "ksparse: nonzeros per vertex, 1 <= K <= p", low=1, high=10**9),
)

#: Methods that keep an active set of vertices: they need a polytope.
POLYTOPE_ONLY = ("afw", "pfw", "bpcg")


@dataclass(frozen=True)
class ConstraintSet:
    """One feasible set in R^p, validated.

    Attributes
    ----------
    kind : {"simplex", "l1", "l2", "box", "ksparse"}
    p : int
        Dimension.
    radius, lo, hi : float
    K : int
    """

    kind: str
    p: int
    radius: float = 1.0
    lo: float = -1.0
    hi: float = 1.0
    K: int = 1

    @classmethod
    def from_settings(cls, settings: dict, p: int, problem: str) -> ConstraintSet:
        """The set a problem's settings describe; a one-line SettingError if they are
        inconsistent (box with lo >= hi, K outside [1, p])."""
        kind = settings.get("constraint", "l1")
        lo, hi = float(settings.get("lo", -1.0)), float(settings.get("hi", 1.0))
        K = int(settings.get("K", 5))
        if kind == "box" and not lo < hi:
            raise SettingError(
                f"{problem}: box needs lo < hi, got lo={lo:g}, hi={hi:g} "
                "(e.g. --set lo=-0.5 --set hi=0.5)"
            )
        if kind == "ksparse" and not 1 <= K <= p:
            raise SettingError(
                f"{problem}: ksparse needs 1 <= K <= p = {p} (the number of features), got K={K}"
            )
        return cls(kind, p, float(settings.get("radius", 1.0)), lo, hi, K)

    def check_scale(self, feature_max: float, n: int, problem: str) -> None:
        """A one-line SettingError when the margins this set allows on data with entries of
        magnitude at most ``feature_max`` over ``n`` rows cannot be squared and summed in
        float64 (the scale rule of the module docstring)."""
        if self.kind == "simplex":
            return
        if self.kind == "box":
            name, value, reach = "max(|lo|, |hi|)", max(abs(self.lo), abs(self.hi)), self.p
        else:
            reach = {"l1": 1.0, "l2": math.sqrt(self.p), "ksparse": float(self.K)}[self.kind]
            name, value = "radius", self.radius
        check_margin_scale(problem, name, value, feature_max * reach, n)

    @property
    def code(self) -> int:
        return lmo.SET_CODES[self.kind]

    @property
    def params(self) -> np.ndarray:
        return lmo.set_params(radius=self.radius, lo=self.lo, hi=self.hi, K=self.K)

    @property
    def is_polytope(self) -> bool:
        return self.kind != "l2"

    def describe(self) -> str:
        """Short text: ``l1 ball r=1``, ``box [-0.5, 0.5]^p``, ..."""
        if self.kind == "box":
            return f"box [{self.lo:g}, {self.hi:g}]^p"
        if self.kind == "ksparse":
            return f"{self.K}-sparse polytope tau={self.radius:g}"
        if self.kind == "simplex":
            return "unit simplex"
        return f"{self.kind} ball r={self.radius:g}"

    def check_method(self, method: str) -> None:
        """A one-line SettingError when ``method`` needs a polytope and this set is not."""
        if method in POLYTOPE_ONLY and not self.is_polytope:
            raise SettingError(
                f"{method} keeps an active set of vertices, and the l2 ball has none: on "
                "constraint=l2 use fw or boosted"
            )

    def min_linear(self, g: np.ndarray) -> float:
        """``min_{s in C} <g, s>`` in closed form (numpy)."""
        g = np.asarray(g, dtype=float)
        if self.kind == "simplex":
            return float(g.min())
        if self.kind == "l1":
            return -self.radius * float(np.abs(g).max())
        if self.kind == "l2":
            return -self.radius * float(np.linalg.norm(g))
        if self.kind == "box":
            return float(np.minimum(self.lo * g, self.hi * g).sum())
        top = np.partition(np.abs(g), self.p - self.K)[self.p - self.K :]
        return -self.radius * float(top.sum())

    def fw_gap(self, g: np.ndarray, x: np.ndarray) -> float:
        """The Frank-Wolfe gap ``<g, x> - min_{s in C} <g, s>``."""
        return float(np.dot(g, x)) - self.min_linear(g)

    def vertex(self, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The LMO's point for ``g`` as a sparse atom ``(idx, val)`` (the kernels' LMO)."""
        m = lmo.max_nnz(self.code, self.p, self.K)
        idx = np.zeros(m, dtype=np.int64)
        val = np.zeros(m)
        nnz = lmo.lmo(self.code, self.params, np.ascontiguousarray(g, dtype=float), idx, val)
        return idx[:nnz], val[:nnz]

    def dense(self, atom: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        out = np.zeros(self.p)
        out[atom[0]] = atom[1]
        return out

    def opposite(self, atom: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The vertex across the set's centre: ``-v`` (balls, K-sparse), ``lo + hi - v``
        (box)."""
        idx, val = atom
        if self.kind == "box":
            return idx.copy(), self.lo + self.hi - val
        return idx.copy(), -val

    def start_atoms(self, g0: np.ndarray, start: str) -> list[tuple[np.ndarray, np.ndarray, float]]:
        """The start point as weighted atoms: ``centre`` = 1/2 (v + opposite(v)) with ``v``
        the LMO's vertex for ``g0``, or ``vertex`` = ``v`` itself."""
        v = self.vertex(g0)
        if start == "vertex":
            return [(v[0], v[1], 1.0)]
        w = self.opposite(v)
        return [(v[0], v[1], 0.5), (w[0], w[1], 0.5)]

    def inside(self, x: np.ndarray) -> np.ndarray:
        """A point of the set near ``x`` (a warm start from a solution of another set, e.g.
        the previous radius of a regularization path): ``x`` itself when it is inside;
        otherwise clipped to the bounds (box, K-sparse, simplex) and scaled toward the
        centre until the sum or norm bound holds (balls, K-sparse, simplex)."""
        x = np.array(x, dtype=np.float64)
        if self.kind == "simplex":
            x = np.maximum(x, 0.0)
            total = x.sum()
            return x / total if total > 0 else np.full(self.p, 1.0 / self.p)
        if self.kind == "box":
            return np.clip(x, self.lo, self.hi)
        if self.kind == "ksparse":
            x = np.clip(x, -self.radius, self.radius)
        norm = float(np.linalg.norm(x)) if self.kind == "l2" else float(np.abs(x).sum())
        bound = self.radius * (self.K if self.kind == "ksparse" else 1)
        return x * (bound / norm) if norm > bound else x

    def centre(self) -> np.ndarray:
        if self.kind == "box":
            return np.full(self.p, 0.5 * (self.lo + self.hi))
        return np.zeros(self.p)


def pack_atoms(
    atoms: list[tuple[np.ndarray, np.ndarray, float]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(idx, val, nnz, weights)`` arrays of :func:`solvers.fw_variants.new_state`."""
    width = max(len(a[0]) for a in atoms)
    idx = np.zeros((len(atoms), width), dtype=np.int64)
    val = np.zeros((len(atoms), width))
    nnz = np.zeros(len(atoms), dtype=np.int64)
    for i, (a_idx, a_val, _) in enumerate(atoms):
        idx[i, : len(a_idx)] = a_idx
        val[i, : len(a_val)] = a_val
        nnz[i] = len(a_idx)
    return idx, val, nnz, np.array([a[2] for a in atoms], dtype=float)
