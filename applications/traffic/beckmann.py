"""The Beckmann objective of user-equilibrium traffic assignment."""

from __future__ import annotations

import numpy as np
from numba import njit

from frankwolfe.errors import ShapeError
from frankwolfe.objectives.base import Objective

from .network import Network

__all__ = ["Beckmann"]


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


@njit(cache=True, nogil=True)
def _slope_curv(x, d, gam, t0, beta, cap, p, fixed):
    # phi'(gam), phi''(gam) of phi(gam) = f(x + gam d), and the size of the terms of phi'
    s = 0.0
    c = 0.0
    size = 0.0
    for a in range(x.size):
        if d[a] == 0.0:
            continue
        xa = x[a] + gam * d[a]
        if xa < 0.0:
            xa = 0.0
        t = t0[a] + fixed[a]
        if beta[a] != 0.0:
            r = xa / cap[a]
            t += beta[a] * r ** p[a]
            if p[a] == 1.0:
                c += beta[a] / cap[a] * d[a] * d[a]
            elif xa > 0.0:
                c += beta[a] * p[a] * r ** (p[a] - 1.0) / cap[a] * d[a] * d[a]
        s += t * d[a]
        size += abs(t * d[a])
    return s, c, size


@njit(cache=True, nogil=True)
def _line_search(x, d, t0, beta, cap, p, fixed):
    """Root of phi'(gam) = sum_a t_a(x_a + gam d_a) d_a on gam >= 0 (Newton + bisection)."""
    s0, c0, _ = _slope_curv(x, d, 0.0, t0, beta, cap, p, fixed)
    if not s0 < 0.0:
        return 0.0
    # the largest step keeping the flows non-negative bounds the search
    hi = np.inf
    for a in range(x.size):
        # a flow at or below 0 is rounding residue (block steps update x by sums):
        # it gives no bracket (the clipped costs keep phi convex beyond it)
        if d[a] < 0.0 and x[a] > 0.0:
            r = -x[a] / d[a]
            if r < hi:
                hi = r
    lo = 0.0
    if hi == np.inf:
        hi = 1.0
        while True:
            s_hi, _, _ = _slope_curv(x, d, hi, t0, beta, cap, p, fixed)
            if s_hi >= 0.0 or hi > 1e15:
                break
            lo = hi
            hi *= 2.0
    s_hi, _, _ = _slope_curv(x, d, hi, t0, beta, cap, p, fixed)
    if s_hi <= 0.0:
        return hi
    # start from the step of the quadratic model at 0: near convergence the
    # steps are short and it is already accurate
    g = -s0 / c0 if c0 > 0.0 else 0.5 * (lo + hi)
    if not (lo < g < hi):
        g = 0.5 * (lo + hi)
    for _ in range(200):
        s, c, size = _slope_curv(x, d, g, t0, beta, cap, p, fixed)
        # |phi'| at the level of its rounding error: g is a root to working precision
        if abs(s) <= 1e-14 * size:
            return g
        if s > 0.0:
            hi = g
        else:
            lo = g
        if hi - lo <= 4e-16 * hi:
            break
        step = s / c if c > 0.0 else np.inf
        nxt = g - step
        if not (lo < nxt < hi):
            nxt = 0.5 * (lo + hi)
        elif abs(step) <= 1e-14 * g:
            return nxt
        g = nxt
    return g


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
    :meth:`exact_step` solves the 1-D optimality condition
    ``sum_a c_a(x_a + gamma d_a) d_a = 0`` by safeguarded Newton steps
    (bisection whenever Newton leaves the bracket), to machine precision.
    Flows are clipped at 0 inside the costs, so tiny negative round-off
    cannot produce NaNs with non-integer powers.
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
        d = np.zeros(self.shape[0])
        d[indices] = direction
        return float(_line_search(self._check(x), d, self._t0, self._beta, self._cap,
                                  self._p, self._fixed))

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
        return float(_line_search(self._check(x), np.ascontiguousarray(direction, dtype=float),
                                  self._t0, self._beta, self._cap, self._p, self._fixed))

    def __repr__(self) -> str:
        return f"Beckmann({self.network.name or self.network.n_links!r})"
