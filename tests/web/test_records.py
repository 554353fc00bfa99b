"""The web app's views of the record, on SQLite and PostgreSQL: asks, transcripts with redacted hits, ingestion
status, metrics, and negotiations with the other side's private reasoning left out."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from sqlalchemy import select

from adapters.local import LocalWorkspace
from bot.asks.models import Consensus
from bot.asks.read_models import ask_summaries as records
from bot.asks.read_models.ask_summaries import asks_of_member, recent_asks
from bot.asks.read_models.ingestion import channel_status, member_status
from bot.asks.read_models.negotiations import load_negotiation, negotiations_of
from bot.asks.read_models.transcript_page import NOT_YOUR_AUDIENCE, load_transcript
from bot.asks.service import AskRequest
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.negotiation.members import MemberNegotiation, load_profiles
from bot.negotiation.model import Scenario
from bot.negotiation.profiles import load_profiles_file
from bot.negotiation.scripted import ScriptedNegotiator
from bot.platform.port import ApprovalDecision, ApprovalRequest
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import World
from bot.web.access import Identity, may_open
from bot.web.metrics import collect, render
from bot.web.render import templates
from tests.fakes.asks import LAUNCH, QUESTION, build, two_fact_world


PROFILES = Path(__file__).parents[2] / "adapters" / "local" / "samples" / "acme-negotiation-profiles.json"


async def test_transcript_views_redact_other_members_hits(db: Database, settings: Settings) -> None:
    world = two_fact_world()  # the launch date is in Bob's DM with Erin
    h = await build(db, world, settings=settings)
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    ws = h.service.workspace_id

    [summary] = await asks_of_member(db, ws, "bob")
    assert summary.id == outcome.ask_id and summary.participants == ["alice", "bob"] and summary.tokens > 0
    assert await asks_of_member(db, ws, "carol") == []
    assert [a.id for a in await recent_asks(db, status="done")] == [outcome.ask_id]

    # Bob's searches and plan are his: others read that his agent searched, not what for, what or how much it found.
    for viewer, own in (("alice", False), ("bob", True), ("", False)):  # "": an admin of no member here
        view = await load_transcript(db, outcome.ask_id, viewer=viewer, admin=not viewer)
        assert view is not None
        [conversation] = view.conversations
        bob_turn = next(t for t in conversation.turns if t.agent == "bob")
        shown = [hit.text for q in bob_turn.queries for hit in q.hits.shown]
        assert (LAUNCH in shown) == own and bob_turn.searched, viewer
        assert (sum(q.hits.total for q in bob_turn.queries) >= 1) == own
        assert [r["status"] for r in bob_turn.plan] == (["known", "known"] if own else [])
    raw = await load_transcript(db, outcome.ask_id, viewer="", admin=True, raw_prompts=True)
    bob_turn = next(t for t in raw.conversations[0].turns if t.agent == "bob")
    assert [r["status"] for r in bob_turn.plan] == ["known", "known"] and bob_turn.queries  # logged by the route
    assert view.consensus is not None and not view.consensus.agreed and view.ask.answer is None  # in no audience
    alice = await load_transcript(db, outcome.ask_id, viewer="alice")
    assert alice.consensus is not None and alice.consensus.agreed and alice.ask.answer
    assert view.llm_calls == [] and len(raw.llm_calls) == summary.llm_calls  # every agent's calls: raw access only
    assert {c.purpose for c in alice.llm_calls} >= {"think", "consensus"} and len(alice.llm_calls) < summary.llm_calls
    # carol was not in the audience of anything said here: she reads that agents spoke, not what
    carol = await load_transcript(db, outcome.ask_id, viewer="carol")
    said = [t.utterance for c in carol.conversations for t in c.turns]
    assert said and all(u == NOT_YOUR_AUDIENCE for u in said) and not any(t.plan for t in carol.conversations[0].turns)


async def test_members_see_only_the_prompts_their_own_agent_saw(db: Database, settings: Settings) -> None:
    # whole-history reads: bob's agent holds lines that never crossed, so it also writes its closing statement
    h = await build(db, two_fact_world(), settings=settings.replace(whole_history=True))
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    def seen(view) -> dict[str, str]:  # noqa: ANN001
        [conversation] = view.conversations
        return {t.agent: "".join(m["content"] for p in t.prompts for m in p.messages) for t in conversation.turns}

    alice = await load_transcript(db, outcome.ask_id, viewer="alice")
    bob = await load_transcript(db, outcome.ask_id, viewer="bob")
    admin = await load_transcript(db, outcome.ask_id, viewer="", admin=True, raw_prompts=True)
    redacted = await load_transcript(db, outcome.ask_id, viewer="", admin=True)  # raw prompt access off (default)
    assert redacted.consensus_prompt is None
    assert not any(t.prompts for c in redacted.conversations for t in c.turns)
    assert alice.consensus_prompt is not None and bob.consensus_prompt is None and admin.consensus_prompt is not None
    # bob's agent's closing statement read his notebook: alice's consensus record keeps what crossed, not its prompt
    async with db.session() as session:
        consensus = await session.scalar(select(Consensus.data).where(Consensus.ask_id == outcome.ask_id))
    assert consensus["sides"] and all(not call["prompt"] for side in consensus["sides"] for call in side["llm_calls"])
    assert seen(alice)["alice"] and not seen(alice)["bob"]
    assert seen(bob)["bob"] and LAUNCH in seen(bob)["bob"] and not seen(bob)["alice"]
    assert seen(admin)["alice"] and seen(admin)["bob"]
    html = templates.get_template("transcript.html").render(t=alice, identity=None, request=None)
    assert "What the model saw: think" in html
    assert "YOU ACT FOR: Alice (@alice)" in html and "YOU ACT FOR: Bob (@bob)" not in html
    assert "its side of the consensus" not in html
    html = templates.get_template("transcript.html").render(t=bob, identity=None, request=None)
    assert "its side of the consensus" not in html and "STATEMENT (your side" not in html


async def test_ingestion_status_and_metrics(db: Database, settings: Settings) -> None:
    world = two_fact_world()
    h = await build(db, world, settings=settings)
    await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    channels = {c.name: c for c in await channel_status(db)}
    assert channels["alice-notes"].messages == 2 and channels["alice-notes"].members == 1
    members = {m.name: m for m in await member_status(db)}
    assert members["alice"].opted_in and members["alice"].channels >= 2

    text = render(await collect(db))
    assert "askwith_asks_started_total 1\n" in text and "askwith_asks_finished_total 1\n" in text
    assert "# TYPE askwith_llm_calls_total counter" in text


def _scripted(scenario: Scenario, agent: str) -> LLMClient:
    return LLMClient(ScriptedBackend(ScriptedNegotiator(scenario, agent)))


async def test_negotiations_show_only_the_viewers_own_private_side(db: Database, sample_world: World) -> None:
    async def approve(request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision.APPROVED

    port = LocalWorkspace(sample_world, approval_responder=approve)
    await load_profiles(db, port, load_profiles_file(PROFILES))
    outcome = await MemberNegotiation(db, port, _scripted).negotiate("alice", "@bob")
    stored = await load_negotiation(db, outcome.negotiation_id, viewer=Identity(0, "nobody", "x", "x"))
    assert stored is not None
    ws = stored["workspace_id"]
    alice, carol = Identity(ws, "alice", "alice", "Alice"), Identity(ws, "carol", "carol", "Carol")

    assert [n.id for n in await negotiations_of(db, alice)] == [outcome.negotiation_id]
    assert await negotiations_of(db, carol) == []
    mine = await load_negotiation(db, outcome.negotiation_id, viewer=alice)
    assert mine is not None and mine["participants"] == ["alice", "bob"]
    assert may_open(alice, workspace_id=ws, participants=mine["participants"])
    assert not may_open(carol, workspace_id=ws, participants=mine["participants"])
    others = [s for s in mine["steps"] if s["agent"] not in mine["own_agents"]]
    assert others and all(s["phase"] == "move" and s["reply"] == "" and s["estimate"] is None for s in others)
    html = _render("negotiation.html", identity=alice, n=mine)
    assert f"Negotiation #{outcome.negotiation_id}" in html and "agreement" in html


def _render(name: str, **context: object) -> str:
    """A page rendered outside a request (the pieces of `request` the layout reads are stubbed)."""
    request = SimpleNamespace(state=SimpleNamespace(runtime=SimpleNamespace(local=None)))
    web = SimpleNamespace(local_picker=False)
    return templates.get_template(name).render(request=request, web=web, **context)


async def test_my_conversations_come_a_page_at_a_time_past_asks_the_member_was_not_in(
    db: Database, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page is filled from the workspace's asks in batches, skipping asks the member took no part in; the next
    page starts below the last one shown; the scan is bounded however long the history."""
    h = await build(db, two_fact_world(), settings=settings)
    ws = h.service.workspace_id
    for colleague in ("bob", "bob", "bob", "erin", "erin", "erin"):
        await h.service.ask(AskRequest("alice", [colleague], QUESTION))
    every = await recent_asks(db, workspace_id=ws)  # newest first
    bobs = [a.id for a in every if "bob" in a.participants]
    assert 0 < len(bobs) < len(every) and every[0].id not in bobs  # the newest asks are not his
    monkeypatch.setattr(records, "SCAN_BATCH", 2)  # batches of two: his asks lie under others'

    first = await asks_of_member(db, ws, "bob", page=2)
    assert [a.id for a in first] == bobs[:2]
    rest = await asks_of_member(db, ws, "bob", before=first[-1].id, page=2)
    assert [a.id for a in rest] == bobs[2:4]
    assert [a.id for a in await asks_of_member(db, ws, "alice", page=4)] == [a.id for a in every[:4]]
    monkeypatch.setattr(records, "SCAN_LIMIT", 2)  # bounded: the two newest asks read, neither his
    assert await asks_of_member(db, ws, "bob", page=2) == []
