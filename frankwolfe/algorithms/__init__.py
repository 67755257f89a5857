"""Frank-Wolfe algorithms, all on the shared loop of :mod:`.loop`."""

from .away import away_step_frank_wolfe
from .bcfw import block_coordinate_frank_wolfe
from .conjugate import biconjugate_frank_wolfe, conjugate_frank_wolfe
from .frank_wolfe import frank_wolfe
from .pairwise import pairwise_frank_wolfe
from .loop import Variant, run_frank_wolfe

__all__ = ["conjugate_frank_wolfe", "biconjugate_frank_wolfe", "block_coordinate_frank_wolfe", "away_step_frank_wolfe", "pairwise_frank_wolfe", "frank_wolfe", "Variant", "run_frank_wolfe"]
