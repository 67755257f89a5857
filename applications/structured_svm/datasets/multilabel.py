"""Synthetic multi-label data whose labels depend on each other along a tree."""

from __future__ import annotations

from typing import Literal, overload

import numpy as np

from frankwolfe._numbers import check_flag
from frankwolfe._random import as_generator

from ._synthetic_checks import check_counts, check_number

__all__ = ["make_multilabel_tree"]


@overload
def make_multilabel_tree(n_samples: int, n_labels: int = 8, n_features: int = 10, *,
                         noise: float = 0.1, offset: float = 0.5,
                         random_state: int | np.random.Generator | None = None,
                         return_edges: Literal[False] = False) -> tuple[np.ndarray, np.ndarray]: ...


@overload
def make_multilabel_tree(n_samples: int, n_labels: int = 8, n_features: int = 10, *,
                         noise: float = 0.1, offset: float = 0.5,
                         random_state: int | np.random.Generator | None = None,
                         return_edges: Literal[True]
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


@overload
def make_multilabel_tree(n_samples: int, n_labels: int = 8, n_features: int = 10, *,
                         noise: float = 0.1, offset: float = 0.5,
                         random_state: int | np.random.Generator | None = None,
                         return_edges: bool = False
                         ) -> (tuple[np.ndarray, np.ndarray]
                               | tuple[np.ndarray, np.ndarray, np.ndarray]): ...


def make_multilabel_tree(n_samples: int, n_labels: int = 8, n_features: int = 10, *,
                         noise: float = 0.1, offset: float = 0.5,
                         random_state: int | np.random.Generator | None = None,
                         return_edges: bool = False
                         ) -> (tuple[np.ndarray, np.ndarray]
                               | tuple[np.ndarray, np.ndarray, np.ndarray]):
    """Multi-label data from a label hierarchy: a label can be on only when its parent is.

    A random tree over the labels (label 0 is the root; each label ``l >= 1`` hangs
    from a uniformly drawn earlier label), features ``x ~ N(0, I)`` and per label a
    linear score ``a_l = <u_l, x> + offset + noise * e_l`` (``u_l ~ N(0, I /
    n_features)``, ``e_l`` standard logistic noise).  The root is on when ``a_0 > 0``;
    every other label when ``a_l > 0`` *and* its parent is on, as in a taxonomy where
    a label implies its ancestors.

    A label is then the AND of its ancestors' half-spaces, which no linear classifier
    of ``x`` per label can express, while a tree-structured
    :class:`~.MultiLabelModel` (on the generating tree, or the Chow-Liu tree of the
    training labels, which recovers it from a few hundred examples) decodes the
    labels jointly: the interactions matter (see ``benchmarks/multilabel.py``).

    Parameters
    ----------
    n_samples : int
    n_labels : int, default 8
    n_features : int, default 10
    noise : float, default 0.1
        Scale of the logistic noise on each score (>= 0; 0: the labels are a
        deterministic function of ``x``).
    offset : float, default 0.5
        Added to every score (finite): larger values turn more labels on (a label's
        frequency falls with its depth).
    random_state : int or numpy.random.Generator, optional
    return_edges : bool, default False
        Also return the tree.

    Returns
    -------
    X : ndarray of float64, shape (n_samples, n_features)
        No constant column: append one for per-label biases (``np.c_[X, np.ones(n)]``).
    Y : ndarray of int64, shape (n_samples, n_labels)
        0/1 labellings; ``Y[:, child] <= Y[:, parent]`` on every edge.
    edges : ndarray of int64, shape (n_labels - 1, 2)
        Only with ``return_edges``: the tree's ``(parent, child)`` pairs (parent <
        child).
    """
    where = "make_multilabel_tree"
    check_counts(where, (("n_samples", n_samples, 1), ("n_labels", n_labels, 1),
                         ("n_features", n_features, 1)))
    check_number(where, "noise", noise)
    check_flag(return_edges, "return_edges")
    if not (np.ndim(offset) == 0 and np.isfinite(offset)):
        raise ValueError(f"make_multilabel_tree: `offset` must be a finite number, got "
                         f"{offset!r}")
    n, L, F = int(n_samples), int(n_labels), int(n_features)
    rng = as_generator(random_state)
    parent = np.array([-1] + [int(rng.integers(k)) for k in range(1, L)], dtype=np.int64)
    U = rng.normal(size=(L, F)) / np.sqrt(F)
    X = rng.normal(size=(n, F))
    on = (X @ U.T + offset + noise * rng.logistic(size=(n, L))) > 0
    Y = np.zeros((n, L), dtype=np.int64)
    Y[:, 0] = on[:, 0]
    for k in range(1, L):  # parents come before their children
        Y[:, k] = Y[:, parent[k]] & on[:, k]
    if return_edges:
        return X, Y, np.c_[parent[1:], np.arange(1, L)].astype(np.int64)
    return X, Y
