"""SSG's plain average counts the start w0 as the first iterate."""
import numpy as np
import pytest

from frankwolfe.applications.structured_svm import MulticlassModel, ssg


@pytest.mark.parametrize("averaging", ["uniform", "tail"])
def test_average_of_one_step_includes_the_start(averaging):
    # one example x = e_0, label 0; w0 favours class 1 on feature 0 by 5
    model = MulticlassModel(2, 2)
    X, Y = [np.array([1.0, 0.0])], [0]
    w0 = np.array([0.0, 0.0, 5.0, 0.0])
    res = ssg(model, X, Y, 1.0, max_passes=1, averaging=averaging, w0=w0, random_state=0)
    # by hand: y* = argmax_y [y != 0] + <w0, phi(x, y)> = 1 (scores 0 and 6);
    # step 1/(0+1) = 1 forgets w0: w1 = (phi(x, 0) - phi(x, 1)) / lam
    w1 = np.array([1.0, 0.0, -1.0, 0.0])
    np.testing.assert_allclose(res["w"], w1, atol=1e-12)
    # the mean of the iterates x_0 = w0 and x_1 = w1 (tail: both epochs, the same mean)
    np.testing.assert_allclose(res.x, (w0 + w1) / 2, atol=1e-12)
