"""Frank-Wolfe algorithms, all on the shared loop of :mod:`.loop`."""

from .away import away_step_frank_wolfe
from .fcfw import fully_corrective_frank_wolfe
from .rafw import randomized_away_step_frank_wolfe
from .bcfw import block_coordinate_frank_wolfe
from .conjugate import biconjugate_frank_wolfe, conjugate_frank_wolfe
from .frank_wolfe import frank_wolfe
from .pairwise import pairwise_frank_wolfe
from .saddle import SaddleStep, saddle_point_frank_wolfe
from .loop import Variant, run_frank_wolfe

__all__ = ["randomized_away_step_frank_wolfe", "fully_corrective_frank_wolfe", "saddle_point_frank_wolfe", "SaddleStep", "conjugate_frank_wolfe", "biconjugate_frank_wolfe", "block_coordinate_frank_wolfe", "away_step_frank_wolfe", "pairwise_frank_wolfe", "frank_wolfe", "Variant", "run_frank_wolfe"]
