"""``random_state``: the one conversion of the argument that every random choice of the
package and its applications takes."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["as_generator"]


def as_generator(random_state: Any, name: str = "random_state") -> np.random.Generator:
    """The numpy ``Generator`` of ``random_state``.

    Parameters
    ----------
    random_state : None, int, sequence of int, SeedSequence, BitGenerator, Generator or RandomState
        ``None``: fresh entropy; a non-negative integer (or a sequence of them) or a
        ``SeedSequence``: a seeded generator; a ``Generator``: used as it is (its draws
        continue); a ``BitGenerator``: a generator on it; a legacy ``RandomState``
        (scikit-learn's convention): a generator seeded by one draw from it (numpy 2
        would share its bit generator, numpy 1.26 refuses it: one behaviour for both).
    name : str, default "random_state"
        The argument's name in the error.

    Raises
    ------
    TypeError, ValueError
        Anything else, a bool included (numpy takes ``True`` as the seed 1), naming the
        argument and the value (numpy's own message names neither).

    Examples
    --------
    >>> from frankwolfe._random import as_generator
    >>> float(as_generator(0).random()) == float(as_generator(0).random())
    True
    >>> as_generator("seed")
    Traceback (most recent call last):
    ...
    TypeError: random_state must be None, a non-negative integer (or a sequence of them), \
a numpy Generator, SeedSequence, BitGenerator or RandomState, got 'seed'
    """
    if isinstance(random_state, (bool, np.bool_)) or (
            isinstance(random_state, (list, tuple))
            and any(isinstance(v, (bool, np.bool_)) for v in random_state)):
        # numpy took True as the seed 1 (a bool is an int), where the scikit-learn
        # estimators refuse it: a flag passed in the seed's place ran seeded, silently
        raise TypeError(_refusal(random_state, name))
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(2**31 - 1))
    try:
        return np.random.default_rng(random_state)
    except (TypeError, ValueError) as err:
        raise type(err)(_refusal(random_state, name)) from None


def _refusal(random_state: Any, name: str) -> str:
    """The one message of every refusal, naming the argument and the value."""
    return (f"{name} must be None, a non-negative integer (or a sequence of them), a numpy "
            f"Generator, SeedSequence, BitGenerator or RandomState, got {random_state!r}")
