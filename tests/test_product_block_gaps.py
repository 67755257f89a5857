"""A block oracle that does not minimize is caught block by block on a ProductDomain.

A product's Frank-Wolfe gap is the sum of its blocks' gaps ``<g_i, x_i - s_i>``: a
block oracle answering the worst vertex makes its block's gap negative, and the other
blocks' positive gaps hid it in the sum (BCFW reported "converged" with gap 0).  Every
block's gap must be >= 0 up to rounding; one below raises OracleError naming the block.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from wrong_oracles import X0, B, Worst
from wrong_oracles import Dist as _Dist

import frankwolfe as fw
from frankwolfe.compiled import BlockDomainHooks, CompiledBlocks
from frankwolfe.compiled.simplex import SimplexState
from frankwolfe.lmo.product import check_block_gaps


class _Worst(Worst):
    """The worst-vertex oracle, named as the messages below expect."""


def _true_gap(x):
    """The product's Frank-Wolfe gap over two probability simplices, in closed form:
    ``<g, x> - min_j g_j`` per block."""
    g = x - B
    return float(g @ x - g[:3].min() - g[3:].min())


def _product():
    return fw.ProductDomain([_Worst(), fw.ProbabilitySimplex(dim=3)])


def test_block_dots_match_the_blocks_products():
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=2), fw.ProbabilitySimplex(dim=3)],
                           [[4, 0], [1, 3, 2]])
    a, b = np.arange(1.0, 6.0), np.array([2.0, -1.0, 0.5, 3.0, -2.0])
    expected = [a[4] * b[4] + a[0] * b[0], a[1] * b[1] + a[3] * b[3] + a[2] * b[2]]
    np.testing.assert_allclose(dom.block_dots(a, b), expected, rtol=1e-15)


def test_block_dots_refuse_a_minkowski_sum():
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=2), fw.ProbabilitySimplex(dim=2)],
                           [[0, 1], [0, 1]])
    with pytest.raises(ValueError, match="Minkowski"):
        dom.block_dots(np.ones(2), np.ones(2))


def test_check_gaps_names_the_block_whose_gap_is_negative():
    dom = _product()
    x = X0
    g = x - B  # [0.1, -0.6, 0.2 | 0.7, 0.4, -0.8]
    s = dom(g)  # block 0 answers e_2 (g = 0.2 > <g_0, x_0> = 0.1), block 1 e_2
    # the sum hides it: block 0's gap -0.1, block 1's 0.7 + 0.8 = 1.5
    assert float(g @ x - s.dot(g)) == pytest.approx(1.4)
    with pytest.raises(fw.OracleError, match=r"_Worst\(\) \(block 0 of the ProductDomain\)"
                       r".*<g_0, s_0> = 0\.2 above <g_0, x_0> = 0\.1"):
        dom.check_gaps(g, x, s, 0.0, 0.0, "iteration 0")


def test_check_gaps_accepts_rounding_and_correct_oracles():
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=3), fw.ProbabilitySimplex(dim=3)])
    g = X0 - B
    dom.check_gaps(g, X0, dom(g), 0.0, 0.0, "iteration 0")  # no error
    # a block gap below zero by rounding (relative 1e-6 of its products) passes, one
    # beyond it does not
    check_block_gaps(dom, np.array([1.0, 1.0]), np.array([1.0 + 1e-7, 0.5]), 0.0, 0.0, "k")
    with pytest.raises(fw.OracleError, match="block 1 "):
        check_block_gaps(dom, np.array([1.0, 1.0]), np.array([0.5, 1.0 + 1e-5]), 0.0, 0.0,
                         "k")
    # the blocks asked may be a subset: the message names the domain's block
    with pytest.raises(fw.OracleError, match="block 1 "):
        check_block_gaps(dom, np.array([1.0]), np.array([1.5]), 0.0, 0.0, "k",
                         blocks=np.array([1]))


def test_bcfw_python_pass_raises_on_a_worst_vertex_block():
    with pytest.raises(fw.OracleError, match=r"_Worst\(\) \(block 0 of the ProductDomain\)"):
        fw.minimize(_Dist(), _product(), method="bcfw", x0=X0, max_iter=30)


@pytest.mark.parametrize("certify", ["last", "average"])
def test_bcfw_python_pass_correct_oracles_certify(certify):
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=3), fw.ProbabilitySimplex(dim=3)])
    kw = {"averaging": "uniform", "certify": "average"} if certify == "average" else {}
    r = fw.block_coordinate_frank_wolfe(_Dist(), dom, x0=X0, max_iter=200, tol=1e-10,
                                        compiled=False, random_state=0, gap_every=1, **kw)
    assert r.gap == pytest.approx(_true_gap(r.x), abs=1e-12)


# --- the compiled pass: a domain whose compiled block oracle answers the worst vertex of
# block 0 (the simplex kernels' argmin elsewhere)

@njit(cache=False)
def _worst_first_direction(state, i, g, want, idx, val):  # pragma: no cover - compiled
    Z, idx_flat, off = state.Z, state.idx_flat, state.off
    lo = off[i]
    m = off[i + 1] - lo
    j = 0
    gz = 0.0
    for a in range(m):
        ga = g[idx_flat[lo + a]]
        gz += ga * Z[lo + a]
        if (ga > g[idx_flat[lo + j]]) if i == 0 else (ga < g[idx_flat[lo + j]]):
            j = a
    score = g[idx_flat[lo + j]]
    state.last[0] = j
    if want:
        for a in range(m):
            idx[a] = idx_flat[lo + a]
            val[a] = -Z[lo + a]
        val[j] += 1.0
    return m, gz - score, score


@njit(cache=False)
def _commit(state, i, gamma):  # pragma: no cover - compiled
    Z, off = state.Z, state.off
    lo = off[i]
    for a in range(off[i + 1] - lo):
        Z[lo + a] *= 1.0 - gamma
    Z[lo + state.last[0]] += gamma


class _CompiledWorst(fw.ProductDomain, BlockDomainHooks):
    """Two probability simplices whose compiled block 0 answers its worst vertex."""

    def __init__(self, worst: bool = True) -> None:
        super().__init__([_Worst() if worst else fw.ProbabilitySimplex(dim=3),
                          fw.ProbabilitySimplex(dim=3)])
        self.worst = worst

    def compiled_blocks(self, x0):
        Z = np.array(X0 if x0 is None else x0, dtype=float)
        state = SimplexState(Z, np.arange(6, dtype=np.int64), np.array([0, 3, 6]),
                             np.ones(2), np.zeros(1, dtype=np.int64))

        def start(x):
            x += state.Z

        direction = _worst_first_direction if self.worst else \
            fw.compiled.simplex._simplex_direction
        return CompiledBlocks(direction, _commit, state, 3, start=start)


def _quadratic():
    # 1/2 ||x - B||^2 + constant, with compiled block kernels
    return fw.QuadraticObjective(np.eye(6), -B)


@pytest.mark.parametrize("certify", ["last", "average"])
def test_bcfw_compiled_pass_raises_on_a_worst_vertex_block(certify):
    kw = {"averaging": "uniform", "certify": "average"} if certify == "average" else {}
    # the compiled pass does not run in debug mode
    with fw.debug(False), pytest.raises(
            fw.OracleError, match=r"_Worst\(\) \(block 0 of the ProductDomain\)"):
        fw.block_coordinate_frank_wolfe(_quadratic(), _CompiledWorst(), x0=X0, max_iter=30,
                                        compiled=True, random_state=0, **kw)


def test_bcfw_compiled_pass_correct_oracles_certify():
    with fw.debug(False):
        r = fw.block_coordinate_frank_wolfe(_quadratic(), _CompiledWorst(worst=False), x0=X0,
                                            max_iter=300, tol=1e-10, compiled=True,
                                            random_state=0, gap_every=1)
    assert r.extra["engine"] == "compiled"
    assert r.gap == pytest.approx(_true_gap(r.x), abs=1e-12)
    assert r.gap <= 1e-10
