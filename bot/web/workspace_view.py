"""What one member sees of the local workspace: their channels and DMs, a channel's messages (replies under their
parent), their ephemeral notices and the approvals waiting for them."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from adapters.local.workspace import EphemeralPost, LocalWorkspace
from bot.platform.port import ApprovalRequest, ChannelKind, ChatMessage, Member
from bot.store.world import World
from bot.web.render import answered_ask
from bot.web.texts import GENERIC_QUESTION, SAMPLE_ASKS


@dataclass(frozen=True)
class ChannelLink:
    id: str
    label: str  # "#general", "@Bob Okafor", "askwith": how a command names it (`/askwith exclude #general`)
    kind: str
    title: str = ""  # as the sidebar and the header show it: "general", "Bob Okafor", "Carol Diaz, Dave Singh"
    members: tuple[str, ...] = ()  # display names of everyone in it, the viewer included
    is_dm: bool = False  # in "Direct messages", not in "Channels"


@dataclass
class MessageItem:
    message: ChatMessage
    sender: str  # display name
    is_bot: bool
    replies: list[MessageItem] = field(default_factory=list)


async def channels_of(port: LocalWorkspace, member_id: str) -> list[ChannelLink]:
    """The member's DM with askwith first, then channels by name, then DMs by the other person's name."""
    bot_dm = await port.open_dm(member_id)
    world = port.world
    bot = world.members.get(world.bot_id)
    you = _name(world, member_id)
    links = [
        ChannelLink(
            bot_dm, "askwith", ChannelKind.DM.value, "askwith", (bot.display_name if bot else "askwith", you), True
        )
    ]
    rooms, dms = [], []
    for channel in world.visible_channels(member_id):
        if channel.id == bot_dm:
            continue
        members = tuple(_name(world, m) for m in channel.member_ids)
        if channel.kind in (ChannelKind.DM, ChannelKind.GROUP_DM):
            others = ", ".join(_name(world, m) for m in channel.member_ids if m != member_id)
            dms.append(ChannelLink(channel.id, "@" + others, channel.kind.value, others, members, True))
        else:
            rooms.append(ChannelLink(channel.id, "#" + channel.name, channel.kind.value, channel.name, members))
    return links + sorted(rooms, key=lambda c: c.label) + sorted(dms, key=lambda c: c.title.casefold())


@dataclass(frozen=True)
class Places:
    """How a member's pages name where an answer's source lies: a conversation of theirs as their sidebar does
    ("#general", "DM with Carol Díaz"), a quote from elsewhere by its channel only when that channel is public (a DM's
    or a private channel's name would tell a non-member it exists), and people by their display names."""

    labels: dict[str, str] = field(default_factory=dict)  # channel id -> label, the member's conversations only
    public: frozenset[str] = frozenset()  # names of public channels
    people: dict[str, str] = field(default_factory=dict)  # handle or id -> display name


async def places_of(port: LocalWorkspace, member_id: str) -> Places:
    labels = {c.id: f"DM with {c.title}" if c.is_dm else f"#{c.title}" for c in await channels_of(port, member_id)}
    world = port.world
    public = frozenset(c.name for c in world.channels.values() if c.kind is ChannelKind.PUBLIC)
    people = {key: m.display_name for m in world.members.values() for key in (m.id, m.name)}
    return Places(labels, public, people)


def _name(world: World, member_id: str) -> str:
    member = world.members.get(member_id)
    return member.display_name if member else member_id


def unread_counts(
    world: World, member_id: str, channels: list[ChannelLink], seen: dict[str, int], open_id: str
) -> dict[str, int]:
    """Messages from others the member has not seen, by conversation. `seen` (conversation -> how many such messages
    it held when last shown) is updated in place: the open conversation is seen now, and one never counted before is
    seen as it is (what came before the member's first visit is not "new")."""
    unread = {}
    for channel in channels:
        held = sum(1 for m in world.messages.get(channel.id, []) if m.sender_id != member_id)
        if channel.id == open_id or channel.id not in seen:
            seen[channel.id] = held
        if held > seen[channel.id]:
            unread[channel.id] = held - seen[channel.id]
    return unread


def can_read(port: LocalWorkspace, member_id: str, channel_id: str) -> bool:
    """Whether the member may open the conversation. A conversation they are not in and one that does not exist are
    both False: callers answer both alike, so nobody learns that a private DM or channel exists."""
    channel = port.world.channels.get(channel_id)
    return channel is not None and member_id in channel.member_ids


def messages_of(port: LocalWorkspace, channel_id: str) -> list[MessageItem]:
    world = port.world
    items: dict[str, MessageItem] = {}
    top: list[MessageItem] = []
    for message in world.messages.get(channel_id, []):
        sender = world.members.get(message.sender_id)
        item = MessageItem(
            message, sender.display_name if sender else message.sender_id, message.sender_id == world.bot_id
        )
        parent = items.get(message.thread_id) if message.thread_id else None
        if parent is not None:
            parent.replies.append(item)
        else:
            items[message.id] = item
            top.append(item)
    return top


def answer_posts(items: list[MessageItem]) -> list[tuple[str, int]]:
    """askwith's posts among `items` that answer an ask, as (message id, ask id), in feed order."""
    return [(item.message.id, ask_id) for item in items if item.is_bot and (ask_id := answered_ask(item.message.text))]


def ephemerals_of(port: LocalWorkspace, member_id: str, channel_id: str) -> list[EphemeralPost]:
    return [e for e in port.ephemerals if e.member_id == member_id and e.channel_id == channel_id]


def timeline(messages: list[MessageItem], notes: list[EphemeralPost]) -> list[MessageItem | EphemeralPost]:
    """The channel's messages with the member's notes among them, each note after the messages older than it."""
    merged: list[MessageItem | EphemeralPost] = []
    pending = sorted(notes, key=lambda note: note.ts)
    for item in messages:
        while pending and pending[0].ts < item.message.ts:
            merged.append(pending.pop(0))
        merged.append(item)
    return merged + pending


def approvals_of(port: LocalWorkspace, member_id: str) -> list[ApprovalRequest]:
    return [r for r in port.pending_approvals.values() if r.member_id == member_id]


def example_ask(world: World, member_id: str) -> str | None:
    """One ask a newcomer can try: for the sample workspace a question its memory answers, else a first question to
    a colleague the member talks with."""
    for colleague, question in SAMPLE_ASKS.get(world.id, []):
        if colleague != member_id and colleague in world.members:
            return f"/ask-with @{colleague} {question}"
    colleague = next((c for c in _dm_partners(world, member_id)), None)
    return f"/ask-with @{colleague} {GENERIC_QUESTION}" if colleague else None


def _dm_partners(world: World, member_id: str) -> list[str]:
    partners = []
    for channel in world.visible_channels(member_id):
        if channel.kind is ChannelKind.DM:
            partners += [m for m in channel.member_ids if m not in (member_id, world.bot_id)]
    return partners


def mentionable(world: World, member_id: str) -> list[Member]:
    """The colleagues the composer's @-autocomplete offers: every active person but the member, by display name."""
    people = [m for m in world.members.values() if m.id != member_id and not m.is_bot and not m.deactivated]
    return sorted(people, key=lambda m: m.display_name.casefold())


def mention_names(world: World) -> dict[str, str]:
    """Display name (case-folded) -> handle, for "@Bob Okafor" mentions; a name two people share names neither."""
    people = [m for m in world.members.values() if not m.is_bot]
    taken = Counter(m.display_name.casefold() for m in people)
    return {m.display_name.casefold(): m.name for m in people if taken[m.display_name.casefold()] == 1}
