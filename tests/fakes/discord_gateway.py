"""Gateway events for the real discord.py client without a websocket: payloads shaped like Discord's
`INTERACTION_CREATE` and `MESSAGE_CREATE`, handed to the client's connection state parser (`parse_<event>`), which
is exactly where the gateway would hand them.

    gateway = FakeGateway(client, api)
    token = gateway.slash("ask-with", alice, {"question": "when?"}, users={"colleague": bob})
    await api.wait_for(lambda: api.followups_for(token))
"""

from __future__ import annotations

import secrets
from typing import Any

import discord

from bot.port import ChatMessage, Member
from tests.fakes.discord_api import FakeDiscordApi
from tests.fakes.discord_shapes import EVERYONE_DEFAULT, member_json, new_id, user_json


USER, CHANNEL, STRING, SUB_COMMAND = 6, 7, 3, 1


class FakeGateway:
    def __init__(self, client: discord.Client, api: FakeDiscordApi) -> None:
        self.client = client
        self.api = api

    # ------------------------------------------------------------------ interactions
    def slash(
        self,
        name: str,
        user: Member,
        strings: dict[str, str] | None = None,
        *,
        users: dict[str, Member] | None = None,
        channels: dict[str, str] | None = None,
        subcommand: str | None = None,
        channel_id: str | None = None,
    ) -> str:
        """Someone runs `/name [subcommand] …` in a server channel; returns the interaction token."""
        options: list[dict[str, Any]] = [{"name": k, "type": STRING, "value": v} for k, v in (strings or {}).items()]
        options += [{"name": k, "type": USER, "value": m.id} for k, m in (users or {}).items()]
        options += [{"name": k, "type": CHANNEL, "value": c} for k, c in (channels or {}).items()]
        if subcommand is not None:
            options = [{"name": subcommand, "type": SUB_COMMAND, "options": options}]
        data = {
            "id": new_id(),
            "name": name,
            "type": 1,
            "guild_id": self.api.guild_id,
            "options": options,
            "resolved": self._resolved(users or {}, channels or {}),
        }
        where = channel_id or next(iter(self.api.world.channels))
        channel = {"id": where, "type": 0, "name": "channel", "guild_id": self.api.guild_id, "position": 0}
        payload = self._base(2, data, channel=channel)
        payload["guild_id"] = self.api.guild_id
        payload["member"] = {**member_json(user, []), "permissions": str(EVERYONE_DEFAULT)}
        return self._dispatch(payload)

    def click(self, custom_id: str, user: Member, prompt: ChatMessage) -> str:
        """Someone clicks a button of a message the bot sent them in a DM; returns the interaction token."""
        dm = self.api.world.channels[prompt.channel_id]
        channel = {"id": dm.id, "type": 1, "recipients": [user_json(user)]}
        data = {"custom_id": custom_id, "component_type": 2}
        payload = self._base(3, data, channel=channel)
        payload["user"] = user_json(user)
        payload["message"] = self.api.message_out(prompt)
        return self._dispatch(payload)

    def _base(self, kind: int, data: dict[str, Any], *, channel: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": new_id(),
            "application_id": self.api.application_id,
            "type": kind,
            "token": "itok-" + secrets.token_hex(8),
            "version": 1,
            "data": data,
            "channel_id": channel["id"],
            "channel": channel,
            "app_permissions": str(EVERYONE_DEFAULT),
            "locale": "en-US",
            "attachment_size_limit": 8 * 1024 * 1024,
            "entitlements": [],
            "authorizing_integration_owners": {},
        }

    def _resolved(self, users: dict[str, Member], channels: dict[str, str]) -> dict[str, Any]:
        resolved: dict[str, Any] = {}
        if users:
            resolved["users"] = {m.id: user_json(m) for m in users.values()}
            resolved["members"] = {
                m.id: {k: v for k, v in member_json(m, []).items() if k != "user"} | {"permissions": "0"}
                for m in users.values()
            }
        if channels:
            resolved["channels"] = {
                c: {"id": c, "type": 0, "name": self.api.world.channels[c].name, "permissions": "0"}
                for c in channels.values()
            }
        return resolved

    def _dispatch(self, payload: dict[str, Any]) -> str:
        self.client._connection.parse_interaction_create(payload)  # type: ignore[arg-type]
        return str(payload["token"])

    # ------------------------------------------------------------------ messages
    def message(self, channel_id: str, author: Member, text: str, *, in_guild: bool = True) -> ChatMessage:
        """A message arrives (MESSAGE_CREATE); it is also added to the world, as Discord would store it."""
        world = self.api.world
        message = world.add_message(channel_id, author.id, text, message_id=new_id())
        payload = self.api.message_out(message)
        if not in_guild:
            payload.pop("guild_id", None)
        else:
            payload["member"] = {k: v for k, v in member_json(author, []).items() if k != "user"}
        self.client._connection.parse_message_create(payload)  # type: ignore[arg-type]
        return message
