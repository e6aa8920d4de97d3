"""The solver families; each subpackage is one family with the same shape.

A family package holds its problem(s) with their certificate, its solver adapters and its
method and step-rule declarations, and exports ``PROBLEMS``, ``METHODS``, ``STEP_RULES``
and ``ALIASES`` from its ``__init__``; its numba kernels live in ``solvers/`` and are named
through :mod:`.lazy`, so they load when the family is first used, not when listed.
:mod:`ermviz.registry` lists the families; ``docs/ARCHITECTURE.md`` says how to add one.
:mod:`.common` holds helpers several families' problems share, :mod:`.scaling` the check
for badly scaled features that their problems declare.
"""
