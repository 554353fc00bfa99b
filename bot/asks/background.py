"""What an ask is asked against: the earlier asks it follows up, and the thread it is about.

Both reach only the requester's agents (and consensus), as untrusted data in their grounding (`Grounding.earlier`,
`Grounding.thread`), within a share of the evidence budget: the newest earlier asks and thread lines first, the
count of left-out thread lines said.

    request = await resolve_follow_up(db, roster, settings, workspace_id, request)  # colleagues default, checks
    earlier, thread, cut = await background(db, ask, budget_tokens=settings.evidence_budget // 4)
    ask_id = await ask_in_thread(db, workspace_id, channel_id, thread_id)
"""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import or_, select

from bot import messages
from bot.agents.evidence import LINE_CHARS
from bot.agents.roster import Roster
from bot.asks import models
from bot.asks.access import may_view
from bot.asks.requests import AskRequest
from bot.errors import AskRejectedError
from bot.llm.tokens import count_tokens
from bot.settings import Settings
from bot.store.db import Database


EARLIER_ASKS = 3  # how far back a chain of follow-ups is shown
MAX_CONTEXT_CHARS = 20_000  # a thread's text is stored up to this; the budget cuts it further when used
BACKGROUND_SHARE = 4  # the background may take 1/BACKGROUND_SHARE of the evidence budget


async def resolve_follow_up(
    db: Database, roster: Roster, settings: Settings, workspace_id: int, request: AskRequest
) -> AskRequest:
    """The request with its colleagues defaulting to the followed-up ask's; AskRejectedError when that ask is not
    there or the requester may not see it."""
    if request.context is not None and len(request.context) > MAX_CONTEXT_CHARS:
        request = replace(request, context=request.context[-MAX_CONTEXT_CHARS:])
    if request.follow_up_of is None:
        return request
    async with db.session() as session:
        earlier = await session.get(models.Ask, request.follow_up_of)
    if earlier is None or earlier.workspace_id != workspace_id:
        raise AskRejectedError(messages.follow_up_not_found(request.follow_up_of))
    requester = await roster.profile(request.requester)
    if not await may_view(db, settings, earlier, requester):
        raise AskRejectedError(messages.follow_up_not_allowed())
    if not [c for c in request.colleagues if c.strip()]:
        request = replace(request, colleagues=list(earlier.colleagues))
    return request


async def background(
    db: Database, ask: models.Ask, *, budget_tokens: int
) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...], int]:
    """(earlier (question, answer) pairs oldest first, thread lines oldest first, thread lines left out)."""
    earlier = await _earlier(db, ask)
    left = budget_tokens
    kept_pairs: list[tuple[str, str]] = []
    for question, answer in reversed(earlier):
        cost = count_tokens(question) + count_tokens(answer) + 8
        if cost > left:
            break
        kept_pairs.insert(0, (question, answer))
        left -= cost
    lines = [_short(line) for line in (ask.context or "").splitlines() if line.strip()]
    kept_lines: list[str] = []
    for line in reversed(lines):
        cost = count_tokens(line) + 6
        if cost > left:
            break
        kept_lines.insert(0, line)
        left -= cost
    return tuple(kept_pairs), tuple(kept_lines), len(lines) - len(kept_lines)


def _short(line: str) -> str:
    """One thread message as long as an evidence line may be (a pasted log must not crowd out the rest)."""
    line = " ".join(line.split())
    return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…"


async def _earlier(db: Database, ask: models.Ask) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    next_id = ask.follow_up_of
    async with db.session() as session:
        while next_id is not None and len(pairs) < EARLIER_ASKS:
            row = await session.get(models.Ask, next_id)
            if row is None or row.workspace_id != ask.workspace_id:
                break
            pairs.insert(0, (row.question, row.answer or row.failure or messages.progress_stage(row.status)))
            next_id = row.follow_up_of
    return pairs


async def ask_in_thread(db: Database, workspace_id: int, channel_id: str, thread_id: str) -> int | None:
    """The latest ask asked in this thread, or whose answer opened it (a reply to the answer's post)."""
    ask = models.Ask
    stmt = (
        select(ask.id)
        .where(
            ask.workspace_id == workspace_id,
            or_(
                (ask.origin_channel_id == channel_id) & (ask.origin_thread_id == thread_id),
                (ask.final_channel_id == channel_id) & (ask.final_message_id == thread_id),
            ),
        )
        .order_by(ask.id.desc())
        .limit(1)
    )
    async with db.session() as session:
        return (await session.execute(stmt)).scalar_one_or_none()
