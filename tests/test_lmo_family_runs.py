"""Frank-Wolfe over the domains of issue #24 reaches cvxpy's optimum.

Each run minimizes ``1/2 ||x - y||^2`` (a projection) over one new domain with
pairwise Frank-Wolfe; cvxpy/Clarabel solves the same problem from the set's
definition.  The certified gap must bound ``f - f*`` and ``f`` must reach ``f*``, both
with two-sided tolerances.
"""

from __future__ import annotations

import subprocess
import sys

import cvxpy as cp
import numpy as np
import pytest
from lmo_reference import CLARABEL, close, random_polytope

import frankwolfe as fw
from frankwolfe import (
    ConvexHull,
    Ellipsoid,
    Fantope,
    GroupL1Ball,
    HyperSimplex,
    KNormBall,
    OrderedWeightedL1Ball,
    Polytope,
    ScaledL1Ball,
    UnitHyperSimplex,
    UnitSpectrahedron,
)


def owl_constraint(w, r):
    steps = np.append(w[:-1] - w[1:], w[-1])
    return lambda x: [sum(steps[i] * cp.sum_largest(cp.abs(x), i + 1)
                          for i in range(w.size) if steps[i] > 0) <= r]


def hull_constraints(V):
    def constraints(x):
        lam = cp.Variable(V.shape[0], nonneg=True)
        return [x == V.T @ lam, cp.sum(lam) == 1]
    return constraints


N = 8
_rng = np.random.default_rng(25)
_POLY = random_polytope(26, n=N, m=20)
_V = _rng.standard_normal((15, N))
_W = np.linspace(2.0, 0.5, N)
_E = _rng.standard_normal((N, N))
_E = _E @ _E.T + np.eye(N)
_GROUPS = [np.arange(0, 3), np.arange(3, 5), np.arange(5, 8)]
_LO = -_rng.random(N)
_UP = _rng.random(N) + 0.1
_C, _H = (_LO + _UP) / 2, (_UP - _LO) / 2

# (domain, cvxpy constraints, shape): each a projection problem min 1/2 ||x - y||^2
E2E = {
    "polytope": (lambda: Polytope(*_POLY, bounds=(-3, 3)),
                 lambda x: [_POLY[0] @ x <= _POLY[1], _POLY[2] @ x == _POLY[3], x >= -3, x <= 3]),
    "hull": (lambda: ConvexHull(_V), hull_constraints(_V)),
    "hypersimplex": (lambda: HyperSimplex(3, 0.5),
                     lambda x: [x >= 0, x <= 0.5, cp.sum(x) == 1.5]),
    "unit-hypersimplex": (lambda: UnitHyperSimplex(2, 0.5),
                          lambda x: [x >= 0, x <= 0.5, cp.sum(x) <= 1.0]),
    "knorm": (lambda: KNormBall(3, 1.0), lambda x: [cp.sum_largest(cp.abs(x), 3) <= 1.0]),
    "owl": (lambda: OrderedWeightedL1Ball(_W, 1.0), owl_constraint(_W, 1.0)),
    "group-l1": (lambda: GroupL1Ball(_GROUPS, 1.0),
                 lambda x: [sum(cp.norm(x[g], 2) for g in _GROUPS) <= 1.0]),
    "scaled-l1": (lambda: ScaledL1Ball(_LO, _UP),
                  lambda x: [cp.sum(cp.multiply(cp.abs(x - _C), 1 / _H)) <= 1]),
    "ellipsoid": (lambda: Ellipsoid(_E, radius=1.0),
                  lambda x: [cp.quad_form(x, _E) <= 1.0]),
}


@pytest.mark.parametrize("name", sorted(E2E))
def test_frank_wolfe_reaches_cvxpy_optimum(name):
    make, constraints = E2E[name]
    y = np.random.default_rng(27).standard_normal(N) * 2
    projection_qp(make(), y, constraints, (N,))


@pytest.mark.parametrize("name", ["unit-spectrahedron", "fantope"])
def test_frank_wolfe_reaches_cvxpy_sdp_optimum(name):
    n = 4
    G = np.random.default_rng(28).standard_normal((n, n))
    y = (G + G.T) / 2
    if name == "fantope":
        domain, cons = Fantope(2), (lambda X: [X >> 0, np.eye(n) - X >> 0, cp.trace(X) == 2])
    else:
        domain, cons = UnitSpectrahedron(1.0), (lambda X: [X >> 0, cp.trace(X) <= 1.0])
    projection_qp(domain, y, cons, (n, n))


def projection_qp(domain, y, constraints_of, shape):
    """``min 1/2 ||x - y||^2`` over the domain: Frank-Wolfe against cvxpy."""
    n = int(np.prod(shape))
    yf = y.reshape(-1)
    f = fw.QuadraticObjective(np.eye(n), -yf, constant=0.5 * float(yf @ yf), shape=shape)
    res = fw.pairwise_frank_wolfe(f, domain, tol=1e-7, max_iter=20000)
    x = cp.Variable(shape, symmetric=len(shape) == 2)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(x - y)), constraints_of(x))
    prob.solve(**CLARABEL)
    fstar = float(prob.value)
    assert res.status == "converged", res
    assert res.gap <= 1e-7
    assert domain.violation(res.x) <= 1e-9
    # the certified gap bounds f - f*, and f reaches f* (two-sided; cvxpy to ~1e-8)
    slack = 1e-7 * (1 + abs(fstar))
    assert -slack <= res.fun - fstar <= res.gap + slack
    assert close(res.fun, fstar, 1e-6)


def test_import_stays_light_and_highspy_loads_with_a_polytope():
    code = ("import sys, frankwolfe, numpy as np\n"
            "print('highspy' in sys.modules)\n"
            "frankwolfe.Polytope(bounds=[(0, 1)] * 2)(np.ones(2))\n"
            "print('highspy' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=True)
    # and no HiGHS banner on stdout: only the two lines printed here
    assert out.stdout.split() == ["False", "True"]
