"""solvers: the numerical core of ermviz (numpy + numba only, never imports Panel).

Small pieces, each with one job:

* :mod:`solvers.linalg`: dense/CSR row primitives every kernel uses;
* :mod:`solvers.lmo`: linear minimization and away oracles (simplex, l1 ball);
* :mod:`solvers.active_set`: exact convex weights and the step-type weight updates;
* :mod:`solvers.steps`: step rules (open loop, Armijo, exact, short, adaptive);
* :mod:`solvers.fw_methods`: the Frank-Wolfe methods' kernel facts, one row each;
* :mod:`solvers.fw_step`: the Frank-Wolfe step every FW kernel shares (step type, largest
  step, step size, record);
* :mod:`solvers.fw`: Frank-Wolfe / away-step / pairwise kernels;
* :mod:`solvers.rehline` (epochs) and :mod:`solvers.rehline_blocks` (the blocks they run):
  ReHLine's dual coordinate descent for PLQ losses;
* :mod:`solvers.plq_ipm` (iteration) and :mod:`solvers.plq_newton` (Newton system): the PLQ
  interior-point method;
* :mod:`solvers.plq_pieces`, :mod:`solvers.plq_certificate`: the packed PLQ pieces and the
  duality-gap certificate both PLQ methods use;
* :mod:`solvers.tufw`, :mod:`solvers.stochastic_fw`, :mod:`solvers.glm_fw_exact`: TUFW, its
  stochastic baselines, exact evaluation by replay and plain FW on l1-constrained GLMs,
  over :mod:`solvers.glm_losses` and :mod:`solvers.glm_fw_state`;
* :mod:`solvers.lssvm`: LS-SVM with a Gaussian kernel: two-system CG, reduced CG and SMO;
* :mod:`solvers.gram_cache`: an LRU cache of Gram columns for the SVM dual;
* :mod:`solvers.tags`: integer codes for step types and kernel status.
"""
