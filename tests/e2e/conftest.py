"""Fixtures of the end-to-end tests: they drive the real command line in subprocesses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def bench_data_dir() -> Path:
    """The InformativeBench data; tests needing it skip when ASKWITH_BENCH_DATA_DIR is unset."""
    value = os.environ.get("ASKWITH_BENCH_DATA_DIR")
    if not value:
        pytest.skip("ASKWITH_BENCH_DATA_DIR is not set")
    return Path(value)
