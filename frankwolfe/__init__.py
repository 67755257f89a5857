"""frankwolfe: projection-free constrained optimization.

The toolkit is built on three interfaces - :class:`Objective`, :class:`LMO`
(a domain given by its linear minimization oracle) and
:class:`ProductDomain` - and one shared loop that every Frank-Wolfe variant
runs on.
"""

from . import step_size
from ._config import debug, debug_enabled, set_debug
from .active_set import ActiveSet
from .algorithms import frank_wolfe
from .algorithms import block_coordinate_frank_wolfe
from .algorithms import away_step_frank_wolfe, pairwise_frank_wolfe
from .algorithms import fully_corrective_frank_wolfe, randomized_away_step_frank_wolfe
from .algorithms import biconjugate_frank_wolfe, conjugate_frank_wolfe
from .algorithms import SaddleStep, saddle_point_frank_wolfe
from .algorithms.saddle import _minimize_saddle
from .atoms import Atom
from .direction import Direction
from .errors import (
    FrankWolfeError,
    InfeasibleError,
    NonConvexError,
    OracleError,
    ShapeError,
)
from .lmo import L1Ball, LMO, ProbabilitySimplex, ProductDomain, UnitSimplex
from .lmo import Birkhoff, FlowPolytope, NuclearNormBall, Spectrahedron
from .lmo import Box, Hypercube, KSparsePolytope, L2Ball, LinfBall, LpBall
from .minimize import available_methods, minimize, register_method
from .monitor import IterationState
from .objectives import FunctionObjective, Objective, Tracker
from .objectives import LeastSquares, QuadraticObjective
from .objectives import BilinearObjective, SaddleObjective, game_value
from .result import History, Result, Status
from .step_size import Adaptive, Agnostic, Armijo, ExactStep, ShortStep, StepSize

register_method("fw", frank_wolfe)
register_method("bcfw", block_coordinate_frank_wolfe)
register_method("away", away_step_frank_wolfe)
register_method("pairwise", pairwise_frank_wolfe)
register_method("rafw", randomized_away_step_frank_wolfe)
register_method("fcfw", fully_corrective_frank_wolfe)
register_method("frank_wolfe", frank_wolfe)
register_method("cfw", conjugate_frank_wolfe)
register_method("bfw", biconjugate_frank_wolfe)
register_method("saddle", _minimize_saddle)

__version__ = "0.1.0"

__all__ = [
    "randomized_away_step_frank_wolfe", "fully_corrective_frank_wolfe",
    "saddle_point_frank_wolfe", "SaddleStep", "SaddleObjective", "BilinearObjective", "game_value",
    "conjugate_frank_wolfe", "biconjugate_frank_wolfe",
    "Objective", "FunctionObjective", "Tracker",
    "QuadraticObjective", "LeastSquares",
    "LMO", "Atom", "ProductDomain", "Direction",
    "ProbabilitySimplex", "UnitSimplex", "L1Ball",
    "Birkhoff", "NuclearNormBall", "Spectrahedron", "FlowPolytope",
    "L2Ball", "LpBall", "LinfBall", "Box", "Hypercube", "KSparsePolytope",
    "frank_wolfe", "block_coordinate_frank_wolfe", "away_step_frank_wolfe", "pairwise_frank_wolfe", "ActiveSet", "minimize", "register_method", "available_methods",
    "Result", "History", "Status", "IterationState",
    "StepSize", "Agnostic", "ShortStep", "ExactStep", "Adaptive", "Armijo", "step_size",
    "FrankWolfeError", "ShapeError", "InfeasibleError", "OracleError", "NonConvexError",
    "debug", "debug_enabled", "set_debug",
]
