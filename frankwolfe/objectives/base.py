"""The objective interface and the tracked iterate.

An :class:`Objective` answers ``f(x)`` and ``grad f(x)``.  Optional hooks
are used by the algorithms when present:

* ``value_and_gradient(x)`` - both at once (defaults to two calls);
* ``exact_step(x, direction, gradient)`` - closed-form line search;
* ``partial_gradient(x, indices)`` - gradient entries at ``indices`` only;
* ``exact_step_block(x, indices, d, g_idx)`` - line search along a direction
  supported on ``indices`` (block-coordinate methods);
* ``smoothness`` - a Lipschitz constant L of the gradient (short steps);
* ``hessian_vector_product(x, v)`` - ``H(x) v``, the curvature used by the
  conjugate-direction methods;
* ``tracker(x)`` - a :class:`Tracker` that updates cached products
  incrementally when the iterate moves along a :class:`~frankwolfe.Direction`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from .._finite import all_finite, first_non_finite
from .._numbers import brief, read_shape
from ..direction import Direction
from ..errors import NonFiniteGradientError, ShapeError

__all__ = ["Objective", "Tracker", "NonFiniteGradientError", "all_finite", "checked_gradient",
           "checked_value", "point_shape"]

_FLOAT = np.dtype(float)


def _source(owner: Any, method: str, what: str) -> str:
    """``Class.method``, the method that answered ``what`` (``"value"`` or
    ``"gradient"``): ``owner`` is the objective, or the name to show for it (a str; with
    an empty ``method``, the whole name).  An objective that keeps :class:`Objective`'s
    ``value_and_gradient`` answered from its ``value`` or ``gradient``, so that is the
    one named."""
    if isinstance(owner, str):
        return f"{owner}.{method}" if method else owner
    if method == "value_and_gradient" and \
            type(owner).value_and_gradient is Objective.value_and_gradient:
        method = what
    return f"{type(owner).__name__}.{method}"


def checked_value(v: Any, owner: Any, method: str = "value") -> float:
    """``v``, the answer of ``owner``'s ``method`` for ``f(x)``, as a float.

    ``float()`` kept the real part of a numpy complex with a mere ``ComplexWarning``
    (and the run went on, on the wrong objective): a complex value is a ``ValueError``,
    None, text or another object a ``TypeError``, an array of more than one entry a
    :class:`~frankwolfe.errors.ShapeError`, each naming ``Class.method``.

    Parameters
    ----------
    v : object
        The answer.
    owner : Objective or str
        The objective that answered (or the name to show for it).
    method : str, default "value"
        The method that answered; ``"value_and_gradient"`` names ``value`` when the
        objective keeps the default pair.

    Returns
    -------
    float
    """
    if isinstance(v, float):  # np.float64 too
        return float(v)
    if isinstance(v, complex) or getattr(getattr(v, "dtype", None), "kind", "") == "c":
        raise ValueError(f"{_source(owner, method, 'value')} must return a real number, "
                         f"got the complex {brief(v)}")
    if isinstance(v, np.ndarray) and v.size != 1:
        raise ShapeError(f"{_source(owner, method, 'value')} must return a real number, "
                         f"got an array of shape {v.shape}")
    if v is not None and not isinstance(v, (str, bytes)):  # float("3") read text
        try:
            return float(v)
        except (TypeError, ValueError):
            pass
    raise TypeError(f"{_source(owner, method, 'value')} must return a real number, got "
                    f"{brief(v)} ({type(v).__name__})")


def checked_gradient(g: Any, shape: tuple[int, ...] | None, owner: Any,
                     method: str = "gradient") -> np.ndarray:
    """``g``, the answer of ``owner``'s ``method`` for ``grad f(x)``, as a float array of
    ``shape`` (that of ``x``).

    A float64 array costs a dtype and a shape comparison (no copy).  ``np.asarray(g,
    dtype=float)`` kept the real part of complex entries with a mere
    ``ComplexWarning`` and read None as a NaN scalar: complex entries are a
    ``ValueError``, None, text or objects a ``TypeError`` and another shape a
    :class:`~frankwolfe.errors.ShapeError`, each naming ``Class.method``.

    Parameters
    ----------
    g : object
        The answer.
    shape : tuple of int or None
        The shape of ``x``; None: not checked (the caller checks it).
    owner : Objective or str
        The objective that answered (or the name to show for it).
    method : str, default "gradient"
        The method that answered; ``"value_and_gradient"`` names ``gradient`` when the
        objective keeps the default pair.

    Returns
    -------
    ndarray
        ``g`` itself when it is a float64 array, else a float64 copy.
    """
    if type(g) is not np.ndarray or g.dtype != _FLOAT:
        g = _as_gradient(g, owner, method)
    if shape is not None and g.shape != shape:
        raise ShapeError(f"{_source(owner, method, 'gradient')}: the gradient has shape "
                         f"{g.shape} but x has shape {shape}")
    return g


def _as_gradient(g: Any, owner: Any, method: str) -> np.ndarray:
    """:func:`checked_gradient`'s conversion of an answer that is not a float64 array."""
    raw: np.ndarray | None = None
    if g is not None:
        try:
            raw = np.asarray(g)
        except (TypeError, ValueError):  # ragged nesting has no shape
            pass
    kind = "" if raw is None else raw.dtype.kind
    if kind in ("b", "i", "u", "f"):
        assert raw is not None
        return raw.astype(float, copy=False)
    if kind == "c":
        raise ValueError(f"{_source(owner, method, 'gradient')} must return a real array, "
                         f"got complex values (dtype {np.asarray(g).dtype})")
    raise TypeError(f"{_source(owner, method, 'gradient')} must return an array of real "
                    f"numbers, got {brief(g)} ({type(g).__name__})")


def point_shape(owner: str, shape: Any) -> tuple[int, ...] | None:
    """The ``shape`` argument of an objective as a tuple of ints (an int ``n`` is the
    vector shape ``(n,)``), None as None: :func:`~frankwolfe._numbers.read_shape` with
    every dimension at least 1 (a ``TypeError`` for text or a bool, a
    :class:`~frankwolfe.errors.ShapeError` for a number that is not a positive whole
    number, naming ``owner``)."""
    return read_shape(shape, owner, least=1)


class Objective(ABC):
    """A differentiable objective ``f``.

    Attributes
    ----------
    convex : bool
        Declared convexity.  Algorithms check it cheaply: a step that lands
        below the tangent plane raises :class:`~frankwolfe.errors.NonConvexError`.
    smoothness : float or None
        Lipschitz constant of the gradient, when known.
    shape : tuple of int, int or None
        Shape of the points ``x`` when the objective knows it (an int ``n`` is the
        vector shape ``(n,)``).
    """

    convex: bool = True
    smoothness: float | None = None
    shape: tuple[int, ...] | int | None = None

    @abstractmethod
    def value(self, x: np.ndarray) -> float:
        """``f(x)``."""

    @abstractmethod
    def gradient(self, x: np.ndarray) -> np.ndarray:
        """``grad f(x)``, of the same shape as ``x``."""

    def value_and_gradient(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """``(f(x), grad f(x))``; override when both share work."""
        return self.value(x), self.gradient(x)

    def exact_step(self, x: np.ndarray, direction: np.ndarray, gradient: np.ndarray) -> float:
        """Minimizer ``gamma`` of ``f(x + gamma d)`` over all reals (unclipped).

        Optional.  Implementations raise :class:`~frankwolfe.errors.NonConvexError`
        when the curvature along ``d`` is negative on a convex-declared objective.
        """
        raise NotImplementedError(f"{type(self).__name__} has no closed-form line search")

    @property
    def has_exact_step(self) -> bool:
        """Whether :meth:`exact_step` is implemented."""
        return type(self).exact_step is not Objective.exact_step

    def hessian_vector_product(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``H(x) v`` with ``H`` the Hessian of ``f`` at ``x`` (optional).

        Conjugate Frank-Wolfe methods use it for curvatures ``u^T H v``;
        without it they fall back to a finite difference of gradients.
        """
        raise NotImplementedError(f"{type(self).__name__} has no Hessian-vector product")

    @property
    def has_hessian_vector_product(self) -> bool:
        """Whether :meth:`hessian_vector_product` is implemented."""
        return type(self).hessian_vector_product is not Objective.hessian_vector_product

    def partial_gradient(self, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """Gradient entries at flat ``indices`` (default: from the full gradient, checked
        as the tracker checks it: :func:`checked_gradient`)."""
        return checked_gradient(self.gradient(x), np.shape(x), self).reshape(-1)[indices]

    def exact_step_block(self, x: np.ndarray, indices: np.ndarray, direction: np.ndarray,
                         partial_gradient: np.ndarray) -> float:
        """Exact line search along a direction supported on flat ``indices``.

        Optional, used by block-coordinate methods.  Returns the unclipped
        minimizer ``gamma`` of ``f(x + gamma * E d)``, where ``E`` scatters
        ``direction`` (one value per entry of ``indices``, which are unique)
        into the shape of ``x`` and ``partial_gradient`` is
        ``grad f(x)`` at ``indices``.  Override it to cost O(len(indices));
        the default builds the dense direction and calls :meth:`exact_step`
        with the full gradient, O(dim).

        Raises
        ------
        NonFiniteGradientError
            When the default's full gradient holds NaN or inf (an entry outside the
            block too: :meth:`exact_step` would answer NaN, and be blamed for it).
        """
        g = checked_gradient(self.gradient(x), np.shape(x), self)
        if not all_finite(g):
            bad = first_non_finite(g)
            assert bad is not None
            raise NonFiniteGradientError(
                f"{type(self).__name__}.gradient is not finite (entry {bad.index} is "
                f"{bad.value}, {bad.total} in all): the exact line search along a block "
                "reads the full gradient")
        d = np.zeros(x.size)
        d[indices] = direction
        return self.exact_step(x, d.reshape(x.shape), g)

    @property
    def has_exact_step_block(self) -> bool:
        """Whether :meth:`exact_step_block` works (overridden or via :meth:`exact_step`)."""
        return type(self).exact_step_block is not Objective.exact_step_block or self.has_exact_step

    def tracker(self, x: np.ndarray) -> Tracker:
        """A :class:`Tracker` positioned at ``x`` (a copy)."""
        return Tracker(self, x)

    def as_quadratic(self) -> Any:
        """This objective as a :class:`~frankwolfe.QuadraticObjective` when it is one
        (``1/2 x^T Q x + c^T x + const`` on flat ``x``), else ``None`` (default).

        Methods that exploit quadratic structure (the corrective QP of fully
        corrective FW, compiled BCFW passes) ask this instead of the type.
        """
        return None

    def compiled_block_objective(self) -> Any:
        """Numba kernels of this objective for compiled block-coordinate passes (a
        :class:`~frankwolfe.compiled.CompiledObjective`), or ``None``
        (the Python block steps run).  Default: those of :meth:`as_quadratic`."""
        quad = self.as_quadratic()
        if quad is None or quad is self:
            return None
        return quad.compiled_block_objective()


class Tracker:
    """The current iterate with cached ``f`` and ``grad f``.

    The generic tracker re-evaluates the objective after every move.
    Objectives with structure (quadratics, least squares) subclass it to
    update their cached products from per-atom products, so an iteration
    after a sparse vertex step costs far less than a full evaluation.

    Every answer of the objective it reads is checked (:func:`checked_value`,
    :func:`checked_gradient`): a complex value or gradient, a gradient of another shape
    than ``x`` or None is an error naming the objective's method, at any iteration.

    Parameters
    ----------
    objective : Objective
    x : ndarray
        Starting point; copied.
    """

    #: the relative rounding of ``f`` that the methods' checks allow (the tangent bound
    #: of a convex objective): ``1e-5`` once the objective answers a float32 gradient
    #: (or says so: an objective's own ``rounding``), whose sums round at about 6e-8 a
    #: term (runs of a convex float32 objective ended in NonConvexError)
    rounding = 1e-10

    #: the largest ``|f|`` noted at the run's points (:meth:`note_value`): the size of
    #: ``f``'s terms when ``f`` nears 0 by their cancellation, to which the rounding of
    #: its values is relative (the loop's checks and the line searches read it)
    f_top = 0.0

    def __init__(self, objective: Objective, x: np.ndarray) -> None:
        self.objective = objective
        self.x: np.ndarray = np.array(x, dtype=float, order="C", copy=True)
        self._f: float | None = None
        self._g: np.ndarray | None = None
        # the last trial point of a line search: (direction, gamma, point, f, grad)
        self._trial: tuple[Any, float, np.ndarray, float | None, np.ndarray | None] | None = None
        self.n_function_calls = 0
        self.n_gradient_calls = 0
        # a user's objective may answer one array it writes at each call (numpy's out=):
        # the gradient held here would change under the next trial's; the package's own
        # objectives answer fresh arrays
        self._own = not type(objective).__module__.startswith("frankwolfe.")

    def _held(self, g: np.ndarray) -> np.ndarray:
        """``g`` as the tracker keeps it: a copy of a user's objective's array."""
        return g.copy() if self._own else g

    # -- evaluation -------------------------------------------------------
    def value(self) -> float:
        """``f(x)`` at the tracked point."""
        if self._f is None:
            self._f = checked_value(self.objective.value(self.x), self.objective)
            self.n_function_calls += 1
        return self._f

    def gradient(self) -> np.ndarray:
        """``grad f(x)`` at the tracked point (do not modify it)."""
        if self._g is None:
            self._f, self._g = self._evaluate()
        return self._g

    def value_and_gradient(self) -> tuple[float, np.ndarray]:
        """Both, evaluated together when neither is cached."""
        if self._g is None:
            if self._f is None:
                self._f, self._g = self._evaluate()
                return self._f, self._g
            # the value is known from the accepted line-search trial
            self._g = self._held(checked_gradient(self.objective.gradient(self.x),
                                                  self.x.shape, self.objective))
            self.n_gradient_calls += 1
            return self._f, self._g
        return self.value(), self._g

    def note_value(self, f: float) -> float:
        """Note ``f``, a value at one of the run's points, and answer :attr:`f_top`, the
        largest ``|f|`` noted (this one included).

        ``f`` computed as a difference of large terms (``f`` near 0 while they are not)
        rounds in units of those terms, not of ``f``: rounding allowances relative to
        ``f_top`` cover it, with no absolute floor (``f`` scaled by a power of two gives
        the same allowances, in its units).  The loop notes each iterate's value and the
        line searches the value they start from, so all read one record of the run.

        Parameters
        ----------
        f : float
            ``f`` at a point of the run; a value that is not finite is not noted.

        Returns
        -------
        float
            :attr:`f_top` after noting ``f``.
        """
        a = abs(f)
        if self.f_top < a < math.inf:  # False for NaN: a value not finite is no scale
            self.f_top = a
        return self.f_top

    def finite(self, value: float, gradient: np.ndarray) -> bool:
        """Whether ``value`` and ``gradient``, this tracker's ``f(x)`` and ``grad f(x)``
        (from :meth:`value_and_gradient`), are finite.

        Trackers that learn it while they update the gradient answer without a pass
        over it.
        """
        return math.isfinite(value) and all_finite(gradient)

    def gradient_dot_x(self, gradient: np.ndarray | None = None) -> float:
        """``<grad f(x), x>`` at the tracked point.

        The loop's gap ``<g, x> - <g, v>`` and the slopes ``<g, d>`` of directions
        with an ``x`` term read it; trackers that keep it between moves override this.

        Parameters
        ----------
        gradient : ndarray, optional
            ``grad f(x)`` when the caller holds it (from :meth:`value_and_gradient`).
        """
        g = self.gradient() if gradient is None else gradient
        return float(np.vdot(g, self.x))

    def slope(self, direction: Direction, gradient: np.ndarray | None = None,
              gradient_dot_x: float | None = None) -> float:
        """``<grad f(x), d>`` at the tracked point.

        Parameters
        ----------
        direction : Direction
        gradient : ndarray, optional
            ``grad f(x)`` when the caller holds it.
        gradient_dot_x : float, optional
            ``<grad f(x), x>`` (:meth:`gradient_dot_x`) when the caller holds it.
        """
        g = self.gradient() if gradient is None else gradient
        if direction.x_coef and gradient_dot_x is None:
            gradient_dot_x = self.gradient_dot_x(g)
        return direction.dot(g, gradient_dot_x)

    def _evaluate(self) -> tuple[float, np.ndarray]:
        obj = self.objective
        f, g = obj.value_and_gradient(self.x)
        self.n_function_calls += 1
        self.n_gradient_calls += 1
        if getattr(g, "dtype", None) == np.float32 or getattr(obj, "single", False):
            self.rounding = 1e-5
        # checked at every evaluation, not only at x0: a later wrong answer was accepted
        # silently or failed far from its cause (the oracle, the active set)
        return (checked_value(f, obj, "value_and_gradient"),
                self._held(checked_gradient(g, self.x.shape, obj, "value_and_gradient")))

    # -- moves ------------------------------------------------------------
    def move(self, direction: Direction, gamma: float) -> None:
        """``x <- x + gamma * d``.

        When the step is the last line-search trial, the tracker lands on
        exactly the trial point and keeps what was evaluated there, so an
        accepted backtracking step costs no second evaluation.
        """
        t = self._trial
        self._trial = None
        if t is not None and t[0] is direction and t[1] == gamma:
            self.x[...] = t[2]
            self._f, self._g = t[3], t[4]
            return
        direction.apply(self.x, gamma)
        self._f = None
        self._g = None

    def set_point(self, x: np.ndarray) -> None:
        """Jump to ``x`` (copied); cached quantities are recomputed."""
        self.x = np.array(x, dtype=float, order="C", copy=True)
        self._f = None
        self._g = None
        self._trial = None

    def _trial_point(self, direction: Direction, gamma: float) -> tuple:
        t = self._trial
        if t is not None and t[0] is direction and t[1] == gamma:
            return t
        t = (direction, gamma, self.x + gamma * direction.dense(self.x), None, None)
        self._trial = t
        return t

    def trial_value(self, direction: Direction, gamma: float) -> float:
        """``f(x + gamma d)`` without moving (used by backtracking)."""
        d, gm, xt, f, g = self._trial_point(direction, gamma)
        if f is None:
            f = checked_value(self.objective.value(xt), self.objective)
            self.n_function_calls += 1
            self._trial = (d, gm, xt, f, g)
        return f

    def trial_gradient(self, direction: Direction, gamma: float) -> np.ndarray:
        """``grad f(x + gamma d)`` without moving."""
        d, gm, xt, f, g = self._trial_point(direction, gamma)
        if g is None:
            g = self._held(checked_gradient(self.objective.gradient(xt), xt.shape,
                                            self.objective))
            self.n_gradient_calls += 1
            self._trial = (d, gm, xt, f, g)
        return g

    def direction_sq_norm(self, direction: Direction) -> float:
        """``||d||^2``."""
        d = direction.dense(self.x)
        return float(np.vdot(d, d))

    def exact_step(self, direction: Direction) -> float:
        """Unclipped exact line-search step along ``direction``."""
        return float(
            self.objective.exact_step(self.x, direction.dense(self.x), self.gradient())
        )

    @property
    def has_exact_step(self) -> bool:
        """Whether the objective offers a closed-form line search."""
        return self.objective.has_exact_step

    def snapshot(self) -> np.ndarray:
        """A copy of the current point."""
        return self.x.copy()

    def __getstate__(self) -> dict[str, Any]:  # pragma: no cover - convenience
        return self.__dict__.copy()
