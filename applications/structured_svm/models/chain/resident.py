"""The chain dual's blocks kept on cluster workers: each piece holds a range of the
examples and their block iterates, and answers the core's resident joint and local
rounds (:mod:`frankwolfe.algorithms.bcfw.resident`, whose shard runs the calls' protocol): the
summed direction of its blocks of a round, the commit of the step size the core chose,
and its blocks' certificate sums; for local rounds its kernels (the core's pass driver
takes the steps), and the convex combination of its block iterates before and after.
The loops over a round's blocks are the core's (:func:`frankwolfe.compiled.
resident_kernels`, over the chain's kernels); a piece holds the data, the iterates and
the scratch they run on."""

from __future__ import annotations

from typing import Any

import numpy as np

from frankwolfe.compiled import resident_kernels
from frankwolfe.compiled.touched import joint_scratch

from .dual_kernels import chain_blocks, chain_state, chain_sync
from .dual_state import _aggregate
from .rounds import chain_rounds

__all__ = ["ChainResidentBlocks", "ChainResidentPiece"]


def _shared_fields(model: Any) -> dict[str, tuple[tuple[int, ...], Any]]:
    # the feature-major copy of the unary gradient, K x F whatever a piece's rows
    return {"gT": ((model.n_states * model.n_unary,), np.float64)}


class ChainResidentBlocks:
    """What :meth:`~...dual.SSVMDual.resident_blocks` gives the core: the blocks of
    ``len(source)`` examples, cut into :class:`ChainResidentPiece` by range."""

    def __init__(self, model: Any, source: Any, lam: float, n: int) -> None:
        self.model, self.source, self.lam, self.n = model, source, float(lam), int(n)

    def shared_fields(self) -> dict[str, tuple[tuple[int, ...], Any]]:
        """What the pieces' kernels derive from the point, as ``name -> (shape,
        dtype)``: the arrays the pieces of a run share when their steps move one point
        together (lock-free passes), the same for every piece: the feature-major copy
        of the unary gradient.  Its flag stays each piece's: whether a piece keeps the
        copy depends on its rows (ids and sparse rows do, dense rows do not), and a
        piece reads it only after its own sync."""
        return _shared_fields(self.model)

    def shard(self, blocks: range) -> ChainResidentPiece:
        if blocks.step != 1 or not 0 <= blocks.start <= blocks.stop <= self.n:
            raise ValueError(f"ChainResidentBlocks.shard: blocks must be a contiguous range "
                             f"within range(0, {self.n}), got {blocks!r}")
        return ChainResidentPiece(self.model, self.source, blocks.start, blocks.stop,
                                  self.lam, self.n)


class ChainResidentPiece:
    """Examples ``start .. stop - 1`` of ``source`` and their block iterates, built where
    the piece is first used (a worker) and kept there: the domain's side of a
    :class:`~frankwolfe.algorithms.bcfw.resident.ResidentShard` (which says what each
    method answers).  It pickles as its recipe, never with its iterates."""

    def __init__(self, model: Any, source: Any, start: int, stop: int, lam: float,
                 n: int) -> None:
        self._recipe = (model, source, int(start), int(stop), float(lam), int(n))
        self._built: dict[str, Any] | None = None
        self._h: np.ndarray | None = None
        self._synced = False
        self._kept: tuple[np.ndarray, ...] | None = None

    def __reduce__(self) -> Any:
        return ChainResidentPiece, self._recipe

    def _parts(self) -> dict[str, Any]:
        if self._built is None:
            model, source, start, stop, lam, n = self._recipe
            X, Y = source.examples(start, stop)
            # lam, n and the 1 / (lam n) scale are the whole set's
            state = chain_state(model, X, Y, lam)._replace(n=float(n),
                                                            scale=1.0 / (lam * n))
            blocks = chain_blocks(state)
            blocks.rounds = chain_rounds(blocks, state)
            self._built = {"state": state, "blocks": blocks, "ref": blocks.state,
                           "rounds": blocks.rounds,
                           "kernels": resident_kernels(blocks),
                           "scratch": joint_scratch(state.d + 1, stop - start)}
        return self._built

    @property
    def size(self) -> int:
        """The number of the piece's blocks."""
        return self._recipe[3] - self._recipe[2]

    def start(self, h: np.ndarray) -> None:
        self._h = np.asarray(h, dtype=float)

    def compiled_blocks(self) -> Any:
        """The chain's kernels over the piece's examples and iterates (fused)."""
        return self._parts()["blocks"]

    def shared_fields(self) -> dict[str, tuple[tuple[int, ...], Any]]:
        """What the kernels derive from the point (:meth:`ChainResidentBlocks.
        shared_fields`, the same for every piece)."""
        model = self._recipe[0]
        return _shared_fields(model)

    def share(self, arrays: dict[str, np.ndarray]) -> None:
        """The kernels rebuilt over ``arrays`` (as :meth:`shared_fields` lists them) for
        what they derive from the point; the examples and block iterates stay.  A piece
        whose rows need no feature-major copy (dense rows more than half full) keeps
        none: its flag stays its own, so its steps never write the shared copy."""
        parts = self._parts()
        state = parts["state"]
        gT = arrays["gT"]
        if state.gT.size:  # ids or sparse rows: the copy the steps keep is the shared one
            if gT.shape != state.gT.shape:
                raise ValueError(f"ChainResidentPiece.share: the shared gT has shape "
                                 f"{gT.shape}, this piece's kernels need {state.gT.shape}")
            state = state._replace(gT=gT)
        state.mode[0] = 0  # the new copy is not synced: g read directly until it is
        blocks = chain_blocks(state)
        blocks.rounds = chain_rounds(blocks, state)
        parts.update(state=state, blocks=blocks, ref=blocks.state, rounds=blocks.rounds,
                     kernels=resident_kernels(blocks))
        self._synced = False

    def _iterates(self) -> tuple[np.ndarray, ...]:
        st = self._parts()["state"]
        return st.mu, st.T, st.lbar  # marginals, pair marginals, losses: linear in z_i

    def keep(self) -> None:
        """Remember the block iterates (for :meth:`blend`)."""
        now = self._iterates()
        if self._kept is None:
            self._kept = tuple(a.copy() for a in now)
        else:
            for old, a in zip(self._kept, now):
                old[...] = a

    def blend(self, gamma: float) -> None:
        """``z_i <- z_i^kept + gamma (z_i - z_i^kept)`` for every block (each a point of
        its block: a convex combination of two)."""
        if self._kept is None:
            raise RuntimeError("ChainResidentPiece: blend before keep")
        for old, a in zip(self._kept, self._iterates()):
            if gamma == 0.0:
                a[...] = old
            elif gamma != 1.0:
                a -= old
                a *= gamma
                a += old

    def follow(self, point: np.ndarray, changed: Any = None) -> None:
        """Keep the feature-major copy of the point current (see
        :meth:`.rounds.ChainBlockVertices.follow`)."""
        parts = self._parts()
        if changed is None or not self._synced:
            chain_sync(parts["ref"], point)
            self._synced = True
        else:
            idx = np.arange(changed.start, changed.stop) if isinstance(changed, slice) \
                else np.asarray(changed, dtype=np.int64)
            parts["kernels"].moved(parts["ref"], idx, point)

    def total(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        x = np.zeros(size)
        _aggregate(self._parts()["state"], x)
        coords = np.flatnonzero(x)
        return coords, x[coords]

    def directions(self, which: np.ndarray, point: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
        if self._h is None:
            raise RuntimeError("ChainResidentPiece: directions before start(h)")
        parts = self._parts()
        rk, sc = parts["rounds"], parts["scratch"]
        rk.vertices(which, rk.point(point))
        tr = sc.tr
        parts["kernels"].directions(parts["ref"], rk.table, which, self._h, parts["state"].sd,
                                    tr, sc.dx)
        coords = tr.coords[:int(tr.ncoords[0])].copy()
        vals = sc.dx[coords]
        sc.dx[coords] = 0.0
        tr.mark[coords] = 0
        tr.ncoords[0] = 0
        return coords, vals

    def commit(self, which: np.ndarray, gamma: float) -> None:
        parts = self._parts()
        parts["kernels"].commit(parts["ref"], parts["rounds"].table, which, gamma)

    def gaps(self, point: np.ndarray) -> tuple[float, float]:
        parts = self._parts()
        rk = parts["rounds"]
        n_local = self._recipe[3] - self._recipe[2]
        rk.vertices(np.arange(n_local), rk.point(point))
        return parts["kernels"].gaps(parts["ref"], rk.table, n_local, point)
