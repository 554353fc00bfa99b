"""Many workspaces: two Slack workspaces install askwith through bolt's OAuth flow (the real `/slack/install` ->
Slack -> `/slack/oauth_redirect` round trip against the fake Slack), each is served with its own bot token and only
its own memory, and uninstalling one removes only that one."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
from slack_bolt.request.async_request import AsyncBoltRequest
from sqlalchemy import select

from adapters.slack import texts
from adapters.slack.oauth_runtime import SlackOAuthRuntime
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.settings import Settings
from bot.store import models
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.member_settings import MemberSettingsStore
from bot.store.user_tokens import TokenCipher, UserTokenStore
from bot.store.world import World
from tests.conftest import SAMPLE_WORKSPACE
from tests.fakes.asks import ask_factory
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_cloud import FakeSlackCloud
from tests.fakes.slack_requests import bolt_request, command_body, event_body
from tests.fakes.slack_shapes import slack_world
from tests.integration.slack.conftest import SIGNING_SECRET


SECRET_B = "only workspace B says the launch code is TANGERINE"


TEAM_A, TEAM_B = "TACME", "TOTHER"


@pytest.fixture
async def cloud() -> AsyncIterator[FakeSlackCloud]:
    """Two workspaces with the same member and channel ids (Slack ids are only unique within a team)."""
    world_a = dataclasses.replace(slack_world(World.load(SAMPLE_WORKSPACE)), id=TEAM_A)
    world_b = dataclasses.replace(slack_world(World.load(SAMPLE_WORKSPACE)), id=TEAM_B, name="Other Inc")
    general = next(c.id for c in world_b.channels.values() if c.name == "general")
    world_b.add_message(general, "UALICE", SECRET_B, ts=datetime(2024, 5, 1, tzinfo=UTC))
    fake = FakeSlackCloud([FakeSlackApi(world_a, bot_token="xoxb-acme"), FakeSlackApi(world_b, bot_token="xoxb-b")])
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest.fixture
def oauth_settings(settings: Settings, cloud: FakeSlackCloud) -> Settings:
    fake = cloud.workspaces[0]
    return settings.replace(
        slack_distribution="oauth",
        slack_memory="mirror",  # these workspaces' memory is copied (live memory: test_slack_live_search.py)
        slack_marketplace=True,  # history read at the usual tiers (the paced one: test_slack_paced_backfill.py)
        slack_signing_secret=SIGNING_SECRET,
        slack_client_id=fake.client_id,
        slack_client_secret=fake.client_secret,
        slack_api_url=cloud.base_url,
        token_encryption_key=TokenCipher.new_key(),
    )


async def _runtime(settings: Settings, db: Database) -> SlackOAuthRuntime:
    llm = LLMClient.from_settings(settings, backend=ScriptedBackend(lambda *_: "unused"))
    memory = MemoryAccess(clear=ClearMemory(db), fuzzy=None)
    return await SlackOAuthRuntime.start(
        settings, db, ask_service=ask_factory(settings, db, llm, memory), memory=memory
    )


@pytest.fixture
async def runtime(oauth_settings: Settings, sqlite_db: Database) -> AsyncIterator[SlackOAuthRuntime]:
    rt = await _runtime(oauth_settings, sqlite_db)
    try:
        yield rt
    finally:
        await rt.stop()


async def _get(rt: SlackOAuthRuntime, path: str, query: dict[str, str], cookie: str = "") -> tuple[int, dict, str]:
    """One GET through the ASGI app, as the browser sends it."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = [(b"cookie", cookie.encode())] if cookie else []
    scope = {"type": "http", "method": "GET", "path": path, "root_path": "", "query_string": urlencode(query).encode(),
             "headers": headers}  # fmt: skip
    await rt.http(scope, receive, send)
    response_headers = {k.decode(): v.decode() for k, v in sent[0]["headers"]}
    return sent[0]["status"], response_headers, sent[1]["body"].decode()


async def _install(rt: SlackOAuthRuntime, fake: FakeSlackApi, installer: str = "UALICE") -> tuple[int, str]:
    status, headers, _ = await _get(rt, "/slack/install", {})
    assert status == 302, headers
    authorize = parse_qs(urlparse(headers["location"]).query)
    assert "commands" in authorize["scope"][0].split(",")
    cookie = headers["set-cookie"].split(";")[0]
    # Slack shows its consent screen; the admin approves, and the browser comes back with a code.
    code = fake.issue_install_code(installer)
    status, _, body = await _get(rt, "/slack/oauth_redirect", {"code": code, "state": authorize["state"][0]}, cookie)
    return status, body


def _command_request(cloud: FakeSlackCloud, team: str, text: str) -> AsyncBoltRequest:
    hooks = cloud.workspaces[0].hooks_url + "c/1"
    return bolt_request(SIGNING_SECRET, command_body(team, "UALICE", "/askwith", text, response_url=hooks))


async def _command(rt: SlackOAuthRuntime, cloud: FakeSlackCloud, team: str, text: str) -> dict[str, Any]:
    response = await rt.app.async_dispatch(_command_request(cloud, team, text))
    assert response.status == 200, response.body
    return json.loads(response.body)


async def _memory_texts(db: Database, team: str) -> set[str]:
    async with db.session() as session:
        rows = await session.execute(
            select(models.Message.text)
            .join(models.Workspace, models.Workspace.id == models.Message.workspace_id)
            .where(models.Workspace.platform == "slack", models.Workspace.external_id == team)
        )
        return set(rows.scalars())


async def test_two_workspaces_install_by_oauth_and_each_is_served_with_its_own_token_and_memory(
    runtime: SlackOAuthRuntime, cloud: FakeSlackCloud, sqlite_db: Database
) -> None:
    fake_a, fake_b = cloud.workspace(TEAM_A), cloud.workspace(TEAM_B)
    # Before any install, a request from a workspace is refused by bolt's authorize.
    before = await runtime.app.async_dispatch(_command_request(cloud, TEAM_A, "on"))
    assert before.status == 200 and cloud.workspaces[0].responses  # bolt tells the member the app is not installed
    assert runtime.workspaces.teams == []
    assert (await _install(runtime, fake_a))[0] == 200
    assert (await _install(runtime, fake_b))[0] == 200
    assert runtime.workspaces.teams == [TEAM_A, TEAM_B]
    async with sqlite_db.session() as session:
        stored = list((await session.execute(select(models.SlackInstallation))).scalars())
    assert {row.team_id for row in stored} == {TEAM_A, TEAM_B}
    assert all(
        row.bot_token_encrypted not in ("xoxb-acme", "xoxb-b") and "xoxb" not in row.bot_token_encrypted
        for row in stored
    )

    # A command in each workspace is handled with that workspace's bot token and settles that workspace's settings.
    calls_a, calls_b = len(fake_a.calls), len(fake_b.calls)
    await _command(runtime, cloud, TEAM_B, "on")
    assert len(fake_a.calls) == calls_a and len(fake_b.calls) > calls_b
    store = MemberSettingsStore(sqlite_db)
    assert (await store.get(WorkspaceKey("slack", TEAM_B), "UALICE")).opted_in
    assert not (await store.get(WorkspaceKey("slack", TEAM_A), "UALICE")).opted_in

    calls_a, calls_b = len(fake_a.calls), len(fake_b.calls)
    await _command(runtime, cloud, TEAM_A, "on")
    assert len(fake_a.calls) > calls_a and len(fake_b.calls) == calls_b

    # Each workspace's ingestion reads its own workspace only.
    for svc in runtime.workspaces.all():
        await svc.ingest.run()
    assert SECRET_B in await _memory_texts(sqlite_db, TEAM_B)
    assert SECRET_B not in await _memory_texts(sqlite_db, TEAM_A)
    assert await _memory_texts(sqlite_db, TEAM_A)


async def test_a_replayed_or_forged_install_redirect_is_refused(
    runtime: SlackOAuthRuntime, cloud: FakeSlackCloud
) -> None:
    fake = cloud.workspace(TEAM_A)
    status, headers, _ = await _get(runtime, "/slack/install", {})
    state = parse_qs(urlparse(headers["location"]).query)["state"][0]
    cookie = headers["set-cookie"].split(";")[0]
    assert (
        await _get(
            runtime, "/slack/oauth_redirect", {"code": fake.issue_install_code("UALICE"), "state": state}, cookie
        )
    )[0] == 200
    replay = await _get(
        runtime, "/slack/oauth_redirect", {"code": fake.issue_install_code("UALICE"), "state": state}, cookie
    )
    forged = await _get(
        runtime, "/slack/oauth_redirect", {"code": fake.issue_install_code("UALICE"), "state": "x.y"}, cookie
    )
    assert replay[0] in (400, 401) and forged[0] in (400, 401), (replay, forged)


async def test_uninstalling_one_workspace_removes_only_its_installation_and_a_restart_reopens_the_rest(
    runtime: SlackOAuthRuntime, cloud: FakeSlackCloud, oauth_settings: Settings, sqlite_db: Database
) -> None:
    await _install(runtime, cloud.workspace(TEAM_A))
    await _install(runtime, cloud.workspace(TEAM_B))
    svc_a = await runtime.workspaces.for_team(TEAM_A)
    assert svc_a is not None
    uninstalled = {"type": "app_uninstalled"}
    response = await runtime.app.async_dispatch(bolt_request(SIGNING_SECRET, event_body(TEAM_A, uninstalled)))
    assert response.status == 200
    await svc_a.drain()
    assert runtime.workspaces.teams == [TEAM_B]
    assert await runtime.workspaces.store.async_find_bot(enterprise_id=None, team_id=TEAM_A) is None
    after = await runtime.app.async_dispatch(_command_request(cloud, TEAM_A, "on"))
    assert after.status == 200 and cloud.workspaces[0].responses  # bolt's authorize no longer finds workspace A
    assert runtime.workspaces.teams == [TEAM_B]

    restarted = await _runtime(oauth_settings, sqlite_db)
    try:
        assert restarted.workspaces.teams == [TEAM_B]
        assert (await restarted.workspaces.for_team(TEAM_B)).port.client.token == "xoxb-b"
    finally:
        await restarted.stop()


async def test_a_revoked_bot_token_removes_that_workspace_only(
    runtime: SlackOAuthRuntime, cloud: FakeSlackCloud
) -> None:
    await _install(runtime, cloud.workspace(TEAM_A))
    await _install(runtime, cloud.workspace(TEAM_B))
    svc_b = await runtime.workspaces.for_team(TEAM_B)
    assert svc_b is not None
    revoked_members = {"type": "tokens_revoked", "tokens": {"oauth": ["UBOB"]}}
    await runtime.app.async_dispatch(bolt_request(SIGNING_SECRET, event_body(TEAM_B, revoked_members)))
    await svc_b.drain()
    assert runtime.workspaces.teams == [TEAM_A, TEAM_B]  # a member's token revoked: the workspace stays
    revoked_bot = {"type": "tokens_revoked", "tokens": {"bot": ["UASKWITHBOT"]}}
    await runtime.app.async_dispatch(bolt_request(SIGNING_SECRET, event_body(TEAM_B, revoked_bot)))
    await svc_b.drain()
    assert runtime.workspaces.teams == [TEAM_A]
    assert await runtime.workspaces.store.async_find_bot(enterprise_id=None, team_id=TEAM_B) is None


async def test_a_members_dm_grant_shares_the_redirect_and_lands_in_their_own_workspace(
    runtime: SlackOAuthRuntime, cloud: FakeSlackCloud, oauth_settings: Settings, sqlite_db: Database
) -> None:
    await _install(runtime, cloud.workspace(TEAM_B))
    members = runtime.http.install
    assert members is not None
    state = parse_qs(urlparse(members.authorize_url(TEAM_B)).query)["state"][0]  # `/askwith connect`'s link
    code = cloud.workspace(TEAM_B).issue_oauth_code("UBOB")
    status, _, body = await _get(runtime, "/slack/oauth_redirect", {"code": code, "state": state})
    assert status == 200 and "UBOB" in body
    tokens = UserTokenStore(sqlite_db, TokenCipher.from_settings(oauth_settings))
    assert [g.member_platform_id for g in await tokens.grants("slack", TEAM_B)] == ["UBOB"]
    assert await tokens.grants("slack", TEAM_A) == []
    assert runtime.workspaces.teams == [TEAM_B]  # a member's grant installs no workspace


# The Assistant side panel in OAuth mode works as with one workspace: both apps register their listeners through one
# function, so its events are answered with suggested prompts instead of bolt's 404.
async def test_assistant_panel_events_get_suggested_prompts_in_oauth_mode(
    runtime: SlackOAuthRuntime, cloud: FakeSlackCloud
) -> None:
    fake = cloud.workspace(TEAM_B)
    await _install(runtime, fake)
    bot = fake.world.bot_id
    dm = fake.world.dm(bot, "UALICE").id
    thread_ts = fake.timeline.add(dm, bot, "Hi! Ask me anything.", None)  # Slack opens the panel's thread
    thread = {"user_id": "UALICE", "channel_id": dm, "thread_ts": thread_ts, "context": {}}
    started = {"type": "assistant_thread_started", "assistant_thread": thread, "event_ts": thread_ts}
    response = await runtime.app.async_dispatch(bolt_request(SIGNING_SECRET, event_body(TEAM_B, started)))
    assert response.status == 200, response.body
    svc = await runtime.workspaces.for_team(TEAM_B)
    assert svc is not None
    await svc.drain()
    assert fake.suggested_prompts[(dm, thread_ts)] == texts.ASSISTANT_PROMPTS
    moved = {**started, "type": "assistant_thread_context_changed"}
    moved["assistant_thread"] = {**thread, "context": {"channel_id": "CGENERAL"}}
    response = await runtime.app.async_dispatch(bolt_request(SIGNING_SECRET, event_body(TEAM_B, moved)))
    assert response.status == 200, response.body
