"""Warnings point at the caller's line, whatever wrappers the call went through (a fixed
stacklevel landed in frankwolfe/options.py for a direct BCFW call, and in minimize.py
for ALM reached through minimize)."""

from __future__ import annotations

import warnings

import numpy as np

import frankwolfe as fw


def _caught(call):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        call()
    return w


def _here(w):
    return [(x.filename, str(x.message)[:60]) for x in w if x.filename != __file__]


def test_bcfw_n_jobs_warning_points_here():
    f = fw.LeastSquares(np.random.default_rng(0).standard_normal((30, 20)), np.ones(30))
    dom = fw.ProductDomain([fw.ProbabilitySimplex(dim=4) for _ in range(5)])
    w = _caught(lambda: fw.block_coordinate_frank_wolfe(f, dom, max_iter=2, n_jobs=2))
    assert any("n_jobs" in str(x.message) for x in w)
    assert _here(w) == []


def test_alm_warning_points_here_through_minimize_and_directly():
    doms = [fw.L2Ball(dim=2), fw.Box([3.0, 3.0], [4.0, 4.0])]
    for call in (lambda: fw.minimize(None, doms, "alm", max_iter=50),
                 lambda: fw.alternating_linear_minimization(None, doms, max_iter=50)):
        w = _caught(call)
        assert any("do not intersect" in str(x.message) for x in w)
        assert _here(w) == []


def test_simplex_radius_warning_points_here():
    w = _caught(lambda: fw.ProbabilitySimplex(3))
    assert w and _here(w) == []


def test_structured_svm_warnings_point_here():
    from frankwolfe.applications.structured_svm import ChainModel, StructuredSVM, make_chain

    X, Y = make_chain(20, n_states=3, n_features=4, random_state=0)
    svm = StructuredSVM(ChainModel(3, 4), max_passes=2, tol=1e-12, random_state=0)
    w = _caught(lambda: svm.fit(X, Y))  # the budget ends the run above tol
    assert any("max_passes" in str(x.message) for x in w)
    svm.set_params(warm_start=True)
    X2, Y2 = make_chain(20, n_states=3, n_features=4, random_state=1)
    w += _caught(lambda: svm.fit(X2, Y2))  # other data: the dual state does not carry over
    assert any("differ" in str(x.message) for x in w)
    assert _here(w) == []
