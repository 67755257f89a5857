"""Objectives."""

from .base import Objective, Tracker
from .function import FunctionObjective

__all__ = ["Objective", "Tracker", "FunctionObjective"]
