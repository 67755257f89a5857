"""The Beckmann objective of user-equilibrium traffic assignment."""

from __future__ import annotations

import numpy as np

from frankwolfe.compiled import CompiledObjective, separable_objective, separable_step
from frankwolfe.errors import ShapeError
from frankwolfe.objectives.base import Objective

from .network import Network
from .vdf import _coord, _costs, _costs_at, _curvatures, link_cost_data

__all__ = ["Beckmann"]


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
        self._data = link_cost_data(network)

    def _check(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.shape != self.shape:
            raise ShapeError(
                f"Beckmann: `x` must have shape {self.shape} (one flow per link), got {x.shape}")
        # read-only, whatever the caller passes: the kernels then compile once, not once
        # more for the read-only iterates that callbacks see (frankwolfe's State.x)
        x = np.ascontiguousarray(x).view()
        x.flags.writeable = False
        return x

    def value_and_gradient(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        return _costs(self._data, self._check(x), True)

    def value(self, x: np.ndarray) -> float:
        return float(self.value_and_gradient(x)[0])

    def gradient(self, x: np.ndarray) -> np.ndarray:
        return self.value_and_gradient(x)[1]

    def partial_gradient(self, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
        return _costs_at(self._data, self._check(x), np.asarray(indices, dtype=np.int64))

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
        """``c_a'(x_a)`` for every link (``inf`` at 0 flow for BPR powers below 1)."""
        x = self._check(x)
        h = _curvatures(self._data, x)
        d = self._data
        # the kernel gives 0 there (its curvature only guides Newton steps)
        h[(d.kind <= 1) & (d.alpha != 0.0) & (d.beta < 1.0) & ~(x > 0.0)] = np.inf
        return h

    def hessian_vector_product(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        h = self.hessian_diagonal(x)
        v = np.asarray(v, dtype=float)
        if not np.isinf(h).any():
            return h * v
        # 0 * inf must be 0 here: a link with no direction component adds no curvature.
        # Multiplied only where v != 0: h * v everywhere first warned of the 0 * inf it
        # then discarded (BPR powers below 1, at links without flow)
        hv = np.zeros(np.broadcast_shapes(h.shape, v.shape))
        np.multiply(h, v, out=hv, where=v != 0.0)
        return hv

    def exact_step(self, x: np.ndarray, direction: np.ndarray, gradient: np.ndarray) -> float:
        d = np.ascontiguousarray(direction, dtype=float).reshape(-1)
        idx = np.flatnonzero(d)
        return separable_step(_coord, self._data, self._check(x), idx, d[idx])

    def __repr__(self) -> str:
        return f"Beckmann({self.network.name or self.network.n_links!r})"
