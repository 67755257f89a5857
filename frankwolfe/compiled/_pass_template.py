"""Source of the core's compiled block pass (see
:func:`frankwolfe.compiled.driver.compiled_driver`).

Not executed from here: ``compiled_driver`` binds the free names below to one
combination of kernels (the domain's ``direction``, ``oracle``, ``commit``,
``curvature``, ``describe``, ``moved``, ``moved_at``, ``sync``, ``away``, ``move``,
``recall``, ``recall_gap``, ``lookup``; the objective's ``line``, ``update``,
``search``; the step rule ``rule``; the block step ``FUSED`` / ``PAIRWISE`` (``WANT``:
whether the direction is materialized, a literal as ``False`` in the certificate, so
that one compilation of a kernel serves both); ``ROUNDS``: vertices read from the
round's ``table`` instead of asked, the coordinates the steps write listed in
``touched`` (:mod:`.touched`); ``ORACLE`` / ``RECALL_GAP``: the domain's ``oracle`` /
``recall_gap`` answer the calls that want no direction; ``SHARED``: other threads
move ``g`` at the same time (lock-free passes: its adds atomic); ``JOINT``: a call takes one
joint round (the domain's round kernel ``load``, fused kernels; ``MOVED_AT``: its
``moved_at`` refreshes the domain once per round, else ``MOVED``: ``moved`` block by
block); ``SEPARABLE``: ``update`` returns the change of f, ``SEARCH``: exact steps by
the objective's ``search``; ``CACHE``: the domain's ``lookup`` before each step; the
helpers of ``average``, ``structured`` and ``sum_tree``) and compiles ``run_pass``
(its arguments: the call's ``t0``, ``t1``, ``k``, ``task``, ``resync`` and the typed
records of :mod:`.pass_state` and :mod:`.average`)
with numba: written out as a module that imports the kernels (then numba
caches the machine code across processes), or in memory when a kernel cannot be
imported by name.
"""
# ruff: noqa: F821 (the free names are bound by compiled_driver)

import numpy as np


def run_pass(t0, t1, k, task, resync, picker, data, vec, scratch, avg,
             extras):  # pragma: no cover - compiled
    # the records' fields as locals, once (.pass_state; .average.AverageState)
    dstate, odata, rparams, n = data
    x, g, h = vec
    idx, val, sd = scratch
    avg_kind, acc, since, avg_start = avg
    # cparams (CACHE): [cache_factor, cache_nu, G, hits] (hits counted here)
    table, cparams, touched, joint = extras
    if FUSED and resync:
        sync(dstate, g)
    if task != 0:
        # the certificate, in this same function: a second one would link and optimize
        # every kernel again, at a first call's expense
        # (benchmarks/README.md, "Measurements behind code choices")
        # every block, or (t1 > t0) the blocks order[t0:t1]: a share of a lock-free pass
        est = picker.est
        total = 0.0
        scores = 0.0
        share = t1 > t0
        for a in range(t1 - t0 if share else est.size):
            i = picker.order[t0 + a] if share else a
            if ROUNDS and RECALL_GAP:
                gap, score = recall_gap(dstate, table, i, g)
            elif ROUNDS:
                nnz, gap, score = recall(dstate, table, i, g, False, idx, val)
            elif ORACLE:
                gap, score = oracle(dstate, i, g)
            else:
                nnz, gap, score = direction(dstate, i, g, False, idx, val)
            total += gap
            scores += score
            if task == 2:
                est[i] = gap if gap > 0.0 else 0.0
        return k, total, scores
    if JOINT:
        # JOINT (fused round kernels with `load`): the round order[t0:t1] as one step along
        # the sum D of its blocks' directions at their stored vertices (a block drawn twice
        # counts once), with one step size; then every block committed with it.  The round's
        # t1 - t0 block steps leave x as it is until the last (what the average records).
        jx, jt, seen = joint.dx, joint.tr, joint.blocks
        for t in range(t0, t1):
            i = picker.order[t]
            if seen[i] == 0:
                seen[i] = 1
                load(dstate, table, i)
                curvature(dstate, i, h)
                describe(dstate, i, sd)
                touch_direction(sd, jt, jx)  # jx += d_i, its support listed in jt
        nj = jt.ncoords[0]
        slope = 0.0
        curv = 0.0
        for a in range(nj):
            p = jt.coords[a]
            slope += g[p] * jx[p]
            curv += h[p] * jx[p] * jx[p]
        m = t1 - t0
        gamma = 0.0
        df = 0.0
        if slope < 0.0:
            gamma = rule(rparams, k / n, slope, curv, 1.0)
        if gamma > 0.0:
            df = gamma * (slope + 0.5 * gamma * curv)
            kl = k + m - 1
            ck1 = _avg_cum(avg_kind, kl + 1, avg_start) if avg_kind > 0 else 0.0
            avg = Average(avg_kind, acc, since, avg_start, ck1, kl)
            track = touched.mark.size > 0
            for a in range(nj):
                p = jt.coords[a]
                if avg_kind > 0:
                    average_touch(avg, x, p)
                x[p] += gamma * jx[p]
                g[p] += gamma * h[p] * jx[p]
                if track:
                    touch(touched, p)
            if MOVED_AT:  # what the domain derives from g, where the step changed g
                moved_at(dstate, jt.coords, nj, g)
        for t in range(t0, t1):
            i = picker.order[t]
            if seen[i] == 1:
                seen[i] = 0
                if gamma > 0.0:
                    load(dstate, table, i)
                    if MOVED and not MOVED_AT:  # the domain's refresh, block by block
                        curvature(dstate, i, h)
                        describe(dstate, i, sd)
                        moved(dstate, sd, g)
                    commit(dstate, i, gamma)
        for a in range(nj):
            p = jt.coords[a]
            jx[p] = 0.0
            jt.mark[p] = 0
        jt.ncoords[0] = 0
        return k + m, gamma, df
    # ROUNDS: the coordinates of x and g the steps write go into the record `touched`
    # (when it is kept: the rounds' bookkeeping then costs what changed, not d)
    track = False
    if ROUNDS:
        track = touched.mark.size > 0
    gamma = np.nan
    df = 0.0
    est = picker.est
    for t in range(t0, t1):
        if picker.mode == 1:
            i = gap_pick(picker.tree, picker.tsize, est, picker.nextu, picker.unif[t], n)
        else:
            i = picker.order[t]
        if ROUNDS:
            if RECALL_GAP and not WANT:
                nnz = 0
                gap, score = recall_gap(dstate, table, i, g)
            else:
                nnz, gap, score = recall(dstate, table, i, g, WANT, idx, val)
        else:
            hit = False
            if CACHE:  # gapBCFW: a stored atom when its gap is large enough
                th = cparams[0] * est[i] if cparams[0] > 0.0 else 0.0  # 0 * inf: NaN
                th2 = cparams[1] * cparams[2] / n
                nnz, gap, score, hit = lookup(dstate, i, g, th if th >= th2 else th2, k,
                                              WANT, idx, val)
                if hit:
                    cparams[3] += 1.0
            if not hit:
                if ORACLE and not WANT:
                    nnz = 0
                    gap, score = oracle(dstate, i, g)
                else:
                    nnz, gap, score = direction(dstate, i, g, WANT, idx, val)
        gi = gap if gap > 0.0 else 0.0
        est[i] = gi
        if picker.mode != 0:
            tree_set(picker.tree, picker.tsize, i, gap_weight(gi, picker.degree))
        gamma = 0.0
        gmax = 1.0  # the largest step: 1 for FW, the away atom's weight for pairwise
        move_ok = gap > 0.0
        if PAIRWISE:  # weight moves from the away atom a to s_i (d = s_i - a): a descent
            # direction when <g, a> > <g, s_i>, whatever the sign of the (rounded) gap
            nnz, gmax = away(dstate, i, g, idx, val)
            move_ok = nnz > 0 and gmax > 0.0
        if move_ok:
            if FUSED and SHARED:
                # the slope at the current g, not the oracle's gap: the other threads have
                # moved g since (so the line search is at the current iterate, as in the
                # rounds)
                curv = curvature(dstate, i, h)
                describe(dstate, i, sd)
                slope = direction_dot(sd, g)
            elif FUSED:
                slope, curv = -gap, curvature(dstate, i, h)
            elif SEARCH:
                slope, curv = 0.0, 0.0
            else:
                slope, curv = line(odata, x, g, idx, val, nnz)
            if SEARCH:
                # unbounded, then clipped: the Python steps' ExactStep does the same, so
                # both take the same steps to the last bit
                gamma = search(odata, x, idx, val, nnz, np.inf)
                if gamma > gmax:
                    gamma = gmax
            elif slope < 0.0:
                gamma = rule(rparams, k / n, slope, curv, gmax)
            if gamma > 0.0:
                ck1 = _avg_cum(avg_kind, k + 1, avg_start) if avg_kind > 0 else 0.0
                avg = Average(avg_kind, acc, since, avg_start, ck1, k)
                if not SEPARABLE:
                    df += gamma * (slope + 0.5 * gamma * curv)
                if FUSED:
                    if not SHARED:  # (the shared steps described it for their slope)
                        describe(dstate, i, sd)
                    apply_direction(sd, gamma, h, x, g, avg, SHARED)
                    moved(dstate, sd, g)
                else:
                    if avg_kind > 0:
                        for a in range(nnz):
                            average_touch(avg, x, idx[a])
                    if SEPARABLE:
                        df += update(odata, x, g, idx, val, nnz, gamma)
                    else:
                        update(odata, x, g, idx, val, nnz, gamma)
                if ROUNDS and track:
                    if FUSED:
                        touch_direction(sd, touched, val[:0])
                    else:  # an objective whose update moves g on idx alone (local)
                        for a in range(nnz):
                            touch(touched, idx[a])
                if PAIRWISE:
                    move(dstate, i, gamma)
                else:
                    commit(dstate, i, gamma)
        k += 1
    return k, gamma, df

