"""Subset oracles checked by enumeration."""
import numpy as np
import pytest

from frankwolfe import L1Ball, ProbabilitySimplex, UnitSimplex


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("lmo", [L1Ball(2.0), ProbabilitySimplex(1.5), UnitSimplex(3.0)],
                         ids=lambda lmo: type(lmo).__name__)
def test_extreme_point_among_is_the_best_candidate_vertex(lmo, seed):
    """Enumerate the vertices supported on `ids` (+-r e_i for the l1 ball, r e_i (and 0
    for the unit simplex)) and compare <g, v> with the oracle's answer."""
    rng = np.random.default_rng(seed)
    g = rng.standard_normal(12)
    ids = np.sort(rng.choice(12, size=5, replace=False))
    r = lmo.radius
    cands = [r * np.eye(12)[i] for i in ids]
    if isinstance(lmo, L1Ball):
        cands += [-c for c in cands]
    if isinstance(lmo, UnitSimplex):
        cands.append(np.zeros(12))
    best = min(float(g @ c) for c in cands)
    v = lmo.extreme_point_among(g, ids).to_dense()
    assert float(g @ v) == pytest.approx(best, abs=1e-12)
    assert lmo.violation(v) <= 1e-12
