"""Oracles over a subset of the vertices (the randomized away-step capability).

Randomized away-step Frank-Wolfe (Kerdreux, Pedregosa and d'Aspremont,
AISTATS 2018) calls the oracle on a random sample of the vertices instead of
all of them.  A domain offers that when its vertices come in finitely many
indexable *candidates*: the coordinates ``i`` of the simplex (vertex
``radius * e_i``) or of the l1 ball (the better of ``+-radius * e_i``, one
inner product decides both).  :class:`SubsetOracle` is the mixin such LMOs
inherit; its three methods are what the randomized method calls.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..atoms import Atom
from ..errors import ShapeError

__all__ = ["SubsetOracle", "supports_subsets"]


class SubsetOracle:
    """Mixin: the LMO can minimize over a given subset of its vertex candidates.

    A *candidate* is an index in ``range(n_candidates(shape))`` standing for
    one vertex or for a few vertices that a single inner product ranks (the
    pair ``+-e_i`` of the l1 ball).  Implementations define
    :meth:`n_candidates`, :meth:`candidate_ids` and :meth:`extreme_point_among`.
    """

    def n_candidates(self, shape: tuple[int, ...]) -> int:
        """Number of candidates for points of ``shape``; a full oracle call costs this many
        inner products ``<g, a>``."""
        return int(np.prod(shape))

    def candidate_ids(self, atoms: Iterable[Atom]) -> np.ndarray:
        """Candidate indices of the given vertices (vertices outside every candidate, such
        as the origin of the unit simplex, are skipped)."""
        ids = [a.key[1] for a in atoms
               if isinstance(a.key, tuple) and len(a.key) >= 2 and a.key[0] == "e"]
        return np.asarray(ids, dtype=np.int64)

    def extreme_point_among(self, direction: np.ndarray, ids: np.ndarray) -> Atom:
        """``argmin <direction, a>`` over the vertices of the candidates ``ids`` (non-empty).

        Costs ``len(ids)`` inner products, O(len(ids)).
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement extreme_point_among")


def supports_subsets(lmo: Any) -> bool:
    """Whether ``lmo`` implements the :class:`SubsetOracle` capability."""
    return isinstance(lmo, SubsetOracle)


def checked_ids(lmo: Any, flat: np.ndarray, ids: Any) -> np.ndarray:
    """``ids`` as a non-empty int64 array of valid candidate indices for ``flat``."""
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    if ids.size == 0:
        raise ValueError(f"{lmo!r}.extreme_point_among: `ids` is empty; give at least one candidate")
    if ids.min() < 0 or ids.max() >= flat.size:
        raise ShapeError(
            f"{lmo!r}.extreme_point_among: `ids` must lie in [0, {flat.size}), got values in "
            f"[{int(ids.min())}, {int(ids.max())}]"
        )
    return ids
