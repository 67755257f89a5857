"""The estimators are real scikit-learn estimators: model selection, pipelines,
NotFittedError, ConvergenceWarning and declarative parameter checks.

scikit-learn's ``check_estimator`` runs on ``ConstrainedLasso`` only.  The structured
estimators (``StructuredSVM``, ``KernelStructuredSVM``, ``LatentSSVM``) are not run
through it: their ``model`` fixes the number of features and the set of labels
(``MulticlassModel(2, 4)`` takes 4 features and the classes 0 and 1), while the checks
fit on generated data of their own shapes and classes; and they declare
``two_d_array=False`` (``X`` is a list of examples, e.g. ragged sequences), on which
``check_estimator`` skips every check with a ``SkipTestWarning``.  What
those checks would cover is tested here directly: cloning, ``get_params``/``set_params``,
grid search and cross-validation on ragged lists, pipelines, pandas input, NotFittedError
and the parameter checks."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_diabetes
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.linear_model import Lasso
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.utils.estimator_checks import check_estimator

import frankwolfe as fw
from frankwolfe.applications.lasso import ConstrainedLasso
from frankwolfe.applications.structured_svm import (
    ChainModel,
    KernelStructuredSVM,
    LabelMatchKernel,
    MulticlassModel,
    StructuredSVM,
    make_chain,
)


@pytest.fixture
def nodebug():
    with fw.debug(False):
        yield


@pytest.fixture(scope="module")
def ragged():
    """Sequences of lengths 3..8: ragged lists that sklearn must index, not stack."""
    X, Y = make_chain(90, n_states=3, n_features=4, noise=1.0, random_state=1)
    assert len({len(x) for x in X}) > 1
    return X, Y


def _svm(**kw):
    kw = {"max_passes": 20, "gap_every": 5, "random_state": 0, **kw}
    return StructuredSVM(ChainModel(3, 4), **kw)


@pytest.mark.parametrize("kw", [{}, {"method": "compiled_pairwise"},
                                {"method": "compiled_pairwise", "fit_intercept": False}])
def test_check_estimator_constrained_lasso(kw):
    # raises on any failed check; the compiled method with an intercept declares no sparse
    # input and refuses it by name (it raised LeastSquares' NotImplementedError)
    check_estimator(ConstrainedLasso(**kw))


def test_constrained_lasso_cross_val_score_diabetes():
    X, y = load_diabetes(return_X_y=True)
    est = make_pipeline(StandardScaler(), ConstrainedLasso(radius=200.0))
    scores = cross_val_score(est, X, y, cv=3)
    # the penalized lasso of scikit-learn reaches R^2 ~ 0.46-0.5 on these folds: an l1
    # bound of 200 on standardized features is in the same regime
    assert scores.shape == (3,) and np.all((0.3 < scores) & (scores < 0.7)), scores


def test_constrained_lasso_tol_is_relative_to_the_scale_of_y():
    """An absolute gap of 1e-8 on a loss of 6e5 (diabetes: y in the hundreds) ran out of
    max_iter at a relative gap of 5e-10 and warned in every pipeline."""
    X, y = load_diabetes(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fits = [make_pipeline(StandardScaler(), ConstrainedLasso(radius=s * 1000.0)).fit(X, s * y)
                for s in (1.0, 1e-3)]
    a, b = fits[0][-1], fits[1][-1]
    null_loss = 0.5 * float(np.sum((y - y.mean()) ** 2))
    assert a.gap_ <= 1e-8 * null_loss and a.result_.success
    # the same fit in other units of y: the same relative accuracy, coefficients scaled
    assert b.result_.success and b.gap_ <= 1e-6 * 1e-8 * null_loss
    assert abs(a.n_iter_ - b.n_iter_) <= 0.05 * a.n_iter_  # steps round otherwise
    np.testing.assert_allclose(1e3 * b.coef_, a.coef_, rtol=1e-3, atol=1e-3)
    # against scikit-learn's Lasso at the same l1 norm
    Xs = StandardScaler().fit_transform(X)
    sk = Lasso(alpha=0.5, tol=1e-12, max_iter=100000).fit(Xs, y)
    est = ConstrainedLasso(radius=float(np.abs(sk.coef_).sum()), tol=1e-12).fit(Xs, y)
    np.testing.assert_allclose(est.coef_, sk.coef_, rtol=0, atol=1e-4)


def test_constrained_lasso_rafw_is_reproducible_by_random_state():
    """method="rafw" samples vertices; the estimator had no random_state, and two fits
    of the same data differed by 1.1 in a coefficient after 15 iterations."""
    rng = np.random.default_rng(1)
    A = rng.standard_normal((200, 500))
    y = A[:, :20] @ rng.standard_normal(20)

    def fit(seed):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return ConstrainedLasso(radius=5.0, method="rafw", max_iter=15,
                                    random_state=seed).fit(A, y).coef_

    np.testing.assert_array_equal(fit(0), fit(0))
    assert not np.array_equal(fit(0), fit(1))
    with pytest.raises(ValueError, match="'random_state' parameter of ConstrainedLasso"):
        ConstrainedLasso(random_state="abc").fit(A, y)


def test_structured_svm_grid_search_over_lam(ragged, nodebug):
    X, Y = ragged
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        gs = GridSearchCV(_svm(), {"lam": [1e-2, 1e-3]}, cv=3).fit(X, Y)
        untrained = cross_val_score(_svm(max_passes=0), X, Y, cv=3)
    means = gs.cv_results_["mean_test_score"]
    # score is 1 - error, higher is better: the search keeps the best mean, and a trained
    # model beats the untrained w = 0 (every label tied, decoded as state 0) by far
    assert gs.best_index_ == int(np.argmax(means))
    assert np.all(means > 0.85) and np.all(untrained < 0.6), (means, untrained)
    assert gs.best_estimator_.lam_ == gs.best_params_["lam"]
    assert gs.score(X, Y) == pytest.approx(gs.best_estimator_.score(X, Y), abs=1e-15)


def _as_float(X):
    return [np.asarray(x, dtype=float) for x in X]


def test_structured_svm_cross_val_score_and_pipeline(ragged, nodebug):
    X, Y = ragged
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        scores = cross_val_score(_svm(lam=1e-2), X, Y, cv=KFold(3))
        pipe = make_pipeline(FunctionTransformer(_as_float), _svm(lam=1e-2))
        pipe_scores = cross_val_score(pipe, X, Y, cv=KFold(3))
        direct = _svm(lam=1e-2).fit(X[:60], Y[:60])
    assert np.all(scores > 0.8), scores
    np.testing.assert_allclose(pipe_scores, scores, rtol=0, atol=1e-12)
    fitted = pipe.fit(X[:60], Y[:60])
    assert [list(p) for p in fitted.predict(X[60:])] == [list(p) for p in direct.predict(X[60:])]


def test_clone_and_params():
    svm = _svm(lam=0.5)
    twin = clone(svm)
    assert twin.get_params()["lam"] == 0.5 and twin is not svm
    assert "model" in twin.get_params() and twin.set_params(lam=0.1).lam == 0.1
    k = clone(KernelStructuredSVM(MulticlassModel(2, 2), lam=0.3))
    assert k.lam == 0.3


def test_not_fitted_errors(ragged):
    X, _ = ragged
    for est, data in ((_svm(), X),
                      (KernelStructuredSVM(MulticlassModel(2, 2)), [np.zeros(2)]),
                      (ConstrainedLasso(), np.ones((2, 3)))):
        with pytest.raises(NotFittedError, match="not fitted yet"):
            est.predict(data)


def test_convergence_warning_only_when_a_budget_stops_the_run(ragged, nodebug):
    X, Y = ragged
    with pytest.warns(ConvergenceWarning, match="max_passes budget ended the run"):
        _svm(lam=1e-2, tol=0.0).set_params(max_passes=2, gap_every=1).fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        _svm(lam=0.1, tol=1.0).fit(X, Y)  # reaches tol: no warning
    Xl, yl = load_diabetes(return_X_y=True)
    with pytest.warns(ConvergenceWarning, match="max_iter=3 ended the run"):
        ConstrainedLasso(radius=1000.0, max_iter=3).fit(Xl, yl)
    rng = np.random.default_rng(0)
    Xk = list(rng.normal(size=(20, 2)))
    Yk = [int(x[0] > 0) for x in Xk]
    with pytest.warns(ConvergenceWarning, match="max_passes budget"):
        KernelStructuredSVM(MulticlassModel(2, 2), LabelMatchKernel("rbf", gamma=1.0), lam=0.1,
                            tol=0.0, max_passes=1, gap_every=1, random_state=0).fit(Xk, Yk)


def test_declarative_parameter_checks(ragged):
    X, Y = ragged
    with pytest.raises(ValueError, match="'max_passes' parameter of StructuredSVM.*Got -1"):
        _svm(max_passes=-1).fit(X, Y)
    with pytest.raises(ValueError, match="'tol' parameter of StructuredSVM.*Got -0.5"):
        _svm(tol=-0.5).fit(X, Y)
    with pytest.raises(ValueError, match="'lam' parameter of StructuredSVM.*Got inf"):
        _svm(lam=np.inf).fit(X, Y)
    with pytest.raises(ValueError, match="'radius' parameter of ConstrainedLasso.*Got 0"):
        ConstrainedLasso(radius=0).fit(np.eye(3), np.ones(3))
    with pytest.raises(ValueError, match="'block_step' parameter of KernelStructuredSVM"):
        KernelStructuredSVM(MulticlassModel(2, 2), block_step="away").fit([np.zeros(2)], [0])


# -- non-finite inputs -------------------------------------------------------------------


def test_non_finite_features_are_rejected_with_example_and_position(ragged):
    X, Y = ragged
    bad = [x.copy() for x in X]
    bad[7][2, 1] = np.nan
    with pytest.raises(ValueError, match=r"StructuredSVM.fit: X\[7\] contains nan .* at "
                                         r"position \(2, 1\)"):
        _svm().fit(bad, Y)
    bad[7][2, 1] = np.inf
    with pytest.raises(ValueError, match=r"X\[7\] contains inf .* position \(2, 1\)"):
        _svm().fit(bad, Y)
    with pytest.raises(ValueError, match=r"X_test\[7\] contains inf"):
        _svm().fit(X, Y, X_test=bad, Y_test=Y)
    with fw.debug(False), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm = _svm(max_passes=1).fit(X, Y)
    with pytest.raises(ValueError, match=r"StructuredSVM.predict: X\[7\] contains inf"):
        svm.predict(bad)
    Xk = [np.zeros(2), np.array([0.0, -np.inf])]
    with pytest.raises(ValueError, match=r"KernelStructuredSVM.fit: X\[1\] contains -inf .* "
                                         r"position \(1,\)"):
        KernelStructuredSVM(MulticlassModel(2, 2)).fit(Xk, [0, 1])
    A = np.ones((4, 3))
    A[3, 2] = np.nan
    with pytest.raises(ValueError, match=r"ConstrainedLasso.fit: `X` contains NaN or inf "
                                         r"\(nan at index \(3, 2\)\)"):
        ConstrainedLasso().fit(A, np.ones(4))
    with pytest.raises(ValueError, match=r"ConstrainedLasso.fit: `y` contains NaN or inf "
                                         r"\(inf at index 1\)"):
        ConstrainedLasso().fit(np.ones((4, 3)), [0.0, np.inf, 0.0, 1.0])


def test_structured_svm_takes_pandas_by_position(nodebug):
    """A Series with the index of a subset, a shuffled cross-validation fold and a
    DataFrame of rows (set_output(transform="pandas")) are examples by position: labels
    indexed by their row names raised KeyError, a DataFrame iterated its column names."""
    pd = pytest.importorskip("pandas")
    from frankwolfe.applications.structured_svm import MultiLabelModel, make_multilabel_tree

    rng = np.random.default_rng(0)
    Xa = rng.normal(size=(90, 4))
    ya = (Xa[:, 0] + 0.3 * rng.normal(size=90) > 0).astype(int)
    X = pd.DataFrame(Xa, columns=[f"f{i}" for i in range(4)], index=np.arange(100, 190))
    y = pd.Series(ya, index=np.arange(100, 190))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm = StructuredSVM(MulticlassModel(2, 4), lam=1e-2, max_passes=10, random_state=0)
        on_frames = svm.fit(X, y).w_.copy()
        ref = clone(svm).fit(Xa, ya)
        assert np.array_equal(on_frames, ref.w_)
        assert svm.score(X, y) == pytest.approx(ref.score(Xa, ya), abs=1e-15)
        cv = KFold(3, shuffle=True, random_state=0)
        np.testing.assert_allclose(cross_val_score(svm, Xa, y, cv=cv),
                                   cross_val_score(svm, Xa, ya, cv=cv), rtol=0, atol=1e-12)
        Xm, Ym = make_multilabel_tree(40, n_labels=4, n_features=5, random_state=0)
        ml = StructuredSVM(MultiLabelModel(4, 5), lam=1e-2, max_passes=5, random_state=0)
        pipe = make_pipeline(StandardScaler(), ml).set_output(transform="pandas")
        pipe.fit(Xm, pd.DataFrame(Ym))
        ref = make_pipeline(StandardScaler(), clone(ml)).fit(Xm, Ym)
    assert np.array_equal(pipe[-1].w_, ref[-1].w_)

