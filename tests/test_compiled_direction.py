"""The core's application of a structured block direction (StructuredDirection) against
the direction materialized with numpy, and the chain model's fast-path hooks."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from frankwolfe.compiled import Average, CompiledBlocks, apply_direction, structured_direction


@njit
def _apply(sd, gamma, h, x, g, kind, acc, since, ck1, k):
    apply_direction(sd, gamma, h, x, g, Average(kind, acc, since, 0, ck1, k))


def _fill(sd, entries, rows):
    sd.counts[:] = (len(entries), len(rows), 0)
    for a, (p, v) in enumerate(entries):
        sd.idx[a], sd.val[a] = p, v
    segs = sorted({b for _, b, _ in rows})
    for r, (row, b, c) in enumerate(rows):
        sd.row[r], sd.base[r], sd.coef[r] = row, b, c
    sd.seg[:len(segs)] = segs
    sd.counts[2] = len(segs)


@pytest.mark.parametrize("kind", ["dense", "ids", "sparse", "binary"])
def test_apply_direction_matches_numpy(kind):
    rng = np.random.default_rng(0)
    F, N, D = 6, 5, 30
    if kind in ("sparse", "binary"):  # CSR rows, a third of the entries stored
        dense_rows = rng.standard_normal((N, F)) * (rng.random((N, F)) < 0.35)
        dense_rows[1] = 0.0  # an empty row
        if kind == "binary":
            dense_rows = (dense_rows != 0).astype(float)
        ptr = np.concatenate([[0], np.cumsum(np.count_nonzero(dense_rows, axis=1))])
        col = np.nonzero(dense_rows)[1].astype(np.int16)
        vals = np.zeros(0) if kind == "binary" else dense_rows[dense_rows != 0]
        sd = structured_direction(4, 4, 4, sparse=(ptr, col, vals))
    elif kind == "ids":
        R = rng.integers(0, 3, size=(N, 2))  # two categorical columns with values 1..2
        off = np.array([0, 2])
        dense_rows = np.zeros((N, 4))
        for r in range(N):
            for j in range(2):
                if R[r, j]:
                    dense_rows[r, off[j] + R[r, j] - 1] = 1.0
        sd = structured_direction(4, 4, 4, ids=R, id_offsets=off)
    else:
        dense_rows = rng.standard_normal((N, F))
        sd = structured_direction(4, 4, 4, dense=dense_rows)
    width = dense_rows.shape[1]
    entries = [(25, 0.5), (27, -1.5), (29, 2.0)]
    rows = [(0, 0, 0.3), (3, 0, -0.7), (2, 12, 1.1)]
    _fill(sd, entries, rows)
    d = np.zeros(D)
    for p, v in entries:
        d[p] += v
    for row, b, c in rows:
        d[b:b + width] += c * dense_rows[row]
    h = rng.uniform(0.5, 2.0, D)
    x0, g0 = rng.standard_normal(D), rng.standard_normal(D)
    x, g = x0.copy(), g0.copy()
    gamma = 0.37
    # weighted averaging at step k = 4: every touched coordinate settled with weights
    # j = since .. k of its unchanged value (x0), the others left alone
    acc, since, k = np.zeros(D), np.full(D, 2, dtype=np.int64), 4
    _apply(sd, gamma, h, x, g, 1, acc, since, k * (k + 1) / 2.0, k)
    np.testing.assert_allclose(x, x0 + gamma * d, rtol=0, atol=1e-14)
    np.testing.assert_allclose(g, g0 + gamma * h * d, rtol=0, atol=1e-14)
    touched = d != 0
    np.testing.assert_allclose(acc[touched], x0[touched] * (2 + 3 + 4), rtol=1e-15)
    assert np.all(acc[~touched] == 0) and np.all(since[touched] == k + 1)


def test_structured_direction_checks_its_rows():
    with pytest.raises(ValueError, match="exactly one of `dense`, `ids` and `sparse`"):
        structured_direction(1, 1, 1, dense=np.zeros((2, 2)),
                             sparse=(np.zeros(3, dtype=np.int64), np.zeros(0), np.zeros(0)))
    with pytest.raises(ValueError, match="2 columns, 1 values"):
        structured_direction(1, 1, 1, sparse=(np.array([0, 2]), np.array([0, 1]), np.ones(1)))


def test_compiled_blocks_layout_is_typed():
    with pytest.raises(TypeError, match="`layout` must be a StructuredDirection"):
        CompiledBlocks(None, None, (), 1, None, describe=1, sync=1, curvature=1,
                       layout=(np.zeros(1),))


def test_chain_fast_paths_decline_for_subclasses_that_change_the_model():
    from frankwolfe.applications.structured_svm import ChainModel, make_chain

    class Recolored(ChainModel):
        def loss(self, y_true, y):
            return 2.0 * super().loss(y_true, y)

    X, Y = make_chain(5, n_states=3, n_features=2, random_state=0)
    assert ChainModel(3, 2).batch_oracles(X, Y) is not None
    assert Recolored(3, 2).batch_oracles(X, Y) is None
    assert Recolored(3, 2).compiled_dual_blocks(X, Y, 0.1) is None
    Yp = [np.roll(y, 1) for y in Y]
    ref = [np.mean(np.asarray(a) != np.asarray(b)) for a, b in zip(Y, Yp)]
    np.testing.assert_allclose(ChainModel(3, 2).batch_loss(Y, Yp), ref, rtol=1e-15)
    np.testing.assert_allclose(Recolored(3, 2).batch_loss(Y, Yp), 2 * np.array(ref),
                               rtol=1e-15)
    with pytest.raises(ValueError, match="labelling 1 has length"):
        ChainModel(3, 2).batch_loss(Y, [Yp[0], Yp[1][:-1]] + Yp[2:])


def test_driver_compiled_in_memory_without_a_cache_folder(monkeypatch, tmp_path, caplog):
    """No writable cache folder: the pass is compiled in memory and runs as the Python
    engine does; its compile notice names the driver, not the template's source."""
    import logging

    import frankwolfe as fw
    from frankwolfe.applications.structured_svm import (
        ChainModel,
        SSVMDual,
        SSVMDualObjective,
        make_chain,
    )
    from frankwolfe.compiled import driver as compiled_blocks
    from frankwolfe.compiled import driver_files

    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(driver_files, "drivers_folder", lambda: blocker / "drivers")
    monkeypatch.setattr(compiled_blocks, "_DRIVERS", {})
    X, Y = make_chain(12, n_states=3, n_features=4, random_state=1)
    model = ChainModel(3, 4)
    runs = []
    caplog.set_level(logging.INFO, logger="frankwolfe")
    for compiled in (True, False):
        f = SSVMDualObjective(0.1, model.size_joint_feature)
        with fw.debug(False):
            runs.append(fw.block_coordinate_frank_wolfe(
                f, SSVMDual(model, X, Y, 0.1, compiled=compiled), tol=0.0, max_iter=4,
                gap_every=2, random_state=3, averaging="weighted", compiled=compiled))
    assert runs[0].extra["engine"] == "compiled" and not (blocker / "drivers").exists()
    notices = [r.getMessage() for r in caplog.records if "in memory" in r.getMessage()]
    assert notices and all("compiling the BCFW pass driver for " in m and "chain_commit" in m
                           for m in notices)
    np.testing.assert_allclose(runs[0].x, runs[1].x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(runs[0].extra["x_average"], runs[1].extra["x_average"],
                               rtol=0, atol=1e-12)


def test_chain_data_reads_consecutive_views_in_place_and_copies_otherwise():
    from frankwolfe.applications.structured_svm import ChainModel
    from frankwolfe.applications.structured_svm.models.chain.data import ChainData

    rng = np.random.default_rng(2)
    flat = rng.standard_normal((9, 3))
    X = np.split(flat, [2, 5])
    Y = [np.zeros(len(x), dtype=np.int64) for x in X]
    d = ChainData(ChainModel(2, 3), X, Y)
    assert np.shares_memory(d.Xf, flat)
    np.testing.assert_array_equal(d.Xf, flat)
    shuffled = [X[1], X[0], X[2]]  # views, but not in order: a copy
    d = ChainData(ChainModel(2, 3), shuffled, [Y[1], Y[0], Y[2]])
    assert not np.shares_memory(d.Xf, flat)
    np.testing.assert_array_equal(d.Xf, np.concatenate(shuffled))
