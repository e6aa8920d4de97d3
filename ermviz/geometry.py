"""Teaching geometry: how a feasible set of dimension 2 or 3 is drawn in the plane.

Plain numpy, no plotting library: a problem whose feasible set can be drawn returns a
:class:`Geometry` from :meth:`ermviz.base.Problem.teaching_geometry` (the unit simplex of
3 or 4 points: :func:`simplex_geometry`; the l1 ball of R^2: :func:`l1_ball_geometry`),
and the dashboard's teaching view draws it, projects iterates into it and contours the
objective over it.
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


@dataclass
class Geometry:
    """How a 2-D or 3-D toy problem is drawn.

    Attributes
    ----------
    kind : {"triangle", "tetrahedron", "diamond"}
        The feasible set: the simplex of 3 points, of 4 points, or the l1 ball of R^2.
    atoms : ndarray of shape (n_atoms, 2)
        Where each atom (vertex) of the feasible set is drawn; atom order is the solver's
        (simplex: ``e_i``; l1 ball: ``2j = +r e_j``, ``2j+1 = -r e_j``).
    atom_labels : list of str
    edges : list of (int, int)
        Pairs of atoms joined by an edge of the drawing.
    outline : list of int
        Atoms around the drawn region, in order (the polygon to fill).
    """

    kind: str
    atoms: np.ndarray
    atom_labels: list[str]
    edges: list[tuple[int, int]]
    outline: list[int]
    radius: float = 1.0
    faces: list[tuple[int, int, int]] = field(default_factory=list)

    def project(self, X: np.ndarray) -> np.ndarray:
        """Plane coordinates (k, 2) of iterates ``X`` (k, dim)."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if self.kind == "diamond":
            return X[:, :2].copy()
        return X @ self.atoms

    def active_atoms(self, weights: np.ndarray, tol: float = 1e-12) -> np.ndarray:
        """Indices of atoms with positive weight (the active set)."""
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
        there. Diamond: Cartesian coordinates.
        """
        if window is None:
            lo = self.atoms.min(axis=0)
            hi = self.atoms.max(axis=0)
            pad = 0.02 * (hi - lo)
            window = (lo[0] - pad[0], hi[0] + pad[0], lo[1] - pad[1], hi[1] + pad[1])
        xs = np.linspace(window[0], window[1], resolution)
        ys = np.linspace(window[2], window[3], resolution)
        Z = np.full((resolution, resolution), np.nan)
        for i, y in enumerate(ys):
            for j, x in enumerate(xs):
                point = self._point_at(np.array([x, y]))
                if point is not None:
                    Z[i, j] = problem.objective(point)
        return xs, ys, Z

    def _point_at(self, xy: np.ndarray) -> np.ndarray | None:
        """The feasible point drawn at ``xy`` (None outside the drawing)."""
        if self.kind == "diamond":
            return xy.copy() if abs(xy[0]) + abs(xy[1]) <= self.radius else None
        faces = self.faces or [(0, 1, 2)]
        for face in faces:
            bary = _barycentric(xy, self.atoms[list(face)])
            if np.all(bary >= -1e-12):
                alpha = np.zeros(self.atoms.shape[0])
                alpha[list(face)] = np.clip(bary, 0.0, None)
                return alpha / alpha.sum()
        return None


def _barycentric(xy: np.ndarray, tri: np.ndarray) -> np.ndarray:
    T = np.column_stack([tri[0] - tri[2], tri[1] - tri[2]])
    l12 = np.linalg.solve(T, xy - tri[2])
    return np.array([l12[0], l12[1], 1.0 - l12.sum()])


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
