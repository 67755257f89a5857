"""Input messages that name the argument and the value at fault:

- MulticlassModel: text and ``None`` labels (``int()`` raised Python's own errors);
- LatentSSVM: a malformed ``lam`` of its inner StructuredSVM (``float()`` raised first);
- ProductDomain: the size keyword of each built-in domain (not ``dim`` for all);
- relative_gap: a flow vector of another length (read as a flow short of the demand).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import frankwolfe as fw
from frankwolfe.applications._params import InvalidParameterError
from frankwolfe.applications.structured_svm import (
    LatentGraphCRF,
    LatentSSVM,
    MulticlassModel,
    StructuredSVM,
    make_latent_blocks,
)
from frankwolfe.applications.traffic import load_siouxfalls, relative_gap
from frankwolfe.errors import ShapeError
from frankwolfe.lmo.base import LMO


# -- MulticlassModel labels -------------------------------------------------------------------
def _multiclass_data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.normal(size=(12, 5)), np.arange(12) % 3


def _fit(X: np.ndarray, Y: object, compiled: bool = True) -> StructuredSVM:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the short budget's ConvergenceWarning
        return StructuredSVM(MulticlassModel(3, 5), max_passes=3, random_state=0,
                             compiled=compiled).fit(X, Y)


@pytest.mark.parametrize("compiled", [True, False])
def test_multiclass_fit_names_text_and_none_labels(compiled):
    X, y = _multiclass_data()
    text = np.array(["a", "b", "c"])[y]
    with pytest.raises(ValueError, match=r"MulticlassModel: `Y\[0\]` must be an integer in "
                                         r"\[0, 3\), got (np\.str_\('a'\)|'a')"):  # numpy < 2: 'a'
        _fit(X, text, compiled)
    with_none = list(y)
    with_none[5] = None
    with pytest.raises(ValueError, match=r"MulticlassModel: `Y\[5\]` must be an integer in "
                                         r"\[0, 3\), got None"):
        _fit(X, with_none, compiled)
    out_of_range = y.copy()
    out_of_range[7] = 3
    with pytest.raises(ValueError, match=r"MulticlassModel: `Y\[7\]` must be an integer in "
                                         r"\[0, 3\), got 3$"):
        _fit(X, out_of_range, compiled)


def test_multiclass_single_labels_name_the_argument():
    model = MulticlassModel(3, 2)
    x, w = np.ones(2), np.zeros(6)
    for bad in ("b", "1", None, np.nan, np.inf, 1.5, True, np.True_, 1 + 0j):
        with pytest.raises(ValueError, match=r"MulticlassModel: `y_true` must be an integer "
                                             r"in \[0, 3\), got "):
            model.loss_augmented_decode(x, bad, w)
    # whole numbers keep being read as class indices, also as floats and 0-d arrays
    for good in (2, np.int64(2), 2.0, np.float32(2.0), np.array(2)):
        assert model.loss(good, 2) == 0.0


def test_multiclass_fractional_labels_stay_refused_and_whole_floats_stay_accepted():
    X, y = _multiclass_data()
    with pytest.raises(ValueError, match=r"Y\[0\] is the label 1\.5, not an integer"):
        _fit(X, np.where(np.arange(12) == 0, 1.5, y))
    as_float = _fit(X, y.astype(float))
    np.testing.assert_array_equal(as_float.w_, _fit(X, y).w_)


# -- LatentSSVM's inner lam -------------------------------------------------------------------
@pytest.mark.parametrize("lam", ["0.1x", [1.0]])
def test_latent_ssvm_refuses_a_bad_inner_lam_as_structured_svm_does(lam):
    Xl, Yl = make_latent_blocks(10, 4, 4, random_state=0)
    with pytest.raises(InvalidParameterError) as own:
        StructuredSVM(LatentGraphCRF(2, 2, 2), lam=lam).fit(Xl, Yl)
    with pytest.raises(InvalidParameterError, match=r"The 'lam' parameter of StructuredSVM") \
            as latent:
        LatentSSVM(StructuredSVM(LatentGraphCRF(2, 2, 2), lam=lam)).fit(Xl, Yl)
    assert str(latent.value) == str(own.value)


# -- ProductDomain's advice -------------------------------------------------------------------
@pytest.mark.parametrize("block, keyword, sized", [
    (fw.Birkhoff(), "Birkhoff(n=n)", fw.Birkhoff(n=3)),
    (fw.NuclearNormBall(), "NuclearNormBall(shape=(m, n))", fw.NuclearNormBall(shape=(2, 3))),
    (fw.L1Ball(), "L1Ball(dim=n)", fw.L1Ball(dim=4)),
    (fw.Spectrahedron(), "Spectrahedron(dim=n)", fw.Spectrahedron(dim=3)),
])
def test_product_domain_names_each_domains_size_keyword(block, keyword, sized):
    with pytest.raises(ShapeError, match=r"block 0 .* does not know its shape; build it "
                                         r"with its size \(" + re.escape(keyword)):
        fw.ProductDomain([block, block])
    # the advice works: the sized block builds the product
    assert fw.ProductDomain([sized, sized]).dim == 2 * int(np.prod(sized.shape))


def test_product_domain_tells_a_users_class_to_set_a_shape():
    class Mine(LMO):
        def extreme_point(self, direction):
            return -np.sign(direction)

    with pytest.raises(ShapeError, match=r"give it a `shape` attribute \(`self.shape = "
                                         r"\(n,\)`\), or pass `indices`"):
        fw.ProductDomain([Mine()])


# -- relative_gap's flow ----------------------------------------------------------------------
def test_relative_gap_names_the_length_of_a_flow_of_another_size(shared_data):
    net, best = load_siouxfalls(shared_data)
    assert net.n_links == 76
    for bad, shape in ((np.ones(3), r"\(3,\)"), (best[:, None], r"\(76, 1\)"),
                       (5.0, r"\(\)")):
        with pytest.raises(ShapeError, match=r"relative_gap: `flow` must hold one volume per "
                                             r"link, shape \(76,\) for the network's 76 "
                                             r"links, got shape " + shape):
            relative_gap(net, bad)
    with pytest.raises(TypeError, match=r"relative_gap: `flow` must be link flows"):
        relative_gap(net, ["a"] * 76)
    assert 0.0 <= relative_gap(net, best) < 1e-10  # the published flows still pass


# -- GridCRF labellings of another shape ------------------------------------------------------
def test_grid_crf_refuses_a_transposed_labelling():
    """A (width, height) labelling has as many cells as the image: flattened, it read as
    another labelling in fit, loss and joint_feature."""
    from frankwolfe.applications.structured_svm import GridCRF

    m = GridCRF(2, 1)
    y = np.array([[0, 0, 1], [1, 1, 1]])
    x = np.zeros((2, 3, 1))
    with pytest.raises(fw.ShapeError, match=r"`y` must be a \(height, width\) = \(2, 3\) "
                                            r"labelling .* got shape \(3, 2\)"):
        m.joint_feature(x, y.T)
    with pytest.raises(fw.ShapeError, match=r"GridCRF.loss: `y` has shape \(3, 2\)"):
        m.loss(y, y.T)
    with pytest.raises(fw.ShapeError, match=r"`y_true` must be a \(height, width\)"):
        _ = StructuredSVM(GridCRF(2, 1), max_passes=2).fit([x, x], [y, y.T])
    # the image's own shape, and flat labellings, as before
    assert m.loss(y, y.ravel()) == 0.0
    np.testing.assert_array_equal(m.joint_feature(x, y), m.joint_feature(x, y.ravel()))


def test_graph_crf_names_ragged_and_text_node_features():
    from frankwolfe.applications.structured_svm import GraphCRF

    e = np.array([[0, 1], [1, 2]])
    f = np.zeros((3, 2))
    Y = [np.array([0, 1, 1]), np.array([0, 1, 1])]
    with pytest.raises(ValueError, match=r"GraphCRF: `node_features` must be an array of "
                                         r"numbers of shape \(n, 2\), got a list of length 3 "
                                         r"\(rows of different lengths\?\)"):
        StructuredSVM(GraphCRF(3, 2)).fit([(f, e), ([[0.0, 1.0], [1.0], [0.0, 0.0]], e)], Y)
    with pytest.raises(ValueError, match=r"`node_features` must be an array of numbers .* "
                                         r"got an array of dtype <U1"):
        StructuredSVM(GraphCRF(3, 2)).fit([(f, e), (np.full((3, 2), "a"), e)], Y)
