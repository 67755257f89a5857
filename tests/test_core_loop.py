"""The shared loop, step-size rules, monitor and result, on problems with closed-form optima."""

from __future__ import annotations

import numpy as np
import pytest
from lmo_reference import project_simplex

import frankwolfe as fw
from frankwolfe import FunctionObjective, L1Ball, ProbabilitySimplex, UnitSimplex, frank_wolfe


def distance_objective(y: np.ndarray, exact: bool = True) -> FunctionObjective:
    """f(x) = 1/2 ||x - y||^2 with smoothness 1 and (optionally) exact line search."""
    return FunctionObjective(
        lambda x: 0.5 * float(np.sum((x - y) ** 2)),
        lambda x: x - y,
        exact_step=(lambda x, d, g: -float(g @ d) / float(d @ d)) if exact else None,
        smoothness=1.0,
        shape=y.shape,
    )


@pytest.mark.parametrize("step", ["exact", "short", "adaptive", "armijo", "agnostic"])
def test_simplex_projection_matches_sort_based(step):
    rng = np.random.default_rng(0)
    y = rng.normal(size=30)
    p = project_simplex(y)
    f_star = 0.5 * np.sum((p - y) ** 2)
    # the open-loop rule converges as O(1/k) only: a looser target for it
    tol = 1e-4 if step == "agnostic" else 1e-7
    res = frank_wolfe(distance_objective(y), ProbabilitySimplex(), step_size=step,
                      tol=tol, max_iter=20000)
    assert res.status == fw.Status.CONVERGED, res.message
    # the certificate bounds the true suboptimality at every recorded iterate
    assert np.all(res.history["gap"] >= res.history["fun"] - f_star - 1e-12)
    assert res.fun - f_star <= res.gap + 1e-12
    assert res.fun - f_star <= res.best_gap + 1e-12
    assert res.best_gap <= res.gap + 1e-12 * max(1.0, abs(res.fun))  # best_gap is clipped at 0
    # strong convexity: ||x - p||^2 <= 2 (f(x) - f*) <= 2 gap
    assert np.linalg.norm(res.x - p) <= np.sqrt(2 * res.gap) + 1e-9


def test_default_step_is_exact_when_offered_else_adaptive():
    y = np.array([0.3, 0.9, -0.4])
    exact = frank_wolfe(distance_objective(y), ProbabilitySimplex(), tol=1e-12)
    # exact line search on a 3-simplex with this y: the optimum [0.2, 0.8, 0] in two steps
    np.testing.assert_allclose(exact.x, project_simplex(y), atol=1e-12)
    assert exact.nit <= 3
    res = frank_wolfe(distance_objective(y, exact=False), ProbabilitySimplex(), tol=1e-9)
    assert res.status == fw.Status.CONVERGED
    np.testing.assert_allclose(res.x, project_simplex(y), atol=1e-4)


def test_l1_ball_closed_form_projection_problem():
    # min 1/2||x - y||^2 over the l1 ball: soft-thresholding at the right level
    rng = np.random.default_rng(1)
    y = rng.normal(size=40) * 2
    r = 3.0
    xstar = np.sign(y) * project_simplex(np.abs(y), r)
    res = frank_wolfe(distance_objective(y), L1Ball(r), tol=1e-8, max_iter=50000)
    assert res.success
    f_star = 0.5 * np.sum((xstar - y) ** 2)
    # rounding of two sums of 40 squares near 56: allow a few ulps of f on both sides
    slack = 64 * np.finfo(float).eps * abs(f_star)
    assert -slack <= res.fun - f_star <= res.gap + slack
    assert np.linalg.norm(res.x - xstar) <= np.sqrt(2 * res.gap) + 1e-9


def test_x0_defaults_to_a_vertex_and_counts_oracle_calls():
    y = np.array([1.0, 2.0, 3.0])
    calls = []
    res = frank_wolfe(distance_objective(y), ProbabilitySimplex(), max_iter=0,
                      callback=lambda s: calls.append(s.k))
    assert res.status == fw.Status.MAX_ITER
    # a vertex of the simplex: one coordinate is 1
    assert sorted(res.x.tolist()) == [0.0, 0.0, 1.0]
    # the starting vertex's call and the certificate's
    assert res.n_oracle_calls == 2 and res.nit == 0 and calls == [0]


def test_linear_objective_solved_in_one_step():
    c = np.array([3.0, -1.0, 2.0, -5.0])
    obj = FunctionObjective(lambda x: float(c @ x), lambda x: c, shape=4,
                            exact_step=lambda x, d, g: np.inf if g @ d < 0 else 0.0)
    res = frank_wolfe(obj, UnitSimplex(2.0), tol=1e-12)
    np.testing.assert_allclose(res.x, [0, 0, 0, 2.0])
    assert res.fun == pytest.approx(-10.0)
    assert res.gap == pytest.approx(0.0, abs=1e-12)


def test_time_limit_is_honoured():
    y = np.linspace(-1, 1, 200)
    res = frank_wolfe(distance_objective(y, exact=False), L1Ball(0.5), step_size="agnostic",
                      tol=0.0, max_iter=10**9, time_limit=0.2)
    assert res.status == fw.Status.TIME_LIMIT
    assert res.time < 2.0
    assert np.isfinite(res.gap) and res.gap >= -1e-12 * max(1.0, abs(res.fun))


def test_callback_can_stop_and_sees_read_only_state():
    y = np.linspace(-1, 1, 10)
    seen = []

    def cb(state):
        seen.append((state.k, state.fun, state.gap))
        with pytest.raises(ValueError):
            state.x[0] = 123.0  # read-only view
        return state.k < 3

    res = frank_wolfe(distance_objective(y), L1Ball(0.5), step_size="agnostic", tol=0.0,
                      max_iter=100, callback=cb)
    assert res.status == fw.Status.CALLBACK_STOP
    assert res.nit == 3 and [s[0] for s in seen] == [0, 1, 2, 3]
    assert res.x[0] != 123.0


def test_a_callback_answering_numpys_false_stops():
    """A comparison of numpy values answers np.False_, which `is False` missed: the run
    went on to max_iter.  np.True_, None and 0 go on."""
    y = np.linspace(-1, 1, 10)
    kw = dict(step_size="agnostic", tol=0.0, max_iter=20)
    res = frank_wolfe(distance_objective(y), L1Ball(0.5), **kw,
                      callback=lambda s: np.float64(s.k) < 3)
    assert res.status == fw.Status.CALLBACK_STOP and res.nit == 3
    for answer in (np.True_, None, 0):
        res = frank_wolfe(distance_objective(y), L1Ball(0.5), **kw,
                          callback=lambda s, a=answer: a)
        assert res.status == fw.Status.MAX_ITER and res.nit == 20


@pytest.mark.parametrize("method", ["fw", "away", "pairwise", "bpcg", "bcg", "dicg", "rafw",
                                    "fcfw", "cfw", "bfw", "bcfw"])
def test_a_callback_raising_stopiteration_stops_as_in_scipy(method):
    """scipy.optimize.minimize (>= 1.11) stops when a callback raises StopIteration; here
    the run stops there as a callback answering False does, with the iterate it saw."""
    import scipy.optimize as so

    y = 0.05 + 0.01 * np.sin(np.arange(20.0))  # the optimum: interior, far from 3 steps
    seen = []

    def raising(s):
        seen.append(s.k)
        if s.k == 3:
            raise StopIteration

    f = fw.QuadraticObjective(np.eye(20), -y)  # 1/2 ||x - y||^2 - 1/2 ||y||^2
    x0 = np.zeros(20)
    x0[0] = 1.0
    if method == "bcfw":
        domain = fw.ProductDomain([ProbabilitySimplex(dim=10), ProbabilitySimplex(dim=10)])
        x0[10] = 1.0
    else:
        domain = ProbabilitySimplex()
    kw = dict(x0=x0, tol=0.0, max_iter=20)
    if method in ("rafw", "bcfw"):
        kw["random_state"] = 0
    res = fw.minimize(f, domain, method, callback=raising, **kw)
    ref = fw.minimize(f, domain, method, callback=lambda s: not s.k == 3, **kw)
    assert res.status == fw.Status.CALLBACK_STOP and res.nit == ref.nit == seen[-1] == 3
    assert "raised StopIteration" in res.message and "returned False" in ref.message
    np.testing.assert_allclose(res.x, ref.x, rtol=0, atol=1e-15)
    # the convention followed: scipy returns normally from such a callback
    out = so.minimize(lambda x: 0.5 * np.sum((x - y) ** 2), x0, jac=lambda x: x - y,
                      callback=raising_at_once)
    assert not out.success


def raising_at_once(intermediate_result):
    raise StopIteration


def test_history_table_and_verbose_output(capsys, tmp_path, monkeypatch):
    y = np.linspace(-1, 1, 10)
    res = frank_wolfe(distance_objective(y), L1Ball(0.5), step_size="agnostic", tol=0.0,
                      max_iter=50, verbose=10, history_every=5)
    out = capsys.readouterr().out
    assert "gap" in out and "fw: max_iter" in out
    it = res.history["iteration"]
    assert list(it) == list(range(0, 51, 5))
    assert set(res.history.columns) >= {"iteration", "time", "fun", "gap", "step_size"}
    assert np.all(np.diff(res.history["time"]) >= 0)
    path = tmp_path / "h.csv"
    res.history.to_csv(str(path))
    assert path.read_text().splitlines()[0].startswith("iteration,time,fun,gap")
    assert res["fun"] == res.fun  # scipy-style item access

    # atomic: a write interrupted midway leaves the old file whole and no other file
    old = path.read_text()

    class Interrupted(dict):
        def __getitem__(self, key):
            raise KeyboardInterrupt

    monkeypatch.setattr(fw.History, "__iter__", lambda self: iter([Interrupted()]))
    with pytest.raises(KeyboardInterrupt):
        res.history.to_csv(path)
    assert path.read_text() == old
    assert [p.name for p in tmp_path.iterdir()] == ["h.csv"]


def test_progress_bar_runs():
    y = np.linspace(-1, 1, 10)
    res = frank_wolfe(distance_objective(y), L1Ball(0.5), max_iter=20, tol=0.0, progress=True)
    assert res.nit == 20


def test_minimize_dispatch_and_unknown_method():
    y = np.array([0.2, 0.5])
    res = fw.minimize(distance_objective(y), ProbabilitySimplex(), method="fw", tol=1e-10)
    np.testing.assert_allclose(res.x, project_simplex(y), atol=1e-8)
    with pytest.raises(ValueError, match="unknown method 'nope'; available: .*fw"):
        fw.minimize(distance_objective(y), ProbabilitySimplex(), method="nope")


def test_adaptive_step_does_not_blow_up_when_progress_stalls():
    # At the optimum the sufficient-decrease test compares equal numbers up to
    # rounding; the estimate of L must stay bounded.
    y = np.array([0.25, 0.75, 0.0])
    rule = fw.Adaptive()
    res = frank_wolfe(distance_objective(y, exact=False), ProbabilitySimplex(), step_size=rule,
                      tol=0.0, max_iter=2000)
    assert np.isfinite(res.fun)
    assert rule.L is not None and rule.L < 1e6
    np.testing.assert_allclose(res.x, project_simplex(y), atol=1e-6)


def test_step_size_shortcut_errors():
    y = np.array([0.2, 0.5])
    with pytest.raises(ValueError, match="unknown step_size 'fast'"):
        frank_wolfe(distance_objective(y), ProbabilitySimplex(), step_size="fast")
    with pytest.raises(TypeError, match="step_size must be a string, a StepSize or None"):
        frank_wolfe(distance_objective(y), ProbabilitySimplex(), step_size=3)
    no_exact = distance_objective(y, exact=False)
    with pytest.raises(ValueError, match="step_size='exact' needs an objective with exact_step"):
        frank_wolfe(no_exact, ProbabilitySimplex(), step_size="exact")
    no_L = FunctionObjective(lambda x: 0.5 * x @ x, lambda x: x, shape=2)
    with pytest.raises(ValueError, match="step_size='short' needs a smoothness constant"):
        frank_wolfe(no_L, ProbabilitySimplex(), step_size="short")
    with pytest.raises(ValueError, match="Armijo: need 0 < c < 1"):
        fw.Armijo(c=2.0)


def test_monitor_argument_validation():
    y = np.array([0.2, 0.5])
    obj = distance_objective(y)
    with pytest.raises(ValueError, match="tol must be a non-negative number, got -1"):
        frank_wolfe(obj, ProbabilitySimplex(), tol=-1)
    with pytest.raises(ValueError, match="max_iter must be a non-negative integer, got 2.5"):
        frank_wolfe(obj, ProbabilitySimplex(), max_iter=2.5)
    with pytest.raises(ValueError, match="time_limit must be positive seconds or None, got 0"):
        frank_wolfe(obj, ProbabilitySimplex(), time_limit=0)
    # the argument named (int('a') said "invalid literal for int()"): a TypeError for
    # another type, a ValueError for a number out of range
    for name, bad, error in (("max_iter", "a", TypeError), ("max_iter", None, TypeError),
                             ("max_iter", float("inf"), ValueError), ("tol", "1e-6", TypeError),
                             ("rtol", None, TypeError), ("time_limit", "10", TypeError),
                             ("history_every", "2", TypeError), ("verbose", "yes", TypeError),
                             ("verbose", -3, ValueError), ("verbose", 2.7, ValueError)):
        with pytest.raises(error, match=rf"{name} must be .*, got {bad!r}"):
            frank_wolfe(obj, ProbabilitySimplex(), **{name: bad})
    with pytest.raises(TypeError, match="callback must be callable"):
        frank_wolfe(obj, ProbabilitySimplex(), callback=3)
    with pytest.raises(TypeError, match="objective must be an Objective, got function"):
        frank_wolfe(lambda x: x, ProbabilitySimplex())
    with pytest.raises(TypeError, match="domain must be an LMO, got str"):
        frank_wolfe(obj, "simplex")


def test_plot_convergence_writes_png(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from frankwolfe.plotting import plot_convergence

    y = np.linspace(-1, 1, 20)
    runs = {s: frank_wolfe(distance_objective(y), L1Ball(0.5), step_size=s, tol=1e-6, max_iter=200)
            for s in ("exact", "agnostic")}
    ax = plot_convergence(runs, y="primal_gap")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["exact", "agnostic"]
    path = tmp_path / "conv.png"
    ax.figure.savefig(path)
    assert path.stat().st_size > 1000
    with pytest.raises(ValueError, match="no results to plot"):
        plot_convergence({})
    # a list of results, labelled by method (numbered where one repeats)
    ax = plot_convergence(list(runs.values()) + [runs["exact"]])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["fw (0)", "fw (1)", "fw (2)"]
    with pytest.raises(TypeError, match="`results` must be a Result"):
        plot_convergence("fw")
    # values a log scale cannot show: said, not an empty plot in silence
    neg = frank_wolfe(fw.QuadraticObjective(np.eye(3), -np.array([0.8, 0.6, -0.2])),
                      fw.ProbabilitySimplex(), max_iter=5)
    with pytest.warns(UserWarning, match="no positive finite 'fun' values"):
        plot_convergence(neg, y="fun")
    # a run with a single gap to draw (max_iter=0) shows a marker, not an invisible line
    one = frank_wolfe(distance_objective(y), L1Ball(0.5), max_iter=0)
    line = plot_convergence(one).get_lines()[0]
    assert len(line.get_xdata()) == 1 and line.get_marker() == "o"
    many = plot_convergence(runs["exact"]).get_lines()[0]
    assert many.get_marker() in (None, "None", "")


def test_verbose_prints_each_row_once_and_gaps_are_not_negative(capsys):
    # the closing row repeated the last iteration's; rounding gave a gap of -2.8e-17,
    # above best_gap = 0
    f = fw.QuadraticObjective(np.eye(3), -np.array([0.8, 0.6, -0.2]))
    res = frank_wolfe(f, fw.ProbabilitySimplex(), verbose=True, max_iter=3, tol=0.0)
    rows = [line.split()[0] for line in capsys.readouterr().out.splitlines()
            if line.strip() and line.split()[0].isdigit()]
    assert len(rows) == len(set(rows))
    assert 0.0 <= res.best_gap <= res.gap
    # the starting vertex is an oracle call: counted
    calls = [0]

    class Counted(fw.ProbabilitySimplex):
        def extreme_point(self, g):
            calls[0] += 1
            return super().extreme_point(g)

    res = frank_wolfe(f, Counted(), max_iter=7, tol=0.0)
    assert res.n_oracle_calls == calls[0]


class _ConstantStep(fw.StepSize):
    """A user's rule answering one number, whatever gamma_max says."""

    def __init__(self, value):
        self.value = value

    def __call__(self, k, tracker, direction, slope, gamma_max):
        return self.value

    def __repr__(self):
        return f"_ConstantStep({self.value})"


@pytest.mark.parametrize("method", ["fw", "away", "pairwise", "cfw", "bpcg"])
@pytest.mark.parametrize("value", [2.0, -0.5, float("nan")])
def test_a_step_rule_answer_outside_0_gamma_max_is_refused(method, value):
    """A user's rule answering 2 on the simplex: x left the domain and the run ended
    "converged" with a negative gap.  Refused, naming the rule and the answer."""
    f = fw.QuadraticObjective(np.eye(6), -np.arange(6.0))
    with pytest.raises(ValueError, match=rf"step size rule _ConstantStep\({value}\) answered "
                                         rf"gamma={value} at iteration \d+, outside \[0, "
                                         rf"gamma_max="):
        fw.minimize(f, ProbabilitySimplex(dim=6), method=method,
                    step_size=_ConstantStep(value), max_iter=20)
    dom = fw.ProductDomain([ProbabilitySimplex(dim=3), ProbabilitySimplex(dim=3)])
    with pytest.raises(ValueError, match=r"step size rule _ConstantStep"):
        fw.block_coordinate_frank_wolfe(f, dom, step_size=_ConstantStep(value), max_iter=3,
                                        compiled=False)


def test_a_step_rule_answer_a_rounding_above_gamma_max_is_cut_to_it():
    f = fw.QuadraticObjective(np.eye(6), -np.arange(6.0))
    res = frank_wolfe(f, ProbabilitySimplex(dim=6), step_size=_ConstantStep(1.0 + 1e-15),
                      max_iter=5, tol=0.0)
    assert ProbabilitySimplex(dim=6).violation(res.x) <= 1e-15
    assert res.gap >= -1e-12  # a certificate of a feasible point (rounding aside)


class _Maximizer(fw.LMO):
    """The l1 ball's oracle with the sign turned: the maximizer of <g, .>."""

    def extreme_point(self, g):
        i = int(np.argmax(np.abs(g)))
        v = np.zeros(g.size)
        v[i] = np.sign(g[i]) if g[i] else 1.0
        return v

    def violation(self, x):
        return max(0.0, float(np.abs(x).sum()) - 1.0)

    def __repr__(self):
        return "_Maximizer()"


@pytest.mark.parametrize("method", ["fw", "away", "pairwise"])
def test_a_gap_below_zero_beyond_rounding_is_an_oracle_error(method):
    """An oracle that does not minimize gave a negative gap, which the run took as
    converged (gap <= tol) with dual_bound above fun.  Named instead."""
    y = np.linspace(-2.0, 3.0, 8)
    with pytest.raises(fw.OracleError, match=r"_Maximizer\(\) answered a vertex v with "
                                             r"<g, v> = .* above <g, x> = .* not a "
                                             r"minimizer"):
        start = fw.ActiveSet([np.eye(8)[0], np.eye(8)[1]], [0.5, 0.5])
        fw.minimize(distance_objective(y), _Maximizer(),
                    x0=np.zeros(8) if method == "fw" else start, method=method, max_iter=50)
