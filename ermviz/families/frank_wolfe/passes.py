"""The ``data_passes`` column of the first-order FW solvers (fw, afw, pfw, bpcg, boosted,
dicg on ``svm-dual``, ``logreg-l1``, ``least-squares``): passes over the data matrix.

Their kernels record ``grad_evals``, the full products with the data (gradients, Gram
columns missed by the cache); this module appends, per row,

``data_passes = grad_evals + rebuilds + columns * atom_share``

* ``rebuilds``: ``k // refresh_every`` recomputations of the maintained product (``z = X
  x`` or ``w = Z alpha``), one pass each;
* ``columns``: the data columns a step reads to update that product (``X v`` for the
  atoms it moves: one for a FW or away step, two for a pairwise, BPCG local or DICG step;
  boosted FW, one per LMO call), ``k`` steps in all: each method's ``columns_per_step``
  and ``per_lmo_call`` in :mod:`solvers.fw_methods`;
* ``atom_share``: an atom's share of the data, ``nnz(atom) / p`` of a pass: exact for the
  box (a dense atom reads every column), the mean column's share for the 1-sparse atoms
  of the simplex and the l1 ball and the K-sparse ones (an estimate there: a step's one
  or two columns are a small part of a row's cost next to its gradient pass).

The face-newton kernel (:mod:`solvers.face_newton`) counts its own passes exactly.

A kernel that does not count its LMO calls (the tuned ``fw``/``afw``/``pfw`` kernels of
:mod:`solvers.fw`, which call the oracle exactly once per iteration, for the gap at
``x_k``) also gets ``lmo_calls = k + 1``, as :mod:`solvers.fw_variants` counts them, so
every FW trace (and the race summary) can compare oracle calls.
"""

from __future__ import annotations

import numpy as np

from solvers import fw_methods


class DataPasses:
    """Appends ``data_passes`` (and ``lmo_calls`` when the kernel does not count them) to a
    first-order FW solver's rows (see the module docstring).

    Parameters
    ----------
    columns : tuple of str
        The kernel's record columns (``grad_evals`` among them).
    method : str or FWMethod
        The method (its :mod:`solvers.fw_methods` row or name).
    refresh_every : int
        The solver's ``refresh_every`` (0: never).
    atom_nnz, p : int
        Stored entries of an atom of the set and the dimension.
    """

    def __init__(
        self,
        columns: tuple[str, ...],
        method: str | fw_methods.FWMethod,
        refresh_every: int,
        atom_nnz: int,
        p: int,
    ) -> None:
        self._count_lmo = "lmo_calls" not in columns  # one call per iteration: k + 1
        self.columns = (*columns, *("lmo_calls",) * self._count_lmo, "data_passes")
        self._grad = columns.index("grad_evals")
        self._iter = columns.index("iteration")
        facts = fw_methods.lookup(method)
        self._lmo = columns.index("lmo_calls") if facts.per_lmo_call else -1
        self._refresh = int(refresh_every)
        self._per_step = facts.columns_per_step * atom_nnz / max(p, 1)
        self._out = np.empty((0, len(self.columns)))

    def rows(self, rec: np.ndarray) -> np.ndarray:
        """``rec`` with the column appended (a view into a buffer reused by the next call)."""
        if self._out.shape[0] < rec.shape[0]:
            self._out = np.empty((max(rec.shape[0], 2 * self._out.shape[0]), len(self.columns)))
        out = self._out[: rec.shape[0]]
        out[:, : rec.shape[1]] = rec
        k = rec[:, self._iter]
        if self._count_lmo:
            out[:, -2] = k + 1.0
        steps = rec[:, self._lmo] if self._lmo >= 0 else k
        rebuilds = np.floor_divide(k, self._refresh) if self._refresh > 0 else 0.0
        out[:, -1] = rec[:, self._grad] + rebuilds + steps * self._per_step
        return out
