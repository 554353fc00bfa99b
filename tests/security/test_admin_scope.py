"""Medium 8: web admin belongs to a workspace (red team: with ASKWITH_WEB_ADMINS=alice, another workspace's "alice"
opened this workspace's admin page and transcripts)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from bot.settings import Settings
from bot.store.db import Database
from bot.store.world_mirror import mirror_world
from bot.web.tokens import MemberClaim, sign_member_token
from tests.fakes.asks import two_fact_world
from tests.web.harness import SECRET, app_for, ask_and_wait, sign_in, web_settings


@pytest.fixture
def settings_with_admin(settings: Settings) -> Settings:
    return web_settings(settings, web_admins="alice")


@pytest.fixture
def client(settings_with_admin: Settings) -> Iterator[TestClient]:
    with TestClient(app_for(settings_with_admin)) as client:
        yield client


async def _other_workspace(settings: Settings) -> int:
    """Another workspace in the same store (a replayed benchmark, say) that also has an "alice"."""
    db = await Database.open(settings, migrate=False)
    try:
        return await mirror_world(db, two_fact_world())
    finally:
        await db.close()


def test_another_workspaces_alice_is_not_admin_here(client: TestClient, settings_with_admin: Settings) -> None:
    sign_in(client, "alice")
    assert client.get("/admin").status_code == 200  # this workspace's alice is
    ask_id = ask_and_wait(client, "alice", "dave", "What is the budget for the launch party?")
    client.cookies.clear()
    sign_in(client, "bob")
    assert client.get(f"/asks/{ask_id}").status_code == 403

    other = client.portal.call(_other_workspace, settings_with_admin)  # type: ignore[union-attr]
    client.cookies.clear()
    link = sign_member_token(SECRET, MemberClaim(other, "alice"), expires_at=time.time() + 600)
    assert client.get(f"/conversations?t={link}").status_code == 200  # signed in, as that workspace's alice
    assert client.get("/admin").status_code == 403
    assert client.get("/admin/ingestion").status_code == 403
    assert client.get(f"/asks/{ask_id}").status_code == 403
