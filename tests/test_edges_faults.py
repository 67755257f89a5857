"""Faults during a run (issue 23): a non-finite value keeps the last good iterate with
its certified gap; an exception from user code names the method, the iteration and the
call, with the run so far attached; the cfw/bfw and fcfw crashes; a stalled run says so."""

from __future__ import annotations

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.algorithms.engine import STALL_WINDOW


def _least_squares(seed: int = 0, m: int = 30, n: int = 20):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n))
    b = rng.standard_normal(m)
    return A, b


def _simplex_gap(g: np.ndarray, x: np.ndarray) -> float:
    return float(g @ x - g.min())


# -- non-finite values: the last good iterate, certified ---------------------------------

@pytest.mark.parametrize("gap_every", [3, 7])
def test_rafw_nan_mid_run_returns_the_certified_last_good_iterate(gap_every):
    A, b = _least_squares()
    calls = [0]

    def value(x):
        calls[0] += 1  # the value turns NaN after 20 evaluations (a fault mid-run)
        return np.nan if calls[0] > 20 else 0.5 * np.sum((A @ x - b) ** 2)

    f = fw.FunctionObjective(value, lambda x: A.T @ (A @ x - b))
    res = fw.randomized_away_step_frank_wolfe(f, fw.ProbabilitySimplex(dim=20),
                                              step_size="agnostic", random_state=0,
                                              gap_every=gap_every, max_iter=300)
    assert res.status == "error" and "last good iterate (iteration 19)" in res.message
    assert res.nit == 19  # the iterations of the point returned (observing x_20 failed)
    assert abs(res.x.sum() - 1) < 1e-12 and res.x.min() >= 0
    # was NaN: the gap of an iterate between certificates, now certified at the point
    assert np.isfinite(res.gap)
    assert res.gap == pytest.approx(_simplex_gap(A.T @ (A @ res.x - b), res.x), rel=1e-10)


def test_bcfw_nan_mid_run_returns_the_certified_last_good_iterate():
    y = np.array([0.7, 0.3, 0.6, 0.4])

    def value(x):  # NaN where block 0 puts more than 0.4 on its first coordinate
        return np.nan if x[0] > 0.4 else 0.5 * np.sum((x - y) ** 2)

    def grad(x):
        return np.full(4, np.nan) if x[0] > 0.4 else x - y

    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=2), fw.ProbabilitySimplex(dim=2)])
    res = fw.block_coordinate_frank_wolfe(fw.FunctionObjective(value, grad), dom,
                                          x0=np.array([0.0, 1.0, 0.0, 1.0]), max_iter=200,
                                          random_state=0, gap_every=5)
    assert res.status == "error"
    x = res.x
    assert x[0] <= 0.4  # a good point, not the one where f is NaN
    np.testing.assert_allclose(x.reshape(2, 2).sum(axis=1), 1.0, atol=1e-12)
    g = (x - y).reshape(2, 2)
    true_gap = float(np.sum(g * x.reshape(2, 2)) - g.min(axis=1).sum())
    assert res.fun == pytest.approx(value(x), rel=1e-12)
    assert res.gap == pytest.approx(true_gap, rel=1e-10, abs=1e-12)


# -- exceptions from user code: named, with the run so far -----------------------------

def _check_note(err: BaseException, call: str, method: str, k: int) -> None:
    notes = getattr(err, "__notes__", [])
    assert len(notes) == 1, notes
    assert f"raised in {call}" in notes[0]
    assert f"at iteration {k} of {method!r}" in notes[0]


def test_callback_exception_names_the_callback_and_keeps_the_run():
    A, b = _least_squares()

    seen = {}

    def callback(state):
        seen[state.k] = (state.x.copy(), state.fun, state.gap)
        if state.k == 5:
            raise ZeroDivisionError("boom")

    with pytest.raises(ZeroDivisionError, match="boom") as info:
        fw.frank_wolfe(fw.LeastSquares(A, b), fw.ProbabilitySimplex(dim=20),
                       callback=callback, tol=0.0)
    _check_note(info.value, "the callback", "fw", 5)
    res = info.value.result
    # the callback saw x_5 whole and certified (it raised after observing it): that is
    # the run's last good iterate, not x_4 from before the step that made it
    assert res.status == "error" and res.nit == 5
    x5, f5, gap5 = seen[5]
    assert np.array_equal(res.x, x5) and res.fun == f5 and res.gap == gap5
    assert abs(res.x.sum() - 1) < 1e-12
    assert res.gap == pytest.approx(_simplex_gap(A.T @ (A @ res.x - b), res.x), rel=1e-10)


class _FailingSimplex(fw.ProbabilitySimplex):
    """Its oracle raises on call ``fail_at`` (0-based)."""

    def __init__(self, dim: int, fail_at: int) -> None:
        super().__init__(dim=dim)
        self.calls = 0
        self.fail_at = fail_at

    def extreme_point(self, direction):
        self.calls += 1
        if self.calls - 1 == self.fail_at:
            raise RuntimeError("the oracle's solver crashed")
        return super().extreme_point(direction)


@pytest.mark.parametrize("method", ["fw", "pairwise", "away"])
def test_lmo_exception_names_the_lmo_the_iteration_and_the_method(method):
    A, b = _least_squares()
    with pytest.raises(RuntimeError, match="crashed") as info:
        fw.minimize(fw.LeastSquares(A, b), _FailingSimplex(20, fail_at=7), method=method,
                    tol=0.0)
    res = info.value.result
    # raised while observing x_{nit+1}: the result holds x_nit, the last good iterate
    _check_note(info.value, "the LMO (_FailingSimplex)", method, res.nit + 1)
    assert 0 < res.nit <= 7 and np.all(np.isfinite(res.x))


def test_objective_exception_names_the_objective():
    A, b = _least_squares()
    calls = [0]

    def grad(x):
        calls[0] += 1
        if calls[0] == 4:
            raise ValueError("gradient failed")
        return A.T @ (A @ x - b)

    f = fw.FunctionObjective(lambda x: 0.5 * np.sum((A @ x - b) ** 2), grad)
    with pytest.raises(ValueError, match="gradient failed") as info:
        fw.frank_wolfe(f, fw.ProbabilitySimplex(dim=20), step_size="agnostic", tol=0.0)
    _check_note(info.value, "the objective (FunctionObjective)", "fw", 3)
    assert info.value.result.nit == 2  # x_2, the last good iterate


def test_bcfw_block_oracle_exception_is_named():
    f = fw.QuadraticObjective(np.eye(8), -np.linspace(0, 1, 8))
    blocks = [fw.ProbabilitySimplex(dim=2) for _ in range(3)] + [_FailingSimplex(2, 10)]
    with pytest.raises(RuntimeError, match="crashed") as info:
        fw.block_coordinate_frank_wolfe(f, fw.ProductDomain(blocks), tol=0.0, max_iter=50,
                                        random_state=0, compiled=False)
    notes = info.value.__notes__
    assert "in the LMO (_FailingSimplex)" in notes[0] and "'bcfw'" in notes[0]
    res = info.value.result
    np.testing.assert_allclose(res.x.reshape(4, 2).sum(axis=1), 1.0, atol=1e-12)


def test_structured_model_exception_is_named():
    from frankwolfe.applications.structured_svm import ChainModel, StructuredSVM, make_chain

    class Broken(ChainModel):
        calls = 0

        def loss_augmented_decode(self, x, y, w):
            Broken.calls += 1
            if Broken.calls == 30:
                raise IndexError("bad labelling")
            return super().loss_augmented_decode(x, y, w)

    X, Y = make_chain(20, n_states=3, n_features=4, random_state=0)
    with pytest.raises(IndexError, match="bad labelling") as info:
        StructuredSVM(Broken(3, 4), compiled=False, max_passes=10, random_state=0).fit(X, Y)
    assert "in the model (Broken)" in info.value.__notes__[0]
    assert np.all(np.isfinite(info.value.result.x))


def test_an_error_inside_a_registered_role_is_named_by_it():
    """The driver names the user-facing call that raised: an application's extension
    point registers its word (``name_role``); the core knows no application's methods."""
    from frankwolfe.algorithms.engine import _ROLES, name_role

    class Widget:
        def grad(self, x):
            raise ArithmeticError("widget broke")

    widget = Widget()
    name_role(Widget, "widget")
    try:
        f = fw.FunctionObjective(lambda x: 0.0, lambda x: widget.grad(x), shape=3)
        with pytest.raises(ArithmeticError) as info:
            fw.frank_wolfe(f, fw.ProbabilitySimplex(), max_iter=3)
        assert "in the widget (Widget)" in info.value.__notes__[0]
    finally:
        del _ROLES[Widget]


# -- crashes of cfw / bfw / fcfw -------------------------------------------------------------

@pytest.mark.parametrize("method", ["cfw", "bfw"])
def test_conjugate_methods_on_a_birkhoff_qp(method):
    """Were ``TypeError: only 0-dimensional arrays can be converted to Python scalars``
    (matrix points); checked against the plain Frank-Wolfe optimum."""
    n = 4
    rng = np.random.default_rng(0)
    Q = rng.standard_normal((n * n, n * n))
    Q = Q @ Q.T + np.eye(n * n)
    f = fw.QuadraticObjective(Q, rng.standard_normal(n * n), shape=(n, n))
    res = fw.minimize(f, fw.Birkhoff(n), method=method, tol=1e-6, max_iter=500)
    ref = fw.minimize(f, fw.Birkhoff(n), method="pairwise", tol=1e-10, max_iter=20000)
    assert res.status in ("converged", "max_iter") and np.isfinite(res.gap)
    np.testing.assert_allclose(res.x.sum(axis=0), 1.0, atol=1e-9)
    np.testing.assert_allclose(res.x.sum(axis=1), 1.0, atol=1e-9)
    # the certificate holds against the reference optimum, and the run made progress
    assert ref.fun - 1e-10 <= res.fun <= ref.fun + res.gap + 1e-10
    assert res.fun - ref.fun < 1e-2 * (f.value(np.full((n, n), 1.0 / n)) - ref.fun)


def test_fcfw_with_a_plain_function_objective_says_what_to_pass():
    y = np.linspace(0, 1, 5)
    f = fw.FunctionObjective(lambda x: 0.5 * np.sum((x - y) ** 2), lambda x: x - y)
    with pytest.raises(TypeError) as info:
        fw.fully_corrective_frank_wolfe(f, fw.ProbabilitySimplex(dim=5))
    msg = str(info.value)
    for what in ("QuadraticObjective", "to_cvxpy", "pairwise_frank_wolfe"):
        assert what in msg


# -- no progress: stalled ---------------------------------------------------------------------

def _flow_problem(seed: int = 0):
    rng = np.random.default_rng(seed)
    layers, width = 8, 6

    def node(layer, i):
        return 1 + layer * width + i

    edges = [(0, node(0, i)) for i in range(width)]
    for layer in range(layers - 1):
        for i in range(width):
            for j in range(width):
                if rng.random() < 0.5:
                    edges.append((node(layer, i), node(layer + 1, j)))
    sink = 1 + layers * width
    edges += [(node(layers - 1, i), sink) for i in range(width)]
    P = fw.FlowPolytope(edges, source=0, sink=sink)
    m = len(edges)
    A = rng.standard_normal((m // 2, m))
    return fw.LeastSquares(A, A @ (rng.random(m) * 0.3)), P


def test_fcfw_on_a_flow_polytope_ends_stalled_not_at_max_iter():
    """Was: the gap stuck above an unreachable tol with steps of 0 until max_iter."""
    f, P = _flow_problem()
    res = fw.fully_corrective_frank_wolfe(f, P, tol=1e-14, max_iter=1000)
    assert res.status == "stalled"
    assert res.nit < 200
    assert "size 0" in res.message and "rounding floor" in res.message
    steps = res.history["step_size"][-STALL_WINDOW:]
    assert np.all(steps == 0.0)
    # the certificate is still the true gap at the point (an independent LMO call)
    g = f.gradient(res.x)
    v = P(g).to_dense()
    assert res.gap == pytest.approx(float(g @ (res.x - v)), rel=1e-6, abs=1e-13)
    assert res.gap < 1e-6


def test_zero_steps_with_a_falling_gap_are_not_a_stall():
    """Steps of size 0 while the certified gap keeps falling (here: a callback-driven
    objective whose gap halves) do not end the run."""
    from frankwolfe.algorithms.engine import Engine, Observation, drive
    from frankwolfe.monitor import Monitor

    class Halving(Engine):
        def __init__(self):
            self.gap = 1.0

        def observe(self, k):
            return Observation(0.0, self.gap, True, np.zeros(1), None, 0.0)

        def advance(self, k, monitor):
            self.gap /= 2

        def certify(self, last):
            return 0.0, self.gap

        def outputs(self, error):
            return dict(x=np.zeros(1), n_oracle_calls=0, n_gradient_calls=0,
                        n_function_calls=0)

    res = drive(Halving(), Monitor("halving", tol=0.0, max_iter=3 * STALL_WINDOW))
    assert res.status == "max_iter"


def test_verbose_prints_a_row_at_least_every_few_seconds(capsys, monkeypatch):
    import frankwolfe.monitor as mon

    monkeypatch.setattr(mon, "_PRINT_SECONDS", 0.0)
    f = fw.QuadraticObjective(np.eye(3), -np.ones(3))
    fw.frank_wolfe(f, fw.ProbabilitySimplex(dim=3), verbose=1000, max_iter=5, tol=0.0,
                   step_size="agnostic")
    rows = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()[:1].isdigit()]
    assert len(rows) >= 5
