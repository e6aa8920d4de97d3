"""solvers: the numerical core of ermviz (numpy + numba only, never imports Panel).

Small pieces, each with one job:

* :mod:`solvers.linalg`: dense/CSR row primitives every kernel uses;
* :mod:`solvers.lmo`: linear minimization and away oracles (simplex, l1 ball);
* :mod:`solvers.active_set`: exact convex weights and the step-type weight updates;
* :mod:`solvers.steps`: step rules (open loop, Armijo, exact, short, adaptive);
* :mod:`solvers.fw`: Frank-Wolfe / away-step / pairwise kernels;
* :mod:`solvers.tags`: integer codes for step types and kernel status.
"""
