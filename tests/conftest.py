"""Test configuration: oracle answers are always checked in tests."""

import os
import sys
from pathlib import Path

# Each pytest-xdist worker keeps its own numba cache (before frankwolfe imports numba):
# two workers that start cold compile the same kernels at the same moment, and once a
# worker's chain kernels for attribute ids returned their values as indices for the
# rest of its run (43 failures, none on a rerun over the same cache files); separate
# folders take that interplay out of the suite.  Kept between runs, as the shared one.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _WORKER:
    _base = os.environ.get("NUMBA_CACHE_DIR") or str(
        Path(__file__).resolve().parents[1] / ".numba-cache")
    os.environ["NUMBA_CACHE_DIR"] = str(Path(_base) / _WORKER)
    if "numba.core.config" in sys.modules:  # pragma: no cover - numba imported already
        sys.modules["numba.core.config"].reload_config()

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

import frankwolfe  # noqa: E402

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
