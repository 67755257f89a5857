"""Synthetic chain data for demos and fast tests."""

from __future__ import annotations

import numpy as np

from frankwolfe._numbers import check_real, check_whole, is_real, is_whole
from frankwolfe._random import as_generator

__all__ = ["make_chain"]


def make_chain(
    n_samples: int,
    n_states: int = 3,
    n_features: int = 5,
    *,
    length: tuple[int, int] = (3, 8),
    noise: float = 1.0,
    n_templates: int | None = None,
    random_state: int | np.random.Generator | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Random labelled sequences from a hidden Markov model.

    Labels follow a Markov chain with a random (Dirichlet) start distribution
    and transition matrix.  Each label has its own emission model:

    * dense (``n_templates=None``): ``x_t = mu[y_t] + noise * N(0, I)`` with
      random prototypes ``mu`` of length ``n_features``; use
      ``ChainModel(n_states, n_features)``;
    * attribute ids (``n_templates = m``): column ``j`` of ``x_t`` is an id in
      ``0..n_features`` (0 = absent) drawn from a label-dependent categorical
      whose peakiness decreases with ``noise``; use
      ``ChainModel(n_states, [n_features] * m)``.

    Parameters
    ----------
    n_samples : int
        Number of sequences.
    n_states, n_features : int
        Labels ``K``; features per position (dense) or ids per template.
    length : (int, int)
        Inclusive range of the sequence lengths.
    noise : float
        Emission noise (> 0 makes the labels hard to recover exactly).
    n_templates : int, optional
        Produce attribute ids with this many columns instead of dense features.
    random_state : int or numpy Generator, optional
        Seed; every random choice comes from it.

    Returns
    -------
    X, y : lists of ndarray
        Sequences (float64 ``(L, n_features)`` or int32 ``(L, n_templates)``)
        and int64 labellings.
    """
    for name, v in (("n_samples", n_samples), ("n_states", n_states),
                    ("n_features", n_features)):
        check_whole(v, name, 1, "make_chain")
    wanted = ("make_chain: `length` must be (min, max) whole numbers with 1 <= min <= max, "
              f"got {length!r}")
    if isinstance(length, (str, bytes)) or np.ndim(length) != 1 \
            or not all(is_real(v) for v in length):
        raise TypeError(wanted)
    if len(length) != 2 or not all(is_whole(v, 1) for v in length) \
            or not length[0] <= length[1]:
        raise ValueError(wanted)
    lo_len, hi_len = int(length[0]), int(length[1])
    noise = check_real(noise, "noise", "make_chain", low=0)
    if n_templates is not None:
        check_whole(n_templates, "n_templates", 1, "make_chain")
    rng = as_generator(random_state)
    K = int(n_states)
    start = rng.dirichlet(np.ones(K))
    trans = rng.dirichlet(np.ones(K) * 0.5, size=K)
    lengths = rng.integers(lo_len, hi_len + 1, size=n_samples)
    # labels: inverse-CDF sampling, vectorized over sequences position by position
    y_all = np.zeros((n_samples, hi_len), dtype=np.int64)
    u = rng.random((n_samples, hi_len))
    y_all[:, 0] = np.minimum(np.searchsorted(np.cumsum(start), u[:, 0]), K - 1)
    cum = np.cumsum(trans, axis=1)
    for t in range(1, hi_len):
        rows = cum[y_all[:, t - 1]]
        y_all[:, t] = np.minimum((rows < u[:, t:t + 1]).sum(axis=1), K - 1)
    ys = [y_all[i, :lengths[i]].copy() for i in range(n_samples)]
    total = int(lengths.sum())
    y_flat = np.concatenate(ys)
    if n_templates is None:
        mu = rng.normal(size=(K, n_features))
        x_flat = mu[y_flat] + noise * rng.normal(size=(total, n_features))
    else:
        m = int(n_templates)
        # per (label, template) categorical over ids 0..n_features, sharpened as noise -> 0
        logits = rng.normal(size=(K, m, n_features + 1)) / max(noise, 1e-3)
        probs = np.exp(logits - logits.max(axis=2, keepdims=True))
        cdf = np.cumsum(probs / probs.sum(axis=2, keepdims=True), axis=2)
        u = rng.random((total, m, 1))
        x_flat = np.minimum((cdf[y_flat] < u).sum(axis=2), n_features).astype(np.int32)
    X = np.split(x_flat, np.cumsum(lengths)[:-1])
    return X, ys
