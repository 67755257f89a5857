"""The norm balls: l1, l2 and lp (``1 < p < inf``).

Every oracle here treats a direction of any shape as a flat vector (C order),
so a matrix direction gets the ball of the *entrywise* norm (the l2 ball of
matrices is the Frobenius ball).  The l1 ball answers with sparse
:class:`Atom` s, the l2 and lp balls with dense ones.  The l-infinity ball is a
box (:class:`~frankwolfe.lmo.box.LinfBall`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._numbers import as_real, is_real
from ..active_set import ActiveSet
from ..atoms import Atom
from ._checks import check_direction, check_radius, dim_shape, repr_with_dim
from ._vertices import SLACK_TOL, UnitVertices, decomposed_point
from .base import LMO, answers_atoms
from .subset import SubsetOracle, checked_ids

__all__ = ["L1Ball", "L2Ball", "LpBall"]


def _max_abs(lmo: LMO, flat: np.ndarray) -> float:
    """Largest ``|g_i|`` of a direction, refusing nan/inf (they have no minimizer)."""
    m = float(np.max(np.abs(flat), initial=0.0))
    if not np.isfinite(m):
        raise ValueError(f"{lmo!r}: `direction` must be finite, got an entry equal to {m}")
    return m


def _lp_norm(x: np.ndarray, p: float) -> float:
    """``||x||_p`` without overflow or underflow (scaled by ``max|x_i|``); nan -> inf."""
    a = np.abs(np.asarray(x, dtype=float)).reshape(-1)
    m = float(np.max(a, initial=0.0))
    if not np.isfinite(m):
        return float("inf")
    if m == 0.0:
        return 0.0
    u = a / m
    if p == 2.0:
        return m * float(np.sqrt(np.dot(u, u)))
    return m * float(np.sum(u**p)) ** (1.0 / p)

def _argmax_abs(g: np.ndarray) -> int:
    """``argmax |g_i|`` (first index on ties, a nan wins) from the SIMD ``argmax`` and
    ``argmin`` of ``g``: two read-only passes, no temporary ``|g|`` (an n-vector allocated
    per call costs page faults on large n)."""
    hi, lo = int(np.argmax(g)), int(np.argmin(g))
    a, b = abs(g[hi]), abs(g[lo])
    if a != a:
        return hi
    if b != b or b > a or (b == a and lo < hi):
        return lo
    return hi


def _zero_atom(shape: tuple[int, ...]) -> Atom:
    return Atom.sparse([], [], shape, key=("zero",))

class L1Ball(UnitVertices, SubsetOracle, LMO):
    """The l1 ball ``{x : ||x||_1 <= radius}``.

    Vertices: ``+-radius * e_i`` (key ``("e", i, sign)``).  LMO cost: one
    argmax of ``|g|``, O(n).

    Parameters
    ----------
    radius : float, default 1.0
        Positive and finite.
    dim : int, optional
        Dimension (otherwise taken from the direction).

    Notes
    -----
    Ties in ``|g_i|`` go to the smallest flat index; ``g_i = 0`` (only
    possible for the zero direction) gives ``+radius * e_i``.  The answer is a
    sparse :class:`Atom`.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import L1Ball
    >>> L1Ball(2.0)(np.array([0.5, -3.0, 1.0])).to_dense()
    array([0., 2., 0.])
    """

    shape: tuple[int, ...] | None  # __init__ sets a tuple (or None), never an int n

    def __init__(self, radius: float = 1.0, dim: int | None = None) -> None:
        self.radius = check_radius("L1Ball", radius)
        self.shape = dim_shape(dim, "L1Ball")

    def diameter(self, shape: tuple[int, ...] | None = None) -> float:
        """``2 * radius``."""
        return 2.0 * self.radius

    @answers_atoms
    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = check_direction(self, direction)
        i = _argmax_abs(flat)
        sign = -1 if flat[i] > 0 else 1
        return self._unit_vertex(i if sign > 0 else -1 - i, i, sign * self.radius,
                                 direction.shape, ("e", i, sign))

    def extreme_point_among(self, direction: np.ndarray, ids: Any) -> Atom:
        """The best vertex ``+-radius * e_i`` over the coordinates ``ids``; O(len(ids)).

        Candidate ``i`` stands for the pair ``+-radius * e_i`` (one inner
        product ranks both), see :class:`~frankwolfe.lmo.subset.SubsetOracle`.
        """
        flat = check_direction(self, direction)
        ids = checked_ids(self, flat, ids)
        i = int(ids[np.argmax(np.abs(flat[ids]))])
        sign = -1 if flat[i] > 0 else 1
        return self._unit_vertex(i if sign > 0 else -1 - i, i, sign * self.radius,
                                 direction.shape, ("e", i, sign))

    def decompose(self, x: Any) -> ActiveSet:
        """``x`` as ``sum_i (|x_i| / radius) (sign(x_i) radius e_i)`` plus the slack; O(n).

        The atoms are the oracle's vertices ``sign(x_i) * radius * e_i`` (keys
        ``("e", i, sign)``, flat ``i``) for the non-zero ``x_i``.  The slack
        ``1 - ||x||_1 / radius`` (when more than rounding, or ``x = 0``) is split
        evenly between ``+radius e_j`` and ``-radius e_j``, ``j`` the largest
        ``|x_j|`` (0 for ``x = 0``): they cancel, and keep the mass ``x`` leaves
        inside the ball.  The weights are renormalized to sum to one.

        Parameters
        ----------
        x : array_like
            A point of the ball, of the shape the oracle is asked with.

        Returns
        -------
        ActiveSet

        Raises
        ------
        InfeasibleError
            When ``||x||_1`` exceeds ``radius`` beyond the feasibility tolerance.

        Examples
        --------
        >>> import numpy as np
        >>> from frankwolfe import L1Ball
        >>> S = L1Ball(2.0).decompose(np.array([0.5, -1.0, 0.0]))
        >>> S.keys, S.weights
        ([('e', 0, 1), ('e', 1, -1), ('e', 1, 1)], array([0.25 , 0.625, 0.125]))
        """
        a = decomposed_point(self, x)
        flat = a.reshape(-1)
        r = self.radius
        support = np.flatnonzero(flat)
        atoms = [self._signed_vertex(int(i), 1 if flat[i] > 0 else -1, a.shape)
                 for i in support]
        w = np.abs(flat[support]) / r
        slack = 1.0 - float(np.sum(w))
        if slack > SLACK_TOL or not atoms:
            j = int(np.argmax(np.abs(flat))) if support.size else 0
            atoms += [self._signed_vertex(j, 1, a.shape), self._signed_vertex(j, -1, a.shape)]
            w = np.append(w, [max(slack, 0.0) / 2] * 2)
        return ActiveSet(atoms, w / w.sum(), keep_x=False)

    def _signed_vertex(self, i: int, sign: int, shape: tuple[int, ...]) -> Atom:
        """The oracle's atom ``sign * radius * e_i``, as :meth:`extreme_point` builds it."""
        return self._unit_vertex(i if sign > 0 else -1 - i, i, sign * self.radius, shape,
                                 ("e", i, sign))

    def violation(self, x: np.ndarray) -> float:
        """``max(0, ||x||_1 - radius) / radius`` (``inf`` for non-finite ``x``)."""
        n1 = float(np.abs(self._point(x)).sum())
        if not np.isfinite(n1):
            return float("inf")
        return max(0.0, n1 - self.radius) / self.radius

    def _repr_params(self) -> dict[str, Any]:
        return repr_with_dim(self, {"radius": self.radius})


class L2Ball(LMO):
    """The Euclidean ball ``{x : ||x||_2 <= radius}``.

    Vertices: the whole sphere ``||x||_2 = radius`` (a continuous set, so keys
    are the automatic digests of the vector).  LMO: ``-radius * g / ||g||_2``,
    cost O(n).

    Parameters
    ----------
    radius : float, default 1.0
        Positive and finite.
    dim : int, optional
        Dimension (otherwise taken from the direction).

    Notes
    -----
    For the zero direction every point is a minimizer; the answer is then the
    centre ``0`` (key ``("zero",)``).  The direction is scaled by its largest
    entry first, so huge or tiny gradients neither overflow nor underflow.
    A non-finite direction raises ``ValueError``.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import L2Ball
    >>> L2Ball(10.0)(np.array([3.0, -4.0])).to_dense()
    array([-6.,  8.])
    """

    def __init__(self, radius: float = 1.0, dim: int | None = None) -> None:
        self.radius = check_radius("L2Ball", radius)
        self.shape = dim_shape(dim, "L2Ball")

    def diameter(self, shape: tuple[int, ...] | None = None) -> float:
        """``2 * radius``."""
        return 2.0 * self.radius

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = check_direction(self, direction)
        m = _max_abs(self, flat)
        if m == 0.0:
            return _zero_atom(direction.shape)
        u = flat / m
        u *= -self.radius / float(np.sqrt(np.dot(u, u)))
        return Atom(u.reshape(direction.shape), copy=False)

    def violation(self, x: np.ndarray) -> float:
        """``max(0, ||x||_2 - radius) / radius`` (``inf`` for non-finite ``x``)."""
        return max(0.0, _lp_norm(self._point(x), 2.0) - self.radius) / self.radius

    def _repr_params(self) -> dict[str, Any]:
        return repr_with_dim(self, {"radius": self.radius})


class LpBall(LMO):
    """The lp ball ``{x : ||x||_p <= radius}`` for ``1 < p < inf``.

    Vertices: the whole sphere ``||x||_p = radius`` (continuous; automatic
    keys).  LMO, with ``1/p + 1/q = 1``:
    ``s_i = -radius * sign(g_i) |g_i|^(q-1) / ||g||_q^(q-1)``, which attains
    Hölder's bound ``<g, s> = -radius ||g||_q``; cost O(n) (two powers).

    Parameters
    ----------
    p : float
        Exponent, ``1 < p < inf``.  Use :class:`L1Ball` for ``p = 1`` and
        :class:`LinfBall` (or :class:`Box`) for ``p = inf``.
    radius : float, default 1.0
        Positive and finite.
    dim : int, optional
        Dimension (otherwise taken from the direction).

    Attributes
    ----------
    q : float
        The dual exponent ``p / (p - 1)``.

    Notes
    -----
    The direction is scaled by its largest entry before the powers are taken,
    so neither ``p`` close to 1 (huge ``q``) nor large ``p`` overflows.  For
    the zero direction the answer is ``0`` (key ``("zero",)``).  A non-finite
    direction raises ``ValueError``.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import LpBall
    >>> s = LpBall(3.0)(np.array([1.0, -1.0])).to_dense()
    >>> np.round(s, 6), round(float(np.sum(np.abs(s) ** 3)), 12)
    (array([-0.793701,  0.793701]), 1.0)
    """

    shape: tuple[int, ...] | None  # __init__ sets a tuple (or None), never an int n

    def __init__(self, p: float, radius: float = 1.0, dim: int | None = None) -> None:
        p_value = p[()] if isinstance(p, np.ndarray) and p.ndim == 0 else p
        if not is_real(p_value):  # float() read "2" as 2.0 and True as 1.0
            raise ValueError(f"LpBall: `p` must be a number with 1 < p < inf, got {p!r}")
        pf = as_real(p_value)
        if pf == np.inf:
            raise ValueError(
                f"LpBall: `p` must satisfy 1 < p < inf, got {p!r}; "
                "use LinfBall (or Box) for p = inf"
            )
        if pf == 1.0:
            raise ValueError(
                f"LpBall: `p` must satisfy 1 < p < inf, got {p!r}; use L1Ball for p = 1"
            )
        if not (pf > 1.0):  # also catches nan
            raise ValueError(
                f"LpBall: `p` must satisfy 1 < p < inf, got {p!r} (p < 1 is not a norm ball)"
            )
        self.p = pf
        self.q = pf / (pf - 1.0)
        self.radius = check_radius("LpBall", radius)
        self.shape = dim_shape(dim, "LpBall")

    def extreme_point(self, direction: np.ndarray) -> Atom:
        flat = check_direction(self, direction)
        m = _max_abs(self, flat)
        if m == 0.0:
            return _zero_atom(direction.shape)
        u = np.abs(flat) / m  # in [0, 1]: the powers below cannot overflow
        w = u ** (self.q - 1.0)
        total = float(np.dot(w, u))  # sum u^q >= 1 (the max entry is 1)
        w *= -self.radius / total ** (1.0 / self.p)  # ||u||_q^(q-1) = (sum u^q)^(1/p)
        w *= np.sign(flat)
        return Atom(w.reshape(direction.shape), copy=False)

    def diameter(self, shape: tuple[int, ...] | None = None) -> float | None:
        """``2 * radius * n^max(0, 1/2 - 1/p)`` (exact).

        ``||x||_2 <= n^(1/2 - 1/p) ||x||_p`` for ``p >= 2``, attained at
        ``+-radius * n^(-1/p) * (1, ..., 1)``; ``||x||_2 <= ||x||_p`` for
        ``p <= 2``, attained at ``+-radius * e_1``.  ``None`` for ``p > 2`` when
        the dimension is unknown.
        """
        if self.p <= 2.0:
            return 2.0 * self.radius
        shape = self.shape if self.shape is not None else shape
        if shape is None:
            return None
        n = int(np.prod(shape))
        return 2.0 * self.radius * float(n) ** (0.5 - 1.0 / self.p)

    def violation(self, x: np.ndarray) -> float:
        """``max(0, ||x||_p - radius) / radius`` (``inf`` for non-finite ``x``)."""
        return max(0.0, _lp_norm(self._point(x), self.p) - self.radius) / self.radius

    def _repr_params(self) -> dict[str, Any]:
        return repr_with_dim(self, {"p": self.p, "radius": self.radius})
