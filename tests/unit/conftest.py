"""Shared fixtures for the unit tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.corpus import SHARED_CORPUS

#: The shared corpus sits beside the repository checkout: ``../shared/corpus``.
CORPUS_DIR = SHARED_CORPUS


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """``../shared/corpus`` (real agent-written docs and real messages); the test
    is skipped, saying why, when the checkout has no corpus beside it."""
    if not CORPUS_DIR.is_dir():
        pytest.skip(f"no corpus beside the checkout ({CORPUS_DIR} is absent)")
    return CORPUS_DIR
