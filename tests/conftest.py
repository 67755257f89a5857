"""Test configuration: oracle answers are always checked in tests."""

import os
from pathlib import Path

import pytest

import frankwolfe

frankwolfe.set_debug(True)

SHARED_DATA = Path(os.environ.get("FRANKWOLFE_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


@pytest.fixture
def shared_data() -> Path:
    """The shared data folder; tests that need it skip when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA
