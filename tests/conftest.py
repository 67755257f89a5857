"""Test configuration: oracle answers are always checked in tests."""

import os
from pathlib import Path

import pytest
from hypothesis import settings

import frankwolfe

# CI runs must be repeatable: property tests draw the same examples on every
# machine (explicit @example cases pin the edge cases found so far).
# HYPOTHESIS_PROFILE=explore searches afresh.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", max_examples=500)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

frankwolfe.set_debug(True)

SHARED_DATA = Path(os.environ.get("FRANKWOLFE_DATA",
                                  Path(__file__).resolve().parents[2] / "shared" / "data"))
# The development data folder next to a clone is the tests' choice, not the library's:
# get_data_home reads only data_home, $FRANKWOLFE_DATA and ~/frankwolfe_data, so the
# loaders called without data_home find ../shared/data through the variable (set for
# this process and the examples it starts).  Without the folder nothing is set, and
# the tests that need data skip.
if "FRANKWOLFE_DATA" not in os.environ and SHARED_DATA.is_dir():
    os.environ["FRANKWOLFE_DATA"] = str(SHARED_DATA)


@pytest.fixture
def shared_data() -> Path:
    """The shared data folder; tests that need it skip when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA
