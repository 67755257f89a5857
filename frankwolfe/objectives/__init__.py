"""Objectives."""

from .base import Objective, Tracker
from .finite_sum import FiniteSum, FiniteSumObjective, LinearModelLoss
from .function import FunctionObjective
from .least_squares import LeastSquares, LeastSquaresTracker
from .line import line_minimizer
from .quadratic import QuadraticObjective, QuadraticTracker
from .saddle import BilinearObjective, SaddleObjective, game_value

__all__ = ["Objective", "Tracker", "FunctionObjective", "FiniteSum", "FiniteSumObjective",
           "LinearModelLoss",
           "SaddleObjective", "BilinearObjective", "game_value",
           "QuadraticObjective", "QuadraticTracker", "LeastSquares", "LeastSquaresTracker",
           "line_minimizer"]
