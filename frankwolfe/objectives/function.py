"""An objective built from plain Python callables."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._numbers import brief, check_flag, check_real
from ..errors import ShapeError
from .base import Objective, checked_gradient, point_shape

__all__ = ["FunctionObjective"]


class FunctionObjective(Objective):
    """Objective from a value function and a gradient function.

    Parameters
    ----------
    fun : callable
        ``fun(x) -> float``; an answer of one entry (``np.array([f])``, a 1x1
        array) is read as that entry, as :func:`scipy.optimize.minimize` reads it.
    grad : callable
        ``grad(x) -> ndarray`` of the shape of ``x``.
    value_and_gradient : callable, optional
        ``(x) -> (float, ndarray)`` when both share work.
    exact_step : callable, optional
        ``(x, direction, gradient) -> float``: the unclipped minimizer of
        ``fun(x + gamma * direction)``.
    smoothness : float, optional
        Lipschitz constant of ``grad``, finite and ``>= 0`` (0 for a linear
        function; enables short steps).
    convex : bool, default True
        Declared convexity (checked cheaply during the run).
    shape : tuple of int, optional
        Shape of ``x``, used when no ``x0`` is given.
    to_cvxpy : callable, optional
        ``(x_expression) -> cvxpy expression`` of ``fun`` (``x_expression`` a cvxpy
        expression of ``x``'s shape): becomes the objective's ``to_cvxpy``, which the
        fully corrective method's ``corrective="cvxpy"`` minimizes over the hull of
        its atoms.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import FunctionObjective
    >>> f = FunctionObjective(lambda x: 0.5 * x @ x, lambda x: x, smoothness=1.0)
    >>> f.value(np.array([3.0, 4.0]))
    12.5
    """

    def __init__(
        self,
        fun: Callable[[np.ndarray], float],
        grad: Callable[[np.ndarray], np.ndarray],
        *,
        value_and_gradient: Callable[[np.ndarray], tuple[float, np.ndarray]] | None = None,
        exact_step: Callable[[np.ndarray, np.ndarray, np.ndarray], float] | None = None,
        smoothness: float | None = None,
        convex: bool = True,
        shape: tuple[int, ...] | int | None = None,
        to_cvxpy: Callable[[Any], Any] | None = None,
    ) -> None:
        if not callable(fun):
            raise TypeError(f"FunctionObjective: `fun` must be callable, got {type(fun).__name__}")
        if not callable(grad):
            raise TypeError(
                f"FunctionObjective: `grad` must be callable, got {type(grad).__name__}")
        for name, hook in (("value_and_gradient", value_and_gradient),
                           ("exact_step", exact_step)):
            if hook is not None and not callable(hook):
                raise TypeError(f"FunctionObjective: `{name}` must be callable or None, "
                                f"got {type(hook).__name__}")
        if smoothness is not None:
            smoothness = check_real(smoothness, "smoothness", "FunctionObjective", low=0.0)
        if to_cvxpy is not None and not callable(to_cvxpy):
            raise TypeError(f"FunctionObjective: `to_cvxpy` must be callable, got "
                            f"{type(to_cvxpy).__name__}")
        if to_cvxpy is not None:
            # an instance attribute only when given: the fully corrective method asks
            # whether the objective has one
            self.to_cvxpy = to_cvxpy
        self._fun = fun
        self._grad = grad
        self._vg = value_and_gradient
        self._exact = exact_step
        self.smoothness = smoothness
        self.convex = check_flag(convex, "convex", where="FunctionObjective")
        if shape is not None:
            self.shape = point_shape("FunctionObjective", shape)

    @staticmethod
    def _scalar(v: Any, x: np.ndarray) -> float:
        """``fun``'s answer ``v`` as a float: a number, or an array-like of one entry
        (read as it, as scipy.optimize.minimize reads it with ``np.asarray(v).item()``);
        a ``TypeError`` for text or None, a ``ValueError`` for a complex value and a
        :class:`~frankwolfe.errors.ShapeError` for more entries than one."""
        if isinstance(v, complex) or getattr(getattr(v, "dtype", None), "kind", "") == "c":
            # float() raised a TypeError (a Python complex) or kept the real part (numpy's)
            raise ValueError(f"FunctionObjective: `fun` (minimize's `fun`) must return a "
                             f"real number, got the complex {v!r}")
        if v is None or isinstance(v, (str, bytes)):  # float("3") read text as a number
            raise TypeError(f"FunctionObjective: `fun` must return a real number, got "
                            f"{brief(v)} ({type(v).__name__})")
        if not (isinstance(v, np.ndarray) and v.ndim):  # numpy 1.x's float() of a (1,)
            try:                                         # array warned, 2.x's raises
                return float(v)
            except TypeError:
                pass
        if isinstance(v, tuple) and len(v) == 2:  # (f, gradient): scipy's jac=True form
            raise ShapeError(
                f"FunctionObjective: `fun` must return a scalar, got a pair (tuple of 2) "
                f"at x of shape {np.shape(x)}: a function returning (f, gradient) is "
                "minimize(fun, domain, jac=True)'s form")
        try:
            raw: np.ndarray | None = np.asarray(v)
        except (TypeError, ValueError):  # a ragged sequence has no shape
            raw = None
        if raw is not None and raw.dtype.kind == "c":  # a list of one complex number
            raise ValueError(f"FunctionObjective: `fun` (minimize's `fun`) must return a "
                             f"real number, got the complex {v!r}")
        if raw is not None and raw.size == 1 and raw.dtype.kind in "biufO":
            try:
                return float(raw.item())
            except (TypeError, ValueError):  # an object that is no number
                pass
        shape = "" if raw is None else f" of shape {raw.shape}"
        raise ShapeError(f"FunctionObjective: `fun` must return a scalar, got "
                         f"{type(v).__name__}{shape} at x of shape {np.shape(x)}")

    def value(self, x: np.ndarray) -> float:
        return self._scalar(self._fun(x), x)

    def __repr__(self) -> str:
        parts = [f"fun={brief(self._fun)}", f"grad={brief(self._grad)}"]
        shape = getattr(self, "shape", None)
        if shape is not None:
            parts.append(f"shape={shape!r}")
        if self.smoothness is not None:
            parts.append(f"smoothness={self.smoothness!r}")
        if not self.convex:
            parts.append("convex=False")
        return f"FunctionObjective({', '.join(parts)})"

    #: whether the functions answered a float32 gradient (single precision: the
    #: methods' rounding allowances follow, see ``Tracker.rounding``)
    single = False

    def gradient(self, x: np.ndarray) -> np.ndarray:
        return self._as_gradient(self._grad(x))

    def value_and_gradient(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        if self._vg is not None:
            f, g = self._vg(x)
            return self._scalar(f, x), self._as_gradient(g)
        return self.value(x), self.gradient(x)

    def _as_gradient(self, g: Any) -> np.ndarray:
        if getattr(g, "dtype", None) == np.float32:
            self.single = True
        # the shape is the tracker's to check (x's); complex entries, None or text here
        out = checked_gradient(g, None, "FunctionObjective: `grad` (minimize's `jac`)", "")
        # a function that writes into one output array and returns it each time (numpy's
        # out=) would overwrite the gradient the run holds at its next call: the
        # bi-conjugate methods' product of two gradients then came out 0, and a false
        # "converged" with it
        return out.copy() if out is g else out

    def exact_step(self, x: np.ndarray, direction: np.ndarray, gradient: np.ndarray) -> float:
        if self._exact is None:
            return super().exact_step(x, direction, gradient)
        return float(self._exact(x, direction, gradient))

    @property
    def has_exact_step(self) -> bool:
        return self._exact is not None
