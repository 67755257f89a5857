"""Linear minimization oracles (domains)."""

from .base import LMO
from .norms import L1Ball
from .product import ProductDomain
from .simplex import ProbabilitySimplex, UnitSimplex

__all__ = ["LMO", "ProductDomain", "ProbabilitySimplex", "UnitSimplex", "L1Ball"]
