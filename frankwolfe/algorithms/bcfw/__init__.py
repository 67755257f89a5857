"""Block-coordinate Frank-Wolfe (BCFW) on product domains.

The domain is a :class:`~frankwolfe.ProductDomain`: blocks ``i = 1..n`` with
their own oracles and coordinate sets ``idx_i`` in one vector ``x``.  Each
block iterate ``z_i`` is stored (one flat array, block after block) and the
objective sees ``x = sum_i E_i z_i``, so the same code runs a Cartesian
product (disjoint ``idx_i``) and a Minkowski sum (overlapping ``idx_i``, the
structured SVM dual in image space).

BCFW is an :class:`~..engine.Engine` whose outer iteration is a pass of block
steps; stopping, history, callbacks and the result are the shared driver's
(:func:`~..engine.drive`).  Inside a pass three replaceable strategies meet:
the block order (:mod:`..block_orders`), the block step (:mod:`..block_steps`)
and the step rule (the :mod:`frankwolfe.step_size` objects, called on a
:class:`~..block_steps.BlockView` of the iterate).

The package, from the bottom up:

* :mod:`.store` - per-block atoms (cache, active sets) and the lazy average;
* :mod:`.state` - the run's state: start, iterates, estimates, counters;
* :mod:`.passes` - the one :class:`~.passes.Pass` interface and the time budget;
* :mod:`.python_pass`, :mod:`.compiled_pass`, :mod:`.rounds` - the passes: Python
  block steps, whole passes in numba, mini-batch rounds of either;
* :mod:`.plan` - the one place that chooses a run's pass, and why;
* :mod:`.engine` - observe, advance, certify, outputs;
* :mod:`.rule`, :mod:`.solver` - the step rule and the public
  :func:`block_coordinate_frank_wolfe`.

The Python and the compiled passes consume the random stream identically (see
:mod:`..block_orders`).
"""

from .solver import block_coordinate_frank_wolfe

__all__ = ["block_coordinate_frank_wolfe"]
