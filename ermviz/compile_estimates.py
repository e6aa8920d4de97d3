"""Measured compile seconds (issue 43); written by ``benchmarks/compile_estimates.py``.

``FIRST_RUN["problem:method:storage"]``: CPU seconds numba spends compiling the kernels
of that run in a fresh process with an empty cache (the first run after an install),
read by :mod:`ermviz.compile_notice` for its "~N s". ``WARMUP_ITEM[label]``: CPU seconds
of each item of the dashboard's warm-up plan (:func:`ermviz.app.serving.warmup.plan`) compiled
in plan order from an empty cache, read by :mod:`ermviz.app.serving.warmup` for its estimates
(scaled there by the speed the warm-up observes on the machine it runs on), and
``WARMUP_KIND[label]`` which kernels it compiles.
"""

from __future__ import annotations

#: Where and when the figures were measured.
MEASURED = "not measured yet"

FIRST_RUN: dict[str, float] = {}

WARMUP_ITEM: dict[str, float] = {}

#: Each warm-up item's kind (solver class and storage,
#: :func:`ermviz.app.serving.warmup_plan.kind_of`): two processes never compile one kind
#: at once.
WARMUP_KIND: dict[str, str] = {}
