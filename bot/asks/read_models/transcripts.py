"""Transcripts: the stored ask, whole (every turn, search and call), for no one audience. People read it only through
`ask_view.view_for`, which keeps what one viewer may see; operators' figures (bench, metrics) read it whole.

asks = await list_asks(db, limit=20)
transcript = await load_transcript(db, ask_id)
transcript.conversations[0].turns[0].plan, transcript.cost(), behaviour(transcript)
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import defer

from bot.asks import models
from bot.errors import AskNotFoundError
from bot.store.db import Database


@dataclass
class StoredConversation:
    """One stored conversation, whole: its row, turns and searches (`ask_view.ConversationView` is one viewer's)."""

    row: models.Conversation
    turns: list[models.Turn]
    queries: dict[int, list[models.MemoryQuery]]  # turn id -> queries
    children: list[StoredConversation] = field(default_factory=list)


@dataclass
class Cost:
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    by_purpose: dict[str, int]
    llm_seconds: float  # summed latency of every call (not wall time: calls overlap)
    wall_s: float
    by_model: dict[str, int] = field(default_factory=dict)  # two models with the privacy split (main, private)


@dataclass
class Transcript:
    ask: models.Ask
    conversations: list[StoredConversation]  # top level; sub-conversations hang below their parent
    calls: list[models.LLMCall]
    consensus: models.Consensus | None

    def all_conversations(self) -> list[StoredConversation]:
        out: list[StoredConversation] = []
        stack = list(reversed(self.conversations))
        while stack:
            view = stack.pop()
            out.append(view)
            stack.extend(reversed(view.children))
        return out

    def cost(self) -> Cost:
        by_purpose: dict[str, int] = defaultdict(int)
        by_model: dict[str, int] = defaultdict(int)
        for call in self.calls:
            by_purpose[call.purpose] += 1
            by_model[call.model] += 1
        return Cost(
            llm_calls=len(self.calls),
            prompt_tokens=sum(c.prompt_tokens for c in self.calls),
            completion_tokens=sum(c.completion_tokens for c in self.calls),
            by_purpose=dict(by_purpose),
            llm_seconds=sum(c.latency_s for c in self.calls),
            wall_s=self.ask.wall_s,
            by_model=dict(by_model),
        )


async def list_asks(db: Database, *, limit: int = 20) -> list[models.Ask]:
    async with db.session() as session:
        rows = await session.execute(select(models.Ask).order_by(models.Ask.id.desc()).limit(limit))
        return list(rows.scalars())


async def load_transcript(db: Database, ask_id: int, *, ask: models.Ask | None = None) -> Transcript:
    """The stored ask, whole; `ask`: its row, when the caller has just read it (not read again)."""
    async with db.session() as session:
        return await read_transcript(session, ask_id, ask=ask)


async def read_transcript(
    session: AsyncSession, ask_id: int, *, ask: models.Ask | None = None, think: bool = True
) -> Transcript:
    """`load_transcript` in a session the caller holds (a page reads the rest of what it shows in the same one).
    `think=False`: the turns' think output (a copy of what `data` keeps of it) is not read, for readers that never
    show it (`ask_view.view_for`); reading it then raises instead of loading it."""
    if ask is None or ask.id != ask_id:
        ask = await session.get(models.Ask, ask_id)
    if ask is None:
        raise AskNotFoundError(ask_id)
    conversation, turn, query = models.Conversation, models.Turn, models.MemoryQuery
    in_ask = select(conversation).where(conversation.ask_id == ask_id).order_by(conversation.id)
    conversations = list((await session.execute(in_ask)).scalars())
    in_conversations = select(turn).where(turn.conversation_id.in_([c.id for c in conversations])).order_by(turn.idx)
    if not think:
        in_conversations = in_conversations.options(defer(turn.think, raiseload=True))
    turns = list((await session.execute(in_conversations)).scalars())
    in_turns = select(query).where(query.turn_id.in_([t.id for t in turns])).order_by(query.id)
    queries = list((await session.execute(in_turns)).scalars())
    calls = list((await session.execute(select(models.LLMCall).where(models.LLMCall.ask_id == ask_id))).scalars())
    consensus = (
        await session.execute(select(models.Consensus).where(models.Consensus.ask_id == ask_id))
    ).scalar_one_or_none()
    return Transcript(ask, _tree(conversations, turns, queries), calls, consensus)


def _tree(
    conversations: list[models.Conversation], turns: list[models.Turn], queries: list[models.MemoryQuery]
) -> list[StoredConversation]:
    by_turn: dict[int, list[models.MemoryQuery]] = defaultdict(list)
    for query in queries:
        by_turn[query.turn_id].append(query)
    views = {
        c.id: StoredConversation(c, [t for t in turns if t.conversation_id == c.id], by_turn) for c in conversations
    }
    roots = []
    for conversation in conversations:
        if conversation.parent_id is None:
            roots.append(views[conversation.id])
        elif conversation.parent_id in views:
            views[conversation.parent_id].children.append(views[conversation.id])
    return roots
