"""Linear minimization oracles (domains)."""

from .base import LMO
from .box import Box, Hypercube, LinfBall
from .cached import CachedLMO
from .dual import DualSolution
from .ellipsoid import Ellipsoid
from .flow import FlowPolytope
from .hull import ConvexHull
from .hypersimplex import HyperSimplex, UnitHyperSimplex
from .ksparse import KSparsePolytope
from .matrix import Birkhoff, NuclearNormBall, Spectrahedron
from .norm_balls import GroupL1Ball, KNormBall, OrderedWeightedL1Ball, ScaledL1Ball
from .norms import L1Ball, L2Ball, LpBall
from .polytope import Polytope
from .product import ProductDomain
from .simplex import ProbabilitySimplex, UnitSimplex
from .spectral import Fantope, UnitSpectrahedron

__all__ = ["LMO", "ProductDomain", "CachedLMO", "ProbabilitySimplex", "UnitSimplex", "L1Ball",
           "L2Ball", "LpBall", "LinfBall", "Box", "Hypercube", "KSparsePolytope",
           "Birkhoff", "NuclearNormBall", "Spectrahedron", "FlowPolytope",
           "Polytope", "ConvexHull", "HyperSimplex", "UnitHyperSimplex",
           "KNormBall", "OrderedWeightedL1Ball", "GroupL1Ball", "ScaledL1Ball", "Ellipsoid",
           "UnitSpectrahedron", "Fantope", "DualSolution"]
