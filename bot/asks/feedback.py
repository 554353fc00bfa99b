"""👍 / 👎 on an answer, stored with the ask: one vote per member per ask (voting again changes it).

vote = await service.record_feedback(ask_id, "alice", +1)
tally = await feedback_tally(db, ask_id)        # FeedbackTally(up=1, down=0)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError

from bot.agents.roster import Roster
from bot.asks import models
from bot.asks.access import may_view
from bot.errors import AskNotAllowedError, AskNotFoundError, AskRejectedError, UnknownMemberError
from bot.settings import Settings
from bot.store.db import Database
from bot.texts import follow_up_texts


@dataclass(frozen=True)
class FeedbackTally:
    up: int
    down: int


async def record_feedback(
    db: Database, settings: Settings, roster: Roster, workspace_id: int, ask_id: int, member: str, vote: int
) -> int:
    if vote not in (1, -1):
        raise AskRejectedError(follow_up_texts.feedback_invalid())
    async with db.session() as session:
        ask = await session.get(models.Ask, ask_id)
    if ask is None or ask.workspace_id != workspace_id:
        raise AskNotFoundError(ask_id)
    try:
        profile = await roster.profile(member)
    except UnknownMemberError as exc:
        raise AskNotAllowedError(follow_up_texts.feedback_not_allowed()) from exc
    if not await may_view(db, settings, ask, profile):
        raise AskNotAllowedError(follow_up_texts.feedback_not_allowed())
    now = datetime.now(UTC)
    feedback = models.AskFeedback
    for _ in range(2):  # a second try when a click of the same member on another process inserted first
        try:
            async with db.session() as session, session.begin():
                changed = await session.execute(
                    update(feedback)
                    .where(feedback.ask_id == ask_id, feedback.member == profile.handle)
                    .values(vote=vote, updated_at=now)
                )
                if changed.rowcount == 0:
                    row = feedback(ask_id=ask_id, member=profile.handle, vote=vote, created_at=now, updated_at=now)
                    session.add(row)
            return vote
        except IntegrityError:
            continue
    return vote


async def feedback_tally(db: Database, ask_id: int) -> FeedbackTally:
    feedback = models.AskFeedback
    async with db.session() as session:
        rows = (
            await session.execute(
                select(feedback.vote, func.count()).where(feedback.ask_id == ask_id).group_by(feedback.vote)
            )
        ).all()
    counts = {vote: count for vote, count in rows}
    return FeedbackTally(up=counts.get(1, 0), down=counts.get(-1, 0))


async def vote_of(db: Database, ask_id: int, member: str) -> int | None:
    """A member's vote on an ask (handle), None if they have not voted."""
    feedback = models.AskFeedback
    async with db.session() as session:
        return (
            await session.execute(select(feedback.vote).where(feedback.ask_id == ask_id, feedback.member == member))
        ).scalar_one_or_none()
