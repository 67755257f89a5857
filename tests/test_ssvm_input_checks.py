"""Input checks of the structured SVM estimators, models, inference and loaders: each
bad argument is refused by name instead of being truncated, ignored or hanging."""

from __future__ import annotations

import numpy as np
import pytest

from frankwolfe.applications._checks import check_pair
from frankwolfe.applications.structured_svm import (
    ChainModel,
    EdgeFeatureGraphCRF,
    LatentGraphCRF,
    LatentSSVM,
    MatchingModel,
    MulticlassModel,
    StructuredSVM,
    make_chain,
    make_latent_blocks,
)
from frankwolfe.applications.structured_svm.kernel_bcfw import (
    KernelStructuredSVM,
    LabelMatchKernel,
    enumerate_labellings,
)
from frankwolfe.applications.structured_svm.latent_ssvm import latent_objective
from frankwolfe.applications.structured_svm.models.graph import (
    exact_elimination,
    exact_enumeration,
    infer,
)
from frankwolfe.applications.structured_svm.models.graph.energy import check_edges
from frankwolfe.applications.structured_svm.oracles import batch_primal
from frankwolfe.errors import ShapeError

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def chain():
    X, Y = make_chain(4, 3, 4, length=(2, 3), random_state=0)
    return StructuredSVM(ChainModel(3, 4), lam=0.1, max_passes=2).fit(X, Y), X, Y


@pytest.fixture(scope="module")
def matching():
    rng = np.random.default_rng(0)
    X = [rng.normal(size=(3, 3, 2)) for _ in range(3)]
    Y = [rng.permutation(3) for _ in range(3)]
    return StructuredSVM(MatchingModel(2), lam=0.1, max_passes=2).fit(X, Y), X, Y


# S1 ---------------------------------------------------------------------------------
def test_primal_refuses_mismatched_lengths(chain):
    est, X, Y = chain
    with pytest.raises(ValueError, match=r"StructuredSVM.primal: X has 3 examples but Y has 4"):
        est.primal(X[:-1], Y)
    with pytest.raises(ValueError, match=r"batch_primal: X has 4 examples but Y has 1"):
        batch_primal(est.model, X, Y[:1], est.w_, 0.1)


def test_error_and_score_refuse_mismatched_lengths(chain, matching):
    est, X, Y = chain
    with pytest.raises(ValueError, match=r"StructuredSVM.error: X has 4 examples but Y has 3"):
        est.score(X, Y[:-1])
    em, Xm, Ym = matching
    with pytest.raises(ValueError, match=r"StructuredSVM.error: X has 2 examples"):
        em.error(Xm[:2], Ym)


def test_score_of_no_example(chain):
    est, _, _ = chain
    with pytest.raises(ValueError, match=r"StructuredSVM.error: no examples"):
        est.score([], [])
    with pytest.raises(ValueError, match=r"where: no examples"):
        check_pair([], [], "where")


def test_kernel_error_refuses_mismatched_lengths():
    X = [np.array([0.0, 1.0]), np.array([1.0, 0.0]), np.array([1.0, 1.0])]
    Y = [0, 1, 1]
    est = KernelStructuredSVM(MulticlassModel(2, 2), LabelMatchKernel("linear"),
                              max_passes=2).fit(X, Y)
    with pytest.raises(ValueError, match=r"KernelStructuredSVM.error: X has 3 examples but Y "
                                         r"has 2"):
        est.score(X, Y[:2])
    with pytest.raises(ValueError, match=r"KernelStructuredSVM.error: no examples"):
        est.score([], [])


# S2, S3 -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def latent():
    X, Y = make_latent_blocks(4, 4, 4, random_state=0)
    inner = StructuredSVM(LatentGraphCRF(2, 2, 2, inference="exact"), lam=1.0, max_passes=2)
    return LatentSSVM(inner, max_rounds=1).fit(X, Y), X, Y


def test_latent_objective_refuses_mismatched_lengths(latent):
    est, X, Y = latent
    with pytest.raises(ValueError, match=r"LatentSSVM.objective: X has 4 examples but Y has 2"):
        est.objective(X, Y[:2])
    with pytest.raises(ValueError, match=r"latent_objective: X has 2 examples but Y has 4"):
        latent_objective(est.base_ssvm.model, X[:2], Y, est.w_, 1.0)


def test_latent_fit_refuses_mismatched_test_set(latent):
    est, X, Y = latent
    with pytest.raises(ValueError, match=r"LatentSSVM.fit: X_test has 4 examples but Y_test "
                                         r"has 1"):
        LatentSSVM(est.base_ssvm, max_rounds=1).fit(X, Y, X_test=X, Y_test=Y[:1])


# S4 ---------------------------------------------------------------------------------
def test_chain_loss_refuses_text_labels(chain):
    est, X, Y = chain
    # a dtype problem: a ValueError, not a ShapeError (which it was)
    with pytest.raises(ValueError, match=r"ChainModel.batch_loss: `Y_true` must hold integer"):
        est.score(X, [y.astype(str) for y in Y])
    with pytest.raises(ValueError, match=r"ChainModel.loss: `y_true` must hold integer"):
        est.model.loss(np.array(["a", "b"]), np.array([0, 1]))
    # a test-only tag (out of range) still counts as a miss
    assert est.score(X, [y + 100 for y in Y]) == 0.0


def test_matching_loss_refuses_non_matchings(matching):
    est, X, Y = matching
    model = est.model
    with pytest.raises(ValueError, match=r"MatchingModel.loss: `y_true` = \[0, 0, 0\] is not"):
        model.loss(np.array([0, 0, 0]), np.array([0, 1, 2]))
    with pytest.raises(ShapeError, match=r"MatchingModel.loss: `y` must be an integer array"):
        model.loss(np.array([0, 1, 2]), np.array(["0", "1", "2"]))
    with pytest.raises(ValueError, match=r"StructuredSVM.error: MatchingModel: `Y\[0\]` = "
                                         r"\[7, 8, 9\] is not"):
        est.score(X, [np.array([7, 8, 9])] * 3)


# S6 ---------------------------------------------------------------------------------
@pytest.mark.parametrize("bad, error", [(float("nan"), ValueError), (float("inf"), ValueError),
                                        (None, TypeError), ("10", TypeError), (2.5, ValueError),
                                        (0, ValueError)])
def test_exact_enumeration_size_guard(bad, error):
    with pytest.raises(error, match=r"exact_enumeration: `max_labellings` must be"):
        exact_enumeration(np.zeros((40, 2)), np.zeros((0, 2, 2)), np.zeros((0, 2), int),
                          max_labellings=bad)


def test_exact_enumeration_int64_overflow():
    with pytest.raises(ValueError, match=r"exact_enumeration: 2\^70 labellings exceed the int64"):
        exact_enumeration(np.zeros((70, 2)), np.zeros((0, 2, 2)), np.zeros((0, 2), int),
                          max_labellings=10**40)


def test_exact_elimination_max_table():
    with pytest.raises(ValueError, match=r"exact_elimination: `max_table` must be"):
        exact_elimination(np.zeros((3, 2)), np.zeros((0, 2, 2)), np.zeros((0, 2), int),
                          max_table=float("nan"))


def test_enumerate_labellings_max_labellings():
    with pytest.raises(ValueError, match=r"enumerate_labellings: `max_labellings` must be"):
        enumerate_labellings(ChainModel(2, 2), np.zeros((30, 2)), max_labellings=float("inf"))


# S7 ---------------------------------------------------------------------------------
@pytest.mark.parametrize("bad, kind", [([0.5], ValueError), ([True], TypeError),
                                       ("01", TypeError), (5, TypeError),
                                       ([float("nan")], ValueError)])
def test_edge_feature_indices(bad, kind):
    for name in ("symmetric_edge_features", "antisymmetric_edge_features"):
        with pytest.raises(kind, match=rf"EdgeFeatureGraphCRF: `{name}` must"):
            EdgeFeatureGraphCRF(2, 2, 2, **{name: bad})


# S8 ---------------------------------------------------------------------------------
def test_download_if_missing_must_be_a_bool(tmp_path):
    from frankwolfe.applications.data.sources import conll2000_home, ocr_home, snakes_home
    from frankwolfe.applications.structured_svm.datasets.conll import load_conll2000
    from frankwolfe.applications.structured_svm.datasets.ocr import load_ocr

    with pytest.raises(TypeError, match=r"load_ocr: `download_if_missing` must be True or "
                                        r"False, got 'no'"):
        load_ocr(data_home=tmp_path, download_if_missing="no")
    with pytest.raises(TypeError, match=r"load_conll2000: `download_if_missing`"):
        load_conll2000(data_home=tmp_path, download_if_missing=1)
    for home, who in ((ocr_home, "fetch_ocr"), (snakes_home, "fetch_snakes"),
                      (conll2000_home, "fetch_conll2000")):
        with pytest.raises(TypeError, match=rf"{who}: `download_if_missing`"):
            home(tmp_path, "no")


# S9 ---------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5, 0), (0, 3)])
def test_check_edges_empty_of_wrong_shape(shape):
    with pytest.raises(ShapeError, match=r"where: `edges` must have shape \(n_edges, 2\)"):
        check_edges(np.zeros(shape, dtype=int), 3, "where")
    assert check_edges([], 3, "where").shape == (0, 2)


@pytest.mark.parametrize("kw, match, error", [({"noise": float("inf")}, "noise", ValueError),
                                              ({"noise": True}, "noise", TypeError),
                                              ({"length": (2.5, 4)}, "length", ValueError),
                                              ({"length": 3}, "length", TypeError)])
def test_make_chain_arguments(kw, match, error):
    with pytest.raises(error, match=rf"make_chain: `{match}` must"):
        make_chain(2, 2, 2, **kw)


@pytest.mark.parametrize("gamma", [-1, "a", float("nan"), True])
def test_label_match_kernel_gamma(gamma):
    with pytest.raises(ValueError, match=r"LabelMatchKernel: `gamma` must be a positive"):
        LabelMatchKernel("rbf", gamma=gamma)


def test_label_match_kernel_unknown_option():
    with pytest.raises(TypeError, match=r"LabelMatchKernel: unknown option 'bogus'"):
        LabelMatchKernel("rbf", bogus=1)


@pytest.mark.parametrize("method", ["auto", "exact", "trws"])
def test_infer_unknown_option(method):
    with pytest.raises(ValueError, match=r"infer: inference .* takes no option 'bogus'"):
        infer(np.zeros((2, 2)), np.zeros((1, 2, 2)), np.array([[0, 1]]), method, bogus=1)


# D-list ------------------------------------------------------------------------------
@pytest.mark.parametrize("bad, error", [(None, TypeError), ("3", TypeError),
                                        (10**400, ValueError), (True, TypeError),
                                        (float("nan"), ValueError), (-1, ValueError)])
def test_matching_costs(bad, error):
    with pytest.raises(error, match=r"MatchingModel: `precision_cost` must be"):
        MatchingModel(2, precision_cost=bad)


@pytest.mark.parametrize("bad", [None, "5", True])
def test_message_passing_and_lp_tolerances(bad):
    from frankwolfe.applications.structured_svm.models.graph import local_lp, trws

    args = (np.zeros((3, 2)), np.zeros((3, 2, 2)), np.array([[0, 1], [1, 2], [0, 2]]))
    with pytest.raises(TypeError, match=r"trws: `tol` must be"):
        trws(*args, tol=bad)
    with pytest.raises(TypeError, match=r"local_lp: `tol` must be"):
        local_lp(*args, tol=bad)


def test_graph_crf_inference_options_and_class_weight():
    from frankwolfe.applications.structured_svm import GraphCRF

    with pytest.raises(TypeError, match=r"GraphCRF: `inference_options` must be a dict"):
        GraphCRF(2, 2, inference_options=[1, 2])
    with pytest.raises(ValueError, match=r"GraphCRF: `class_weight` must be"):
        GraphCRF(3, 2, class_weight=["a", "b", "c"])


def test_conll_empty_files(tmp_path):
    from frankwolfe.applications.structured_svm.datasets.conll import load_conll2000

    folder = tmp_path / "conll2000"
    folder.mkdir()
    for name in ("train.txt", "test.txt"):
        (folder / name).write_text("")
    with pytest.raises(ValueError, match=r"load_conll2000: .*train.txt holds no sentence"):
        load_conll2000(data_home=tmp_path)


def test_latent_score_of_no_example(latent):
    est, _, _ = latent
    with pytest.raises(ValueError, match=r"LatentSSVM.error: no examples"):
        est.score([], [])


def test_plot_convergence_arguments(chain):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from frankwolfe.plotting import plot_convergence

    res = chain[0].result_ if hasattr(chain[0], "result_") else None
    with pytest.raises(TypeError, match=r"plot_convergence: `results\['a'\]` must be a Result"):
        plot_convergence({"a": 3})
    if res is not None:
        with pytest.raises(TypeError, match=r"plot_convergence: `ax` must be"):
            plot_convergence(res, ax="a")
        with pytest.raises(TypeError, match=r"plot_convergence: `f_star` must be"):
            plot_convergence(res, y="primal_gap", f_star="a")


@pytest.mark.parametrize("path, kind", [("", ValueError), (None, TypeError),
                                        (".", IsADirectoryError)])
def test_output_paths(chain, path, kind):
    est = chain[0]
    with pytest.raises(kind, match=r"History.to_csv: `path`"):
        est.history_.to_csv(path)
    with pytest.raises(kind, match=r"StructuredSVM.save: `path`"):
        est.save(path)


def test_complex_potentials_are_refused_by_name():
    """A complex unary or pairwise potential lost its imaginary part with a numpy
    ComplexWarning and was inferred on its real part."""
    from frankwolfe.applications.structured_svm.models.graph.energy import check_energy

    u, p, e = np.zeros((3, 2)), np.zeros((2, 2)), np.array([[0, 1], [1, 2]])
    with pytest.raises(ValueError, match="infer: `unary` must be real"):
        check_energy(u + 1j, p, e, "infer")
    with pytest.raises(ValueError, match="infer: `pairwise` must be real"):
        check_energy(u, p + 1j, e, "infer")


def test_a_psi_override_may_answer_a_dense_or_sparse_vector():
    """docs/structured_svm.md: psi is phi(x, y_true) - phi(x, y); a model answering it
    as a vector (as joint_feature may) failed fit with "too many values to unpack".
    Checked against the same model without the override."""
    import scipy.sparse as sp

    from frankwolfe.applications.structured_svm import StructuredModel

    class Plain(StructuredModel):
        size_joint_feature = 6

        def joint_feature(self, x, y):
            p = np.zeros(6)
            p[3 * y:3 * y + 3] = x
            return p

        def loss(self, y_true, y):
            return float(y_true != y)

        def decode(self, x, w):
            return int(np.argmax(w.reshape(2, 3) @ x))

        def loss_augmented_decode(self, x, y_true, w):
            return int(np.argmax((np.arange(2) != y_true) + w.reshape(2, 3) @ x))

    class Dense(Plain):
        def psi(self, x, y_true, y):
            return self.joint_feature(x, y_true) - self.joint_feature(x, y)

    class Sparse(Dense):
        def psi(self, x, y_true, y):
            return sp.csr_array(super().psi(x, y_true, y).reshape(1, -1))

    X = list(np.random.default_rng(0).normal(size=(10, 3)))
    Y = [int(x[0] > 0) for x in X]
    ref = StructuredSVM(Plain(), lam=0.1, max_passes=5, random_state=0).fit(X, Y).w_
    for model in (Dense(), Sparse()):
        for solver in ("bcfw", "fw", "ssg"):
            w = StructuredSVM(model, lam=0.1, max_passes=5, random_state=0,
                              solver=solver).fit(X, Y).w_
            if solver == "bcfw":
                np.testing.assert_allclose(w, ref, rtol=1e-12, atol=1e-15)
            assert np.all(np.isfinite(w))


@pytest.mark.parametrize("make", [
    lambda: StructuredSVM(MulticlassModel(2, 2)),
    lambda: KernelStructuredSVM(MulticlassModel(2, 2)),
])
def test_fit_without_labels_or_with_a_scalar_is_named(make):
    X = [np.ones(2), np.zeros(2)]
    with pytest.raises(ValueError, match=r"\.fit requires Y to be passed, but Y is None"):
        make().fit(X, None)
    with pytest.raises(TypeError, match=r"\.fit: X must be a sequence of examples .* got int"):
        make().fit(3, [0, 1])
