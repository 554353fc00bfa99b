"""`askwith forget --workspace W` deletes every row of one workspace, and `askwith status` lists what each workspace
holds with its memory source; another workspace's rows stay."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.asks.forget import count_workspace_rows, workspace_id_of
from bot.cli import _register_all, app
from bot.memory.vector_index import VectorIndex
from bot.settings import Settings
from bot.store.db import Database, run
from bot.store.world_mirror import mirror_world
from tests.fakes.asks import two_fact_world


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("ASKWITH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ASKWITH_EMBEDDER", "hash")
    monkeypatch.delenv("ASKWITH_DATABASE_URL", raising=False)
    monkeypatch.delenv("ASKWITH_LLM_BASE_URL", raising=False)
    _register_all()
    return CliRunner()


async def _mirror(world_id: str) -> None:
    db = await Database.open(Settings.load(env_file=None))
    try:
        await mirror_world(db, two_fact_world(world_id=world_id))
    finally:
        await db.close()


async def _counts(platform: str, external_id: str) -> dict[str, int]:
    db = await Database.open(Settings.load(env_file=None))
    try:
        workspace_id = await workspace_id_of(db, platform, external_id)
        return await count_workspace_rows(db, workspace_id or -1, (platform, external_id))
    finally:
        await db.close()


def test_forget_deletes_every_row_of_the_workspace_and_status_lists_it(runner: CliRunner) -> None:
    run(_mirror("TGOES"))
    run(_mirror("TSTAYS"))
    status = runner.invoke(app, ["status"], env={"COLUMNS": "200"})
    assert status.exit_code == 0 and "local:TGOES" in status.output and "mirror" in status.output, status.output
    before, other = run(_counts("local", "TGOES")), run(_counts("local", "TSTAYS"))
    assert before["message"] > 0 and before["membership"] > 0 and before["workspace"] == 1, before
    refused = runner.invoke(app, ["forget", "--workspace", "local:TGOES"], input="n\n")
    assert refused.exit_code != 0 and run(_counts("local", "TGOES")) == before
    done = runner.invoke(app, ["forget", "--workspace", "local:TGOES", "--yes"])
    assert done.exit_code == 0, done.output
    after = run(_counts("local", "TGOES"))
    assert all(n == 0 for n in after.values()), after
    assert run(_counts("local", "TSTAYS")) == other
    unknown = runner.invoke(app, ["forget", "--workspace", "slack:TNOPE", "--yes"])
    assert unknown.exit_code != 0


def test_status_counts_vectors_without_creating_collections(runner: CliRunner) -> None:
    run(_mirror("TCOUNTED"))
    status = runner.invoke(app, ["status"], env={"COLUMNS": "200"})
    assert status.exit_code == 0 and "local:TCOUNTED" in status.output, status.output
    client = VectorIndex.from_settings(Settings.load(env_file=None))._shared_client()
    assert [c.name for c in client.list_collections()] == []
