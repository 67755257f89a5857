"""Linear minimization oracles (domains)."""

from .base import LMO
from .norms import L1Ball
from .norms import Box, Hypercube, KSparsePolytope, L2Ball, LinfBall, LpBall
from .flow import FlowPolytope
from .matrix import Birkhoff, NuclearNormBall, Spectrahedron
from .product import ProductDomain
from .simplex import ProbabilitySimplex, UnitSimplex

__all__ = ["LMO", "ProductDomain", "ProbabilitySimplex", "UnitSimplex", "L1Ball",
           "L2Ball", "LpBall", "LinfBall", "Box", "Hypercube", "KSparsePolytope",
           "Birkhoff", "NuclearNormBall", "Spectrahedron", "FlowPolytope"]
