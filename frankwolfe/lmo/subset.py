"""Oracles over a subset of the vertices (the randomized away-step capability).

Randomized away-step Frank-Wolfe (Kerdreux, Pedregosa and d'Aspremont,
AISTATS 2018) calls the oracle on a random sample of the vertices instead of
all of them.  A domain offers that when its vertices come in finitely many
indexable *candidates*: the coordinates ``i`` of the simplex (vertex
``radius * e_i``) or of the l1 ball (the better of ``+-radius * e_i``, one
inner product decides both).  Domains with exponentially many vertices (the
box and its special cases, the k-sparse polytope) have *sampled* candidates
instead: a batch of random vertices in a compact array form (bit patterns,
supports with signs), drawn uniformly.  :class:`SubsetOracle` is the mixin
such LMOs inherit; :meth:`~SubsetOracle.sample_candidates`,
:meth:`~SubsetOracle.extreme_point_among` and the cost hooks are what the
randomized method calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..atoms import Atom
from ..errors import ShapeError

__all__ = ["SubsetOracle", "supports_subsets", "sample_distinct"]


class SubsetOracle:
    """Mixin: the LMO can minimize over a given subset of its vertex candidates.

    By default a *candidate* is an index in ``range(n_candidates(shape))``
    standing for one vertex or for a few vertices that a single inner product
    ranks (the pair ``+-e_i`` of the l1 ball); such implementations define
    :meth:`n_candidates`, :meth:`candidate_ids` and :meth:`extreme_point_among`.
    Domains whose vertices are too many to index override
    :meth:`sample_candidates` (returning their own batch format),
    :meth:`count_candidates` and the costs :meth:`candidate_cost` and
    :meth:`oracle_cost`.
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

    def sample_candidates(self, shape: tuple[int, ...], size: int, rng: np.random.Generator,
                          active: Sequence[Atom]) -> Any:
        """``size`` candidates drawn uniformly among those not in ``active`` (fewer when
        not enough remain), in the format :meth:`extreme_point_among` takes."""
        n = self.n_candidates(shape)
        active_ids = self.candidate_ids(active)
        draw = rng.choice(n, size=min(n, size + active_ids.size), replace=False, shuffle=False)
        if active_ids.size:
            draw = draw[~np.isin(draw, active_ids)]
        return draw[:size]

    def count_candidates(self, candidates: Any) -> int:
        """Number of candidates in a batch from :meth:`sample_candidates`."""
        return len(candidates)

    def candidate_cost(self, shape: tuple[int, ...]) -> int:
        """Coordinates read to score one candidate (1 for an index candidate)."""
        return 1

    def oracle_cost(self, shape: tuple[int, ...]) -> int:
        """Coordinates read by one full oracle call (``n``)."""
        return int(np.prod(shape))

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
        raise ValueError(
            f"{lmo!r}.extreme_point_among: `ids` is empty; give at least one candidate")
    if ids.min() < 0 or ids.max() >= flat.size:
        raise ShapeError(
            f"{lmo!r}.extreme_point_among: `ids` must lie in [0, {flat.size}), got values in "
            f"[{int(ids.min())}, {int(ids.max())}]"
        )
    return ids


def sample_distinct(draw: Any, size: int, taken: list[bytes], limit: int) -> Any:
    """Up to ``size`` distinct uniform vertices whose codes are not in ``taken``.

    ``draw(m)`` returns ``m`` uniform vertices as ``(payload, codes)``: the
    payload an array (or a tuple of arrays) with one row per vertex, ``codes``
    a 2-d array identifying them (the key's bytes).  Rejection of repeats and
    of taken vertices keeps the draw uniform over the remaining vertices.
    ``limit`` is how many remain, so a tiny domain cannot loop forever.
    """
    want = int(min(size, limit))
    payload, codes = draw(want + len(taken) + max(4, want // 8))
    rows = _row_bytes(codes)
    bad = _row_bytes_from(taken, rows.dtype)
    for _ in range(50):
        _, first = np.unique(rows, return_index=True)
        keep = np.zeros(rows.size, dtype=bool)
        keep[first] = True
        if bad.size:
            keep &= ~np.isin(rows, bad)
        if np.count_nonzero(keep) >= want:
            break
        more, more_codes = draw(max(4, want))
        payload = (tuple(np.concatenate([a, b]) for a, b in zip(payload, more))
                   if isinstance(payload, tuple) else np.concatenate([payload, more]))
        rows = np.concatenate([rows, _row_bytes(more_codes)])
    sel = np.sort(np.flatnonzero(keep))[:want]
    return tuple(a[sel] for a in payload) if isinstance(payload, tuple) else payload[sel]


def _row_bytes(a: np.ndarray) -> np.ndarray:
    """The rows of a 2-d array as one opaque (void) value each, for set operations."""
    a = np.ascontiguousarray(a)
    return a.view(np.dtype((np.void, a.dtype.itemsize * a.shape[1]))).ravel()


def _row_bytes_from(keys: list[bytes], dtype: np.dtype) -> np.ndarray:
    """Byte strings (of the same length as ``dtype``) as a void array."""
    keys = [k for k in keys if len(k) == dtype.itemsize]
    return np.frombuffer(b"".join(keys), dtype=dtype) if keys else np.zeros(0, dtype=dtype)
