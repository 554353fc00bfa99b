"""Mirror a chat workspace's structure into the store: the workspace, its members, channels and memberships.

Messages are not touched here (see `memory_ingest.history`). A member seen for the first time takes the initial
policy the port carries (the local workspace's world file does; Slack and Discord start everyone opted out and
members opt in through the bot); a member already stored keeps the policy it has in the database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from bot.platform.port import Channel, ChatPort, Member
from bot.store import truth
from bot.store.channel_refs import resolve_channels
from bot.store.chat_store import ChatStore, WorkspaceKey
from bot.store.db import Database
from bot.store.world import MemberPolicy


@runtime_checkable
class CarriesPolicies(Protocol):
    """A port that knows its members' initial askwith policies (the local workspace)."""

    def initial_policies(self) -> dict[str, MemberPolicy]: ...


@dataclass
class Mirror:
    """The store's ids for one workspace, as of the last mirroring."""

    workspace_id: int
    workspace_name: str
    member_ids: dict[str, int]  # platform id -> database id
    channel_ids: dict[str, int]
    bot_ids: set[str]  # platform ids of bots: their posts are never memory
    channels: list[Channel] = field(default_factory=list)


async def mirror_workspace(port: ChatPort, db: Database, store: ChatStore) -> Mirror:
    """Write the port's current workspace, members, channels and memberships into the store (one transaction)."""
    info = await port.workspace_info()
    members = await port.list_members()
    channels = await port.list_channels()
    policies = port.initial_policies() if isinstance(port, CarriesPolicies) else {}
    async with db.session() as session, session.begin():
        workspace_id = await store.ensure_workspace(session, WorkspaceKey(port.platform, info.id), info.name)
        known = await store.member_ids(session, workspace_id)
        member_ids = await store.upsert_members(session, workspace_id, members, policies)
        # A deactivated member reads nothing; a channel no longer listed is one askwith can no longer verify.
        active = {p: i for p, i in member_ids.items() if p not in _deactivated(members)}
        channel_ids = await store.upsert_channels(session, workspace_id, channels, active)
        await truth.forget_unlisted_channels(session, workspace_id, [channel_ids[c.id] for c in channels])
        for platform_id in member_ids.keys() - known.keys():
            excluded = policies.get(platform_id, MemberPolicy()).excluded_channels
            # By platform id or by name; an unknown channel is an error, never an exclusion of nothing.
            await store.set_exclusions(
                session, member_ids[platform_id], await resolve_channels(session, workspace_id, excluded)
            )
    return Mirror(
        workspace_id=workspace_id,
        workspace_name=info.name,
        member_ids=member_ids,
        channel_ids=channel_ids,
        bot_ids=_bot_ids(members),
        channels=channels,
    )


def _deactivated(members: list[Member]) -> set[str]:
    return {m.id for m in members if m.deactivated}


def _bot_ids(members: list[Member]) -> set[str]:
    return {m.id for m in members if m.is_bot}
