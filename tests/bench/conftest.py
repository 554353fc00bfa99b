"""Shared bench runs: datasets generated once, and their first items run once per session with the scripted model
(FriendsTV's 11,593 messages are ingested once). Tests that change a run copy its directory first."""

from __future__ import annotations

import pytest

from tests.fakes.bench_runs import BenchRuns


@pytest.fixture(scope="session")
def bench_runs(tmp_path_factory: pytest.TempPathFactory) -> BenchRuns:
    return BenchRuns(tmp_path_factory.mktemp("bench"))
