"""SSVM dual: lambda rescaling of a warm start, scale invariance of the block oracle, the
estimator's averaging default under gap sampling.

* DualWarmStart.at(lam2): a block point (psi / (lam n), L / n) becomes
  (psi / (lam2 n), L / n): the w part times lam / lam2, the loss part unchanged (the
  module's own formula of the vertices, checked in closed form);
* a linear minimization oracle is invariant to positive scaling of the direction: the
  dual gradient (lam w, -1) and 3 * (lam w, -1) pick the same labelling;
* gapBCFW has no averaging (docstring of ``averaging``): a fit with block_order="gap"
  reports no averaged point."""
import numpy as np

from frankwolfe.applications.structured_svm import MulticlassModel, StructuredSVM
from frankwolfe.applications.structured_svm.dual import DualWarmStart, SSVMDual


def test_warm_start_rescales_only_the_w_part():
    p = np.array([1.0, -2.0, 4.0, 0.5])  # (w part, loss part)
    out = DualWarmStart(0.1, points=[p.copy()]).at(0.4)
    np.testing.assert_allclose(out.points[0], [0.25, -0.5, 1.0, 0.5], rtol=0, atol=1e-15)


def test_block_oracle_is_scale_invariant():
    rng = np.random.default_rng(0)
    K, D, n = 4, 5, 6
    model = MulticlassModel(K, D)
    X = [rng.standard_normal(D) for _ in range(n)]
    Y = [int(rng.integers(K)) for _ in range(n)]
    lam = 0.3
    dom = SSVMDual(model, X, Y, lam)
    for _ in range(20):
        w = rng.standard_normal(K * D)
        for i, (oracle, ix) in enumerate(zip(dom.blocks, dom.block_indices)):
            g = np.append(lam * w, -1.0)[ix]
            a = oracle.labelling(g)
            b = oracle.labelling(3.0 * g)
            # by hand: argmax_y [y != y_i] + <w_y, x_i>
            s = w.reshape(K, D) @ X[i] + 1.0
            s[Y[i]] -= 1.0
            assert a == int(np.argmax(s)) and b == a


def test_gap_sampling_fit_has_no_average():
    rng = np.random.default_rng(1)
    K, D, n = 3, 4, 15
    X = rng.standard_normal((n, D))
    Y = rng.integers(K, size=n)
    svm = StructuredSVM(MulticlassModel(K, D), block_order="gap", max_passes=3)
    svm.fit(list(X), list(Y))
    assert "x_average" not in svm.result_.extra


def test_default_lam_is_one_over_n():
    rng = np.random.default_rng(2)
    K, D, n = 3, 4, 17
    svm = StructuredSVM(MulticlassModel(K, D), max_passes=1)
    svm.fit(list(rng.standard_normal((n, D))), list(rng.integers(K, size=n)))
    assert svm.lam_ == 1.0 / n
