"""Convex-concave saddle-point objectives ``L(x, y)`` (min over x, max over y).

A :class:`SaddleObjective` answers ``L(x, y)``, ``grad_x L`` and
``grad_y L``; :func:`~frankwolfe.saddle_point_frank_wolfe` turns it into the
monotone operator ``r(z) = (grad_x L, -grad_y L)`` on ``z = (x, y)``.
:class:`BilinearObjective` is the matrix game ``x^T M y`` (with optional
linear and quadratic terms); :func:`game_value` solves a matrix game by
linear programming, the reference the iterative solvers are checked against.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._numbers import as_real, real_array
from .._scaling import binary_exponent
from .._sparse import issparse
from ..errors import ShapeError

__all__ = ["SaddleObjective", "BilinearObjective", "game_value"]


class SaddleObjective(ABC):
    """A smooth function ``L(x, y)``, convex in ``x`` and concave in ``y``.

    Subclasses implement :meth:`value`, :meth:`gradient_x` and
    :meth:`gradient_y`; :meth:`value_and_gradients` may be overridden when the
    three share work (for a bilinear form both gradients come from ``M y``
    and ``M^T x``).

    Attributes
    ----------
    shape_x, shape_y : tuple of int or None
        Shapes of ``x`` and ``y`` when the objective knows them.
    curvature : float or None
        The saddle curvature constant ``C`` of Gidel et al. (2017) over the
        domains in use, when known; the curvature step rule
        (``step_size="curvature"``, ``gamma = min(1, nu * gap / (2 C))``) reads it.
    smoothness_x, smoothness_y : float or None
        Lipschitz constants of ``x -> grad_x L(x, y)`` and
        ``y -> grad_y L(x, y)``, when known; with the domains' diameters
        they give ``C`` (:meth:`curvature_constant`).
    strongly_convex_concave : bool
        Whether ``L`` is strongly convex in ``x`` and strongly concave in
        ``y`` (the regime where SP-AFW converges linearly); the solver then
        defaults to a curvature step (``"local"``, ``"curvature"`` or
        ``"saddle_backtracking"``).
    """

    shape_x: tuple[int, ...] | None = None
    shape_y: tuple[int, ...] | None = None
    curvature: float | None = None
    smoothness_x: float | None = None
    smoothness_y: float | None = None
    strongly_convex_concave: bool = False

    def curvature_along(self, dx: np.ndarray, dy: np.ndarray) -> float | None:
        """The curvature of ``L`` along a direction ``(dx, dy)``, or None when unknown.

        A number ``C_d`` with ``L(x + g dx, y) - L(x, y) - g <grad_x L, dx>
        - [L(x, y + g dy) - L(x, y) - g <grad_y L, dy>] <= g^2 C_d / 2`` for
        every ``x, y, g`` (each player's curvature), or larger where the coupling
        of the players turns the gradient along the joint move (a local step from
        the players' curvature alone cycles on strongly coupled games;
        :class:`BilinearObjective` returns ``||r(z + d) - r(z)|| ||d||`` for the
        game's operator ``r``).  The local saddle step (``step_size="local"``)
        reads it.  Default: unknown.
        """
        return None

    def curvature_constant(self, domain_x: Any, domain_y: Any) -> float | None:
        """The saddle curvature constant ``C`` over ``domain_x x domain_y``, or None.

        ``C = sup (2 / gamma^2) [L(x + gamma (s_x - x), y) - L(x, y) - gamma <grad_x L, s_x - x>]
        + (the same for -L in y)`` over the domains (Gidel, Jebara and
        Lacoste-Julien, AISTATS 2017).  It is :attr:`curvature` when set,
        else ``smoothness_x D_x^2 + smoothness_y D_y^2`` with the domains'
        Euclidean diameters (:meth:`~frankwolfe.LMO.diameter`), else unknown.
        """
        if self.curvature is not None:
            return float(self.curvature)
        return _smooth_curvature(((self.smoothness_x, domain_x, self.shape_x),
                                  (self.smoothness_y, domain_y, self.shape_y)))

    @abstractmethod
    def value(self, x: np.ndarray, y: np.ndarray) -> float:
        """``L(x, y)``."""

    @abstractmethod
    def gradient_x(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``grad_x L(x, y)``, of the shape of ``x``."""

    @abstractmethod
    def gradient_y(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``grad_y L(x, y)``, of the shape of ``y``."""

    def value_and_gradients(self, x: np.ndarray, y: np.ndarray
                            ) -> tuple[float, np.ndarray, np.ndarray]:
        """``(L, grad_x L, grad_y L)``; override when they share work."""
        return self.value(x, y), self.gradient_x(x, y), self.gradient_y(x, y)


class BilinearObjective(SaddleObjective):
    """``L(x, y) = x^T M y + a^T x + b^T y + mu_x/2 ||x||^2 - mu_y/2 ||y||^2``.

    With ``mu_x = mu_y = 0`` and simplex domains this is the matrix game of
    payoff ``M`` (the row player ``x`` pays ``x^T M y`` to the column player
    ``y``); positive ``mu_x, mu_y`` make it strongly convex-concave.

    Parameters
    ----------
    M : array_like or scipy.sparse matrix, shape (m, n)
        Coupling (payoff) matrix; finite.  A sparse ``M`` is copied into canonical
        CSR form (repeated entries summed, indices sorted); a dense float64 ``M`` is
        used by reference, not copied (it can be the largest object of the
        problem): do not change it in place while the objective is in use.
    a : array_like, shape (m,), optional
        Linear term in ``x`` (copied).
    b : array_like, shape (n,), optional
        Linear term in ``y`` (copied).
    mu_x, mu_y : float, default 0
        Non-negative quadratic regularization of each player.

    Notes
    -----
    One evaluation costs two products with ``M``, O(nnz(M)).  The saddle
    curvature over domains of diameters ``D_x, D_y`` is
    ``mu_x D_x^2 + mu_y D_y^2`` (:meth:`curvature_constant`; the coupling
    ``x^T M y`` is linear in each player and adds nothing); it is zero for a
    pure bilinear game, whose curvature step then needs an explicit ``C``.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import BilinearObjective
    >>> L = BilinearObjective(np.array([[1.0, -1.0], [-1.0, 1.0]]))
    >>> L.value(np.array([0.5, 0.5]), np.array([1.0, 0.0]))
    0.0
    """

    def __init__(self, M: Any, a: Any = None, b: Any = None, *, mu_x: float = 0.0,
                 mu_y: float = 0.0) -> None:
        self.M: Any  # a dense ndarray or a CSR array
        # real_array: a complex M lost its imaginary part with a mere ComplexWarning
        M = real_array(M, "BilinearObjective", "M", what="a matrix of numbers", sparse=True)
        if issparse(M):
            # a private canonical copy: the saddle tracker scatters a CSR row's entries
            # into a vector at once, which keeps one of two repeated columns only, and a
            # canonicalisation in place would rewrite the caller's arrays
            Ms = sp.csr_array(M, dtype=float, copy=True)
            Ms.sum_duplicates()
            finite = bool(np.all(np.isfinite(Ms.data)))
            self.M = Ms
        else:
            finite = bool(np.all(np.isfinite(M)))
            self.M = M
        if self.M.ndim != 2:
            raise ShapeError(
                f"BilinearObjective: `M` must be a 2-D matrix, got shape {self.M.shape}")
        if min(self.M.shape) < 1:
            raise ShapeError(f"BilinearObjective: `M` must be non-empty, got shape {self.M.shape}")
        if not finite:
            raise ValueError("BilinearObjective: `M` contains NaN or inf")
        m, n = self.M.shape
        self.a = self._vector(a, m, "a")
        self.b = self._vector(b, n, "b")
        for name, mu in (("mu_x", mu_x), ("mu_y", mu_y)):
            if not (math.isfinite(as_real(mu)) and mu >= 0):
                raise ValueError(f"BilinearObjective: `{name}` must be finite and >= 0, got {mu!r}")
        self.mu_x = float(mu_x)
        self.mu_y = float(mu_y)
        # the x^T M y coupling is linear in each player: only the mu terms curve L
        self.smoothness_x = self.mu_x
        self.smoothness_y = self.mu_y
        self.strongly_convex_concave = self.mu_x > 0 and self.mu_y > 0
        self.shape_x = (m,)
        self.shape_y = (n,)

    @staticmethod
    def _vector(v: Any, size: int, name: str) -> np.ndarray | None:
        if v is None:
            return None
        arr = real_array(v, "BilinearObjective", name)
        if arr.shape != (size,):
            raise ShapeError(
                f"BilinearObjective: `{name}` has shape {arr.shape}, expected ({size},)")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"BilinearObjective: `{name}` contains NaN or inf")
        return arr.copy()  # the caller's array may change after construction

    def _check(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        if x.shape != self.shape_x:
            raise ShapeError(f"BilinearObjective: `x` has shape {x.shape}, expected {self.shape_x}")
        if y.shape != self.shape_y:
            raise ShapeError(f"BilinearObjective: `y` has shape {y.shape}, expected {self.shape_y}")
        return x, y

    def value_and_gradients(self, x: np.ndarray, y: np.ndarray
                            ) -> tuple[float, np.ndarray, np.ndarray]:
        x, y = self._check(x, y)
        return self.from_products(x, y, np.asarray(self.M @ y, dtype=float),
                                  np.asarray(self.M.T @ x, dtype=float))

    def from_products(self, x: np.ndarray, y: np.ndarray, My: np.ndarray, MTx: np.ndarray
                      ) -> tuple[float, np.ndarray, np.ndarray]:
        """``(L, grad_x L, grad_y L)`` from the products ``M y`` and ``M^T x``.

        The one place where the linear and quadratic terms are added, for the
        full evaluation and for trackers that keep the products up to date.
        """
        gx = My.copy()
        gy = MTx.copy()
        val = float(x @ My)
        if self.a is not None:
            gx += self.a
            val += float(self.a @ x)
        if self.b is not None:
            gy += self.b
            val += float(self.b @ y)
        if self.mu_x:
            gx += self.mu_x * x
            val += 0.5 * self.mu_x * float(x @ x)
        if self.mu_y:
            gy -= self.mu_y * y
            val -= 0.5 * self.mu_y * float(y @ y)
        return val, gx, gy

    def curvature_along(self, dx: np.ndarray, dy: np.ndarray) -> float:
        """``||r(z + d) - r(z)|| ||d||`` for the move ``d = (dx, dy)``, with ``r = (grad_x
        L, -grad_y L)`` the game's monotone operator: ``r``'s change along ``d`` is
        ``(mu_x dx + M dy, mu_y dy - M^T dx)``.

        At least the players' curvature ``mu_x ||dx||^2 + mu_y ||dy||^2`` (the inner
        product of the change with ``d``; Cauchy-Schwarz), and close to it when the
        coupling ``M`` is weak (equal for ``M = 0`` and ``mu_x = mu_y``); the
        coupling's turn of the gradient makes it larger.
        A local step from the players' curvature alone cycles on strongly coupled
        games; from this one SP-AFW converges there, and weakly coupled games keep
        their linear rate (benchmarks/README.md, ``saddle.py`` and "Measurements behind
        code choices").
        """
        dx = np.asarray(dx, dtype=float).reshape(-1)
        dy = np.asarray(dy, dtype=float).reshape(-1)
        rx = self.mu_x * dx + np.asarray(self.M @ dy, dtype=float).reshape(-1)
        ry = self.mu_y * dy - np.asarray(self.M.T @ dx, dtype=float).reshape(-1)
        return float(np.sqrt((rx @ rx + ry @ ry) * (dx @ dx + dy @ dy)))

    def value(self, x: np.ndarray, y: np.ndarray) -> float:
        return self.value_and_gradients(x, y)[0]

    def gradient_x(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return self.value_and_gradients(x, y)[1]

    def gradient_y(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return self.value_and_gradients(x, y)[2]

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v:g}" for k, v in (("mu_x", self.mu_x), ("mu_y", self.mu_y)) if v)
        lin = (", a" if self.a is not None else "") + (", b" if self.b is not None else "")
        return f"BilinearObjective(M: {self.M.shape[0]}x{self.M.shape[1]}{lin}{extra})"


def _smooth_curvature(sides: Any) -> float | None:
    """``sum L_i D_i^2`` over ``(L_i, domain_i, shape_i)``; None when a needed piece is unknown."""
    total = 0.0
    for smooth, domain, shape in sides:
        if smooth is None:
            return None
        if smooth == 0:
            continue
        diameter = domain.diameter(shape)
        if diameter is None:
            return None
        total += float(smooth) * float(diameter) ** 2
    return total


#: Payoffs whose largest magnitude lies within 2**±_LP_RANGE go to HiGHS as they are
_LP_RANGE = 10


def payoffs_in_range(M: np.ndarray) -> tuple[np.ndarray, int]:
    """``(M * 2**-e, e)``: a finite payoff matrix scaled by a power of two (exactly, no
    rounding) so that its largest magnitude is in ``[0.5, 1)``, where it is outside
    ``[2**-10, 2**10]``; ``e = 0`` (``M`` itself) inside it and for a zero matrix.

    A game's value is positively homogeneous (``value(c M) = c value(M)``, with the
    same optimal strategies), so a linear program on the scaled matrix answers for
    ``M`` (its value times ``2**e``, :func:`math.ldexp`).  HiGHS refuses matrix entries
    above 1e15 ("Model error" on a finite ``M`` of 1e308) and drops those below 1e-9 as
    zero; its tolerances are absolute (1e-10 at the finest), so a matrix of moderate
    entries is left as it is, to the accuracy it had.
    """
    exponent = binary_exponent(float(np.abs(M).max()) if M.size else 0.0)
    if abs(exponent) <= _LP_RANGE:
        return M, 0
    return np.ldexp(M, -exponent), exponent


def game_value(M: Any) -> tuple[float, np.ndarray, np.ndarray]:
    """Value and optimal strategies of the matrix game ``min_x max_y x^T M y``.

    ``x`` and ``y`` range over probability simplices.  Solved exactly (to
    the LP solver's tolerance) with two linear programs in
    :func:`scipy.optimize.linprog` (HiGHS): one per player.  A matrix of entries far
    from 1 is first scaled by a power of two (:func:`payoffs_in_range`): the value
    scales with ``M`` and the optimal strategies do not change.

    Parameters
    ----------
    M : array_like, shape (m, n)
        Payoff matrix (the row player pays).

    Returns
    -------
    value : float
        The game value ``min_x max_y x^T M y = max_y min_x x^T M y``.
    x : ndarray, shape (m,)
        An optimal (minimizing) row strategy.
    y : ndarray, shape (n,)
        An optimal (maximizing) column strategy.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import game_value
    >>> v, x, y = game_value(np.array([[0.0, 1.0, -1.0], [-1.0, 0.0, 1.0], [1.0, -1.0, 0.0]]))
    >>> round(v, 12) + 0.0, np.round(x, 6)
    (0.0, array([0.333333, 0.333333, 0.333333]))
    """
    from scipy.optimize import linprog  # scipy.optimize is slow to import; only games need it

    M = real_array(M.toarray() if issparse(M) else M, "game_value", "M",
                   what="a matrix of numbers")
    if M.ndim != 2 or min(M.shape) < 1:
        raise ShapeError(f"game_value: `M` must be a non-empty 2-D matrix, got shape {M.shape}")
    if not np.all(np.isfinite(M)):
        raise ValueError("game_value: `M` contains NaN or inf")
    M, exponent = payoffs_in_range(M)

    def solve(P: np.ndarray) -> tuple[float, np.ndarray]:
        # min_p max_j (p^T P)_j  as  min t  s.t.  P^T p <= t 1,  1^T p = 1,  p >= 0
        k, n = P.shape
        c = np.zeros(k + 1)
        c[-1] = 1.0
        A_ub = np.hstack([P.T, -np.ones((n, 1))])
        A_eq = np.ones((1, k + 1))
        A_eq[0, -1] = 0.0
        res = linprog(c, A_ub=A_ub, b_ub=np.zeros(n), A_eq=A_eq, b_eq=[1.0],
                      bounds=[(0, None)] * k + [(None, None)], method="highs")
        x, fun = res.x, res.fun
        if res.status != 0 or x is None or fun is None:  # pragma: no cover - bounded, feasible
            raise RuntimeError(f"game_value: linprog failed: {res.message}")
        p = np.clip(x[:k], 0.0, None)
        return float(fun), p / p.sum()

    v_row, x = solve(M)
    v_col, y = solve(-M.T)  # max_y min_i (M y)_i = -min_y max_i (-M y)_i
    return math.ldexp(0.5 * (v_row - v_col), exponent), x, y
