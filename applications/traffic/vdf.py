"""Volume-delay functions: the link cost ``t(x)``, its derivative and its integral.

Every link has one kind (``Network(vdf=...)``, default BPR) and uses the network's two
parameter columns ``b`` (alpha) and ``power`` (beta); ``t0`` is the free-flow time,
``v = x / capacity`` and the flow-independent cost (tolls, lengths) is added to all:

=========== ================================================================ ==========
kind        ``t(x)``                                                          parameters
=========== ================================================================ ==========
``bpr``     ``t0 (1 + alpha v^beta)``                                         ``alpha, beta >= 0``
``bpr2``    BPR for ``v <= 1``, ``t0 (1 + alpha v^(2 beta))`` above           ``alpha, beta >= 0``
``conical`` ``t0 (2 + sqrt(alpha^2 (1-v)^2 + g^2) - alpha (1-v) - g)``,       ``alpha > 1``
            ``g = (2 alpha - 1) / (2 alpha - 2)`` (Spiess 1990)
``inrets``  ``t0 (1.1 - alpha v) / (1.1 - v)`` for ``v <= 1``,                ``0 <= alpha < 1``
            ``t0 (1.1 - alpha) / 0.1 v^2`` above
``akcelik`` ``t0 + T/4 ((v-1) + sqrt((v-1)^2 + 8 J v / (capacity T)))``      ``J = alpha > 0``,
            (Akcelik 1991; ``T`` the period, ``J`` the delay parameter)       ``T = beta > 0``
=========== ================================================================ ==========

All are non-decreasing in ``x``, so the Beckmann objective (the sum of their
integrals) is convex.  One numba kernel, :func:`_coord`, answers integral, cost and
derivative of a link: the Beckmann objective's values and gradients loop over it, and
the core's compiled line search (:func:`frankwolfe.compiled.separable_objective`) calls
it per coordinate.  Flows below 0 (rounding residue) see the cost at 0.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit

from frankwolfe.errors import FrankWolfeError

__all__ = ["VDF_KINDS", "VolumeDelayError", "LinkCostData", "vdf_codes", "link_cost_data",
           "link_costs"]

#: kind name -> code of the per-link array ``Network.vdf``
VDF_KINDS: dict[str, int] = {"bpr": 0, "bpr2": 1, "conical": 2, "inrets": 3, "akcelik": 4}
_BPR, _BPR2, _CONICAL, _INRETS, _AKCELIK = range(5)


class VolumeDelayError(FrankWolfeError, ValueError):
    """A volume-delay function that does not exist, or parameters it cannot take."""


class LinkCostData(NamedTuple):
    """The per-link arrays :func:`_coord` reads: ``kind`` codes, ``t0``, ``alpha``,
    ``beta``, ``cap``, ``fixed`` (BPR and BPR2 links: ``alpha = t0 * b``, and a
    constant BPR term folded into ``fixed``)."""

    kind: np.ndarray
    t0: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    cap: np.ndarray
    fixed: np.ndarray


@njit(cache=True, nogil=True)
def _coord(data, a, xa, want_value):  # pragma: no cover - compiled
    """``(int_0^xa t_a, t_a(xa), t_a'(xa))`` of link ``a`` (the integral only with
    ``want_value``): the per-coordinate kernel of the Beckmann objective."""
    kind = data.kind[a]
    alpha = data.alpha[a]
    cap = data.cap[a]
    if kind == _BPR or kind == _BPR2:
        base = data.t0[a] + data.fixed[a]
        if alpha == 0.0:
            return base * xa, base, 0.0
        x = xa if xa > 0.0 else 0.0
        p = data.beta[a]
        r = x / cap
        if kind == _BPR2 and r > 1.0:
            q = 2.0 * p
            rq = r ** q
            f = base * xa + alpha * cap * (1.0 / (p + 1.0) + (rq * r - 1.0) / (q + 1.0)) \
                if want_value else 0.0
            return f, base + alpha * rq, alpha * q * r ** (q - 1.0) / cap
        rp = r ** p
        if p == 1.0:
            d2 = alpha / cap
        elif x > 0.0:
            d2 = alpha * p * r ** (p - 1.0) / cap
        else:  # the curvature only guides Newton steps: 0 where it is infinite
            d2 = 0.0
        f = base * xa + alpha * cap * rp * r / (p + 1.0) if want_value else 0.0
        return f, base + alpha * rp, d2
    t0 = data.t0[a]
    fixed = data.fixed[a]
    v = xa / cap if xa > 0.0 else 0.0
    if kind == _CONICAL:
        g = (2.0 * alpha - 1.0) / (2.0 * alpha - 2.0)
        u = 1.0 - v
        s = np.sqrt(alpha * alpha * u * u + g * g)
        t = t0 * (2.0 + s - alpha * u - g) + fixed
        d2 = t0 * (alpha - alpha * alpha * u / s) / cap
        f = 0.0
        if want_value and xa > 0.0:
            s1 = np.sqrt(alpha * alpha + g * g)
            h1 = 0.5 * s1 + g * g / (2.0 * alpha) * np.arcsinh(alpha / g)
            hu = 0.5 * u * s + g * g / (2.0 * alpha) * np.arcsinh(alpha * u / g)
            f = fixed * xa + t0 * ((2.0 - g) * xa - alpha * cap * (v - 0.5 * v * v)
                                   + cap * (h1 - hu))
    elif kind == _INRETS:
        c = 1.1 * (1.0 - alpha)
        if v <= 1.0:
            t = t0 * (1.1 - alpha * v) / (1.1 - v) + fixed
            d2 = t0 * c / ((1.1 - v) * (1.1 - v)) / cap
            f = fixed * xa + t0 * cap * (alpha * v - c * np.log((1.1 - v) / 1.1)) \
                if want_value and xa > 0.0 else 0.0
        else:
            k = (1.1 - alpha) / 0.1
            t = t0 * k * v * v + fixed
            d2 = t0 * k * 2.0 * v / cap
            f = fixed * xa + t0 * cap * (alpha - c * np.log(0.1 / 1.1)
                                         + k * (v * v * v - 1.0) / 3.0) if want_value else 0.0
    else:  # Akcelik: alpha = J, beta = T
        period = data.beta[a]
        k = 8.0 * alpha / (cap * period)
        w = v - 1.0
        s = np.sqrt(w * w + k * v)
        t = t0 + fixed + 0.25 * period * (w + s)
        d2 = 0.25 * period / cap * (1.0 + (w + 0.5 * k) / s)
        f = 0.0
        if want_value and xa > 0.0:
            # int sqrt(y^2 + D) dy, y = v + (k - 2) / 2: (y S + D ln(y + S)) / 2
            y0 = 0.5 * (k - 2.0)
            dd = 1.0 - y0 * y0
            y = v + y0
            prim = 0.5 * (y * s + dd * np.log(y + s))
            prim0 = 0.5 * (y0 * 1.0 + dd * np.log(y0 + 1.0))
            f = (t0 + fixed) * xa + 0.25 * period * cap * (0.5 * v * v - v + prim - prim0)
    if not xa > 0.0:
        f = t * xa  # below 0: the cost at 0, linearly
    return f, t, d2


@njit(cache=True, nogil=True)
def _costs(data, x, want_value):  # pragma: no cover - compiled
    """``(sum_a int t_a, t(x))`` over all links (the value only with ``want_value``)."""
    g = np.empty(x.size)
    f = 0.0
    for a in range(x.size):
        fa, g[a], _ = _coord(data, a, x[a], want_value)
        f += fa
    return f, g


@njit(cache=True, nogil=True)
def _costs_at(data, x, idx):  # pragma: no cover - compiled
    """``t(x)`` at the links ``idx``."""
    g = np.empty(idx.size)
    no = idx.size < 0  # False, not a literal: one compilation of _coord serves
    for j in range(idx.size):
        g[j] = _coord(data, idx[j], x[idx[j]], no)[1]
    return g


@njit(cache=True, nogil=True)
def _curvatures(data, x):  # pragma: no cover - compiled
    h = np.empty(x.size)
    no = x.size < 0
    for a in range(x.size):
        h[a] = _coord(data, a, x[a], no)[2]
    return h


def vdf_codes(vdf: Any, n_links: int) -> np.ndarray:
    """The per-link codes of ``vdf``: ``None`` (BPR everywhere), a kind name (every link)
    or one name or code per link; :class:`VolumeDelayError` names the first link of an
    unknown kind."""
    if vdf is None:
        return np.zeros(n_links, dtype=np.int64)
    if isinstance(vdf, str):
        if vdf.lower() not in VDF_KINDS:
            raise VolumeDelayError(f"Network: `vdf` must be one of {sorted(VDF_KINDS)}, got "
                                   f"{vdf!r}")
        return np.full(n_links, VDF_KINDS[vdf.lower()], dtype=np.int64)
    arr = np.asarray(vdf)
    if arr.shape != (n_links,):
        raise VolumeDelayError(f"Network: `vdf` must be a kind name or one per link "
                               f"({n_links},), got shape {arr.shape}")
    if arr.dtype.kind in "iu":
        bad = np.flatnonzero((arr < 0) | (arr >= len(VDF_KINDS)))
        if bad.size:
            raise VolumeDelayError(f"Network: `vdf` of link {int(bad[0])} is code "
                                   f"{int(arr[bad[0]])}; codes are 0..{len(VDF_KINDS) - 1} "
                                   f"({', '.join(VDF_KINDS)})")
        return arr.astype(np.int64)
    out = np.empty(n_links, dtype=np.int64)
    for i, name in enumerate(arr.tolist()):
        code = VDF_KINDS.get(str(name).lower())
        if code is None:
            raise VolumeDelayError(f"Network: `vdf` of link {i} is {name!r}; choose one of "
                                   f"{sorted(VDF_KINDS)}")
        out[i] = code
    return out


def check_parameters(codes: np.ndarray, b: np.ndarray, power: np.ndarray,
                     capacity: np.ndarray) -> None:
    """:class:`VolumeDelayError` naming the first link whose parameters its kind cannot
    take (the BPR ones are checked by the network: ``b, power >= 0``)."""
    rules = ((_CONICAL, "conical", b > 1.0, "`b` (alpha) must be > 1"),
             (_INRETS, "inrets", (b >= 0.0) & (b < 1.0), "`b` (alpha) must lie in [0, 1)"),
             (_AKCELIK, "akcelik", (b > 0.0) & (power > 0.0),
              "`b` (J) and `power` (T) must be > 0"))
    for code, name, ok, what in rules:
        bad = np.flatnonzero((codes == code) & ~ok)
        if bad.size:
            i = int(bad[0])
            raise VolumeDelayError(f"Network: link {i} has volume-delay function {name!r}: "
                                   f"{what}, got b={float(b[i])!r}, power={float(power[i])!r}")
    bad = np.flatnonzero((codes >= _CONICAL) & ~(capacity > 0.0))
    if bad.size:
        i = int(bad[0])
        raise VolumeDelayError(f"Network: link {i} has a flow-dependent volume-delay "
                               f"function but capacity {float(capacity[i])!r}; it must be positive")


def link_cost_data(network: Any) -> LinkCostData:
    """The kernel's arrays of a :class:`~.network.Network`."""
    t0 = np.ascontiguousarray(network.free_flow_time, dtype=float)
    codes = np.ascontiguousarray(network.vdf, dtype=np.int64)
    b, p = network.b, network.power
    bpr = codes <= _BPR2
    # BPR: alpha = t0 b; power 0 makes the term a constant, folded into the fixed cost
    alpha = np.where(bpr, np.where(p > 0, t0 * b, 0.0), b)
    fixed = network.fixed_cost + np.where(bpr & ~(p > 0), t0 * b, 0.0)
    return LinkCostData(codes, t0, np.ascontiguousarray(alpha, dtype=float),
                        np.ascontiguousarray(p, dtype=float),
                        np.ascontiguousarray(network.capacity, dtype=float),
                        np.ascontiguousarray(fixed, dtype=float))


def link_costs(data: LinkCostData, flow: np.ndarray) -> np.ndarray:
    """``t(x)`` of every link at ``flow`` (contiguous float array)."""
    return _costs(data, flow, False)[1]
