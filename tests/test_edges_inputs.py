"""Bad in-memory input is refused at the boundary, once, with an error that names the
argument and the value: non-finite directions (every LMO, through ``LMO.__call__``),
non-finite objective data, ``n_jobs`` outside scikit-learn's convention, float labels
that are not whole numbers.  And what scikit-learn accepts, the estimators accept:
``ConstrainedLasso()`` (``fit_intercept=True``) on a sparse ``X``, checked against
scikit-learn's ``Lasso`` and cvxpy."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

import frankwolfe as fw
from frankwolfe.applications.lasso import ConstrainedLasso, solve_lasso
from frankwolfe.applications.structured_svm import (
    ChainModel,
    MulticlassModel,
    StructuredSVM,
    make_chain,
)
from frankwolfe.parallel import effective_n_jobs

# -- LMOs refuse non-finite directions ------------------------------------------------

LMOS = [
    fw.ProbabilitySimplex(dim=4),
    fw.L1Ball(2.0, dim=4),
    fw.L2Ball(1.0),
    fw.LpBall(3.0, 1.0),
    fw.Box(-1.0, 1.0),
    fw.KSparsePolytope(2, 1.0, dim=4),
    fw.ProductDomain([fw.ProbabilitySimplex(dim=2), fw.L1Ball(1.0, dim=2)]),
]


@pytest.mark.parametrize("lmo", LMOS, ids=repr)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_every_lmo_refuses_a_non_finite_direction(lmo, bad):
    d = np.array([0.5, -1.0, 2.0, 0.25])
    d[2] = bad
    with pytest.raises(ValueError, match=rf"`direction` must be finite, got {bad} at index 2 "):
        lmo(d)
    d[2] = 2.0
    assert np.all(np.isfinite(lmo(d).to_dense()))  # the same LMO answers a finite one


def test_matrix_and_sparse_directions_are_checked_too():
    D = np.ones((3, 3))
    D[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"got nan at index \(1, 2\) \(1 NaN or inf"):
        fw.Birkhoff(3)(D)
    with pytest.raises(ValueError, match=r"got inf at index \(0, 1\)"):
        fw.NuclearNormBall(1.0)(np.array([[1.0, np.inf], [0.0, 1.0]]))
    big = np.zeros(5000)  # beyond the small-array path
    big[4321] = -np.inf
    with pytest.raises(ValueError, match=r"got -inf at index 4321 "):
        fw.L1Ball(1.0)(big)
    s = sp.csr_array(np.array([[0.0, 1.0, 0.0, np.nan]]))
    with pytest.raises(ValueError, match=r"got nan at index \(0, 3\)"):
        fw.L1Ball(1.0)._refuse_direction(s)


def test_huge_finite_directions_still_answer():
    """A sum that overflows is settled entry by entry: the direction is finite."""
    d = np.array([1e308, 1e308, -3.0])
    np.testing.assert_array_equal(fw.L1Ball(1.0)(d).to_dense(), [-1.0, 0.0, 0.0])
    np.testing.assert_array_equal(fw.ProbabilitySimplex(dim=3)(d).to_dense(), [0, 0, 1.0])


# -- objectives refuse non-finite data --------------------------------------------------

@pytest.mark.parametrize("make, where", [
    (lambda: fw.QuadraticObjective(np.diag([1.0, np.nan, 1.0])),
     r"`Q` .* \(nan at index \(1, 1\)\)"),
    (lambda: fw.QuadraticObjective(sp.csr_array(np.diag([1.0, np.inf]))),
     r"`Q` .* \(inf at index \(1, 1\)\)"),
    (lambda: fw.QuadraticObjective(np.eye(3), [1.0, -np.inf, 0.0]), r"`c` .* \(-inf at index 1\)"),
    (lambda: fw.LeastSquares(np.array([[1.0, np.inf], [0.0, 1.0]]), [1.0, 2.0]),
     r"`A` .* \(inf at index \(0, 1\)\)"),
    (lambda: fw.LeastSquares(sp.csr_array(np.array([[1.0, 0.0], [np.nan, 1.0]])), [1.0, 2.0]),
     r"`A` .* \(nan at index \(1, 0\)\)"),
    (lambda: fw.LeastSquares(np.eye(2), [1.0, np.nan]), r"`b` .* \(nan at index 1\)"),
    (lambda: fw.LeastSquares(np.eye(2), [1.0, 2.0], offset=[0.0, np.inf]),
     r"`offset` .* \(inf at index 1\)"),
])
def test_objectives_refuse_non_finite_data(make, where):
    with pytest.raises(ValueError, match=where):
        make()


def test_solve_lasso_refuses_a_non_finite_design_at_once():
    """It used to run 10 s to status="error"."""
    A = np.random.default_rng(0).standard_normal((50, 20))
    A[3, 4] = np.inf
    with pytest.raises(ValueError, match=r"LeastSquares: `A` contains NaN or inf \(inf at "
                                         r"index \(3, 4\)\)"):
        solve_lasso(A, np.ones(50), 1.0)


# -- n_jobs as scikit-learn counts it ---------------------------------------------------

def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def test_n_jobs_follows_scikit_learn():
    cores = _cores()
    assert effective_n_jobs(None) == effective_n_jobs(1) == 1
    assert effective_n_jobs(3) == 3
    assert effective_n_jobs(-1) == cores
    assert effective_n_jobs(-2) == max(1, cores - 1)
    assert effective_n_jobs(-1000) == 1  # joblib's floor
    assert fw.ThreadExecutor(-1).n_jobs == cores
    for bad in (0, 1.5, True, "2", np.nan):
        with pytest.raises(ValueError, match=r"n_jobs must be a positive integer or -1 "
                                             r"\(all cores\), got .*scikit-learn"):
            effective_n_jobs(bad)


@pytest.mark.parametrize("n_jobs", [-1, -2])
def test_negative_n_jobs_run_bcfw_as_threads_do(n_jobs):
    f = fw.QuadraticObjective(np.eye(8), -0.4 * np.ones(8))
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=2) for _ in range(4)])
    kw = dict(batch_size=2, max_iter=5, tol=0.0, random_state=0)
    ref = fw.block_coordinate_frank_wolfe(f, dom, executor=fw.SerialExecutor(), **kw)
    res = fw.block_coordinate_frank_wolfe(f, dom, n_jobs=n_jobs, **kw)
    np.testing.assert_allclose(res.x, ref.x, rtol=0, atol=1e-14)


def test_estimators_and_oracles_count_n_jobs_alike():
    X, Y = make_chain(8, n_states=3, n_features=4, random_state=0)
    with pytest.raises(ValueError, match=r"n_jobs must be a positive integer or -1"):
        StructuredSVM(ChainModel(3, 4), n_jobs=0).fit(X, Y)
    from frankwolfe.applications.traffic import Network
    from frankwolfe.applications.traffic.assignment import AllOrNothing

    net = Network(init_node=[0, 2, 0, 3], term_node=[2, 1, 3, 1],
                  free_flow_time=[1.0, 1.0, 5.0, 5.0], capacity=[1.0] * 4, b=[0.0] * 4,
                  power=[4.0] * 4, demand=[[0, 7.0, 0], [0, 0, 0], [0, 0, 0]], n_nodes=4)
    with pytest.raises(ValueError, match=r"n_jobs must be a positive integer or -1"):
        AllOrNothing(net, n_jobs=0)
    flows = [AllOrNothing(net, n_jobs=j).assign(net.link_costs(np.zeros(4)))[0]
             for j in (1, -1)]  # -1 used to be refused
    np.testing.assert_array_equal(flows[0], flows[1])
    assert AllOrNothing(net, n_jobs=-1).n_jobs == _cores()


# -- float labels ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def chain():
    return make_chain(12, n_states=3, n_features=4, random_state=0)


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("bad, shown", [(1.5, "1.5"), (np.nan, "nan"), (np.inf, "inf")])
def test_float_labels_that_are_not_whole_numbers_are_refused(chain, compiled, bad, shown):
    X, Y = chain
    Yf = [y.astype(float) for y in Y]
    Yf[4][2] = bad
    with pytest.raises(ValueError, match=rf"StructuredSVM.fit: Y\[4\] at position 2 is the "
                                         rf"label {shown}, not an integer"):
        StructuredSVM(ChainModel(3, 4), max_passes=2, compiled=compiled).fit(X, Yf)


@pytest.mark.parametrize("solver, compiled", [
    ("bcfw", True), ("bcfw", False), ("bcfw_pairwise", True), ("fw", True),
    ("cutting_plane", True), ("ssg", True), ("online_eg", True),
    ("dual_extragradient", True)])
def test_a_label_outside_the_models_states_is_refused_by_every_solver(chain, solver,
                                                                      compiled):
    """A training label the chain has no state for: a ValueError naming it, from every
    solver (the batch oracles of "fw" and "cutting_plane" indexed its features unchecked:
    heap corruption, the process aborted after the fit), and from ``primal``."""
    X, Y = chain
    Y = [y.copy() for y in Y]
    Y[2][0] = 3
    msg = (r"ChainModel: (the true labelling of example 2 has label 3 at position 0|.* has "
           r"labels in \[0, 3\]).*\[0, 3\)")
    with pytest.raises(ValueError, match=msg):
        StructuredSVM(ChainModel(3, 4), solver=solver, compiled=compiled, max_passes=2,
                      random_state=0).fit(X, Y)
    svm = StructuredSVM(ChainModel(3, 4), max_passes=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm.fit(X, chain[1])
    with pytest.raises(ValueError, match=msg):
        svm.primal(X, Y)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_whole_float_labels_train_as_their_integers(chain):
    X, Y = chain
    kw = dict(max_passes=6, gap_every=3, random_state=0)
    ref = StructuredSVM(ChainModel(3, 4), **kw).fit(X, Y)
    got = StructuredSVM(ChainModel(3, 4), **kw).fit(X, [y.astype(float) for y in Y])
    np.testing.assert_array_equal(got.w_, ref.w_)
    assert got.error(X, [y.astype(float) for y in Y]) == ref.error(X, Y)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_multiclass_float_labels():
    rng = np.random.default_rng(0)
    X = list(rng.standard_normal((30, 3)))
    y = rng.integers(0, 3, 30)
    kw = dict(max_passes=4, gap_every=2, random_state=0)
    ref = StructuredSVM(MulticlassModel(3, 3), **kw).fit(X, y)
    got = StructuredSVM(MulticlassModel(3, 3), **kw).fit(X, y.astype(float))
    np.testing.assert_array_equal(got.w_, ref.w_)
    bad = y.astype(float)
    bad[7] = 2.5
    with pytest.raises(ValueError, match=r"Y\[7\] is the label 2.5, not an integer"):
        StructuredSVM(MulticlassModel(3, 3), **kw).fit(X, bad)
    with pytest.raises(ValueError, match=r"Y_test\[0\] is the label 0.5"):
        StructuredSVM(MulticlassModel(3, 3), **kw).fit(X, y, X_test=X[:2], Y_test=[0.5, 1.0])


# -- ConstrainedLasso with an intercept on a sparse X -----------------------------------

@pytest.fixture(scope="module")
def sparse_problem():
    rng = np.random.default_rng(3)
    X = sp.random(80, 25, density=0.25, random_state=4, format="csr") * 3.0
    coef = np.zeros(25)
    coef[[2, 7, 11]] = [1.5, -2.0, 0.7]
    y = X @ coef + 4.0 + 0.1 * rng.standard_normal(80)  # an intercept of about 4
    return X, y


def test_constrained_lasso_fits_an_intercept_on_sparse_x_as_sklearn(sparse_problem):
    """scikit-learn's (penalized) Lasso with an intercept on the same sparse X: its
    solution solves the constrained problem at radius ||coef||_1."""
    from sklearn.linear_model import Lasso

    X, y = sparse_problem
    sk = Lasso(alpha=0.05, tol=1e-12, max_iter=100000).fit(X, y)
    r = float(np.abs(sk.coef_).sum())
    est = ConstrainedLasso(radius=r, tol=1e-14, max_iter=100000).fit(X, y)  # of 1/2||y-ȳ||^2
    assert sp.issparse(X) and est.gap_ <= 1e-10
    np.testing.assert_allclose(est.coef_, sk.coef_, rtol=0, atol=1e-6)
    assert est.intercept_ == pytest.approx(sk.intercept_, abs=1e-6)
    np.testing.assert_allclose(est.predict(X), sk.predict(X), rtol=0, atol=1e-5)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_constrained_lasso_on_sparse_x_matches_cvxpy_and_dense_x(sparse_problem, fmt):
    import cvxpy as cp

    X, y = sparse_problem
    X = X.asformat(fmt)
    Xd = X.toarray()
    b, c = cp.Variable(25), cp.Variable()
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(Xd @ b + c - y)), [cp.norm1(b) <= 2.0]).solve()
    est = ConstrainedLasso(radius=2.0, tol=1e-12, max_iter=100000).fit(X, y)
    dense = ConstrainedLasso(radius=2.0, tol=1e-12, max_iter=100000).fit(Xd, y)
    np.testing.assert_allclose(est.coef_, b.value, rtol=0, atol=1e-5)
    assert est.intercept_ == pytest.approx(float(c.value), abs=1e-5)
    np.testing.assert_allclose(est.coef_, dense.coef_, rtol=0, atol=1e-9)
    assert est.intercept_ == pytest.approx(dense.intercept_, abs=1e-9)
    assert est.result_.message == dense.result_.message or est.gap_ <= 1e-10


@pytest.mark.parametrize("radius", [1000.0, "sklearn", 2000.0])
def test_fcfw_constrained_lasso_on_sparse_x_with_an_intercept_matches_sklearn(radius):
    """The offset design (a sparse X centred inside the products) has no product tracker:
    the corrective QP fell back to cvxpy, whose weights at f ~ 6e5 were not accurate
    enough (NonConvexError, or 55 above the optimum after 10^4 iterations).  Its Gram
    model now takes the images from the objective.  Checked against the dense fit and
    scikit-learn's penalized Lasso at the same l1 norm."""
    from sklearn.datasets import load_diabetes
    from sklearn.linear_model import Lasso

    X, y = load_diabetes(return_X_y=True)
    sk = Lasso(alpha=0.1, tol=1e-12, max_iter=100000).fit(X, y)
    tau = float(np.abs(sk.coef_).sum()) if radius == "sklearn" else radius  # 1727.9...
    est = ConstrainedLasso(radius=tau, method="fcfw", tol=1e-8).fit(sp.csr_matrix(X), y)
    dense = ConstrainedLasso(radius=tau, method="fcfw", tol=1e-8).fit(X, y)
    assert est.result_.success, est.result_.message
    np.testing.assert_allclose(est.coef_, dense.coef_, rtol=0, atol=1e-6 * tau)
    if radius == "sklearn":  # the same problem at that l1 norm
        np.testing.assert_allclose(est.coef_, sk.coef_, rtol=0, atol=1e-4)
        assert est.intercept_ == pytest.approx(sk.intercept_, abs=1e-4)


def test_least_squares_offset_is_the_centred_design():
    """The offset objective agrees with LeastSquares on the explicitly centred matrix:
    values, gradients, exact steps, smoothness."""
    rng = np.random.default_rng(5)
    A = sp.random(30, 12, density=0.3, random_state=6, format="csc")
    mu = np.asarray(A.mean(axis=0)).ravel()
    b = rng.standard_normal(30)
    f = fw.LeastSquares(A, b, offset=mu)
    g = fw.LeastSquares(A.toarray() - mu, b)
    x, d = rng.standard_normal(12), rng.standard_normal(12)
    assert f.value(x) == pytest.approx(g.value(x), rel=1e-12)
    np.testing.assert_allclose(f.gradient(x), g.gradient(x), rtol=1e-12, atol=1e-12)
    assert f.exact_step(x, d, f.gradient(x)) == pytest.approx(
        g.exact_step(x, d, g.gradient(x)), rel=1e-10)
    assert f.smoothness == pytest.approx(g.smoothness, rel=1e-10)
    with pytest.raises(NotImplementedError, match="offset"):
        f.compiled_design()
