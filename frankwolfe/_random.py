"""``random_state``: the one conversion of the argument that every random choice of the
package and its applications takes."""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np

__all__ = ["as_generator", "check_random_state"]

_OBJECTS = (np.random.Generator, np.random.RandomState, np.random.SeedSequence,
            np.random.BitGenerator)


def check_random_state(random_state: Any, name: str = "random_state") -> None:
    """Refuse what :func:`as_generator` would refuse, without drawing from it.

    The one policy of the package and its applications' estimators (which check their
    parameters with it before a fit): ``None``; a non-negative integer of any size,
    Python's or numpy's; a non-empty list, tuple or 1-d array of them; or a numpy
    ``Generator``, ``SeedSequence``, ``BitGenerator`` or ``RandomState`` (not drawn
    from here: a check never moves a generator).

    Parameters
    ----------
    random_state : object
        The argument to check.
    name : str, default "random_state"
        The argument's name in the error.

    Raises
    ------
    TypeError
        A bool (numpy takes ``True`` as the seed 1) or anything that is not one of the
        forms above (a float, a string, a nested sequence, a sequence holding one).
    ValueError
        A negative integer, or an empty sequence (numpy seeds ``[]`` as 0, silently),
        naming the argument and the value.

    Examples
    --------
    >>> from frankwolfe._random import check_random_state
    >>> check_random_state([1, 2])
    >>> check_random_state([])
    Traceback (most recent call last):
    ...
    ValueError: random_state must be None, a non-negative integer (or a sequence of them), \
a numpy Generator, SeedSequence, BitGenerator or RandomState, got [] (an empty sequence)
    """
    if random_state is None or isinstance(random_state, _OBJECTS):
        return
    if isinstance(random_state, (list, tuple, np.ndarray)):
        if isinstance(random_state, np.ndarray) and random_state.ndim != 1:
            raise TypeError(_refusal(random_state, name, "not a 1-d array"))
        if len(random_state) == 0:
            raise ValueError(_refusal(random_state, name, "an empty sequence"))
        seeds = list(random_state)
    else:
        seeds = [random_state]
    for v in seeds:
        # a bool is an Integral: numpy took True as the seed 1, where the scikit-learn
        # estimators refuse it, so a flag passed in the seed's place ran seeded, silently
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (Integral, np.integer)):
            raise TypeError(_refusal(random_state, name))
        if v < 0:
            raise ValueError(_refusal(random_state, name))


def as_generator(random_state: Any, name: str = "random_state") -> np.random.Generator:
    """The numpy ``Generator`` of ``random_state``.

    Parameters
    ----------
    random_state : None, int, sequence of int, SeedSequence, BitGenerator, Generator or RandomState
        ``None``: fresh entropy; a non-negative integer (or a non-empty list, tuple or
        1-d array of them) or a ``SeedSequence``: a seeded generator; a ``Generator``:
        used as it is (its draws continue); a ``BitGenerator``: a generator on it; a
        legacy ``RandomState`` (scikit-learn's convention): a generator seeded by one
        draw from it (numpy 2 would share its bit generator, numpy 1.26 refuses it:
        one behaviour for both).
    name : str, default "random_state"
        The argument's name in the error.

    Raises
    ------
    TypeError, ValueError
        Anything else (:func:`check_random_state`: a bool, a negative integer, an empty
        or nested sequence included), naming the argument and the value (numpy's own
        message names neither).

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
    check_random_state(random_state, name)
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(2**31 - 1))
    return np.random.default_rng(random_state)


def _refusal(random_state: Any, name: str, why: str = "") -> str:
    """The one message of every refusal, naming the argument and the value."""
    return (f"{name} must be None, a non-negative integer (or a sequence of them), a numpy "
            f"Generator, SeedSequence, BitGenerator or RandomState, got {random_state!r:.200}"
            + (f" ({why})" if why else ""))
