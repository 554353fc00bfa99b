"""Nothing from Real-time Search at rest: Slack's guide says "You must not store or copy any of the data retrieved from
this API". After a live ask ends (answered, with an approval on the way), every table and every column of the
database is read back and scanned for the words of the messages the searches could return: none are there. What
stays is ids, counts, states and the pointer to the answer, which lives in Slack."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import select

from adapters.slack.blocks import APPROVE_ACTION
from bot.asks import models as ask_models
from bot.asks.read_models.answer_view import answer_view
from bot.asks.read_models.transcript_page import load_transcript
from bot.platform.port import SharePolicy
from bot.settings import Settings
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.texts import transcript_texts
from tests.fakes.asks import QUESTION
from tests.fakes.slack_api import BOT_SCOPES
from tests.fakes.slack_search import BOT_SEARCH_SCOPES
from tests.fakes.text_at_rest import text_at_rest, word_runs
from tests.integration.slack.conftest import Slack
from tests.integration.slack.test_slack_live_search import TEAM, Live, _dm_ask, _live


@pytest.fixture
async def live(settings: Settings, sqlite_db: Database) -> AsyncIterator[Live]:
    settings = settings.replace(approval_timeout_seconds=10.0)  # a failed test does not wait long on Bob
    async for value in _live(settings, sqlite_db, bot_scopes=BOT_SCOPES | BOT_SEARCH_SCOPES):
        yield value


def _searchable(live: Live) -> list[str]:
    """The text of every message in the workspace a search could return (before the ask adds its own)."""
    timeline, bot = live.fake.timeline, live.fake.world.bot_id
    return [m.text for c in live.fake.world.channels for m in timeline.messages(c) if m.sender_id != bot]


async def _approve_until_answered(live: Live, dm: str) -> None:
    """Bob's share policy is `ask`: click Approve on each prompt he gets until Alice's answer is posted."""
    bob_dm, clicked = live.fake.world.dm(live.fake.world.bot_id, "UBOB").id, set[str]()
    slack = Slack(live.runtime.app, live.fake)

    async def click_new() -> None:
        prompts = [blocks for (channel, _), blocks in list(live.fake.blocks.items()) if channel == bob_dm]
        buttons = [e for blocks in prompts for b in blocks for e in b.get("elements", [])]
        for value in [e.get("value") for e in buttons if e.get("action_id") == APPROVE_ACTION]:
            if value not in clicked:
                clicked.add(value)
                assert (await slack.click("UBOB", bob_dm, APPROVE_ACTION, value)).status == 200

    deadline = time.monotonic() + 20
    while not any("14 March" in p for p in live.fake.posts(dm)):
        assert time.monotonic() < deadline, live.fake.posts(dm)
        await click_new()
        await asyncio.sleep(0.02)
    assert clicked  # an approval was on the way


async def test_after_a_live_ask_no_table_holds_any_searched_text(live: Live) -> None:
    runs = word_runs(_searchable(live), exclude=[QUESTION])
    await live.svc.member_settings.set_share_policy(WorkspaceKey("slack", TEAM), "UBOB", SharePolicy.ASK)
    dm = await _dm_ask(live, f"<@UBOB> {QUESTION}", action_token=live.search.issue_action_token("UALICE"))
    await _approve_until_answered(live, dm)
    await live.svc.drain()
    assert live.search.calls  # the ask did search Slack
    found = await text_at_rest(live.db, runs)
    assert not found, "\n".join(f"{f.table}.{f.column} (row {f.row}) holds '{f.run}'" for f in found)
    asks = await _asks(live.db)
    assert [(a.status, a.final_post, bool(a.final_channel_id and a.final_message_id)) for a in asks] == [
        ("done", "posted", True)
    ]  # the answer's pointer in Slack stays
    for member in ("alice", "bob"):  # the pages still read the ask, and say where its text is
        page = await load_transcript(live.db, asks[0].id, viewer=member)
        assert page is not None and page.platform_note == transcript_texts.text_in_platform()
        assert [t.agent for c in page.conversations for t in c.turns] == ["alice", "bob", "alice", "bob"]
    settings, ws = live.settings, asks[0].workspace_id
    assert (await answer_view(live.db, asks[0].id, viewer="alice", settings=settings, workspace_id=ws)).ask_id


async def _asks(db: Database) -> list[ask_models.Ask]:
    async with db.session() as session:
        return list((await session.execute(select(ask_models.Ask))).scalars())
