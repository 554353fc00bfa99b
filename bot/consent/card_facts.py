"""Building an approval card (`bot.consent.card`) from what the gate holds: handles become display names, memory
lines become readable references in the member's time zone, theirs or else the workspace's ("Erin's message in your
DM with Erin, 16 Nov 11:05"), with the platform's link where it has one.

    facts = CardFacts(db, workspace_id)
    card = await build_card(port, facts, member, question=q, requester="alice", text=t, lines=cited,
                            audience=["alice", "#general"], deadline=deadline, kind="turn", zone="Europe/Paris")

Without `facts` (a gate without a database) names stay handles and places what the line says ("#launch").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from bot.agents.roster import MemberProfile
from bot.consent.card import LEADS, MAX_SOURCES, ApprovalCard, SourceRef
from bot.consent.outgoing import LINE_HEAD
from bot.errors import AskwithError
from bot.platform.port import ChannelKind, ChatPort
from bot.store.db import Database
from bot.store.member_directory import display_names
from bot.store.message_places import message_places
from bot.texts import approval_texts, conversation_texts


@dataclass(frozen=True)
class Place:
    """Where a stored message is: its channel's platform id, kind and name, and the handles of its members."""

    channel_id: str
    kind: str
    name: str
    members: tuple[str, ...]


class CardFacts:
    """Display names and message places of one workspace, read from the store."""

    def __init__(self, db: Database, workspace_id: int) -> None:
        self.db = db
        self.workspace_id = workspace_id

    async def names(self, handles: Iterable[str]) -> dict[str, str]:
        wanted = set(handles)
        if not wanted:
            return {}
        return await display_names(self.db, self.workspace_id, wanted)

    async def places(self, message_ids: Iterable[str]) -> dict[str, Place]:
        wanted = set(message_ids)
        if not wanted:
            return {}
        rows, members = await message_places(self.db, self.workspace_id, wanted)
        by_channel: dict[int, list[str]] = {}
        for channel, name in members:
            by_channel.setdefault(channel, []).append(name)
        return {m: Place(c, k, n, tuple(sorted(by_channel.get(i, [])))) for m, i, c, k, n in rows}


async def build_card(
    port: ChatPort, facts: CardFacts | None, member: MemberProfile, *, question: str, requester: str, text: str,
    lines: list[str], audience: list[str], deadline: datetime, kind: str, zone: str,
) -> ApprovalCard:  # fmt: skip
    """The card `member` reads before `text` leaves to `audience`: only their own memory lines (`lines`) and names,
    with times in the member's zone when they have one, else in `zone` (the workspace's)."""
    zone = member.time_zone or zone
    heads = [(line, LINE_HEAD.match(line)) for line in dict.fromkeys(lines)]
    cited = [(h["id"], h) for _, h in heads if h is not None and h["channel"]]
    places = await facts.places(i for i, _ in cited) if facts is not None else {}
    people = {requester, *(a for a in audience if not a.startswith("#")), *(h["sender"] or "" for _, h in cited)}
    people |= {p for place in places.values() for p in place.members}
    names = await facts.names(people - {""}) if facts is not None else {}
    tz = ZoneInfo(zone)
    sources = []
    for line_id, head in cited[:MAX_SOURCES]:
        place = places.get(line_id)
        if place is not None and member.handle not in place.members:
            place = None  # a line relayed from a place the member is not in: only what the line itself says
        label = _reference(member.handle, head["sender"] or "", head["ts"], head["channel"], place, names, tz)
        sources.append(SourceRef(label, await _link(port, place, line_id)))
    notes = len(heads) - len(cited)  # lines without a place: the agent's notes made from the member's messages
    if notes and len(sources) < MAX_SOURCES:
        sources.append(SourceRef(approval_texts.approval_note_source()))
        notes = 0
    asker = names.get(requester, requester)
    return ApprovalCard(
        title=approval_texts.approval_title(asker, kind=kind), question=question, asker=asker,
        lead=LEADS.get(kind, LEADS["turn"]), quote=conversation_texts.without_ids(text).strip(),
        sources=tuple(sources),
        more_sources=max(0, len(cited) - MAX_SOURCES) + (1 if notes else 0),
        audience=tuple(_reader(a, names) for a in audience), deadline=deadline.astimezone(tz), zone=zone,
    )  # fmt: skip


def _reader(who: str, names: dict[str, str]) -> str:
    return f"everyone in {who}" if who.startswith("#") else names.get(who, who)


def _reference(
    me: str, sender: str, ts: str, channel: str, place: Place | None, names: dict[str, str], tz: ZoneInfo
) -> str:
    """ "Your message in #launch, 16 Nov 11:05" / "Erin Park's message in your DM with Erin Park, 16 Nov 11:05"."""
    whose = "Your message" if sender == me else f"{names.get(sender, sender)}'s message" if sender else "A message"
    where = f"#{channel}"
    if place is not None and place.kind in (ChannelKind.DM.value, ChannelKind.GROUP_DM.value):
        others = [names.get(m, m) for m in place.members if m != me]
        where = f"your {'group ' if len(others) > 1 else ''}DM with {' and '.join(others) or 'yourself'}"
    elif place is not None:
        where = f"#{place.name}"
    try:  # lines carry UTC minutes ("2026-03-01 09:05")
        when = datetime.strptime(ts, "%Y-%m-%d %H:%M").replace(tzinfo=UTC).astimezone(tz)
        year = "" if when.year == datetime.now(tz).year else f" {when.year}"
        return f"{whose} in {where}, {when.day} {when:%b}{year} {when:%H:%M}"
    except ValueError:
        return f"{whose} in {where}"


async def _link(port: ChatPort, place: Place | None, message_id: str) -> str:
    if place is None:
        return ""
    try:
        return await port.permalink(place.channel_id, message_id) or ""
    except AskwithError:  # a link is a convenience: the card goes out without it
        return ""
