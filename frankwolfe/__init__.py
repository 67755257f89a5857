"""frankwolfe: projection-free constrained optimization.

The toolkit is built on three interfaces - :class:`Objective`, :class:`LMO`
(a domain given by its linear minimization oracle) and
:class:`ProductDomain` - and one shared loop that every Frank-Wolfe variant
runs on.  :func:`minimize` reaches every method by name.
"""

from . import step_size
from ._config import debug, debug_enabled, set_debug
from .active_set import ActiveSet
from .algorithms import (
    SaddleBacktracking,
    SaddleStep,
    away_step_frank_wolfe,
    biconjugate_frank_wolfe,
    block_coordinate_frank_wolfe,
    compiled_pairwise_frank_wolfe,
    conjugate_frank_wolfe,
    frank_wolfe,
    fully_corrective_frank_wolfe,
    pairwise_frank_wolfe,
    randomized_away_step_frank_wolfe,
    saddle_point_frank_wolfe,
    supports_compiled_pairwise,
)
from .algorithms.saddle import _minimize_saddle
from .atoms import Atom
from .direction import Direction
from .errors import (ExecutorError, FrankWolfeError, InfeasibleError, NonConvexError,
                     OracleError, ShapeError)
from .parallel import DaskExecutor, Executor, SerialExecutor, ThreadExecutor
from .lmo import (
    LMO,
    Birkhoff,
    Box,
    FlowPolytope,
    Hypercube,
    KSparsePolytope,
    L1Ball,
    L2Ball,
    LinfBall,
    LpBall,
    NuclearNormBall,
    ProbabilitySimplex,
    ProductDomain,
    Spectrahedron,
    UnitSimplex,
)
from .minimize import available_methods, minimize, register_method
from .monitor import IterationState
from .options import RunOptions
from .objectives import (
    BilinearObjective,
    FunctionObjective,
    LeastSquares,
    Objective,
    QuadraticObjective,
    SaddleObjective,
    Tracker,
    game_value,
)
from .result import History, Result, Status
from .step_size import Adaptive, Agnostic, Armijo, ExactStep, ShortStep, StepSize

for _names, _solver in (
    (("fw", "frank_wolfe"), frank_wolfe),
    (("away", "afw"), away_step_frank_wolfe),
    (("pairwise", "pfw"), pairwise_frank_wolfe),
    (("compiled_pairwise",), compiled_pairwise_frank_wolfe),
    (("rafw",), randomized_away_step_frank_wolfe),
    (("fcfw",), fully_corrective_frank_wolfe),
    (("bcfw",), block_coordinate_frank_wolfe),
    (("cfw",), conjugate_frank_wolfe),
    (("bfw",), biconjugate_frank_wolfe),
    (("saddle",), _minimize_saddle),
):
    for _name in _names:
        register_method(_name, _solver)
del _names, _solver, _name

__version__ = "0.1.0"

__all__ = [
    # interfaces
    "Objective", "Tracker", "LMO", "Atom", "ProductDomain", "Direction", "ActiveSet",
    # objectives
    "FunctionObjective", "QuadraticObjective", "LeastSquares",
    "SaddleObjective", "BilinearObjective", "game_value",
    # domains
    "ProbabilitySimplex", "UnitSimplex", "L1Ball", "L2Ball", "LpBall", "LinfBall", "Box",
    "Hypercube", "KSparsePolytope", "Birkhoff", "NuclearNormBall", "Spectrahedron",
    "FlowPolytope",
    # methods
    "frank_wolfe", "away_step_frank_wolfe", "pairwise_frank_wolfe",
    "compiled_pairwise_frank_wolfe", "supports_compiled_pairwise",
    "randomized_away_step_frank_wolfe", "fully_corrective_frank_wolfe",
    "block_coordinate_frank_wolfe", "conjugate_frank_wolfe", "biconjugate_frank_wolfe",
    "saddle_point_frank_wolfe", "SaddleStep", "SaddleBacktracking",
    "minimize", "register_method", "available_methods",
    # results and monitoring
    "Result", "History", "Status", "IterationState", "RunOptions",
    # step sizes
    "StepSize", "Agnostic", "ShortStep", "ExactStep", "Adaptive", "Armijo", "step_size",
    # errors and debugging
    "FrankWolfeError", "ShapeError", "InfeasibleError", "OracleError", "NonConvexError",
    "ExecutorError",
    # executors of mini-batch BCFW
    "Executor", "SerialExecutor", "ThreadExecutor", "DaskExecutor",
    "debug", "debug_enabled", "set_debug",
]

# block-coordinate strategies (block orders and block steps of BCFW)
from .algorithms.block_orders import (BlockOrder, GapSampling, MaxGap,  # noqa: E402
                                      Permutation, UniformSampling)
from .algorithms.block_steps import AwayStep, BlockStep, FWStep, PairwiseStep  # noqa: E402

__all__ += ["BlockOrder", "UniformSampling", "Permutation", "GapSampling", "MaxGap",
            "BlockStep", "FWStep", "AwayStep", "PairwiseStep"]
