from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# validated-spec cache (io/cache.py) in a fresh folder, so tests never read a user's cache
os.environ["PRFAAS_PLAN_CACHE"] = tempfile.mkdtemp(prefix="prfaas-plan-cache-")

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
FUZZ = Path(__file__).resolve().parent / "fuzz"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/fuzz is in the ``fuzz`` tier (pyproject.toml's markers)."""
    for item in items:
        if FUZZ in item.path.parents:
            item.add_marker(pytest.mark.fuzz)


@pytest.fixture
def shared_data() -> Path:
    """The copies of ../shared/data the tests use (same layout: hf-configs/, traces/)."""
    return FIXTURES
