"""Members as the agents' roster reads them: each member's askwith status and policy with the channels they keep out
of their memory, one row per excluded channel (or one row with none), read on a connection of its own.

    rows = await profile_rows(db, workspace_id, "Alice")              # by handle or platform id, any case
    rows = await profile_rows_by_name(db, workspace_id, ["alice", "bob"])   # exact handles, one statement

Each row holds the member's columns (id, name, platform_id, display_name, share_policy, opted_in, is_bot,
deactivated, time_zone, platform_time_zone) and one excluded channel's `excluded_name` and `excluded_id` (None when
they exclude none). Nothing is cached: a policy changed in any process applies to the next read.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Row, Select, bindparam, func, select

from bot.store import models
from bot.store.db import Database


def _profile_statement() -> Select[Any]:
    """Members with the channels each keeps out of memory (one row per channel, or one with none)."""
    member, channel = models.Member, models.Channel
    return (
        select(
            member.id,
            member.name,
            member.platform_id,
            member.display_name,
            member.share_policy,
            member.opted_in,
            member.is_bot,
            member.deactivated,
            member.time_zone,
            member.platform_time_zone,
            channel.name.label("excluded_name"),
            channel.platform_id.label("excluded_id"),
        )
        .outerjoin(models.MemberExclusion, models.MemberExclusion.member_id == member.id)
        .outerjoin(channel, channel.id == models.MemberExclusion.channel_id)
        .where(member.workspace_id == bindparam("workspace"))
    )


# Built once (bind parameters carry the values): a profile is read at every turn and every send of every ask.
_PROFILE = _profile_statement().where(
    (models.Member.name == bindparam("wanted"))
    | (models.Member.platform_id == bindparam("wanted"))
    | (func.lower(models.Member.name) == bindparam("lowered"))  # `--as Alice` is alice
)
_PROFILES = _profile_statement().where(models.Member.name.in_(bindparam("names", expanding=True)))


async def profile_rows(db: Database, workspace_id: int, wanted: str) -> list[Row[Any]]:
    """The rows of every member whose handle or platform id is `wanted`, or whose handle is it in another case: the
    caller picks the member (an exact match wins)."""
    params = {"workspace": workspace_id, "wanted": wanted, "lowered": wanted.lower()}
    async with db.read() as conn:  # one statement: the member with the channels they exclude
        return list((await conn.execute(_PROFILE, params)).all())


async def profile_rows_by_name(db: Database, workspace_id: int, names: Iterable[str]) -> list[Row[Any]]:
    """The rows of the members whose handles are exactly these names, in one statement."""
    async with db.read() as conn:
        return list((await conn.execute(_PROFILES, {"workspace": workspace_id, "names": list(names)})).all())
