"""Objectives."""

from .base import Objective, Tracker
from .function import FunctionObjective
from .least_squares import LeastSquares, LeastSquaresTracker
from .quadratic import QuadraticObjective, QuadraticTracker

__all__ = ["Objective", "Tracker", "FunctionObjective",
           "QuadraticObjective", "QuadraticTracker", "LeastSquares", "LeastSquaresTracker"]
