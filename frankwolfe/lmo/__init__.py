"""Linear minimization oracles (domains)."""

from .base import LMO
from .box import Box, Hypercube, LinfBall
from .cached import CachedLMO
from .flow import FlowPolytope
from .ksparse import KSparsePolytope
from .matrix import Birkhoff, NuclearNormBall, Spectrahedron
from .norms import L1Ball, L2Ball, LpBall
from .product import ProductDomain
from .simplex import ProbabilitySimplex, UnitSimplex

__all__ = ["LMO", "ProductDomain", "CachedLMO", "ProbabilitySimplex", "UnitSimplex", "L1Ball",
           "L2Ball", "LpBall", "LinfBall", "Box", "Hypercube", "KSparsePolytope",
           "Birkhoff", "NuclearNormBall", "Spectrahedron", "FlowPolytope"]
