"""The step rule of the block steps, from the solver's ``step_size``."""

from __future__ import annotations

from typing import cast

import numpy as np

from ...objectives.base import Objective, Tracker
from ...step_size import Adaptive, Agnostic, ExactStep, ShortStep, StepSize, make_step_size
from ..block_steps import BlockStep

__all__ = ["block_rule"]


def block_rule(spec: str | StepSize | None, objective: Objective, step: BlockStep) -> StepSize:
    """The step rule of the block steps (a :mod:`frankwolfe.step_size` object)."""
    if spec is None:
        if objective.has_exact_step_block:
            rule: StepSize = ExactStep()
        else:
            rule = Adaptive() if step.uses_active_set else Agnostic()
    elif isinstance(spec, (str, StepSize)):
        # a word or a rule reads no tracker (only spec=None does, handled above)
        rule = make_step_size(spec, cast(Tracker, None))
    else:
        raise TypeError(f"step_size must be a string, a StepSize or None; got "
                        f"{type(spec).__name__}")
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
            f"step_type={step.name!r} needs a line search ('exact', 'short' or 'adaptive'); "
            "the open-loop step 2n/(k+2n) only suits step_type='fw'"
        )
    rule.reset()
    return rule
