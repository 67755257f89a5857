"""Saddle-point Frank-Wolfe (SP-FW) and its away-step variant (SP-AFW).

``min_{x in X} max_{y in Y} L(x, y)`` for ``L`` convex-concave is Frank-Wolfe
on the joint domain ``Z = X x Y`` with the operator
``r(z) = (grad_x L, -grad_y L)`` in place of a gradient (Gidel, Jebara and
Lacoste-Julien, AISTATS 2017).  Both methods run on the shared loop of
:mod:`.loop`: an adapter presents ``r`` as the "gradient" of an objective
whose value is ``L``, the joint domain is a
:class:`~frankwolfe.ProductDomain`, and the loop's Frank-Wolfe gap
``<r, z - s>`` is exactly the saddle gap
``max_y' L(x, y') - min_x' L(x', y)`` for a bilinear ``L`` (an upper bound on
it in general).  The variant calls the two oracles itself, so each side's
gap is known and the run brackets the saddle value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..active_set import ActiveSet
from ..atoms import Atom
from ..direction import Direction
from ..errors import InfeasibleError, ShapeError
from ..lmo.base import LMO
from ..lmo.product import ProductDomain
from ..monitor import IterationState
from ..objectives.base import Objective, Tracker
from ..objectives.saddle import SaddleObjective
from ..result import Result
from ..step_size import Agnostic, StepSize
from .loop import Variant, run_frank_wolfe

__all__ = ["saddle_point_frank_wolfe", "SaddleStep"]

# Relative distance between the tracked z and the active sets' sum above which z is reset.
_DRIFT_TOL = 1e-12
# Away steps longer than this re-sum at once (they magnify rounding by gamma).
_AMPLIFY = 1e3


class SaddleStep(StepSize):
    """The adaptive saddle rule ``gamma = min(gamma_max, nu * g / (2 C))``.

    ``g = -<r, d>`` is the gap of the chosen direction (the saddle gap for a
    Frank-Wolfe step, the away gap for an away step) and ``C`` the saddle
    curvature constant; this is the step of Gidel et al. (2017), whose
    linear rate for SP-AFW needs ``nu > 0`` (strong convex-concavity
    dominating the coupling).

    Parameters
    ----------
    C : float
        Curvature constant, positive.  For ``L`` with ``mu``-smooth sides
        over domains of diameters ``D_x, D_y`` a valid choice is
        ``L_xx D_x^2 + L_yy D_y^2``; a pure bilinear game has ``C = 0`` in
        theory, so any positive value is a tuning choice there.
    nu : float, default 1.0
        Damping factor in ``(0, 1]``.
    """

    def __init__(self, C: float, nu: float = 1.0) -> None:
        if not (np.isfinite(C) and C > 0):
            raise ValueError(f"SaddleStep: `C` must be positive and finite, got {C!r}")
        if not (np.isfinite(nu) and 0 < nu <= 1):
            raise ValueError(f"SaddleStep: `nu` must be in (0, 1], got {nu!r}")
        self.C = float(C)
        self.nu = float(nu)

    def __call__(self, k, tracker, direction, slope, gamma_max):
        if slope >= 0:
            return 0.0
        return float(min(gamma_max, self.nu * (-slope) / (2.0 * self.C)))

    def __repr__(self) -> str:
        return f"SaddleStep(C={self.C:g}, nu={self.nu:g})"


class _SaddleAdapter(Objective):
    """``L`` seen as an objective of ``z = (x, y)`` whose "gradient" is ``r(z)``.

    Not a gradient field, so the loop's tangent-plane convexity check is off.
    """

    convex = False

    def __init__(self, saddle: SaddleObjective, shape_x: tuple[int, ...],
                 shape_y: tuple[int, ...]) -> None:
        self.saddle = saddle
        self.shape_x = shape_x
        self.shape_y = shape_y
        self.nx = int(np.prod(shape_x))
        self.shape = (self.nx + int(np.prod(shape_y)),)

    def split(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return z[: self.nx].reshape(self.shape_x), z[self.nx:].reshape(self.shape_y)

    def value_and_gradient(self, z: np.ndarray) -> tuple[float, np.ndarray]:
        x, y = self.split(z)
        val, gx, gy = self.saddle.value_and_gradients(x, y)
        gx = np.asarray(gx, dtype=float)
        gy = np.asarray(gy, dtype=float)
        if gx.shape != self.shape_x or gy.shape != self.shape_y:
            raise ShapeError(
                f"{type(self.saddle).__name__}: gradients have shapes {gx.shape} and {gy.shape}, "
                f"expected {self.shape_x} and {self.shape_y}"
            )
        r = np.empty(self.shape)
        r[: self.nx] = gx.reshape(-1)
        np.negative(gy.reshape(-1), out=r[self.nx:])
        return float(val), r

    def value(self, z: np.ndarray) -> float:
        x, y = self.split(z)
        return float(self.saddle.value(x, y))

    def gradient(self, z: np.ndarray) -> np.ndarray:
        return self.value_and_gradient(z)[1]


def _pair(sx: Atom, sy: Atom, nx: int, n: int) -> Atom:
    """The vertex ``(sx, sy)`` of ``X x Y`` as one atom of the joint space, O(nnz)."""
    key = ("pair", sx.key, sy.key)
    if sx.is_sparse and sy.is_sparse:
        return Atom.sparse(np.concatenate([sx.indices, sy.indices + nx]),
                           np.concatenate([sx.values, sy.values]), n, key=key)
    return Atom(np.concatenate([sx.to_dense().reshape(-1), sy.to_dense().reshape(-1)]), key=key)


class _SaddleVariant(Variant):
    """Per-side oracle calls and the value bracket; subclasses choose the direction."""

    name = "saddle_point_frank_wolfe"

    def __init__(self, domain_x: LMO, domain_y: LMO, adapter: _SaddleAdapter) -> None:
        self.domain_x = domain_x
        self.domain_y = domain_y
        self.adapter = adapter
        self.nx = adapter.nx
        self.n = adapter.shape[0]

    def start(self, tracker: Tracker, x0_atom: Atom | None, lmo: LMO) -> None:
        super().start(tracker, x0_atom, lmo)
        self.lower = -np.inf  # max_k L_k - gap_x,k <= min_x L(x, y_k) <= saddle value
        self.upper = np.inf   # min_k L_k + gap_y,k >= max_y L(x_k, y) >= saddle value
        self.gap_x = self.gap_y = np.nan

    def frank_wolfe_vertex(self, k: int, tracker: Tracker, gradient: np.ndarray,
                           g_dot_x: float) -> tuple[Atom, float, bool]:
        nx = self.nx
        rx = gradient[:nx]
        ry = gradient[nx:]
        sx = self.domain_x(rx.reshape(self.adapter.shape_x))
        sy = self.domain_y(ry.reshape(self.adapter.shape_y))
        self.n_oracle_calls += 1
        z = tracker.x
        self.gap_x = float(rx @ z[:nx]) - sx.dot(rx.reshape(sx.shape))
        self.gap_y = float(ry @ z[nx:]) - sy.dot(ry.reshape(sy.shape))
        f = tracker.value()
        if np.isfinite(self.gap_x) and np.isfinite(self.gap_y):
            self.lower = max(self.lower, f - self.gap_x)
            self.upper = min(self.upper, f + self.gap_y)
        self.sx, self.sy = sx, sy
        return _pair(sx, sy, nx, self.n), self.gap_x + self.gap_y, True

    def info(self) -> dict[str, Any]:
        return {"gap_x": self.gap_x, "gap_y": self.gap_y}

    def outputs(self) -> tuple[Any, dict[str, Any]]:
        return None, self._bracket()

    def _bracket(self) -> dict[str, Any]:
        return {"gap_x": self.gap_x, "gap_y": self.gap_y,
                "value_lower": self.lower, "value_upper": self.upper}


class _SaddleFW(_SaddleVariant):
    def direction(self, k: int, tracker: Tracker, gradient: np.ndarray, v: Atom,
                  gap: float, g_dot_x: float) -> tuple[Direction, float, Any]:
        return Direction.frank_wolfe(v), 1.0, None


class _SaddleAway(_SaddleVariant):
    """SP-AFW with one active set per player.

    The away vertex of ``X x Y`` over the product of the two active sets is
    the pair of the players' away vertices (a linear function separates),
    and the away step ``z + gamma (z - (a_x, a_y))`` may go as far as the
    first side's drop step, ``min(w_ax / (1 - w_ax), w_ay / (1 - w_ay))``.
    Keeping the sides apart, rather than one active set of pairs, leaves
    every combination of active vertices available to the away step and
    keeps the sets as small as the players' supports.
    """

    name = "saddle_point_away_step_frank_wolfe"

    def __init__(self, domain_x: LMO, domain_y: LMO, adapter: _SaddleAdapter,
                 starts: tuple[Any, Any], resum_every: int, sparsify_tol: float) -> None:
        super().__init__(domain_x, domain_y, adapter)
        if int(resum_every) != resum_every or resum_every < 1:
            raise ValueError(f"`resum_every` must be a positive integer, got {resum_every!r}")
        if not (np.isfinite(sparsify_tol) and sparsify_tol >= 0):
            raise ValueError(f"`sparsify_tol` must be finite and >= 0, got {sparsify_tol!r}")
        self.starts = starts
        self.resum_every = int(resum_every)
        self.sparsify_tol = float(sparsify_tol)
        self.counts = {"n_fw_steps": 0, "n_away_steps": 0, "n_drop_steps": 0, "n_resyncs": 0}

    def start(self, tracker: Tracker, x0_atom: Atom | None, lmo: LMO) -> None:
        super().start(tracker, x0_atom, lmo)
        self.tracker = tracker
        self.n_steps = 0
        for key in self.counts:
            self.counts[key] = 0
        parts = self.adapter.split(tracker.x)
        self.active = tuple(
            self._active_set(start, part, dom, name)
            for start, part, dom, name in zip(self.starts, parts, (self.domain_x, self.domain_y),
                                              ("x0", "y0"))
        )

    def _active_set(self, start: Any, part: np.ndarray, domain: LMO, name: str) -> ActiveSet:
        if isinstance(start, ActiveSet):
            S = start.copy(keep_x=False)
            if S.shape != part.shape:
                raise ShapeError(f"{name}: the warm-start ActiveSet has shape {S.shape}, "
                                 f"expected {part.shape}")
            return S
        if isinstance(start, Atom):
            return ActiveSet.from_vertex(start, keep_x=False)
        # a vertex of a simplex or norm ball is the oracle's answer for -x
        v = domain(-part)
        self.n_oracle_calls += 1
        if np.linalg.norm(v.to_dense() - part) <= 1e-12 * max(1.0, float(np.linalg.norm(part))):
            return ActiveSet.from_vertex(v, keep_x=False)
        raise ValueError(
            f"{name}: the away-step variant needs each start as a convex combination of "
            "vertices; the given array is not recognised as a vertex of its domain.  Pass None, "
            "an Atom (a vertex) or an ActiveSet (vertices with weights)"
        )

    def direction(self, k: int, tracker: Tracker, gradient: np.ndarray, v: Atom,
                  gap: float, g_dot_x: float) -> tuple[Direction, float, Any]:
        Sx, Sy = self.active
        if len(Sx) == 1 and len(Sy) == 1:  # z is a vertex: no away direction
            return Direction.frank_wolfe(v), 1.0, ("fw",)
        nx = self.nx
        z = tracker.x
        sides = []
        away_gap = 0.0
        for S, r, part in ((Sx, gradient[:nx], z[:nx]), (Sy, gradient[nx:], z[nx:])):
            r = r.reshape(S.shape)
            i, a, score = S.away_atom(r)
            gmax = S.away_gamma_max(i)  # inf for a lone atom, whose away direction is ~0
            sides.append((a, gmax))
            if len(S) > 1:
                away_gap += score - float(np.vdot(r, part.reshape(S.shape)))
        gamma_max = min(sides[0][1], sides[1][1])
        if gap >= away_gap or not np.isfinite(gamma_max):
            return Direction.frank_wolfe(v), 1.0, ("fw",)
        (ax, gx), (ay, gy) = sides
        return Direction.away(_pair(ax, ay, nx, self.n)), gamma_max, ("away", ax, gx, ay, gy)

    def after_step(self, direction: Direction, gamma: float, info: Any) -> None:
        Sx, Sy = self.active
        if info[0] == "fw":
            Sx.frank_wolfe_step(self.sx, gamma)
            Sy.frank_wolfe_step(self.sy, gamma)
            self.counts["n_fw_steps"] += 1
        else:
            _, ax, gx, ay, gy = info
            for S, a, gmax in ((Sx, ax, gx), (Sy, ay, gy)):
                if len(S) > 1 and S.away_step(a.key, gamma, drop=gamma >= gmax):
                    self.counts["n_drop_steps"] += 1
            self.counts["n_away_steps"] += 1
        self.n_steps += 1
        if self.n_steps % self.resum_every == 0 or (info[0] == "away" and gamma > _AMPLIFY):
            self.maintain()

    def maintain(self) -> None:
        """Renormalize, drop tiny weights, and re-sync the tracker if ``z`` drifted."""
        parts = []
        for S in self.active:
            S.sparsify(self.sparsify_tol)
            parts.append(S.resum().reshape(-1))
        zs = np.concatenate(parts)
        z = self.tracker.x
        if float(np.linalg.norm(z - zs)) > _DRIFT_TOL * max(1.0, float(np.linalg.norm(zs))):
            self.tracker.set_point(zs)
            self.counts["n_resyncs"] += 1

    def info(self) -> dict[str, Any]:
        out = super().info()
        out["active_set_size"] = sum(len(S) for S in self.active) if hasattr(self, "active") else 0
        return out

    def outputs(self) -> tuple[Any, dict[str, Any]]:
        extra = {**self._bracket(), **self.counts}
        if not hasattr(self, "active"):
            return None, extra
        final = []
        for S in self.active:
            F = S.copy(keep_x=True)
            F.resum()
            final.append(F)
        return tuple(final), extra


def _side(obj_shape: tuple[int, ...] | None, domain: LMO, start: Any, name: str,
          dname: str) -> tuple[tuple[int, ...], np.ndarray | None]:
    """Shape of one player's point and its dense start (None: a vertex of the domain)."""
    if not isinstance(domain, LMO):
        raise TypeError(f"`{dname}` must be an LMO, got {type(domain).__name__}")
    dense = None
    if isinstance(start, ActiveSet):
        if len(start) == 0:
            raise ValueError(f"`{name}`: the warm-start ActiveSet is empty")
        dense = np.array(start.copy(keep_x=False).resum(), dtype=float)
    elif isinstance(start, Atom):
        dense = np.array(start.to_dense(), dtype=float)
    elif start is not None:
        dense = np.array(start, dtype=float)
    shape = obj_shape
    for who, s in ((dname, domain.shape), (f"`{name}`", None if dense is None else dense.shape)):
        if s is None:
            continue
        if shape is None:
            shape = tuple(s)
        elif int(np.prod(s)) != int(np.prod(shape)) or (who.startswith("`") and tuple(s) != shape):
            raise ShapeError(f"{who} has shape {tuple(s)} but the objective expects {shape}")
    if shape is None:
        raise ShapeError(
            f"cannot tell the shape of the `{name[0]}` player: neither the objective, `{dname}` "
            f"nor `{name}` gives it; pass `{name}` or give the LMO a `dim`"
        )
    if dense is None:
        dense = np.array(domain.initial_point(shape).to_dense(), dtype=float).reshape(shape)
    return shape, dense


def saddle_point_frank_wolfe(
    objective: SaddleObjective,
    domain_x: LMO,
    domain_y: LMO,
    x0: np.ndarray | Atom | ActiveSet | None = None,
    y0: np.ndarray | Atom | ActiveSet | None = None,
    *,
    away: bool = False,
    step_size: str | StepSize | None = None,
    C: float | None = None,
    nu: float = 1.0,
    tol: float = 1e-6,
    max_iter: int = 1000,
    time_limit: float | None = None,
    callback: Callable[[IterationState], Any] | None = None,
    verbose: bool | int = False,
    history_every: int = 1,
    progress: bool = False,
    resum_every: int = 100,
    sparsify_tol: float = 1e-15,
) -> Result:
    """Solve ``min_{x in X} max_{y in Y} L(x, y)`` with saddle-point Frank-Wolfe.

    Each iteration evaluates ``r = (grad_x L, -grad_y L)`` at ``z = (x, y)``,
    calls each player's oracle once, ``s = (LMO_X(grad_x L), LMO_Y(-grad_y L))``,
    certifies the saddle gap ``g = <r, z - s>`` and moves to
    ``z + gamma (s - z)`` (SP-FW).  With ``away=True`` (SP-AFW) each player
    also keeps an active set and the step may instead move away from the
    pair of away vertices, which removes vertices outside the equilibrium's
    support (Gidel, Jebara and Lacoste-Julien, AISTATS 2017).

    Parameters
    ----------
    objective : SaddleObjective
        ``L``, convex in ``x`` and concave in ``y``.
    domain_x, domain_y : LMO
        Oracles of the minimizing player's domain ``X`` and the maximizing
        player's domain ``Y`` (polytopes for SP-AFW).
    x0, y0 : ndarray, Atom or ActiveSet, optional
        Feasible starts; by default a vertex of each domain.  SP-AFW needs a
        vertex (Atom, or an array the oracle returns for ``-x0``) or an
        ActiveSet.
    away : bool, default False
        Use away steps (SP-AFW).
    step_size : {"agnostic", "adaptive"} or StepSize, optional
        ``"agnostic"``: ``gamma = 2/(k+2)``.  ``"adaptive"``:
        ``gamma = min(gamma_max, nu * g / (2 C))``, :class:`SaddleStep`.
        Default: ``"adaptive"`` when ``C`` (or ``objective.curvature``) is
        known, else ``"agnostic"``.  Line-search rules of minimization
        (``"exact"``, ``"short"``, ``"armijo"``) do not apply: ``L`` is not
        minimized along ``d``.
    C : float, optional
        Curvature constant of the adaptive rule (default:
        ``objective.curvature``).
    nu : float, default 1.0
        Damping of the adaptive rule.
    tol : float, default 1e-6
        Stop when the certified saddle gap is at most ``tol``.
    max_iter, time_limit, callback, verbose, history_every, progress
        As in :func:`~frankwolfe.frank_wolfe`.  The callback's ``x`` is the
        joint point ``z = (x.ravel(), y.ravel())`` and its ``gradient`` is ``r``.
    resum_every, sparsify_tol
        Drift control of the SP-AFW active sets, as in
        :func:`~frankwolfe.away_step_frank_wolfe`.

    Returns
    -------
    Result
        ``x`` is the minimizing player's point, ``extra["y"]`` the
        maximizing player's, ``fun = L(x, y)``, ``gap`` the saddle gap
        ``<r, z - s>`` (equal to ``max_y' L(x, y') - min_x' L(x', y)`` for
        bilinear ``L``, an upper bound on it otherwise).  ``extra`` also
        holds the per-player gaps ``gap_x, gap_y`` and a certified bracket
        ``value_lower <= min max L <= value_upper`` (best over the run);
        ``dual_bound`` is ``value_lower`` and ``best_gap`` equals ``gap``.
        For SP-AFW ``active_set`` is the pair of final active sets and
        ``extra`` counts the steps; the history has ``gap_x`` and ``gap_y``
        columns.

    Notes
    -----
    For a bilinear ``L`` (matrix games) neither step rule has a linear
    rate: SP-FW with ``2/(k+2)`` behaves like fictitious play and the gap
    falls slowly (about 1e-2 after 1e4 iterations on random 200x300 games).
    The linear rate of SP-AFW holds for strongly convex-concave ``L`` whose
    strong convexity dominates the coupling (``nu > 0`` in Gidel et al.).

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import BilinearObjective, ProbabilitySimplex, saddle_point_frank_wolfe
    >>> M = np.array([[1.0, -1.0], [-1.0, 1.0]])          # matching pennies
    >>> L = BilinearObjective(M, mu_x=1.0, mu_y=1.0)
    >>> res = saddle_point_frank_wolfe(L, ProbabilitySimplex(), ProbabilitySimplex(),
    ...                                away=True, C=4.0, tol=1e-10)
    >>> np.round(res.x, 6), np.round(res.extra["y"], 6), res.gap <= 1e-10
    (array([0.5, 0.5]), array([0.5, 0.5]), True)
    """
    if not isinstance(objective, SaddleObjective):
        raise TypeError(f"objective must be a SaddleObjective, got {type(objective).__name__}")
    shape_x, x_start = _side(objective.shape_x, domain_x, x0, "x0", "domain_x")
    shape_y, y_start = _side(objective.shape_y, domain_y, y0, "y0", "domain_y")
    adapter = _SaddleAdapter(objective, shape_x, shape_y)
    nx = adapter.nx
    joint = ProductDomain([domain_x, domain_y],
                          indices=[range(nx), range(nx, adapter.shape[0])])
    z0 = np.concatenate([x_start.reshape(-1), y_start.reshape(-1)])
    for name, part, dom in (("x0", x_start, domain_x), ("y0", y_start, domain_y)):
        try:
            viol = dom.violation(part)
        except NotImplementedError:
            continue
        if not viol <= 1e-8:
            raise InfeasibleError(f"`{name}` is not in {dom!r}: violation {viol:.3g} > 1e-08")

    rule = _step_rule(step_size, C, nu, objective)
    if away:
        variant: _SaddleVariant = _SaddleAway(domain_x, domain_y, adapter,
                                              (_start_kind(x0, domain_x, shape_x),
                                               _start_kind(y0, domain_y, shape_y)),
                                              resum_every, sparsify_tol)
    else:
        variant = _SaddleFW(domain_x, domain_y, adapter)
    res = run_frank_wolfe(
        adapter, joint, variant, z0, step_size=rule, tol=tol, max_iter=max_iter,
        time_limit=time_limit, callback=callback, verbose=verbose,
        history_every=history_every, progress=progress,
    )
    x, y = adapter.split(np.asarray(res.x))
    res.x = np.array(x)
    res.extra["y"] = np.array(y)
    res.dual_bound = float(res.extra.get("value_lower", -np.inf))
    res.best_gap = res.gap
    return res


def _start_kind(start: Any, domain: LMO, shape: tuple[int, ...]) -> Any:
    """What the away variant builds its active set from (an Atom for the default vertex)."""
    if start is None:
        return domain.initial_point(shape)
    return start


def _step_rule(spec: str | StepSize | None, C: float | None, nu: float,
               objective: SaddleObjective) -> StepSize:
    curvature = C if C is not None else objective.curvature
    if spec is None:
        spec = "adaptive" if curvature is not None else "agnostic"
    if isinstance(spec, StepSize):
        return spec
    if isinstance(spec, str):
        name = spec.lower()
        if name == "agnostic":
            return Agnostic()
        if name == "adaptive":
            if curvature is None:
                raise ValueError(
                    "step_size='adaptive' needs the curvature constant: pass C=... "
                    f"(or set `curvature` on {type(objective).__name__})"
                )
            return SaddleStep(curvature, nu)
        raise ValueError(
            f"unknown saddle step_size {spec!r}; choose 'agnostic' or 'adaptive' or pass a "
            "StepSize (line searches on L do not apply to a saddle problem)"
        )
    raise TypeError(f"step_size must be a string, a StepSize or None, got {type(spec).__name__}")


def _minimize_saddle(objective: SaddleObjective, domain: Sequence[LMO] | ProductDomain,
                     **options: Any) -> Result:
    """``minimize(objective, (domain_x, domain_y), method="saddle", **options)``."""
    if isinstance(domain, ProductDomain):
        if domain.n_blocks != 2 or not domain.disjoint:
            raise ValueError(
                f"method='saddle': `domain` must be a Cartesian ProductDomain of 2 blocks, "
                f"got {domain!r}"
            )
        blocks = domain.blocks
    elif isinstance(domain, (tuple, list)) and len(domain) == 2:
        blocks = tuple(domain)
    else:
        raise TypeError(
            "method='saddle': `domain` must be a pair (domain_x, domain_y) of LMOs or a "
            f"2-block ProductDomain, got {type(domain).__name__}"
        )
    return saddle_point_frank_wolfe(objective, blocks[0], blocks[1], **options)
