"""discord.py's member cache kept whole from askwith's own member listing, so every role change reaches askwith.

discord.py turns GUILD_MEMBER_UPDATE into `on_member_update` only for a member it has cached; for one it lacks it
caches the member and fires nothing, so the role change would wait for the next full mirror. askwith lists every
member over REST anyway (who reads what is computed from that listing), so the members it lists and discord.py lacks
are put into discord.py's cache from that listing: members are loaded once, not also through the gateway. The client
therefore does not chunk servers at startup (`chunk_guilds_at_startup=False`): GUILD_CREATE carries a small server's
members, joins keep the cache current, and a large server's members arrive with the listing that follows.

    added = cache_listed_members(client, guild_id, member_payloads)   # REST member objects
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

import discord


log = logging.getLogger(__name__)


def cache_listed_members(client: discord.Client, guild_id: str, payloads: Iterable[Mapping[str, Any]]) -> int:
    """Cache the listed members discord.py lacks; returns how many. Before the gateway has delivered the server there
    is no cache to fill (its GUILD_CREATE, and the next listing, fill it then)."""
    guild = client.get_guild(int(guild_id))
    if guild is None:
        return 0
    added = 0
    for payload in payloads:
        if guild.get_member(int(payload["user"]["id"])) is None:
            # What discord.py itself does with a member the gateway sends (GUILD_MEMBERS_CHUNK, GUILD_MEMBER_ADD):
            # the REST member object has the same shape.
            guild._add_member(discord.Member(data=payload, guild=guild, state=guild._state))  # type: ignore[arg-type]
            added += 1
    if added:
        log.info("%d member(s) of %s cached from the listing", added, guild_id)
    return added
