"""`askwith ask` on a workspace that is not there: one clear line, exit code 1, and nothing written (no database file
left behind in the data directory)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.cli_helpers import askwith


UNKNOWN = "There is no workspace 'nope'. Known: acme, friendstv, or a path to a workspace JSON file."


@pytest.mark.parametrize("missing", ["nope", "missing.json"])
def test_a_workspace_that_is_not_there_is_one_line_and_writes_nothing(tmp_path: Path, missing: str) -> None:
    data, spec = tmp_path / "data", missing if missing == "nope" else str(tmp_path / missing)
    done = askwith(data, "ask", "Which room?", "-w", spec, "--as", "alice", "--with", "bob", "--scripted")
    assert done.returncode == 1, done.stderr
    expected = UNKNOWN if missing == "nope" else f"Workspace file {spec} does not exist."
    assert done.stderr.strip().splitlines() == [f"error: {expected}"]
    assert not data.exists() or sorted(data.rglob("*")) == []
