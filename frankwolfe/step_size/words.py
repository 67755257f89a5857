"""The one word table: ``step_size`` strings, the rule each names, and each context's
default (:func:`make_step_size`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol

import numpy as np

from .._numbers import close_match, kind_of
from ..objectives.base import Objective, Tracker
from ..objectives.saddle import SaddleObjective
from .base import StepSize
from .open_loop import Agnostic, LogAgnostic, Monotonic, NonConvexAgnostic, OpenLoop
from .saddle import SaddleBacktracking, SaddleStep, curvature_settings
from .searches import Adaptive, Armijo, ExactStep, Secant, ShortStep

if TYPE_CHECKING:  # pragma: no cover
    from ..lmo.base import LMO

__all__ = ["STEP_RULES", "Context", "make_step_size"]

Context = Literal["minimize", "block", "saddle"]
"""The contexts of :func:`make_step_size`: the single-domain loop, the block steps of
block-coordinate Frank-Wolfe, saddle-point Frank-Wolfe."""

_ALL: frozenset[str] = frozenset({"minimize", "block", "saddle"})
_DESCENT: frozenset[str] = frozenset({"minimize", "block"})
_SADDLE: frozenset[str] = frozenset({"saddle"})

STEP_RULES: dict[str, frozenset[str]] = {
    "agnostic": _ALL,
    "fictitious": _ALL,
    "log_agnostic": _ALL,
    "nonconvex": _DESCENT,
    "monotonic": _DESCENT,
    "short": _DESCENT,
    "exact": _DESCENT,
    "adaptive": _DESCENT,
    "armijo": _DESCENT,
    "secant": _DESCENT,
    "curvature": _SADDLE,
    "local": _SADDLE,
    "saddle_backtracking": _SADDLE,
}
"""Every word ``step_size`` accepts, with the contexts that accept it (a word names the
same rule wherever it is accepted; the rule of each word is in the table of
:mod:`frankwolfe.step_size`)."""


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
    "log_agnostic": LogAgnostic,
    "nonconvex": NonConvexAgnostic,
    "monotonic": Monotonic,
    "short": ShortStep,
    "exact": ExactStep,
    "adaptive": Adaptive,
    "armijo": Armijo,
    "secant": Secant,
}


#: The contexts of each rule class: those of the words that name it.  A rule of none of
#: these classes (a user's :class:`StepSize`, an :class:`OpenLoop` of one's own) is
#: accepted in every context.
_RULE_CONTEXTS: dict[type[StepSize], frozenset[str]] = {
    Agnostic: _ALL,
    LogAgnostic: _ALL,
    NonConvexAgnostic: _DESCENT,
    Monotonic: _DESCENT,
    ShortStep: _DESCENT,
    ExactStep: _DESCENT,
    Adaptive: _DESCENT,
    Armijo: _DESCENT,
    Secant: _DESCENT,
    SaddleStep: _SADDLE,
    SaddleBacktracking: _SADDLE,
}


def _rule_contexts(rule: StepSize) -> frozenset[str]:
    """The contexts that accept ``rule`` (its nearest class in :data:`_RULE_CONTEXTS`)."""
    for cls in type(rule).__mro__:
        found = _RULE_CONTEXTS.get(cls)
        if found is not None:
            return found
    return _ALL


def _not_saddle(rule: StepSize) -> str:
    """Why the minimization rule ``rule`` is refused in a saddle problem, in the words
    of its kind (an open-loop schedule is no line search)."""
    if isinstance(rule, Monotonic):
        return "it shrinks its steps until f does not increase; L is not minimized along d"
    if isinstance(rule, OpenLoop):
        return "an open-loop schedule for non-convex minimization, not a line search"
    return "a line search or short step on f; L is not minimized along d"


def _check_rule(rule: StepSize, context: str, saddle_view: bool) -> None:
    """Refuse a rule object that ``context`` does not accept, as its word is refused.

    A saddle rule in a minimization failed deep in the run (an ``AttributeError`` on
    ``objective.saddle``); a line search in a saddle problem ran silently, far from the
    equilibrium.  ``saddle_view``: the shared loop running saddle-point Frank-Wolfe, whose
    rule its own context has checked.
    """
    contexts = _rule_contexts(rule)
    if context in contexts or (saddle_view and "saddle" in contexts):
        return
    words = [w for w, c in STEP_RULES.items() if context in c]
    if context == "saddle":
        raise TypeError(
            f"step_size={rule!r} is a rule of minimization only ({_not_saddle(rule)}); "
            f"choose one of {words}, or pass a SaddleStep, a "
            "SaddleBacktracking or an open-loop rule (Agnostic, LogAgnostic)")
    raise TypeError(
        f"step_size={rule!r} is a rule of saddle_point_frank_wolfe only (it reads the saddle "
        f"objective L(x, y)); choose one of {words} or pass another StepSize")


def _lookup(spec: str | StepSize, context: str, saddle: _SaddleSetting | None = None,
            *, saddle_view: bool = False) -> StepSize:
    """The rule ``spec`` names in ``context`` (a :class:`StepSize` as is, once
    :func:`_check_rule` accepts it there)."""
    if isinstance(spec, StepSize):
        _check_rule(spec, context, saddle_view)
        return spec
    if not isinstance(spec, str):
        raise TypeError(
            f"step_size must be a string, a StepSize or None, got {kind_of(spec)}")
    word = spec.lower()
    contexts = STEP_RULES.get(word)
    if contexts is None or context not in contexts:
        words = [w for w, c in STEP_RULES.items() if context in c]
        why = (f": {_not_saddle(_PLAIN[word]())}"
               if context == "saddle" and word in _PLAIN else "")
        where = ("" if contexts is None
                 else f" ({spec!r} is a rule of {', '.join(sorted(contexts))}{why})")
        label = "saddle " if context == "saddle" else ""
        guess = close_match(spec, words) if contexts is None else ""
        raise ValueError(f"unknown {label}step_size {spec!r}{guess}; choose one of {words} or "
                         f"pass a StepSize{where}")
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
    :class:`StepSize` (returned as is where the context accepts its class: the library's
    rules are accepted where the words naming them are; any other rule everywhere) or
    ``None`` (the context's default).

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

    Returns
    -------
    StepSize
        ``spec`` itself when it is a :class:`StepSize`; else a new rule (the one its
        word names, or the context's default).

    Raises
    ------
    ValueError
        When ``spec`` is a word the context does not accept (the message lists the words
        it does), ``context`` is not one of the three, the rule does not fit the
        block step or the objective (``"exact"`` without an exact step, ``"short"``
        without a smoothness constant, an open-loop rule for away or pairwise block
        steps), ``C`` is not a finite number > 0 or ``nu`` not in ``(0, 1]``.
    TypeError
        When ``spec`` is neither a string, a :class:`StepSize` nor ``None``, a rule
        object of the library that the context does not accept (a :class:`SaddleStep` or
        :class:`SaddleBacktracking` outside ``"saddle"``; there, a rule that only its
        minimization words name, such as :class:`Armijo` or :class:`ExactStep`), or the
        context's required arguments are missing (``objective`` and ``step`` for
        ``"block"``; ``objective`` and ``domains`` for ``"saddle"``; ``tracker`` for the
        default of ``"minimize"``).
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
    # saddle_point_frank_wolfe runs on the shared loop with an objective whose `saddle`
    # is L, passing the rule its own context chose
    saddle_view = tracker is not None and isinstance(getattr(tracker.objective, "saddle", None),
                                                     SaddleObjective)
    return _lookup(spec, "minimize", saddle_view=saddle_view)


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
        if L is None or not (np.isfinite(L) and L >= 0):
            raise ValueError(
                "step_size='short' needs a finite smoothness constant >= 0: set "
                f"`smoothness` on the objective or pass ShortStep(L); got {L!r}"
            )
    if isinstance(rule, OpenLoop) and step.uses_active_set:
        # from the word table, so that a rule added there is named here too
        searches = [w for w, c in STEP_RULES.items()
                    if "block" in c and w in _PLAIN and not isinstance(_PLAIN[w](), OpenLoop)]
        raise ValueError(
            f"block_step={step.name!r} needs a line search (one of {searches}, or a "
            f"StepSize that is not open-loop), got {rule!r}; open-loop steps only suit "
            "block_step='fw'"
        )
    rule.reset()
    return rule


def _saddle_rule(spec: str | StepSize | None, objective: SaddleObjective, C: float | None,
                 nu: float, domains: tuple[LMO, LMO]) -> StepSize:
    C, nu = curvature_settings(C, nu, "make_step_size")
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
