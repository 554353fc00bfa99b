"""Discord's permission resolution as `DiscordPort` uses it to decide who can read a channel, and the mention
parser of `/ask-with`."""

from __future__ import annotations

from typing import Any

from adapters.discord.command_text import parse_ask
from adapters.discord.permissions import GuildPermissions


VIEW, HISTORY, ADMIN = 1 << 10, 1 << 16, 1 << 3
GUILD, STAFF, MUTED, BOSSES = "1", "2", "3", "4"


def guild(member_roles: dict[str, list[str]], *, everyone: int = VIEW | HISTORY) -> GuildPermissions:
    roles = [
        {"id": GUILD, "name": "@everyone", "permissions": str(everyone)},
        {"id": STAFF, "name": "Staff", "permissions": "0"},
        {"id": MUTED, "name": "muted", "permissions": "0"},
        {"id": BOSSES, "name": "bosses", "permissions": str(ADMIN)},
    ]
    members = [{"user": {"id": m}, "roles": r} for m, r in member_roles.items()]
    return GuildPermissions.from_payloads({"id": GUILD, "owner_id": "99", "roles": roles}, members)


def ow(target: str, kind: int, allow: int = 0, deny: int = 0) -> dict[str, Any]:
    return {"id": target, "type": kind, "allow": str(allow), "deny": str(deny)}


def test_private_channel_opened_to_a_role_and_a_member() -> None:
    g = guild({"10": [], "11": [STAFF], "12": [], "13": [BOSSES], "99": []})
    channel = {"permission_overwrites": [ow(GUILD, 0, deny=VIEW), ow(STAFF, 0, allow=VIEW), ow("12", 1, allow=VIEW)]}
    assert set(g.readers(channel)) == {"11", "12", "13", "99"}  # staff, the member, an admin, the owner
    assert not g.everyone_reads(channel)


def test_allow_beats_deny_among_roles_and_a_member_overwrite_beats_both() -> None:
    g = guild({"10": [STAFF, MUTED], "11": [STAFF, MUTED], "12": [MUTED]})
    channel = {
        "permission_overwrites": [ow(STAFF, 0, allow=HISTORY), ow(MUTED, 0, deny=HISTORY), ow("10", 1, deny=HISTORY)]
    }
    assert g.readers(channel) == ("11",)
    assert g.everyone_reads({"permission_overwrites": []})


def test_view_without_history_is_not_memory_visibility() -> None:
    g = guild({"10": []}, everyone=VIEW)
    assert g.readers({"permission_overwrites": []}) == ()
    assert g.role_id("@staff") == STAFF and g.role_id(BOSSES) == BOSSES and g.role_id("nobody") is None


def test_leading_mentions_are_colleagues_and_the_rest_the_question() -> None:
    parsed = parse_ask("<@81> <@!82> @carol <@81> when is the demo with @dave?")
    assert parsed.colleagues == ("81", "82", "carol")
    assert parsed.question == "when is the demo with @dave?"
    assert parse_ask("   ").colleagues == () and parse_ask("@bob").question == ""
