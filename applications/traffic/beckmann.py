"""The Beckmann objective of user-equilibrium traffic assignment."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from frankwolfe.compiled import CompiledObjective, separable_objective, separable_step
from frankwolfe.errors import ShapeError
from frankwolfe.objectives.base import Objective

from .network import Network

__all__ = ["Beckmann", "LinkCostData"]


@njit(cache=True, nogil=True)
def _value_grad(x, t0, beta, cap, p, fixed):
    # per link: t(x) = t0 + beta (x/cap)^p + fixed,
    # integral t0 x + beta cap/(p+1) (x/cap)^(p+1) + fixed x
    m = x.size
    g = np.empty(m)
    f = 0.0
    for a in range(m):
        xa = x[a] if x[a] > 0.0 else 0.0
        base = t0[a] + fixed[a]
        if beta[a] != 0.0:
            r = xa / cap[a]
            rp = r ** p[a]
            g[a] = base + beta[a] * rp
            f += base * x[a] + beta[a] * cap[a] * rp * r / (p[a] + 1.0)
        else:
            g[a] = base
            f += base * x[a]
    return f, g


@njit(cache=True, nogil=True)
def _grad_at(x, idx, t0, beta, cap, p, fixed):
    # the link costs at the links idx only (block-coordinate steps)
    g = np.empty(idx.size)
    for j in range(idx.size):
        a = idx[j]
        g[j] = t0[a] + fixed[a]
        if beta[a] != 0.0:
            xa = x[a] if x[a] > 0.0 else 0.0
            g[j] += beta[a] * (xa / cap[a]) ** p[a]
    return g


@njit(cache=True, nogil=True)
def _hess_diag(x, beta, cap, p):
    m = x.size
    h = np.zeros(m)
    for a in range(m):
        if beta[a] != 0.0:
            xa = x[a] if x[a] > 0.0 else 0.0
            if p[a] == 1.0:
                h[a] = beta[a] / cap[a]
            elif xa > 0.0:
                h[a] = beta[a] * p[a] * (xa / cap[a]) ** (p[a] - 1.0) / cap[a]
            elif p[a] < 1.0:
                h[a] = np.inf
    return h


class LinkCostData(NamedTuple):
    """The per-link arrays the compiled link-cost kernel :func:`_coord` reads: the BPR
    cost ``t(x) = t0 + fixed + beta (x / cap)^p`` (``beta = 0``: constant)."""

    t0: np.ndarray
    beta: np.ndarray
    cap: np.ndarray
    p: np.ndarray
    fixed: np.ndarray


@njit(cache=True, nogil=True)
def _coord(data, a, xa, want_value):  # pragma: no cover - compiled
    """``(int_0^xa t_a, t_a(xa), t_a'(xa))`` of link ``a`` (the integral only with
    ``want_value``): the per-coordinate kernel of the core's separable-objective
    kernels (:func:`frankwolfe.compiled.separable_objective`).  Flows are clipped at 0
    inside the cost; the same arithmetic as ``_value_grad`` / ``_grad_at``, so the
    tracked costs equal freshly computed ones."""
    base = data.t0[a] + data.fixed[a]
    beta = data.beta[a]
    if beta == 0.0:
        return base * xa, base, 0.0
    x = xa if xa > 0.0 else 0.0
    cap = data.cap[a]
    p = data.p[a]
    r = x / cap
    rp = r ** p
    if p == 1.0:
        d2 = beta / cap
    elif x > 0.0:
        d2 = beta * p * r ** (p - 1.0) / cap
    else:  # the curvature only guides Newton steps: 0 where it is infinite
        d2 = 0.0
    f = base * xa + beta * cap * rp * r / (p + 1.0) if want_value else 0.0
    return f, base + beta * rp, d2


class Beckmann(Objective):
    """Beckmann potential ``f(x) = sum_a int_0^{x_a} c_a(u) du`` of a :class:`Network`.

    Its gradient is the vector of generalized link costs, its minimizers over
    the flow polytope are the user equilibria.  The Hessian is diagonal
    (``c_a'(x_a)``).  Value and gradient cost one pass over the links.

    Parameters
    ----------
    network : Network

    Notes
    -----
    The objective is separable: it gives the core one compiled kernel per link
    (integral, cost and its derivative), and the core's exact line search
    (:func:`frankwolfe.compiled.separable_step`) solves the 1-D optimality
    condition ``sum_a c_a(x_a + gamma d_a) d_a = 0`` by safeguarded Newton steps
    (bisection whenever Newton leaves the bracket), to machine precision, for
    :meth:`exact_step`, :meth:`exact_step_block` and the compiled block passes
    (:meth:`compiled_block_objective`) alike.  Flows are clipped at 0 inside the
    costs, so tiny negative round-off cannot produce NaNs with non-integer powers.
    """

    #: ``(n_links,)``: the network fixes the dimension
    shape: tuple[int, ...]

    def __init__(self, network: Network) -> None:
        self.network = network
        self.shape = (network.n_links,)
        t0 = network.free_flow_time
        self._t0 = np.ascontiguousarray(t0, dtype=float)
        self._beta = np.ascontiguousarray(np.where(network.power > 0, t0 * network.b, 0.0))
        self._cap = np.ascontiguousarray(network.capacity, dtype=float)
        self._p = np.ascontiguousarray(network.power, dtype=float)
        # power 0 makes the BPR term a constant: fold it into the fixed cost
        self._fixed = np.ascontiguousarray(
            network.fixed_cost + np.where(network.power > 0, 0.0, t0 * network.b)
        )
        self._data = LinkCostData(self._t0, self._beta, self._cap, self._p, self._fixed)

    def _check(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.shape != self.shape:
            raise ShapeError(
                f"Beckmann: `x` must have shape {self.shape} (one flow per link), got {x.shape}")
        return np.ascontiguousarray(x)

    def value_and_gradient(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        return _value_grad(self._check(x), self._t0, self._beta, self._cap, self._p, self._fixed)

    def value(self, x: np.ndarray) -> float:
        return float(self.value_and_gradient(x)[0])

    def gradient(self, x: np.ndarray) -> np.ndarray:
        return self.value_and_gradient(x)[1]

    def partial_gradient(self, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
        return _grad_at(self._check(x), np.asarray(indices, dtype=np.int64), self._t0,
                        self._beta, self._cap, self._p, self._fixed)

    def exact_step_block(self, x: np.ndarray, indices: np.ndarray, direction: np.ndarray,
                         partial_gradient: np.ndarray) -> float:
        return separable_step(_coord, self._data, self._check(x), indices, direction)

    def compiled_block_objective(self) -> CompiledObjective:
        """The core's compiled kernels of this separable objective (exact line search
        included) for compiled block passes."""
        return separable_objective(_coord, self._data)

    def link_costs(self, x: np.ndarray) -> np.ndarray:
        """Generalized link costs at flows ``x`` (the gradient)."""
        return self.gradient(x)

    def hessian_diagonal(self, x: np.ndarray) -> np.ndarray:
        """``c_a'(x_a)`` for every link (``inf`` at 0 flow for powers below 1)."""
        return _hess_diag(self._check(x), self._beta, self._cap, self._p)

    def hessian_vector_product(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        h = self.hessian_diagonal(x)
        v = np.asarray(v, dtype=float)
        # 0 * inf must be 0 here: a link with no direction component adds no curvature
        return np.where(v != 0.0, h * v, 0.0) if np.isinf(h).any() else h * v

    def exact_step(self, x: np.ndarray, direction: np.ndarray, gradient: np.ndarray) -> float:
        d = np.ascontiguousarray(direction, dtype=float).reshape(-1)
        idx = np.flatnonzero(d)
        return separable_step(_coord, self._data, self._check(x), idx, d[idx])

    def __repr__(self) -> str:
        return f"Beckmann({self.network.name or self.network.n_links!r})"
