"""What an ask is asked against: the earlier asks it follows up, and the thread it is about.

Both reach only the requester's agents (and consensus), as untrusted data in their grounding (`Grounding.earlier`,
`Grounding.thread`), within a share of the evidence budget: the newest earlier asks and thread lines first, the
count of left-out thread lines said.

The requester's agent talks with the follow-up's colleagues, and a screen catches copied words, not every rewording.
So an earlier answer is given only when everyone the follow-up reaches (its requester, its colleagues, the people
the requester's agent may bring in, the channel its answer is posted in) was in the audience of everything the
colleagues' agents let out in that ask (the outbox's `Sent` records), or the member whose agent let it out shares
under `auto` both then and now. Otherwise its place holds a note naming those members
(`follow_up_texts.earlier_answer_withheld`): what a member approved for one audience reaches another only through their
agent again, which asks them.

    request = await resolve_follow_up(db, roster, settings, workspace_id, request)  # colleagues default, checks
    earlier, thread, cut = await background(db, ask, budget_tokens=settings.evidence_budget // BACKGROUND_SHARE)
    ask_id = await ask_in_thread(db, workspace_id, channel_id, thread_id)
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.agents.evidence import LINE_CHARS
from bot.agents.roster import Roster
from bot.asks import models
from bot.asks.access import may_view
from bot.asks.requests import AskRequest
from bot.consent.outbox import shared_items
from bot.errors import AskRejectedError, UnknownMemberError
from bot.llm.tokens import count_tokens
from bot.platform.port import ChannelKind, SharePolicy
from bot.settings import Settings
from bot.store import models as store_models
from bot.store.db import Database
from bot.texts import follow_up_texts, progress_texts


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
        raise AskRejectedError(follow_up_texts.follow_up_not_found(request.follow_up_of))
    requester = await roster.profile(request.requester)
    if not await may_view(db, settings, earlier, requester):
        raise AskRejectedError(follow_up_texts.follow_up_not_allowed())
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
    # The requester's agent may bring in anyone its member talks with: they hear it too.
    recruits = [] if next_id is None or "no-recursion" in (ask.ablations or []) else await _contacts(db, ask)
    async with db.session() as session:
        readers = {*await _readers(session, ask), *recruits} if next_id is not None else set()
        while next_id is not None and len(pairs) < EARLIER_ASKS:
            row = await session.get(models.Ask, next_id)
            if row is None or row.workspace_id != ask.workspace_id:
                break
            answer = row.answer or row.failure or progress_texts.progress_stage(row.status)
            if row.answer and (owners := await _withheld_by(session, row, readers, asking=ask.requester)):
                answer = follow_up_texts.earlier_answer_withheld(owners)
            pairs.insert(0, (row.question, answer))
            next_id = row.follow_up_of
    return pairs


async def _contacts(db: Database, ask: models.Ask) -> list[str]:
    try:
        return await Roster(db, ask.workspace_id).contacts(ask.requester)
    except UnknownMemberError:
        return []


async def _readers(session: AsyncSession, ask: models.Ask) -> set[str]:
    """Everyone a follow-up reaches: its requester, its colleagues and "#channel" where its answer is posted."""
    readers = {ask.requester, *ask.colleagues}
    if ask.origin_channel_id:
        channel = (
            await session.execute(
                select(store_models.Channel.name, store_models.Channel.kind).where(
                    store_models.Channel.workspace_id == ask.workspace_id,
                    store_models.Channel.platform_id == ask.origin_channel_id,
                )
            )
        ).one_or_none()
        if channel is None or channel.kind != ChannelKind.DM.value:  # a DM with the bot: the requester only
            readers.add(f"#{channel.name if channel is not None else ask.origin_channel_id}")
    return readers


async def _withheld_by(session: AsyncSession, earlier: models.Ask, readers: set[str], *, asking: str) -> list[str]:
    """Display names of the members whose agents let something out in `earlier` that not every reader was in the
    audience of (what `asking`'s own agent said is theirs; a member on `auto` then and now is excepted: their agent
    would tell anyone who asks)."""
    sent = [s for s in shared_items(await _records(session, earlier.id)) if s.member != asking]
    if not sent:
        return []
    handles = sorted({s.member for s in sent})
    rows = (
        await session.execute(
            select(store_models.Member).where(
                store_models.Member.workspace_id == earlier.workspace_id, store_models.Member.name.in_(handles)
            )
        )
    ).scalars()
    members = {m.name: m for m in rows}
    channels = {a.lstrip("#") for s in sent for a in s.audience if a.startswith("#")}
    in_channel = await _channel_members(session, earlier.workspace_id, channels)
    owners: list[str] = []
    for record in sent:
        member = members.get(record.member)
        auto = member is not None and member.opted_in and member.share_policy == SharePolicy.AUTO.value
        if record.policy == SharePolicy.AUTO.value and auto:
            continue
        posted_in = (a[1:] for a in record.audience if a.startswith("#"))
        heard = {record.member, *record.audience, *(m for c in posted_in for m in in_channel.get(c, ()))}
        name = member.display_name or member.name if member is not None else record.member
        if not readers <= heard and name not in owners:
            owners.append(name)
    return owners


async def _records(session: AsyncSession, ask_id: int) -> list[dict[str, Any]]:
    """The stored turns' and closing statements' data of an ask (each keeps its outbox record)."""
    turns = (
        await session.execute(
            select(models.Turn.data)
            .join(models.Conversation, models.Conversation.id == models.Turn.conversation_id)
            .where(models.Conversation.ask_id == ask_id)
        )
    ).scalars()
    consensus = (
        await session.execute(select(models.Consensus.data).where(models.Consensus.ask_id == ask_id))
    ).scalar_one_or_none()
    return [*turns, *((consensus or {}).get("sides") or [])]


async def _channel_members(session: AsyncSession, workspace_id: int, names: set[str]) -> dict[str, set[str]]:
    """Channel name -> handles of its members (those who read an answer posted there)."""
    if not names:
        return {}
    rows = await session.execute(
        select(store_models.Channel.name, store_models.Member.name)
        .join(store_models.Membership, store_models.Membership.channel_id == store_models.Channel.id)
        .join(store_models.Member, store_models.Member.id == store_models.Membership.member_id)
        .where(store_models.Channel.workspace_id == workspace_id, store_models.Channel.name.in_(sorted(names)))
    )
    found: dict[str, set[str]] = {}
    for channel, member in rows.all():
        found.setdefault(channel, set()).add(member)
    return found


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
