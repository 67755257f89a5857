"""Chow-Liu trees: the label graph of a tree-structured multi-label model, learned from
the training labels.

Chow and Liu (IEEE Trans. Inf. Theory, 1968): among tree-structured distributions
over the labels, the one closest in KL divergence to the empirical distribution lives
on a maximum spanning tree of the pairwise mutual information.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from frankwolfe.errors import ShapeError

__all__ = ["label_mutual_information", "chow_liu_tree"]


def _binary_labels(Y: Any, where: str) -> np.ndarray:
    a = np.asarray(Y)
    if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 1:
        raise ShapeError(f"{where}: `Y` must be a binary array of shape (n_samples, "
                         f"n_labels) with both >= 1, got shape {a.shape}")
    if a.dtype.kind not in "biuf":
        raise ValueError(f"{where}: `Y` must hold 0 and 1, got dtype {a.dtype}")
    bad = (a != 0) & (a != 1)
    if bad.any():
        pos = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), a.shape))
        raise ValueError(f"{where}: `Y`[{pos[0]}, {pos[1]}] = {a[pos].item()!r} is not 0 or 1")
    return a.astype(np.float64)


def label_mutual_information(Y: Any) -> np.ndarray:
    """Empirical mutual information (natural log, nats) between every pair of labels.

    Parameters
    ----------
    Y : array-like of shape (n_samples, n_labels)
        Binary labellings (0/1).

    Returns
    -------
    ndarray of shape (n_labels, n_labels)
        Symmetric; entry ``(i, j)`` is ``sum_ab p_ij(a, b) log(p_ij(a, b) / (p_i(a)
        p_j(b)))`` over the joint frequencies of labels ``i`` and ``j`` (0 log 0 = 0),
        what ``sklearn.metrics.mutual_info_score(Y[:, i], Y[:, j])`` gives; the
        diagonal holds each label's entropy.  Cost O(n L^2) (four matrix products).
    """
    A = _binary_labels(Y, "label_mutual_information")
    n = A.shape[0]
    B = 1.0 - A
    mi = np.zeros((A.shape[1], A.shape[1]))
    for pa, qa in ((A, A.mean(axis=0)), (B, B.mean(axis=0))):
        for pb, qb in ((A, A.mean(axis=0)), (B, B.mean(axis=0))):
            joint = (pa.T @ pb) / n
            denom = np.outer(qa, qb)
            with np.errstate(divide="ignore", invalid="ignore"):
                term = joint * np.log(joint / denom)
            mi += np.where(joint > 0, term, 0.0)
    # rounding leaves -1e-17 where the labels are independent; MI is >= 0
    return np.maximum(0.5 * (mi + mi.T), 0.0)


def chow_liu_tree(Y: Any) -> np.ndarray:
    """The Chow-Liu tree of the labels: a maximum spanning tree of their pairwise mutual
    information (:func:`label_mutual_information`), by
    ``scipy.sparse.csgraph.minimum_spanning_tree``.

    Deterministic: among trees of equal total information, the one scipy's Kruskal
    picks first.  Cost O(n L^2 + L^2 log L).

    Parameters
    ----------
    Y : array-like of shape (n_samples, n_labels)
        Training labellings (0/1).

    Returns
    -------
    ndarray of int64, shape (n_labels - 1, 2)
        The tree's edges ``(i, j)`` with ``i < j``, sorted: pass them as
        ``MultiLabelModel(n_labels, n_features, edges=chow_liu_tree(Y))``.
    """
    from scipy.sparse import csr_array  # csgraph costs an import: only its users pay
    from scipy.sparse.csgraph import minimum_spanning_tree

    mi = label_mutual_information(Y)
    L = mi.shape[0]
    if L < 2:
        return np.zeros((0, 2), dtype=np.int64)
    i, j = np.triu_indices(L, k=1)
    # csgraph drops zero weights as missing edges, and independent labels have MI 0: a
    # constant shift keeps every pair (all spanning trees have L - 1 edges, so the order
    # of trees by weight is unchanged)
    cost = (mi[i, j].max() + 1.0) - mi[i, j]
    # int32 indices: csgraph of scipy 1.15 (the declared floor) refuses int64 ones
    tree = minimum_spanning_tree(csr_array(
        (cost, (i.astype(np.int32), j.astype(np.int32))), shape=(L, L))).tocoo()
    e = np.sort(np.c_[tree.row, tree.col].astype(np.int64), axis=1)
    return e[np.lexsort((e[:, 1], e[:, 0]))]
