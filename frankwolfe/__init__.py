"""frankwolfe: projection-free constrained optimization.

The toolkit is built on three interfaces - :class:`Objective`, :class:`LMO`
(a domain given by its linear minimization oracle) and
:class:`ProductDomain` - and one shared loop that every Frank-Wolfe variant
runs on.
"""

from . import step_size
from ._config import debug, debug_enabled, set_debug
from .algorithms import frank_wolfe
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
from .minimize import available_methods, minimize, register_method
from .monitor import IterationState
from .objectives import FunctionObjective, Objective, Tracker
from .result import History, Result, Status
from .step_size import Adaptive, Agnostic, Armijo, ExactStep, ShortStep, StepSize

register_method("fw", frank_wolfe)
register_method("frank_wolfe", frank_wolfe)

__version__ = "0.1.0"

__all__ = [
    "Objective", "FunctionObjective", "Tracker",
    "LMO", "Atom", "ProductDomain", "Direction",
    "ProbabilitySimplex", "UnitSimplex", "L1Ball",
    "frank_wolfe", "minimize", "register_method", "available_methods",
    "Result", "History", "Status", "IterationState",
    "StepSize", "Agnostic", "ShortStep", "ExactStep", "Adaptive", "Armijo", "step_size",
    "FrankWolfeError", "ShapeError", "InfeasibleError", "OracleError", "NonConvexError",
    "debug", "debug_enabled", "set_debug",
]
