"""A member's `/askwith forget` (`bot.asks.forget.forget_member`) deletes that member's memory the way a workspace's
deletion does, scoped to them: their tokens, their opt-in, what only they could see with its sessions, summaries and
vectors, their asks with their transcripts. Every other member's rows stay, counted table by table."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import func, select

from bot.asks import models as ask_models
from bot.asks.forget import count_workspace_rows, forget_member
from bot.store import models
from bot.store.action_tokens import ActionTokenStore
from bot.store.db import Database
from bot.store.user_tokens import TokenCipher, UserTokenGrant, UserTokenStore
from bot.store.world_mirror import mirror_world
from tests.fakes.asks import two_fact_world


class DroppedVectors:
    def __init__(self) -> None:
        self.dropped: list[str] = []

    async def drop_vectors(self, workspace_id: int, session_keys: list[str]) -> None:
        self.dropped.extend(session_keys)


async def _ask(db: Database, workspace_id: int, requester: str) -> None:
    """An ask with a conversation and a turn: its transcript."""
    now = datetime.now(UTC)
    async with db.session() as session, session.begin():
        ask = ask_models.Ask(
            workspace_id=workspace_id, requester=requester, colleagues=["bob"], question="When?", created_at=now
        )
        session.add(ask)
        await session.flush()
        conversation = ask_models.Conversation(ask_id=ask.id, participants=[requester, "bob"], question="When?",
                                               created_at=now)  # fmt: skip
        session.add(conversation)
        await session.flush()
        session.add(ask_models.Turn(conversation_id=conversation.id, idx=0, agent=requester, data={}, created_at=now))


async def _rows_of(db: Database, table: type, **where: object) -> int:
    async with db.session() as session:
        query = select(func.count()).select_from(table).filter_by(**where)
        return int(await session.scalar(query))


async def test_forget_member_deletes_only_that_members_memory(db: Database) -> None:
    world = two_fact_world()
    workspace_id = await mirror_world(db, world)
    tokens = UserTokenStore(db, TokenCipher(TokenCipher.new_key()))
    await tokens.save(UserTokenGrant("local", world.id, "alice", "xoxp-alice", ()))
    await tokens.save(UserTokenGrant("local", world.id, "bob", "xoxp-bob", ()))
    granted = ActionTokenStore(db, tokens.cipher, platform="local", workspace_external_id=world.id, keep_s=900)
    await granted.remember("alice", "action-alice")
    await granted.remember("bob", "action-bob")
    await _ask(db, workspace_id, "alice")
    await _ask(db, workspace_id, "bob")
    await _sessions(db, workspace_id)
    key = ("local", world.id)
    before = await count_workspace_rows(db, workspace_id, key)
    notes = await _rows_of(db, models.Message, channel_id=await _channel(db, "C-notes"))
    assert notes == 2 and before["ask"] == 2 and before["turn"] == 2 and before["user_token"] == 2, before

    vectors = DroppedVectors()
    deleted = await forget_member(db, workspace_id, "alice", other_readers={"bob"}, vectors=vectors)

    after = await count_workspace_rows(db, workspace_id, key)
    # alice's notes (only she reads them) go with their session; the DM with bob stays: bob reads it too
    assert deleted["channel"] == 1 and deleted["message"] == 2 and deleted["ask"] == 1, deleted
    assert after["message"] == before["message"] - 2 and await _channel(db, "C-notes") is None
    assert after["memory_session"] == before["memory_session"] - 1 and len(vectors.dropped) == 1
    assert (after["user_token"], after["ask"], after["conversation"], after["turn"]) == (1, 1, 1, 1), after
    assert await _rows_of(db, ask_models.Ask, requester="bob") == 1
    assert [g.member_platform_id for g in await tokens.grants("local", world.id)] == ["bob"]
    assert deleted["action_token"] == 1 and await granted.get("alice") is None and await granted.get("bob")
    assert await _opted_in(db, "alice") is False and await _opted_in(db, "bob") is True
    assert (after["member"], after["workspace"]) == (before["member"], before["workspace"])
    assert after["channel"] == before["channel"] - 1


async def _sessions(db: Database, workspace_id: int) -> None:
    """One memory session per channel, as the indexer makes them (the rows forgetting must delete)."""
    async with db.session() as session, session.begin():
        channels = await session.execute(select(models.Channel.id).where(models.Channel.workspace_id == workspace_id))
        now = datetime.now(UTC)
        for channel_id in channels.scalars():
            session.add(models.MemorySession(key=f"s{channel_id}", workspace_id=workspace_id, channel_id=channel_id,
                                             content_hash=f"h{channel_id}", first_ts=now, last_ts=now,
                                             message_count=1))  # fmt: skip


async def _channel(db: Database, platform_id: str) -> int | None:
    async with db.session() as session:
        return await session.scalar(select(models.Channel.id).where(models.Channel.platform_id == platform_id))


async def _opted_in(db: Database, handle: str) -> bool | None:
    async with db.session() as session:
        return await session.scalar(select(models.Member.opted_in).where(models.Member.platform_id == handle))


async def test_forget_member_deletes_what_their_agent_shared_in_others_asks(db: Database) -> None:
    world = two_fact_world()
    workspace_id = await mirror_world(db, world)
    await _ask(db, workspace_id, "bob")
    now = datetime.now(UTC)
    async with db.session() as session, session.begin():
        ask_id = await session.scalar(select(ask_models.Ask.id).where(ask_models.Ask.requester == "bob"))
        conversation = await session.scalar(select(ask_models.Conversation.id))
        shared = {"released": ["C-notes:1"], "evidence": ["alice's private line"]}
        session.add(ask_models.Turn(conversation_id=conversation, idx=1, agent="alice", data=shared, created_at=now))
        for member in ("alice", "bob"):
            session.add(ask_models.Approval(id=f"a-{member}", ask_id=ask_id, member_id=member, created_at=now,
                                            deadline_at=now))  # fmt: skip

    deleted = await forget_member(db, workspace_id, "alice", other_readers={"bob"})

    assert deleted["turn"] == 1 and deleted["approval"] == 1, deleted
    assert await _rows_of(db, ask_models.Turn, agent="alice") == 0
    assert await _rows_of(db, ask_models.Turn, agent="bob") == 1  # bob's own turn and ask stay
    assert await _rows_of(db, ask_models.Ask, requester="bob") == 1
    assert await _rows_of(db, ask_models.Approval, member_id="bob") == 1
