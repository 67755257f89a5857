"""Objectives."""

from .base import Objective, Tracker
from .function import FunctionObjective
from .least_squares import LeastSquares, LeastSquaresTracker
from .quadratic import QuadraticObjective, QuadraticTracker
from .saddle import BilinearObjective, SaddleObjective, game_value

__all__ = ["Objective", "Tracker", "FunctionObjective",
           "SaddleObjective", "BilinearObjective", "game_value",
           "QuadraticObjective", "QuadraticTracker", "LeastSquares", "LeastSquaresTracker"]
