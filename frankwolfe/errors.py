"""Exceptions raised by the toolkit.

Every exception derives from :class:`FrankWolfeError` and from the builtin a
user would expect (``ValueError`` for bad input), so ``except ValueError``
keeps working.
"""

from __future__ import annotations

from typing import Any


class FrankWolfeError(Exception):
    """Base class of the toolkit's exceptions."""

    #: The run so far (its last good iterate), where a solver attaches one
    #: (:class:`NonConvexError`, :class:`ExecutorError`); a ``Result``.
    result: Any = None


class ShapeError(FrankWolfeError, ValueError):
    """Arrays that must agree in shape do not (x0, gradient, LMO answer)."""


class InfeasibleError(FrankWolfeError, ValueError):
    """A point that must lie in the domain does not (for example ``x0``)."""


class OracleError(FrankWolfeError, ValueError):
    """A linear minimization oracle returned something it must not."""


class UnboundedError(OracleError):
    """An oracle's linear program is unbounded: its domain (for example a
    :class:`~frankwolfe.lmo.polytope.Polytope` given by inequalities) is not bounded."""


class NonConvexError(FrankWolfeError, ValueError):
    """An objective declared convex is not: negative curvature met along a step, or a
    lower bound ``max_k (f_k - gap_k)`` above the value returned (the run's gaps then
    certify nothing); the solver attaches the run so far as ``err.result``."""


class NonFiniteGradientError(FrankWolfeError, FloatingPointError):
    """A gradient holds NaN or inf where a method reads it whole (the full gradient behind
    :meth:`Objective.exact_step_block <frankwolfe.Objective.exact_step_block>`): the
    fault is the gradient's, not that of the method that would have used it.  A run
    that meets one ends with ``status="error"`` and its last good iterate."""


class ExecutorError(FrankWolfeError, RuntimeError):
    """An executor lost its workers (e.g. the Dask cluster or client went away): the
    solver attaches the result so far (its last good iterate) as ``err.result``; or a
    run started on an executor that another run holds (:meth:`Executor.claim
    <frankwolfe.parallel.Executor.claim>`: one run at a time)."""


class RestrictedGameError(FrankWolfeError, RuntimeError):
    """The solver of a restricted game (HiGHS' linear program, cvxpy's quadratic program)
    failed, so fully corrective saddle-point Frank-Wolfe cannot take its step; the message
    names the game's size and the solver."""
