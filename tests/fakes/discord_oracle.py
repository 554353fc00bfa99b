"""What a member can see on the fake Discord right now, worked out from the fake's own state (roles, permission
overwrites, thread membership), independently of askwith's permission code: the oracle memory is compared with.

Discord's rules, as its documentation states them: the owner and administrators see everything; otherwise the
@everyone role's permissions, plus every role's, then the @everyone overwrite, the union of role overwrites (deny then
allow) and the member's own overwrite. Reading history needs View Channel and Read Message History. A private thread
is seen by its members and by whoever may Manage Threads in its parent; a public thread by its parent's readers.
"""

from __future__ import annotations

from bot.platform.port import ChannelKind, ChatMessage
from tests.fakes.discord_api import FakeDiscordApi
from tests.fakes.discord_shapes import (
    ADMINISTRATOR,
    MANAGE_THREADS,
    MEMBER_OVERWRITE,
    PRIVATE_THREAD,
    READ_MESSAGE_HISTORY,
    ROLE_OVERWRITE,
    VIEW_CHANNEL,
)


ALL = (1 << 53) - 1


def channel_permissions(api: FakeDiscordApi, member_id: str, channel_id: str) -> int:
    extras = api.extras
    if member_id == extras.owner_id:
        return ALL
    roles = extras.member_roles.get(member_id, [])
    bits = extras.roles[extras.guild_id].permissions
    for role in roles:
        bits |= extras.roles[role].permissions if role in extras.roles else 0
    if bits & ADMINISTRATOR:
        return ALL
    overwrites = extras.overwrites_for(api.world.channels[channel_id])
    by_target = {(int(o["type"]), str(o["id"])): (int(o["allow"]), int(o["deny"])) for o in overwrites}
    allow, deny = by_target.get((ROLE_OVERWRITE, extras.guild_id), (0, 0))
    bits = (bits & ~deny) | allow
    allow = deny = 0
    for role in roles:
        role_allow, role_deny = by_target.get((ROLE_OVERWRITE, role), (0, 0))
        allow, deny = allow | role_allow, deny | role_deny
    bits = (bits & ~deny) | allow
    allow, deny = by_target.get((MEMBER_OVERWRITE, member_id), (0, 0))
    return (bits & ~deny) | allow


def can_read(api: FakeDiscordApi, member_id: str, channel_id: str) -> bool:
    bits = channel_permissions(api, member_id, channel_id)
    return bool(bits & VIEW_CHANNEL) and bool(bits & READ_MESSAGE_HISTORY)


def visible_messages(api: FakeDiscordApi, member_id: str, *, channels: list[str]) -> list[ChatMessage]:
    """Messages of `channels` (and their threads) that the member can read now; none once they left."""
    member = api.world.members[member_id]
    if member.deactivated:
        return []
    seen = []
    threads = api.public_threads()
    for channel_id in channels:
        if api.world.channels[channel_id].kind not in (ChannelKind.PUBLIC, ChannelKind.PRIVATE):
            continue
        if not can_read(api, member_id, channel_id):
            continue
        moderates = bool(channel_permissions(api, member_id, channel_id) & MANAGE_THREADS)
        for message in api.world.messages[channel_id]:
            thread = threads.get(message.thread_id) if message.thread_id else None
            private = thread is not None and thread.type == PRIVATE_THREAD
            if private and not (member_id in thread.member_ids or moderates):  # type: ignore[union-attr]
                continue
            seen.append(message)
    return seen
