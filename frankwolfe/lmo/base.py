"""The linear minimization oracle (LMO) interface.

A domain is known to the algorithms only through its LMO: given a direction
``g`` it answers ``argmin_{s in M} <g, s>``.  A user implements one method,
:meth:`LMO.extreme_point`; everything else has a default.

Example
-------
>>> import numpy as np
>>> from frankwolfe import LMO
>>> class Cube(LMO):
...     '''The box [-1, 1]^n.'''
...     def extreme_point(self, direction):
...         return -np.sign(direction) + (direction == 0)
...     def violation(self, x):
...         return max(0.0, float(np.abs(x).max()) - 1.0)
>>> Cube()(np.array([1.0, -2.0])).to_dense()
array([-1.,  1.])
"""

from __future__ import annotations

import functools
import inspect
import math
import types
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import numpy as np

from .. import _config
from .._finite import _SMALL, all_finite, first_non_finite
from .._numbers import brief, read_shape, real_array
from .._sparse import issparse
from ..atoms import Atom, UnhashableKeyError, as_atom
from ..errors import InfeasibleError, OracleError, ShapeError

if TYPE_CHECKING:
    from ..active_set import ActiveSet
    from .dual import DualSolution

__all__ = ["LMO", "FEASIBILITY_TOL", "feasibility_tolerance", "as_given", "answers_atoms",
           "declared_shape", "finite_oracle"]

#: Largest relative violation (:meth:`LMO.violation`) accepted for a point a
#: user hands in (a start ``x0``, a warm-start atom): above it the point is
#: rejected by :meth:`LMO.check_feasible`.  Loose enough for points computed in
#: floating point (a simplex point whose sum is off by a few ulps, a projection
#: accurate to 1e-10), tight enough that a wrong point is never taken for a
#: feasible one, whose gap would then certify nothing.
FEASIBILITY_TOL = 1e-8

#: A point stored in a float type coarser than float64 is accepted within this many of
#: its type's machine epsilons (see :func:`feasibility_tolerance`): the float32 simplex
#: barycenter sums to 1 only within 2.98e-08, and a float32 point normalised in float32
#: within about one epsilon (measured up to a million coordinates).
_PRECISION_EPS = 8


def feasibility_tolerance(x: Any) -> float:
    """The violation :meth:`LMO.check_feasible` accepts for the point ``x``.

    :data:`FEASIBILITY_TOL`, or for an array of a float type coarser than float64
    (float32, float16) ``8`` machine epsilons of that type when larger: such a point
    cannot be closer to the domain than its own rounding (the float32 barycenter of a
    simplex is off by ``2.98e-08``).  The violations are relative to the domain's
    scale, so the floor is too.

    Parameters
    ----------
    x : array_like
        The point as the user gave it (before any conversion to float64).

    Returns
    -------
    float
    """
    dtype = getattr(x, "dtype", None)
    if dtype is None or not isinstance(dtype, np.dtype) or dtype.kind != "f":
        return FEASIBILITY_TOL
    return max(FEASIBILITY_TOL, _PRECISION_EPS * float(np.finfo(dtype).eps))

# Tolerance used when debug mode checks an oracle's answer.
_DEBUG_TOL = 1e-7

_FLOAT = np.dtype(float)


def as_given(start: Any, dense: np.ndarray) -> np.ndarray:
    """``start`` in the precision the user gave it, when that is a float type coarser
    than float64 (float32) and it holds ``dense``'s entries: the point whose
    :func:`feasibility_tolerance` allows its own rounding; else ``dense``, its float64
    form."""
    if isinstance(start, np.ndarray) and start.dtype.kind == "f" and \
            start.dtype.itemsize < 8 and start.size == dense.size:
        return start.reshape(dense.shape)
    return dense


# The direction check's weights: 2^-600, read-only, by size (up to _SMALL entries).  A sum
# of at most _SMALL entries times 2^-600 cannot overflow (nor warn), yet is NaN or inf as
# soon as one entry is; tiny entries underflow to 0, which numpy does not report.
_WEIGHTS: dict[int, np.ndarray] = {}
_WEIGHT = 2.0 ** -600


def _weights(n: int) -> np.ndarray:
    w = _WEIGHTS.get(n)
    if w is None:
        if len(_WEIGHTS) >= 64:  # many sizes (blocks of all lengths): start afresh
            _WEIGHTS.clear()
        w = np.full(n, _WEIGHT)
        w.flags.writeable = False
        _WEIGHTS[n] = w
    return w


_F = TypeVar("_F", bound=Callable[..., Any])


def answers_atoms(extreme_point: _F) -> _F:
    """Mark an ``extreme_point`` that answers every float array with an :class:`Atom`
    of the direction's shape: outside debug mode the shared loop then calls it without
    :meth:`LMO._answer_finite`'s conversions (a subclass that overrides it is called
    the usual way)."""
    setattr(extreme_point, "_answers_atoms", True)  # noqa: B010 - a function attribute
    return extreme_point


def declared_shape(owner: object, attribute: str = "shape") -> tuple[int, ...] | None:
    """The shape an LMO or an objective declares (its ``shape`` attribute, or another
    such as a saddle objective's ``shape_x``), as a tuple of ints, or None: the one
    reading of a shape given by a user's class, :func:`~frankwolfe._numbers.read_shape`
    (an int ``n`` is the vector shape ``(n,)``, a list of whole numbers its tuple).

    Raises
    ------
    TypeError
        When the attribute is not a number or a sequence of numbers (text, a mapping),
        naming the class and the value.
    ShapeError
        When a number in it is not a non-negative whole number.
    """
    value = getattr(owner, attribute, None)
    if value is None or (type(value) is tuple and all(type(s) is int and s >= 0
                                                      for s in value)):
        return value  # the usual case, without a call: a built-in domain's shape
    return read_shape(value, type(owner).__name__, attribute)


def _converting(extreme_point: _F) -> _F:
    """A subclass's ``extreme_point`` that takes an array-like direction (a list, a
    tuple, an integer array) as :meth:`LMO.__call__` does: the implementations index
    and reshape ``direction`` as an ndarray, and a list raised an ``AttributeError``
    that named nothing.  Float arrays (float32 too) go through as they are, and
    scipy.sparse ones to the oracles that take them (:attr:`LMO.sparse_directions`;
    the others get them dense).

    The direction is the implementation's first parameter after ``self``, given by
    position or by its own name; further parameters (a user's keyword options) pass
    through as they came."""
    if getattr(extreme_point, "_converts", False):  # a parent's, assigned in a subclass
        return extreme_point
    params = list(inspect.signature(extreme_point).parameters.values())[1:]
    first = params[0] if params else None
    # where the direction comes: by position (args[0]) and / or by its name
    by_position = first is not None and first.kind in (
        inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.VAR_POSITIONAL)
    name = first.name if first is not None and first.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY) else None

    @functools.wraps(extreme_point)
    def converting(self: LMO, *args: Any, **kwargs: Any) -> Any:
        if args:
            direction = args[0]
            if by_position and (type(direction) is not np.ndarray
                                or direction.dtype.kind != "f") and not (
                    self.sparse_directions and issparse(direction)):
                args = (self._as_direction(direction), *args[1:])
        elif name is not None and name in kwargs:
            direction = kwargs[name]
            if (type(direction) is not np.ndarray or direction.dtype.kind != "f") \
                    and not (self.sparse_directions and issparse(direction)):
                kwargs[name] = self._as_direction(direction)
        return extreme_point(self, *args, **kwargs)

    converting._converts = True  # type: ignore[attr-defined]
    return converting  # type: ignore[return-value]


def _finite_dual(dual_solution: _F) -> _F:
    """A subclass's ``dual_solution`` that refuses a direction with a NaN or infinite
    entry, as :meth:`LMO.__call__` does (``ValueError`` naming the first one)."""

    @functools.wraps(dual_solution)
    def checked(self: LMO, direction: Any, *args: Any, **kwargs: Any) -> Any:
        if not (type(direction) is np.ndarray and direction.dtype == _FLOAT):
            direction = self._as_direction(direction)
        data = direction.data if issparse(direction) else direction
        if not all_finite(np.asarray(data)):
            self._refuse_direction(direction)
        return dual_solution(self, direction, *args, **kwargs)

    checked._checks_finite = True  # type: ignore[attr-defined]
    return checked  # type: ignore[return-value]


# the code of every _converting wrapper: what tells one apart from a function that copied
# a wrapper's attributes (functools.wraps of a parent's extreme_point, in a subclass)
_CONVERTING_CODE = next(c for c in _converting.__code__.co_consts
                        if isinstance(c, types.CodeType) and c.co_name == "converting")


def _unconverted(lmo: LMO) -> Callable[[Any], Any]:
    """``lmo.extreme_point`` without the :func:`_converting` wrapper when it has one (for
    callers that hand it float ndarrays only); as it is otherwise."""
    # read through the bound method, not the instance's __dict__ (an instance's own
    # extreme_point answers here too): reading __dict__ makes CPython build the dict,
    # which slows every later attribute read of the instance, the oracle's own included
    bound = lmo.extreme_point
    func: Any = getattr(bound, "__func__", None)
    if getattr(func, "__code__", None) is _CONVERTING_CODE and \
            getattr(bound, "__self__", None) is lmo:
        return types.MethodType(func.__wrapped__, lmo)
    return bound


def finite_oracle(lmo: LMO) -> Callable[[np.ndarray], Atom]:
    """``lmo`` as the shared loop calls it, with a gradient its tracker has just found
    finite (a run stops on a non-finite gradient before the oracle is asked): without
    :meth:`LMO.__call__`'s finiteness check, and without the answer's conversions when
    ``extreme_point`` answers atoms (:func:`answers_atoms`); the gradient is a float
    ndarray, which the direction's conversion (:func:`_converting`) passes as it is, so
    the implementation is called past it.  Decided once per run; an LMO that overrides
    ``__call__`` is called through it."""
    cls = type(lmo)
    if cls.__call__ is not LMO.__call__:
        return lmo
    if (cls._answer_finite is LMO._answer_finite and not _config._debug
            and getattr(cls.extreme_point, "_answers_atoms", False)):
        # the gradient is a float ndarray: the converting wrapper would pass it as it is
        return _unconverted(lmo)
    return lmo._answer_finite


class LMO(ABC):
    """Linear minimization oracle of a compact convex set ``M``.

    Subclasses implement :meth:`extreme_point`.  They should also implement
    :meth:`violation` (how far a point is outside ``M``), which powers
    :meth:`is_feasible`, the check of ``x0`` and debug mode.

    Attributes
    ----------
    shape : tuple of int, int or None
        Shape of the points of ``M`` when the LMO knows it (from a ``dim`` or
        ``shape`` argument; a user's class may give an int ``n`` for the vector
        shape ``(n,)``); ``None`` when it is taken from the direction.
    exact : bool
        ``True`` (the default): every answer minimizes, so a Frank-Wolfe gap below
        zero beyond rounding is an error (:class:`~frankwolfe.OracleError`).  ``False``
        for an oracle that may miss the minimum (approximate inference): the methods
        then take such an answer as a step of size 0, and their gaps are estimates,
        not certificates; the caller certifies the result another way (the structured
        SVM's ``loss_augmented_bound``).
    sparse_directions : bool
        ``True`` for an oracle whose :meth:`extreme_point` takes scipy.sparse directions
        as they are (the matrix domains' eigen- and singular-vector solvers); ``False``
        (the default) gives it a sparse direction as a dense array.
    """

    shape: tuple[int, ...] | int | None = None
    exact: bool = True
    sparse_directions: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("extreme_point")
        if inspect.isfunction(own) and not getattr(own, "__isabstractmethod__", False):
            # users call a domain's extreme_point directly, with lists too
            cls.extreme_point = _converting(own)  # type: ignore[method-assign]
        dual = cls.__dict__.get("dual_solution")
        if inspect.isfunction(dual) and not getattr(dual, "_checks_finite", False):
            # a certificate's value from a NaN direction would be a number, not a bound
            cls.dual_solution = _finite_dual(dual)  # type: ignore[method-assign]

    @abstractmethod
    def extreme_point(self, direction: np.ndarray) -> Any:
        """Return ``argmin_{s in M} <direction, s>``.

        A subclass's implementation is called with an ndarray: a list, a tuple or an
        array of integers given to it is converted to a float array first, as
        :meth:`__call__` converts it, and one of text or complex entries refused with a
        ``ValueError`` naming ``direction`` (a float32 array goes through as it is, a
        scipy.sparse one too where :attr:`sparse_directions` says so, else dense).

        Parameters
        ----------
        direction : array_like
            The linear objective (usually a gradient), of the domain's shape.

        Returns
        -------
        ndarray, scipy.sparse array or Atom
            A minimizer, of the same shape as ``direction``; an :class:`Atom`
            carries a key identifying the vertex.
        """

    def __call__(self, direction: np.ndarray) -> Atom:
        """Call the oracle and return its answer as an :class:`Atom`.

        A direction with a NaN or infinite entry is refused (``ValueError``): no
        vertex minimizes it.  The check is one scaled sum of the direction (one BLAS
        pass; entry by entry only when it is not finite); the shared loop, whose
        tracker has just checked the gradient, skips it (:meth:`_answer_finite`).  In
        debug mode the answer's shape and feasibility are checked.

        Raises
        ------
        ValueError
            When ``direction`` has a NaN or infinite entry (named with its index), or
            complex, text or other non-real entries.
        ShapeError
            When ``direction`` has no entries.
        """
        # a float array goes through as is; sparse directions go to oracles that take them
        if not (type(direction) is np.ndarray and direction.dtype == _FLOAT):
            direction = self._as_direction(direction)
        if type(direction) is np.ndarray and direction.ndim == 1 and direction.size <= _SMALL:
            # a scaled sum (see _WEIGHTS) as one dot product, the cheapest numpy call for it
            n = direction.size
            w = _WEIGHTS.get(n)
            if w is None:
                # a size met for the first time: the empty one is refused here, before
                # any weights are stored for it, so it can never reach the cached path
                if n == 0:
                    self._refuse_empty(direction)
                w = _weights(n)
            if not math.isfinite(direction.dot(w)):
                self._refuse_direction(direction)
        else:
            if issparse(direction):
                if math.prod(direction.shape) == 0:
                    self._refuse_empty(direction)
                finite = all_finite(np.asarray(direction.data))
            else:
                if direction.size == 0:
                    self._refuse_empty(direction)
                finite = all_finite(direction)
            if not finite:
                self._refuse_direction(direction)
        return self._answer_finite(direction)

    def _as_direction(self, direction: Any) -> Any:
        """``direction`` (not a float64 ndarray) as a float array, a scipy.sparse one as
        it is for an oracle that takes it (:attr:`sparse_directions`), else dense: a
        ``ValueError`` naming it when it holds complex numbers (the float cast dropped
        their imaginary parts with a mere ``ComplexWarning``), text or other objects."""
        if not issparse(direction):
            try:
                raw = np.asarray(direction)
            except (TypeError, ValueError):  # ragged nesting: real_array names it
                raw = None
            if raw is not None and raw.dtype.kind in "biuf":
                return raw.astype(float, copy=False)
        # the repr (a box's holds its bounds) only for what may be refused; a sparse
        # direction is checked real, and kept sparse for an oracle that takes it
        checked = real_array(direction, repr(self), "direction", sparse=True)
        if issparse(checked) and not self.sparse_directions:
            return np.asarray(checked.toarray(), dtype=float)
        return checked

    def _refuse_empty(self, direction: Any) -> NoReturn:
        """Raise the ``ShapeError`` for a direction with no entries."""
        raise ShapeError(f"{self!r}: `direction` must have at least one entry, got shape "
                         f"{direction.shape}")

    def _answer_finite(self, direction: np.ndarray) -> Atom:
        """:meth:`__call__` for a ``direction`` known to be finite: the answer as an
        :class:`Atom`, without the finiteness check.

        The shared loop asks it with a gradient its tracker has just found finite (the
        run stops on a non-finite one before the oracle is called): the check would
        pass over the same entries again, one of the larger costs of a small problem's
        step.  Not for other callers: a non-finite direction here gives an arbitrary
        vertex.  The loop calls an LMO that overrides :meth:`__call__` through it.
        """
        if not (type(direction) is np.ndarray and direction.dtype == _FLOAT):
            direction = self._as_direction(direction)
        try:
            atom = self.extreme_point(direction)
        except UnhashableKeyError as err:
            if err.oracle is not None:  # named by the oracle that built it (a wrapped one)
                raise
            named = UnhashableKeyError(f"{self!r}.extreme_point built an atom with an "
                                       f"unhashable key: {err}")
            named.oracle = self
            raise named from None
        if not (type(atom) is Atom and atom.shape == direction.shape):  # else as_atom's
            atom = as_atom(atom, direction.shape, source=self)          # fast path
        if _config._debug:
            self.check_answer(atom)
        return atom

    def _refuse_direction(self, direction: Any) -> None:
        """Raise the ``ValueError`` for a direction with a NaN or infinite entry (return
        when every entry is finite: a sum of squares that overflowed)."""
        bad = first_non_finite(direction)
        if bad is None:
            return
        raise ValueError(f"{self!r}: `direction` must be finite, got {bad.value} at index "
                         f"{bad.index} ({bad.total} NaN or inf entries in all): no vertex "
                         f"minimizes it (is the objective's gradient finite?)")

    def check_answer(self, atom: Atom) -> None:
        """Raise :class:`OracleError` if ``atom`` is not in the domain."""
        try:
            v = self.violation(atom.to_dense())
        except NotImplementedError:
            return
        if not np.isfinite(v) or v > _DEBUG_TOL:
            raise OracleError(
                f"{self!r} returned a point outside its domain (violation {v:.3g} > {_DEBUG_TOL:g})"
            )

    def _point(self, x: Any) -> np.ndarray:
        """``x`` as a float array for :meth:`violation`; a ``ShapeError`` when the domain
        has a shape and ``x`` another number of entries (it is no point of the domain)."""
        a = np.asarray(x, dtype=float)
        own = declared_shape(self)
        if own is not None and a.size != math.prod(own):
            raise ShapeError(f"{self!r}.violation: `x` has {a.size} entries, expected "
                             f"{math.prod(own)} (shape {own})")
        return a

    def violation(self, x: np.ndarray) -> float:
        """How far ``x`` lies outside the domain, relative to its size (0 inside).

        The default raises ``NotImplementedError``: feasibility is then not
        checked.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement violation()")

    def dual_solution(self, direction: np.ndarray) -> DualSolution:
        """The dual variables of the LP ``min <direction, s>`` over the domain, at its optimum.

        Optional: polyhedral domains with a cheap dual implement it (the simplices, the
        boxes, the hypersimplices, :class:`~frankwolfe.lmo.polytope.Polytope`).  The
        answer's ``value`` is a lower bound on ``<direction, x>`` over the domain that
        the oracle's vertex attains: a certificate of the oracle's answer (see
        :class:`~frankwolfe.lmo.dual.DualSolution` for the sign conventions).  The
        default raises ``NotImplementedError``.
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not implement dual_solution() (only polyhedral "
            "domains with a cheap dual do: simplices, boxes, hypersimplices, Polytope)"
        )

    def decompose(self, x: Any) -> ActiveSet | None:
        """``x`` as a convex combination of the oracle's vertices, or None.

        Optional: domains where writing a point as a convex combination of vertices is
        cheap and exact implement it (the simplices, the l1 ball, the boxes).  The
        active-set methods call it for a start ``x0`` that is an array but not a
        vertex, so that they can start from any point of such a domain (the
        barycenter, a previous solution).  The default returns None: the domain has
        no cheap exact decomposition, and those methods then need a vertex or an
        :class:`~frankwolfe.ActiveSet` as their start.

        Parameters
        ----------
        x : array_like
            A point of the domain (within :data:`FEASIBILITY_TOL`), of the shape of
            the directions the oracle is asked with.

        Returns
        -------
        ActiveSet or None
            Atoms with the same keys (and vectors) the oracle answers for the same
            vertices, so that the active set merges them with later oracle answers;
            weights ``>= 0`` summing to one, whose combination is ``x`` up to
            rounding.  None where the domain has no cheap exact decomposition.

        Raises
        ------
        InfeasibleError
            In an implementation, when ``x`` is outside the domain (as
            :meth:`check_feasible`, naming ``x``).
        """
        return None

    def check_feasible(self, x: Any, name: str = "x0") -> None:
        """Raise :class:`~frankwolfe.InfeasibleError` if ``x`` is outside the domain.

        The one feasibility check of user input: ``x`` is rejected when its
        :meth:`violation` exceeds :func:`feasibility_tolerance` (:data:`FEASIBILITY_TOL`,
        or a few machine epsilons of ``x``'s float type when it is coarser than
        float64).  Domains that do not implement :meth:`violation` accept every point.

        Parameters
        ----------
        x : array_like
            The point (a start, an atom of a warm start, ...), in the precision the
            user gave it: a float32 point is allowed its own rounding.
        name : str, default "x0"
            How the error message names the point (the argument's name).
        """
        try:
            viol = self.violation(np.asarray(x, dtype=float))
        except NotImplementedError:
            return
        tol = feasibility_tolerance(x)
        if not viol <= tol:
            raise InfeasibleError(
                f"{name} is not in the domain {self!r}: violation {viol:.3g} > tolerance "
                f"{tol:g}"
            )

    def diameter(self, shape: tuple[int, ...] | None = None) -> float | None:
        """An upper bound on the Euclidean diameter ``max ||u - v||`` of the domain.

        Step rules that need a curvature bound read it (the saddle-point
        rule's ``C = mu_x D_x^2 + mu_y D_y^2``).  ``shape`` is the shape of
        the points when the domain does not fix it.  The default, ``None``,
        means unknown.
        """
        return None

    def is_feasible(self, x: np.ndarray, tol: float | None = None) -> bool:
        """Whether ``x`` lies in the domain up to the relative tolerance ``tol`` (by
        default :func:`feasibility_tolerance` of ``x``, the one :meth:`check_feasible`
        accepts a start within: :data:`FEASIBILITY_TOL`, or its float type's rounding
        for float32).  A domain of a known shape takes an ``x`` with as many entries in
        another shape flat, as its oracle takes directions; ``False`` for another number
        of entries."""
        if tol is None:
            tol = feasibility_tolerance(x)
        x = np.asarray(x, dtype=float)
        own = declared_shape(self)
        # as many entries as the domain's points: the oracle answers a direction of any
        # shape with that many entries (taken flat) in the direction's shape
        if own is not None and x.shape != own:
            if x.size != math.prod(own):
                return False
            x = x.reshape(own)
        return bool(self.violation(x) <= tol)

    def initial_point(self, shape: tuple[int, ...] | None = None) -> Atom:
        """A vertex of the domain, used when no ``x0`` is given.

        It is the oracle's answer for the all-ones direction (deterministic).
        """
        shape = self._resolve_shape(shape)
        return self(np.ones(shape))

    def _resolve_shape(self, shape: tuple[int, ...] | int | None) -> tuple[int, ...]:
        own = declared_shape(self)
        if shape is not None:
            shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)
            if own is not None and own != shape:
                raise ShapeError(f"{self!r} has shape {own}, not {shape}")
            return shape
        if own is None:
            raise ShapeError(
                f"{self!r} does not know its dimension: pass x0, or {size_advice(self)}"
            )
        return own

    def __repr__(self) -> str:
        params = getattr(self, "_repr_params", None)
        if params is None:  # a user's domain: its public attributes, arrays in brief
            shown = {k: v for k, v in getattr(self, "__dict__", {}).items()
                     if not k.startswith("_")}
            inner = ", ".join(f"{k}={brief(v)}" for k, v in shown.items())
            return f"{type(self).__name__}({inner})"
        inner = ", ".join(f"{k}={v!r}" for k, v in params().items())
        return f"{type(self).__name__}({inner})"


#: the size keywords of the built-in domains, each with the value it takes
_SIZE_KEYWORDS = {"dim": "dim=n", "n": "n=n", "shape": "shape=(m, n)"}


def size_advice(block: LMO) -> str:
    """How to give ``block`` a shape, for the error of a block that lacks one.

    The built-in domains do not share one size keyword (``dim``; ``n`` for Birkhoff;
    ``shape`` for the nuclear-norm ball), and advice naming ``dim`` for all of them sent
    ``Birkhoff(dim=3)`` into a ``TypeError``: the keyword is read off the class's own
    signature.  A user's class is told to set a ``shape`` attribute.

    Parameters
    ----------
    block : LMO
        The block without a declared shape.

    Returns
    -------
    str
        The advice, a clause of the error message.
    """
    cls = type(block)
    if cls.__module__.startswith("frankwolfe."):
        try:
            params = dict(inspect.signature(cls).parameters)
        except (TypeError, ValueError):  # a signature inspect cannot read
            params = {}
        required = any(p.default is inspect.Parameter.empty and p.kind in (
            p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params.values())
        for keyword, example in _SIZE_KEYWORDS.items():
            if keyword in params:
                args = f"..., {example}" if required else example
                return f"build it with its size ({cls.__name__}({args}))"
    return "give it a `shape` attribute (`self.shape = (n,)`)"
