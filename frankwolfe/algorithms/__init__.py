"""Frank-Wolfe algorithms.

One driver (:func:`.engine.drive`) runs every method: a single-domain method
is a :class:`Variant` of the engine of :mod:`.loop` (an outer iteration is one
step); block-coordinate Frank-Wolfe (:mod:`.bcfw`) is an engine whose outer
iteration is a pass, built from block orders (:mod:`.block_orders`), block
steps (:mod:`.block_steps`), the per-block store (:mod:`.bcfw.store`) and the
compiled protocol with its one driver (:mod:`frankwolfe.compiled`: Frank-Wolfe or
pairwise block steps).  Fully corrective FW on a product domain solves its
corrective QP with the same machinery on the working-set domain (:mod:`.working_set`).
Least squares over the l1 ball or the simplex can run compiled end to end
(:mod:`.compiled_pairwise`: corrective rounds and pairwise steps in numba, a chunk
of them per outer iteration of the same driver).
"""

from .alternating import alternating_linear_minimization
from .away import away_step_frank_wolfe
from .bcfw import block_coordinate_frank_wolfe
from .bcg import blended_conditional_gradient
from .compiled_pairwise import compiled_pairwise_frank_wolfe, supports_compiled_pairwise
from .conjugate import biconjugate_frank_wolfe, conjugate_frank_wolfe
from .dicg import decomposition_invariant_conditional_gradient
from .fcfw import fully_corrective_frank_wolfe
from .frank_wolfe import frank_wolfe
from .loop import Variant, run_frank_wolfe
from .pairwise import blended_pairwise_conditional_gradient, pairwise_frank_wolfe
from .rafw import randomized_away_step_frank_wolfe
from .saddle import saddle_point_frank_wolfe
from .stochastic import stochastic_frank_wolfe

__all__ = [
    "frank_wolfe",
    "away_step_frank_wolfe",
    "pairwise_frank_wolfe",
    "blended_pairwise_conditional_gradient",
    "blended_conditional_gradient",
    "alternating_linear_minimization",
    "decomposition_invariant_conditional_gradient",
    "compiled_pairwise_frank_wolfe",
    "supports_compiled_pairwise",
    "randomized_away_step_frank_wolfe",
    "fully_corrective_frank_wolfe",
    "block_coordinate_frank_wolfe",
    "conjugate_frank_wolfe",
    "biconjugate_frank_wolfe",
    "saddle_point_frank_wolfe",
    "stochastic_frank_wolfe",
    "Variant",
    "run_frank_wolfe",
]
