"""Bipartite matching model (word alignment, graph matching)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from frankwolfe._numbers import check_flag, check_real, check_whole
from frankwolfe.errors import ShapeError

from .base import SparseVector, StructuredModel

__all__ = ["MatchingModel"]


class MatchingModel(StructuredModel):
    """Structured model over bipartite matchings between ``n_left`` and ``n_right`` nodes.

    ``x`` holds one feature vector per candidate edge, shape
    ``(n_left, n_right, D)``; a matching ``y`` is an integer array of length
    ``n_left`` with ``y[i]`` the right node matched to left node ``i`` or
    ``-1`` (unmatched), no right node used twice.  ``phi(x, y) = sum_i
    x[i, y[i]]`` over the matched edges, so ``d = D``.

    Loss: the asymmetric Hamming loss of Taskar, Lacoste-Julien & Jordan
    (2006) over edges, ``L = recall_cost * #(true edges missed) +
    precision_cost * #(predicted edges not true)``; unequal costs trade
    precision for recall.  The loss is linear in the edge indicators, so
    loss-augmented decoding is a linear assignment problem, solved by
    ``scipy.optimize.linear_sum_assignment`` in O(n^3).

    Parameters
    ----------
    n_features : int
        Length ``D`` of each edge's feature vector.
    precision_cost : float, default 1.0
        Cost of a predicted edge that is not in the true matching (false positive).
    recall_cost : float, default 1.0
        Cost of a true edge that is not predicted (false negative).
    perfect : bool, default False
        If True, every left node must be matched (``n_left <= n_right``; a
        permutation when square), as in graph matching of CMU house frames.
        If False, any partial matching is allowed, as in word alignment.
    """

    def __init__(self, n_features: int, precision_cost: float = 1.0, recall_cost: float = 1.0,
                 perfect: bool = False) -> None:
        check_whole(n_features, "n_features", 1, "MatchingModel")
        for name, c in (("precision_cost", precision_cost), ("recall_cost", recall_cost)):
            check_real(c, name, "MatchingModel", low=0)
        self.n_features = int(n_features)
        self.precision_cost = float(precision_cost)
        self.recall_cost = float(recall_cost)
        self.perfect = check_flag(perfect, "perfect")
        self.size_joint_feature = self.n_features

    def _check_x(self, x: Any) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 3 or x.shape[2] != self.n_features or x.shape[0] < 1 or x.shape[1] < 1:
            raise ShapeError(
                f"MatchingModel: `x` must have shape (n_left, n_right, {self.n_features}), "
                f"got {x.shape}"
            )
        if self.perfect and x.shape[0] > x.shape[1]:
            raise ShapeError(
                f"MatchingModel(perfect=True): `x` needs n_left <= n_right, got shape {x.shape}"
            )
        return x

    def _check_y(self, y: Any, n_left: int, n_right: int, name: str) -> np.ndarray:
        y = np.asarray(y)
        if y.shape != (n_left,) or y.dtype.kind not in "iu":
            raise ShapeError(
                f"MatchingModel: `{name}` must be an integer array of shape ({n_left},), "
                f"got shape {y.shape} and dtype {y.dtype}"
            )
        y = y.astype(np.int64)
        lo = 0 if self.perfect else -1
        matched = y[y >= 0]
        if y.min() < lo or y.max() >= n_right or np.unique(matched).size != matched.size:
            raise ValueError(
                f"MatchingModel: `{name}` = {y.tolist()} is not a "
                f"{'perfect' if self.perfect else 'partial'} matching: entries must be distinct "
                f"right nodes in [0, {n_right}){'' if self.perfect else ' or -1 (unmatched)'}"
            )
        return y

    def _check_matching(self, y: np.ndarray, name: str) -> np.ndarray:
        """``y`` (1-D) as int64, or an error naming it unless it is a matching: integer
        entries, distinct right nodes ``>= 0`` or ``-1`` (unmatched, not ``perfect``)."""
        if y.dtype.kind not in "iu":
            raise ShapeError(f"MatchingModel.loss: `{name}` must be an integer array, got dtype "
                             f"{y.dtype} ({y.tolist()!r:.80})")
        y = y.astype(np.int64)
        lo = 0 if self.perfect else -1
        matched = y[y >= 0]
        if (y.size and y.min() < lo) or np.unique(matched).size != matched.size:
            raise ValueError(
                f"MatchingModel.loss: `{name}` = {y.tolist()} is not a "
                f"{'perfect' if self.perfect else 'partial'} matching: entries must be distinct "
                f"right nodes >= 0{'' if self.perfect else ' or -1 (unmatched)'}")
        return y

    def check_true_labels(self, X: Sequence[Any], Y: Sequence[Any], where: str) -> None:
        """A ``ValueError`` naming ``where`` and the example unless every ``Y[i]`` is a
        matching of the nodes of ``X[i]`` (the loss alone cannot see an entry beyond the
        right nodes: it scored ``[7, 8, 9]`` on 3 right nodes as a number)."""
        for i, (x, y) in enumerate(zip(X, Y)):
            shape = np.shape(x)
            if len(shape) != 3:
                continue  # _check_x names a bad x where it is used
            try:
                self._check_y(y, shape[0], shape[1], f"Y[{i}]")
            except (ShapeError, ValueError) as err:
                raise type(err)(f"{where}: {err}") from None

    def joint_feature(self, x: Any, y: Any) -> np.ndarray:
        """Sum of the feature vectors of the matched edges."""
        x = self._check_x(x)
        y = self._check_y(y, x.shape[0], x.shape[1], "y")
        rows = np.flatnonzero(y >= 0)
        return x[rows, y[rows]].sum(axis=0)

    def loss(self, y_true: Any, y: Any) -> float:
        """``recall_cost * #missed true edges + precision_cost * #wrong predicted edges``."""
        y_true = np.asarray(y_true)
        y = np.asarray(y)
        if y.shape != y_true.shape or y_true.ndim != 1:
            raise ShapeError(
                f"MatchingModel.loss: `y` must have the shape of `y_true` {y_true.shape}, "
                f"got {y.shape}"
            )
        y_true = self._check_matching(y_true, "y_true")
        y = self._check_matching(y, "y")
        wrong = y != y_true
        return (self.recall_cost * np.count_nonzero(wrong & (y_true >= 0))
                + self.precision_cost * np.count_nonzero(wrong & (y >= 0)))

    def _assign(self, s: np.ndarray) -> np.ndarray:
        # scipy.optimize is slow to import: importing the models should not pay it
        # (benchmarks/README.md, "Measurements behind code choices")
        from scipy.optimize import linear_sum_assignment

        y = np.full(s.shape[0], -1, dtype=np.int64)
        if self.perfect:
            rows, cols = linear_sum_assignment(s, maximize=True)
            y[rows] = cols
            return y
        # A best partial matching never uses an edge of score <= 0, and a full
        # assignment on max(s, 0) with those edges dropped is a best partial one.
        rows, cols = linear_sum_assignment(np.maximum(s, 0.0), maximize=True)
        keep = s[rows, cols] > 0
        y[rows[keep]] = cols[keep]
        return y

    def edge_scores(self, x: Any, w: Any) -> np.ndarray:
        """``<w, x[i, j]>`` for every edge, shape ``(n_left, n_right)``."""
        return self._check_x(x) @ self._check_w(w)

    def decode(self, x: Any, w: np.ndarray) -> np.ndarray:
        """Maximum-score matching."""
        return self._assign(self.edge_scores(x, w))

    def loss_augmented_decode(self, x: Any, y_true: Any, w: np.ndarray) -> np.ndarray:
        """``argmax_y L(y_true, y) + <w, phi(x, y)>``: a linear assignment with edge scores
        ``+precision_cost`` off the true matching and ``-recall_cost`` on it (the loss
        minus its constant ``recall_cost * #true edges``)."""
        s = self.edge_scores(x, w)
        y_true = self._check_y(y_true, s.shape[0], s.shape[1], "y_true")
        s += self.precision_cost
        rows = np.flatnonzero(y_true >= 0)
        s[rows, y_true[rows]] -= self.precision_cost + self.recall_cost
        return self._assign(s)

    def psi(self, x: Any, y_true: Any, y: Any) -> SparseVector:
        x = self._check_x(x)
        n, m = x.shape[:2]
        a = self._check_y(y_true, n, m, "y_true")
        b = self._check_y(y, n, m, "y")
        ra, rb = np.flatnonzero((a >= 0) & (a != b)), np.flatnonzero((b >= 0) & (a != b))
        diff = x[ra, a[ra]].sum(axis=0) - x[rb, b[rb]].sum(axis=0)
        idx = np.flatnonzero(diff)
        return idx, diff[idx]

    def marginals(self, x: Any, w: np.ndarray, y_true: Any = None) -> Any:
        """Not available: the partition function over matchings is a permanent (#P-hard),
        so the expectation-based solvers (``online_eg``, ``dual_extragradient``) do not
        apply; train with the max oracle (``solver="bcfw"``, ``"ssg"``, ...)."""
        raise NotImplementedError(
            "MatchingModel has no marginals: summing over matchings is a permanent (#P-hard); "
            "use a solver that needs only the max oracle (solver='bcfw', 'bcfw_pairwise', "
            "'fw', 'ssg' or 'cutting_plane')")

    def _repr_params(self) -> dict[str, Any]:
        return {"n_features": self.n_features, "precision_cost": self.precision_cost,
                "recall_cost": self.recall_cost, "perfect": self.perfect}
