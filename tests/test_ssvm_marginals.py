"""Expectation oracles (forward-backward, softmax) against brute-force enumeration.

The reference sums over every labelling in 60-digit decimal arithmetic from the
joint feature map (exact products of the float inputs), so it does not share
the kernels' log-space rounding.
"""

from __future__ import annotations

import decimal
import itertools

import numpy as np
import pytest

from frankwolfe.applications.structured_svm import (
    ChainModel,
    MatchingModel,
    MulticlassModel,
    make_chain,
)

D = decimal.Decimal


def _brute(model, x, w, y_true, n_labels, L):
    """Node/edge marginals and log Z by enumeration, in 60-digit decimals."""
    ctx = decimal.Context(prec=60)
    wd = [D(float(v)) for v in w]
    labs, logs = [], []
    for y in itertools.product(range(n_labels), repeat=L):
        y = np.array(y)
        phi = model.joint_feature(x, y)
        phi = phi.toarray().ravel() if hasattr(phi, "toarray") else np.asarray(phi)
        nz = np.flatnonzero(phi)
        s = D(0)
        for j in nz:
            s = ctx.add(s, ctx.multiply(wd[j], D(float(phi[j]))))
        if y_true is not None:
            wrong = int(np.count_nonzero(y != y_true))
            s = ctx.add(s, ctx.divide(D(wrong), D(L)))
        labs.append(y)
        logs.append(s)
    top = max(logs)
    weights = [ctx.exp(ctx.subtract(s, top)) for s in logs]
    Z = sum(weights, D(0))
    node = np.zeros((L, n_labels))
    edge = np.zeros((max(L - 1, 0), n_labels, n_labels))
    nodeD = [[D(0)] * n_labels for _ in range(L)]
    edgeD = {}
    for y, wt in zip(labs, weights):
        p = ctx.divide(wt, Z)
        for t in range(L):
            nodeD[t][y[t]] += p
        for t in range(L - 1):
            key = (t, y[t], y[t + 1])
            edgeD[key] = edgeD.get(key, D(0)) + p
    for t in range(L):
        for k in range(n_labels):
            node[t, k] = float(nodeD[t][k])
    for (t, a, b), p in edgeD.items():
        edge[t, a, b] = float(p)
    return node, edge, float(top + ctx.ln(Z))


def _random_case(rng, uses_ids):
    L = int(rng.integers(1, 7))
    K = int(rng.integers(1, 5))
    if uses_ids:
        sizes = (1, 3, 2)
        model = ChainModel(K, sizes)
        x = np.column_stack([np.ones(L, dtype=np.int64)] +
                            [rng.integers(0, s + 1, size=L) for s in sizes[1:]])
    else:
        model = ChainModel(K, 3)
        x = rng.normal(size=(L, 3))
    w = rng.normal(size=model.size_joint_feature)
    y_true = rng.integers(0, K, size=L)
    return model, x, w, y_true, L, K


@pytest.mark.parametrize("uses_ids", [False, True])
@pytest.mark.parametrize("scale", [1.0, 1e3])
def test_chain_marginals_match_enumeration(uses_ids, scale):
    rng = np.random.default_rng(11 if uses_ids else 12)
    for _ in range(12):
        model, x, w, y_true, L, K = _random_case(rng, uses_ids)
        w = w * scale  # scores of order +-1e3 at scale 1e3: log-space stability
        for yt in (None, y_true):
            got = model.marginals(x, w, yt)
            node, edge, logz = _brute(model, x, w, yt, K, L)
            assert np.all(np.isfinite(got.node)) and np.all(np.isfinite(got.edge))
            np.testing.assert_allclose(got.node, node, rtol=0, atol=1e-12)
            np.testing.assert_allclose(got.edge, edge, rtol=0, atol=1e-12)
            # log Z carries the rounding of scores of size |log Z|: relative tolerance
            assert abs(got.log_partition - logz) <= 1e-12 * max(1.0, abs(logz))


def test_chain_marginals_extreme_scores_stay_finite():
    # every labelling but a few underflows: exact zeros, no NaN, rows still sum to 1
    model = ChainModel(4, 2)
    rng = np.random.default_rng(3)
    w = rng.normal(size=model.size_joint_feature) * 1e5
    x = rng.normal(size=(6, 2))
    got = model.marginals(x, w)
    assert np.all(np.isfinite(got.node)) and np.isfinite(got.log_partition)
    np.testing.assert_allclose(got.node.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.edge.sum(axis=(1, 2)), 1.0, rtol=0, atol=1e-12)
    # the marginals concentrate on the Viterbi labelling
    np.testing.assert_array_equal(got.node.argmax(axis=1), model.decode(x, w))


def test_multiclass_marginals_match_enumeration():
    rng = np.random.default_rng(5)
    model = MulticlassModel(4, 3)
    for scale in (1.0, 1e3):
        x = rng.normal(size=3)
        w = rng.normal(size=model.size_joint_feature) * scale
        for yt in (None, 2):
            got = model.marginals(x, w, yt)
            s = (w.reshape(4, 3) @ x).astype(object)
            logs = [D(float(v)) + (D(int(k != yt)) if yt is not None else D(0))
                    for k, v in enumerate(s)]
            top = max(logs)
            ex = [(v - top).exp() for v in logs]
            Z = sum(ex, D(0))
            np.testing.assert_allclose(got.node[0], [float(e / Z) for e in ex], rtol=0,
                                       atol=1e-12)
            assert got.edge is None
            logz = float(top + Z.ln())
            assert abs(got.log_partition - logz) <= 1e-12 * max(1.0, abs(logz))


def test_models_without_marginals_say_so():
    with pytest.raises(NotImplementedError, match="permanent"):
        MatchingModel(2).marginals(np.zeros((2, 2, 2)), np.zeros(2))


def test_chain_marginals_bad_input():
    model = ChainModel(3, 2)
    X, _ = make_chain(1, n_states=3, n_features=2, random_state=0)
    with pytest.raises(ValueError, match="w"):
        model.marginals(X[0], np.zeros(5))


@pytest.mark.parametrize("scale", [1.0, 1e3])
def test_both_forward_backward_paths_match_enumeration(scale):
    """The probability-space fast path and the log-space path, each against enumeration;
    at scores of +-1e3 the fast path must hand over to log space on some chains."""
    from frankwolfe.applications.structured_svm.models.chain.forward_backward import (
        _marginals_prob,
        chain_marginals_log,
    )

    rng = np.random.default_rng(21)
    declined = 0
    for _ in range(10):
        model, x, w, y_true, L, K = _random_case(rng, False)
        w = w * scale
        node, trans = model.log_potentials(x, w, y_true)
        ref_node, ref_edge, ref_logz = _brute(model, x, w, y_true, K, L)
        for kernel in ("prob", "log"):
            nm, em, es = np.empty((L, K)), np.empty((max(L - 1, 0), K, K)), np.empty((K, K))
            if kernel == "prob":
                ok, logz = _marginals_prob(node, trans, nm, em, es)
                if not ok:
                    declined += 1
                    continue
            else:
                logz = chain_marginals_log(node, trans, nm, em, es)
            np.testing.assert_allclose(nm, ref_node, rtol=0, atol=1e-12)
            np.testing.assert_allclose(em, ref_edge, rtol=0, atol=1e-12)
            np.testing.assert_allclose(es, ref_edge.sum(axis=0), rtol=0, atol=1e-11)
            assert abs(logz - ref_logz) <= 1e-12 * max(1.0, abs(ref_logz))
    if scale == 1.0:
        assert declined == 0
    else:
        assert declined > 0
