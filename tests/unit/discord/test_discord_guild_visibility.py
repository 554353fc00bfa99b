"""The Discord visibility model answers per member exactly what the full per-channel recomputation answers, after
role, member and overwrite changes (members grouped by role set must not blur owners or members' own overwrites)."""

from __future__ import annotations

import random

from discord import Permissions

from adapters.discord.guild_visibility import GuildVisibility, PrivateThread
from adapters.discord.permissions import MEMBER_OVERWRITE, ROLE_OVERWRITE, GuildPermissions


GUILD = "1"
READ = Permissions(view_channel=True, read_message_history=True).value
MODERATE = Permissions(manage_threads=True).value


def _guild(rng: random.Random) -> tuple[GuildPermissions, dict[str, dict], dict[str, PrivateThread]]:
    roles = {GUILD: 0, "r1": READ, "r2": MODERATE, "r3": 0, "admin": Permissions(administrator=True).value}
    members = {f"m{i}": tuple(rng.sample(["r1", "r2", "r3"], rng.randint(0, 2))) for i in range(60)}
    members["m0"] = ("admin",)
    guild = GuildPermissions(GUILD, "m1", roles, members)
    channels = {}
    for c in range(12):
        overwrites = [{"type": ROLE_OVERWRITE, "id": GUILD, "allow": READ if c % 3 == 0 else 0, "deny": 0}]
        overwrites.append({"type": ROLE_OVERWRITE, "id": "r3", "allow": READ * (c % 2), "deny": READ * (c % 5 == 1)})
        who = f"m{rng.randrange(60)}"
        overwrites.append({"type": MEMBER_OVERWRITE, "id": who, "allow": 0, "deny": READ} if c % 4 else {})
        channels[f"c{c}"] = {"id": f"c{c}", "permission_overwrites": [o for o in overwrites if o]}
    threads = {f"t{t}": PrivateThread(f"c{t % 12}", frozenset(rng.sample(sorted(members), 4))) for t in range(8)}
    return guild, channels, threads


def _full(model: GuildVisibility) -> dict[str, set[str]]:
    """The old way: every channel's readers, computed over every member, turned around per member."""
    out: dict[str, set[str]] = {m: set() for m in model.member_roles}
    for channel_id in [*model.channels, *model.private_threads]:
        for member in model.readers(channel_id):
            out[member].add(channel_id)
    return out


def test_per_member_answers_equal_the_full_recomputation_through_changes() -> None:
    rng = random.Random(5)
    model = GuildVisibility(*_guild(rng))
    for step in range(60):
        kind = step % 4
        if kind == 0:
            model.set_roles(f"m{rng.randrange(60)}", rng.sample(["r1", "r2", "r3"], rng.randint(0, 3)))
        elif kind == 1:
            model.set_role(rng.choice(["r1", "r2", "r3", GUILD]), rng.choice([0, READ, MODERATE, READ | MODERATE]))
        elif kind == 2:
            channel = f"c{rng.randrange(12)}"
            bits = rng.choice([0, READ])
            overwrite = {"type": MEMBER_OVERWRITE, "id": f"m{rng.randrange(60)}", "allow": bits, "deny": READ - bits}
            model.set_channel(channel, {"id": channel, "permission_overwrites": [overwrite]})
        else:
            model.set_roles(f"m{rng.randrange(60)}", None)  # left
        assert model.readable(list(model.member_roles)) == _full(model), f"step {step}"


def test_a_role_change_names_its_holders_and_everyone_for_the_everyone_role() -> None:
    model = GuildVisibility(*_guild(random.Random(1)))
    assert model.set_role("r1", 0) == {m for m, roles in model.member_roles.items() if "r1" in roles}
    assert model.set_role(GUILD, READ) == set(model.member_roles)
    deleted = model.set_role("r2", None)
    assert deleted and not any("r2" in roles for roles in model.member_roles.values())
