"""numba's compiler flags compare and hash as numba defines it, through frankwolfe's hook
that makes the comparison cheap (frankwolfe._numba_hooks._fast_flag_compare; issue #22).

The reference is numba's own definition, written here from its public ``values()``: two
flags are equal when their dicts of all option values are, and the hash is that of the
sorted option names."""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.core import targetconfig
from numba.core.compiler import Flags

import frankwolfe  # noqa: F401  (installs the hooks)


def _numba_equal(a: Flags, b: Flags) -> bool:
    return a.values() == b.values()


def _numba_hash(a: Flags) -> int:
    return hash(tuple(sorted(a.values())))


def test_the_hook_is_installed():
    assert getattr(targetconfig.TargetConfig, "_fw_fast_compare", False)


def test_flags_compare_and_hash_as_numba_defines_them():
    rng = np.random.default_rng(0)
    # options of several kinds: bools, strings, an option object (fastmath's); each drawn
    # unset, set to its default (equal to unset) or set to another value
    choices = {"nrt": [True, False], "boundscheck": [True, False], "debuginfo": [True, False],
               "fastmath": [False, True, {"nnan", "ninf"}, {"nnan"}],
               "inline": ["never", "always"], "error_model": ["python", "numpy"],
               "no_cpython_wrapper": [True, False], "opt": [0, 3]}
    choices = {k: v for k, v in choices.items() if k in Flags.options}
    assert len(choices) >= 6

    def draw() -> Flags:
        f = Flags()
        for name, values in choices.items():
            k = rng.integers(len(values) + 1)
            if k < len(values):
                setattr(f, name, values[k])
        return f

    pool = [draw() for _ in range(60)]
    pool += [Flags(f) for f in pool[:10]]  # copies
    pairs = equal = 0
    for a in pool:
        assert hash(a) == _numba_hash(a)
        for b in pool:
            pairs += 1
            assert (a == b) is _numba_equal(a, b), (a, b)
            assert (a != b) is (not _numba_equal(a, b))
            equal += a == b
    assert pairs > equal > len(pool)  # both outcomes met, beyond each flag with itself
    # a dict keyed on flags finds an equal flag set, and only an equal one
    table = {f: i for i, f in enumerate(pool)}
    for f in pool:
        hit = table.get(Flags(f))
        assert hit is not None and _numba_equal(pool[hit], f)
    assert Flags() == Flags() and hash(Flags()) == _numba_hash(Flags())
    assert (Flags() == "nrt") is False  # another type: not equal, no error


def test_flags_holding_another_config_class_value_compare_as_numba():
    """``Flags(copy_from=...)`` takes every value of another config class, names Flags
    lacks included; numba's ``values()`` leaves those out, and so does the comparison."""

    class Other(targetconfig.TargetConfig):
        nrt = targetconfig.Option(bool, default=False, doc="")
        not_a_flag = targetconfig.Option(int, default=0, doc="")

    other = Other()
    other.nrt, other.not_a_flag = True, 7
    a, b = Flags(other), Flags()
    b.nrt = True
    assert "not_a_flag" in a._values and "not_a_flag" not in Flags.options
    assert (a == b) is _numba_equal(a, b) is True
    b.nrt = False
    assert (a == b) is _numba_equal(a, b) is False
    assert hash(a) == _numba_hash(a)


def test_overloads_typed_under_two_flag_sets_keep_their_own_results():
    """Typing through numba's overload cache (keyed on the flags) under two flag sets, the
    hook installed: np.sum with fastmath and without both compile and give numpy's sum."""
    x = np.linspace(0.0, 1.0, 101)

    @njit(fastmath=True)
    def fast(v):
        return np.sum(v * v)

    @njit
    def strict(v):
        return np.sum(v * v)

    expected = float(np.sum(x * x))
    assert abs(fast(x) - expected) <= 1e-12 * expected
    assert abs(strict(x) - expected) <= 1e-12 * expected
