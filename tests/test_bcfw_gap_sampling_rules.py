"""gapBCFW's bookkeeping rules, replayed by hand on small QPs over products of simplices
(gradient ``Q x + c``, block gap ``<g_i, z_i> - min_j g_ij``, exact line search
``gamma = min(gap_i / d'Q_ii d, 1)``) and compared step for step with the engine:

* the oracle cache takes block ``i``'s best stored atom exactly when that atom's gap is
  at least ``max(cache_factor * est_i, cache_nu * G / n)`` (the solver's docstring).
  ``G`` is +inf during the first pass (no hit possible), the sum of the block-gap
  estimates after it, and the last certified gap from the first certificate on;
* a block's gap estimate is the gap measured at its last step, kept as it is (not
  decayed) until the block's next step or the next certificate of the last iterate,
  which replaces all of them by the exact block gaps (the history's ``gap_estimate``
  is their sum);
* besides every ``gap_every`` passes, a certificate pass runs whenever the sum of the
  estimates meets ``tol`` (the ``gap_every`` docstring).

The replay draws its blocks as the orders are documented: a fixed cycle, ``"max_gap"``
(the largest estimate, unvisited blocks first) and ``"gap"`` (unvisited blocks first in
index order, then ``u * total`` in the cumulative weights, ``u = rng.random(n)`` drawn
per pass).  Every decision of the cache has a relative margin of at least 1e-6 in the
replay, so rounding cannot flip one."""
from __future__ import annotations

import numpy as np
import pytest
from test_bcfw_block_gaps import _simplices_qp

import frankwolfe as fw


class _Cycle(fw.BlockOrder):
    """Blocks 0, 1, ..., n - 1 every pass (a user's cyclic order)."""

    name = "cycle"

    def pass_order(self, rng: np.random.Generator) -> np.ndarray:
        return np.arange(self.n)


def _replay(Q, c, n, m, x0, order, passes, *, gap_every, cache=False, cache_factor=0.0,
            cache_nu=0.0, tol=0.0, seed=0):
    """The run's rules transcribed (module docstring): its iterate, cache hits and
    misses, oracle calls (not the closing certificate's), per pass the sum of the
    estimates before any certificate and whether one ran, and the certified gaps."""
    x = np.array(x0, dtype=float)
    est = np.full(n, np.inf)
    G = np.inf
    eye = np.eye(m)
    stored = [[x[i * m:(i + 1) * m].copy()] for i in range(n)]  # x0: a stored point
    vertices: list[set[int]] = [set() for _ in range(n)]
    hits = misses = calls = 0
    margin = np.inf
    sums, certified, certified_gaps = [], [], []
    rng = np.random.default_rng(seed)
    for _ in range(passes):
        unif = rng.random(n)
        for t in range(n):
            if order == "cycle":
                i = t
            elif order == "max_gap":
                i = int(np.argmax(est))
            else:
                unvisited = np.flatnonzero(np.isinf(est))
                if unvisited.size:
                    i = int(unvisited[0])
                else:
                    cum = np.cumsum(np.maximum(est, 0.0))
                    i = min(int(np.searchsorted(cum, unif[t] * cum[-1], side="right")), n - 1)
            b = slice(i * m, (i + 1) * m)
            g = (Q @ x + c)[b]
            z = x[b].copy()
            s = None
            if cache:
                A = np.array(stored[i])
                scores = A @ g
                r = int(np.argmin(scores))
                cached_gap = g @ z - scores[r]
                # a zero factor drops its term (not 0 * inf = NaN before a block's first step)
                local = cache_factor * est[i] if cache_factor else 0.0
                threshold = max(local, cache_nu * G / n)
                if np.isfinite(threshold):
                    margin = min(margin, abs(cached_gap - threshold) / threshold)
                if cached_gap >= threshold:
                    hits += 1
                    s = A[r]
            if s is None:
                j = int(np.argmin(g))
                s = eye[j]
                calls += 1
                if cache:
                    misses += 1
                    if j not in vertices[i]:
                        vertices[i].add(j)
                        stored[i].append(s)
            d = s - z
            gap = -float(g @ d)
            est[i] = max(gap, 0.0)
            if gap > 0.0:
                x[b] += min(gap / float(d @ Q[b, b] @ d), 1.0) * d
        if cache and np.isinf(G):
            G = float(est.sum())
        sums.append(float(est.sum()))
        certify = len(sums) % gap_every == 0 or sums[-1] <= tol
        certified.append(certify)
        if certify:
            gm = (Q @ x + c).reshape(n, m)
            gaps = (gm * x.reshape(n, m)).sum(axis=1) - gm.min(axis=1)
            calls += n
            est = np.maximum(gaps, 0.0)
            G = max(float(gaps.sum()), 0.0)
            certified_gaps.append(float(gaps.sum()))
            if cache:  # the certificate's answers join the cache
                for i in range(n):
                    j = int(np.argmin(gm[i]))
                    if j not in vertices[i]:
                        vertices[i].add(j)
                        stored[i].append(eye[j])
    return dict(x=x, hits=hits, misses=misses, calls=calls, margin=margin, sums=sums,
                certified=certified, certified_gaps=certified_gaps)


def _run(f, dom, x0, order, **kw):
    block_order = _Cycle() if order == "cycle" else order
    with fw.debug(False):
        return fw.block_coordinate_frank_wolfe(f, dom, x0.copy(), block_order=block_order,
                                               step_size="exact", compiled=False,
                                               random_state=0, **kw)


N, M = 6, 4


@pytest.fixture(scope="module")
def qp():
    f, Q, dom = _simplices_qp(11, N, M)
    return f, Q, dom, np.full(N * M, 1.0 / M)


@pytest.mark.parametrize("order", ["cycle", "max_gap", "gap"])
@pytest.mark.parametrize("cache_factor, cache_nu", [(1e-3, 0.5), (1e-3, 1.0), (0.5, 0.0),
                                                    (0.25, 0.5), (0.0, 0.5)])
def test_the_cache_takes_a_stored_atom_exactly_when_the_rule_says(qp, order, cache_factor,
                                                                  cache_nu):
    """Eight passes, a certificate every third: passes 2-3 read ``G`` = the summed
    estimates of pass 1, passes 4-8 the certified gaps."""
    f, Q, dom, x0 = qp
    passes = 8
    ref = _replay(Q, f.c, N, M, x0, order, passes, gap_every=3, cache=True,
                  cache_factor=cache_factor, cache_nu=cache_nu)
    assert ref["margin"] > 1e-6  # no decision of the replay within rounding
    assert 0 < ref["hits"] < passes * N  # the thresholds decide, one way and the other
    res = _run(f, dom, x0, order, cache=True, cache_factor=cache_factor, cache_nu=cache_nu,
               tol=0.0, max_iter=passes, gap_every=3)
    assert res.extra["engine"] == "python"
    assert (res.extra["cache_hits"], res.extra["cache_misses"]) == (ref["hits"], ref["misses"])
    assert res.n_oracle_calls == ref["calls"] + N  # + the closing certificate
    np.testing.assert_allclose(res.x, ref["x"], rtol=0, atol=1e-12)


class _ThenBlockZero(fw.BlockOrder):
    """Every block in index order, then a pass of block 0 alone."""

    name = "then0"

    def start(self, estimates: np.ndarray) -> None:
        super().start(estimates)
        self.passes = 0

    def pass_order(self, rng: np.random.Generator) -> np.ndarray:
        self.passes += 1
        return np.arange(self.n) if self.passes == 1 else np.zeros(1, dtype=np.int64)


def test_the_global_gap_term_is_divided_by_the_number_of_blocks(qp):
    """With ``cache_factor`` ~0 the threshold of block 0's step after a first pass is
    ``cache_nu * G / n``, ``G`` the estimates summed over that pass (the history's
    ``gap_estimate`` after it): block 0 takes its best stored atom (``x0`` or the vertex
    of its first step) for ``cache_nu`` just below ``n * cached_gap / G``, the oracle's
    just above."""
    f, Q, dom, x0 = qp
    first = _replay(Q, f.c, N, M, x0, "cycle", 1, gap_every=100)
    G = first["sums"][0]
    x = first["x"]
    g = (Q @ x + f.c)[:M]
    vertex = np.eye(M)[int(np.argmin((Q @ x0 + f.c)[:M]))]  # block 0's first step's
    cached_gap = float(g @ x[:M] - min(g @ x0[:M], g @ vertex))
    assert cached_gap > 0
    edge = N * cached_gap / G
    for scale, hit in ((0.999, 1), (1.001, 0)):
        with fw.debug(False):
            res = fw.block_coordinate_frank_wolfe(
                f, dom, x0.copy(), block_order=_ThenBlockZero(), step_size="exact",
                compiled=False, cache=True, cache_factor=1e-12, cache_nu=scale * edge,
                tol=0.0, max_iter=2, gap_every=100)
        assert res.history["gap_estimate"][1] == pytest.approx(G, rel=1e-12)
        assert (res.extra["cache_hits"], res.extra["cache_misses"]) == (hit, N + 1 - hit)
        assert res.n_oracle_calls == N + 1 - hit + N  # + the closing certificate


@pytest.mark.parametrize("order", ["cycle", "max_gap", "gap"])
def test_block_gap_estimates_are_the_gaps_at_each_blocks_last_step(qp, order):
    """No certificate in six passes: each pass's ``gap_estimate`` is the sum of every
    block's gap at its last step, undecayed."""
    f, Q, dom, x0 = qp
    ref = _replay(Q, f.c, N, M, x0, order, 6, gap_every=100)
    assert not any(ref["certified"])
    res = _run(f, dom, x0, order, tol=0.0, max_iter=6, gap_every=100)
    est = res.history["gap_estimate"]
    assert np.isinf(est[0])  # before the first pass: every block unvisited
    # the last row is the closing certificate's (exact block gaps)
    np.testing.assert_allclose(est[1:6], ref["sums"][:5], rtol=1e-10, atol=0)
    np.testing.assert_allclose(res.x, ref["x"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("tol", [0.2, 0.088])
def test_a_certificate_runs_when_the_estimates_meet_tol(tol):
    """``gap_every`` 1000: every certificate in the history is one the summed estimates
    asked for (``<= tol``); the run stops at the first certified gap ``<= tol``.
    ``tol`` 0.088 first meets estimates (0.0861) whose certified gap (0.0897) is above
    it: the run goes on after that certificate."""
    n, m = 5, 3
    f, Q, dom = _simplices_qp(1, n, m)
    x0 = np.full(n * m, 1.0 / m)
    passes = 60
    ref = _replay(Q, f.c, n, m, x0, "cycle", passes, gap_every=1000, tol=tol)
    at = np.flatnonzero(ref["certified"])
    assert at.size >= 1 and np.all(np.abs(np.array(ref["sums"]) / tol - 1.0) > 1e-6)
    res = _run(f, dom, x0, "cycle", tol=tol, max_iter=passes, gap_every=1000)
    gaps = res.history["gap"]
    certified = np.flatnonzero(np.isfinite(gaps[1:]))  # row p + 1: after pass p
    stop = int(certified[np.argmax(gaps[1:][certified] <= tol)])
    assert res.status == "converged" and res.nit == stop + 1
    np.testing.assert_array_equal(certified, at[at <= stop])
    # one oracle call a step, n a certificate; no closing one (the last row certified)
    assert res.n_oracle_calls == (stop + 1) * n + certified.size * n
    if tol == 0.088:
        assert certified.size >= 2  # a certificate that did not stop the run



def test_shard_draws_give_each_shard_its_quota_from_its_own_gaps():
    """Lock-free passes on resident blocks draw per shard: as many picks as the shard
    has blocks, its unvisited blocks first in index order, then in proportion to
    ``max(g, 0) ** degree`` (counted over many draws against those probabilities),
    uniformly where every gap is 0."""
    from frankwolfe.algorithms.bcfw.resident_lock_free import shard_draws

    est = np.array([np.inf, 0.1, np.inf, 0.3, 0.0, 0.0, 0.0, -0.0])
    cuts = np.array([0, 4, 8])
    rng = np.random.default_rng(0)
    counts = np.zeros(8)
    reps = 4000
    for _ in range(reps):
        out = shard_draws(est, 1.0, cuts, rng)
        assert out.size == 8
        np.testing.assert_array_equal(out[:2], [0, 2])  # the unvisited, in index order
        assert set(out[2:4]) <= {1, 3} and set(out[4:]) <= {4, 5, 6, 7}
        counts += np.bincount(out, minlength=8)
    p3 = counts[3] / (2 * reps)  # 0.3 / (0.1 + 0.3); binomial sd about 0.005
    assert abs(p3 - 0.75) < 0.03
    np.testing.assert_allclose(counts[4:] / (4 * reps), 0.25, atol=0.03)
    # degree 0: every visited block weighs 1, a zero gap included
    out = np.concatenate([shard_draws(est, 0.0, cuts, rng)[2:4] for _ in range(reps)])
    assert abs(np.mean(out == 1) - 0.5) < 0.03
    # one shard: the whole pass; a shard of no block gives nothing
    assert shard_draws(np.full(3, np.inf), 1.0, np.array([0, 3]), rng).tolist() == [0, 1, 2]
    assert shard_draws(est, 1.0, np.array([0, 0, 8]), rng).size == 8
