"""Saving an ask as it runs, and loading it back to resume.

Every write first renews the worker's claim (`heartbeat_at`) and fails with `ClaimLostError` when another worker has
taken the ask over, so a worker that was presumed dead can never write into an ask it no longer owns.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from datetime import UTC, datetime
from functools import cache
from typing import Any

from sqlalchemy import Integer, Update, bindparam, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from bot.agents.consensus import ConsensusOutcome
from bot.agents.memory_tools import QueryRecord
from bot.agents.multiparty import SavedConversation
from bot.agents.roster import Roster
from bot.agents.steps import StatementStep, TurnStep
from bot.asks import models
from bot.asks.claims import held_by_worker
from bot.errors import AskCancelledError, AskwithError, ClaimLostError
from bot.llm.types import LLMCallRecord
from bot.platform.port import ChatPort, ThreadRef
from bot.store.db import Database
from bot.texts import transcript_texts


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
        self._tail: asyncio.Future[None] | None = None  # the last pending write

    # ------------------------------------------------------------------ claim
    async def touch(self, conn: AsyncSession | AsyncConnection, calls: list[LLMCallRecord] | None = None) -> None:
        """Renew the claim (and count `calls` into the ask's cost); ClaimLostError when this worker no longer owns
        the ask."""
        params: dict[str, Any] = {"ask_id": self.ask_id, "worker": self.worker_id, "beat": now()}
        if calls:
            params.update(
                calls=len(calls),
                prompt=sum(c.prompt_tokens for c in calls),
                completion=sum(c.completion_tokens for c in calls),
            )
        result = await conn.execute(_touch_statement(bool(calls)), params)
        if result.rowcount != 1:
            raise ClaimLostError(f"ask #{self.ask_id} was taken over by another worker")

    async def heartbeat(self) -> bool:
        """Renew the claim (ClaimLostError if it was taken over); True when someone asked to cancel the ask
        (bot.asks.control). One statement, so a heartbeat stopped half-way never leaves a write open."""
        ask = models.Ask
        async with self.db.begin() as conn:
            row = (
                await conn.execute(
                    update(ask)
                    .where(ask.id == self.ask_id, ask.claimed_by == self.worker_id)
                    .values(heartbeat_at=now())
                    .returning(ask.cancel_requested_at)
                )
            ).first()
        if row is None:
            raise ClaimLostError(f"ask #{self.ask_id} was taken over by another worker")
        return row[0] is not None

    async def abort(self) -> None:
        """Drop the writes still pending (a cancelled ask's agents post nothing more, not even to the hidden
        thread); what was already saved stays."""
        tail, self._tail = self._tail, None
        if tail is not None and not tail.done():
            tail.cancel()
        if tail is not None:
            await asyncio.gather(tail, return_exceptions=True)

    # ------------------------------------------------------------------ write-behind
    # Turns are written in order by a chain of tasks, so the next LLM call never waits for the database or the
    # hidden-thread post. `flush()` waits for all of them; a failed write (ClaimLostError, say) is raised by the
    # next save or by `flush()`. A worker killed meanwhile loses at most the turn being written: it runs again.
    def _enqueue(self, write: Coroutine[Any, Any, None]) -> None:
        if self._tail is not None and self._tail.done() and self._tail.exception() is not None:
            write.close()
            raise self._tail.exception()  # type: ignore[misc]
        previous = self._tail

        async def after_previous() -> None:
            if previous is not None:
                try:
                    await previous
                except BaseException:
                    write.close()
                    raise
            await write

        self._tail = asyncio.ensure_future(after_previous())

    async def flush(self) -> None:
        if self._tail is not None:
            await self._tail

    # ------------------------------------------------------------------ conversations and turns
    async def open_conversation(
        self, *, parent_id: int | None, parent_turn: int | None, depth: int, participants: list[str], question: str
    ) -> int:
        row = {
            "ask_id": self.ask_id, "parent_id": parent_id, "parent_turn": parent_turn, "depth": depth,
            "participants": participants, "question": question, "created_at": now(),
        }  # fmt: skip
        async with self.db.begin() as conn:  # Core statements: no ORM object to flush
            await self.touch(conn)
            return (await conn.execute(_INSERT_CONVERSATION, row)).scalar_one()

    async def save_turn(self, conversation_id: int, step: TurnStep, *, depth: int) -> None:
        self._enqueue(self._write_turn(conversation_id, step, depth))

    async def close_conversation(self, conversation_id: int, *, stop_reason: str, conclusion: str) -> None:
        self._enqueue(self._write_close(conversation_id, stop_reason, conclusion))

    async def save_statement(self, conversation_id: int, step: StatementStep) -> None:
        """A side's closing statement: its LLM calls count into the ask's cost now; the statement itself is kept
        with the consensus it feeds (`save_outcome`)."""
        self._enqueue(self._write_calls(conversation_id, step.llm_calls))

    async def _write_calls(self, conversation_id: int, calls: list[LLMCallRecord]) -> None:
        async with self.db.begin() as conn:
            await self.touch(conn, calls)
            await self._insert_calls(conn, calls, conversation_id=conversation_id, turn_id=None)

    async def _write_turn(self, conversation_id: int, step: TurnStep, depth: int) -> None:
        # The hidden thread is a view for people; it is posted first so the record needs one transaction. A worker
        # killed in between runs the turn again, and the thread may show that turn twice; the record never does.
        posted = await self.publish(step.agent, step.utterance, depth)
        data = step.dict()
        async with self.db.begin() as conn:  # Core statements: a turn is a handful of round trips
            await self.touch(conn, step.llm_calls)
            row = {
                "conversation_id": conversation_id, "idx": step.index, "agent": step.agent, "plan": data["plan"],
                "think": data["think"], "utterance": step.utterance, "solved": len(step.update.solved),
                "fake_solved": len(step.update.fake_solved), "data": data, "posted": posted, "created_at": now(),
            }  # fmt: skip
            turn_id = (await conn.execute(_INSERT_TURN, row)).scalar_one()
            if step.queries:
                rows = [_query_row(turn_id, step.agent, q) for q in step.queries]
                await conn.execute(insert(models.MemoryQuery), rows)
            await self._insert_calls(conn, step.llm_calls, conversation_id=conversation_id, turn_id=turn_id)

    async def _write_close(self, conversation_id: int, stop_reason: str, conclusion: str) -> None:
        async with self.db.begin() as conn:
            await self.touch(conn)
            await conn.execute(
                update(models.Conversation)
                .where(models.Conversation.id == conversation_id)
                .values(status="done", stop_reason=stop_reason, conclusion=conclusion)
            )

    async def publish(self, agent: str, utterance: str, depth: int) -> bool:
        """Show a turn in the hidden thread; False if it could not be posted (logged: the record is the truth)."""
        if not utterance:
            return False
        text = transcript_texts.hidden_turn((await self.roster.identity(agent)).display_name, utterance, depth)
        try:
            await self.port.post(self.thread.channel_id, text, thread_id=self.thread.thread_id)
        except AskwithError as exc:
            log.warning("ask #%s: could not post a turn to the hidden thread: %s", self.ask_id, exc)
            return False
        return True

    async def _insert_calls(
        self,
        conn: AsyncSession | AsyncConnection,
        calls: list[LLMCallRecord],
        *,
        conversation_id: int | None,
        turn_id: int | None,
    ) -> None:
        if calls:
            rows = [_call_row(self.ask_id, conversation_id, turn_id, call) for call in calls]
            await conn.execute(insert(models.LLMCall), rows)

    # ------------------------------------------------------------------ the end of an ask
    async def save_outcome(
        self,
        consensus: ConsensusOutcome | None,
        *,
        answer: str | None,
        failure: str | None,
        final_text: str,
        wall_s: float,
        cancelling: bool = False,
    ) -> None:
        """Save the ask's end. Unless `cancelling`, only while no cancel was recorded (AskCancelledError then, and
        nothing is saved): an ask ends either answered or cancelled, never both."""
        await self.flush()
        calls = [consensus.llm_call] if consensus is not None and consensus.llm_call is not None else []
        async with self.db.begin() as conn:
            # First, one statement renews the claim (as `touch` does), counts the consensus call and saves the end;
            # when it changes nothing, `touch` tells a lost claim from a cancel.
            ask = models.Ask
            stmt = update(ask).where(ask.id == self.ask_id, ask.claimed_by == self.worker_id)
            if not cancelling:
                stmt = stmt.where(ask.cancel_requested_at.is_(None))
            cost = {
                "llm_calls": ask.llm_calls + len(calls),
                "prompt_tokens": ask.prompt_tokens + sum(c.prompt_tokens for c in calls),
                "completion_tokens": ask.completion_tokens + sum(c.completion_tokens for c in calls),
            }
            saved = await conn.execute(
                stmt.values(heartbeat_at=now(), **(cost if calls else {}), answer=answer, failure=failure,
                            final_text=final_text, wall_s=ask.wall_s + wall_s)
            )  # fmt: skip
            if saved.rowcount != 1:
                await self.touch(conn)  # ClaimLostError when another worker holds the ask now
                raise AskCancelledError(f"ask #{self.ask_id} was cancelled before its end was saved")
            if consensus is not None:
                await conn.execute(
                    insert(models.Consensus),
                    {
                        "ask_id": self.ask_id, "answer": consensus.answer, "agreed": consensus.agreed,
                        "statements_agree": consensus.statements_agree, "ratio": consensus.ratio,
                        "data": consensus.dict(), "created_at": now(),
                    },
                )  # fmt: skip
                await self._insert_calls(conn, calls, conversation_id=None, turn_id=None)

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
        return saved


async def _turns_by_conversation(session: AsyncSession, ids: list[int]) -> dict[int, dict[int, models.Turn]]:
    if not ids:
        return {}
    rows = (await session.execute(select(models.Turn).where(models.Turn.conversation_id.in_(ids)))).scalars()
    out: dict[int, dict[int, models.Turn]] = {}
    for turn in rows:
        out.setdefault(turn.conversation_id, {})[turn.idx] = turn
    return out


# Statements an ask runs at every turn, built once (bind parameters carry the values).
_INSERT_TURN = insert(models.Turn.__table__).returning(models.Turn.__table__.c.id)
_INSERT_CONVERSATION = insert(models.Conversation.__table__).returning(models.Conversation.__table__.c.id)


@cache
def _touch_statement(with_cost: bool) -> Update:
    """Renew the claim (`ask_id`, `worker`, `beat`); with the cost, add `calls`, `prompt` and `completion`."""
    ask = models.Ask.__table__
    values: dict[str, Any] = {"heartbeat_at": bindparam("beat", type_=ask.c.heartbeat_at.type)}
    if with_cost:
        values.update(
            llm_calls=ask.c.llm_calls + bindparam("calls", type_=Integer),
            prompt_tokens=ask.c.prompt_tokens + bindparam("prompt", type_=Integer),
            completion_tokens=ask.c.completion_tokens + bindparam("completion", type_=Integer),
        )
    return update(ask).where(held_by_worker()).values(**values)


def _query_row(turn_id: int, agent: str, query: QueryRecord) -> dict[str, Any]:
    return {
        "turn_id": turn_id, "agent": agent, "kind": query.kind, "params": query.params, "hit_ids": query.hit_ids,
        "error": query.error, "skipped": query.skipped, "latency_s": query.latency_s,
    }  # fmt: skip


def _call_row(ask_id: int, conversation_id: int | None, turn_id: int | None, call: LLMCallRecord) -> dict[str, Any]:
    return {
        "ask_id": ask_id, "conversation_id": conversation_id, "turn_id": turn_id, "purpose": call.purpose,
        "model": call.model, "prompt_tokens": call.prompt_tokens, "completion_tokens": call.completion_tokens,
        "latency_s": call.latency_s, "attempts": call.attempts, "json_mode": call.json_mode,
        "repaired": call.repaired, "cached": call.cached, "error": call.error,
    }  # fmt: skip
