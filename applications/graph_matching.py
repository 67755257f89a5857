"""Learning graph matching (Caetano et al., TPAMI 2009) with the structured SVM.

Two frames ``a`` and ``b`` of a landmark sequence are matched by a linear
assignment: landmark ``i`` of ``a`` goes to landmark ``y[i]`` of ``b``,
maximizing ``sum_i <w, phi(i, y[i])>``.  The edge features are the
"node features only" (linear assignment) variant of Caetano et al.: per bin
of the shape-context histograms (normalized to sum 1),

* ``kind="abs"``: ``phi_ij = -|s_a,i - s_b,j|``  (the paper's choice),
* ``kind="sq"``:  ``phi_ij = -(s_a,i - s_b,j)^2``,

so the all-ones weights score a pair by minus the l1 (or squared l2)
histogram distance: the *unlearned* matcher.  A structured SVM
(:class:`~frankwolfe.applications.structured_svm.MatchingModel` with perfect matchings,
trained by BCFW through :class:`~frankwolfe.applications.structured_svm.StructuredSVM`)
learns a weight per bin.  The loss is the normalized Hamming loss, the
fraction of mismatched landmarks, so ``1 - loss`` is the matching accuracy.

* :func:`node_features` - the ``(n_a, n_b, D)`` features of one pair;
* :func:`pair_dataset` - ``(X, Y)`` for the pairs of one split of the CMU house data;
* :func:`matching_accuracy` - mean fraction of correctly matched landmarks;
* :func:`learn_graph_matching` - train on ``housesB_train``, choose ``lam`` on
  ``housesB_validate``, report on ``housesB_test`` against the unlearned weights.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from frankwolfe._numbers import check_whole
from frankwolfe._random import as_generator
from frankwolfe.errors import ShapeError

from .structured_svm.datasets.cmu_house import CMUHouse, load_cmu_house
from .structured_svm.models.matching import MatchingModel

# imported where it is used: its module imports scikit-learn, slow to import
# (benchmarks/README.md, "Measurements behind code choices")
if TYPE_CHECKING:
    from .structured_svm.estimator import StructuredSVM

__all__ = ["FEATURE_KINDS", "DEFAULT_LAMS", "normalize_histograms", "node_features",
           "pair_dataset", "matching_model", "matching_accuracy", "GraphMatchingResult",
           "learn_graph_matching"]

FEATURE_KINDS = ("abs", "sq")
#: the regularization grid searched on the validation pairs
DEFAULT_LAMS = (1e-5, 1e-4, 1e-3, 1e-2, 1e-1)


def normalize_histograms(h: Any) -> np.ndarray:
    """Scale each histogram (last axis) to sum 1; all-zero histograms stay zero.

    Normalizing makes landmarks with different numbers of neighbours in range
    comparable (the raw shape contexts of the CMU house frames sum to 20-29).

    Parameters
    ----------
    h : array_like of shape (..., n_bins)
        Finite non-negative counts, one histogram along the last axis.

    Returns
    -------
    ndarray of float64, same shape as ``h``
        Each histogram divided by its sum (zeros where the sum is 0).

    Raises
    ------
    ShapeError
        When ``h`` is a scalar.
    ValueError
        When an entry of ``h`` is negative or not finite.
    """
    h = np.asarray(h, dtype=np.float64)
    if h.ndim < 1:
        raise ShapeError(f"normalize_histograms: `h` must have at least one axis, "
                         f"got shape {h.shape}")
    bad = ~(np.isfinite(h) & (h >= 0))
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"normalize_histograms: `h` must hold finite non-negative counts, "
                         f"got {float(h[at])!r} at index {at if len(at) > 1 else at[0]}")
    s = h.sum(axis=-1, keepdims=True)
    return np.divide(h, s, out=np.zeros_like(h), where=s > 0)


def node_features(hist_a: Any, hist_b: Any, kind: str = "abs") -> np.ndarray:
    """Edge features of the linear-assignment matcher between two landmark sets.

    Parameters
    ----------
    hist_a : array_like, shape (n_a, D)
        Normalized descriptors (e.g. shape-context histograms) of the left frame.
    hist_b : array_like, shape (n_b, D)
        The same for the right frame.
    kind : {"abs", "sq"}
        ``-|a_i - b_j|`` or ``-(a_i - b_j)^2`` per bin.

    Returns
    -------
    ndarray, shape (n_a, n_b, D)
        ``x[i, j]``: the feature vector of matching left ``i`` to right ``j``;
        with ``w = ones(D)`` the edge score is minus the l1 (squared l2) distance.
    """
    if kind not in FEATURE_KINDS:
        raise ValueError(f"node_features: `kind` must be one of {list(FEATURE_KINDS)}, "
                         f"got {kind!r}")
    a = np.asarray(hist_a, dtype=np.float64)
    b = np.asarray(hist_b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ShapeError(f"node_features: `hist_a` and `hist_b` must have shapes (n_a, D) and "
                         f"(n_b, D) with the same D, got {a.shape} and {b.shape}")
    diff = a[:, None, :] - b[None, :, :]
    if kind == "abs":
        np.abs(diff, out=diff)
    else:
        np.square(diff, out=diff)
    np.negative(diff, out=diff)
    return diff


def pair_dataset(data: CMUHouse, pairs: Any, kind: str = "abs"
                 ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Features and true matchings of frame pairs of the CMU house sequence.

    Parameters
    ----------
    data : CMUHouse
        From :func:`~frankwolfe.applications.structured_svm.datasets.load_cmu_house`.
    pairs : array_like of int, shape (n_pairs, 2)
        0-based frames ``(a, b)``, e.g. ``data.pair_list(50, "train")``.
    kind : {"abs", "sq"}
        See :func:`node_features`.

    Returns
    -------
    X : list of ndarray, shape (30, 30, 60)
    Y : list of ndarray of int64, shape (30,)
        ``data.correct`` (the identity) for every pair.
    """
    p = np.asarray(pairs)
    if p.ndim != 2 or p.shape[1] != 2 or p.dtype.kind not in "iu":
        raise ShapeError(f"pair_dataset: `pairs` must be an integer array of shape (n_pairs, 2), "
                         f"got shape {p.shape} and dtype {p.dtype}")
    if p.size and (p.min() < 0 or p.max() >= data.n_frames):
        raise ValueError(f"pair_dataset: `pairs` must name frames in [0, {data.n_frames}), got "
                         f"range [{p.min()}, {p.max()}]")
    s = normalize_histograms(data.shape_context)
    X = [node_features(s[a], s[b], kind) for a, b in p]
    return X, [data.correct.copy() for _ in range(len(X))]


def matching_model(n_features: int, n_landmarks: int) -> MatchingModel:
    """The perfect-matching model with the normalized Hamming loss.

    Each wrong landmark costs ``recall_cost + precision_cost = 1 / n_landmarks``,
    so the loss of a matching is the fraction of mismatched landmarks.

    Parameters
    ----------
    n_features : int
        Length ``D`` of each edge's feature vector (:func:`node_features`).
    n_landmarks : int
        Landmarks per frame (30 in the CMU house frames); at least 1.

    Returns
    -------
    MatchingModel
        ``MatchingModel(n_features, precision_cost=c, recall_cost=c, perfect=True)``
        with ``c = 0.5 / n_landmarks``.

    Raises
    ------
    TypeError
        When ``n_features`` or ``n_landmarks`` is not a number.
    ValueError
        When ``n_features`` or ``n_landmarks`` is not a whole number of at least 1.
    """
    n_landmarks = check_whole(n_landmarks, "n_landmarks", 1, "matching_model")
    c = 0.5 / n_landmarks
    return MatchingModel(n_features, precision_cost=c, recall_cost=c, perfect=True)


def matching_accuracy(X: Sequence[Any], Y: Sequence[Any], w: Any) -> float:
    """Fraction of landmarks matched correctly by the linear assignment with weights ``w``,
    averaged over the pairs.

    Parameters
    ----------
    X : sequence of ndarray, shape (n, m, D)
    Y : sequence of int arrays, shape (n,)
        True matchings.
    w : array_like, shape (D,)
        ``np.ones(D)`` is the unlearned matcher.
    """
    if len(X) != len(Y) or len(X) == 0:
        raise ValueError(f"matching_accuracy: X and Y must be non-empty and equally long, got "
                         f"{len(X)} and {len(Y)}")
    x0 = np.asarray(X[0])
    if x0.ndim != 3:
        raise ShapeError(f"matching_accuracy: each x must have shape (n, m, D), got {x0.shape}")
    model = MatchingModel(x0.shape[2], perfect=True)
    return float(np.mean([np.mean(model.decode(x, w) == np.asarray(y)) for x, y in zip(X, Y)]))


@dataclass
class GraphMatchingResult:
    """Outcome of :func:`learn_graph_matching` for one baseline.

    Attributes
    ----------
    baseline : int
        Frame gap ``B`` of the pairs.
    kind : str
        Feature kind.
    n_pairs : dict
        ``{"train": ..., "validate": ..., "test": ...}``.
    lams : ndarray
        The regularization grid.
    validation_accuracy : ndarray
        Validation accuracy of the weights learned at each ``lams[k]``.
    lam : float
        The chosen regularization (best validation accuracy; ties go to the
        larger ``lam``).
    w : ndarray, shape (D,)
        Weights learned at ``lam``.
    estimator : StructuredSVM
        The fitted estimator at ``lam`` (its ``history_`` holds the BCFW run).
    gap : float
        Certified duality gap of the training problem at ``lam`` when BCFW
        stopped (at most ``tol`` unless the pass budget ran out).
    unlearned_validation_accuracy, unlearned_test_accuracy : float
        Accuracy of ``w = ones(D)``.
    learned_test_accuracy : float
        Accuracy of ``w`` on the test pairs.
    """

    baseline: int
    kind: str
    n_pairs: dict[str, int]
    lams: np.ndarray
    validation_accuracy: np.ndarray
    lam: float
    w: np.ndarray
    estimator: StructuredSVM = field(repr=False)
    gap: float
    unlearned_validation_accuracy: float
    unlearned_test_accuracy: float
    learned_test_accuracy: float


def learn_graph_matching(baseline: int = 90, data: CMUHouse | None = None,
                         data_home: str | os.PathLike[str] | None = None, kind: str = "abs",
                         lams: Sequence[float] = DEFAULT_LAMS, max_passes: int = 1000,
                         tol: float = 1e-3, random_state: int | np.random.Generator | None = None,
                         **svm_params: Any) -> GraphMatchingResult:
    """Learn shape-context bin weights for matching CMU house frames ``B`` apart.

    The standard protocol of Caetano et al. (2009): a structured SVM is trained
    by BCFW on the ``housesB_train`` pairs for every ``lam`` of the grid, the
    ``lam`` with the best accuracy on ``housesB_validate`` is kept, and its
    weights and the unlearned all-ones weights are evaluated on ``housesB_test``.

    Parameters
    ----------
    baseline : int, default 90
        Frame gap, one of 0, 10, ..., 90 (learning helps most at large gaps).
    data : CMUHouse, optional
        Already loaded data; otherwise :func:`load_cmu_house` with ``data_home``.
    data_home : path, optional
        Where to find ``cmu_house/``.
    kind : {"abs", "sq"}, default "abs"
        Feature kind, see :func:`node_features`.
    lams : sequence of float
        Regularization grid (``lam`` of :class:`StructuredSVM`).
    max_passes, tol : int, float
        BCFW budget and duality-gap target (the loss is a fraction in [0, 1]).
    random_state : int, numpy.random.Generator or RandomState, optional
        Seed of the BCFW block sampling; each ``lam`` gets the same seed (with
        ``None``, the default, fresh entropy drawn once per call).  A
        ``Generator`` is shared: each ``lam`` continues its stream.
    **svm_params
        Further :class:`StructuredSVM` parameters (e.g. ``solver``, ``n_jobs``).

    Returns
    -------
    GraphMatchingResult
    """
    from .structured_svm.estimator import StructuredSVM  # scikit-learn: only training pays

    lam_arr = np.asarray(lams, dtype=np.float64).ravel()
    if lam_arr.size == 0 or not np.all(np.isfinite(lam_arr) & (lam_arr > 0)):
        raise ValueError(f"learn_graph_matching: `lams` must be a non-empty sequence of positive "
                         f"numbers, got {lams!r}")
    shared = isinstance(random_state, np.random.Generator)
    # the package's one conversion (it names a bad value); its seed sequence seeds a fresh
    # Generator per lam
    seed: Any = as_generator(random_state).bit_generator.seed_seq
    if data is None:
        data = load_cmu_house(data_home)
    splits = {s: pair_dataset(data, data.pair_list(baseline, s), kind)
              for s in ("train", "validate", "test")}
    (Xtr, Ytr), (Xva, Yva), (Xte, Yte) = splits["train"], splits["validate"], splits["test"]
    D = data.shape_context.shape[2]
    model = matching_model(D, data.correct.size)
    ones = np.ones(D)

    val_acc = np.empty(lam_arr.size)
    fitted: list[StructuredSVM] = []
    for k, lam in enumerate(lam_arr):
        # a fresh Generator per lam from one seed: every grid point sees the same block order
        rs = random_state if shared else np.random.default_rng(seed)
        svm = StructuredSVM(model, lam=float(lam), max_passes=max_passes, tol=tol,
                            random_state=rs, **svm_params).fit(Xtr, Ytr)
        fitted.append(svm)
        val_acc[k] = matching_accuracy(Xva, Yva, svm.w_)
    # ties go to the strongest regularization
    best = max(range(lam_arr.size), key=lambda k: (val_acc[k], lam_arr[k]))
    svm = fitted[best]
    return GraphMatchingResult(
        baseline=baseline, kind=kind,
        n_pairs={s: len(splits[s][0]) for s in splits},
        lams=lam_arr, validation_accuracy=val_acc, lam=float(lam_arr[best]), w=svm.w_.copy(),
        estimator=svm, gap=float(svm.history_["gap"][-1]),
        unlearned_validation_accuracy=matching_accuracy(Xva, Yva, ones),
        unlearned_test_accuracy=matching_accuracy(Xte, Yte, ones),
        learned_test_accuracy=matching_accuracy(Xte, Yte, svm.w_),
    )
