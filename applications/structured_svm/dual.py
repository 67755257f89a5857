"""The structured SVM dual as a domain and an objective of the core toolkit.

With ``n`` examples, regularization ``lam`` and ``psi_i(y) = phi(x_i, y_i) -
phi(x_i, y)``, the dual of ``min_w lam/2 ||w||^2 + 1/n sum_i H_i(w)`` is, in
image space (DESIGN.md section 3),

    min  F(w, l) = lam/2 ||w||^2 - l   over   (w, l) in P_1 + ... + P_n,
    P_i = conv{ (psi_i(y) / (lam n), L_i(y) / n) : y in Y_i },

a Minkowski sum of one polytope per example.  The block LMO of ``P_i`` with
the gradient ``(lam w, -1)`` is loss-augmented decoding
``argmax_y L_i(y) - <w, psi_i(y)>``, so the core's
:func:`frankwolfe.block_coordinate_frank_wolfe` with exact line search *is*
Algorithm 4 of Lacoste-Julien et al. (ICML 2013), and
:func:`frankwolfe.frank_wolfe` on the whole sum is their batch Algorithm 2.

Two block representations, one algorithm:

* the generic (Python) path stores block ``i`` as a dense vector over its
  coordinates ``feature_support(x_i) + {d}`` and works for any
  :class:`~.models.StructuredModel` (user models included);
* for :class:`~.models.ChainModel` the domain also supplies compiled kernels
  (:meth:`SSVMDual.compiled_blocks`) that store block ``i`` as per-position
  label marginals plus aggregated transition marginals (the marginal-polytope
  view), so whole passes run in numba and memory follows the tokens, not
  ``n * d``; for :class:`~.models.MulticlassModel` as its class weights.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from frankwolfe import LMO, Atom, Objective, ProductDomain
from frankwolfe._numbers import check_whole
from frankwolfe._warnings import warn_user
from frankwolfe.compiled import BlockDomainHooks, CompiledObjective
from frankwolfe.errors import OracleError, ShapeError
from frankwolfe.objectives.line import line_minimizer
from frankwolfe.objectives.quadratic_kernels import diag_quadratic_line, diag_quadratic_update

from ._lam import check_lam
from .models.base import StructuredModel, dual_weights, model_psi

__all__ = ["SSVMDualObjective", "SSVMBlockOracle", "SSVMDual", "DualWarmStart", "label_key"]


def label_key(y: Any) -> Any:
    """Hashable identity of a labelling (an int, or the tuple of an array's entries)."""
    if np.ndim(y) == 0:
        return int(y)
    return tuple(np.asarray(y).ravel().tolist())


class SSVMDualObjective(Objective):
    """``F(w, l) = lam/2 ||w||^2 - l`` on ``x = (w, l)`` of length ``d + 1``.

    A diagonal quadratic: gradient ``(lam w, -1)``, exact line search in
    closed form, block hooks in O(|block|) and compiled kernels for the
    core's numba pass.

    Parameters
    ----------
    lam : float
        Regularization ``lambda > 0``.
    d : int
        Dimension of ``w``.
    """

    def __init__(self, lam: float, d: int) -> None:
        self.lam = check_lam(lam, "SSVMDualObjective")
        self.d = check_whole(d, "d", 1, "SSVMDualObjective")
        self.shape = (self.d + 1,)
        self.smoothness = self.lam

    def _x(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.shape != self.shape:
            raise ShapeError(f"SSVMDualObjective: x must have shape {self.shape}, got {x.shape}")
        return x

    def value(self, x: np.ndarray) -> float:
        x = self._x(x)
        w = x[:-1]
        return 0.5 * self.lam * float(w @ w) - float(x[-1])

    def gradient(self, x: np.ndarray) -> np.ndarray:
        g = self.lam * self._x(x)
        g[-1] = -1.0
        return g

    def value_and_gradient(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        return self.value(x), self.gradient(x)

    def partial_gradient(self, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
        g = self.lam * x[indices]
        g[indices == self.d] = -1.0
        return g

    def exact_step(self, x: np.ndarray, direction: np.ndarray, gradient: np.ndarray) -> float:
        d = np.asarray(direction, dtype=float)
        # the curvature lam ||d_w||^2 sums non-negative terms: it is its own scale
        curv = self.lam * float(d[:-1] @ d[:-1])
        return line_minimizer(float(np.asarray(gradient) @ d), curv, curv, self.convex,
                              "SSVMDualObjective")

    def exact_step_block(self, x: np.ndarray, indices: np.ndarray, direction: np.ndarray,
                         partial_gradient: np.ndarray) -> float:
        dw = direction[indices != self.d]
        curv = self.lam * float(dw @ dw)
        return line_minimizer(float(partial_gradient @ direction), curv, curv, self.convex,
                              "SSVMDualObjective")

    def compiled_block_objective(self) -> CompiledObjective:
        """Diagonal-quadratic kernels (Hessian ``diag(lam, ..., lam, 0)``) for the core's
        compiled BCFW pass; the diagonal is declared so that a domain's fused kernels can
        compute the curvature themselves."""
        h = np.full(self.d + 1, self.lam)
        h[-1] = 0.0
        return CompiledObjective(diag_quadratic_line, diag_quadratic_update, (h,),
                                 hessian_diag=h)

    def as_quadratic(self) -> Any:
        """The same function as a :class:`~frankwolfe.QuadraticObjective` (``Q = diag(lam,
        ..., lam, 0)``, ``c = (0, ..., 0, -1)``), built once."""
        if getattr(self, "_quadratic", None) is None:
            import scipy.sparse as sp

            from frankwolfe import QuadraticObjective

            h = np.full(self.d + 1, self.lam)
            h[-1] = 0.0
            c = np.zeros(self.d + 1)
            c[-1] = -1.0
            self._quadratic = QuadraticObjective(sp.diags_array(h, format="csr"), c)
        return self._quadratic

    def split(self, x: np.ndarray) -> tuple[np.ndarray, float]:
        """``(w, l)`` from ``x``."""
        x = self._x(x)
        return x[:-1], float(x[-1])

    def __repr__(self) -> str:
        return f"SSVMDualObjective(lam={self.lam!r}, d={self.d})"


_LOCAL = threading.local()  # work vectors of the other threads (mini-batch executors)


class SSVMBlockOracle(LMO):
    """Block ``P_i = conv{(psi_i(y)/(lam n), L_i(y)/n)}`` restricted to its coordinates.

    Vertices: one per labelling ``y`` of example ``i``; coordinates: the
    example's feature support followed by the ``l`` coordinate.  The oracle
    for a direction ``(g_w, g_l)`` with ``g_l < 0`` is loss-augmented decoding
    at ``w = g_w / (lam (-g_l))`` (plain decoding at ``w = g_w`` when
    ``g_l = 0``); cost: one model oracle call plus O(|support|).

    Parameters
    ----------
    model : StructuredModel
    x, y : example and its true labelling
    support : ndarray of int
        Sorted coordinates of ``phi(x, .)`` (``model.feature_support(x)``).
    lam : float
    n : int
        Number of examples (the ``1/n`` scaling).
    scratch : ndarray
        Shared length-``d`` work vector (only the support is written); other threads
        than the main one use one of their own, so blocks may be asked concurrently.
    """

    def __init__(self, model: StructuredModel, x: Any, y: Any, support: np.ndarray, lam: float,
                 n: int, scratch: np.ndarray) -> None:
        self.model = model
        self.x = x
        self.y = y
        self.support = support
        self.lam = float(lam)
        self.n = int(n)
        self.scratch = scratch
        self.shape = (support.size + 1,)

    def labelling(self, direction: np.ndarray) -> Any:
        """The labelling that the oracle picks for ``direction``."""
        gw, gl = direction[:-1], float(direction[-1])
        w = self.scratch
        if threading.current_thread() is not threading.main_thread():
            local: np.ndarray | None = getattr(_LOCAL, "w", None)
            if local is None or local.size != self.scratch.size:
                local = _LOCAL.w = np.zeros(self.scratch.size)
            w = local
        if gl < 0:
            w[self.support] = dual_weights(direction, self.lam)
            return self.model.loss_augmented_decode(self.x, self.y, w)
        if gl == 0:
            w[self.support] = gw
            return self.model.decode(self.x, w)
        raise OracleError(
            f"SSVMBlockOracle: the l-component of the direction must be <= 0 (the dual "
            f"gradient has -1 there), got {gl!r}"
        )

    def vertex(self, yhat: Any) -> Atom:
        """The vertex ``(psi(yhat)/(lam n), L(yhat)/n)`` of labelling ``yhat``, sparse over
        the block's coordinates."""
        idx, val = model_psi(self.model, self.x, self.y, yhat)
        pos = np.searchsorted(self.support, idx)
        if idx.size and (pos.max() >= self.support.size
                         or not np.array_equal(self.support[pos], idx)):
            raise ShapeError(
                f"{type(self.model).__name__}.psi touched coordinates outside "
                "feature_support(x); feature_support must cover every labelling"
            )
        loss = float(self.model.loss(self.y, yhat))
        scale = 1.0 / (self.lam * self.n)
        if loss != 0.0:
            pos = np.append(pos, self.support.size)
            val = np.append(val * scale, loss / self.n)
        else:
            val = val * scale
        return Atom.sparse(pos, val, self.support.size + 1, key=label_key(yhat))

    def true_vertex(self) -> Atom:
        """:meth:`vertex` of the true labelling: the origin (``psi_i(y_i) = 0``,
        ``L(y_i, y_i) = 0``), without the model's feature map (the cutting plane's start
        of every block: seconds of a time limit on CoNLL-2000)."""
        return Atom.sparse(np.zeros(0, dtype=np.int64), np.zeros(0), self.support.size + 1,
                           key=label_key(self.y))

    def extreme_point(self, direction: np.ndarray) -> Atom:
        return self.vertex(self.labelling(direction))

    def _repr_params(self) -> dict[str, Any]:
        return {"model": self.model, "support": self.support.size}


class DualWarmStart:
    """The block state of a finished run, opaque to its users (see
    :meth:`SSVMDual.export_state`): image-space block points (``psi / (lam n)``
    and loss parts, rescaled when lambda changes) or the state of the model's
    compiled kernels (label marginals: independent of lambda).

    Parameters
    ----------
    lam : float
        The lambda of the run.
    points : list of ndarray, optional
    compiled : object, optional
    """

    def __init__(self, lam: float, points: list[np.ndarray] | None = None,
                 compiled: Any = None) -> None:
        self.lam = float(lam)
        self.points = points
        self.compiled = compiled

    def to_dict(self) -> dict[str, Any]:
        """Plain containers of arrays and numbers (what a model file stores)."""
        return {"lam": self.lam, "points": self.points, "compiled": self.compiled}

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> DualWarmStart:
        """Inverse of :meth:`to_dict`."""
        points = state.get("points")
        return cls(float(state["lam"]), list(points) if points is not None else None,
                   state.get("compiled"))

    def at(self, lam: float) -> DualWarmStart:
        """The same state for another lambda."""
        if self.points is None or lam == self.lam:
            return DualWarmStart(lam, self.points, self.compiled)
        f = self.lam / lam
        pts = []
        for p in self.points:
            p = p.copy()
            p[:-1] *= f  # psi / (lam n) rescales, the loss part does not
            pts.append(p)
        return DualWarmStart(lam, pts)


class SSVMDual(ProductDomain, BlockDomainHooks):
    """The SSVM dual domain ``P_1 + ... + P_n`` in the space of ``(w, l)``.

    Blocks and their coordinate sets are built lazily (the compiled chain
    path never needs them).  ``initial_block_points()`` is the dual point
    at the true labellings (``w = 0, l = 0``), the customary start.

    Parameters
    ----------
    model : StructuredModel
    X, Y : sequences
        Training examples and true labellings.
    lam : float
        Regularization.
    compiled : bool, default True
        Offer the model's compiled kernels to the core
        (:meth:`~.models.StructuredModel.compiled_dual_blocks`; ChainModel has them).
    n_jobs : int, default 1
        Threads of the batch oracle of the whole sum (:meth:`extreme_point`).
    """

    def __init__(self, model: StructuredModel, X: Sequence[Any], Y: Sequence[Any], lam: float,
                 compiled: bool = True, n_jobs: int | None = 1) -> None:
        if len(X) != len(Y):
            raise ShapeError(f"SSVMDual: X has {len(X)} examples but Y has {len(Y)} labellings")
        if len(X) == 0:
            raise ValueError("SSVMDual: no training examples")
        check = getattr(model, "check_labellings", None)  # duck-typed models lack it
        if callable(check):
            check(Y)
        self._setup(model, X, Y, len(X), lam, compiled, n_jobs)

    def _setup(self, model: StructuredModel, X: Any, Y: Any, n: int, lam: float,
               compiled: bool, n_jobs: int | None) -> None:
        self.lam = check_lam(lam, "SSVMDual")
        self.model = model
        self.X = X
        self.Y = Y
        self.n = int(n)
        self.d = int(model.size_joint_feature)
        self.dim = self.d + 1
        self.shape = (self.dim,)
        self.disjoint = False
        # approximate inference may miss the maximum: the solvers' gaps are then no
        # certificates (the estimator certifies with loss_augmented_bound)
        self.exact = not hasattr(model, "loss_augmented_bound")
        self.compiled = bool(compiled)
        self.n_jobs = n_jobs
        self._blocks: tuple[SSVMBlockOracle, ...] | None = None
        self._warm: DualWarmStart | None = None  # see set_warm_start
        self.source: Any = None  # see from_source
        self.resident = False

    @classmethod
    def from_source(cls, model: StructuredModel, source: Any, lam: float,
                    compiled: bool = True, n_jobs: int | None = 1,
                    resident: bool = False) -> SSVMDual:
        """The dual over the examples of an example source, whose Dask shards are built
        by the workers from the source itself.

        ``source`` has ``len(source)`` examples and ``source.examples(start, stop)``
        returns ``(X, Y)`` of examples ``start .. stop - 1``, the same in every process
        (:class:`~.datasets.ConllLike` is one; a reader of a sharded corpus on shared
        storage is another), and pickles small.  This process holds every example, as
        :class:`SSVMDual` does (its block steps read them); what changes is the
        cluster: a :class:`~frankwolfe.DaskExecutor` ships each worker its range of the
        source, a few kilobytes, instead of its examples, and a worker rebuilt after a
        fault draws or reads them again.

        With ``resident=True`` this process holds no example and no block iterate: the
        workers keep their blocks' iterates too, and a run must take joint or local rounds
        on a :class:`~frankwolfe.DaskExecutor` (``round_step="joint"`` or ``"local"``; see
        :mod:`frankwolfe.algorithms.bcfw.resident`); the client's memory then does not
        grow with the examples (``x``, its gradient, one vector per worker and 8 bytes
        per block).  Chain models only.

        Parameters
        ----------
        model : StructuredModel
        source : object
            ``len(source)`` and ``source.examples(start, stop) -> (X, Y)``.
        lam : float
        compiled : bool, default True
            As :class:`SSVMDual`.
        n_jobs : int or None, default 1
            As :class:`SSVMDual`.
        resident : bool, default False
            Keep the block iterates on the workers (see above).

        Returns
        -------
        SSVMDual
        """
        if not callable(getattr(source, "examples", None)) or not hasattr(source, "__len__"):
            raise TypeError("SSVMDual.from_source: `source` needs __len__ and "
                            f"examples(start, stop), got {type(source).__name__}")
        if resident:
            from .models.chain.model import ChainModel

            if not (isinstance(model, ChainModel) and compiled and model._kernels_apply()):
                raise ValueError("SSVMDual.from_source: resident=True needs a ChainModel "
                                 "with its compiled kernels (and compiled=True), got "
                                 f"{type(model).__name__}")
            n = len(source)
            if n < 1:
                raise ValueError("SSVMDual.from_source: the source has no examples")
            dom = cls.__new__(cls)
            dom._setup(model, None, None, n, lam, compiled, n_jobs)
            dom.source = source
            dom.resident = True
            return dom
        X, Y = source.examples(0, len(source))
        dom = cls(model, X, Y, lam, compiled=compiled, n_jobs=n_jobs)
        dom.source = source
        return dom

    # -- lazy ProductDomain attributes --------------------------------------
    def _build(self) -> None:
        self._local("the Python blocks")
        scratch = np.zeros(self.d)
        # every block's coordinates at once (the model's supports, then l): a chain model
        # computes them compiled into one array, as an np.unique per example ate a large
        # share of a time limit (benchmarks/README.md, "Measurements behind code choices")
        idx = self.model.feature_supports(self.X, append=self.d)
        self._blocks = tuple(SSVMBlockOracle(self.model, x, y, ix[:-1], self.lam, self.n,
                                             scratch)
                             for x, y, ix in zip(self.X, self.Y, idx))
        self._indices = tuple(idx)

    @property
    def blocks(self) -> tuple[SSVMBlockOracle, ...]:  # type: ignore[override]
        if self._blocks is None:
            self._build()
        assert self._blocks is not None  # built above
        return self._blocks

    @property
    def block_indices(self) -> tuple[np.ndarray, ...]:  # type: ignore[override]
        if self._blocks is None:
            self._build()
        return self._indices

    @property
    def n_blocks(self) -> int:
        return self.n

    def dual_objective(self) -> SSVMDualObjective:
        """The dual objective ``lam/2 ||w||^2 - l`` at this domain's lambda (the domain
        owns lambda: its vertices are scaled by ``1/(lam n)``)."""
        return SSVMDualObjective(self.lam, self.d)

    # -- start points ---------------------------------------------------------
    def initial_block_points(self) -> list[np.ndarray] | np.ndarray | None:
        """Block points at the true labellings (all zero: ``psi_i(y_i) = 0``, ``L = 0``;
        one zero array of all of them, block after block), or the warm-start points when
        set."""
        warm = self._warm
        if warm is not None and warm.points is not None:
            return warm.points
        if warm is not None and warm.compiled is not None:
            warn_user("SSVMDual: the warm-start state is the compiled kernels' (label "
                          "marginals), which this run's generic block steps cannot read "
                          "(compiled=False, or a solver without the kernels): it starts from "
                          "the true labellings", UserWarning)
        return np.zeros(sum(ix.size for ix in self.block_indices))

    def set_warm_start(self, state: DualWarmStart | None) -> None:
        """Start the next run from ``state`` (from :meth:`export_state` of a run at any
        lambda; the block points are rescaled to this domain's lambda)."""
        self._warm = None if state is None else state.at(self.lam)

    def export_state(self, result: Any) -> DualWarmStart | None:
        """The block state of a finished BCFW run, for warm starts."""
        pts = result.extra.get("block_iterates")
        if pts is None:
            return None
        if isinstance(pts, list):
            # the result's own arrays, which nothing writes (a warm start copies them
            # into its block iterates): a second copy would cost time and as much memory
            # again (benchmarks/README.md, "Measurements behind code choices")
            return DualWarmStart(self.lam, points=[np.asarray(p, dtype=float).ravel()
                                                   for p in pts])
        return DualWarmStart(self.lam, compiled=pts)  # the model's kernels' own state

    def compiled_blocks(self, x0: Any) -> Any:
        """The model's compiled block kernels for the core BCFW, or ``None`` (no kernels,
        ``compiled=False``, an explicit start point, or a warm start in image space)."""
        self._local("compiled block kernels")
        if not self.compiled or x0 is not None:
            return None
        warm = self._warm
        if warm is not None and warm.compiled is None:
            return None  # image-space block points: the generic path continues from them
        return self.model.compiled_dual_blocks(self.X, self.Y, self.lam,
                                               warm.compiled if warm is not None else None)

    def resident_blocks(self) -> Any:
        """With ``from_source(..., resident=True)``: the blocks that live on the workers
        (:class:`.models.chain.resident.ChainResidentBlocks`, cut by range); else None."""
        if not self.resident:
            return None
        from .models.chain.resident import ChainResidentBlocks

        return ChainResidentBlocks(self.model, self.source, self.lam, self.n)

    def _local(self, what: str) -> None:
        if self.resident:
            raise ValueError(f"SSVMDual: {what} needs the examples in this process; this "
                             "dual's blocks live on the workers (from_source(..., "
                             "resident=True): joint rounds on a DaskExecutor only)")

    def batch_block_oracle(self) -> Any:
        """The chain model's batch block oracle (vertices of a list of examples in one
        numba call that releases the GIL; :class:`.models.chain.rounds.ChainBlockVertices`), or
        ``None`` (other models, or ``compiled=False``: the blocks one by one)."""
        self._local("the batch block oracle")
        if not self.compiled:
            return None
        from .models.chain.batch import ChainBatchOracles
        from .models.chain.rounds import ChainBlockVertices

        batch = self.model.batch_oracles(self.X, self.Y)
        if not isinstance(batch, ChainBatchOracles):
            return None
        return ChainBlockVertices(batch.data, self.lam,
                                  None if self.source is None else (self.model, self.source))

    # -- LMO of the whole sum (batch Frank-Wolfe) ----------------------------
    def extreme_point(self, direction: np.ndarray) -> Atom:
        direction = np.asarray(direction, dtype=float)
        if direction.shape != (self.dim,):
            raise ShapeError(f"SSVMDual: direction has shape {direction.shape}, "
                             f"expected ({self.dim},)")
        gl = float(direction[-1])
        if gl > 0:
            raise OracleError(f"SSVMDual: the l-component of the direction must be <= 0, got {gl}")
        w = dual_weights(direction, self.lam)
        from .oracles import batch_psi_loss

        psi_sum, loss_sum, labels = batch_psi_loss(self.model, self.X, self.Y, w,
                                                   augment=gl < 0,
                                                   n_jobs=self.n_jobs)
        out = np.empty(self.dim)
        out[:-1] = psi_sum / (self.lam * self.n)
        out[-1] = loss_sum / self.n
        return Atom(out, key=("labellings", hash(tuple(label_key(y) for y in labels))))

    def violation(self, x: np.ndarray) -> float:
        raise NotImplementedError("membership in the SSVM dual needs the block decomposition")

    def _repr_params(self) -> dict[str, Any]:
        return {"model": self.model, "n": self.n, "lam": self.lam}
