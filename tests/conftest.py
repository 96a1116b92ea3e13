"""Shared test helpers: the fixtures folder beside the clone, and small roofs."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO.parent / "shared" / "fixtures"


@pytest.fixture
def fixtures_dir() -> Path:
    if not FIXTURES.is_dir():
        pytest.skip(f"recordings folder {FIXTURES} is absent (CI lays ../shared beside the clone)")
    return FIXTURES
