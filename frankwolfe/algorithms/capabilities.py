"""Capability flags that strategy classes declare (``BlockStep.matches_compiled_pairwise``,
``BlockOrder.draws_by_sum_tree``): a flag says that some methods are exactly those of
the class that declared it, so the engine may run a compiled equivalent instead of
calling them.  A subclass inherits the flag only while it inherits those methods."""

from __future__ import annotations

__all__ = ["keep_if_inherited"]


def keep_if_inherited(cls: type, flag: str, methods: tuple[str, ...]) -> None:
    """Turn ``cls``'s inherited ``flag`` off when one of ``methods`` resolves on ``cls``
    to another function than on the nearest base that declared the flag ``True`` (an
    override in the class itself, or in a mixin before that base); a flag the class
    declares itself is left as it is."""
    if flag in cls.__dict__ or not getattr(cls, flag, False):
        return
    owner = next(base for base in cls.__mro__[1:]
                 if flag in base.__dict__ and base.__dict__[flag])
    if any(getattr(cls, m, None) is not getattr(owner, m, None) for m in methods):
        setattr(cls, flag, False)
