"""Follow-ups and thread context (requester's agents only, as untrusted data), the answer view with its sources,
feedback votes, a member's own pages, and the local workspace's permalinks."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from bot.asks import models
from bot.asks.feedback import feedback_tally, vote_of
from bot.asks.read_models.answer_view import answer_view
from bot.asks.read_models.member_views import recent_asks, shared_by
from bot.asks.service import AskRequest
from bot.base.prompts import DATA_OPEN
from bot.consent.outbox import AGENTS_THREAD
from bot.errors import AskNotAllowedError, AskRejectedError
from bot.llm.types import LLMRequest
from bot.settings import Settings
from bot.store import models as store_models
from bot.store.db import Database
from tests.fakes.asks import LAUNCH, QUESTION, Harness, build, two_fact_world
from tests.fakes.records import conversations, turns


def _system_prompts(h: Harness, handle: str) -> list[str]:
    """System prompts of the agent acting for `handle` (think/act calls)."""
    out = []
    for request in h.backend.requests:  # type: ignore[attr-defined]
        system = request.messages[0]["content"]
        if f"YOU ACT FOR: @{handle};" in system or f"YOU ACT FOR: {handle.title()} (@{handle})" in system:
            out.append(system)
    return out


def _all_text(request: LLMRequest) -> str:
    return "\n".join(m["content"] for m in request.messages)


async def test_a_follow_up_keeps_the_colleagues_and_gives_the_earlier_answer_to_the_requester_only(
    db: Database, settings: Settings
) -> None:
    h = await build(db, two_fact_world(), settings=settings)
    first = await h.service.ask(
        AskRequest("alice", ["bob"], QUESTION, origin_channel_id="C-notes", origin_thread_id="T1")
    )
    assert await h.service.ask_in_thread("C-notes", "T1") == first.ask_id
    h.backend.requests.clear()  # type: ignore[attr-defined]
    follow = await h.service.ask(
        AskRequest("alice", [], "And who told you the launch date?", follow_up_of=first.ask_id,
                   origin_channel_id="C-notes", origin_thread_id="T1")
    )  # fmt: skip
    ask = await h.service.load(follow.ask_id)
    assert (ask.colleagues, ask.follow_up_of) == (["bob"], first.ask_id)
    assert await h.service.ask_in_thread("C-notes", "T1") == follow.ask_id
    mine = _system_prompts(h, "alice")
    theirs = _system_prompts(h, "bob")
    assert mine and theirs
    assert all("earlier question:" in s and QUESTION in s and DATA_OPEN in s for s in mine)
    assert not any("earlier question" in s or "Bluebird" in s for s in theirs)


async def test_a_follow_up_of_someone_elses_ask_elsewhere_is_rejected(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(), settings=settings)
    first = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    with pytest.raises(AskRejectedError):
        await h.service.submit(AskRequest("carol", [], "and then?", follow_up_of=first.ask_id))
    with pytest.raises(AskRejectedError):
        await h.service.submit(AskRequest("alice", [], "and then?", follow_up_of=first.ask_id + 100))


async def test_thread_context_reaches_the_requesters_agents_within_budget(db: Database, settings: Settings) -> None:
    settings = settings.replace(evidence_budget_tokens=800)
    h = await build(db, two_fact_world(), settings=settings)
    thread = "\n".join(f"Dave: message {i} about the offsite plans" for i in range(200)) + "\nDave: LAST LINE"
    outcome = await h.service.ask(AskRequest("alice", ["bob"], "What does this thread decide?", context=thread))
    assert (await h.service.load(outcome.ask_id)).context == thread
    mine = _system_prompts(h, "alice")
    assert mine and all("LAST LINE" in s for s in mine)
    assert all("earlier messages of the thread are not shown" in s for s in mine)
    assert all("message 0 about" not in s for s in mine)  # the oldest lines are what the budget cut
    assert not any("LAST LINE" in s for s in _system_prompts(h, "bob"))


async def test_the_answer_view_links_what_the_viewer_sees_and_quotes_only_released_lines(
    db: Database, settings: Settings
) -> None:
    h = await build(db, two_fact_world(), settings=settings)
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    view = await answer_view(db, outcome.ask_id, viewer="alice", settings=settings)
    assert view.status == "done" and view.answer == outcome.answer and view.claims
    by_text = {s.text: s for s in view.sources}
    own = next(s for s in view.sources if s.text and "Bluebird" in s.text)
    assert own.visible_to_viewer and own.channel_id == "C-notes" and own.message_id
    assert await h.port.permalink(own.channel_id, own.message_id) == f"/workspace/C-notes#msg-{own.message_id}"
    launch = by_text[LAUNCH]  # from bob's DM with erin: alice cannot open it
    assert not launch.visible_to_viewer and launch.via == "bob" and launch.via_name == "Bob"
    assert (launch.channel_id, launch.message_id) == (None, None)
    bob = next(c for c in view.contributors if c.handle == "bob")
    assert bob.source_count >= 1 and bob.shared and not bob.brought_in

    # Bob took part, so he may open it: his own DM is linked for him; alice's private note is not, and he reads its
    # words only because her agent told his agent them (her outbox named him)
    for_bob = await answer_view(db, outcome.ask_id, viewer="bob", settings=settings)
    assert next(s for s in for_bob.sources if s.text == LAUNCH).visible_to_viewer
    note = next(s for s in for_bob.sources if s.via == "alice")
    assert not note.visible_to_viewer and note.message_id is None
    alice_told_bob = [
        line for c in await conversations(db, outcome.ask_id) for t in await turns(db, c.id) if t.agent == "alice"
        if (sent := t.data["sharing"]["sent"])["verdict"] == "sent" and "bob" in sent["audience"]
        for line in sent["sources"]
    ]  # fmt: skip
    assert (note.text is not None) == any(note.text and note.text in line for line in alice_told_bob)
    with pytest.raises(AskNotAllowedError):
        await answer_view(db, outcome.ask_id, viewer="dave", settings=settings)


async def test_feedback_is_one_changeable_vote_per_member(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(), settings=settings)
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    assert await h.service.record_feedback(outcome.ask_id, "alice", 1) == 1
    assert await h.service.record_feedback(outcome.ask_id, "bob", -1) == -1
    assert await h.service.record_feedback(outcome.ask_id, "alice", -1) == -1  # changed, not added
    tally = await feedback_tally(db, outcome.ask_id)
    assert (tally.up, tally.down) == (0, 2) and await vote_of(db, outcome.ask_id, "alice") == -1
    with pytest.raises(AskRejectedError):
        await h.service.record_feedback(outcome.ask_id, "alice", 5)
    with pytest.raises(AskNotAllowedError):
        await h.service.record_feedback(outcome.ask_id, "dave", 1)


async def test_a_members_recent_asks_and_what_their_agent_shared(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(), settings=settings)
    first = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    second = await h.service.ask(AskRequest("alice", ["bob"], "When is the launch date?"))
    ws = h.service.workspace_id
    asks = await recent_asks(db, ws, "alice", limit=5)
    assert [a.ask_id for a in asks] == [second.ask_id, first.ask_id] and asks[0].stage == "done"
    assert await recent_asks(db, ws, "bob") == []
    shared = await shared_by(db, ws, "bob", limit=10)
    assert shared and {s.ask_id for s in shared} <= {first.ask_id, second.ask_id}
    with_alice = f"alice, {AGENTS_THREAD}"  # the admins read the agents' thread too
    assert all(s.requester == "alice" and s.with_agent == with_alice and s.approval == "auto" for s in shared)
    assert any("14 March" in s.text for s in shared)
    assert await shared_by(db, ws, "alice") == []  # the requester's own agent shares with nobody else


async def test_migration_0010_matches_the_models(db: Database) -> None:
    def diff(connection: object) -> list[object]:
        context = MigrationContext.configure(connection)  # type: ignore[arg-type]
        return [
            d
            for d in compare_metadata(context, store_models.Base.metadata)
            if "ask_feedback" in str(d) or "'ask'" in str(d) or "ix_ask_origin_thread" in str(d)
        ]

    assert models.AskFeedback.__tablename__ == "ask_feedback"
    async with db.engine.connect() as conn:
        assert await conn.run_sync(diff) == []
