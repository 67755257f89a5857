"""The shortcuts that keep the shared loop cheap on small problems take the same steps.

Issue #22 ("fast from the first call"): vanilla Frank-Wolfe skips the calls of its
variant (``Variant.plain``), a quadratic's tracker moves in one fused kernel and knows
whether its gradient is finite, the simplex and l1-ball oracles keep their atoms, and
the history stores a row as one tuple.  Each shortcut is checked against the path it
replaces, to the bit.  benchmarks/loop_overhead.py measures what they save.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.algorithms.frank_wolfe import _Vanilla
from frankwolfe.algorithms.loop import _all_finite, run_frank_wolfe
from frankwolfe.direction import Direction
from frankwolfe.lmo import _vertices
from frankwolfe.objectives.quadratic import QuadraticTracker
from frankwolfe.result import History


def _quadratic(n: int, seed: int = 0) -> fw.QuadraticObjective:
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((n, n))
    Q = M.T @ M / n
    return fw.QuadraticObjective(Q, -Q @ rng.dirichlet(np.ones(n)))


def _same(a: fw.Result, b: fw.Result) -> None:
    np.testing.assert_array_equal(a.x, b.x)
    assert (a.fun, a.gap, a.nit, a.status) == (b.fun, b.gap, b.nit, b.status)
    assert a.history.columns == b.history.columns
    for c in a.history.columns:
        if c != "time":
            np.testing.assert_array_equal(a.history[c], b.history[c])


class _NotPlain(_Vanilla):
    plain = False  # the engine calls the variant's methods


@pytest.mark.parametrize("step", [None, "agnostic", "adaptive"])
@pytest.mark.parametrize("domain", [fw.ProbabilitySimplex(), fw.UnitSimplex(0.5),
                                    fw.L1Ball(0.3), fw.Box(-1.0, 1.0)])
def test_plain_variant_takes_the_steps_of_the_generic_path(step, domain):
    f = _quadratic(12)
    kw = dict(step_size=step, options=fw.RunOptions(tol=0.0, max_iter=300))
    _same(run_frank_wolfe(f, domain, _Vanilla(), **kw),
          run_frank_wolfe(f, domain, _NotPlain(), **kw))


def _unfused(tracker: QuadraticTracker) -> QuadraticTracker:
    tracker._move_pair = lambda *args: False  # type: ignore[method-assign]
    return tracker


@pytest.mark.parametrize("kind", ["fw", "away", "pairwise", "pairwise-same-index", "zero"])
def test_fused_quadratic_move_rounds_as_the_separate_steps(kind):
    n = 9
    f = _quadratic(n, seed=1)
    rng = np.random.default_rng(2)
    x0 = rng.dirichlet(np.ones(n))
    e = [fw.Atom.vertex(i, 1.0, (n,), key=("e", i)) for i in range(n)]
    minus3 = fw.Atom.vertex(3, -0.5, (n,), key=("e", 3, -1))
    zero = fw.Atom.sparse([], [], (n,), key=("zero",))
    two = fw.Atom.sparse([1, 6], [0.25, 0.75], (n,), key="two")
    directions = {
        "fw": [Direction.frank_wolfe(e[4]), Direction.frank_wolfe(two)],
        "away": [Direction.away(e[2]), Direction.away(two)],
        "pairwise": [Direction.pairwise(e[0], e[5]), Direction.pairwise(two, e[6])],
        "pairwise-same-index": [Direction.pairwise(e[3], minus3)],
        "zero": [Direction.frank_wolfe(zero), Direction.pairwise(zero, e[1])],
    }[kind]
    fused, plain = f.tracker(x0), _unfused(f.tracker(x0))
    for step, d in enumerate(directions * 3):
        gamma = 0.05 + 0.1 * step
        fused.move(d, gamma)
        plain.move(d, gamma)
        np.testing.assert_array_equal(fused.x, plain.x)
        np.testing.assert_array_equal(fused.gradient(), plain.gradient())
        assert fused.value() == plain.value()
        assert fused.finite(*fused.value_and_gradient())


@pytest.mark.parametrize("c2", [0.0, 1e308])  # f overflows; then the gradient too
def test_fused_move_learns_what_the_finiteness_check_would_find(c2):
    n = 4
    f = fw.QuadraticObjective(np.eye(n), np.array([0.0, 0.0, c2, 0.0]))
    huge = fw.Atom.vertex(2, 1e308, (n,), key="huge")
    for tracker in (f.tracker(np.full(n, 0.25)), _unfused(f.tracker(np.full(n, 0.25)))):
        assert tracker.finite(*tracker.value_and_gradient())
        with np.errstate(over="ignore"):  # numpy's p + c warns, the fused kernel does not
            tracker.move(Direction.frank_wolfe(huge), 0.9)
        value, gradient = tracker.value_and_gradient()
        assert not tracker.finite(value, gradient)
        assert _all_finite(gradient) is (c2 == 0.0)


def test_tracker_slope_and_gradient_dot_x_are_the_loops_sums():
    f = _quadratic(7)
    x0 = np.full(7, 1 / 7)
    tracker = f.tracker(x0)
    generic = fw.Tracker(f, x0)
    g = tracker.gradient()
    assert tracker.gradient_dot_x(g) == generic.gradient_dot_x() == float(np.vdot(g, x0))
    d = Direction.frank_wolfe(fw.Atom.vertex(3, 1.0, (7,), key=("e", 3)))
    gdx = float(np.vdot(g, x0))
    assert tracker.slope(d, g, gdx) == generic.slope(d) == d.dot(g, gdx)


@pytest.mark.parametrize("n", [3, 5000])  # an entrywise check, then the dot product's
def test_finiteness_check_on_both_sides_of_the_size_switch(n):
    a = np.full(n, 1e200)  # the dot product overflows, the entries are finite
    assert _all_finite(a) and _all_finite(a.reshape(-1, 1))
    a[n // 2] = np.nan
    assert not _all_finite(a)
    a[n // 2] = -np.inf
    assert not _all_finite(a)
    assert _all_finite(np.zeros(0))


def test_simplex_and_l1_oracles_answer_with_the_same_atom():
    g = np.array([0.3, -1.0, 0.2, 2.0])
    simplex, ball = fw.ProbabilitySimplex(2.0), fw.L1Ball(1.5)
    v = simplex(g)
    assert simplex(g.copy()) is v
    assert v == fw.Atom.sparse([1], [2.0], (4,), key=("e", 1))
    np.testing.assert_array_equal(v.to_dense(), [0.0, 2.0, 0.0, 0.0])
    w = ball(g)
    assert ball(-g) is not w and ball(g) is w  # +-radius e_3 are two atoms
    np.testing.assert_array_equal(w.to_dense(), [0.0, 0.0, 0.0, -1.5])
    simplex.radius = 3.0  # a changed oracle answers with new atoms
    np.testing.assert_array_equal(simplex(g).to_dense(), [0.0, 3.0, 0.0, 0.0])
    assert simplex(g.reshape(2, 2)).shape == (2, 2)


def test_the_kept_atoms_are_bounded(monkeypatch):
    monkeypatch.setattr(_vertices, "MAX_KEPT", 3)
    lmo = fw.ProbabilitySimplex()
    for i in range(10):
        g = np.zeros(10)
        g[i] = -1.0
        assert lmo(g).indices[0] == i
    assert len(lmo._vertices.atoms) <= 3


def test_history_rows_by_position_and_by_name_keep_their_order():
    h = History(("a", "b"))
    h.append_values((0, 1.0))
    h.append_values((1, 2.0))
    h.append_row({"a": 2, "b": 3.0, "c": "x"})  # a new column: earlier rows get NaN
    h.append_values((3, 4.0))  # later ones too
    assert len(h) == 4 and h.columns == ["a", "b", "c"]
    np.testing.assert_array_equal(h["a"], [0, 1, 2, 3])
    assert list(h)[2] == {"a": 2, "b": 3.0, "c": "x"}
    assert [row["c"] for row in h][3] != [row["c"] for row in h][3]  # NaN
    with pytest.raises(ValueError, match="2 columns"):
        h.append_values((1, 2, 3))
    h.append_values((4, 5.0))
    again = pickle.loads(pickle.dumps(h))
    np.testing.assert_array_equal(again["b"], [1.0, 2.0, 3.0, 4.0, 5.0])
    assert len(h.to_dict()["c"]) == 5
