from __future__ import annotations

import json
from pathlib import Path

import pytest

from adapters.local.registry import LocalWorkspaces
from bot.errors import MissingSettingError, UnknownWorkspaceError, WorkspaceError
from bot.settings import Settings
from bot.store.world import World


def test_the_bundled_sample_gets_its_own_state_under_the_data_dir(settings: Settings) -> None:
    workspaces = LocalWorkspaces(settings)
    acme = workspaces.open("acme")
    state = settings.data_dir / "workspaces" / "acme.json"
    assert acme.path == state and state.is_file()
    acme.world.add_message("C-general", "bob", "a message posted after the first open")
    acme.save()
    again = LocalWorkspaces(settings).open("acme")
    assert again.world.message_count() == 16  # the state, not a fresh copy of the sample
    assert workspaces.world_id("acme") == "acme"


def test_a_world_file_is_its_own_state_and_is_found_later_by_id(
    settings: Settings, sample_world: World, tmp_path: Path
) -> None:
    sample_world.id = "team-x"
    path = tmp_path / "team.json"
    sample_world.save(path)
    workspaces = LocalWorkspaces(settings)
    assert workspaces.open(str(path)).path == path
    assert workspaces.world_id(str(path)) == "team-x"
    assert workspaces.world_id("team-x") == "team-x"
    assert LocalWorkspaces(settings).open("team-x").path == path.resolve()
    assert "team-x" in workspaces.known()


def test_unknown_and_broken_workspaces_are_clear_errors(settings: Settings, tmp_path: Path) -> None:
    workspaces = LocalWorkspaces(settings)
    with pytest.raises(UnknownWorkspaceError, match="There is no workspace 'nope'. Known: acme, friendstv"):
        workspaces.open("nope")
    with pytest.raises(UnknownWorkspaceError):
        workspaces.world_id("nope")
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"format": 1, "id": "x"}))
    with pytest.raises(WorkspaceError, match="is not valid"):
        workspaces.open(str(broken))
    with pytest.raises(WorkspaceError, match="does not exist"):
        workspaces.open(str(tmp_path / "missing.json"))


def test_friendstv_needs_the_bench_data_dir(settings: Settings, tmp_path: Path) -> None:
    with pytest.raises(MissingSettingError, match="ASKWITH_BENCH_DATA_DIR"):
        LocalWorkspaces(settings.replace(bench_data_dir=None)).open("friendstv")
    with pytest.raises(WorkspaceError, match="FriendsTV data not found"):
        LocalWorkspaces(settings.replace(bench_data_dir=tmp_path)).open("friendstv")
