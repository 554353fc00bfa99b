"""discord.py's member cache kept whole, so every role change reaches askwith.

discord.py turns GUILD_MEMBER_UPDATE into `on_member_update` only for a member it has cached; for one it lacks it
caches the member and fires nothing, so the role change would wait for the next full mirror. Its cache starts whole
(GUILD_CREATE carries a small server's members; discord.py chunks a large one at startup, `intents.members`) and
joins keep it so. A member askwith learns of by listing the server over HTTP but whose join the gateway never
delivered (missed while disconnected) is missing from it: after each full listing, those are asked for through the
gateway (REQUEST_GUILD_MEMBERS, `guild.query_members` by id; `guild.chunk()` when many are missing).

    await fill_member_cache(client, guild_id, listed_member_ids)
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

import discord


log = logging.getLogger(__name__)

QUERY_IDS = 100  # Discord's most user ids in one member request
REQUEST_TIMEOUT_S = 60.0  # a chunk that never comes (the gateway dropped meanwhile) must not hold up the mirror


async def fill_member_cache(client: discord.Client, guild_id: str, member_ids: Iterable[str]) -> int:
    """Ask the gateway for the listed members discord.py has not cached; returns how many were missing. Before the
    gateway is connected there is nothing to fill: GUILD_CREATE (or discord.py's chunking) fills it then."""
    guild = client.get_guild(int(guild_id))
    if guild is None or client.ws is None or client.is_closed():
        return 0
    missing = [int(m) for m in member_ids if guild.get_member(int(m)) is None]
    if not missing:
        return 0
    log.info("%d member(s) of %s missing from the gateway's cache: requested", len(missing), guild_id)
    try:
        if len(missing) > QUERY_IDS:
            await asyncio.wait_for(guild.chunk(cache=True), REQUEST_TIMEOUT_S)
        else:
            query = guild.query_members(user_ids=missing, limit=QUERY_IDS, cache=True)
            await asyncio.wait_for(query, REQUEST_TIMEOUT_S)
    except (TimeoutError, discord.DiscordException) as exc:
        log.warning("members of %s not cached (their role changes wait for the next mirror): %s", guild_id, exc)
    return len(missing)
