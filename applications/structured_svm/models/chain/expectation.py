"""Compiled pieces shared by the expectation-based SSVM solvers (online EG, dual
extragradient) on a chain data set (:class:`~.data.ChainData`).

A dual point is one Gibbs distribution per example, ``alpha_i(y) ∝ exp(theta_i(y))``,
with log-potentials factored like the chain model: ``theta_node`` (one row of ``K``
per token, all examples stacked) and ``theta_edge[i]`` (one ``K x K`` table per
example, shared by its positions, as the model's transition weights are).  Its
marginals are ``mu`` (per token) and ``T[i]`` (transition marginals summed over the
positions), and its image is

    w = (sum_i phi(x_i, y_i) - E_{alpha_i} phi(x_i, y)) / (lam n),
    ell = 1/n sum_i E_{alpha_i} L(y_i, y),

the same ``(w, ell)`` as BCFW's dual; the dual value is ``ell - lam/2 ||w||^2``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from .data import ChainData, chain_data
from .dual_oracle import _unary_ids
from .forward_backward import chain_marginals
from .model import ChainModel
from .viterbi import unary_dense

__all__ = ["ChainDualPoint", "chain_dual_data", "require_chain_marginals"]


def require_chain_marginals(model: Any, solver: str) -> None:
    """Raise a clear error unless ``model`` is a :class:`~.model.ChainModel` whose
    problem is ChainModel's (the expectation kernels compute its feature map and Hamming
    loss themselves)."""
    if isinstance(model, ChainModel):
        cls = type(model)
        changed = [name for name in ("joint_feature", "joint_feature_sparse", "psi", "loss",
                                     "loss_augmented_decode")
                   if getattr(cls, name) is not getattr(ChainModel, name)]
        if not changed:
            return
        raise TypeError(
            f"StructuredSVM(solver='{solver}') computes ChainModel's own joint feature map "
            f"and Hamming loss in compiled kernels; {cls.__name__} overrides "
            f"{', '.join(changed)}, so it would train another problem.  Train it with a "
            "max-oracle solver (solver='bcfw', 'bcfw_pairwise', 'ssg', 'fw' or "
            "'cutting_plane'), which call its own methods.")
    name = type(model).__name__
    why = ("" if callable(getattr(model, "marginals", None))
           else f" {name} has no marginals(x, w, y_true) expectation oracle.")
    raise TypeError(
        f"StructuredSVM(solver='{solver}') works on label marginals factored on a chain "
        f"(forward-backward node and edge marginals), which ChainModel and its subclasses "
        f"provide; got {name}.{why} A new model needs the chain's joint feature map and "
        "marginals(x, w, y_true); otherwise train it with a max-oracle solver "
        "(solver='bcfw', 'ssg', 'fw' or 'cutting_plane').  MatchingModel has no tractable "
        "marginals (they need a permanent).")


@njit(cache=True, nogil=True)
def node_scores(Xf, If, offsets, lo, L, K, F, uses_ids, w, out):  # pragma: no cover
    """``out[t, k]``: unary score plus the start bias (t = 0) and the end bias (t = L-1)."""
    if uses_ids:
        _unary_ids(If, offsets, K, F, lo, L, w, out)
    else:
        unary_dense(Xf[lo:lo + L], w, K, out)
    o = K * F
    for k in range(K):
        out[0, k] += w[o + k]
        out[L - 1, k] += w[o + K + k]


@njit(cache=True, nogil=True)
def transitions(w, K, F, out):  # pragma: no cover - compiled
    """``out[a, b] = w`` of the transition ``y_t = a, y_{t+1} = b``."""
    o = K * F + 2 * K
    for a in range(K):
        for b in range(K):
            out[a, b] = w[o + a + K * b]


@njit(cache=True, nogil=True)
def add_expected_features(Xf, If, offsets, lo, L, K, F, uses_ids, mu, T, scale,
                          w):  # pragma: no cover - compiled
    """``w += scale * E phi(x_i, y)`` for node marginals ``mu`` (L, K) and transition
    marginals ``T`` (K, K) of one example (tokens ``lo .. lo + L``)."""
    for t in range(L):
        for k in range(K):
            c = scale * mu[t, k]
            if c == 0.0:
                continue
            base = k * F
            if uses_ids:
                for j in range(If.shape[1]):
                    v = If[lo + t, j]
                    if v != 0:
                        w[base + offsets[j] + v - 1] += c
            else:
                for f in range(F):
                    w[base + f] += c * Xf[lo + t, f]
    _add_chain_terms(lo, L, K, F, mu, T, scale, w)


@njit(cache=True, nogil=True)
def _add_chain_terms(lo, L, K, F, mu, T, scale, w):  # pragma: no cover - compiled
    """The start, end and transition part of :func:`add_expected_features`."""
    o = K * F
    for k in range(K):
        w[o + k] += scale * mu[0, k]
        w[o + K + k] += scale * mu[L - 1, k]
    for a in range(K):
        for b in range(K):
            w[o + 2 * K + a + K * b] += scale * T[a, b]


@njit(cache=True, nogil=True)
def marginals_of(Xf, If, offsets, off, Yf, K, F, uses_ids, w, theta, theta_e, eta, augment,
                 mu, T, logz, theta_out, theta_e_out, Lmax, start, stop
                 ):  # pragma: no cover - compiled
    """Marginals (and log-partitions ``logz``) of examples ``start .. stop - 1`` under
    ``theta + eta * (scores at w [+ loss])``: the entropic prox step of the extragradient
    method (``eta = 0``: of ``theta`` itself).  Those log-potentials are also written to
    ``theta_out``/``theta_e_out`` unless these have no rows."""
    s = np.empty((Lmax, K))
    node = np.empty((Lmax, K))
    tr = np.empty((K, K))
    edge = np.empty((K, K))
    empty = np.empty((0, K, K))
    keep = theta_out.shape[0] > 0
    transitions(w, K, F, tr)
    for i in range(start, stop):
        lo = off[i]
        L = off[i + 1] - lo
        if eta != 0.0:
            node_scores(Xf, If, offsets, lo, L, K, F, uses_ids, w, s)
        for t in range(L):
            for k in range(K):
                g = 0.0
                if eta != 0.0:
                    g = s[t, k]
                    if augment and k != Yf[lo + t]:
                        g += 1.0 / L
                node[t, k] = theta[lo + t, k] + eta * g
        for a in range(K):
            for b in range(K):
                edge[a, b] = theta_e[i, a, b] + eta * tr[a, b]
        logz[i] = chain_marginals(node[:L], edge, mu[lo:lo + L], empty, T[i])
        if keep:
            for t in range(L):
                for k in range(K):
                    theta_out[lo + t, k] = node[t, k]
            for a in range(K):
                for b in range(K):
                    theta_e_out[i, a, b] = edge[a, b]


@njit(cache=True, nogil=True)
def dual_image(Xf, If, offsets, off, Yf, K, F, uses_ids, mu, T, d):  # pragma: no cover
    """``(sum_i E phi_i, sum_i E L_i)`` of the marginals (a fresh sum, no drift)."""
    n = off.size - 1
    out = np.zeros(d)
    loss = 0.0
    # attribute ids: the unary part is summed feature-major (a feature's K labels in one
    # or two cache lines, not K lines F apart: much faster once the weights outgrow the
    # cache) and put label-major at the end; every coordinate gets the same terms in
    # the same order as add_expected_features would give it
    # (benchmarks/README.md, "Measurements behind code choices")
    fm = np.zeros(K * F if uses_ids else 0)
    for i in range(n):
        lo = off[i]
        L = off[i + 1] - lo
        if uses_ids:
            for t in range(L):
                for j in range(If.shape[1]):
                    v = If[lo + t, j]
                    if v != 0:
                        base = (offsets[j] + v - 1) * K
                        for k in range(K):
                            c = mu[lo + t, k]
                            if c != 0.0:
                                fm[base + k] += c
            _add_chain_terms(0, L, K, F, mu[lo:lo + L], T[i], 1.0, out)
        else:
            add_expected_features(Xf, If, offsets, lo, L, K, F, uses_ids, mu[lo:lo + L],
                                  T[i], 1.0, out)
        wrong = 0.0
        for t in range(L):
            yt = Yf[lo + t]
            wrong += 1.0 - (mu[lo + t, yt] if 0 <= yt < K else 0.0)
        loss += wrong / L
    if uses_ids:
        for f in range(F):
            for k in range(K):
                out[k * F + f] = fm[f * K + k]
    return out, loss


class ChainDualPoint:
    """A dual point of the chain SSVM as log-potentials, its marginals and its image.

    Parameters
    ----------
    data : ChainData
    lam : float
    refresh : bool, default True
        Compute the marginals of the uniform start (a pass); False leaves ``mu`` and
        ``T`` to the caller.
    """

    def __init__(self, data: ChainData, lam: float, refresh: bool = True) -> None:
        self.data = data
        self.lam = float(lam)
        N, n, K = int(data.off[-1]), data.n, data.K
        self.theta = np.zeros((N, K))  # uniform duals
        self.theta_e = np.zeros((n, K, K))
        self.mu = np.empty((N, K))
        self.T = np.empty((n, K, K))
        # phi(x_i, y_i) summed: the marginals of the true labellings (one-hot)
        onehot = np.zeros((N, K))
        onehot[np.arange(N), data.Yf] = 1.0
        Tt = np.zeros((n, K, K))
        L = np.diff(data.off)
        ex = np.repeat(np.arange(n), L)
        inner = np.flatnonzero(np.diff(ex) == 0)  # token t with t + 1 in the same example
        np.add.at(Tt, (ex[inner], data.Yf[inner], data.Yf[inner + 1]), 1.0)
        self.phi_true, _ = self._image(onehot, Tt)
        if refresh:
            self.refresh()

    def like(self) -> ChainDualPoint:
        """A point at the uniform potentials with copies of these marginals (no pass over
        the data: ``phi_true`` is shared)."""
        new = object.__new__(ChainDualPoint)
        new.data, new.lam, new.phi_true = self.data, self.lam, self.phi_true
        new.theta, new.theta_e = np.zeros_like(self.theta), np.zeros_like(self.theta_e)
        new.mu, new.T = self.mu.copy(), self.T.copy()
        return new

    def _image(self, mu: np.ndarray, T: np.ndarray) -> tuple[np.ndarray, float]:
        d = self.data
        return dual_image(d.Xf, d.If, d.offsets, d.off, d.Yf, d.K, d.F, d.uses_ids, mu, T, d.d)

    def marginals(self, w: np.ndarray | None = None, eta: float = 0.0,
                  mu: np.ndarray | None = None, T: np.ndarray | None = None,
                  logz: np.ndarray | None = None,
                  theta_out: tuple[np.ndarray, np.ndarray] | None = None,
                  start: int = 0, stop: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Marginals of ``theta + eta * (loss-augmented scores at w)`` (into ``mu``, ``T``;
        the log-partitions into ``logz``, those log-potentials into ``theta_out``), of the
        examples ``start .. stop - 1`` (default all; the other rows are left as they are)."""
        d = self.data
        mu = np.empty_like(self.mu) if mu is None else mu
        T = np.empty_like(self.T) if T is None else T
        w = np.zeros(d.d) if w is None else w
        logz = np.empty(d.n) if logz is None else logz
        if theta_out is None:
            theta_out = (np.empty((0, d.K)), np.empty((0, d.K, d.K)))
        marginals_of(d.Xf, d.If, d.offsets, d.off, d.Yf, d.K, d.F, d.uses_ids, w, self.theta,
                     self.theta_e, float(eta), True, mu, T, logz, theta_out[0], theta_out[1],
                     d.Lmax, int(start), d.n if stop is None else int(stop))
        return mu, T

    def refresh(self) -> None:
        """Marginals of the current potentials."""
        self.marginals(mu=self.mu, T=self.T)

    def image(self, mu: np.ndarray | None = None, T: np.ndarray | None = None
              ) -> tuple[np.ndarray, float, float]:
        """``(w, ell, dual value)`` of marginals (default: the current ones)."""
        mu = self.mu if mu is None else mu
        T = self.T if T is None else T
        n = self.data.n
        e_phi, e_loss = self._image(mu, T)
        w = (self.phi_true - e_phi) / (self.lam * n)
        ell = e_loss / n
        return w, ell, ell - 0.5 * self.lam * float(w @ w)


def chain_dual_data(model: Any, X: Any, Y: Any, solver: str) -> ChainData:
    """The flattened chain data set, after checking the model has marginals."""
    require_chain_marginals(model, solver)
    return chain_data(model, X, Y)
