"""End to end with the scripted model: the answer needs one fact from Alice's memory and one from Bob's."""

from __future__ import annotations

from sqlalchemy import select

from bot.asks import models
from bot.asks.service import AskRequest
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import World
from tests.fakes.asks import CODE_NAME, LAUNCH, QUESTION, build, two_fact_world
from tests.fakes.records import session_channels


def _message_id(world: World, text: str) -> str:
    return next(m.id for msgs in world.messages.values() for m in msgs if m.text == text)


def _visible_ids(world: World, handle: str) -> set[str]:
    return {m.id for c in world.visible_channels(handle) for m in world.messages[c.id]}


async def _turns(db: Database, ask_id: int) -> list[models.Turn]:
    async with db.session() as session:
        rows = await session.execute(
            select(models.Turn)
            .join(models.Conversation, models.Conversation.id == models.Turn.conversation_id)
            .where(models.Conversation.ask_id == ask_id)
            .order_by(models.Turn.conversation_id, models.Turn.idx)
        )
        return list(rows.scalars())


async def test_each_agent_finds_its_own_fact_and_consensus_combines_them(db: Database, settings: Settings) -> None:
    world = two_fact_world()
    h = await build(db, world, settings=settings, fuzzy=True)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert outcome.status == "done", outcome.final_text
    assert "Bluebird" in outcome.answer and "14 March" in outcome.answer
    code_id, launch_id = _message_id(world, CODE_NAME), _message_id(world, LAUNCH)
    turns = await _turns(db, outcome.ask_id)
    # Bob's agent filled the part Alice's agent missed (and heard hers): the talk ends there, no round to repeat it.
    assert [t.agent for t in turns] == ["alice", "bob"]
    hits = {t.agent: {h for q in t.data["queries"] for h in q["hit_ids"]} for t in turns if t.idx < 2}
    assert code_id in hits["alice"] and launch_id not in hits["alice"]
    assert launch_id in hits["bob"] and code_id not in hits["bob"]
    for turn in turns:  # every hit comes from what that member can see, in clear and fuzzy memory alike
        seen = {h for q in turn.data["queries"] for h in q["hit_ids"]}
        sessions = {h.removeprefix("session:") for h in seen if h.startswith("session:")}
        assert seen - {f"session:{k}" for k in sessions} <= _visible_ids(world, turn.agent)
        channels = {c.id for c in world.visible_channels(turn.agent)}
        assert await session_channels(db, sessions) <= channels
    assert any(q["kind"] == "fuzzy" and q["hit_ids"] for t in turns for q in t.data["queries"])

    # InfoNav: statuses move unknown -> known, turn by turn
    alice_first, bob_turn = turns
    assert [r["status"] for r in alice_first.plan] == ["known", "unknown"]
    assert alice_first.plan[0]["source"] == code_id
    assert [r["status"] for r in bob_turn.plan] == ["known", "known"]
    assert bob_turn.plan[1]["source"] == launch_id and bob_turn.plan[0]["source"].startswith("alice:")
    assert (alice_first.solved, bob_turn.solved) == (1, 2)

    # consensus combines both, citing a rationale from each agent's own memory
    result = outcome.result
    assert result is not None and result.consensus is not None
    assert result.conversations[0].stop_reason == "colleague_answered"
    consensus = result.consensus
    assert consensus.agreed and consensus.statements_agree
    cited_sources = {consensus.rationales[k].source for k in consensus.cited}
    assert {code_id, launch_id} <= cited_sources
    assert consensus.ratio == 1.0


async def test_final_post_reaches_requester_once_and_hidden_thread_shows_the_talk(
    db: Database, settings: Settings
) -> None:
    world = two_fact_world()
    h = await build(db, world, settings=settings)

    outcome = await h.service.ask(AskRequest("@alice", ["@bob", "alice"], QUESTION))

    dm = world.dm(world.bot_id, "alice").id
    finals = [m for m in world.messages[dm] if f"transcripts show {outcome.ask_id}" in m.text]
    assert len(finals) == 1 and "Bluebird" in finals[0].text
    ask = await h.service.load(outcome.ask_id)
    assert ask.final_post == "posted" and ask.final_message_id == finals[0].id and ask.status == "done"
    thread = [m for m in world.messages[ask.hidden_channel_id] if m.thread_id == ask.hidden_thread_id]
    assert [m.text.split("'s agent")[0] for m in thread] == ["Alice", "Bob"]
    assert ask.llm_calls == 5 and ask.prompt_tokens > 0  # 2 turns x (think + act) + consensus
    # Bob's agent shared facts from Bob's memory: Bob is told what and with whom.
    bob_dm = world.dm(world.bot_id, "bob").id
    assert any("Alice" in m.text and "14 March" in m.text for m in world.messages[bob_dm])
