"""frankwolfe: projection-free constrained optimization.

The toolkit is built on three interfaces - :class:`Objective`, :class:`LMO`
(a domain given by its linear minimization oracle) and
:class:`ProductDomain` - and one shared loop that every Frank-Wolfe variant
runs on.  :func:`minimize` reaches every method by the names it registered
(:func:`register`, beside each method).
"""

# first: numba's cache of frankwolfe's kernels must be patched before any is defined
from . import (
    _numba_hooks,  # noqa: F401
    step_size,
)
from ._config import debug, debug_enabled, set_debug
from .active_set import ActiveSet
from .algorithms import (
    alternating_linear_minimization,
    away_step_frank_wolfe,
    biconjugate_frank_wolfe,
    blended_conditional_gradient,
    blended_pairwise_conditional_gradient,
    block_coordinate_frank_wolfe,
    compiled_pairwise_frank_wolfe,
    conjugate_frank_wolfe,
    decomposition_invariant_conditional_gradient,
    frank_wolfe,
    fully_corrective_frank_wolfe,
    pairwise_frank_wolfe,
    randomized_away_step_frank_wolfe,
    saddle_point_frank_wolfe,
    stochastic_frank_wolfe,
    supports_compiled_pairwise,
)
from .algorithms.block_orders import BlockOrder, GapSampling, MaxGap, Permutation, UniformSampling
from .algorithms.block_steps import AwayStep, BlockStep, FWStep, PairwiseStep
from .atoms import Atom
from .direction import Direction
from .errors import (
    ExecutorError,
    FrankWolfeError,
    InfeasibleError,
    NonConvexError,
    NonFiniteGradientError,
    OracleError,
    RestrictedGameError,
    ShapeError,
    UnboundedError,
)
from .lmo import (
    LMO,
    Birkhoff,
    Box,
    CachedLMO,
    ConvexHull,
    DualSolution,
    Ellipsoid,
    Fantope,
    FlowPolytope,
    GroupL1Ball,
    Hypercube,
    HyperSimplex,
    KNormBall,
    KSparsePolytope,
    L1Ball,
    L2Ball,
    LinfBall,
    LpBall,
    NuclearNormBall,
    OrderedWeightedL1Ball,
    Polytope,
    ProbabilitySimplex,
    ProductDomain,
    ScaledL1Ball,
    Spectrahedron,
    UnitHyperSimplex,
    UnitSimplex,
    UnitSpectrahedron,
)
from .minimize import minimize
from .monitor import IterationState
from .objectives import (
    BilinearObjective,
    FiniteSum,
    FiniteSumObjective,
    FunctionObjective,
    LeastSquares,
    LinearModelLoss,
    Objective,
    QuadraticObjective,
    SaddleObjective,
    Tracker,
    game_value,
)
from .options import RunOptions
from .parallel import DaskExecutor, Executor, SerialExecutor, ThreadExecutor
from .registry import available_methods, register
from .result import History, Result, Status
from .step_size import (
    Adaptive,
    Agnostic,
    Armijo,
    ExactStep,
    LogAgnostic,
    Monotonic,
    NonConvexAgnostic,
    SaddleBacktracking,
    SaddleStep,
    Secant,
    ShortStep,
    StepSize,
)

__version__ = "0.2.0"

__all__ = [
    # interfaces
    "Objective", "Tracker", "LMO", "Atom", "ProductDomain", "Direction", "ActiveSet",
    # objectives
    "FunctionObjective", "QuadraticObjective", "LeastSquares", "FiniteSum",
    "FiniteSumObjective", "LinearModelLoss",
    "SaddleObjective", "BilinearObjective", "game_value",
    # domains
    "ProbabilitySimplex", "UnitSimplex", "L1Ball", "L2Ball", "LpBall", "LinfBall", "Box",
    "Hypercube", "KSparsePolytope", "Birkhoff", "NuclearNormBall", "Spectrahedron",
    "CachedLMO", "FlowPolytope", "Polytope", "ConvexHull", "HyperSimplex", "UnitHyperSimplex",
    "KNormBall", "OrderedWeightedL1Ball", "GroupL1Ball", "ScaledL1Ball", "Ellipsoid",
    "UnitSpectrahedron", "Fantope", "DualSolution",
    # methods
    "frank_wolfe", "away_step_frank_wolfe", "pairwise_frank_wolfe",
    "blended_pairwise_conditional_gradient", "decomposition_invariant_conditional_gradient",
    "blended_conditional_gradient", "alternating_linear_minimization",
    "compiled_pairwise_frank_wolfe", "supports_compiled_pairwise",
    "randomized_away_step_frank_wolfe", "fully_corrective_frank_wolfe",
    "block_coordinate_frank_wolfe", "conjugate_frank_wolfe", "biconjugate_frank_wolfe",
    "saddle_point_frank_wolfe", "SaddleStep", "SaddleBacktracking", "stochastic_frank_wolfe",
    "minimize", "register", "available_methods",
    # results and monitoring
    "Result", "History", "Status", "IterationState", "RunOptions",
    # step sizes
    "StepSize", "Agnostic", "LogAgnostic", "NonConvexAgnostic", "Monotonic", "ShortStep",
    "ExactStep", "Adaptive", "Armijo", "Secant", "step_size",
    # errors and debugging
    "FrankWolfeError", "ShapeError", "InfeasibleError", "OracleError", "NonConvexError",
    "ExecutorError", "UnboundedError", "RestrictedGameError", "NonFiniteGradientError",
    # executors of mini-batch BCFW
    "Executor", "SerialExecutor", "ThreadExecutor", "DaskExecutor",
    "debug", "debug_enabled", "set_debug",
    # block-coordinate strategies (block orders and block steps of BCFW)
    "BlockOrder", "UniformSampling", "Permutation", "GapSampling", "MaxGap",
    "BlockStep", "FWStep", "AwayStep", "PairwiseStep",
]
