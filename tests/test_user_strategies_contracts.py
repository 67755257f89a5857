"""The contracts of the strategy objects a user replaces, as documented: an objective's
``as_quadratic`` hook (fully corrective FW), a block step of one's own (the rows it is
handed), a step rule in block-coordinate FW (its ``k``), an executor (the blocks of a
round), a domain with the in-face protocol (DICG), and the saddle solver's refusal of
minimization rules.  Values are checked against cvxpy or closed forms."""

import re
from pathlib import Path

import cvxpy as cp
import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe import BlockStep, Executor, StepSize

# -- fully corrective FW: the as_quadratic hook decides, not the type ----------------------


def _simplex_projection(y):
    """Euclidean projection onto the probability simplex (sort-based closed form)."""
    u = np.sort(y)[::-1]
    css = np.cumsum(u) - 1.0
    rho = np.nonzero(u - css / np.arange(1, y.size + 1) > 0)[0][-1]
    return np.maximum(y - css[rho] / (rho + 1.0), 0.0)


def _declared(Q, c, quadratic=None):
    """A user objective known by value and gradient that declares its quadratic."""
    class MyQuad(fw.Objective):
        def value(self, x):
            return 0.5 * x @ Q @ x + c @ x

        def gradient(self, x):
            return Q @ x + c

        def as_quadratic(self):
            return fw.QuadraticObjective(Q, c) if quadratic is None else quadratic

    return MyQuad()


@pytest.mark.parametrize("corrective", ["auto", "qp"])
def test_fcfw_single_domain_takes_the_declared_quadratic(corrective):
    """The audit's reproducer: refused with "MyQuad offers none: pass a LeastSquares or
    QuadraticObjective" on a single domain, while over a ProductDomain it ran.  With
    Q = I the minimizer is the projection of -c onto the simplex."""
    c = -np.array([1.0, 2.0, 3.0, 3.0, 2.0, 1.0])
    res = fw.fully_corrective_frank_wolfe(_declared(np.eye(6), c), fw.ProbabilitySimplex(dim=6),
                                          corrective=corrective, tol=1e-12)
    assert res.status == "converged"
    assert res.extra["n_corrective_qp"] >= 1 and res.extra["n_corrective_cvxpy"] == 0
    np.testing.assert_allclose(res.x, _simplex_projection(-c), atol=1e-12)


def test_fcfw_declared_quadratic_matches_cvxpy():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((10, 8))
    Q = A.T @ A + 0.1 * np.eye(8)
    c = 3.0 * rng.standard_normal(8)
    res = fw.fully_corrective_frank_wolfe(_declared(Q, c), fw.ProbabilitySimplex(dim=8),
                                          tol=1e-10)
    x = cp.Variable(8)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(Q)) + c @ x),
                      [x >= 0, cp.sum(x) == 1])
    prob.solve(solver=cp.CLARABEL)
    assert res.status == "converged"
    assert res.extra["n_corrective_qp"] >= 1
    assert res.fun <= prob.value + 1e-7
    np.testing.assert_allclose(res.x, x.value, atol=1e-5)
    # the certificate is the user's gradient: the QP changed the steps, not the gap
    g = Q @ res.x + c
    assert float(g @ res.x - g.min()) <= 1e-10


def test_fcfw_declared_quadratic_of_the_wrong_kind_or_size():
    Q, c = np.eye(4), -np.ones(4)
    with pytest.raises(TypeError, match=r"as_quadratic\(\) must return a QuadraticObjective"):
        fw.fully_corrective_frank_wolfe(_declared(Q, c, quadratic="Q"),
                                        fw.ProbabilitySimplex(dim=4))
    small = fw.QuadraticObjective(np.eye(3), -np.ones(3))
    for domain in (fw.ProbabilitySimplex(dim=4),
                   fw.ProductDomain([fw.ProbabilitySimplex(dim=2)] * 2)):
        with pytest.raises(ValueError, match=r"as_quadratic\(\) has n = 3, but the iterate "
                                             r"has 4 entries"):
            fw.fully_corrective_frank_wolfe(_declared(Q, c, quadratic=small), domain)


# -- a block step of one's own: only the live rows ---------------------------------------


class Cyclic(fw.BlockOrder):
    """Blocks 0, 1, ..., n-1 in every pass (deterministic runs to compare)."""

    name = "cyclic"

    def pass_order(self, rng):
        return np.arange(self.n)


class NaivePairwise(BlockStep):
    """Pairwise, written naively: the argmax of <g, a> over every row handed over."""

    name = "naive_pairwise"
    uses_active_set = True

    def __init__(self):
        self.smallest = np.inf  # the smallest weight ever handed over

    def direction(self, z, g, d_fw, gap, atoms, weights):
        self.smallest = min(self.smallest, float(np.min(weights)))
        j = int(np.argmax(atoms @ g))
        return "pairwise", j, (z + d_fw) - atoms[j], float(weights[j])


def _block_problem(nb=3, k=4, seed=2):
    rng = np.random.default_rng(seed)
    m = nb * k
    B = rng.standard_normal((20, m))
    Q = B.T @ B + 0.1 * np.eye(m)
    c = 3.0 * rng.standard_normal(m)
    x = cp.Variable(m)
    cons = [x >= 0] + [cp.sum(x[k * i:k * i + k]) == 1 for i in range(nb)]
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(Q)) + c @ x), cons)
    prob.solve(solver=cp.CLARABEL)
    domain = fw.ProductDomain([fw.ProbabilitySimplex(dim=k) for _ in range(nb)])
    return fw.QuadraticObjective(Q, c), domain, prob.value


def test_naive_user_pairwise_step_converges_like_the_built_in_one():
    """The Python pass handed zero-weight (dropped) rows to a user step; an argmax over
    them picked a dead atom, gamma_max = 0, and the block stalled for good (max_iter at
    gap 0.13 where the built-in step converged in 52 passes)."""
    f, domain, fstar = _block_problem()
    step = NaivePairwise()
    res = fw.block_coordinate_frank_wolfe(f, domain, block_step=step, block_order=Cyclic(),
                                          max_iter=200, tol=1e-9, random_state=0)
    ref = fw.block_coordinate_frank_wolfe(f, domain, block_step="pairwise",
                                          block_order=Cyclic(), max_iter=200, tol=1e-9,
                                          random_state=0)
    assert step.smallest > 0.0
    assert res.status == "converged" and res.gap <= 1e-9
    assert -1e-7 <= res.fun - fstar <= 1e-7  # cvxpy's optimum is accurate to about 1e-8
    assert res.nit == ref.nit  # the same steps: the built-in one skips the dead rows too
    np.testing.assert_allclose(res.x, ref.x, atol=1e-12)


@pytest.mark.parametrize("answer, match", [
    (("sideways", 0), r"step kind must be 'fw', 'away' or 'pairwise', got 'sideways'"),
    (("pairwise", -1), r"away row of a 'pairwise' step must index the \d+ rows it was "
                       r"handed, got -1"),
    (("away", 99), r"away row of a 'away' step must index the \d+ rows it was handed, "
                   r"got 99"),
])
def test_user_block_step_answer_is_checked(answer, match):
    kind, row = answer

    class Bad(BlockStep):
        uses_active_set = True

        def direction(self, z, g, d_fw, gap, atoms, weights):
            return kind, row, d_fw, 1.0

    f, domain, _ = _block_problem()
    with pytest.raises(ValueError, match="Bad.direction: the " + match):
        fw.block_coordinate_frank_wolfe(f, domain, block_step=Bad(), max_iter=5)


# -- a step rule in block-coordinate FW: k counts passes, a float -------------------------


def test_block_coordinate_step_rule_gets_passes_as_float_k():
    """docs/extending.md: ``k`` is block steps / n in block_coordinate_frank_wolfe."""
    seen = []

    class Table(StepSize):
        sched = [2.0 / (i + 2) for i in range(1000)]

        def __call__(self, k, tracker, direction, slope, gamma_max):
            seen.append(k)
            return min(gamma_max, self.sched[int(k)])  # int(k): as the docs say

    f, domain, fstar = _block_problem()
    res = fw.block_coordinate_frank_wolfe(f, domain, step_size=Table(), block_order=Cyclic(),
                                          max_iter=3, tol=0)
    assert seen[:4] == [0.0, 1 / 3, 2 / 3, 1.0]
    assert all(isinstance(k, float) for k in seen)
    assert res.fun >= fstar - 1e-9


# -- an executor: the blocks of a uniform round may repeat --------------------------------


def test_executor_map_may_get_a_block_twice_in_a_uniform_round():
    rounds = []

    class Logging(Executor):
        name = "logging"

        def map(self, which, directions):
            rounds.append(list(which))
            return [self.blocks[i](d) for i, d in zip(which, directions)]

    f, domain, fstar = _block_problem(nb=4)
    res = fw.block_coordinate_frank_wolfe(f, domain, batch_size=3, block_order="uniform",
                                          executor=Logging(), max_iter=300, tol=1e-8,
                                          random_state=0)
    assert any(len(set(r)) < len(r) for r in rounds)  # a block twice in one round
    assert domain.violation(res.x) <= 1e-12
    assert fstar - 1e-9 <= res.fun <= fstar + 1e-3  # mini-batch FW steps: slow, on its way


# -- DICG on a user's domain with the in-face protocol ------------------------------------


def test_dicg_runs_on_a_user_domain_with_the_in_face_protocol():
    class MySimplex(fw.LMO):
        """The probability simplex written by a user (vertices and faces by hand)."""

        def __init__(self, n):
            self.shape = n

        def extreme_point(self, g):
            i = int(np.argmin(g))
            v = np.zeros(g.size)
            v[i] = 1.0
            return fw.Atom(v, key=("e", i))

        def in_face_extreme_point(self, x, direction):
            support = np.flatnonzero(x > 1e-12)
            return self.extreme_point(np.where(x > 1e-12, direction, np.inf)
                                      if support.size < x.size else direction)

        def max_step(self, x, direction):
            neg = direction < 0
            return float(np.min(x[neg] / -direction[neg])) if neg.any() else np.inf

        def violation(self, x):
            return max(0.0, float(-x.min()), abs(float(x.sum()) - 1.0))

    rng = np.random.default_rng(0)
    A = rng.standard_normal((10, 8))
    Q = A.T @ A + 0.1 * np.eye(8)
    c = 3.0 * rng.standard_normal(8)
    res = fw.decomposition_invariant_conditional_gradient(fw.QuadraticObjective(Q, c),
                                                          MySimplex(8), tol=1e-9)
    x = cp.Variable(8)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(Q)) + c @ x),
                      [x >= 0, cp.sum(x) == 1])
    prob.solve(solver=cp.CLARABEL)
    assert res.status == "converged"
    assert -1e-7 <= res.fun - prob.value <= 1e-7  # Clarabel's optimum, both ways


# -- stochastic FW: batch_size only beside an estimator's word ----------------------------


def test_stochastic_batch_size_beside_an_estimator_object_is_refused():
    from frankwolfe.algorithms.gradient_estimators import make_estimator

    rng = np.random.default_rng(0)
    obj = fw.LinearModelLoss(rng.standard_normal((50, 4)), rng.standard_normal(50),
                             loss="squared")
    with pytest.raises(ValueError, match="pass batch_size to the estimator object"):
        fw.stochastic_frank_wolfe(obj, fw.L1Ball(1.0), estimator=make_estimator("momentum", 5),
                                  batch_size=5, max_iter=3)


# -- the saddle solver's refusal says what the rule is ------------------------------------


def test_saddle_refusal_of_nonconvex_agnostic_does_not_call_it_a_line_search():
    """NonConvexAgnostic is the open-loop 1/sqrt(k+1); the message said "line searches on
    L do not apply to a saddle problem"."""
    game = fw.BilinearObjective(np.random.default_rng(1).standard_normal((4, 5)))
    D = fw.ProbabilitySimplex
    for rule in (fw.NonConvexAgnostic(), "nonconvex"):
        with pytest.raises((TypeError, ValueError)) as info:
            fw.saddle_point_frank_wolfe(game, D(), D(), step_size=rule)
        msg = str(info.value)
        assert "open-loop schedule for non-convex minimization, not a line search" in msg
        assert "line searches on L" not in msg
    with pytest.raises(TypeError, match=r"a line search or short step on f"):
        fw.saddle_point_frank_wolfe(game, D(), D(), step_size=fw.ExactStep())


# -- docs/extending.md: every example runs as written -------------------------------------


def test_extending_page_examples_run():
    page = Path(__file__).resolve().parents[1] / "docs" / "extending.md"
    if not page.is_file():
        pytest.skip("no docs/ beside the tests")
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
    assert len(blocks) >= 7
    ns: dict = {}
    for code in blocks:  # in page order: a later example reuses an earlier one's names
        exec(compile(code, str(page), "exec"), ns)
    # the last run named res: the naive pairwise block step's
    assert ns["res"].extra["block_step"] == "naive_pairwise"
    assert ns["res"].status == "converged"
