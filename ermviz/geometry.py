"""Teaching geometry: how a feasible set of dimension 2 or 3 is drawn in the plane.

Plain numpy, no plotting library: a problem whose feasible set can be drawn returns a
:class:`Geometry` from :meth:`ermviz.base.Problem.teaching_geometry` (the unit simplex of
3 or 4 points: :func:`simplex_geometry`; the l1 ball of R^2: :func:`l1_ball_geometry`;
the l2 ball of R^2, a disc: :func:`l2_ball_geometry`; the box ``[lo, hi]^2``:
:func:`box_geometry`), and the dashboard's teaching view draws it, projects iterates into
it and contours the objective over it. A disc has no finite set of atoms: it is drawn by
its boundary (a fine polygon) and no active set is ever marked on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

_TRIANGLE = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, math.sqrt(3.0) / 2.0]])
# The tetrahedron seen from above its 4th vertex: that vertex is drawn inside the base
# triangle (slightly off the centroid so that no two edges overlap).
_TETRAHEDRON = np.vstack([_TRIANGLE, [[0.54, 0.34]]])
#: Kinds drawn in Cartesian coordinates (an iterate's first two coordinates).
CARTESIAN_KINDS = ("diamond", "disc", "box")
#: Points of the polygon that draws the disc's circle.
DISC_POINTS = 128


@dataclass
class Geometry:
    """How a 2-D or 3-D toy problem is drawn.

    Attributes
    ----------
    kind : {"triangle", "tetrahedron", "diamond", "disc", "box"}
        The feasible set: the simplex of 3 points, of 4 points, the l1 ball of R^2, the
        l2 ball of R^2 or the box ``[lo, hi]^2``.
    atoms : ndarray of shape (n_atoms, 2)
        Where each atom (vertex) of the feasible set is drawn; atom order is the solver's
        (simplex: ``e_i``; l1 ball: ``2j = +r e_j``, ``2j+1 = -r e_j``; box: ``(lo, lo)``,
        ``(hi, lo)``, ``(hi, hi)``, ``(lo, hi)``; disc: none, shape (0, 2)).
    atom_labels : list of str
    edges : list of (int, int)
        Pairs of atoms joined by an edge of the drawing.
    outline : list of int
        Atoms around the drawn region, in order (the polygon to fill).
    radius : float
        The radius of the l1 ball or of the disc.
    faces : list of (int, int, int)
        Tetrahedron: the faces through vertex 4, seen from above it.
    boundary : ndarray of shape (m, 2), optional
        The drawn boundary when no polygon of atoms is (the disc's circle); see
        :meth:`outline_xy`.
    lo, hi : float
        The box's bounds.
    """

    kind: str
    atoms: np.ndarray
    atom_labels: list[str]
    edges: list[tuple[int, int]]
    outline: list[int]
    radius: float = 1.0
    faces: list[tuple[int, int, int]] = field(default_factory=list)
    boundary: np.ndarray | None = None
    lo: float = -1.0
    hi: float = 1.0

    @property
    def cartesian(self) -> bool:
        """Whether the plane's coordinates are an iterate's own (the l1 ball, the disc,
        the box), not barycentric (the simplex)."""
        return self.kind in CARTESIAN_KINDS

    def outline_xy(self) -> np.ndarray:
        """The closed polygon (m + 1, 2) drawn as the set's boundary."""
        pts = self.boundary if self.boundary is not None else self.atoms[self.outline]
        return np.vstack([pts, pts[:1]])

    def extent(self) -> tuple[np.ndarray, np.ndarray]:
        """``(lo, hi)``: the corners of the drawing's bounding box."""
        pts = np.vstack([self.atoms, self.outline_xy()])
        return pts.min(axis=0), pts.max(axis=0)

    def project(self, X: np.ndarray) -> np.ndarray:
        """Plane coordinates (k, 2) of iterates ``X`` (k, dim)."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if self.cartesian:
            return X[:, :2].copy()
        return X @ self.atoms

    def active_atoms(self, weights: np.ndarray, tol: float = 1e-12) -> np.ndarray:
        """Indices of atoms with positive weight (the active set); empty when ``weights``
        does not hold one weight per atom (e.g. the disc's empty array)."""
        weights = np.asarray(weights, dtype=float).ravel()
        if weights.size != self.atoms.shape[0]:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(weights > tol)

    def objective_grid(
        self,
        problem: Any,
        resolution: int = 121,
        window: tuple[float, float, float, float] | None = None,
    ) -> tuple:
        """``(xs, ys, Z)``: the objective on a grid over the drawing (NaN outside it).

        ``window`` (x0, x1, y0, y1) restricts the grid (the zoom view); by default it
        covers the whole drawing. Triangle: barycentric coordinates of each grid point.
        Tetrahedron: each point of the outer triangle lies on one of the three faces
        through vertex 4 (the faces seen from above it); the objective is evaluated
        there. Diamond, disc, box: Cartesian coordinates.
        """
        if window is None:
            lo, hi = self.extent()
            pad = 0.02 * (hi - lo)
            window = (lo[0] - pad[0], hi[0] + pad[0], lo[1] - pad[1], hi[1] + pad[1])
        xs = np.linspace(window[0], window[1], resolution)
        ys = np.linspace(window[2], window[3], resolution)
        gx, gy = np.meshgrid(xs, ys)  # [i, j] = (xs[j], ys[i])
        points, inside = self._points_at(np.column_stack([gx.ravel(), gy.ravel()]))
        Z = np.full(resolution * resolution, np.nan)
        Z[inside] = objectives(problem, points)
        return xs, ys, Z.reshape(resolution, resolution)

    def _point_at(self, xy: np.ndarray) -> np.ndarray | None:
        """The feasible point drawn at ``xy`` (None outside the drawing)."""
        points, inside = self._points_at(np.asarray(xy, dtype=float).reshape(1, 2))
        return points[0] if inside[0] else None

    def _points_at(self, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The feasible points drawn at the rows of ``xy`` (k, 2): ``(points, inside)``,
        ``inside`` (k,) marking the rows within the drawing and ``points`` (inside.sum(),
        dim) their points (Cartesian sets: the rows themselves; simplices: the weights).
        One pass over all rows: a grid of 121^2 points, looped in Python, took 0.2 s and
        a point-by-point objective 1 s more on each teaching race's Start."""
        x, y = xy[:, 0], xy[:, 1]
        if self.kind == "diamond":
            inside = np.abs(x) + np.abs(y) <= self.radius
        elif self.kind == "disc":
            inside = x * x + y * y <= self.radius**2
        elif self.kind == "box":
            inside = (self.lo <= x) & (x <= self.hi) & (self.lo <= y) & (y <= self.hi)
        else:
            return self._simplex_points_at(xy)
        return xy[inside].copy(), inside

    def _simplex_points_at(self, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Weights on the atoms of the points drawn at ``xy``: each row lies on the first
        face (of :attr:`faces`, else the triangle) whose barycentric coordinates of it
        are all >= 0."""
        k, n_atoms = xy.shape[0], self.atoms.shape[0]
        weights = np.zeros((k, n_atoms))
        inside = np.zeros(k, dtype=bool)
        for face in self.faces or [(0, 1, 2)]:
            bary = _barycentric(xy, self.atoms[list(face)])
            on = ~inside & np.all(bary >= -1e-12, axis=1)
            alpha = np.clip(bary[on], 0.0, None)
            weights[np.ix_(on, list(face))] = alpha / alpha.sum(axis=1, keepdims=True)
            inside |= on
        return weights[inside], inside


def objectives(problem: Any, points: np.ndarray) -> np.ndarray:
    """``problem``'s objective at each row of ``points`` (k, dim): its vectorized
    ``objectives`` when it has one, else one call of ``objective`` per row."""
    batch = getattr(problem, "objectives", None)
    if batch is None:
        return np.array([problem.objective(point) for point in points], dtype=float)
    # In blocks: a batch holds (rows, n samples) of margins; ~16 MB whatever n.
    rows = max(16, 2_000_000 // max(int(getattr(problem, "n", 1)), 1))
    out = np.empty(points.shape[0])
    for start in range(0, points.shape[0], rows):
        out[start : start + rows] = batch(points[start : start + rows])
    return out


def _barycentric(xy: np.ndarray, tri: np.ndarray) -> np.ndarray:
    """Barycentric coordinates (k, 3) of the rows of ``xy`` (k, 2) in triangle ``tri``."""
    T = np.column_stack([tri[0] - tri[2], tri[1] - tri[2]])
    l12 = np.linalg.solve(T, (xy - tri[2]).T).T
    return np.column_stack([l12, 1.0 - l12.sum(axis=1)])


def simplex_geometry(n: int) -> Geometry | None:
    """The unit simplex of ``n`` = 3 (a triangle) or 4 points (a tetrahedron seen from
    above its fourth vertex); None for any other ``n``."""
    if n == 3:
        return Geometry(
            "triangle",
            _TRIANGLE.copy(),
            ["e1", "e2", "e3"],
            [(0, 1), (1, 2), (2, 0)],
            [0, 1, 2],
        )
    if n == 4:
        return Geometry(
            "tetrahedron",
            _TETRAHEDRON.copy(),
            ["e1", "e2", "e3", "e4"],
            [(0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3)],
            [0, 1, 2],
            faces=[(0, 1, 3), (1, 2, 3), (2, 0, 3)],
        )
    return None


def l1_ball_geometry(p: int, radius: float) -> Geometry | None:
    """The l1 ball of radius ``radius`` in R^2 (a diamond); None unless ``p`` = 2."""
    if p != 2:
        return None
    r = float(radius)
    atoms = np.array([[r, 0.0], [-r, 0.0], [0.0, r], [0.0, -r]])
    return Geometry(
        "diamond",
        atoms,
        ["+r e1", "-r e1", "+r e2", "-r e2"],
        [(0, 2), (2, 1), (1, 3), (3, 0)],
        [0, 2, 1, 3],
        radius=r,
    )


def l2_ball_geometry(p: int, radius: float) -> Geometry | None:
    """The l2 ball of radius ``radius`` in R^2 (a disc, drawn as a polygon of
    :data:`DISC_POINTS` points); None unless ``p`` = 2. It has no atoms: no active set."""
    if p != 2:
        return None
    r = float(radius)
    t = np.linspace(0.0, 2.0 * math.pi, DISC_POINTS, endpoint=False)
    return Geometry(
        "disc",
        np.zeros((0, 2)),
        [],
        [],
        [],
        radius=r,
        boundary=r * np.column_stack([np.cos(t), np.sin(t)]),
    )


def box_geometry(p: int, lo: float, hi: float) -> Geometry | None:
    """The box ``[lo, hi]^2``, its 4 corners the atoms in the solver's order ``(lo, lo)``,
    ``(hi, lo)``, ``(hi, hi)``, ``(lo, hi)``; None unless ``p`` = 2."""
    if p != 2:
        return None
    a, b = float(lo), float(hi)
    atoms = np.array([[a, a], [b, a], [b, b], [a, b]])
    return Geometry(
        "box",
        atoms,
        [f"({x:g}, {y:g})" for x, y in atoms],
        [(0, 1), (1, 2), (2, 3), (3, 0)],
        [0, 1, 2, 3],
        lo=a,
        hi=b,
    )


@dataclass
class DecisionPlane:
    """A classifier on data with two features, as the teaching view draws it while a run
    goes: the training points (sized by their weight in the model) over the sign of the
    decision function on a grid, and its zero level (the decision boundary).

    Attributes
    ----------
    points : ndarray of shape (n, 2)
        The training points.
    labels : ndarray of shape (n,)
        Their labels, -1 or +1.
    values : callable ``(grid, state) -> ndarray of shape (m,)``
        The decision function at the rows of ``grid`` (m, 2) for a solver's
        ``decision_state()``.
    weights : callable ``state -> ndarray of shape (n,)``
        Each point's weight in the model (e.g. ``|alpha_i|``), drawn as its size.
    title : str
    """

    points: np.ndarray
    labels: np.ndarray
    values: Any
    weights: Any
    title: str = ""

    def window(self, pad: float = 0.08) -> tuple[float, float, float, float]:
        """``(x0, x1, y0, y1)``: the points' bounding box, padded by ``pad`` of its size."""
        lo = self.points.min(axis=0)
        hi = self.points.max(axis=0)
        span = np.maximum(hi - lo, 1e-12)
        lo, hi = lo - pad * span, hi + pad * span
        return float(lo[0]), float(hi[0]), float(lo[1]), float(hi[1])

    def grid(self, resolution: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(xs, ys, G)``: a ``resolution`` x ``resolution`` grid over :meth:`window`,
        ``G`` its points (resolution^2, 2) row by row (y outer, x inner)."""
        x0, x1, y0, y1 = self.window()
        xs = np.linspace(x0, x1, resolution)
        ys = np.linspace(y0, y1, resolution)
        gx, gy = np.meshgrid(xs, ys)
        return xs, ys, np.column_stack([gx.ravel(), gy.ravel()])
