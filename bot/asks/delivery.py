"""Delivering an ask's result: notices to colleagues about what their agents shared, and the ONE final post.

Exactly one final post, even when a worker is killed at any instant:
1. In one conditional update, the ask moves `final_post` none -> posting (only the claim holder can do this).
2. The post is made.
3. The ask moves posting -> posted, with the message id.
A worker that finds `posting` (its predecessor died between 1 and 3, so the post may or may not have gone out)
first looks for the post in the destination's history (the text carries the ask's transcript reference) and only
posts if it is not there. Recording *before* posting alone could lose the answer (crash after 1); recording only
*after* posting could send it twice (crash between 2 and 3); the history check closes that window. Only a
destination whose history cannot be read falls back to posting again, preferring a rare duplicate to silence.
Notices are informational and sent at most once per ask by the `notices_posted` flag (set after sending).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Update, bindparam, select, update

from bot.asks import models
from bot.asks.claims import held_by_worker
from bot.asks.read_models.answer_view import AnswerView
from bot.asks.read_models.transcripts import Transcript
from bot.asks.record import AskRecorder
from bot.errors import AskwithError, ClaimLostError
from bot.platform.port import ChatPort, FinalAnswer
from bot.store.db import Database
from bot.texts import approval_texts, transcript_texts


log = logging.getLogger(__name__)
HISTORY_SCAN_LIMIT = 2000  # messages read back when checking whether a final post already went out


ViewOf = Callable[[models.Ask], Awaitable[AnswerView | None]]  # the answer as its requester sees it (None: unreadable)


class Delivery:
    def __init__(self, db: Database, port: ChatPort, recorder: AskRecorder, *, view_of: ViewOf | None = None) -> None:
        self.db = db
        self.port = port
        self.recorder = recorder
        self._view_of = view_of  # None: the final post is its text alone

    async def final_post(self, ask: models.Ask, requester_platform_id: str, *, status: str) -> str | None:
        """Post `ask.final_text` to the requester once; returns the message id (None if it was already posted)."""
        channel_id = ask.origin_channel_id or await self.port.open_dm(requester_platform_id)
        thread_id = ask.origin_thread_id if ask.origin_channel_id else None
        state = await self._begin(ask.id, channel_id)
        if state == models.FinalPost.POSTED:
            return None
        text = ask.final_text or ""
        if state == models.FinalPost.POSTING and await self._already_posted(ask.id, channel_id, thread_id):
            await self._finish(ask.id, status, message_id=None)
            return None
        view = await self._view_of(ask) if self._view_of is not None else None
        answer = FinalAnswer(ask.id, text, requester_platform_id, ask.origin_channel_id is not None, view=view)
        message_id = await self.port.post_answer(channel_id, answer, thread_id=thread_id)
        await self._finish(ask.id, status, message_id=message_id)
        return message_id

    async def _begin(self, ask_id: int, channel_id: str) -> models.FinalPost:
        """Move none -> posting; returns the state found before (none, posting or posted)."""
        async with self.db.begin() as conn:  # Core statements: no ORM objects are loaded here
            # The usual case (none, the claim held) is one statement: the claim renewed as the post begins.
            moved = await conn.execute(_BEGIN_POST, self._claim(ask_id) | {"channel_id": channel_id})
            if moved.rowcount == 1:
                return models.FinalPost.NONE
            await self.recorder.touch(conn)  # ClaimLostError when the claim is gone; else the post had begun
            current = (await conn.execute(select(models.Ask.final_post).where(models.Ask.id == ask_id))).scalar_one()
        return models.FinalPost(current)

    async def _finish(self, ask_id: int, status: str, *, message_id: str | None) -> None:
        async with self.db.begin() as conn:
            result = await conn.execute(
                update(models.Ask)
                .where(models.Ask.id == ask_id, models.Ask.claimed_by == self.recorder.worker_id)
                .values(
                    final_post=models.FinalPost.POSTED.value,
                    final_message_id=message_id,
                    status=status,
                    finished_at=datetime.now(UTC),
                )
            )
            if result.rowcount != 1:
                raise ClaimLostError(f"ask #{ask_id} was taken over while its answer was being posted")

    async def _already_posted(self, ask_id: int, channel_id: str, thread_id: str | None) -> bool:
        marker = transcript_texts.transcript_ref(ask_id)
        cursor: str | None = None
        seen = 0
        try:
            while seen < HISTORY_SCAN_LIMIT:
                if thread_id:
                    page = await self.port.read_replies(channel_id, thread_id, cursor=cursor)
                else:
                    page = await self.port.read_history(channel_id, cursor=cursor)
                if any(marker in m.text for m in page.messages):
                    return True
                seen += len(page.messages)
                if not page.has_more:
                    return False
                cursor = page.cursor
        except AskwithError as exc:
            log.warning("ask #%s: cannot read %s to check for an earlier final post: %s", ask_id, channel_id, exc)
        return False

    # ------------------------------------------------------------------ notices
    async def notices(
        self,
        ask: models.Ask,
        requester_display: str,
        platform_ids: dict[str, str],
        *,
        record: Transcript | None = None,
    ) -> None:
        """Tell each colleague what their agent shared in this ask, and with whom. `record`: the ask's stored record,
        when the caller has just read it (its turns are not read again)."""
        if ask.notices_posted:
            return
        shared = _shared_in(record) if record is not None else await self._shared_by_member(ask)
        for handle, utterances in shared.items():
            if handle == ask.requester or handle not in platform_ids:
                continue
            try:
                channel_id = await self.port.open_dm(platform_ids[handle])
                await self.port.post(
                    channel_id, approval_texts.share_notice(requester_display, ask.question, utterances)
                )
            except AskwithError as exc:
                log.warning("ask #%s: could not send %s a share notice: %s", ask.id, handle, exc)
        async with self.db.begin() as conn:  # the claim renewed and the notices marked in one statement
            if (await conn.execute(_NOTICES_POSTED, self._claim(ask.id))).rowcount != 1:
                raise ClaimLostError(f"ask #{ask.id} was taken over by another worker")

    def _claim(self, ask_id: int) -> dict[str, Any]:
        """The parameters of a statement renewing this worker's claim on `ask_id` (`_claimed_update`)."""
        return {"ask_id": ask_id, "worker": self.recorder.worker_id, "beat": datetime.now(UTC)}

    async def _shared_by_member(self, ask: models.Ask) -> dict[str, list[str]]:
        stmt = (
            select(models.Turn.agent, models.Turn.utterance, models.Turn.data)
            .join(models.Conversation, models.Conversation.id == models.Turn.conversation_id)
            .where(models.Conversation.ask_id == ask.id, models.Conversation.status != "abandoned")
            .order_by(models.Turn.conversation_id, models.Turn.idx)
        )
        async with self.db.read() as conn:
            rows = (await conn.execute(stmt)).all()
        return _shared_by_agent(rows)


def _shared_in(record: Transcript) -> dict[str, list[str]]:
    """`Delivery._shared_by_member`, from an ask's record read already: the same turns, in the same order."""
    kept = sorted((c for c in record.all_conversations() if c.row.status != "abandoned"), key=lambda c: c.row.id)
    turns = [t for c in kept for t in sorted(c.turns, key=lambda turn: turn.idx)]
    return _shared_by_agent([(t.agent, t.utterance, t.data) for t in turns])


def _shared_by_agent(turns: Iterable[tuple[str, str, dict[str, Any]]]) -> dict[str, list[str]]:
    """Agent -> the utterances of its turns that shared facts (and were not declined), in order."""
    shared: dict[str, list[str]] = {}
    for agent, utterance, data in turns:
        if data.get("shared_facts") and not data.get("declined"):
            shared.setdefault(agent, []).append(utterance)
    return shared


def _claimed_update(**values: Any) -> Update:  # noqa: ANN401 - column values
    """Renew the claim (`ask_id`, `worker`, `beat`, as `AskRecorder.touch` does) and set `values`, in one statement."""
    ask = models.Ask.__table__
    return (
        update(ask)
        .where(held_by_worker())
        .values(heartbeat_at=bindparam("beat", type_=ask.c.heartbeat_at.type), **values)
    )


# Built once (bind parameters carry the values).
_BEGIN_POST = _claimed_update(
    final_post=models.FinalPost.POSTING.value, final_channel_id=bindparam("channel_id")
).where(models.Ask.__table__.c.final_post == models.FinalPost.NONE.value)
_NOTICES_POSTED = _claimed_update(notices_posted=True)
