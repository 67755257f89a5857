"""Conjugate and bi-conjugate Frank-Wolfe (Mitradjieva & Lindberg, 2013).

Both methods replace the Frank-Wolfe vertex ``v`` by a *conjugate point*
``s``, a convex combination of ``v`` and the previous conjugate point(s),
chosen so that ``s - x`` is conjugate (with respect to the Hessian at ``x``)
to the previous search direction (CFW) or the previous two (BFW).  The step
is then taken on ``[x, s]`` with a line search.  ``s`` stays in the domain,
so every iterate is feasible, and the Frank-Wolfe gap of ``v`` is still the
certificate.  On the near-quadratic objectives of traffic assignment this
removes most of the zig-zagging of Frank-Wolfe.

Reference: M. Mitradjieva and P. O. Lindberg, "The stiff is moving -
conjugate direction Frank-Wolfe methods with applications to traffic
assignment", Transportation Science 47(2):280-293, 2013.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, Unpack

import numpy as np

from .._numbers import as_real
from .._scaling import binary_exponent
from ..atoms import Atom
from ..direction import Direction
from ..errors import ShapeError
from ..lmo.base import LMO
from ..objectives.base import Objective, Tracker, checked_gradient
from ..options import RunKeywords, RunOptions, solver
from ..registry import register
from ..result import Result
from ..step_size import OpenLoop, StepSize
from .loop import Variant, run_frank_wolfe

__all__ = ["conjugate_frank_wolfe", "biconjugate_frank_wolfe"]


def _hessian_product(tracker: Tracker, v: np.ndarray) -> np.ndarray:
    """``H(x) v``: the objective's hook, else a forward difference of gradients."""
    obj = tracker.objective
    if obj.has_hessian_vector_product:
        # checked as a gradient: a complex answer was cut to its real part, None read as NaN
        hv = checked_gradient(obj.hessian_vector_product(tracker.x, v), None, obj,
                              "hessian_vector_product")
        if hv.shape != tracker.x.shape:
            raise ShapeError(f"{type(obj).__name__}.hessian_vector_product: the product has "
                             f"shape {hv.shape} but x has shape {tracker.x.shape}")
        return hv
    nv = float(np.linalg.norm(v))
    if nv == 0.0:
        return np.zeros_like(v)
    # a step of 1e-6 relative to the larger of x and v (the domain's scale), not to 1:
    # at radius 2**-30 an absolute 1e-6 stepped a thousand radii away from x, and the
    # product of a non-quadratic f came out wrong (bi-conjugate FW then missed a tol it
    # meets at radius 1)
    eps = 1e-6 * max(float(np.linalg.norm(tracker.x)), nv) / nv
    tracker.n_gradient_calls += 1
    # checked as the tracker checks its own: a None gradient failed in the subtraction
    # (the tracker holds a copy of a gradient that a user's objective may write again)
    g = checked_gradient(obj.gradient(tracker.x + eps * v), tracker.x.shape, obj)
    return (g - tracker.gradient()) / eps


def _solve_2x2(M: np.ndarray, rhs: np.ndarray) -> tuple[float, float] | None:
    """``(nu, mu)`` solving ``M (nu, mu) = rhs``, or None when ``M`` is (nearly) singular
    or not finite.

    ``M`` and ``rhs`` scale with ``f`` (and with the square of the iterates): both are
    normalised by powers of two, exactly, before the determinant.  From the raw
    entries it underflowed (``f`` scaled by 2**-560: BFW fell back to CFW at every
    step) or overflowed (2**500 and above); normalised, power-of-two scalings of ``f``
    give the same weights bit for bit.
    """
    if not (np.isfinite(M).all() and np.isfinite(rhs).all()):
        return None
    e_m = binary_exponent(float(np.abs(M).max()))
    e_r = binary_exponent(float(np.abs(rhs).max()))
    M = np.ldexp(M, -e_m)
    rhs = np.ldexp(rhs, -e_r)
    det = M[0, 0] * M[1, 1] - M[0, 1] * M[1, 0]
    scale = abs(M[0, 0] * M[1, 1]) + abs(M[0, 1] * M[1, 0])
    if not (scale > 0 and abs(det) > 1e-12 * scale):
        return None
    # the solution scales as rhs / M; a weight past the float range is inf, which the
    # caller refuses (it would leave the Frank-Wolfe vertex no weight)
    with np.errstate(over="ignore"):
        nu = np.ldexp((rhs[0] * M[1, 1] - rhs[1] * M[0, 1]) / det, e_r - e_m)
        mu = np.ldexp((M[0, 0] * rhs[1] - M[1, 0] * rhs[0]) / det, e_r - e_m)
    return float(nu), float(mu)


class _Conjugate(Variant):
    """CFW (``memory=1``) and BFW (``memory=2``) on the shared loop."""

    def __init__(self, memory: int, delta: float) -> None:
        self.name = "cfw" if memory == 1 else "bfw"
        where = "conjugate_frank_wolfe" if memory == 1 else "biconjugate_frank_wolfe"
        if not 0.0 < as_real(delta) < 1.0:  # NaN for None, text or an array: refused
            raise ValueError(f"{where}: `delta` must lie in (0, 1), got {delta!r}")
        self.memory = memory
        self.delta = as_real(delta)

    def start(self, tracker: Tracker, x0_atom: Atom | None, lmo: LMO) -> None:
        super().start(tracker, x0_atom, lmo)
        self.s1: np.ndarray | None = None  # previous conjugate point
        self.s2: np.ndarray | None = None  # the one before
        self.n_fw_steps = self.n_cfw_steps = self.n_bfw_steps = 0

    # products are np.vdot: points may be matrices (Birkhoff, nuclear-norm ball), where
    # `@` is a matrix product
    def _cfw_weight(self, Ha: np.ndarray, a: np.ndarray, u: np.ndarray) -> float:
        """``alpha`` making ``alpha*a + (1-alpha)*u`` conjugate to ``a``, or 0 (a
        Frank-Wolfe restart) when that ``alpha`` lies outside ``[0, 1 - delta]``.

        Past ``1 - delta`` the paper clips ``alpha`` to ``1 - delta``; this restarts
        instead.  ``alpha > 1`` whenever ``<Ha, u> > <Ha, a> > 0``: the new vertex
        reaches further along the last direction (in ``H``'s metric) than the previous
        conjugate point, and the conjugate point lies outside the segment.  Clipped,
        the point was the previous one up to ``delta``, along which the last exact line
        search left no slope: the step's slope was ``delta`` times a Frank-Wolfe step's,
        its decrease of ``f`` 1.2e-7 times FW's on a 4 x 4 traffic grid (of the order
        of ``delta**2``), x hardly moved, the same ``alpha > 1`` came back, and CFW
        crawled (that grid: relative gap 3.0e-3 after 300 iterations, where FW had
        2.2e-4).

        Inside ``[0, 1 - delta]``, on a quadratic after an exact line search, the
        conjugate step decreases ``f`` at least as much as the Frank-Wolfe step when
        neither is cut at ``gamma = 1`` (its slope is ``1 - alpha`` times FW's, its
        curvature at most ``(1 - alpha)**2`` times FW's).
        """
        den = float(np.vdot(Ha, u - a))
        if den == 0.0:
            return 0.0
        alpha = float(np.vdot(Ha, u)) / den
        if not (np.isfinite(alpha) and 0.0 <= alpha <= 1.0 - self.delta):
            return 0.0
        return alpha

    def _conjugate_point(self, tracker: Tracker, y: np.ndarray) -> tuple[np.ndarray, str]:
        x = tracker.x
        if self.s1 is None:
            return y, "fw"
        u = y - x
        a = self.s1 - x
        Ha = _hessian_product(tracker, a)
        if self.memory == 2 and self.s2 is not None:
            c = self.s2 - x
            Hc = _hessian_product(tracker, c)
            # d = u + nu*a + mu*c conjugate to both previous directions:
            # a is parallel to the last one and (a, c) span the last two
            M = np.array([[np.vdot(Ha, a), np.vdot(Ha, c)], [np.vdot(Hc, a), np.vdot(Hc, c)]])
            rhs = -np.array([np.vdot(Ha, u), np.vdot(Hc, u)])
            weights = _solve_2x2(M, rhs)
            if weights is not None:
                nu, mu = weights
                if np.isfinite(nu) and np.isfinite(mu) and nu >= 0.0 and mu >= 0.0:
                    b0 = 1.0 / (1.0 + nu + mu)
                    if b0 >= self.delta:
                        return b0 * y + (b0 * nu) * self.s1 + (b0 * mu) * self.s2, "bfw"
        alpha = self._cfw_weight(Ha, a, u)
        if alpha == 0.0:
            return y, "fw"
        return alpha * self.s1 + (1.0 - alpha) * y, "cfw"

    def direction(self, k: int, tracker: Tracker, gradient: np.ndarray, v: Atom,
                  gap: float, g_dot_x: float) -> tuple[Direction, float, Any]:
        y = v.to_dense()
        s, kind = self._conjugate_point(tracker, y)
        # an inexact earlier line search can leave s - x uphill: restart with FW
        if kind != "fw" and float(np.vdot(gradient, s)) - g_dot_x >= 0.0:
            s, kind = y, "fw"
        if kind == "fw":
            self.n_fw_steps += 1
            atom = v
        else:
            if kind == "cfw":
                self.n_cfw_steps += 1
            else:
                self.n_bfw_steps += 1
            atom = Atom(s, key=("conjugate", k))
        return Direction.frank_wolfe(atom), 1.0, (s, kind)

    def after_step(self, direction: Direction, gamma: float, info: Any) -> None:
        s, kind = info
        if gamma >= 1.0:
            # x is now s: the previous directions carry no information
            self.s1 = self.s2 = None
            return
        if kind == "fw":
            self.s2 = None  # a restart: BFW first needs one CFW step again
        else:
            self.s2 = self.s1
        self.s1 = s

    def outputs(self) -> tuple[Any, dict[str, Any]]:
        return None, {"n_fw_steps": self.n_fw_steps, "n_cfw_steps": self.n_cfw_steps,
                      "n_bfw_steps": self.n_bfw_steps}


_COMMON_DOC = """
    Parameters
    ----------
    objective : Objective
        The function to minimize.  Its ``hessian_vector_product`` hook gives
        the curvatures; without it a finite difference of gradients is used.
    domain : LMO
        The domain, given by its linear minimization oracle.
    x0 : ndarray or Atom, optional
        Feasible start; by default a vertex of the domain.
    step_size : str or StepSize, optional
        Default ``"exact"`` when the objective has a line search, else
        ``"adaptive"``.  The conjugacy argument assumes exact line searches; a
        rule that reads ``f`` is required (open-loop rules such as ``"agnostic"``
        are refused: the conjugate directions shrink to nothing under them).
    delta : float, default 1e-4
        The Frank-Wolfe vertex keeps a weight of at least ``delta`` in the
        conjugate point (the safeguard of Mitradjieva & Lindberg).  Where
        conjugacy would leave it less, the step is a Frank-Wolfe step that
        restarts the memory (the paper clips the weight to ``delta`` instead:
        that step was the previous direction up to ``delta`` and hardly
        decreased ``f``, and the runs crawled).

    Returns
    -------
    Result
        ``extra`` counts the Frank-Wolfe (restart), conjugate and bi-conjugate
        steps taken.
"""


_F = TypeVar("_F", bound=Callable[..., Any])


def _documented(summary: str) -> Callable[[_F], _F]:
    """Give a solver its summary followed by the text CFW and BFW share (before
    :func:`solver` adds the run keywords to it)."""

    def decorate(func: _F) -> _F:
        func.__doc__ = summary + _COMMON_DOC
        return func

    return decorate


@register("cfw")
@solver()
@_documented("""Conjugate Frank-Wolfe (CFW).

    The search point is ``s_k = alpha s_{k-1} + (1 - alpha) v_k`` with
    ``alpha`` chosen so that ``s_k - x_k`` is ``H(x_k)``-conjugate to the
    previous direction.  When that ``alpha`` lies outside ``[0, 1 - delta]`` the
    step is a Frank-Wolfe step (``alpha = 0``), which restarts the memory.  Cost
    per iteration: one oracle call, one gradient and one Hessian-vector product.
""")
def conjugate_frank_wolfe(objective: Objective, domain: LMO,
                          x0: np.ndarray | Atom | None = None, *,
                          step_size: str | StepSize | None = None, delta: float = 1e-4,
                          **run: Unpack[RunKeywords]) -> Result:
    options = RunOptions(**run)  # @solver passes every run keyword
    _check_line_search("conjugate_frank_wolfe", step_size)
    return run_frank_wolfe(objective, domain, _Conjugate(1, delta), x0,
                           step_size=step_size, options=options)


@register("bfw")
@solver()
@_documented("""Bi-conjugate Frank-Wolfe (BFW).

    The search point ``s_k = b0 v_k + b1 s_{k-1} + b2 s_{k-2}`` (weights
    ``>= 0`` summing to 1) makes ``s_k - x_k`` ``H(x_k)``-conjugate to the
    last two directions; the weights solve a 2x2 linear system.  When it has
    no admissible solution the step falls back to CFW, and to Frank-Wolfe
    when that fails too.  Cost per iteration: one oracle call, one gradient
    and two Hessian-vector products.
""")
def biconjugate_frank_wolfe(objective: Objective, domain: LMO,
                            x0: np.ndarray | Atom | None = None, *,
                            step_size: str | StepSize | None = None, delta: float = 1e-4,
                            **run: Unpack[RunKeywords]) -> Result:
    options = RunOptions(**run)  # @solver passes every run keyword
    _check_line_search("biconjugate_frank_wolfe", step_size)
    return run_frank_wolfe(objective, domain, _Conjugate(2, delta), x0,
                           step_size=step_size, options=options)


#: the words of rules fixed in advance by the iteration counter (OpenLoop rules)
_OPEN_LOOP_WORDS = ("agnostic", "fictitious", "log_agnostic", "nonconvex", "monotonic")


def _check_line_search(name: str, step_size: Any) -> None:
    """Refuse an open-loop step rule: a step shorter than the line search's leaves the
    conjugate point next to x (the Frank-Wolfe vertex keeps only ``delta`` of it) and
    nothing resets the memory, so the run crawled (f - f* = 0.61 after 3000 steps on a
    hypersimplex QP where FW with the same rule reached 7e-7)."""
    word = step_size.lower() if isinstance(step_size, str) else None
    if word in _OPEN_LOOP_WORDS or isinstance(step_size, OpenLoop):
        raise ValueError(f"{name} needs a step rule that reads f (a line search: 'exact', "
                         f"'short', 'adaptive', 'armijo' or 'secant'), got "
                         f"step_size={step_size!r}: with an open-loop rule the conjugate "
                         "directions shrink to nothing and the run stalls")



