"""Saving an ask as it runs, and loading it back to resume.

Every write first renews the worker's claim (`heartbeat_at`) and fails with `ClaimLostError` when another worker has
taken the ask over, so a worker that was presumed dead can never write into an ask it no longer owns.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot import messages
from bot.agents.consensus import ConsensusOutcome
from bot.agents.multiparty import SavedConversation
from bot.agents.roster import Roster
from bot.agents.steps import TurnStep
from bot.asks import models
from bot.errors import AskwithError, ClaimLostError
from bot.llm.types import LLMCallRecord
from bot.port import ChatPort, ThreadRef
from bot.store.db import Database


log = logging.getLogger(__name__)


def now() -> datetime:
    return datetime.now(UTC)


class AskRecorder:
    """The `ConversationRecorder` of one claimed ask; also posts each turn into the ask's hidden thread."""

    def __init__(
        self, db: Database, port: ChatPort, roster: Roster, *, ask_id: int, worker_id: str, thread: ThreadRef
    ) -> None:
        self.db = db
        self.port = port
        self.roster = roster  # display names for hidden-thread lines
        self.ask_id = ask_id
        self.worker_id = worker_id
        self.thread = thread

    # ------------------------------------------------------------------ claim
    async def touch(self, session: AsyncSession) -> None:
        """Renew the claim; ClaimLostError when this worker no longer owns the ask."""
        result = await session.execute(
            update(models.Ask)
            .where(models.Ask.id == self.ask_id, models.Ask.claimed_by == self.worker_id)
            .values(heartbeat_at=now())
        )
        if result.rowcount != 1:
            raise ClaimLostError(f"ask #{self.ask_id} was taken over by another worker")

    async def heartbeat(self) -> None:
        async with self.db.session() as session, session.begin():
            await self.touch(session)

    # ------------------------------------------------------------------ conversations and turns
    async def open_conversation(
        self, *, parent_id: int | None, parent_turn: int | None, depth: int, participants: list[str], question: str
    ) -> int:
        row = models.Conversation(
            ask_id=self.ask_id, parent_id=parent_id, parent_turn=parent_turn, depth=depth,
            participants=participants, question=question, created_at=now(),
        )  # fmt: skip
        async with self.db.session() as session, session.begin():
            await self.touch(session)
            session.add(row)
            await session.flush()
            return row.id

    async def save_turn(self, conversation_id: int, step: TurnStep, *, depth: int) -> None:
        data = step.dict()
        async with self.db.session() as session, session.begin():
            await self.touch(session)
            turn = models.Turn(
                conversation_id=conversation_id, idx=step.index, agent=step.agent, plan=data["plan"],
                think=data["think"], utterance=step.utterance, solved=len(step.update.solved),
                fake_solved=len(step.update.fake_solved), data=data, posted=False, created_at=now(),
            )  # fmt: skip
            session.add(turn)
            await session.flush()
            for query in step.queries:
                session.add(
                    models.MemoryQuery(
                        turn_id=turn.id,
                        agent=step.agent,
                        kind=query.kind,
                        params=query.params,
                        hit_ids=query.hit_ids,
                        error=query.error,
                        skipped=query.skipped,
                        latency_s=query.latency_s,
                    )  # fmt: skip
                )
            await self._add_calls(session, step.llm_calls, conversation_id=conversation_id, turn_id=turn.id)
            turn_id = turn.id
        await self.publish(turn_id, step.agent, step.utterance, depth)

    async def close_conversation(self, conversation_id: int, *, stop_reason: str, conclusion: str) -> None:
        async with self.db.session() as session, session.begin():
            await self.touch(session)
            await session.execute(
                update(models.Conversation)
                .where(models.Conversation.id == conversation_id)
                .values(status="done", stop_reason=stop_reason, conclusion=conclusion)
            )

    async def publish(self, turn_id: int, agent: str, utterance: str, depth: int) -> None:
        """Show a saved turn in the hidden thread (a failure to post is logged: the record is the truth)."""
        if not utterance:
            return
        text = messages.hidden_turn((await self.roster.profile(agent)).display_name, utterance, depth)
        try:
            await self.port.post(self.thread.channel_id, text, thread_id=self.thread.thread_id)
        except AskwithError as exc:
            log.warning("ask #%s: could not post a turn to the hidden thread: %s", self.ask_id, exc)
            return
        async with self.db.session() as session, session.begin():
            await session.execute(update(models.Turn).where(models.Turn.id == turn_id).values(posted=True))

    async def _add_calls(
        self, session: AsyncSession, calls: list[LLMCallRecord], *, conversation_id: int | None, turn_id: int | None
    ) -> None:
        for call in calls:
            session.add(
                models.LLMCall(
                    ask_id=self.ask_id,
                    conversation_id=conversation_id,
                    turn_id=turn_id,
                    purpose=call.purpose,
                    model=call.model,
                    prompt_tokens=call.prompt_tokens,
                    completion_tokens=call.completion_tokens,
                    latency_s=call.latency_s,
                    attempts=call.attempts,
                    json_mode=call.json_mode,
                    repaired=call.repaired,
                    cached=call.cached,
                    error=call.error,
                )  # fmt: skip
            )
        if calls:
            ask = models.Ask
            await session.execute(
                update(ask)
                .where(ask.id == self.ask_id)
                .values(
                    llm_calls=ask.llm_calls + len(calls),
                    prompt_tokens=ask.prompt_tokens + sum(c.prompt_tokens for c in calls),
                    completion_tokens=ask.completion_tokens + sum(c.completion_tokens for c in calls),
                )
            )

    # ------------------------------------------------------------------ the end of an ask
    async def save_outcome(
        self,
        consensus: ConsensusOutcome | None,
        *,
        answer: str | None,
        failure: str | None,
        final_text: str,
        wall_s: float,
    ) -> None:
        async with self.db.session() as session, session.begin():
            await self.touch(session)
            if consensus is not None:
                session.add(
                    models.Consensus(
                        ask_id=self.ask_id,
                        answer=consensus.answer,
                        agreed=consensus.agreed,
                        statements_agree=consensus.statements_agree,
                        ratio=consensus.ratio,
                        data=consensus.dict(),
                        created_at=now(),
                    )  # fmt: skip
                )
                if consensus.llm_call is not None:
                    await self._add_calls(session, [consensus.llm_call], conversation_id=None, turn_id=None)
            await session.execute(
                update(models.Ask)
                .where(models.Ask.id == self.ask_id)
                .values(answer=answer, failure=failure, final_text=final_text, wall_s=models.Ask.wall_s + wall_s)
            )

    # ------------------------------------------------------------------ resuming
    async def load_saved(self) -> dict[str, SavedConversation]:
        """Top-level conversations by colleague, with their saved turns. Sub-conversations whose parent turn was
        never saved (the worker died inside that turn) are marked abandoned: the turn will run again."""
        async with self.db.session() as session, session.begin():
            await self.touch(session)
            rows = (
                await session.execute(select(models.Conversation).where(models.Conversation.ask_id == self.ask_id))
            ).scalars()
            conversations = list(rows)
            turns = await _turns_by_conversation(session, [c.id for c in conversations])
            for child in conversations:
                if child.parent_id is not None and child.parent_turn not in turns.get(child.parent_id, {}):
                    child.status = "abandoned"
        saved: dict[str, SavedConversation] = {}
        for row in conversations:
            if row.parent_id is None:
                steps = [TurnStep.from_dict(t.data) for _, t in sorted(turns.get(row.id, {}).items())]
                stop = row.stop_reason if row.status == "done" else None
                saved[row.participants[1]] = SavedConversation(row.id, row.participants[1], steps, stop)
                await self._republish(turns.get(row.id, {}).values(), depth=0)
        return saved

    async def _republish(self, turns: Any, *, depth: int) -> None:
        for turn in sorted(turns, key=lambda t: t.idx):
            if not turn.posted:
                await self.publish(turn.id, turn.agent, turn.utterance, depth)


async def _turns_by_conversation(session: AsyncSession, ids: list[int]) -> dict[int, dict[int, models.Turn]]:
    if not ids:
        return {}
    rows = (await session.execute(select(models.Turn).where(models.Turn.conversation_id.in_(ids)))).scalars()
    out: dict[int, dict[int, models.Turn]] = {}
    for turn in rows:
        out.setdefault(turn.conversation_id, {})[turn.idx] = turn
    return out
