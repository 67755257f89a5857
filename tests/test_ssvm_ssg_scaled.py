"""SSG's scaled iterate (w = s v, lazy averages) against the plain dense update."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from frankwolfe import RunOptions
from frankwolfe.algorithms.averages import RunningAverage
from frankwolfe.applications.structured_svm import ChainModel, make_chain, ssg

# the module (the package exports the function under the same name)
ssg_module = importlib.import_module("frankwolfe.applications.structured_svm.solvers.ssg")


def _dense_ssg(model, X, Y, lam, passes, kind, seed):
    """The textbook O(d) step of BCFWstruct's solverSSG.m, with dense running averages."""
    rng = np.random.default_rng(seed)
    n, d = len(X), model.size_joint_feature
    w = np.zeros(d)
    avg = RunningAverage(kind, (w,)) if kind else None
    k = 0
    for _ in range(passes):
        for i in rng.integers(n, size=n):
            ystar = model.loss_augmented_decode(X[i], Y[i], w)
            idx, val = model.psi(X[i], Y[i], ystar)
            step = 1.0 / (k + 1)
            w *= 1.0 - step
            w[idx] += val * (step / lam)
            if avg is not None:
                avg.update((w,))
            k += 1
    return w, (np.array(avg.value()[0]) if avg is not None else None)


def _dense_chain(n, seed):
    X, Y = make_chain(n, n_states=3, n_features=4, random_state=seed)
    return X, Y, ChainModel(3, 4)


def _sparse_chain(n, seed):
    """Four shared feature columns plus 2 of 40 more per sequence, all continuous: an
    example's feature support is a small part of w (the oracle reads only that).
    (Continuous shared columns: no exact ties between labellings.  Where labellings tie
    exactly, e.g. integer attribute ids on weights still 0, rounding of either update
    decides the decoding and the two updates may part.)"""
    rng = np.random.default_rng(seed)
    X, Y = make_chain(n, n_states=3, n_features=6, random_state=seed)
    wide = []
    for x in X:
        z = np.zeros((x.shape[0], 44))
        z[:, :4] = x[:, :4]
        z[:, 4 + rng.choice(40, size=2, replace=False)] = x[:, 4:]
        wide.append(z)
    return wide, Y, ChainModel(3, 44)


def _close(a, b):
    return np.linalg.norm(a - b) <= 1e-10 * np.linalg.norm(b)


@pytest.mark.parametrize("kind", [None, "weighted", "uniform", "tail"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("renormalize", [1e-9, 0.5])
def test_scaled_ssg_equals_the_dense_update(kind, sparse, renormalize, monkeypatch):
    # sparse: few feature columns per sequence, so the oracle sees w only on its support;
    # renormalize 0.5 folds s into v every step or two (the path long runs take rarely)
    monkeypatch.setattr(ssg_module, "_RENORMALIZE", renormalize)
    X, Y, model = _sparse_chain(25, seed=2) if sparse else _dense_chain(25, seed=2)
    if sparse:  # the support is gathered, not the whole of w formed
        assert model.feature_support(X[0]).size <= model.size_joint_feature / 4
    lam = 0.02
    w_ref, avg_ref = _dense_ssg(model, X, Y, lam, 6, kind, seed=3)
    out = ssg(model, X, Y, lam, max_passes=6, averaging=kind or False, random_state=3)
    assert out["oracle_calls"] == 6 * 25
    assert _close(out["w"], w_ref)
    if kind is None:
        assert out["w_average"] is None
    else:
        assert _close(out["w_average"], avg_ref)


def test_scaled_ssg_reports_the_averages_after_every_pass():
    X, Y, model = _sparse_chain(20, seed=0)
    seen = []
    ssg(model, X, Y, 0.05, max_passes=4, averaging="tail", random_state=1,
        run_options=RunOptions(callback=lambda s: seen.append(np.array(s.x)) if s.k else None))
    for p, w in enumerate(seen, start=1):
        _, avg_ref = _dense_ssg(model, X, Y, 0.05, p, "tail", seed=1)
        assert _close(w, avg_ref)
