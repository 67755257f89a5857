"""BCFW started from per-block active sets ((Atom, weight) pairs): a warm start that
keeps the atoms.  References: the closed-form projection onto simplices."""

from __future__ import annotations

import numpy as np
import pytest

from frankwolfe import (
    Atom,
    FunctionObjective,
    ProbabilitySimplex,
    ProductDomain,
    block_coordinate_frank_wolfe,
)
from frankwolfe.errors import ShapeError


def _problem():
    # f(x) = 1/2 |x - y|^2 over two 3-simplices: the solution is the projection of y
    y = np.array([0.9, 0.4, -0.2, 0.1, 0.5, 0.6])
    f = FunctionObjective(lambda x: 0.5 * np.sum((x - y) ** 2), lambda x: x - y,
                          exact_step=lambda x, d, g: -(g @ d) / (d @ d))
    dom = ProductDomain([ProbabilitySimplex(dim=3), ProbabilitySimplex(dim=3)])
    # projections onto the simplex by hand: (0.9, 0.4, -0.2) -> (0.75, 0.25, 0);
    # (0.1, 0.5, 0.6) -> (1, 13, 16) / 30 (threshold 0.2 / 3)
    return f, dom, np.array([0.75, 0.25, 0.0, 1 / 30, 13 / 30, 16 / 30])


def _vertex(j: int) -> Atom:
    return Atom.sparse([j], [1.0], 3, key=("e", j))


def test_start_from_active_sets_keeps_atoms_and_converges():
    f, dom, x_star = _problem()
    start = [[(_vertex(0), 0.5), (_vertex(1), 0.25), (_vertex(1), 0.25)],  # duplicate adds
             [(_vertex(2), 1.0)]]
    res0 = block_coordinate_frank_wolfe(f, dom, start, block_step="pairwise", max_iter=0)
    np.testing.assert_allclose(res0.x, [0.5, 0.5, 0.0, 0.0, 0.0, 1.0], atol=1e-15)
    assert sorted(k for k, _ in res0.extra["active_sets"][0]) == [("e", 0), ("e", 1)]
    assert dict(res0.extra["active_sets"][0])[("e", 1)] == pytest.approx(0.5, abs=1e-15)
    res = block_coordinate_frank_wolfe(f, dom, start, block_step="pairwise", tol=1e-12,
                                       max_iter=500, random_state=0)
    np.testing.assert_allclose(res.x, x_star, atol=1e-6)
    for atoms in res.extra["active_sets"]:
        assert sum(w for _, w in atoms) == pytest.approx(1.0, abs=1e-12)


def test_start_from_active_sets_rejects_bad_weights_and_shapes():
    f, dom, _ = _problem()
    good = [(_vertex(2), 1.0)]
    with pytest.raises(ValueError, match="block 0's active set.*summing to 1"):
        block_coordinate_frank_wolfe(f, dom, [[(_vertex(0), 0.6)], good], block_step="pairwise")
    with pytest.raises(ValueError, match="non-negative"):
        block_coordinate_frank_wolfe(f, dom, [[(_vertex(0), 1.5), (_vertex(1), -0.5)], good],
                                     block_step="pairwise")
    with pytest.raises(ShapeError, match="an atom of block 1"):
        block_coordinate_frank_wolfe(f, dom, [good, [(Atom.sparse([0], [1.0], 4), 1.0)]],
                                     block_step="pairwise")
