"""Large workspaces for the scale benchmark, generated from a seed: a Slack team of N members in C channels and a
Discord server of N members, R roles and C channels. Built straight into the world's dicts (`World.add_member` checks
every name against every other, which is quadratic at 50,000).

    world = slack_team(50_000, 10_000, seed=7)      # #general holds everyone; the rest, heavy-tailed sizes
    api = ScaleSlackApi(world)                      # the fake Slack, paging before it renders (50,000 users)
    api, roles = discord_server(50_000, 500, seed=7)
"""

from __future__ import annotations

import random
from typing import Any

from bot.platform.port import Channel, ChannelKind, Member
from bot.store.world import MemberPolicy, World
from tests.fakes.discord_api import FakeDiscordApi
from tests.fakes.discord_shapes import READ_MESSAGE_HISTORY, ROLE_OVERWRITE, VIEW_CHANNEL, Role, overwrite
from tests.fakes.slack_api import Actor, FakeSlackApi, _page
from tests.fakes.slack_shapes import member_json


SLACK_BOT = "UASKWITHBOT"
DISCORD_BASE_ID = 100_000_000_000_000_000
READ = VIEW_CHANNEL | READ_MESSAGE_HISTORY


def _add_member(world: World, member: Member) -> None:
    world.members[member.id] = member
    world.policies[member.id] = MemberPolicy(opted_in=False)


def _add_channel(world: World, channel: Channel) -> None:
    world.channels[channel.id] = channel
    world.messages[channel.id] = []


def slack_team(members: int, channels: int, *, seed: int) -> World:
    rng = random.Random(seed)
    world = World(id="TSCALE", name="Scale", bot_id=SLACK_BOT)
    _add_member(world, Member(SLACK_BOT, "askwith", "askwith", is_bot=True))
    ids = [f"U{i:07d}" for i in range(members)]
    for i, member_id in enumerate(ids):
        _add_member(world, Member(member_id, f"member{i}", f"Member {i}"))
    _add_channel(world, Channel("C0000000", "general", ChannelKind.PUBLIC, (SLACK_BOT, *ids)))
    for c in range(1, channels):
        size = min(members, int(3 * rng.paretovariate(1.1)))  # most channels small, a few large
        kind = ChannelKind.PRIVATE if c % 5 == 0 else ChannelKind.PUBLIC
        prefix = "G" if kind is ChannelKind.PRIVATE else "C"
        _add_channel(world, Channel(f"{prefix}{c:07d}", f"chan{c}", kind, (SLACK_BOT, *rng.sample(ids, size))))
    return world


class ScaleSlackApi(FakeSlackApi):
    """The fake Slack, rendering only the page asked for (it renders every member per page otherwise)."""

    def m_users_list(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        self._need(actor, "users:read")
        page, cursor = _page(list(self.world.members.values()), params)
        return {"members": [member_json(m, self.world.id) for m in page], "response_metadata": {"next_cursor": cursor}}


def discord_server(members: int, channels: int, *, roles: int = 100, seed: int) -> tuple[FakeDiscordApi, list[Role]]:
    """Members hold one or two of `roles` roles; each channel is private to one role (and the bot), but for two public
    channels everyone reads. The owner is the first member."""
    rng = random.Random(seed)
    world = World(id="900", name="Scale")
    bot = Member(str(DISCORD_BASE_ID - 1), "askwith", "askwith", is_bot=True)
    _add_member(world, bot)
    world.bot_id = bot.id
    ids = [str(DISCORD_BASE_ID + i) for i in range(members)]
    for i, member_id in enumerate(ids):
        _add_member(world, Member(member_id, f"member{i}", f"Member {i}"))
    for c in range(channels):
        kind = ChannelKind.PUBLIC if c < 2 else ChannelKind.PRIVATE
        _add_channel(world, Channel(str(DISCORD_BASE_ID * 2 + c), f"chan{c}", kind, (bot.id,)))
    api = FakeDiscordApi(world, guild_id=world.id, owner_id=ids[0])
    made = [Role(str(DISCORD_BASE_ID * 3 + r), f"role{r}", 0) for r in range(roles)]
    api.extras.roles.update({role.id: role for role in made})
    bot_role = api.extras.member_roles[bot.id][0]
    for member_id in ids:
        api.extras.member_roles[member_id] = [r.id for r in rng.sample(made, rng.randint(1, 2))]
    for c, channel_id in enumerate(list(world.channels)[2:]):
        api.extras.overwrites[channel_id] = [
            overwrite(world.id, ROLE_OVERWRITE, deny=VIEW_CHANNEL),
            overwrite(made[c % roles].id, ROLE_OVERWRITE, allow=READ),
            overwrite(bot_role, ROLE_OVERWRITE, allow=READ),
        ]
    return api, made
