"""ActiveSet: storage, vectorized away query, steps, drops, drift control.

Every check compares with a brute-force recomputation from the atoms
(``sum w_a a.to_dense()`` and ``a.dot(g)`` one atom at a time), never with
the active set's own earlier output.
"""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import frankwolfe.atom_store as active_set_module
from frankwolfe import ActiveSet, Atom, ShapeError


def brute_x(S: ActiveSet) -> np.ndarray:
    x = np.zeros(S.shape)
    for a, w in S:
        x += w * a.to_dense()
    return x


def e(i: int, n: int, sign: float = 1.0, sparse: bool = True) -> Atom:
    if sparse:
        return Atom.sparse([i], [sign], n, key=("e", i, sign))
    v = np.zeros(n)
    v[i] = sign
    return Atom(v, key=("e", i, sign))


def random_atom(rng: np.random.Generator, n: int, sparse: bool) -> Atom:
    nnz = int(rng.integers(1, n + 1))
    idx = rng.choice(n, nnz, replace=False)
    val = rng.standard_normal(nnz)
    if sparse:
        return Atom.sparse(idx, val, n)
    v = np.zeros(n)
    v[idx] = val
    return Atom(v)


def test_construction_and_x():
    n = 4
    atoms = [e(0, n), e(2, n), e(0, n)]  # the duplicate merges
    S = ActiveSet(atoms, [0.25, 0.5, 0.25])
    assert len(S) == 2
    assert S.weight(("e", 0, 1.0)) == pytest.approx(0.5)
    np.testing.assert_allclose(S.x, [0.5, 0, 0.5, 0])
    assert ("e", 2, 1.0) in S and e(2, n) in S and ("e", 1, 1.0) not in S
    # default weights are uniform; plain arrays are accepted
    T = ActiveSet([np.array([1.0, 0.0]), np.array([0.0, 1.0])])
    np.testing.assert_allclose(T.x, [0.5, 0.5])


@pytest.mark.parametrize(
    "atoms, weights, exc, words",
    [
        ([e(0, 3), e(1, 3)], [1.0], ShapeError, ["weights", "(2,)", "(1,)"]),
        ([e(0, 3), e(1, 3)], [1.5, -0.5], ValueError, ["weights", ">= 0"]),
        ([e(0, 3), e(1, 3)], [0.5, 0.6], ValueError, ["weights", "sum to 1", "1.1"]),
        ([e(0, 3), e(1, 4)], None, ShapeError, ["(4,)", "(3,)"]),
        ([], [1.0], ShapeError, ["weights"]),
    ],
)
def test_bad_input(atoms, weights, exc, words):
    with pytest.raises(exc) as info:
        ActiveSet(atoms, weights)
    for w in words:
        assert w in str(info.value)


@pytest.mark.parametrize("first_sparse", [True, False])
def test_scores_match_brute_force_mixed_atoms(first_sparse):
    rng = np.random.default_rng(0)
    n = 12
    atoms = [random_atom(rng, n, first_sparse)] + [random_atom(rng, n, bool(s))
                                                   for s in rng.integers(0, 2, 9)]
    S = ActiveSet(atoms, rng.dirichlet(np.ones(10)))
    g = rng.standard_normal(n)
    brute = np.array([a.dot(g) for a in S.atoms])
    np.testing.assert_allclose(S.scores(g), brute, rtol=1e-12, atol=1e-12)
    i, a, s = S.away_atom(g)
    assert a.key == S.atoms[int(np.argmax(brute))].key and s == pytest.approx(brute.max())
    j, b, t = S.local_vertex(g)
    assert b.key == S.atoms[int(np.argmin(brute))].key and t == pytest.approx(brute.min())
    np.testing.assert_allclose(S.x, brute_x(S), atol=1e-14)
    with pytest.raises(ShapeError, match="gradient"):
        S.scores(np.zeros(n + 1))


def test_frank_wolfe_step_full_and_partial():
    n = 5
    S = ActiveSet([e(0, n), e(1, n)], [0.5, 0.5])
    S.frank_wolfe_step(e(3, n), 0.2)
    np.testing.assert_allclose(S.x, [0.4, 0.4, 0, 0.2, 0])
    np.testing.assert_allclose(S.x, brute_x(S))
    S.frank_wolfe_step(e(1, n), 0.5)  # an active atom gains weight, no new slot
    assert len(S) == 3
    np.testing.assert_allclose(S.x, [0.2, 0.7, 0, 0.1, 0])
    S.frank_wolfe_step(e(4, n), 1.0)
    assert S.keys == [("e", 4, 1.0)] and S.weights.tolist() == [1.0]
    np.testing.assert_array_equal(S.x, [0, 0, 0, 0, 1.0])


@pytest.mark.parametrize("sparse", [True, False])
def test_away_drop_step_removes_atom_exactly(sparse):
    n = 3
    S = ActiveSet([e(0, n, sparse=sparse), e(1, n, sparse=sparse), e(2, n, sparse=sparse)],
                  [0.3, 0.5, 0.2])
    alpha = S.weight(("e", 0, 1.0))
    dropped = S.away_step(("e", 0, 1.0), alpha / (1 - alpha), drop=True)
    assert dropped and ("e", 0, 1.0) not in S and len(S) == 2
    # closed form: the remaining weights are rescaled by 1 / (1 - alpha)
    assert S.weight(("e", 1, 1.0)) == pytest.approx(0.5 / 0.7, rel=1e-14)
    assert S.weight(("e", 2, 1.0)) == pytest.approx(0.2 / 0.7, rel=1e-14)
    np.testing.assert_allclose(S.x, [0, 0.5 / 0.7, 0.2 / 0.7], atol=1e-15)
    np.testing.assert_allclose(S.x, brute_x(S), atol=1e-15)
    # a non-drop away step keeps the atom
    assert not S.away_step(("e", 1, 1.0), 0.1)
    assert len(S) == 2 and abs(S.weights.sum() - 1) < 1e-15


def test_pairwise_step_and_drop():
    n = 4
    S = ActiveSet([e(0, n), e(1, n)], [0.6, 0.4])
    assert not S.pairwise_step(e(2, n), ("e", 0, 1.0), 0.25)
    np.testing.assert_allclose(S.x, [0.35, 0.4, 0.25, 0])
    assert S.pairwise_step(e(3, n), ("e", 1, 1.0), 0.4, drop=True)
    assert sorted(S.keys) == [("e", 0, 1.0), ("e", 2, 1.0), ("e", 3, 1.0)]
    np.testing.assert_allclose(S.x, [0.35, 0, 0.25, 0.4])
    np.testing.assert_allclose(S.x, brute_x(S))
    with pytest.raises(ValueError, match="exceeds the weight"):
        S.pairwise_step(e(1, n), ("e", 0, 1.0), 0.5)
    with pytest.raises(ValueError, match="gamma"):
        S.pairwise_step(e(1, n), ("e", 0, 1.0), -0.1)
    with pytest.raises(KeyError, match="not in the active set"):
        S.away_step(("e", 1, 1.0), 0.1)


def test_sparsify_and_resum():
    n = 4
    S = ActiveSet([e(0, n), e(1, n), e(2, n)], [1 - 2e-17 - 1e-3, 2e-17, 1e-3])
    assert S.sparsify(1e-15) == 1
    assert ("e", 1, 1.0) not in S
    assert abs(S.weights.sum() - 1) < 1e-15
    np.testing.assert_allclose(S.x, brute_x(S), atol=1e-16)
    # drift is undone by resum: corrupt the kept x and the weights' sum
    S._x += 1e-9
    S._w[:2] *= 1 + 1e-9
    S.resum()
    assert abs(S.weights.sum() - 1) < 1e-15
    np.testing.assert_allclose(S.x, brute_x(S), atol=1e-16)
    # never empties the set
    T = ActiveSet([e(0, n), e(1, n)], [0.5, 0.5])
    assert T.sparsify(0.9) == 1 and len(T) == 1 and T.weights[0] == 1.0


def test_sparse_storage_compaction(monkeypatch):
    monkeypatch.setattr(active_set_module, "_MIN_COMPACT", 1)
    rng = np.random.default_rng(3)
    n = 30
    atoms = [random_atom(rng, n, True) for _ in range(40)]
    S = ActiveSet(atoms, rng.dirichlet(np.ones(40)))
    g = rng.standard_normal(n)
    for a in atoms[::2] + atoms[1:20:2]:
        S.remove(a)
        S.renormalize()
        np.testing.assert_allclose(S.scores(g), [b.dot(g) for b in S.atoms], atol=1e-12)
        np.testing.assert_allclose(S.x, brute_x(S), atol=1e-12)
    # dead entries were compacted away: storage is far below the 40 atoms' total
    assert S._used - S._dead == sum(a.nnz for a in S.atoms)
    assert S._used < sum(a.nnz for a in atoms) // 2


OPS = st.lists(
    st.tuples(st.sampled_from(["fw", "away", "pairwise", "add_remove"]),
              st.integers(0, 10**6), st.floats(0.0, 1.0), st.booleans()),
    min_size=1, max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 8), sparse=st.booleans(), ops=OPS, compact=st.booleans())
# a subnormal weight that underflows to 0 when renormalize divides by a sum of 2
@example(n=1, sparse=False, ops=[("pairwise", 1, 5e-324, False), ("add_remove", 0, 1.0, False)],
         compact=False)
def test_random_operations_keep_invariants(n, sparse, ops, compact):
    old = active_set_module._MIN_COMPACT
    active_set_module._MIN_COMPACT = 1 if compact else old
    try:
        vertices = [e(i, n, s, sparse) for i in range(n) for s in (1.0, -1.0)]
        S = ActiveSet([vertices[0]])
        for kind, pick, frac, at_max in ops:
            v = vertices[pick % len(vertices)]
            a = S.atoms[pick % len(S)]
            wa = S.weight(a)
            if kind == "fw":
                S.frank_wolfe_step(v, 1.0 if at_max else frac)
            elif kind == "away" and len(S) > 1 and np.isfinite(S.away_gamma_max(S.slot(a))):
                gmax = S.away_gamma_max(S.slot(a))
                rest = sum(w for b, w in S if b.key != a.key)  # 1 - w_a, without cancellation
                assert gmax == pytest.approx(wa / rest, rel=1e-12)
                S.away_step(a, gmax if at_max else frac * gmax, drop=at_max)
                assert (a in S) != at_max or S.weight(a) == 0.0
            elif kind == "pairwise":
                S.pairwise_step(v, a, wa if at_max else frac * wa, drop=at_max)
            elif kind == "add_remove":
                S.add(v, frac)
                S.renormalize()
            w = S.weights
            assert len(S) >= 1 and np.all(w > 0)
            assert abs(w.sum() - 1.0) <= 1e-12
            assert len(set(S.keys)) == len(S)
            ref = brute_x(S)
            assert np.linalg.norm(S.x - ref) <= 1e-10 * max(1.0, np.linalg.norm(ref))
            g = np.cos(np.arange(n) * (pick % 7 + 1.0))
            np.testing.assert_allclose(S.scores(g), [b.dot(g) for b in S.atoms], atol=1e-12)
    finally:
        active_set_module._MIN_COMPACT = old


def test_keep_x_false_recomputes_and_copy_is_independent():
    n = 3
    S = ActiveSet([e(0, n), e(1, n)], [0.5, 0.5], keep_x=False)
    S.frank_wolfe_step(e(2, n), 0.5)
    np.testing.assert_allclose(S.x, [0.25, 0.25, 0.5])
    T = S.copy()
    T.frank_wolfe_step(e(0, n), 1.0)
    assert len(S) == 3 and len(T) == 1
    stats = S.check()
    assert stats["sum_error"] < 1e-15 and stats["x_error"] < 1e-15 and stats["min_weight"] > 0


def test_single_atom_away_step_is_a_no_op_and_long_away_steps_stay_exact():
    n = 3
    S = ActiveSet([e(0, n)])
    assert not S.away_step(("e", 0, 1.0), 5.0) and S.weights.tolist() == [1.0]
    # a dominant atom leaves through a very long away step (gamma_max = 1e14):
    # the point must be the remaining atoms' combination, not rounding noise * 1e14
    T = ActiveSet([e(0, n), e(1, n), e(2, n)], [1 - 1e-14, 0.25e-14, 0.75e-14])
    gmax = T.away_gamma_max(T.slot(("e", 0, 1.0)))
    assert gmax == pytest.approx(1e14, rel=1e-12)  # w_a / (w_b + w_c)
    assert T.away_step(("e", 0, 1.0), gmax, drop=True)
    np.testing.assert_allclose(T.x, [0, 0.25, 0.75], rtol=1e-6)
    np.testing.assert_allclose(T.x, brute_x(T), atol=1e-15)


def test_foreign_atoms_keep_a_key_that_names_their_vector():
    """A warm start's atoms under keys another domain gave them: the same key with the
    same vector merges with them; with another vector it comes in beside them, and the
    original keys come back at the end where free."""
    S = ActiveSet([Atom.sparse([0], [5.0], 3, key=("e", 0, 1)),
                   Atom.sparse([1], [-5.0], 3, key=("e", 1, -1))], [0.5, 0.5], keep_x=True)
    S.mark_foreign()
    same = Atom.sparse([0], [5.0], 3, key=("e", 0, 1))
    S.frank_wolfe_step(same, 0.5)  # the same vertex: merged, two atoms
    assert len(S) == 2 and S.weight(("e", 0, 1)) == pytest.approx(0.75)
    other = Atom.sparse([1], [-20.0], 3, key=("e", 1, -1))  # the key's vertex here
    S.frank_wolfe_step(other, 0.5)
    assert len(S) == 3
    np.testing.assert_allclose(S.x, [1.875, -0.625 - 10.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(S.resum(), S.x, atol=1e-15)
    assert S.weight(("x0", ("e", 1, -1))) == pytest.approx(0.125)
    S.restore_foreign_keys()  # ("e", 1, -1) is taken by the new vertex: the old one keeps
    assert sorted(map(str, S.keys)) == sorted(map(str, [("e", 0, 1), ("e", 1, -1),
                                                        ("x0", ("e", 1, -1))]))


def test_equal_vectors_get_equal_keys_whatever_their_zeros():
    # -0.0 and 0.0, stored zeros or not, dense or sparse: one vector, one key; the
    # expected equality is the vectors' own (np.array_equal treats -0.0 as 0.0)
    forms = [
        Atom(np.array([1.0, 0.0, 0.0])),
        Atom(np.array([1.0, -0.0, 0.0])),
        Atom(np.array([1.0, -0.0, -0.0])),
        Atom.sparse([0], [1.0], 3),
        Atom.sparse([0, 1], [1.0, -0.0], 3),
        Atom.sparse([2, 0], [0.0, 1.0], 3),
    ]
    assert all(np.array_equal(a.to_dense(), forms[0].to_dense()) for a in forms)
    assert len({a.key for a in forms}) == 1
    others = [Atom(np.array([-1.0, 0.0, 0.0])), Atom(np.array([0.0, 1.0, 0.0])),
              Atom(np.array([1.0, 0.0])), Atom(np.array([[1.0, 0.0, 0.0]]))]
    assert len({a.key for a in [forms[0], *others]}) == 5


def test_an_atom_owns_copies_of_the_callers_arrays():
    v, idx, val = np.array([0.0, 2.0]), np.array([1], dtype=np.int64), np.array([3.0])
    dense, sparse = Atom(v), Atom.sparse(idx, val, 2)
    v[:], idx[:], val[:] = 5.0, 0, -1.0
    np.testing.assert_array_equal(dense.to_dense(), [0.0, 2.0])
    np.testing.assert_array_equal(sparse.to_dense(), [0.0, 3.0])


def test_an_unhashable_atom_key_is_refused_naming_the_key_and_the_lmo():
    import frankwolfe as fw

    with pytest.raises(TypeError, match=r"`key` must be hashable .*got list \[0, 1\]"):
        Atom(np.array([1.0, 0.0]), key=[0, 1])

    class ListKeys(fw.LMO):
        shape = (2,)

        def extreme_point(self, g):
            i = int(np.argmin(g))
            return Atom(np.eye(2)[i], key=["e", i])

    f = fw.QuadraticObjective(np.eye(2), -np.array([0.6, 0.4]))
    with pytest.raises(TypeError, match=r"ListKeys\(\)\.extreme_point built an atom with an "
                                        r"unhashable key: .*got list \['e', 0\]"):
        fw.minimize(f, ListKeys(), method="away", max_iter=50)


def test_an_unhashable_key_is_named_once_through_a_wrapping_oracle():
    """A CachedLMO around the user's oracle: the message names the oracle that built the
    atom, once (each LMO call wrapped it again)."""
    import frankwolfe as fw

    class ListKeys(fw.LMO):
        shape = (2,)

        def extreme_point(self, g):
            return Atom(np.eye(2)[int(np.argmin(g))], key=["e"])

    with pytest.raises(TypeError, match=r"^ListKeys\(\)\.extreme_point built") as info:
        fw.CachedLMO(ListKeys())(np.array([1.0, 0.0]))
    assert str(info.value).count("built an atom") == 1


def test_atom_nonzeros_are_the_dense_arrays_nonzeros():
    rng = np.random.default_rng(0)
    d = rng.standard_normal((3, 4))
    d[d < 0.3] = 0.0
    flat = np.flatnonzero(d)  # numpy's own answer
    for atom in (Atom(d), Atom.sparse(flat, d.reshape(-1)[flat], d.shape)):
        idx, val = atom.nonzeros()
        np.testing.assert_array_equal(idx, flat)
        np.testing.assert_array_equal(val, d.reshape(-1)[flat])
