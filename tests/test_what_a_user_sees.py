"""What a user sees of a run besides its numbers: warnings (one per event, at the user's
line, of the package's category), reprs (the constructor's call, bounded), verbose
output (in order, in the estimator's terms), progress bars and plots."""

from __future__ import annotations

import contextlib
import io
import math
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import frankwolfe as fw
import frankwolfe.step_size as steps
from frankwolfe.monitor import INTERRUPTS, Monitor

# -- one warning for one event, at the user's line ---------------------------------------


def test_latent_ssvm_warns_once_at_the_users_line_for_its_inner_budgets():
    """Each round's inner StructuredSVM warned of its budget (attributed to
    latent_ssvm.py, naming a parameter LatentSSVM does not have) besides LatentSSVM's own
    summary of those same rounds."""
    from frankwolfe.applications.structured_svm import (
        LatentGraphCRF,
        LatentSSVM,
        StructuredSVM,
        make_latent_blocks,
    )

    X, Y = make_latent_blocks(8, 3, 3, noise=0.6, random_state=0)
    inner = StructuredSVM(LatentGraphCRF(2, 2, 2), max_passes=1, tol=1e-9, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = LatentSSVM(inner, max_rounds=3, tol=0.0, random_state=1).fit(X, Y)
    assert len(caught) == 1, [str(c.message) for c in caught]
    (w,) = caught
    assert w.category is ConvergenceWarning and w.filename == __file__
    text = str(w.message)
    assert text.startswith("LatentSSVM: the inner training of rounds [")
    assert "raise base_ssvm.max_passes" in text
    # the rounds named are those whose inner run ended above tol, from their own results
    assert np.all(est.inner_gaps_ > 1e-9)
    assert f"rounds {list(range(1, est.n_rounds_ + 1))}" in text


def test_structured_svm_still_warns_at_the_users_line():
    from frankwolfe.applications.structured_svm import MulticlassModel, StructuredSVM

    X, Y = _multiclass()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        StructuredSVM(MulticlassModel(3, 5), solver="fw", max_passes=3, tol=1e-9).fit(X, Y)
    assert [(c.category, c.filename) for c in caught] == [(ConvergenceWarning, __file__)]
    assert "the max_passes budget ended the run" in str(caught[0].message)


def test_sinkhorn_budget_is_a_convergence_warning():
    from frankwolfe.applications.matching import sinkhorn

    M = np.random.default_rng(0).uniform(0.1, 1.0, (5, 5))
    with pytest.warns(ConvergenceWarning, match=r"sinkhorn: max_iter=1 ended the scaling"):
        P = sinkhorn(M, max_iter=1)
    # an honest distance: the column sums of the answer are that far from 1
    assert np.abs(P.sum(axis=0) - 1).max() > 1e-13


def test_solve_qap_ctrl_c_is_a_convergence_warning():
    """As ConstrainedLasso's, StructuredSVM's and LatentSSVM's Ctrl-C warnings (it was a
    RuntimeWarning).  The flag a SIGINT sets is raised from inside the run."""
    from frankwolfe.applications.matching import solve_qap

    class CtrlC(fw.ExactStep):
        def __call__(self, *args, **kwargs):
            INTERRUPTS.hits += 1  # what the SIGINT handler does
            return super().__call__(*args, **kwargs)

    rng = np.random.default_rng(0)
    a, b = rng.random((6, 6)), rng.random((6, 6))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = solve_qap(a, b, max_iter=20, step_size=CtrlC(), local_search=False)
    hits = [c for c in caught if "interrupted" in str(c.message)]
    assert [(c.category, c.filename) for c in hits] == [(ConvergenceWarning, __file__)]
    assert sorted(res.permutation.tolist()) == list(range(6))
    assert not INTERRUPTS.requested  # the run closed the flag


# -- step rules: the constructor's call --------------------------------------------------


def _rules():
    """One instance of every rule class of frankwolfe.step_size, with non-default
    arguments where it has any."""
    return [
        steps.Agnostic(4.0), steps.LogAgnostic(), steps.NonConvexAgnostic(scale=0.5),
        steps.Monotonic(steps.Agnostic(4.0), max_halvings=10),
        steps.Monotonic(steps.NonConvexAgnostic()), steps.ShortStep(), steps.ShortStep(3.0),
        steps.ExactStep(), steps.Adaptive(L0=1.0, max_backtracks=10),
        steps.Adaptive(eta=0.5, tau=3.0), steps.Armijo(max_backtracks=5),
        steps.Armijo(c=0.25, beta=0.75), steps.Secant(tol=1e-5, max_iter=7),
        steps.SaddleStep(C=None), steps.SaddleStep(C=2.5, nu=0.5),
        steps.SaddleBacktracking(shrink=0.5), steps.SaddleBacktracking(nu=0.25),
    ]


def test_every_rule_class_is_covered():
    classes = [getattr(steps, name) for name in steps.__all__]
    concrete = {c for c in classes if isinstance(c, type) and issubclass(c, steps.StepSize)
                and c not in (steps.StepSize, steps.OpenLoop)}
    assert concrete == {type(r) for r in _rules()}


@pytest.mark.parametrize("rule", _rules(), ids=lambda r: type(r).__name__)
def test_step_rule_repr_is_its_constructors_call(rule):
    text = repr(rule)
    again = eval(text, vars(steps))
    assert type(again) is type(rule) and repr(again) == text
    # the same parameters, read from the attributes, not from the repr
    params = {k: v for k, v in vars(rule).items() if not k.startswith("_")}
    for name, value in params.items():
        if name in ("L", "halvings", "C", "f_rounding", "last") and name not in text:
            continue  # what a run learns: not a parameter
        other = getattr(again, name)
        assert repr(other) == repr(value), name


def test_reprs_quoted_by_the_audit():
    assert repr(fw.Monotonic(fw.Agnostic(4.0), max_halvings=10)) == \
        "Monotonic(rule=Agnostic(ell=4.0), max_halvings=10)"
    assert repr(fw.Adaptive(L0=1.0, max_backtracks=10)) == \
        "Adaptive(L0=1.0, eta=0.9, tau=2.0, max_backtracks=10)"
    assert repr(fw.Armijo(max_backtracks=5)) == "Armijo(c=0.0001, beta=0.5, max_backtracks=5)"
    assert repr(fw.SaddleBacktracking(shrink=0.5)) == "SaddleBacktracking(nu=1.0, shrink=0.5)"


def test_learnt_state_stays_out_of_the_repr():
    """A run changes Adaptive's L and Monotonic's halvings: the repr is still the call."""
    A = np.random.default_rng(0).standard_normal((20, 8))
    f = fw.LeastSquares(A, np.ones(20))
    adaptive, mono = fw.Adaptive(L0=1e-3), fw.Monotonic(fw.Agnostic(4.0), max_halvings=10)
    before = repr(adaptive), repr(mono)
    fw.frank_wolfe(f, fw.L1Ball(dim=8), step_size=adaptive, max_iter=20)
    fw.frank_wolfe(f, fw.L1Ball(dim=8), step_size=mono, max_iter=20)
    assert adaptive.L != 1e-3  # it learnt
    assert (repr(adaptive), repr(mono)) == before


# -- plots ------------------------------------------------------------------------------


@pytest.fixture
def plt():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.close("all")
    yield plt
    plt.close("all")


def _runs():
    f = fw.LeastSquares(np.eye(3), np.ones(3))
    return {m: fw.minimize(f, fw.L1Ball(dim=3), m, max_iter=5) for m in ("fw", "away")}


def test_missing_column_leaves_no_figure_and_names_the_run(plt):
    from frankwolfe.plotting import plot_convergence

    runs = _runs()
    assert "active_set_size" in runs["away"].history.columns
    assert "active_set_size" not in runs["fw"].history.columns
    with pytest.raises(KeyError, match=r"run 'fw' has no column 'active_set_size' \(`y`\)"):
        plot_convergence(runs, y="active_set_size")
    with pytest.raises(KeyError, match=r"run 'fw' has no column 'nope' \(`x`\)"):
        plot_convergence(runs["fw"], x="nope")
    assert plt.get_fignums() == []
    ax = plot_convergence(runs["away"], y="active_set_size")  # the run that has it
    assert len(ax.get_lines()) == 1


def test_f_star_is_refused_where_it_would_be_ignored_and_typed(plt):
    from frankwolfe.plotting import plot_convergence

    run = _runs()["fw"]
    with pytest.raises(ValueError, match=r"`f_star` serves y='primal_gap' only"):
        plot_convergence(run, y="gap", f_star=0.0)
    with pytest.raises(TypeError, match=r"`f_star` must be a real number, got '1'"):
        plot_convergence(run, y="primal_gap", f_star="1")
    with pytest.raises(TypeError, match=r"`y` must be a history column name"):
        plot_convergence(run, y=3)
    assert plt.get_fignums() == []
    # numpy's numbers are numbers
    plot_convergence(run, y="primal_gap", f_star=np.float64(-1.0))


def test_a_gap_of_zero_is_marked_not_dropped(plt):
    """x = its vertex: the second iterate is optimal, its certified gap exactly 0; the
    log plot dropped that point without a word."""
    from frankwolfe.plotting import plot_convergence

    res = fw.frank_wolfe(fw.LeastSquares(np.eye(2), np.array([1.0, 0.0])),
                         fw.ProbabilitySimplex(dim=2), np.array([0.5, 0.5]),
                         step_size="exact", tol=0.0, max_iter=3)
    gaps = res.history["gap"]
    zeros = res.history["iteration"][gaps == 0]
    assert zeros.size >= 1 and (gaps > 0).any()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ax = plot_convergence(res)
    curve, marks = ax.get_lines()
    assert len(curve.get_xdata()) == int((gaps > 0).sum())
    assert marks.get_marker() == "v" and marks.get_color() == curve.get_color()
    np.testing.assert_array_equal(marks.get_xdata(), zeros)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["fw"]
    ax.figure.canvas.draw()  # drawable, and the log axis kept its positive limits
    assert ax.get_ylim()[0] > 0


# -- verbose output and the progress bar -------------------------------------------------


def _rows(verbose):
    f = fw.LeastSquares(np.random.default_rng(0).standard_normal((30, 20)), np.ones(30))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fw.frank_wolfe(f, fw.L1Ball(dim=20), max_iter=200, tol=0, verbose=verbose)
    return out.getvalue().splitlines()


def test_numpy_true_verbose_is_true():
    assert len(_rows(np.True_)) == len(_rows(True)) < 40
    assert _rows(np.False_) == []


def _multiclass():
    rng = np.random.default_rng(0)
    X = [rng.standard_normal(5) for _ in range(60)]
    Y = [int(rng.integers(3)) for _ in range(60)]
    return X, Y


@pytest.mark.parametrize("solver", ["bcfw", "fw", "ssg"])
def test_estimator_speaks_of_max_passes(solver, capsys):
    """The message, the verbose closing line and the bar's total said the core's
    iteration bound (``max_iter=4`` for max_passes=6, gap_every=2)."""
    from frankwolfe.applications.structured_svm import MulticlassModel, StructuredSVM

    X, Y = _multiclass()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = StructuredSVM(MulticlassModel(3, 5), solver=solver, max_passes=6, gap_every=2,
                            tol=1e-9, random_state=0, verbose=True, progress=True).fit(X, Y)
    captured = capsys.readouterr()
    message = est.result_.message
    assert "max_iter" not in message
    assert message.startswith("budget max_passes=6 spent (6 passes done)")
    # the passes done as the history counts them
    assert est.history_["effective_passes"][-1] == 6
    closing = [ln for ln in captured.out.splitlines() if ln.startswith(f"{est.result_.method}:")]
    assert closing == [f"{est.result_.method}: max_passes: {message}"]
    assert "/6 [" in captured.err and "passes/s" in captured.err  # the bar's total


def test_closing_line_follows_the_last_row(capsys):
    from frankwolfe.applications.structured_svm import MulticlassModel, StructuredSVM

    X, Y = _multiclass()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        StructuredSVM(MulticlassModel(3, 5), solver="fw", max_passes=6, gap_every=2,
                      tol=1e-9, verbose=True).fit(X, Y)
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].startswith("fw: ")
    assert lines[-2].startswith("pass ")


def test_progress_bar_shows_the_last_certified_gap():
    pytest.importorskip("tqdm")
    m = Monitor("m", max_iter=10, progress=True)
    m.start()
    try:
        m.record(0, 1.0, math.nan)
        assert "gap=none yet" in m._bar.postfix
        m.record(1, 1.0, 0.5)
        assert m._bar.postfix == "gap=5.00e-01"
        m.record(2, 0.9, math.nan)  # a pass without a certificate
        assert m._bar.postfix == "last_gap=5.00e-01"
    finally:
        m.finish(x=np.zeros(1), fun=0.9, gap=math.nan, status=fw.Status.MAX_ITER, nit=2,
                 n_oracle_calls=0, n_gradient_calls=0, n_function_calls=0)


# -- reprs ------------------------------------------------------------------------------


def test_history_repr_counts_rows():
    h = fw.History(("a",))
    assert repr(h) == "History(0 rows, columns=['a'])"
    h.append(a=1.0)
    assert repr(h) == "History(1 row, columns=['a'])"
    h.append(a=2.0)
    assert repr(h) == "History(2 rows, columns=['a'])"


def test_finite_sum_reprs_are_bounded():
    import scipy.sparse as sp

    def mean_value(x, i):
        return 0.0

    f = fw.FiniteSumObjective(mean_value, lambda x, i: x, 3, shape=2, convex=False)
    assert repr(f) == ("FiniteSumObjective(batch_value=mean_value, batch_gradient=<lambda>, "
                       "n_samples=3, shape=(2,), convex=False)")
    big = fw.LinearModelLoss(np.ones((10_000, 50)), np.ones(10_000))
    assert repr(big) == "LinearModelLoss(n_samples=10000, n_features=50, dense, " \
                        "loss='logistic')"
    sparse = fw.LinearModelLoss(sp.random(5, 2, density=1.0, random_state=0), np.ones(5),
                                "squared")
    assert repr(sparse) == "LinearModelLoss(n_samples=5, n_features=2, sparse, loss='squared')"
