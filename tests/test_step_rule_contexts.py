"""A step rule object is accepted where the word naming it is: the saddle rules only by
saddle-point Frank-Wolfe, the line searches of minimization nowhere else; the refusal is
a TypeError at the start that names no internal class and suggests no refused word."""

from __future__ import annotations

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.step_size import STEP_RULES, StepSize, make_step_size
from frankwolfe.step_size.words import _PLAIN, _rule_contexts

_SADDLE_WORDS = [w for w, c in STEP_RULES.items() if "saddle" in c]
_REFUSED_IN_SADDLE = [w for w, c in STEP_RULES.items() if "saddle" not in c]


def _least_squares():
    rng = np.random.default_rng(0)
    return fw.LeastSquares(rng.standard_normal((10, 6)), rng.standard_normal(10))


class _Counting(fw.FunctionObjective):
    def __init__(self):
        self.calls = 0

        def fun(x):
            self.calls += 1
            return 0.5 * float(x @ x)

        def grad(x):
            self.calls += 1
            return x.copy()

        super().__init__(fun, grad)


@pytest.mark.parametrize("rule", [fw.SaddleBacktracking(), fw.SaddleStep(C=None),
                                  fw.SaddleStep(C=2.0)], ids=repr)
def test_saddle_rules_refused_by_minimization_at_the_start(rule):
    """An AttributeError ('LeastSquares' object has no attribute 'saddle') came from deep
    in the run; now a TypeError before any evaluation of f."""
    with pytest.raises(TypeError, match=r"is a rule of saddle_point_frank_wolfe only"):
        fw.minimize(_least_squares(), fw.L1Ball(dim=6), step_size=rule)
    f = _Counting()
    for method in ("fw", "away", "pairwise"):
        with pytest.raises(TypeError, match=r"saddle_point_frank_wolfe only"):
            fw.minimize(f, fw.ProbabilitySimplex(dim=3), method=method,
                        x0=np.array([1.0, 0.0, 0.0]), step_size=rule)
    assert f.calls == 0
    with pytest.raises(TypeError, match=r"saddle_point_frank_wolfe only"):
        make_step_size(rule, context="minimize")


def test_saddle_rules_refused_by_block_coordinate_frank_wolfe():
    f = fw.FunctionObjective(lambda x: 0.5 * float(x @ x), lambda x: x.copy())
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=2), fw.ProbabilitySimplex(dim=2)])
    with pytest.raises(TypeError, match=r"saddle_point_frank_wolfe only"):
        fw.block_coordinate_frank_wolfe(f, dom, step_size=fw.SaddleBacktracking())


def _game():
    rng = np.random.default_rng(1)
    return fw.BilinearObjective(rng.standard_normal((4, 5)))


@pytest.mark.parametrize("rule", [fw.ExactStep(), fw.Armijo(), fw.ShortStep(1.0),
                                  fw.Adaptive(), fw.Secant(), fw.Monotonic(),
                                  fw.NonConvexAgnostic()], ids=repr)
def test_minimization_rules_refused_by_the_saddle_solver(rule):
    """The word 'armijo' was refused, Armijo() ran silently (gap 1.03 against 0.042 with
    the default rule); ExactStep's message named the internal _SaddleAdapter and
    suggested 'adaptive' and 'short', which the saddle context refuses too."""
    D = fw.ProbabilitySimplex
    for away in (False, True):
        with pytest.raises(TypeError, match=r"is a rule of minimization only") as info:
            fw.saddle_point_frank_wolfe(_game(), D(), D(), away=away, step_size=rule)
        msg = str(info.value)
        assert "_Saddle" not in msg and "Adapter" not in msg
        for word in _REFUSED_IN_SADDLE:
            assert repr(word) not in msg
        for word in _SADDLE_WORDS:
            assert repr(word) in msg


def test_rules_the_saddle_solver_accepts():
    """Open-loop rules, the saddle rules and a user's own StepSize still run."""
    class Half(StepSize):
        def __call__(self, k, tracker, direction, slope, gamma_max):
            return min(gamma_max, 1.0 / (k + 2))

    D = fw.ProbabilitySimplex
    game = fw.BilinearObjective(np.array([[1.0, -1.0], [-1.0, 1.0]]), mu_x=1.0, mu_y=1.0)
    for rule in (fw.Agnostic(), fw.LogAgnostic(), fw.SaddleStep(C=4.0),
                 fw.SaddleStep(C=None), fw.SaddleBacktracking(), Half()):
        res = fw.saddle_point_frank_wolfe(game, D(), D(), step_size=rule, max_iter=200)
        assert np.allclose(res.x, 0.5, atol=0.05), rule


def test_rule_classes_agree_with_their_words():
    """Each word's rule is accepted where the word is."""
    for word, make in _PLAIN.items():
        assert _rule_contexts(make()) == STEP_RULES[word], word
    game = _game()
    D = fw.ProbabilitySimplex
    for word in ("curvature", "local", "saddle_backtracking"):
        rule = make_step_size(word, context="saddle", objective=game, C=1.0,
                              domains=(D(), D()))
        assert _rule_contexts(rule) == STEP_RULES[word], word
