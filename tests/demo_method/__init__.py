"""A demo Frank-Wolfe method, used only by tests/test_add_a_method.py: the MDM algorithm.

It follows the recipe in docs/ARCHITECTURE.md ("How to add a method") to the letter, for
a method kept outside ermviz: its kernel facts (one :class:`solvers.fw_methods.FWMethod`
row), one method class reading them, ``METHODS`` from ``methods_from``, and the
``ERMVIZ_FAMILIES`` line naming this module (inside the repository the row goes in
:data:`solvers.fw_methods.METHODS` and the class in
:mod:`ermviz.families.frank_wolfe.methods`).

Method ``mdm``: the nearest-point algorithm of Mitchell, Dem'yanov & Malozemov (1974),
"Finding the point of a polyhedron closest to the origin", SIAM J. Control 12(1): over
the unit simplex, move weight from the vertex of largest partial derivative (among
those with positive weight) to the vertex of smallest one, with exact line search. It
is pairwise Frank-Wolfe restricted to the simplex (Lacoste-Julien & Jaggi 2015, NeurIPS,
section 2, which name MDM as PFW's ancestor), so its row reuses the pairwise branch of
the kernels (``code = PFW.code``) and declares the simplex as its only set: on
``svm-dual`` (the L2-SVM dual, a nearest-point problem) it runs; on the constrained
vector problems it is refused by its ``supports`` hook, derived from that row.
"""

from __future__ import annotations

from ermviz.base import MethodSpec, methods_from
from ermviz.families.frank_wolfe.methods import FW_METHOD_SETTINGS, FrankWolfeMethod
from solvers import fw_methods

#: MDM's kernel facts: the pairwise branch (PFW's code) over the simplex only.
MDM = fw_methods.FWMethod(
    name="mdm",
    code=fw_methods.PFW.code,
    active_set=True,
    sets=("simplex",),
    columns_per_step=2.0,
    step_types=("pairwise", "drop"),
    kernels=("fw", "fw_variants"),
)


class MitchellDemyanovMalozemov(FrankWolfeMethod):
    """Method ``mdm``: Mitchell, Dem'yanov & Malozemov (1974), SIAM J. Control 12(1)
    (module docstring)."""

    kernel = MDM
    title = "Mitchell-Dem'yanov-Malozemov nearest point (demo method)"
    settings = FW_METHOD_SETTINGS
    reference = "Mitchell, Dem'yanov & Malozemov 1974"


METHODS: dict[str, MethodSpec] = methods_from(MitchellDemyanovMalozemov)
