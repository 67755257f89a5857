"""Pairwise graph energies: checks, scores and the structure tests that choose a method.

Every inference function of this package *maximizes* a score (the structured
SVM's convention, ``decode = argmax_y <w, phi(x, y)>``)::

    score(y) = sum_i unary[i, y_i] + sum_e pairwise[e, y_u, y_v],   e = (u, v) = edges[e]

``unary`` has shape ``(n_nodes, n_states)``; ``pairwise`` is ``(n_edges,
n_states, n_states)`` or one shared ``(n_states, n_states)`` matrix; ``edges``
is an ``(n_edges, 2)`` integer array, row ``e`` read as ``(u, v)`` with
``pairwise[e, y_u, y_v]``.  An upper bound of a relaxation is therefore
``>=`` the best score, and the score of any labelling ``<=`` it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from frankwolfe._numbers import real_array
from frankwolfe.errors import ShapeError

__all__ = ["check_energy", "check_edges", "labelling_score", "is_forest",
           "is_submodular_binary"]


def check_edges(edges: Any, n_nodes: int, where: str) -> np.ndarray:
    """``edges`` as a C-contiguous ``(n_edges, 2)`` int64 array, checked.

    Raises
    ------
    ShapeError
        When ``edges`` is not ``(n_edges, 2)`` integers.
    ValueError
        Naming the first edge with a node outside ``[0, n_nodes)`` or a self loop.
    """
    e = np.asarray(edges)
    if e.size == 0 and e.shape in ((0,), (0, 2)):  # [] or (0, 2): no edges
        return np.zeros((0, 2), dtype=np.int64)
    if e.size == 0:
        raise ShapeError(f"{where}: `edges` must have shape (n_edges, 2) (or be empty, []), "
                         f"got shape {e.shape}")
    if e.ndim != 2 or e.shape[1] != 2 or e.dtype.kind not in "iu":
        raise ShapeError(f"{where}: `edges` must be an integer array of shape (n_edges, 2), "
                         f"got shape {e.shape} and dtype {e.dtype}")
    e = np.ascontiguousarray(e, dtype=np.int64)
    bad = (e < 0) | (e >= n_nodes)
    if bad.any():
        k = int(np.argmax(bad.any(axis=1)))
        raise ValueError(f"{where}: edge {k} = {e[k].tolist()} has a node outside "
                         f"[0, {n_nodes}) (the graph has {n_nodes} nodes)")
    loops = e[:, 0] == e[:, 1]
    if loops.any():
        k = int(np.argmax(loops))
        raise ValueError(f"{where}: edge {k} = {e[k].tolist()} is a self loop; a node's own "
                         "terms belong in its unary potentials")
    return e


def check_energy(unary: Any, pairwise: Any, edges: Any, where: str = "inference"
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Checked ``(unary, pairwise, edges)``: float64 ``(n, K)``, float64 ``(E, K, K)``
    (a shared matrix repeated) and int64 ``(E, 2)``, all C-contiguous.

    Raises
    ------
    ShapeError
        Wrong shapes (named).
    ValueError
        Non-finite potentials, edges out of range, self loops (named).
    """
    # real_array: a complex potential lost its imaginary part with a mere warning
    u = np.ascontiguousarray(real_array(unary, where, "unary"))
    if u.ndim != 2 or u.shape[0] < 1 or u.shape[1] < 1:
        raise ShapeError(f"{where}: `unary` must have shape (n_nodes, n_states) with both >= 1, "
                         f"got {u.shape}")
    n, K = u.shape
    e = check_edges(edges, n, where)
    p = real_array(pairwise, where, "pairwise")
    if p.shape == (K, K):
        p = np.broadcast_to(p, (e.shape[0], K, K))
    if p.shape != (e.shape[0], K, K):
        raise ShapeError(f"{where}: `pairwise` must have shape ({K}, {K}) (shared) or "
                         f"({e.shape[0]}, {K}, {K}) (one per edge), got {p.shape}")
    p = np.ascontiguousarray(p)
    for name, a in (("unary", u), ("pairwise", p)):
        bad = ~np.isfinite(a)
        if bad.any():
            pos = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), a.shape))
            raise ValueError(f"{where}: `{name}` holds {a[pos]} at position {pos}; potentials "
                             "must be finite")
    return u, p, e


def labelling_score(unary: np.ndarray, pairwise: np.ndarray, edges: np.ndarray,
                    y: Any) -> float:
    """``sum_i unary[i, y_i] + sum_e pairwise[e, y_u, y_v]`` of the labelling ``y``
    (checked arrays as :func:`check_energy` returns them); O(n + E)."""
    y = np.asarray(y, dtype=np.int64)
    s = float(unary[np.arange(unary.shape[0]), y].sum())
    if edges.shape[0]:
        s += float(pairwise[np.arange(edges.shape[0]), y[edges[:, 0]], y[edges[:, 1]]].sum())
    return s


def is_forest(n_nodes: int, edges: np.ndarray) -> bool:
    """Whether the graph has no cycle (a repeated pair, in either order, is a cycle:
    such graphs go to an inference that is exact on them); union-find, O(E α)."""
    parent = list(range(n_nodes))

    def root(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for u, v in edges.tolist():
        ru, rv = root(u), root(v)
        if ru == rv:
            return False
        parent[ru] = rv
    return True


def is_submodular_binary(pairwise: np.ndarray, tol: float = 0.0) -> bool:
    """Whether a 2-state score is submodular as an energy (``-score``), i.e. every edge
    has ``s(0,0) + s(1,1) >= s(0,1) + s(1,0) - tol`` (it favours agreement): the class
    that one minimum cut solves exactly."""
    if pairwise.ndim != 3 or pairwise.shape[1:] != (2, 2):
        return False
    p = pairwise
    return bool(np.all(p[:, 0, 0] + p[:, 1, 1] >= p[:, 0, 1] + p[:, 1, 0] - tol))
