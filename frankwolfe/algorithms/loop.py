"""The shared Frank-Wolfe loop.

Every Frank-Wolfe variant over a single domain runs the same loop::

    gradient -> LMO (Frank-Wolfe vertex) -> gap -> stop? -> direction
             -> step size -> update

A variant only supplies the direction (and the bookkeeping of its active
set, if any) by subclassing :class:`Variant`; the loop is one
:class:`~.engine.Engine` whose outer iteration is one step, and stopping,
logging, error handling, the certificate and the result are written once, in
:func:`~.engine.drive` (which also runs block-coordinate FW).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any, cast

import numpy as np
from scipy.sparse import issparse

from .._finite import gap_below_rounding
from .._numbers import kind_of
from ..active_set import ActiveSet
from ..atoms import Atom
from ..direction import Direction
from ..errors import NonConvexError, OracleError, ShapeError
from ..lmo.base import (
    FEASIBILITY_TOL,
    LMO,
    declared_shape,
    feasibility_tolerance,
    finite_oracle,
    size_advice,
)
from ..lmo.product import ProductDomain
from ..monitor import Monitor, gives_bounds
from ..objectives.base import Objective, Tracker, all_finite, checked_gradient
from ..objectives.product_tracker import ProductTracker
from ..options import RunOptions
from ..result import Result
from ..step_size import StepSize, make_step_size
from ..step_size.base import checked_step
from .engine import Engine, Observation, drive

__all__ = ["GapCheck", "Variant", "run_frank_wolfe", "prepare_start"]

#: the way from a plain function to an objective, for the message that refuses one
_PLAIN = ("; a plain function f(x) is an objective as FunctionObjective(f, grad), or "
          "minimize(f, domain, jac=grad)")


def _is_function(value: object) -> bool:
    """A plain callable (a function, a lambda), not a class."""
    return callable(value) and not isinstance(value, type)


class Variant(ABC):
    """The part of a Frank-Wolfe method that differs between methods.

    Subclasses implement :meth:`direction`; active-set methods also override
    :meth:`start` and :meth:`after_step`.  :meth:`frank_wolfe_vertex` may be
    overridden by methods that call the oracle on a subset of atoms.
    """

    name: str = "frank_wolfe"

    #: vanilla Frank-Wolfe: :meth:`frank_wolfe_vertex` is the default, :meth:`direction`
    #: is ``v - x`` with ``gamma_max = 1``, :meth:`after_step` does nothing and
    #: :meth:`info` is empty; the engine then does the same without calling them (on a
    #: small problem the calls cost as much as the step)
    plain: bool = False

    #: whether the run starts from the domain's own vertex (``x0=None``: its
    #: ``initial_point``, which :meth:`start` gets as ``x0_atom``, under a key the domain
    #: gave); set by the driver before :meth:`start`.  An atom the user passed may come
    #: from another run's domain, whose keys may name other vertices here
    own_start: bool = False

    def start(self, tracker: Tracker, x0_atom: Atom | None, lmo: LMO) -> None:
        """Set up before the first iteration."""
        self.lmo = lmo
        #: ``lmo`` for the gradients the loop hands over, which its tracker has found
        #: finite (:func:`finite_oracle`)
        self.oracle = finite_oracle(lmo)

    def frank_wolfe_vertex(self, k: int, tracker: Tracker, gradient: np.ndarray,
                           g_dot_x: float) -> tuple[Atom, float, bool]:
        """Return ``(v, gap, certified)``: the vertex, its gap, and whether
        the gap is a certificate (a full LMO call)."""
        v = self.oracle(gradient)
        self.n_oracle_calls += 1
        return v, g_dot_x - v.dot(gradient), True

    @abstractmethod
    def direction(self, k: int, tracker: Tracker, gradient: np.ndarray, v: Atom,
                  gap: float, g_dot_x: float) -> tuple[Direction, float, Any]:
        """Return ``(d, gamma_max, info)``; ``info`` is passed to :meth:`after_step`."""

    def after_step(self, direction: Direction, gamma: float, info: Any) -> None:
        """Update the variant's own state after the iterate moved."""

    def info(self) -> dict[str, Any]:
        """Extra history columns (for example the active-set size)."""
        return {}

    def outputs(self) -> tuple[Any, dict[str, Any]]:
        """``(active_set, extra)`` for the :class:`Result`."""
        return None, {}

    def closing_seconds(self) -> float:
        """Expected seconds of the closing certificate (one LMO call at the returned point)
        when the run stops between certificates (see
        :meth:`~.engine.Engine.closing_seconds`); 0 when every iteration certifies its
        gap, or when the LMO call is a small part of an iteration."""
        return 0.0

    n_oracle_calls: int = 0


def prepare_start(objective: Objective, lmo: LMO, x0: Any) -> tuple[np.ndarray, Atom | None]:
    """Validate or build the starting point.

    Returns the dense start and, when the start is a vertex, its atom (so
    active-set methods can start from a known vertex).
    """
    lmo_shape, own = declared_shape(lmo), declared_shape(objective)
    if x0 is None:
        shape = lmo_shape if lmo_shape is not None else own
        if shape is None:
            raise ShapeError(
                f"cannot choose a starting vertex: neither {lmo!r} nor {type(objective).__name__} "
                f"knows the dimension; pass x0, a FunctionObjective(shape=...), or "
                f"{size_advice(lmo)}"
            )
        if own is not None and own != shape and not (
                min(len(own), len(shape)) == 1 and math.prod(own) == math.prod(shape)):
            # another matrix of the same entries is another problem; a flat view of the
            # same entries is the same one (an x0 is checked against both below)
            raise ShapeError(f"the objective's points have shape {own} but {lmo!r}'s "
                             f"have shape {shape} (an LMO built without a dim or "
                             "shape takes the objective's)")
        vertex = lmo.initial_point(shape)
        x = np.array(vertex.to_dense(), dtype=float, order="C")
        if not np.all(np.isfinite(x)):
            raise OracleError(f"{lmo!r} answered a starting vertex with NaN or inf entries "
                              "(its initial_point, one oracle call)")
        return x, vertex
    if isinstance(x0, (ActiveSet, Result)):
        # the methods that start from an ActiveSet take it before this point
        what = ("an ActiveSet: this method keeps no active set; start it from the set's "
                "point, x0=S.x") if isinstance(x0, ActiveSet) else \
            "a Result: start from its point, x0=res.x (an active-set method also takes " \
            "x0=res.active_set)"
        raise TypeError(f"x0 must be an array of the domain's shape or an Atom, got {what}")
    atom = x0 if isinstance(x0, Atom) else None
    if atom is not None:
        x0 = x0.to_dense()
    elif issparse(x0):
        x0 = cast(Any, x0).toarray()
    try:
        raw = np.asarray(x0)
        complex_ = raw.dtype.kind == "c"
        x = raw if complex_ else np.array(raw, dtype=float, order="C")
    except (TypeError, ValueError) as err:  # numpy's message names no argument
        raise ValueError(f"x0 must be an array of numbers (one array of the domain's shape, "
                         f"also for a ProductDomain) or an Atom; got "
                         f"{type(x0).__name__} ({err})") from None
    if complex_:
        raise ValueError("x0 must be real, got complex values")
    if not np.all(np.isfinite(x)):
        at = tuple(int(i) for i in np.argwhere(~np.isfinite(x))[0])
        where = ", ".join(map(str, at))
        raise ValueError(f"x0 contains NaN or inf: x0[{where}] = {float(x[at])}")
    for who, shape in (("the LMO", lmo_shape), ("the objective", own)):
        if shape is not None and x.shape != shape:
            raise ShapeError(f"x0 has shape {x.shape} but {who} expects shape {shape}")
    # raw, not x: a float32 start is allowed its own rounding (feasibility_tolerance)
    lmo.check_feasible(raw, "x0")
    if raw.dtype != x.dtype and feasibility_tolerance(raw) > FEASIBILITY_TOL:
        x = _inside(lmo, raw, x)
    return x, atom


def _inside(lmo: LMO, raw: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A coarse-precision start ``raw`` (float32) accepted within its rounding, as a float64
    point inside the domain to :data:`FEASIBILITY_TOL` where the domain can tell one.

    The active-set methods decompose the float64 start, and that check does not know
    the start's precision: the combination ``decompose(raw)`` gives them a point equal to
    ``x0`` to its own rounding.  Domains without a decomposition keep ``x`` (the plain
    methods do not need more).
    """
    decompose = getattr(lmo, "decompose", None)
    try:
        if lmo.violation(x) <= FEASIBILITY_TOL or not callable(decompose):
            return x
    except NotImplementedError:
        return x
    S = decompose(raw)
    if not isinstance(S, ActiveSet) or len(S) == 0 or S.shape != x.shape:
        return x  # decomposed_start reports a wrong answer when a method needs one
    return np.array(S.copy(keep_x=False).resum(), dtype=float, order="C").reshape(x.shape)


# the finiteness check (objectives.base.all_finite) under its former name here
_all_finite = all_finite


def _sparse_indices(d: Direction) -> np.ndarray | None:
    """The flat indices the atoms of ``d`` touch (repeats possible); ``None`` when one is
    dense."""
    terms = d.terms
    for _, a in terms:
        if not a.is_sparse:
            return None
    if len(terms) == 1:
        return terms[0][1].indices
    return np.concatenate([a.indices for _, a in terms]) if terms else np.zeros(0, np.int64)


_new_tuple = tuple.__new__
#: iterates of at most this many entries are saved by a copy before each move
_COPY_BELOW = 1024
_NOTHING_SAVED = np.zeros(0)
_NO_INFO: dict[str, Any] = {}  # the history columns of a plain variant (never written)


class _PointBefore:
    """The iterate before a move, kept for the error path without copying ``x`` each
    iteration: a move along sparse atoms alone (``x_coef == 0``) changes only their
    entries, so those are saved; any other move saves a copy.

    The tracker either moves ``x`` in place (only those entries change) or replaces it
    (the saved array then stays as it was); both restore exactly.
    """

    __slots__ = ("x", "idx", "old")

    x: np.ndarray
    idx: np.ndarray | None  # the saved entries' flat indices; None: x is a copy
    old: np.ndarray  # their values (empty for a copy)

    def __init__(self, x: np.ndarray, d: Direction, idx: np.ndarray | None) -> None:
        if idx is not None and not d.x_coef:
            self.x, self.idx, self.old = x, idx, x.reshape(-1)[idx]
        else:
            self.x, self.idx, self.old = x.copy(), None, _NOTHING_SAVED

    def get(self) -> np.ndarray:
        if self.idx is None:
            return self.x
        out = self.x.copy()
        out.reshape(-1)[self.idx] = self.old  # a repeated index saved the same old value
        return out


_Observed = tuple[float, np.ndarray, Atom, float, float, bool]


class GapCheck:
    """The checks of a certificate ``<g, x> - <g, v>`` that ``lmo`` answered, shared by
    the engines that certify with one oracle call (the loop, stochastic FW).

    A gap below zero beyond rounding (:func:`~frankwolfe._finite.gap_below_rounding`)
    from an exact oracle is :class:`~frankwolfe.OracleError`: ``v`` is no minimizer over
    a domain that holds ``x``, and a run that went on, or returned the gap, would be
    "converged" on it.  On a Cartesian :class:`~frankwolfe.ProductDomain` of exact
    oracles every block's gap is checked too (:meth:`ProductDomain.check_gaps
    <frankwolfe.ProductDomain.check_gaps>`): the summed gap hides a block oracle that
    does not minimize behind the other blocks' gaps.  A Minkowski sum's points do not
    determine their block parts, and are checked whole only.

    Parameters
    ----------
    lmo : LMO
        The run's domain.
    """

    def __init__(self, lmo: LMO) -> None:
        self.lmo = lmo
        self.exact: bool = bool(getattr(lmo, "exact", True))  # see LMO.exact
        # a product is exact when its blocks are (ProductDomain.exact)
        self.blocks: ProductDomain | None = lmo if (
            isinstance(lmo, ProductDomain) and lmo.disjoint and self.exact) else None

    def __call__(self, where: str, f: float, f_top: float, g: np.ndarray, x: np.ndarray,
                 v: Atom, gap: float, g_dot_x: float) -> None:
        """Raise :class:`~frankwolfe.OracleError` when the gap ``gap = g_dot_x - <g, v>``
        at ``x`` (of value ``f``; ``f_top`` the run's largest ``|f|``), or a block's, is
        below zero beyond rounding; ``where`` (``"iteration 12"``) goes in the message."""
        if gap < 0.0 and self.exact:
            g_dot_v = g_dot_x - gap
            if gap_below_rounding(gap, g_dot_x, g_dot_v, f, f_top):
                raise OracleError(
                    f"{self.lmo!r} answered a vertex v with <g, v> = {g_dot_v:.12g} above "
                    f"<g, x> = {g_dot_x:.12g} at {where}: not a minimizer of <g, .> over a "
                    f"domain that holds x (the Frank-Wolfe gap {gap:.3g} < 0 certifies "
                    "nothing).  Either the oracle does not minimize, or x left its domain "
                    "(check its violation(), or run with frankwolfe.set_debug(True))")
        if self.blocks is not None:
            self.blocks.check_gaps(g, x, v, f, f_top, where)


class _SingleDomainEngine(Engine):
    """One Frank-Wolfe step per outer iteration (the variant supplies the direction)."""

    def __init__(self, objective: Objective, lmo: LMO, variant: Variant, tracker: Tracker,
                 rule: StepSize) -> None:
        self.objective = objective
        self.lmo = lmo
        self.variant = variant
        self.tracker = tracker
        self.rule = rule
        self.gamma = np.nan
        # (x, f, gap) before a move; x: a copy, or the entries the move changes
        self.last_good: tuple[np.ndarray | _PointBefore, float, float] | None = None
        self.last_good_k = 0  # the iteration of last_good's point (the result's nit)
        self.prev_step: tuple[float, float] | None = None  # (f, gamma * slope) of the last move
        # what observe() found for advance(): (f, g, v, gap, g_dot_x, certified)
        self.step: _Observed | None = None
        self.oracle = finite_oracle(lmo)  # plain variants' (decided once per run)
        self.check = GapCheck(lmo)
        # whether a certificate needs the check's call: a gap below 0 from an exact
        # oracle, or any gap on a Cartesian product (the call only then, on small problems
        # it costs as much as the step)
        self.exact, self.blockwise = self.check.exact, self.check.blocks is not None
        # f(x0) once evaluated: the result's fun when the first observation fails after it
        self.f0 = np.nan

    def observe(self, k: int) -> Observation | str:
        tracker, objective = self.tracker, self.objective
        f, g = tracker.value_and_gradient()
        if k == 0:
            self.f0 = f
            if np.shape(g) != tracker.x.shape:
                raise ShapeError(
                    f"the gradient has shape {np.shape(g)} but x has shape {tracker.x.shape}"
                )
        if not tracker.finite(f, g):
            what = "value" if not math.isfinite(f) else "gradient"
            where = "x0" if k == 0 else f"iteration {k}"
            keep = "no good iterate exists" if self.last_good is None else \
                f"returning the last good iterate (iteration {k - 1})"
            return f"the objective's {what} is not finite at {where}; {keep}"
        # the run's largest |f| (the tracker's record, which the line searches read too):
        # the scale of the checks' rounding allowances (in units of f, no absolute floor:
        # at f ~ 2**-40 a floor of 1e-12 let a wrong oracle's negative gap through; f
        # scaled by a power of two runs the same)
        f_top = tracker.f_top
        if abs(f) > f_top:  # the call only when it changes (one per iteration otherwise)
            f_top = tracker.note_value(f)
        prev = self.prev_step
        if prev is not None and objective.convex:
            f_prev, change = prev
            # below the tangent bound by more than rounding (relative 1e-10 of f and of the
            # run's largest f, which covers values near 0 by cancellation; 1e-6 of the
            # predicted change)
            if f < f_prev + change - (tracker.rounding * (abs(f_prev) + f_top)
                                      + 1e-6 * abs(change)) and self._below_tangent():
                raise NonConvexError(
                    f"negative curvature at iteration {k}: f fell to {f:.12g}, below the tangent "
                    f"bound {f_prev + change:.12g}, on an objective declared convex "
                    "(set objective.convex = False if that is intended)"
                )
        # the tracker's own <g, x> (the full product): a slope computed from another
        # summation order can change sign near the optimum and the line search would see
        # a descent direction as an ascent one
        g_dot_x = tracker.gradient_dot_x(g)
        variant = self.variant
        if variant.plain:
            v = self.oracle(g)
            variant.n_oracle_calls += 1
            gap_k, certified, info = g_dot_x - v.dot(g), True, _NO_INFO
        else:
            v, gap_k, certified = variant.frank_wolfe_vertex(k, tracker, g, g_dot_x)
            info = variant.info()
        if not math.isfinite(gap_k):
            return f"the LMO returned a non-finite point at iteration {k}"
        if certified and (self.blockwise or gap_k < 0.0 and self.exact):
            self.check(f"iteration {k}", f, f_top, g, tracker.x, v, gap_k, g_dot_x)
        self.step = (f, g, v, gap_k, g_dot_x, certified)
        return Observation(f, gap_k, certified, tracker.x, g, self.gamma, info)

    def _below_tangent(self) -> bool:
        """Whether exact values at both ends of the last move confirm ``f`` below its
        tangent.  The tracker's incremental ``f`` and slope drift after moves across large
        magnitudes (a box of 1e8 around an O(1) optimum: 6e-8 of ``f``), which the
        rounding allowance does not cover; its periodic exact refresh then lands below a
        bound built from the drifted value.  Evaluated only when the cheap test fails."""
        if self.last_good is None:
            return True
        before = self.last_good[0]
        x_prev = before.get() if isinstance(before, _PointBefore) else before
        x = self.tracker.x
        f_prev, g_prev = self.objective.value_and_gradient(x_prev)
        f = float(self.objective.value(x))
        change = float(np.vdot(g_prev, x - x_prev))
        return f < f_prev + change - (self.tracker.rounding * (abs(f_prev) + self.tracker.f_top)
                                      + 1e-6 * abs(change))

    def _observed(self) -> _Observed:
        if self.step is None:
            raise RuntimeError("the engine advanced or certified before its first observe()")
        return self.step

    def advance(self, k: int, monitor: Monitor) -> None:
        tracker, variant = self.tracker, self.variant
        if self.step is None:
            raise RuntimeError("the engine advanced or certified before its first observe()")
        f, g, v, gap_k, g_dot_x, certified = self.step
        plain = variant.plain
        if plain:
            # v - x, built as the named tuple's own constructor would, one call less
            d, gamma_max, dinfo = _new_tuple(Direction, (-1.0, ((1.0, v),))), 1.0, None
        else:
            try:
                d, gamma_max, dinfo = variant.direction(k, tracker, g, v, gap_k, g_dot_x)
            except BaseException:
                # x_k is whole (a direction moves nothing) and observed: the last good
                # iterate, not the one before it
                self.last_good = (tracker.x.copy(), f, gap_k if certified else np.nan)
                self.last_good_k = k
                raise
        slope = tracker.slope(d, g, g_dot_x)  # a tracker keeps it for the line search
        # a move with x_coef != 0 changes every entry: a plain copy, no _PointBefore; so
        # does a small x, which a copy saves faster than the entries a move changes
        x = tracker.x
        before = x.copy() if d.x_coef or x.size <= _COPY_BELOW else \
            _PointBefore(x, d, _sparse_indices(d))
        self.last_good = (before, f, gap_k if certified else np.nan)
        self.last_good_k = k
        gamma = float(self.rule(k, tracker, d, slope, gamma_max))
        self.gamma = gamma = checked_step(self.rule, gamma, gamma_max, k)
        self.prev_step = (f, gamma * slope)
        tracker.move(d, gamma)
        if not plain:
            variant.after_step(d, gamma, dinfo)

    def certify(self, last: Observation) -> tuple[float, float]:
        # the stop came between certificates: certify the returned point
        f, g, v, gap_k, g_dot_x, certified = self._observed()
        v = self.lmo(g)
        self.variant.n_oracle_calls += 1
        gap = g_dot_x - v.dot(g)
        self.check("the closing certificate", f, self.tracker.f_top, g, self.tracker.x, v,
                   gap, g_dot_x)
        self.step = (f, g, v, gap, g_dot_x, True)  # what closing() checks
        return f, gap

    def info(self) -> dict[str, Any]:
        return self.variant.info()

    def closing(self, fun: float, gap: float) -> tuple[float, float]:
        """Exact ``f`` and gap where an incremental tracker's values drifted from those at
        ``x`` beyond rounding (moves across large magnitudes: 8e-9 of f after a vertex of
        a box of 1e8).  One exact value and gradient to see it: the gradient's drift
        barely moves ``f`` but is multiplied by the domain's size in the gap (1e-6 in the
        gradient, 74 in the gap on a box of 1e8), seen along the gap's own vertex; an
        oracle call only when it drifted.  A tracker that evaluates ``f`` and its
        gradient at ``x`` is exact already."""
        tracker = self.tracker
        if not isinstance(tracker, ProductTracker):
            return fun, gap
        x = tracker.x
        f, g = self.objective.value_and_gradient(x)
        f = float(f)
        g = np.asarray(g, dtype=float).reshape(x.shape)
        if not (math.isfinite(f) and np.all(np.isfinite(g))):
            return fun, gap
        _, g_loop, v, gap_loop, gx_loop, certified = self._observed()
        if certified and gap_loop == gap:
            gx, gv = float(np.vdot(g, x)), float(v.dot(g))
            # and no coordinate of the gradient drifted: along v alone, a coordinate at
            # the bound v shares hides a drift that flips its sign (the true vertex is
            # then at the other bound)
            drift = float(np.max(np.abs(g - np.asarray(g_loop).reshape(g.shape)))) \
                if g.size else 0.0
            # relative allowances (no floor of 1, which at f ~ 2**-40 accepted any drift)
            top = max(tracker.f_top, abs(f))
            if abs(f - fun) <= tracker.rounding * (abs(f) + top) and \
                    abs((gx - gv) - gap) <= tracker.rounding * (abs(gx) + abs(gv) + top) and \
                    drift <= tracker.rounding * float(np.max(np.abs(g))):
                return fun, gap
        v = self.lmo(g)
        self.variant.n_oracle_calls += 1
        gx = float(np.vdot(g, x))
        gap = gx - float(v.dot(g))
        self.check("the closing certificate", f, self.tracker.f_top, g, x, v, gap, gx)
        return f, gap

    def closing_seconds(self) -> float:
        return self.variant.closing_seconds()

    def outputs(self, error: bool) -> dict[str, Any]:
        active, extra = self.variant.outputs()
        tracker = self.tracker
        out = dict(n_oracle_calls=self.variant.n_oracle_calls,
                   n_gradient_calls=tracker.n_gradient_calls,
                   n_function_calls=tracker.n_function_calls, active_set=active, extra=extra)
        if not error:
            return dict(out, x=tracker.snapshot())
        if self.observed and not self.cut_short and self.step is not None:
            # stopped after observing x_k (a callback raised): x_k, whole, with its values
            f, _, _, gap_k, _, certified = self.step
            seen = tracker.x.copy()
            gap = gap_k if certified else self._certify_at(seen, f)
            return dict(out, x=seen, fun=f, gap=gap)
        if self.last_good is None:
            # the first observation failed (the LMO, or a value not finite at x0): x0,
            # with f(x0) when it was evaluated
            x0 = tracker.snapshot()
            return dict(out, x=x0, fun=self.f0, gap=self._certify_at(x0, self.f0))
        x, f, gap = self.last_good
        x = x.get() if isinstance(x, _PointBefore) else x
        if not math.isfinite(gap):  # taken between certificates: one LMO call certifies it
            gap = self._certify_at(x, f)
        return dict(out, x=x, fun=f, gap=gap, nit=self.last_good_k)

    def _certify_at(self, x: np.ndarray, f: float) -> float:
        """The Frank-Wolfe gap at ``x``, of value ``f``, for the result of a stopped run;
        NaN (uncertified, as the result then states) after a second Ctrl-C (no oracle
        called), where ``f`` is not finite, where the objective or the LMO cannot answer
        at ``x``, or where the answer's gap, or on a Cartesian product a block's, is below
        zero beyond rounding (the oracle that may just have failed answered no minimizer:
        the result's clamp of a gap below 0 would have made it a certificate of 0).  A
        ``KeyboardInterrupt`` goes through: the driver then asks again, as after a second
        Ctrl-C."""
        if self.hurried or not math.isfinite(f):
            return np.nan
        try:
            g = checked_gradient(self.objective.gradient(x), x.shape, self.objective)
            if not np.all(np.isfinite(g)):
                return np.nan
            v = self.lmo(g)
            self.variant.n_oracle_calls += 1
            g_dot_x = float(np.vdot(g, x))
            gap = g_dot_x - float(v.dot(g))
            # below zero beyond rounding, whatever the oracle's exact says: no certificate
            if not math.isfinite(gap) or gap_below_rounding(gap, g_dot_x, g_dot_x - gap, f,
                                                            self.tracker.f_top):
                return np.nan
            # a block's gap below zero beyond rounding (OracleError): NaN as well
            self.check("the result", f, self.tracker.f_top, g, x, v, gap, g_dot_x)
        except Exception:
            return np.nan
        return gap


def run_frank_wolfe(
    objective: Objective,
    domain: LMO,
    variant: Variant,
    x0: Any = None,
    *,
    step_size: str | StepSize | None = None,
    options: RunOptions | None = None,
    monitor: Monitor | None = None,
) -> Result:
    """Run ``variant`` on ``min f(x) s.t. x in M`` with the shared driver.

    ``options`` holds the run keywords (default ``RunOptions()``); ``monitor``: one made
    from them already, when the method's own set-up (before this call) counts against
    ``time_limit``.  See :func:`frankwolfe.frank_wolfe` for the other parameters.
    """
    options = RunOptions() if options is None else options
    if not isinstance(objective, Objective):
        raise TypeError(f"objective must be an Objective, got {kind_of(objective)}"
                        f"{_PLAIN if _is_function(objective) else ''}")
    if not isinstance(domain, LMO):
        raise TypeError(f"domain must be an LMO, got {kind_of(domain)}")
    if monitor is None:
        monitor = options.monitor(variant.name)
    x, x0_atom = prepare_start(objective, domain, x0)
    tracker = objective.tracker(x)
    rule = make_step_size(step_size, tracker)
    rule.reset()
    # the starting vertex (no x0) is the oracle's answer to one direction
    variant.n_oracle_calls = 1 if x0 is None else 0
    variant.own_start = x0 is None
    variant.start(tracker, x0_atom, domain)
    monitor.bounds = gives_bounds(objective, domain)
    return drive(_SingleDomainEngine(objective, domain, variant, tracker, rule), monitor)
