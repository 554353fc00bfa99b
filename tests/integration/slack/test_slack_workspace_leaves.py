"""A workspace that leaves askwith (`app_uninstalled`, or `tokens_revoked` taking the bot's token) leaves nothing
behind: every table and vector collection counted for it is empty afterwards, the other workspace untouched."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from adapters.slack.oauth_runtime import SlackOAuthRuntime
from adapters.slack.services import SlackServices
from bot.asks.forget import count_workspace_rows
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.memory.embeddings import HashEmbedder
from bot.memory.indexer import SessionIndexer
from bot.memory.summarizer import SessionSummarizer
from bot.memory.vector_index import VectorIndex
from bot.settings import Settings
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.user_tokens import TokenCipher, UserTokenGrant, UserTokenStore
from tests.fakes.asks import QUESTION, ask_factory, two_fact_world
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_cloud import FakeSlackCloud
from tests.fakes.slack_requests import bolt_request, event_body
from tests.fakes.slack_shapes import slack_world
from tests.integration.slack.conftest import SIGNING_SECRET
from tests.integration.slack.test_slack_oauth_install import _install


TEAMS = ("TLEAVES", "TSTAYS")
# Tables an ask, a mirrored history, a member's token and the install fill: each must be non-empty before.
FILLED = ("message", "member", "channel", "membership", "memory_session", "session_message", "ingest_cursor", "ask",
          "conversation", "turn", "memory_query", "llm_call", "consensus", "user_token", "slack_installation",
          "workspace")  # fmt: skip


@dataclasses.dataclass
class Cloud:
    runtime: SlackOAuthRuntime
    cloud: FakeSlackCloud
    index: VectorIndex
    db: Database

    def fake(self, team: str) -> FakeSlackApi:
        return self.cloud.workspace(team)

    async def svc(self, team: str) -> SlackServices:
        found = await self.runtime.workspaces.for_team(team)
        assert found is not None
        return found


@pytest.fixture
async def two(settings: Settings, sqlite_db: Database) -> AsyncIterator[Cloud]:
    worlds = [dataclasses.replace(slack_world(two_fact_world()), id=team) for team in TEAMS]
    cloud = FakeSlackCloud([FakeSlackApi(w, bot_token=f"xoxb-{w.id}") for w in worlds])
    await cloud.start()
    settings = settings.replace(
        slack_distribution="oauth", slack_memory="mirror", slack_marketplace=True, slack_signing_secret=SIGNING_SECRET,
        slack_client_id=cloud.workspaces[0].client_id, slack_client_secret=cloud.workspaces[0].client_secret,
        slack_api_url=cloud.base_url, token_encryption_key=TokenCipher.new_key(),
    )  # fmt: skip
    index = VectorIndex.from_settings(settings, embedder=HashEmbedder())
    indexer = SessionIndexer(sqlite_db, settings, SessionSummarizer(sqlite_db, None), index)
    llm = LLMClient.from_settings(settings, backend=ScriptedBackend(scripted_model))
    memory = MemoryAccess(clear=ClearMemory(sqlite_db), fuzzy=None)
    runtime = await SlackOAuthRuntime.start(
        settings, sqlite_db, ask_service=ask_factory(settings, sqlite_db, llm, memory), memory=memory, indexer=indexer
    )
    tokens = UserTokenStore(sqlite_db, TokenCipher.from_settings(settings))
    try:
        for fake in cloud.workspaces:
            await _install(runtime, fake)
            svc = await runtime.workspaces.for_team(fake.world.id)
            assert svc is not None and svc.ingest is not None
            await tokens.save(UserTokenGrant("slack", fake.world.id, "UBOB", fake.grant_user_token("UBOB"), ()))
            for member in ("UALICE", "UBOB"):
                await svc.member_settings.set_opted_in(WorkspaceKey("slack", fake.world.id), member, True)
            await svc.ingest.run()
        yield Cloud(runtime, cloud, index, sqlite_db)
    finally:
        await runtime.stop()
        await cloud.stop()


async def _until(condition: Callable[[], object], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


async def _ask(two: Cloud, team: str) -> None:
    fake = two.fake(team)
    dm = fake.world.dm(fake.world.bot_id, "UALICE").id
    text = f"<@UBOB> {QUESTION}"
    ts = fake.timeline.add(dm, "UALICE", text, None)
    event = {"type": "message", "channel_type": "im", "channel": dm, "user": "UALICE", "text": text, "ts": ts}
    await _dispatch(two, team, event)
    await _until(lambda: any("14 March" in p for p in fake.posts(dm)))
    await (await two.svc(team)).drain()


async def _dispatch(two: Cloud, team: str, event: dict[str, Any]) -> None:
    response = await two.runtime.app.async_dispatch(bolt_request(SIGNING_SECRET, event_body(team, event)))
    assert response.status == 200


async def _counts(two: Cloud, team: str, workspace_id: int) -> dict[str, int]:
    counts = await count_workspace_rows(two.db, workspace_id, ("slack", team))
    counts["vectors"] = await two.index.count(workspace_id)
    return counts


@pytest.mark.parametrize(
    "leaving", [{"type": "app_uninstalled"}, {"type": "tokens_revoked", "tokens": {"bot": ["UASKWITHBOT"]}}]
)
async def test_a_workspace_that_leaves_keeps_nothing_and_the_other_keeps_everything(
    two: Cloud, leaving: dict[str, Any]
) -> None:
    gone, stays = TEAMS
    ids = {team: (await two.svc(team)).asks.workspace_id for team in TEAMS}
    for team in TEAMS:
        await _ask(two, team)
    before = {team: await _counts(two, team, ids[team]) for team in TEAMS}
    assert all(before[gone][table] > 0 for table in (*FILLED, "vectors")), before[gone]
    svc = await two.svc(gone)
    await _dispatch(two, gone, leaving)
    await svc.drain()
    after = await _counts(two, gone, ids[gone])
    assert set(after) >= set(FILLED) and all(n == 0 for n in after.values()), after
    assert await two.index.windows().count(ids[gone]) == 0
    assert await _counts(two, stays, ids[stays]) == before[stays]
    assert two.runtime.workspaces.teams == [stays]
