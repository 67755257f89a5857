"""Compiled sequential message passing on loopy pairwise graphs: TRW-S and max-product.

One kernel serves both (Kolmogorov, "Convergent tree-reweighted message passing for
energy minimization", TPAMI 2006): nodes are visited in index order, forward then
backward, and a node ``s`` sends ``M_st(x_t) = max_{x_s} [g_s th_s(x_s) - M_ts(x_s) +
theta_st(x_s, x_t)]`` to its later (forward) or earlier (backward) neighbours, with
``th_s`` the unary plus every message into ``s``.  ``g_s = 1 / max(#earlier
neighbours, #later neighbours)`` is TRW-S (the monotonic-chain weights); ``g_s = 1``
is ordinary sequential max-product (loopy belief propagation).

Bound: after each backward pass the messages reparametrize the score; splitting it
into the monotonic chains (each edge in one chain, each node's ``th_s`` shared
evenly by its ``max(#in, #out)`` chains) and maximizing each chain by Viterbi gives
an upper bound of the best score, valid for any messages (for max-product too).
TRW-S never lets this bound rise (up to rounding); it tends to the local LP's
optimum, or stops short of it at a weak-tree-agreement point.  Scores are
maximized; see :mod:`.energy`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from frankwolfe._numbers import check_real, check_whole

from .energy import check_energy

__all__ = ["MessagePassingResult", "trws", "max_product", "trws_reparametrized"]


def _potential_scale(unary: np.ndarray, pairwise: np.ndarray) -> float:
    """The largest |potential| (0 for none): the unit of the graph methods' tolerances,
    which must scale with the potentials (scores of potentials of order 2^-30 are as
    valid as any, and an absolute allowance of order 1e-9 swallows their gaps)."""
    return max(float(np.max(np.abs(unary), initial=0.0)),
               float(np.max(np.abs(pairwise), initial=0.0)))


@dataclass(frozen=True)
class MessagePassingResult:
    """What :func:`trws` and :func:`max_product` return.

    Attributes
    ----------
    labels : ndarray of int64
        The best labelling decoded over the iterations.
    score : float
        Its score (``<= bound``).
    bound : float
        Upper bound of the best score from the last messages.
    nit : int
        Forward-backward iterations run (scipy's name, as :attr:`frankwolfe.Result.nit`).
    converged : bool
        Whether it stopped on ``tol`` (bound stalled or gap closed) before ``max_iter``.
    certified : bool
        Whether ``bound - score`` is within rounding of 0 (``labels`` is optimal):
        at most ``1e-9 * (scale + |score|)``, ``scale`` the largest |potential|.
    """

    labels: np.ndarray
    score: float
    bound: float
    nit: int
    converged: bool
    certified: bool


# One kernel: split in functions (each a compilation of its own, with a fixed cost on a
# cold cache) it compiled slower than whole.  Work arrays
# come from the caller (see _run): each array allocation of its own shape and dtype in
# a kernel compiles an implementation of its own, each a cost on a cold cache
# (benchmarks/README.md, "Measurements behind code choices").
# Integer rows of ``iw``: 0 start (CSR offsets, n + 1), 1 fill, 2 n_in, 3 n_out,
# 4 y, 5 best_y, 6 nbr, 7 via (2E: each slot's neighbour and edge), 8 chain_of (E);
# ``first[k]``: whether slot k's node is its edge's first end; ``kw``: three K-vectors.

@nb.njit(cache=True, nogil=True)
def _pass_kernel(unary: np.ndarray, pairwise: np.ndarray, edges: np.ndarray, reweight: bool,
                 max_iter: int, tol: float, unit: float, iw: np.ndarray, first: np.ndarray,
                 chain_w: np.ndarray, msg: np.ndarray, cvec: np.ndarray, kw: np.ndarray
                 ) -> tuple[float, float, int, bool]:  # pragma: no cover
    n, K = unary.shape
    E = edges.shape[0]
    start, fill, n_in, n_out, y, best_y = iw[0], iw[1], iw[2], iw[3], iw[4], iw[5]
    nbr, via, chain_of = iw[6], iw[7], iw[8]
    th, cand, v = kw[0], kw[1], kw[2]
    for e in range(E):
        start[edges[e, 0] + 1] += 1
        start[edges[e, 1] + 1] += 1
    for i in range(n):
        start[i + 1] += start[i]
    for i in range(n):
        fill[i] = start[i]
    for e in range(E):
        for s in range(2):
            a = edges[e, s]
            nbr[fill[a]] = edges[e, 1 - s]
            via[fill[a]] = e
            first[fill[a]] = s == 0
            fill[a] += 1
    for s in range(n):
        for k in range(start[s], start[s + 1]):
            if nbr[k] < s:
                n_in[s] += 1
            else:
                n_out[s] += 1
        c = n_in[s] if n_in[s] > n_out[s] else n_out[s]
        chain_w[s] = 1.0 / c if c > 0 else 1.0  # 1 / (monotonic chains through s)
    # msg[e, 0]: from edges[e, 0] into edges[e, 1] (a function of the latter's state)
    best = -np.inf
    bound = np.inf
    it = 0
    converged = False
    for it in range(1, max_iter + 1):
        change = 0.0  # the largest change of a message in this iteration
        for direction in range(2):
            for t in range(n):
                s = t if direction == 0 else n - 1 - t
                for k in range(K):
                    th[k] = unary[s, k]
                for k in range(start[s], start[s + 1]):
                    e = via[k]
                    into = 1 if first[k] else 0
                    for a in range(K):
                        th[a] += msg[e, into, a]
                g = chain_w[s] if reweight else 1.0
                for k in range(start[s], start[s + 1]):
                    if (nbr[k] > s) != (direction == 0):
                        continue
                    e = via[k]
                    out = 0 if first[k] else 1  # s's message along e
                    into = 1 - out
                    top = -np.inf
                    for b in range(K):
                        m = -np.inf
                        for a in range(K):
                            pw = pairwise[e, a, b] if first[k] else pairwise[e, b, a]
                            val = g * th[a] - msg[e, into, a] + pw
                            if val > m:
                                m = val
                        cand[b] = m
                        if m > top:
                            top = m
                    for b in range(K):
                        d = abs(cand[b] - top - msg[e, out, b])
                        if d > change:
                            change = d
                        msg[e, out, b] = cand[b] - top
        # decode in index order: earlier neighbours fixed, later ones through messages
        for s in range(n):
            for k in range(K):
                th[k] = unary[s, k]
            for k in range(start[s], start[s + 1]):
                e = via[k]
                t = nbr[k]
                if t < s:
                    for a in range(K):
                        th[a] += pairwise[e, y[t], a] if not first[k] else pairwise[e, a, y[t]]
                else:
                    into = 1 if first[k] else 0
                    for a in range(K):
                        th[a] += msg[e, into, a]
            bi = 0
            for a in range(1, K):
                if th[a] > th[bi]:
                    bi = a
            y[s] = bi
        score = 0.0
        for s in range(n):
            score += unary[s, y[s]]
        for e in range(E):
            score += pairwise[e, y[edges[e, 0]], y[edges[e, 1]]]
        if score > best:
            best = score
            for s in range(n):
                best_y[s] = y[s]
        # the monotonic-chain bound of the current reparametrization
        new_bound = 0.0
        n_chains = 0
        for s in range(n):
            for k in range(K):
                th[k] = unary[s, k]
            for k in range(start[s], start[s + 1]):
                into = 1 if first[k] else 0
                for a in range(K):
                    th[a] += msg[via[k], into, a]
            for a in range(K):
                th[a] *= chain_w[s]
            used_in = 0
            outs_seen = 0
            for k in range(start[s], start[s + 1]):
                if nbr[k] > s:
                    continue
                e = via[k]
                c = chain_of[e]
                # v(x_s) = max_{x_t} cvec[c, x_t] + theta_e(x_t, x_s) - M_te(x_s) - M_se(x_t)
                for b in range(K):
                    m = -np.inf
                    for a in range(K):
                        if first[k]:  # s is edges[e, 0]; t = edges[e, 1]
                            val = (cvec[c, a] + pairwise[e, b, a] - msg[e, 1, b]
                                   - msg[e, 0, a])
                        else:
                            val = (cvec[c, a] + pairwise[e, a, b] - msg[e, 0, b]
                                   - msg[e, 1, a])
                        if val > m:
                            m = val
                    v[b] = m + th[b]
                used_in += 1
                if used_in <= n_out[s]:
                    # the chain goes on along the used_in-th later edge of s
                    j = 0
                    for k2 in range(start[s], start[s + 1]):
                        if nbr[k2] > s:
                            j += 1
                            if j == used_in:
                                chain_of[via[k2]] = c
                                break
                    for b in range(K):
                        cvec[c, b] = v[b]
                else:
                    top = -np.inf
                    for b in range(K):
                        if v[b] > top:
                            top = v[b]
                    new_bound += top
            for k in range(start[s], start[s + 1]):
                if nbr[k] < s:
                    continue
                outs_seen += 1
                if outs_seen > n_in[s]:  # a new chain starts at s
                    c = n_chains
                    n_chains += 1
                    chain_of[via[k]] = c
                    for b in range(K):
                        cvec[c, b] = th[b]
            if n_in[s] == 0 and n_out[s] == 0:
                top = -np.inf
                for b in range(K):
                    if th[b] > top:
                        top = th[b]
                new_bound += top
        # chains that ended at s were counted there; a chain that enters s and goes on
        # is counted at its last node
        old = bound
        if new_bound < bound:
            bound = new_bound
        # ``unit`` (the largest |potential|) rather than 1 next to the magnitudes: the
        # tests then scale with the potentials (an absolute 1 made every gap of
        # potentials of order 2^-30 pass at the first iteration), and a score near 0
        # by cancellation still gets an allowance of the size of its rounding
        if bound - best <= tol * (unit + abs(best)):
            converged = True
            break
        if reweight and old - new_bound <= tol * (unit + abs(new_bound)) and it > 1:
            converged = True
            break
        if change <= tol * unit:  # a fixed point: further iterations repeat this one
            converged = True
            break
    return best, bound, it, converged


def _run(unary: np.ndarray, pairwise: np.ndarray, edges: np.ndarray, reweight: bool,
         max_iter: int, tol: float, where: str, msg: np.ndarray | None = None
         ) -> MessagePassingResult:
    max_iter = check_whole(max_iter, "max_iter", 1, where)
    tol = check_real(tol, "tol", where, low=0)
    u, p, e = check_energy(unary, pairwise, edges, where)
    n, K = u.shape
    E = e.shape[0]
    iw = np.zeros((9, max(n + 1, 2 * E)), dtype=np.int64)  # rows: see _pass_kernel
    if msg is None:
        msg = np.zeros((E, 2, K))
    unit = _potential_scale(u, p)
    s, b, it, conv = _pass_kernel(u, p, e, reweight, int(max_iter), float(tol), unit, iw,
                                  np.zeros(2 * E, dtype=np.bool_), np.empty(n),
                                  msg, np.zeros((E + n, K)), np.empty((3, K)))
    certified = b - s <= 1e-9 * (unit + abs(s))
    return MessagePassingResult(iw[5, :n].copy(), float(s), float(b), int(it), bool(conv),
                                bool(certified))


def trws(unary: np.ndarray, pairwise: np.ndarray, edges: np.ndarray, max_iter: int = 100,
         tol: float = 1e-6) -> MessagePassingResult:
    """Sequential tree-reweighted message passing (TRW-S), compiled.

    Cost O(E K^2) per iteration (a forward and a backward pass, a decoding and the
    bound), ``max_iter`` iterations at most; O(E K) memory.  Guarantee: ``bound`` >=
    the best score >= ``score`` for any number of iterations; the bound does not
    increase and tends to the local LP's optimum or a weak-tree-agreement point
    (exact on forests at convergence).  Stops when the bound falls by less than
    ``tol * (scale + |bound|)`` in an iteration or comes within ``tol * (scale +
    |score|)`` of ``score``, or when no message moves by more than ``tol * scale``,
    ``scale`` being the largest |potential|: scaling the potentials by a power of two
    scales ``score`` and ``bound`` exactly and changes nothing else (barring underflow
    to subnormals).
    """
    return _run(unary, pairwise, edges, True, max_iter, tol, "trws")


def max_product(unary: np.ndarray, pairwise: np.ndarray, edges: np.ndarray, max_iter: int = 100,
                tol: float = 1e-6) -> MessagePassingResult:
    """Sequential loopy max-product (belief propagation), compiled.

    Cost O(E K^2) per iteration, ``max_iter`` iterations at most (it stops early when
    no message moves by more than ``tol * scale`` in an iteration or the bound comes
    within ``tol * (scale + |score|)`` of the score, ``scale`` being the largest
    |potential|).  Guarantee: exact on forests once messages have
    crossed the graph (iterations >= the trees' diameter); on loopy graphs none (it
    may oscillate; the best labelling decoded is kept), though ``bound`` (the chain
    bound of its messages, usually far looser than TRW-S's) stays valid.
    """
    return _run(unary, pairwise, edges, False, max_iter, tol, "max_product")


def trws_reparametrized(unary: np.ndarray, pairwise: np.ndarray, edges: np.ndarray,
                        max_iter: int = 300, tol: float = 1e-9
                        ) -> tuple[MessagePassingResult, np.ndarray]:
    """:func:`trws` (checked arrays of :func:`.check_energy`), and each node's
    reparametrized unary after its last pass: ``unary`` plus every message into the
    node, ``(n_nodes, n_states)``.  States far below their node's maximum there are
    the ones the local LP's optimum does not use once TRW-S has converged; the local
    LP of :mod:`.lp` prunes them (and checks that it may)."""
    E, K = edges.shape[0], unary.shape[1]
    msg = np.zeros((E, 2, K))
    r = _run(unary, pairwise, edges, True, max_iter, tol, "trws", msg)
    th = unary.copy()
    np.add.at(th, edges[:, 1], msg[:, 0])  # msg[e, 0] goes into edges[e, 1]
    np.add.at(th, edges[:, 0], msg[:, 1])
    return r, th
