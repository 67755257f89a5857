"""Step-size rules, and the one word table that names them.

Each rule is a small object with one method, ``__call__``, returning
``gamma`` in ``[0, gamma_max]`` for a step ``x + gamma d``.  :func:`make_step_size`
turns a method's ``step_size`` argument into a rule for its context: the
single-domain loop (``"minimize"``), the block steps of block-coordinate
Frank-Wolfe (``"block"``) or saddle-point Frank-Wolfe (``"saddle"``).  Each word
of :data:`STEP_RULES` names one rule in every context that accepts it:

=========================  =========================================  ===============
word                       rule                                       contexts
=========================  =========================================  ===============
``"agnostic"``             :class:`Agnostic` (``2 / (k + 2)``)        all
``"fictitious"``           ``Agnostic(1)`` (``1 / (k + 1)``)          all
``"short"``                :class:`ShortStep`                         minimize, block
``"exact"``                :class:`ExactStep`                         minimize, block
``"adaptive"``             :class:`Adaptive` (Pedregosa et al. 2020)  minimize, block
``"armijo"``               :class:`Armijo`                            minimize, block
``"curvature"``            ``SaddleStep(C)``                          saddle
``"local"``                ``SaddleStep(None)``                       saddle
``"saddle_backtracking"``  :class:`SaddleBacktracking`                saddle
=========================  =========================================  ===============

The default (``step_size=None``) depends on the context: ``"exact"`` when the
objective has a closed-form line search, else ``"adaptive"`` (minimize); see
:func:`make_step_size` for the others.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol

import numpy as np
from numba import njit

from .direction import Direction
from .errors import NonConvexError
from .objectives.base import Objective, Tracker
from .objectives.saddle import SaddleObjective

if TYPE_CHECKING:  # pragma: no cover
    from .lmo.base import LMO

__all__ = [
    "StepSize",
    "Agnostic",
    "ShortStep",
    "ExactStep",
    "Adaptive",
    "Armijo",
    "SaddleStep",
    "SaddleBacktracking",
    "STEP_RULES",
    "make_step_size",
]

_EPS = np.finfo(float).eps


def _slack(f: float) -> float:
    """Room for rounding when comparing objective values near ``f``."""
    return 16.0 * _EPS * max(1.0, abs(f))


class StepSize(ABC):
    """A step-size rule."""

    #: whether the rule reads ``f`` or ``grad f`` at trial points
    uses_trials: bool = False

    @abstractmethod
    def __call__(
        self, k: int, tracker: Tracker, direction: Direction, slope: float, gamma_max: float
    ) -> float:
        """Step size for iteration ``k``.

        Parameters
        ----------
        k : int
            Iteration counter (0-based).
        tracker : Tracker
            The current iterate, with cached ``f`` and ``grad f``.
        direction : Direction
            The search direction ``d``.
        slope : float
            ``<grad f(x), d>`` (negative for a descent direction).
        gamma_max : float
            Largest feasible step.
        """

    def reset(self) -> None:  # noqa: B027 - an optional hook: most rules keep no state
        """Forget state carried between runs (estimates of L)."""

    def compiled(self) -> tuple[Any, np.ndarray] | None:
        """The rule as a numba kernel for compiled drivers, or ``None``.

        ``(kernel, params)`` with ``kernel(params, t, slope, curv, gamma_max) ->
        gamma`` for a step along ``d`` at iteration ``t`` (a float: block-coordinate
        FW counts passes, ``block steps / n``), where ``slope = <grad f(x), d>`` and
        ``curv = d^T H d`` along a line of a quadratic.  The kernel is the same rule
        as :meth:`__call__`.
        """
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


@njit(cache=True, nogil=True)
def _agnostic_kernel(params, t, slope, curv, gamma_max):  # pragma: no cover - compiled
    ell = params[0]
    return min(gamma_max, ell / (t + ell))


@njit(cache=True, nogil=True)
def _exact_kernel(params, t, slope, curv, gamma_max):  # pragma: no cover - compiled
    if not slope < 0.0:
        return 0.0
    if curv <= 0.0:  # flat (or, on a nonconvex quadratic, concave) along d: go all the way
        return gamma_max
    return min(gamma_max, -slope / curv)


class Agnostic(StepSize):
    """The open-loop rule ``gamma = ell / (k + ell)`` (``ell = 2``: 2/(k+2)).

    Needs no information about the objective; gives the O(1/k) rate.
    """

    def __init__(self, ell: float = 2.0) -> None:
        if ell <= 0:
            raise ValueError(f"Agnostic: `ell` must be positive, got {ell!r}")
        self.ell = float(ell)

    def __call__(self, k, tracker, direction, slope, gamma_max):
        return min(gamma_max, self.ell / (k + self.ell))

    def compiled(self):
        return _agnostic_kernel, np.array([self.ell])

    def __repr__(self) -> str:
        return f"Agnostic(ell={self.ell:g})"


class ShortStep(StepSize):
    """The short step ``gamma = -<g, d> / (L ||d||^2)``, clipped to ``[0, gamma_max]``.

    Parameters
    ----------
    smoothness : float, optional
        Lipschitz constant L of the gradient; taken from
        ``objective.smoothness`` when omitted.
    """

    def __init__(self, smoothness: float | None = None) -> None:
        if smoothness is not None and not (np.isfinite(smoothness) and smoothness > 0):
            raise ValueError(f"ShortStep: `smoothness` must be positive, got {smoothness!r}")
        self.smoothness = smoothness

    def __call__(self, k, tracker, direction, slope, gamma_max):
        L = self.smoothness if self.smoothness is not None else tracker.objective.smoothness
        if L is None:
            raise ValueError(
                "step_size='short' needs a smoothness constant: give ShortStep(smoothness=L) "
                "or set `smoothness` on the objective"
            )
        if L <= 0 or not np.isfinite(L):
            raise NonConvexError(f"short step: smoothness must be positive and finite, got {L!r}")
        if slope >= 0:
            return 0.0
        dd = tracker.direction_sq_norm(direction)
        if dd <= 0:
            return 0.0
        return float(min(gamma_max, -slope / (L * dd)))

    def __repr__(self) -> str:
        return f"ShortStep(smoothness={self.smoothness!r})"


class ExactStep(StepSize):
    """Exact line search through the objective's closed form, clipped to ``[0, gamma_max]``."""

    def __call__(self, k, tracker, direction, slope, gamma_max):
        if not tracker.has_exact_step:
            raise ValueError(
                f"step_size='exact' needs an objective with exact_step(); "
                f"{type(tracker.objective).__name__} has none (use 'adaptive' or 'short')"
            )
        if slope >= 0:
            return 0.0
        gamma = tracker.exact_step(direction)
        if gamma != gamma:  # NaN (a plain comparison: this runs once per block step)
            raise FloatingPointError("exact line search returned NaN")
        if gamma < 0:
            # A descent direction of a convex function has a non-negative
            # minimizer along it; a negative one means negative curvature.
            if tracker.objective.convex:
                raise NonConvexError(
                    f"exact line search gave gamma={gamma:.3g} < 0 along a descent direction: "
                    "negative curvature on an objective declared convex"
                )
            return 0.0
        return float(min(gamma_max, gamma))

    def compiled(self):
        return _exact_kernel, np.zeros(1)


class Adaptive(StepSize):
    """Backtracking estimate of the local smoothness constant.

    The rule of Pedregosa, Negiar, Askari and Jaggi (AISTATS 2020): try the
    short step with the estimate ``M = eta * L_prev`` and increase ``M`` (by at
    most a factor ``tau``, to the curvature measured by the failed trial when
    that is smaller) until the quadratic upper bound holds.

    Numerical robustness: when the predicted decrease is within a thousand
    ulps of ``f``, comparing values of ``f`` is meaningless, so the same
    quadratic bound is tested through the directional derivative at the
    trial point instead; rounding near convergence can then neither inflate
    ``M`` without bound nor let overlong steps through.  After
    ``max_backtracks`` failures the last trial step is taken and ``M`` is not
    stored.

    Parameters
    ----------
    L0 : float, optional
        Initial estimate; by default estimated from a gradient difference.
    eta, tau : float
        Decrease and increase factors (``eta <= 1 < tau``).
    max_backtracks : int
        Bound on the backtracking loop.
    """

    uses_trials = True

    def __init__(
        self, L0: float | None = None, eta: float = 0.9, tau: float = 2.0, max_backtracks: int = 60
    ) -> None:
        if not (0 < eta <= 1 and tau > 1):
            raise ValueError(f"Adaptive: need 0 < eta <= 1 < tau, got eta={eta}, tau={tau}")
        if L0 is not None and not (np.isfinite(L0) and L0 > 0):
            raise ValueError(f"Adaptive: `L0` must be positive, got {L0!r}")
        self.L0 = L0
        self.eta = float(eta)
        self.tau = float(tau)
        self.max_backtracks = int(max_backtracks)
        self.L: float | None = L0

    def reset(self) -> None:
        self.L = self.L0

    def _initial_estimate(self, tracker: Tracker, direction: Direction, dd: float) -> float:
        eps = 1e-3
        g0 = tracker.gradient()
        g1 = tracker.trial_gradient(direction, eps)
        est = float(np.linalg.norm(g1 - g0) / (eps * np.sqrt(dd)))
        if not np.isfinite(est) or est <= 0:
            est = 1.0
        return est

    def __call__(self, k, tracker, direction, slope, gamma_max):
        if slope >= 0:
            return 0.0
        dd = tracker.direction_sq_norm(direction)
        if dd <= 0:
            return 0.0
        if self.L is None:
            self.L = self._initial_estimate(tracker, direction, dd)
        f0 = tracker.value()
        noise = 4.0 * _EPS * max(1.0, abs(f0))
        M = self.eta * self.L
        gamma = 0.0
        for _ in range(self.max_backtracks):
            gamma = min(gamma_max, -slope / (M * dd))
            if -gamma * slope > 1e3 * noise:
                ft = tracker.trial_value(direction, gamma)
                accept = ft <= f0 + gamma * slope + 0.5 * gamma * gamma * M * dd + noise
            else:
                # The predicted decrease is at the rounding level of f, where
                # comparing f values says nothing: test the same quadratic
                # bound through the directional derivative instead,
                # <grad f(x + gamma d), d> <= slope + gamma M ||d||^2.
                gt = direction.dot(tracker.trial_gradient(direction, gamma), x=tracker.x)
                ft = None
                accept = gt <= slope + gamma * M * dd + 1e-12 * abs(slope)
            if accept:
                self.L = M
                return float(gamma)
            if ft is None:
                M *= self.tau
                continue
            # The failed trial measures the curvature along d; jumping to it
            # (within the usual factor tau) avoids systematically halved steps
            # on quadratics, where it is exact.
            implied = 2.0 * (ft - f0 - gamma * slope) / (gamma * gamma * dd)
            M = min(self.tau * M, max(implied, 1.01 * M)) if np.isfinite(implied) else self.tau * M
        return float(gamma)

    def __repr__(self) -> str:
        return f"Adaptive(L={self.L!r}, eta={self.eta:g}, tau={self.tau:g})"


class Armijo(StepSize):
    """Backtracking on ``f``: shrink ``gamma`` from ``gamma_max`` by ``beta``
    until ``f(x + gamma d) <= f(x) + c gamma <g, d>``.

    Parameters
    ----------
    c : float
        Sufficient-decrease constant in ``(0, 1)``.
    beta : float
        Shrink factor in ``(0, 1)``.
    max_backtracks : int
        Bound on the loop; a step of 0 is returned when it runs out.
    """

    uses_trials = True

    def __init__(self, c: float = 1e-4, beta: float = 0.5, max_backtracks: int = 60) -> None:
        if not (0 < c < 1 and 0 < beta < 1):
            raise ValueError(f"Armijo: need 0 < c < 1 and 0 < beta < 1, got c={c}, beta={beta}")
        self.c = float(c)
        self.beta = float(beta)
        self.max_backtracks = int(max_backtracks)

    def __call__(self, k, tracker, direction, slope, gamma_max):
        if slope >= 0:
            return 0.0
        f0 = tracker.value()
        slack = _slack(f0)
        gamma = gamma_max
        for _ in range(self.max_backtracks):
            if tracker.trial_value(direction, gamma) <= f0 + self.c * gamma * slope + slack:
                return float(gamma)
            gamma *= self.beta
        return 0.0

    def __repr__(self) -> str:
        return f"Armijo(c={self.c:g}, beta={self.beta:g})"


# -- the rules of saddle-point Frank-Wolfe ---------------------------------------

class SaddleStep(StepSize):
    """The curvature saddle rule ``gamma = min(gamma_max, nu * g / (2 C))``.

    ``g = -<r, d>`` is the gap of the chosen direction (the saddle gap for a
    Frank-Wolfe step, the away gap for an away step) and ``C`` the saddle
    curvature constant; this is the step of Gidel et al. (2017), whose
    linear rate for SP-AFW needs ``nu > 0`` (strong convex-concavity
    dominating the coupling).

    With ``C=None`` the rule is local: ``C`` is replaced at each step by the
    curvature of ``L`` along the direction taken,
    ``objective.curvature_along(d_x, d_y)`` (``mu_x ||d_x||^2 + mu_y ||d_y||^2``
    for a :class:`~frankwolfe.BilinearObjective`).  That number bounds the
    curvature term of the step's progress exactly where the global ``C``
    bounds it over the whole domain, and it is never larger, so each step
    makes at least the progress of the global rule and the linear rate is
    kept; the steps are longer (about 2.4x fewer iterations to a gap of 1e-9
    on random 30x40 games with ``mu = 1``, ``benchmarks/saddle.py``).

    Parameters
    ----------
    C : float or None
        Curvature constant, positive, or None for the local rule.  For
        ``L`` with ``L_x``- and ``L_y``-smooth sides over domains of
        diameters ``D_x, D_y`` a valid choice is ``L_x D_x^2 + L_y D_y^2``;
        a pure bilinear game has ``C = 0`` in theory, so any positive value
        is a tuning choice there.
    nu : float, default 1.0
        Damping factor in ``(0, 1]``.
    """

    def __init__(self, C: float | None, nu: float = 1.0) -> None:
        if C is not None and not (np.isfinite(C) and C > 0):
            raise ValueError(f"SaddleStep: `C` must be positive and finite, got {C!r}")
        if not (np.isfinite(nu) and 0 < nu <= 1):
            raise ValueError(f"SaddleStep: `nu` must be in (0, 1], got {nu!r}")
        self.C = None if C is None else float(C)
        self.nu = float(nu)

    def __call__(self, k, tracker, direction, slope, gamma_max):
        if slope >= 0:
            return 0.0
        C = self.C
        if C is None:
            adapter = tracker.objective
            C = adapter.saddle.curvature_along(*adapter.split(direction.dense(tracker.x)))
            if C is None:
                raise TypeError(
                    f"SaddleStep(C=None) needs {type(adapter.saddle).__name__}.curvature_along; "
                    "pass C or use step_size='saddle_backtracking'"
                )
            if not C > 0:  # no curvature along d bounds the step: nu g / (2C) is infinite
                return float(gamma_max)
        return float(min(gamma_max, self.nu * (-slope) / (2.0 * C)))

    def __repr__(self) -> str:
        C = "None" if self.C is None else f"{self.C:g}"
        return f"SaddleStep(C={C}, nu={self.nu:g})"


class SaddleBacktracking(StepSize):
    """The curvature saddle rule with ``C`` estimated by backtracking.

    For a direction ``d = (d_x, d_y)`` and a step ``gamma`` the local
    curvature of ``L`` is

    ``q(gamma) = [L(x + gamma d_x, y) - L(x, y) - gamma <grad_x L, d_x>]
    - [L(x, y + gamma d_y) - L(x, y) - gamma <grad_y L, d_y>]``,

    non-negative for a convex-concave ``L`` and at most ``gamma^2 C / 2``
    for the curvature constant ``C`` of Gidel et al. (2017).  Each step
    starts from the previous estimate times ``shrink``, takes
    ``gamma = min(gamma_max, nu * g / (2 C))`` (as :class:`SaddleStep`) and
    doubles ``C`` until ``q(gamma) <= gamma^2 C / 2`` holds, so the step
    taken satisfies the curvature bound of the SP-AFW analysis of Gidel et
    al. with a constant within a factor 2 of the curvature met along the
    directions taken (and, after the first step, at most twice the global
    constant).  The first estimate is ``2 q(1)`` on the first direction.
    Each trial costs two evaluations of ``L``.  For objectives that know
    their curvature along a direction, ``SaddleStep(C=None)`` needs no trials.

    Parameters
    ----------
    nu : float, default 1.0
        Damping factor in ``(0, 1]``.
    shrink : float, default 0.9
        Factor in ``(0, 1]`` applied to the estimate at the start of each step.
    """

    uses_trials = True

    def __init__(self, nu: float = 1.0, shrink: float = 0.9) -> None:
        if not (np.isfinite(nu) and 0 < nu <= 1):
            raise ValueError(f"SaddleBacktracking: `nu` must be in (0, 1], got {nu!r}")
        if not (np.isfinite(shrink) and 0 < shrink <= 1):
            raise ValueError(f"SaddleBacktracking: `shrink` must be in (0, 1], got {shrink!r}")
        self.nu = float(nu)
        self.shrink = float(shrink)
        self.C: float | None = None

    def reset(self) -> None:
        self.C = None

    def __call__(self, k, tracker, direction, slope, gamma_max):
        if slope >= 0:
            return 0.0
        adapter = tracker.objective
        L = adapter.saddle
        x, y = adapter.split(tracker.x)
        dx, dy = adapter.split(direction.dense(tracker.x))
        f0 = tracker.value()
        rx, ry = adapter.split(tracker.gradient())  # (grad_x L, -grad_y L)
        sx, sy = float(np.vdot(rx, dx)), -float(np.vdot(ry, dy))
        slack = 64.0 * np.finfo(float).eps * (abs(f0) + 1.0)

        def curvature(gamma: float) -> float:
            tracker.n_function_calls += 2
            qx = float(L.value(x + gamma * dx, y)) - f0 - gamma * sx
            qy = float(L.value(x, y + gamma * dy)) - f0 - gamma * sy
            return qx - qy

        if self.C is None:
            self.C = max(2.0 * curvature(1.0), 1e-12 * abs(slope))
        C = max(self.C * self.shrink, np.finfo(float).tiny)
        while True:
            gamma = float(min(gamma_max, self.nu * (-slope) / (2.0 * C)))
            if gamma <= 0.0 or curvature(gamma) <= 0.5 * gamma * gamma * C + slack:
                break
            C *= 2.0
        self.C = C
        return gamma

    def __repr__(self) -> str:
        return f"SaddleBacktracking(nu={self.nu:g}, C={self.C})"


# -- the one word table ------------------------------------------------------------

#: The contexts of :func:`make_step_size`: the single-domain loop, the block steps of
#: block-coordinate Frank-Wolfe, saddle-point Frank-Wolfe.
Context = Literal["minimize", "block", "saddle"]

_ALL: frozenset[str] = frozenset({"minimize", "block", "saddle"})
_DESCENT: frozenset[str] = frozenset({"minimize", "block"})
_SADDLE: frozenset[str] = frozenset({"saddle"})

#: Every word ``step_size`` accepts, with the contexts that accept it (a word names the
#: same rule wherever it is accepted; see the table of the module's docstring).
STEP_RULES: dict[str, frozenset[str]] = {
    "agnostic": _ALL,
    "fictitious": _ALL,
    "short": _DESCENT,
    "exact": _DESCENT,
    "adaptive": _DESCENT,
    "armijo": _DESCENT,
    "curvature": _SADDLE,
    "local": _SADDLE,
    "saddle_backtracking": _SADDLE,
}


class _BlockStepKind(Protocol):
    """What the block context reads of a BCFW block step."""

    name: str
    uses_active_set: bool


class _SaddleSetting(NamedTuple):
    """What the saddle words read: the objective, its curvature constant (``C`` or the
    objective's; ``None`` when unknown or zero), whether it knows its curvature along a
    direction, and the damping ``nu``."""

    objective: SaddleObjective
    curvature: float | None
    local: bool
    nu: float


def _saddle_word(word: str, saddle: _SaddleSetting) -> StepSize:
    name = type(saddle.objective).__name__
    if word == "curvature":
        if saddle.curvature is None:
            raise ValueError(
                f"step_size={word!r} needs the curvature constant: pass C=... "
                f"(or set `curvature` on {name}), or use step_size='saddle_backtracking'"
            )
        return SaddleStep(saddle.curvature, saddle.nu)
    if word == "local":
        if not saddle.local:
            raise ValueError(f"step_size='local' needs {name}.curvature_along; use "
                             "step_size='saddle_backtracking'")
        return SaddleStep(None, saddle.nu)
    return SaddleBacktracking(saddle.nu)


#: The rule of each word that needs nothing of its context.
_PLAIN: dict[str, Callable[[], StepSize]] = {
    "agnostic": Agnostic,
    "fictitious": lambda: Agnostic(1.0),  # 1/(k+1): x_k averages the vertices so far
    "short": ShortStep,
    "exact": ExactStep,
    "adaptive": Adaptive,
    "armijo": Armijo,
}


def _lookup(spec: str | StepSize, context: str, saddle: _SaddleSetting | None = None
            ) -> StepSize:
    """The rule ``spec`` names in ``context`` (a :class:`StepSize` as is)."""
    if isinstance(spec, StepSize):
        return spec
    if not isinstance(spec, str):
        raise TypeError(
            f"step_size must be a string, a StepSize or None, got {type(spec).__name__}")
    word = spec.lower()
    contexts = STEP_RULES.get(word)
    if contexts is None or context not in contexts:
        words = [w for w, c in STEP_RULES.items() if context in c]
        where = ("" if contexts is None
                 else f" ({spec!r} is a rule of {', '.join(sorted(contexts))})")
        label = "saddle " if context == "saddle" else ""
        hint = (" (line searches on L do not apply to a saddle problem)"
                if context == "saddle" else "")
        raise ValueError(f"unknown {label}step_size {spec!r}; choose one of {words} or pass "
                         f"a StepSize{hint}{where}")
    if word in _PLAIN:
        return _PLAIN[word]()
    if saddle is None:  # pragma: no cover - the saddle context always gives its setting
        raise ValueError(f"step_size={spec!r} needs the saddle context")
    return _saddle_word(word, saddle)


def make_step_size(
    spec: str | StepSize | None,
    tracker: Tracker | None = None,
    *,
    context: Context = "minimize",
    objective: Objective | SaddleObjective | None = None,
    step: _BlockStepKind | None = None,
    C: float | None = None,
    nu: float = 1.0,
    domains: tuple[LMO, LMO] | None = None,
) -> StepSize:
    """Turn a method's ``step_size`` argument into a :class:`StepSize`.

    ``spec`` is a word of :data:`STEP_RULES` accepted in ``context``, a
    :class:`StepSize` (returned as is) or ``None`` (the context's default).

    Parameters
    ----------
    spec : str, StepSize or None
        The argument.
    tracker : Tracker, optional
        Context ``"minimize"``: the start point; ``None`` selects ``"exact"`` when
        its objective offers a closed-form line search and ``"adaptive"`` otherwise.
    context : {"minimize", "block", "saddle"}, default "minimize"
        Who asks.
    objective : Objective or SaddleObjective, optional
        Context ``"block"``: the objective (its exact block step and smoothness);
        context ``"saddle"``: ``L`` (its curvature constant and curvature hook).
    step : BlockStep, optional
        Context ``"block"``: the block step (its name and whether it keeps active
        sets).  ``None`` selects ``"exact"`` when the objective has an exact block
        step, else ``"adaptive"`` for active-set steps and ``"agnostic"`` for
        Frank-Wolfe steps; the rule is checked against the objective and the step,
        and reset.
    C, nu, domains
        Context ``"saddle"``: the curvature constant (default:
        ``objective.curvature_constant(*domains)``), the damping of the curvature
        rules and the players' domains.  ``None`` selects ``"curvature"`` when ``C``
        or ``objective.curvature`` is given; else, for a strongly convex-concave
        ``L``, ``"local"`` when the objective implements ``curvature_along``,
        ``"curvature"`` when the constant is known and ``"saddle_backtracking"``
        otherwise; else ``"agnostic"``.
    """
    if context == "block":
        if not isinstance(objective, Objective) or step is None:
            raise TypeError("make_step_size(context='block') needs the objective and the "
                            "block step")
        return _block_rule(spec, objective, step)
    if context == "saddle":
        if not isinstance(objective, SaddleObjective) or domains is None:
            raise TypeError("make_step_size(context='saddle') needs the SaddleObjective and "
                            "the players' domains")
        return _saddle_rule(spec, objective, C, nu, domains)
    if context != "minimize":
        raise ValueError(f"make_step_size: context must be 'minimize', 'block' or 'saddle', "
                         f"got {context!r}")
    if spec is None:
        if tracker is None:
            raise TypeError("make_step_size: the default rule needs the tracker")
        return ExactStep() if tracker.has_exact_step else Adaptive()
    return _lookup(spec, "minimize")


def _block_rule(spec: str | StepSize | None, objective: Objective,
                step: _BlockStepKind) -> StepSize:
    if spec is None:
        if objective.has_exact_step_block:
            rule: StepSize = ExactStep()
        else:
            rule = Adaptive() if step.uses_active_set else Agnostic()
    else:
        rule = _lookup(spec, "block")
    if isinstance(rule, ExactStep) and not objective.has_exact_step_block:
        raise ValueError(
            f"step_size='exact' needs an objective with exact_step_block() or exact_step(); "
            f"{type(objective).__name__} has neither (use 'agnostic', 'short' or 'adaptive')"
        )
    if isinstance(rule, ShortStep):
        L = rule.smoothness if rule.smoothness is not None else objective.smoothness
        if L is None or not (np.isfinite(L) and L > 0):
            raise ValueError(
                "step_size='short' needs a positive smoothness constant: set "
                f"`smoothness` on the objective or pass ShortStep(L); got {L!r}"
            )
    if isinstance(rule, Agnostic) and step.uses_active_set:
        raise ValueError(
            f"block_step={step.name!r} needs a line search ('exact', 'short' or 'adaptive'); "
            "the open-loop step 2n/(k+2n) only suits block_step='fw'"
        )
    rule.reset()
    return rule


def _saddle_rule(spec: str | StepSize | None, objective: SaddleObjective, C: float | None,
                 nu: float, domains: tuple[LMO, LMO]) -> StepSize:
    curvature = C if C is not None else objective.curvature_constant(*domains)
    if curvature is not None and not curvature > 0:
        curvature = None  # a zero constant (a pure bilinear game) sets no step length
    local = type(objective).curvature_along is not SaddleObjective.curvature_along
    if spec is None:
        if C is not None or objective.curvature is not None:
            spec = "curvature"
        elif objective.strongly_convex_concave:
            spec = ("local" if local else "curvature" if curvature is not None
                    else "saddle_backtracking")
        else:
            spec = "agnostic"
    return _lookup(spec, "saddle", _SaddleSetting(objective, curvature, local, nu))
