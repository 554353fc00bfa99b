"""Requests are checked before anything runs; each problem has one clear text."""

from __future__ import annotations

import pytest

from bot.agents.ablations import NAMES
from bot.asks.service import AskRequest
from bot.errors import AskRejectedError
from bot.platform.port import Member
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import MemberPolicy, World
from bot.texts import rejection_texts
from tests.fakes.asks import QUESTION, build, two_fact_world


def crowded_world() -> World:
    world = two_fact_world()
    world.add_member(Member("helperbot", "helperbot", "Helper", is_bot=True))
    world.add_member(Member("zed", "zed", "Zed", deactivated=True))
    world.add_member(Member("olga", "olga", "Olga"), MemberPolicy(opted_in=False))
    return world


CASES = [
    (AskRequest("alice", ["bob"], "   "), rejection_texts.empty_question()),
    (AskRequest("alice", ["bob"], "x" * 2001), rejection_texts.question_too_long(2001, 2000)),
    (AskRequest("alice", [], QUESTION), rejection_texts.no_colleague()),
    (AskRequest("alice", ["nobody"], QUESTION), rejection_texts.unknown_member("nobody")),
    (AskRequest("alice", ["@ghost"], QUESTION), rejection_texts.unknown_member("ghost")),
    (AskRequest("alice", ["zed"], QUESTION), rejection_texts.deactivated_member("zed")),
    (AskRequest("alice", ["olga"], QUESTION), rejection_texts.opted_out("olga")),
    (AskRequest("alice", ["helperbot"], QUESTION), rejection_texts.bot_member("helperbot")),
    (AskRequest("alice", ["alice", "@alice"], QUESTION), rejection_texts.only_yourself()),
    (AskRequest("olga", ["bob"], QUESTION), rejection_texts.requester_inactive("olga")),
    (
        AskRequest("alice", ["bob"], QUESTION, ablations=["no-brains"]),
        rejection_texts.unknown_ablation("no-brains", NAMES),
    ),
]


@pytest.mark.parametrize(("request_", "text"), CASES)
async def test_invalid_requests_are_rejected_with_a_clear_text(
    sqlite_db: Database, settings: Settings, request_: AskRequest, text: str
) -> None:
    h = await build(sqlite_db, crowded_world(), settings=settings)
    with pytest.raises(AskRejectedError) as info:
        await h.service.submit(request_)
    assert str(info.value) == text
    assert not h.backend.requests


async def test_a_valid_request_is_queued_with_handles_and_ablations(sqlite_db: Database, settings: Settings) -> None:
    h = await build(sqlite_db, crowded_world(), settings=settings.replace(ablations="no-fuzzy-memory"))
    ask_id = await h.service.submit(AskRequest("@alice", ["@bob", "alice", "bob"], QUESTION, ablations=["no-infonav"]))
    ask = await h.service.load(ask_id)
    assert (ask.status, ask.requester, ask.colleagues) == ("queued", "alice", ["bob"])
    assert ask.ablations == ["no-infonav", "no-fuzzy-memory"]
