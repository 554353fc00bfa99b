"""A service given a link maker posts each requester their own signed transcript link with the answer."""

from __future__ import annotations

import re
import time

from bot.asks.service import AskRequest
from bot.settings import Settings
from bot.store.db import Database
from bot.web.links import TranscriptLinks
from bot.web.tokens import verify_member_token
from tests.fakes.asks import QUESTION, build, two_fact_world


async def test_the_final_post_carries_a_link_signed_for_the_requester(db: Database, settings: Settings) -> None:
    world = two_fact_world()
    h = await build(db, world, settings=settings)
    links = TranscriptLinks(settings.replace(public_url="https://askwith.example"), "secret")
    h.service.transcript_link = links.for_workspace(h.service.workspace_id)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    dm = world.dm(world.bot_id, "alice").id
    final = next(m.text for m in world.messages[dm] if f"transcripts show {outcome.ask_id}" in m.text)
    match = re.search(rf"Open the transcript: https://askwith\.example/asks/{outcome.ask_id}\?t=(\S+)", final)
    assert match is not None, final
    claim = verify_member_token("secret", match[1], now=time.time())
    assert (claim.workspace_id, claim.member) == (h.service.workspace_id, "alice")
