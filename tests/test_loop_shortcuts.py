"""The second round of shortcuts of the shared loop (issue #22, per-iteration overhead).

The oracle is asked without the finiteness check the tracker has just made, the
quadratic tracker's fused move skips numba's dispatch, a direction's image is one
subtraction, a vertex atom keeps its entry as Python numbers, and a method's history
columns go in as tuples.  Each is checked against the path it replaces, to the bit;
benchmarks/loop_overhead.py measures what they save.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.direction import Direction
from frankwolfe.lmo.base import LMO, finite_oracle
from frankwolfe.monitor import Monitor
from frankwolfe.objectives import quadratic
from frankwolfe.objectives.product_tracker import _pair_image
from frankwolfe.result import History


def _quadratic(n: int, seed: int = 0) -> fw.QuadraticObjective:
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((n, n))
    Q = M.T @ M / n
    return fw.QuadraticObjective(Q, -Q @ rng.dirichlet(np.ones(n)))


class _Counted(fw.ProbabilitySimplex):
    """An oracle with its own ``__call__``: the loop must go through it."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __call__(self, direction: np.ndarray) -> fw.Atom:
        self.calls += 1
        return super().__call__(direction)


class _Dense(fw.ProbabilitySimplex):
    """An ``extreme_point`` answering arrays: the loop must convert them."""

    def extreme_point(self, direction: np.ndarray) -> np.ndarray:
        return super().extreme_point(direction).to_dense()


def test_finite_oracle_skips_only_what_the_tracker_checked():
    simplex = fw.ProbabilitySimplex()
    with fw.debug(False):  # the suite runs in debug mode, users do not
        # the implementation itself, past the wrapper converting array-likes (the
        # tracker's gradient is a float array already)
        for lmo in (simplex, fw.L1Ball()):
            o = finite_oracle(lmo)
            assert o.__func__ is type(lmo).extreme_point.__wrapped__ and o.__self__ is lmo
        box = fw.Box(0.0, 1.0)
        assert finite_oracle(box) == box._answer_finite
        dense = _Dense()
        assert finite_oracle(dense) == dense._answer_finite  # the mark is not inherited
        counted = _Counted()
        assert finite_oracle(counted) is counted
    with fw.debug():  # debug mode checks every answer
        assert finite_oracle(simplex) == simplex._answer_finite
    # the public call still refuses a non-finite direction
    with pytest.raises(ValueError, match="must be finite"):
        simplex(np.array([0.5, np.nan, 1.0]))


@pytest.mark.parametrize("debug", [False, True])
def test_the_loop_calls_an_overridden_call_and_converts_arrays(debug):
    f = _quadratic(8)
    counted = _Counted()
    with fw.debug(debug):
        ref = fw.frank_wolfe(f, fw.ProbabilitySimplex(), tol=0.0, max_iter=60)
        res = fw.frank_wolfe(f, counted, tol=0.0, max_iter=60)
        dense = fw.frank_wolfe(f, _Dense(), tol=0.0, max_iter=60)
    # one call more: the start's vertex
    assert counted.calls == res.n_oracle_calls == ref.n_oracle_calls  # the start's too
    for r in (res, dense):
        np.testing.assert_array_equal(r.x, ref.x)
        np.testing.assert_array_equal(r.history["gap"], ref.history["gap"])


def test_a_non_finite_gradient_still_stops_the_run_before_the_oracle():
    calls = [0]

    def grad(x: np.ndarray) -> np.ndarray:
        calls[0] += 1
        return x - 0.3 if calls[0] < 5 else np.full_like(x, np.nan)

    f = fw.FunctionObjective(lambda x: 0.5 * float((x - 0.3) @ (x - 0.3)), grad, shape=4)
    counted = _Counted()
    with fw.debug(False):
        res = fw.frank_wolfe(f, counted, step_size="agnostic", tol=0.0, max_iter=50)
    assert res.status == fw.Status.ERROR
    assert "gradient is not finite" in res.message
    # the start's vertex, then one call per iteration; none with the NaN gradient (at
    # iteration 4); the point returned is x_3, whose iterations nit counts
    assert counted.calls == res.n_oracle_calls == 5  # the start's too
    assert res.nit == 3


def test_quadratic_move_entry_rounds_as_the_dispatcher(monkeypatch):
    n = 9
    f = _quadratic(n, seed=3)
    x0 = np.random.default_rng(4).dirichlet(np.ones(n))
    e = [fw.Atom.vertex(i, 0.7, (n,), key=("e", i)) for i in range(n)]
    two = fw.Atom.sparse([1, 6], [0.25, 0.75], (n,), key="two")  # takes the dispatcher
    dirs = [Direction.frank_wolfe(e[4]), Direction.away(e[2]), Direction.pairwise(e[0], e[5]),
            Direction.frank_wolfe(two), Direction.pairwise(e[7], e[7])]
    f.tracker(x0).move(dirs[0], 0.5)  # compiles or loads the kernel
    entry = quadratic._ENTRY[0]
    if entry is None:  # pragma: no cover - numba without compiled entries
        pytest.skip("numba exposes no compiled entry")
    fast, slow = f.tracker(x0), f.tracker(x0)
    for step, d in enumerate(dirs * 3):
        gamma = 0.05 + 0.07 * step
        monkeypatch.setattr(quadratic, "_ENTRY", [entry])
        fast.move(d, gamma)
        monkeypatch.setattr(quadratic, "_ENTRY", [None])
        monkeypatch.setattr(quadratic, "_move_entry", lambda: None)
        slow.move(d, gamma)
        np.testing.assert_array_equal(fast.x, slow.x)
        np.testing.assert_array_equal(fast.gradient(), slow.gradient())
        assert fast.value() == slow.value()


def _bits(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=float).view(np.int64)  # tells 0.0 from -0.0


def test_pair_image_rounds_as_the_generic_sum():
    rng = np.random.default_rng(5)
    p = rng.standard_normal(12)
    qa, qb = rng.standard_normal(12), rng.standard_normal(12)
    # signed zeros wherever a sum of zeros could keep or lose a sign
    qa[:4] = [0.0, -0.0, 0.0, -0.0]
    qb[:4] = [0.0, 0.0, -0.0, -0.0]
    p[4:6] = qa[4:6]  # exact cancellations
    qb[6] = qa[6]
    pa, pb = (qa,), (qb,)

    def generic(xc, ca, cb):
        image = xc * p if xc else np.zeros_like(p)
        for c, prods in ((ca, pa), (cb, pb)):
            if c:
                image += c * prods[0]
        return image

    cases = [(-1.0, 1.0, pa, 0.0, pa), (1.0, -1.0, pa, 0.0, pa), (0.0, 1.0, pa, -1.0, pb),
             (-0.5, 0.5, pa, 0.0, pa), (0.0, 2.0, pa, -1.0, pb), (-1.0, 1.0, pa, 1.0, pb)]
    for xc, ca, first, cb, second in cases:
        got = _pair_image(xc, p, ((ca, first), (cb, second)))
        np.testing.assert_array_equal(_bits(got), _bits(generic(xc, ca, cb)))
        assert got is not qa and got is not p  # a new array


def test_direction_is_an_immutable_record():
    v = fw.Atom.vertex(2, 1.0, (4,), key=("e", 2))
    d = Direction.frank_wolfe(v)
    assert d == Direction(-1.0, ((1.0, v),)) and hash(d) == hash(Direction(-1.0, ((1.0, v),)))
    assert (d.x_coef, d.terms) == (-1.0, ((1.0, v),))
    with pytest.raises(AttributeError):
        d.x_coef = 2.0  # type: ignore[misc]


def test_vertex_atoms_keep_their_entry_and_pickle():
    g = np.array([0.3, -1.25, 2.5, 7.0])
    a = fw.ProbabilitySimplex(0.8)(g)
    b = fw.Atom.sparse([3], [-0.6], 4, key="b")
    for atom in (a, b):
        i, value = int(atom.indices[0]), float(atom.values[0])
        assert atom._at == (i, value)
        assert atom.dot(g) == float(g[i]) * value
        out, ref = g.copy(), g.copy()
        atom.add_to(out, 0.3)
        ref[i] += 0.3 * atom.values[0]
        np.testing.assert_array_equal(out, ref)
        again = pickle.loads(pickle.dumps(atom))
        assert again._at == atom._at and again.key == atom.key
    assert fw.Atom(np.ones(4))._at is None and fw.Atom.sparse([0, 2], [1.0, 1.0], 4)._at is None


def test_history_rows_with_a_methods_columns_as_dicts_would_give():
    monitor = Monitor("m", max_iter=100)
    ref = History(("iteration", "time", "fun", "gap", "step_size"))
    rows = [{}, {"size": 2}, {"size": 3}, {}, {"size": 1, "lazy": 0}, {"lazy": 1, "size": 4},
            {"fun": 9.0}, {"size": 5}]
    for k, extra in enumerate(rows):
        monitor.record_row(k, 1.0 / (k + 1), 0.5 / (k + 1), 0.1 * k, extra)
        t = monitor.history["time"][-1]  # the monitor's own clock reading
        row = {"iteration": k, "time": t, "fun": 1.0 / (k + 1), "gap": 0.5 / (k + 1),
               "step_size": 0.1 * k}
        row.update(extra)
        ref.append_row(row)
    assert monitor.history.columns == ref.columns
    for c in ref.columns:
        np.testing.assert_array_equal(monitor.history[c], ref[c])
    monitor.history.append_values((99, 0.0, 0.0, 0.0, 0.0))  # positional rows still fit
    assert monitor.history["iteration"][-1] == 99 and np.isnan(monitor.history["size"][-1])


def test_the_lmo_base_class_has_no_marked_extreme_point():
    assert not getattr(LMO.extreme_point, "_answers_atoms", False)


@pytest.mark.parametrize("n", [30, 1100])  # saved by a copy, then by the moved entries
@pytest.mark.parametrize("method", [fw.pairwise_frank_wolfe, fw.away_step_frank_wolfe])
def test_the_last_good_iterate_is_the_one_before_the_failed_step(n, method):
    """The oracle fails while x_7 is observed, after step 6 moved x: the result is x_6,
    rebuilt from the moved point (a copy, or the entries the move changed)."""
    f = _quadratic(n, seed=6)
    seen: list[np.ndarray] = []
    armed = []

    class Failing(fw.ProbabilitySimplex):
        def extreme_point(self, direction):
            if armed:
                raise RuntimeError("stop here")
            return super().extreme_point(direction)

    def callback(state: fw.IterationState) -> None:
        seen.append(state.x.copy())
        if state.k == 6:
            armed.append(True)  # the next oracle call, observing x_7, fails

    with pytest.raises(RuntimeError, match="stop here") as err:
        method(f, Failing(), tol=0.0, max_iter=20, callback=callback)
    result = err.value.result  # type: ignore[attr-defined]
    assert len(seen) == 7 and result.nit == 6
    np.testing.assert_array_equal(result.x, seen[6])
    assert not np.array_equal(seen[5], seen[6])
