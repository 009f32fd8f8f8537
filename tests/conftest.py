from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# validated-spec cache (io/cache.py) in a fresh folder, so tests never read a user's cache
os.environ["PRFAAS_PLAN_CACHE"] = tempfile.mkdtemp(prefix="prfaas-plan-cache-")

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def shared_data() -> Path:
    """The copies of ../shared/data the tests use (same layout: hf-configs/, traces/)."""
    return FIXTURES
