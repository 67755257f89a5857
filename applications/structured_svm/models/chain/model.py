"""Chain model for sequence labelling (OCR words, CoNLL chunking)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from frankwolfe._numbers import check_whole, is_real, is_whole
from frankwolfe.errors import ShapeError

from ..base import SparseVector, StructuredModel
from . import viterbi as kern
from .batch import ChainBatchOracles
from .data import chain_data
from .dual_kernels import chain_blocks, chain_state
from .forward_backward import Marginals, chain_marginals
from .rounds import chain_rounds
from .supports import chain_feature_supports

__all__ = ["ChainModel"]


class ChainModel(StructuredModel):
    """Linear-chain model with start/end label biases and K x K transitions.

    Labellings are integer arrays ``y`` of length ``L`` with values in
    ``[0, n_states)``.  The joint feature map is the one of BCFWstruct /
    gapBCFW (``chain_featuremap.m``, ``chain_conll_featuremap.m``), with
    ``K = n_states`` and ``F`` unary features, so ``d = K*F + 2K + K^2``:

    ============  =====  ====================================================
    block         size   content
    ============  =====  ====================================================
    unary         K*F    slice ``[y*F, (y+1)*F)`` sums the features of the
                         positions labelled ``y`` (label-major; equal to
                         MATLAB's column-major ``unit(:)`` of an F x K array)
    start bias    K      ``K*F + y_1`` = 1
    end bias      K      ``K*F + K + y_L`` = 1
    transitions   K^2    ``K*F + 2K + y_t + K*y_{t+1}`` += 1
    ============  =====  ====================================================

    The loss is the normalized Hamming loss ``mean(y != y_true)``.  Both
    decoders are Viterbi (max-sum) in numba: O(L K^2) plus the unary scores,
    O(L K F) for dense features or O(L K m) for ``m`` attribute ids per position.

    Parameters
    ----------
    n_states : int
        Number of labels ``K``.
    n_features : int or sequence of int
        An ``int`` ``F``: sequences are dense float arrays ``x`` of shape
        ``(L, F)`` (OCR: 128 pixels + a constant 1, F = 129, d = 4082).
        A sequence of per-template dictionary sizes ``(s_0, ..., s_{m-1})``:
        sequences are integer arrays of shape ``(L, m)`` whose column ``j``
        holds an attribute id in ``1..s_j`` or 0 for "absent", the unary
        feature being ``offsets[j] + id - 1`` with
        ``offsets = cumsum([0, s_0, ..., s_{m-2}])`` (gapBCFW's
        ``featureStart(j) + id - 1``) and ``F = sum(s_j)``.  CoNLL-2000: a
        constant column of size 1 and the 19 templates, F = 74659,
        d = 1,643,026.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe.applications.structured_svm import ChainModel
    >>> model = ChainModel(n_states=3, n_features=2)
    >>> model.size_joint_feature
    21
    >>> x = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> model.joint_feature(x, np.array([0, 2]))[:6]
    array([1., 0., 0., 0., 0., 1.])
    """

    def __init__(self, n_states: int, n_features: int | Sequence[int]) -> None:
        self.n_states = check_whole(n_states, "n_states", 1, "ChainModel")
        if np.ndim(n_features) == 0:
            scalar: Any = n_features  # a number (np.ndim says so), however it is typed
            if not is_whole(scalar, 1):
                message = (f"ChainModel: `n_features` must be a positive integer or a "
                           f"sequence of template sizes, got {n_features!r}")
                if not is_real(scalar):  # text, None, a bool: as check_whole
                    raise TypeError(f"{message} ({type(scalar).__name__})")
                raise ValueError(message)
            self.n_features: int | tuple[int, ...] = int(scalar)
            self.template_sizes: np.ndarray | None = None
            self.offsets: np.ndarray | None = None
            self.n_unary = int(scalar)
        else:
            sizes = np.asarray(n_features)
            if (sizes.ndim != 1 or sizes.size == 0 or sizes.dtype.kind not in "iu"
                    or (sizes < 0).any()):
                raise ValueError(
                    "ChainModel: `n_features` as template sizes must be a non-empty 1-D sequence "
                    f"of non-negative integers, got {n_features!r}"
                )
            self.template_sizes = sizes.astype(np.int64)
            self.offsets = np.concatenate(
                [[0], np.cumsum(self.template_sizes)[:-1]]).astype(np.int64)
            self.n_features = tuple(int(s) for s in sizes)
            self.n_unary = int(self.template_sizes.sum())
            if self.n_unary < 1:
                raise ValueError("ChainModel: the template sizes sum to 0 (no unary feature)")
        K, F = self.n_states, self.n_unary
        self.size_joint_feature = K * F + 2 * K + K * K

    @property
    def uses_ids(self) -> bool:
        """Whether sequences are attribute-id arrays (else dense feature arrays)."""
        return self.template_sizes is not None

    # -- input checks (cheap: they run on every oracle call) -------------------
    def _check_x(self, x: Any) -> np.ndarray:
        if self.template_sizes is None:
            x = np.asarray(x)
            if x.dtype.kind == "c":  # the float cast kept the real part (a ComplexWarning)
                raise ValueError(f"ChainModel: `x` must be real, got complex values "
                                 f"(dtype {x.dtype})")
            x = np.ascontiguousarray(x, dtype=np.float64)
            if x.ndim != 2 or x.shape[1] != self.n_unary or x.shape[0] < 1:
                raise ShapeError(
                    f"ChainModel: `x` must be a dense array of shape (L, {self.n_unary}) with "
                    f"L >= 1, got shape {x.shape}"
                )
            return x
        x = np.asarray(x)
        m = self.template_sizes.size
        if x.ndim != 2 or x.shape[1] != m or x.shape[0] < 1 or x.dtype.kind not in "iu":
            raise ShapeError(
                f"ChainModel: `x` must be an integer array of attribute ids of shape (L, {m}) "
                f"with L >= 1, got shape {x.shape} and dtype {x.dtype}"
            )
        if x.dtype != np.int32 and x.dtype != np.int64:
            x = x.astype(np.int64)
        return np.ascontiguousarray(x)

    def _check_y(self, y: Any, L: int, name: str, in_range: bool = True) -> np.ndarray:
        y = np.asarray(y)
        if y.shape != (L,) or y.dtype.kind not in "iu":
            raise ShapeError(
                f"ChainModel: `{name}` must be an integer array of shape ({L},) (one label per "
                f"position), got shape {y.shape} and dtype {y.dtype}"
            )
        y = np.ascontiguousarray(y, dtype=np.int64)
        if in_range and (y.min() < 0 or y.max() >= self.n_states):
            raise ValueError(
                f"ChainModel: `{name}` has labels in [{y.min()}, {y.max()}], expected "
                f"[0, {self.n_states})"
            )
        return y

    def _bad_id(self, x: np.ndarray, status: int) -> ValueError:
        t, j = divmod(int(status), x.shape[1])
        sizes = self.template_sizes  # ids models only call this
        top = "?" if sizes is None else int(sizes[j])
        return ValueError(
            f"ChainModel: `x[{t}, {j}]` = {int(x[t, j])} is not an attribute id of template {j}; "
            f"expected 0 (absent) to {top}"
        )

    # -- the four model methods ------------------------------------------------
    def joint_feature(self, x: Any, y: Any) -> np.ndarray | sp.coo_array:
        """``phi(x, y)``: a dense array for dense features, a 1-D ``scipy.sparse.coo_array``
        of shape ``(d,)`` for attribute ids."""
        idx, val = self.joint_feature_sparse(x, y)
        if self.uses_ids:
            return sp.coo_array((val, (idx,)), shape=(self.size_joint_feature,))
        out = np.zeros(self.size_joint_feature)
        out[idx] = val
        return out

    def loss(self, y_true: Any, y: Any) -> float:
        """Normalized Hamming loss ``sum(y != y_true) / L``."""
        y_true = np.asarray(y_true)
        y = np.asarray(y)
        if y_true.ndim != 1 or y_true.size == 0 or y.shape != y_true.shape:
            raise ShapeError(
                f"ChainModel.loss: `y` must have the shape of `y_true` {y_true.shape} "
                f"(non-empty 1-D), got {y.shape}"
            )
        _integer_labels(y_true, "ChainModel.loss", "y_true")
        _integer_labels(y, "ChainModel.loss", "y")
        return np.count_nonzero(y_true != y) / y_true.size

    def decode(self, x: Any, w: np.ndarray) -> np.ndarray:
        """Viterbi labelling ``argmax_y <w, phi(x, y)>`` (ties to the lowest labels)."""
        return self._decode(x, None, w)[0]

    def loss_augmented_decode(self, x: Any, y_true: Any, w: np.ndarray) -> np.ndarray:
        """``argmax_y L(y_true, y) + <w, phi(x, y)>``: Viterbi with ``+1/L`` on every
        state and ``-1/L`` at the true label.  ``y_true`` may hold labels outside
        ``[0, n_states)`` (a test-only tag); they are never matched."""
        return self._decode(x, y_true, w)[0]

    def decode_with_score(self, x: Any, w: np.ndarray, y_true: Any = None
                          ) -> tuple[np.ndarray, float]:
        """The (loss-augmented when ``y_true`` is given) labelling and its optimal value
        ``max_y [L(y_true, y)] + <w, phi(x, y)>``."""
        return self._decode(x, y_true, w)

    def _decode(self, x: Any, y_true: Any, w: Any) -> tuple[np.ndarray, float]:
        w = self._check_w(w)
        x = self._check_x(x)
        augment = y_true is not None
        yt = (self._check_y(y_true, x.shape[0], "y_true", in_range=False) if augment
              else np.zeros(x.shape[0], dtype=np.int64))
        if self.template_sizes is None:
            y, best = kern.decode_dense(x, w, self.n_states, yt, augment)
            return y, float(best)
        y, best, status = kern.decode_ids(x, self.offsets, self.template_sizes, w,
                                          self.n_states, self.n_unary, yt, augment)
        if status != -1:
            raise self._bad_id(x, status)
        return y, float(best)

    def log_potentials(self, x: Any, w: np.ndarray, y_true: Any = None
                       ) -> tuple[np.ndarray, np.ndarray]:
        """Node log-potentials ``(L, K)`` (unary scores, the start bias at position 0, the
        end bias at ``L - 1`` and, with ``y_true``, the loss term ``[k != y_true[t]] / L``)
        and the transition table ``(K, K)``, entry ``[a, b]`` for ``y_t = a, y_{t+1} = b``:
        ``<w, phi(x, y)> [+ L(y_true, y)]`` is the sum of these along ``y``."""
        w = self._check_w(w)
        x = self._check_x(x)
        L, K, F = x.shape[0], self.n_states, self.n_unary
        node = np.empty((L, K))
        if self.template_sizes is None:
            kern.unary_dense(x, w, K, node)
        else:
            status = kern.unary_ids(x, self.offsets, self.template_sizes, w, K, F, node)
            if status != -1:
                raise self._bad_id(x, status)
        o = K * F
        node[0] += w[o:o + K]
        node[L - 1] += w[o + K:o + 2 * K]
        if y_true is not None:
            yt = self._check_y(y_true, L, "y_true", in_range=False)
            node += 1.0 / L
            inside = (yt >= 0) & (yt < K)
            node[np.flatnonzero(inside), yt[inside]] -= 1.0 / L
        return node, np.ascontiguousarray(w[o + 2 * K:].reshape(K, K).T)

    def marginals(self, x: Any, w: np.ndarray, y_true: Any = None) -> Marginals:
        """Node and edge marginals and ``log Z`` of ``p(y) ∝ exp(<w, phi(x, y)>
        [+ L(y_true, y)])`` by forward-backward in log space (numba), O(L K^2).

        The expectation oracle of the exponentiated-gradient and extragradient
        solvers (the sum-product counterpart of :meth:`loss_augmented_decode`).
        """
        node, trans = self.log_potentials(x, w, y_true)
        L, K = node.shape
        nm = np.empty((L, K))
        em = np.empty((max(L - 1, 0), K, K))
        logz = chain_marginals(node, trans, nm, em, np.empty((K, K)))
        return Marginals(nm, em, float(logz))

    # -- what a block-coordinate trainer uses ------------------------------------
    def joint_feature_sparse(self, x: Any, y: Any) -> SparseVector:
        """``phi(x, y)`` as sorted unique ``(indices, values)`` without forming a length-d array."""
        x = self._check_x(x)
        y = self._check_y(y, x.shape[0], "y")
        return self._features(x, y, y, False)

    def psi(self, x: Any, y_true: Any, y: Any) -> SparseVector:
        """``phi(x, y_true) - phi(x, y)`` as sorted unique ``(indices, values)`` (zeros dropped).

        Cost O(number of mislabelled positions * features per position + L).
        """
        x = self._check_x(x)
        y_true = self._check_y(y_true, x.shape[0], "y_true")
        y = self._check_y(y, x.shape[0], "y")
        return self._features(x, y_true, y, True)

    def _features(self, x: np.ndarray, ya: np.ndarray, yb: np.ndarray, has_b: bool) -> SparseVector:
        if self.template_sizes is None:
            return kern.features_dense(x, ya, yb, has_b, self.n_states)
        idx, val, status = kern.features_ids(x, self.offsets, self.template_sizes, ya, yb, has_b,
                                             self.n_states, self.n_unary)
        if status != -1:
            raise self._bad_id(x, status)
        return idx, val

    def score(self, x: Any, y: Any, w: np.ndarray) -> float:
        """``<w, phi(x, y)>`` in O(L F) (dense) or O(L m) (ids), no feature vector formed."""
        w = self._check_w(w)
        x = self._check_x(x)
        y = self._check_y(y, x.shape[0], "y")
        if self.template_sizes is None:
            return float(kern.score_dense(x, y, w, self.n_states))
        s, status = kern.score_ids(x, self.offsets, self.template_sizes, y, w,
                                   self.n_states, self.n_unary)
        if status != -1:
            raise self._bad_id(x, status)
        return float(s)

    def feature_support(self, x: Any) -> np.ndarray:
        """Sorted coordinates that ``phi(x, y)`` can touch for some ``y``: the unary
        slices of the features active somewhere in ``x`` (for every label), and the
        start, end and transition blocks."""
        x = self._check_x(x)
        if self.template_sizes is None:
            active = np.flatnonzero((x != 0).any(axis=0))
        else:
            present = x > 0
            if (x < 0).any() or (x > self.template_sizes).any():
                bad = np.flatnonzero(((x < 0) | (x > self.template_sizes)).ravel())[0]
                raise self._bad_id(x, int(bad))
            active = np.unique((self.offsets + x - 1)[present])
        K, F = self.n_states, self.n_unary
        unary = (np.arange(K, dtype=np.int64)[:, None] * F + active[None, :]).ravel()
        return np.concatenate([unary, np.arange(K * F, self.size_joint_feature, dtype=np.int64)])

    def feature_supports(self, X: Sequence[Any], append: int | None = None
                         ) -> list[np.ndarray]:
        """:meth:`feature_support` of every sequence (followed by ``append`` when given)
        in two compiled passes, views of one array (see the base class)."""
        return chain_feature_supports(self, X, append)

    def split_weights(self, w: Any) -> dict[str, np.ndarray]:
        """Views of ``w`` by block: ``unary`` (K, F), ``start`` (K,), ``end`` (K,) and
        ``transitions`` (K, K) with entry ``[a, b]`` scoring ``y_t = a, y_{t+1} = b``."""
        w = self._check_w(w)
        K, F = self.n_states, self.n_unary
        o = K * F
        return {
            "unary": w[:o].reshape(K, F),
            "start": w[o:o + K],
            "end": w[o + K:o + 2 * K],
            "transitions": w[o + 2 * K:].reshape(K, K).T,
        }

    # -- fast paths (hooks of StructuredModel) -----------------------------------------
    def _kernels_apply(self) -> bool:
        """Whether the compiled kernels reproduce this model: they are written for
        ChainModel's feature map, loss and decoders, so a subclass that overrides one of
        them gets the generic Python paths."""
        cls = type(self)
        return all(getattr(cls, name) is getattr(ChainModel, name)
                   for name in ("joint_feature", "joint_feature_sparse", "psi", "loss",
                                "decode", "loss_augmented_decode"))

    def check_labellings(self, Y: Sequence[Any]) -> None:
        """Refuse labellings that are not integers (booleans, text), naming ``Y[i]``."""
        _integer_labellings(Y, "ChainModel")

    def compiled_dual_blocks(self, X: Sequence[Any], Y: Sequence[Any], lam: float,
                             warm: Any = None) -> Any:
        """Kernels storing block ``i`` as label marginals (see :mod:`.dual_kernels`), with
        the round kernels of compiled mini-batch rounds."""
        if not self._kernels_apply():
            return None
        _integer_labellings(Y, "ChainModel")
        state = chain_state(self, X, Y, lam, warm)
        blocks = chain_blocks(state)
        blocks.rounds = chain_rounds(blocks, state)
        return blocks

    def batch_oracles(self, X: Sequence[Any], Y: Sequence[Any] | None = None) -> Any:
        """Numba batch oracles over flattened token arrays (threads over examples)."""
        if not self._kernels_apply():
            return None
        if Y is not None:
            _integer_labellings(Y, "ChainModel")
        return ChainBatchOracles(chain_data(self, X, Y))

    def batch_loss(self, Y_true: Sequence[Any], Y: Sequence[Any]) -> np.ndarray:
        """:meth:`loss` of every pair, vectorized over the concatenated labellings."""
        if type(self).loss is not ChainModel.loss:
            return super().batch_loss(Y_true, Y)
        if len(Y_true) != len(Y):
            raise ShapeError(f"batch_loss: Y_true has {len(Y_true)} labellings but Y has {len(Y)}")
        lengths = np.array([np.size(y) for y in Y_true], dtype=np.int64)
        bad = np.flatnonzero((lengths != [np.size(y) for y in Y]) | (lengths < 1))
        if bad.size:
            i = int(bad[0])
            raise ShapeError(f"batch_loss: labelling {i} has length {np.size(Y[i])}, its true "
                             f"labelling {lengths[i]} (non-empty)")
        yt = np.concatenate([np.asarray(y).ravel() for y in Y_true])
        yp = np.concatenate([np.asarray(y).ravel() for y in Y])
        _integer_labels(yt, "ChainModel.batch_loss", "Y_true")
        _integer_labels(yp, "ChainModel.batch_loss", "Y")
        off = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        return np.add.reduceat((yt != yp).astype(float), off) / lengths

    def _repr_params(self) -> dict[str, Any]:
        return {"n_states": self.n_states, "n_features": self.n_features}


def _integer_labels(y: np.ndarray, where: str, name: str) -> None:
    """A ``ShapeError`` naming ``where`` and ``name`` unless the labels ``y`` are integers
    (also as whole floats): text or other objects compared unequal to every label and
    scored as a loss.  Out-of-range integers stay allowed (a test-only tag is a miss)."""
    kind = y.dtype.kind
    if kind in "iu":
        return
    if kind == "f" and bool(np.all(np.isfinite(y) & (y == np.round(y)))):
        return
    raise ValueError(f"{where}: `{name}` must hold integer labels (an integer dtype, or "
                     f"whole floats), got dtype {y.dtype} ({y.ravel()[:5].tolist()!r:.80})")


def _integer_labellings(Y: Sequence[Any], where: str) -> None:
    """:func:`_integer_labels` for each labelling of the user's ``Y``, naming ``Y[i]``: the
    compiled kernels read booleans as the states 0 and 1 and trained on them, and only
    the evaluation's ``batch_loss`` refused them, naming its own ``Y_true``."""
    for i, y in enumerate(Y):
        a = np.asarray(y)
        if a.dtype.kind not in "iu":
            _integer_labels(a, where, f"Y[{i}]")
