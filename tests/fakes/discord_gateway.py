"""Gateway events for the real discord.py client without a websocket: payloads shaped like Discord's (`GUILD_CREATE`,
`INTERACTION_CREATE`, `MESSAGE_CREATE/UPDATE/DELETE/DELETE_BULK`, member, role, channel and thread events), each
applied to the fake's world first, as Discord would, then handed to the client's connection state parser
(`parse_<event>`), which is exactly where the gateway would hand them. An interaction must be answered before its
handling awaits any REST call or (given `db`) database statement, or Discord forgets it (`discord_deadline`).

    gateway = FakeGateway(client, api)
    token = gateway.slash("ask-with", alice, {"question": "when?"}, users={"colleague": bob})
    await api.wait_for(lambda: api.followups_for(token))
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import discord

from bot.platform.port import ChannelKind, ChatMessage, Member
from bot.store.db import Database
from tests.fakes.discord_api import FakeDiscordApi
from tests.fakes.discord_chunks import FakeSocket
from tests.fakes.discord_deadline import handling, watch_database, watch_http
from tests.fakes.discord_shapes import (
    EVERYONE_DEFAULT,
    Role,
    ThreadInfo,
    iso,
    member_json,
    new_id,
    role_json,
    snowflake_time,
    thread_json,
    thread_member_json,
    user_json,
)


USER, CHANNEL, STRING, SUB_COMMAND = 6, 7, 3, 1


class FakeGateway:
    def __init__(self, client: discord.Client, api: FakeDiscordApi, *, db: Database | None = None) -> None:
        self.client = client
        self.api = api
        watch_http(client.http)
        if db is not None:
            watch_database(db)
        # Set to a list to hold message events (create, update, delete) back until `release`, as a gateway that
        # resumes after a drop replays them: late, in another order, some twice.
        self.held: list[Callable[[], None]] | None = None

    def _message_event(self, deliver: Callable[[], None]) -> None:
        if self.held is None:
            deliver()
        else:
            self.held.append(deliver)

    def release(self, rng: random.Random, *, duplicates: float = 0.3) -> int:
        """Deliver the held message events shuffled, some twice; returns how many were delivered."""
        held, self.held = self.held or [], []
        again = [d for d in held if rng.random() < duplicates]
        out = held + again
        rng.shuffle(out)
        for deliver in out:
            deliver()
        return len(out)

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
            **self._command_guild(name),
            "options": options,
            "resolved": self._resolved(users or {}, channels or {}),
        }
        where = channel_id or next(iter(self.api.world.channels))
        channel = {"id": where, "type": 0, "name": "channel", "guild_id": self.api.guild_id, "position": 0}
        payload = self._base(2, data, channel=channel)
        payload["guild_id"] = self.api.guild_id
        payload["member"] = {**member_json(user, []), "permissions": str(EVERYONE_DEFAULT)}
        return self._dispatch(payload)

    def click(
        self, custom_id: str, user: Member, prompt: ChatMessage, *, as_seen: dict[str, Any] | None = None
    ) -> str:
        """Someone clicks a button of a message the bot sent them in a DM; returns the interaction token.
        `as_seen`: the message as a stale client still shows it (buttons since removed), e.g. on a second device."""
        dm = self.api.world.channels[prompt.channel_id]
        channel = {"id": dm.id, "type": 1, "recipients": [user_json(user)]}
        data = {"custom_id": custom_id, "component_type": 2}
        payload = self._base(3, data, channel=channel)
        payload["user"] = user_json(user)
        payload["message"] = as_seen or self.api.message_out(prompt)
        return self._dispatch(payload)

    def _command_guild(self, name: str) -> dict[str, str]:
        """The interaction data's `guild_id`: present only for a command synced to this server, absent for a global
        one (discord.py then looks the command up among the global ones)."""
        return {"guild_id": self.api.guild_id} if name in self.api.synced_commands.get(self.api.guild_id, ()) else {}

    def context_menu(self, name: str, user: Member, target: ChatMessage) -> str:
        """Someone right-clicks a message, Apps > `name` (a message command); returns the interaction token."""
        where = target.thread_id or target.channel_id
        data = {
            "id": new_id(),
            "name": name,
            "type": 3,
            **self._command_guild(name),
            "target_id": target.id,
            "resolved": {"messages": {target.id: self.api.message_out(target)}},
        }
        return self._in_guild(2, data, user, where)

    def submit(
        self,
        custom_id: str,
        user: Member,
        channel_id: str,
        *,
        texts: dict[str, str] | None = None,
        users: dict[str, list[Member]] | None = None,
    ) -> str:
        """Someone submits a modal the bot opened: text inputs and user selects, each inside a label (type 18)."""
        components: list[dict[str, Any]] = []
        for field_id, value in (texts or {}).items():
            inner = {"type": 4, "custom_id": field_id, "value": value}
            components.append({"type": 18, "id": len(components) + 1, "component": inner})
        picked: dict[str, Member] = {}
        for field_id, members in (users or {}).items():
            picked.update({m.id: m for m in members})
            inner = {"type": 5, "custom_id": field_id, "values": [m.id for m in members]}
            components.append({"type": 18, "id": len(components) + 1, "component": inner})
        data = {"custom_id": custom_id, "components": components, "resolved": self._resolved(picked, {})}
        return self._in_guild(5, data, user, channel_id)

    def press(
        self,
        custom_id: str,
        user: Member,
        message_id: str,
        *,
        values: list[str] | None = None,
        component_type: int = 2,
        resolved: dict[str, Any] | None = None,
    ) -> str:
        """Someone uses a component (button 2, string select 3, channel select 8) of a bot message in the server
        (a channel, a thread, or an ephemeral message only they see); returns the interaction token."""
        from tests.fakes.discord_interactions import message_payload

        message = message_payload(self.api, message_id)
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": component_type}
        if values is not None:
            data["values"] = values
        if resolved:
            data["resolved"] = resolved
        token = self._in_guild(3, data, user, str(message["channel_id"]), message=message)
        return token

    def _in_guild(
        self, kind: int, data: dict[str, Any], user: Member, channel_id: str, *, message: dict[str, Any] | None = None
    ) -> str:
        thread = self.api.public_threads().get(channel_id)
        channel: dict[str, Any] = {"id": channel_id, "type": 0, "name": "channel", "guild_id": self.api.guild_id}
        if thread is not None:
            channel.update(type=thread.type, parent_id=thread.parent_id, name=thread.name)
        payload = self._base(kind, data, channel=channel)
        payload["guild_id"] = self.api.guild_id
        roles = self.api.extras.member_roles.get(user.id, [])
        payload["member"] = {**member_json(user, roles), "permissions": str(EVERYONE_DEFAULT)}
        if message is not None:
            payload["message"] = message
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
        user = payload.get("user") or payload["member"]["user"]
        self.api.interaction_context[str(payload["token"])] = {
            "type": payload["type"],
            "channel_id": str(payload["channel_id"]),
            "user_id": str(user["id"]),
            "message_id": str(payload["message"]["id"]) if payload.get("message") else None,
        }
        with handling(self.api, str(payload["token"])):  # the 3-second rule: see tests.fakes.discord_deadline
            self.client._connection.parse_interaction_create(payload)  # type: ignore[arg-type]
        return str(payload["token"])

    # ------------------------------------------------------------------ messages
    def message(
        self,
        channel_id: str,
        author: Member,
        text: str,
        *,
        in_guild: bool = True,
        thread_id: str | None = None,
        reply_to: str | None = None,
    ) -> ChatMessage:
        """A message arrives (MESSAGE_CREATE) in a channel, or in a thread of it (`reply_to`: as a reply to that
        message); it is also added to the world, as Discord would store it."""
        world = self.api.world
        message = world.add_message(channel_id, author.id, text, message_id=new_id(), thread_id=thread_id)
        if reply_to is not None:
            self.api.references[message.id] = reply_to
        payload = self.api.message_out(message)
        if not in_guild:
            payload.pop("guild_id", None)
        else:
            roles = list(self.api.extras.member_roles.get(author.id, []))  # as they are now: a replay carries these
            payload["member"] = {k: v for k, v in member_json(author, roles).items() if k != "user"}
        self._message_event(lambda: self.client._connection.parse_message_create(payload))  # type: ignore[arg-type]
        return message

    def dm(self, author: Member, text: str) -> ChatMessage:
        """A member writes to the bot in their DM with it."""
        channel = self.api.dm_with(author.id)
        return self.message(channel.id, author, text, in_guild=False)

    # ------------------------------------------------------------------ the server and its changes
    def connect(self, *, invited: bool = False, large: bool = False) -> None:
        """GUILD_CREATE, as the gateway sends it for every server when the bot connects (`invited`: when the bot
        joins a server while running, without `unavailable`): roles, channels, active threads and every member (so
        discord.py's cache is complete and needs no chunking), or, for a `large` server, the bot alone: discord.py
        then asks for the rest (REQUEST_GUILD_MEMBERS), answered as Discord does (`tests.fakes.discord_chunks`)."""
        api = self.api
        FakeSocket.install(self.client, api)  # member requests sent through the gateway reach the fake Discord
        guild = api.guild_out()
        members = api.members_out()
        sent = [m for m in members if m["user"]["id"] == api.world.bot_id] if large else members
        threads = [t for t in api.public_threads().values() if not t.archived and api.bot_sees_thread(t)]
        guild.update(
            channels=[api.channel_out(c) for c in self._guild_channel_ids()],
            threads=[thread_json(t, api.guild_id, len(api.replies(t))) for t in threads],
            members=sent,
            member_count=len(members),
            large=large,
            unavailable=False,
            voice_states=[],
            presences=[],
            stage_instances=[],
            guild_scheduled_events=[],
            soundboard_sounds=[],
            joined_at=iso(snowflake_time(api.world.bot_id)),
        )
        if invited:
            del guild["unavailable"]
        self.client._connection.parse_guild_create(guild)  # type: ignore[arg-type]

    def _guild_channel_ids(self) -> list[str]:
        kinds = (ChannelKind.PUBLIC, ChannelKind.PRIVATE)
        return [c.id for c in self.api.world.channels.values() if c.kind in kinds]

    def edit(self, message: ChatMessage, text: str) -> ChatMessage:
        """Its author edits a message (MESSAGE_UPDATE)."""
        edited = self.api.edit_message(message.channel_id, message.id, text)
        payload = self.api.message_out(edited)
        payload["edited_timestamp"] = iso(datetime.now(UTC))
        self._message_event(lambda: self.client._connection.parse_message_update(payload))  # type: ignore[arg-type]
        return edited

    def delete(self, message: ChatMessage) -> None:
        """A message is deleted (MESSAGE_DELETE)."""
        self.api.delete_message(message)
        payload = {
            "id": message.id,
            "channel_id": message.thread_id or message.channel_id,
            "guild_id": self.api.guild_id,
        }
        self._message_event(lambda: self.client._connection.parse_message_delete(payload))  # type: ignore[arg-type]

    def bulk_delete(self, messages: list[ChatMessage]) -> None:
        """A moderator purges messages of one channel (MESSAGE_DELETE_BULK)."""
        for message in messages:
            self.api.delete_message(message)
        where = messages[0].thread_id or messages[0].channel_id
        payload = {"ids": [m.id for m in messages], "channel_id": where, "guild_id": self.api.guild_id}
        self._message_event(lambda: self.client._connection.parse_message_delete_bulk(payload))  # type: ignore[arg-type]

    def member_joins(self, member: Member) -> None:
        """Someone joins the server (GUILD_MEMBER_ADD)."""
        self.api.world.add_member(member)
        payload = {**member_json(member, []), "guild_id": self.api.guild_id}
        self.client._connection.parse_guild_member_add(payload)  # type: ignore[arg-type]

    def member_leaves(self, member: Member) -> None:
        """Someone leaves, or is kicked from, the server (GUILD_MEMBER_REMOVE)."""
        self.api.remove_member(member.id)
        payload = {"guild_id": self.api.guild_id, "user": user_json(member)}
        self.client._connection.parse_guild_member_remove(payload)  # type: ignore[arg-type]

    def set_roles(self, member: Member, role_ids: list[str]) -> None:
        """A member's roles change (GUILD_MEMBER_UPDATE)."""
        self.api.extras.member_roles[member.id] = list(role_ids)
        payload = {**member_json(member, list(role_ids)), "guild_id": self.api.guild_id}
        self.client._connection.parse_guild_member_update(payload)  # type: ignore[arg-type]

    def role_changed(self, role: Role) -> None:
        """A role is created or its permissions change (GUILD_ROLE_CREATE / GUILD_ROLE_UPDATE)."""
        known = role.id in self.api.extras.roles
        self.api.extras.roles[role.id] = role
        position = list(self.api.extras.roles).index(role.id)
        payload = {"guild_id": self.api.guild_id, "role": role_json(role, position)}
        state = self.client._connection
        (state.parse_guild_role_update if known else state.parse_guild_role_create)(payload)  # type: ignore[arg-type]

    def set_overwrites(self, channel_id: str, overwrites: list[dict[str, Any]]) -> None:
        """A channel's permission overwrites change (CHANNEL_UPDATE)."""
        self.api.extras.overwrites[channel_id] = overwrites
        self.client._connection.parse_channel_update(self.api.channel_out(channel_id))  # type: ignore[arg-type]

    def thread_created(self, thread: ThreadInfo) -> None:
        """A thread is created (THREAD_CREATE), e.g. by `api.open_private_thread`."""
        payload = {**thread_json(thread, self.api.guild_id, 0), "newly_created": True}
        self.client._connection.parse_thread_create(payload)  # type: ignore[arg-type]

    def thread_members(self, thread: ThreadInfo, *, added: list[str] = (), removed: list[str] = ()) -> None:  # type: ignore[assignment]
        """People are added to or removed from a thread (THREAD_MEMBERS_UPDATE); as on Discord, not while it is
        archived (the API answers 400/50083 Thread is archived)."""
        if thread.archived:
            raise ValueError("Discord refuses member changes to an archived thread (50083): unarchive it first")
        thread.member_ids |= set(added)
        thread.member_ids -= set(removed)
        payload = {
            "id": thread.id,
            "guild_id": self.api.guild_id,
            "member_count": len(thread.member_ids),
            "added_members": [
                {**thread_member_json(thread.id, m), "member": member_json(self.api.world.members[m], [])}
                for m in added
            ],
            "removed_member_ids": list(removed),
        }
        self.client._connection.parse_thread_members_update(payload)  # type: ignore[arg-type]

    def archive(self, thread: ThreadInfo, *, archived: bool = True) -> None:
        """A thread is archived or unarchived (THREAD_UPDATE)."""
        thread.archived = archived
        payload = thread_json(thread, self.api.guild_id, len(self.api.replies(thread)))
        self.client._connection.parse_thread_update(payload)  # type: ignore[arg-type]

    def thread_deleted(self, thread: ThreadInfo) -> None:
        """A thread is deleted with its messages (THREAD_DELETE)."""
        self.api.vanish_thread(thread.id)
        payload = {"id": thread.id, "guild_id": self.api.guild_id, "parent_id": thread.parent_id, "type": thread.type}
        self.client._connection.parse_thread_delete(payload)  # type: ignore[arg-type]

    def channel_deleted(self, channel_id: str) -> None:
        """A channel is deleted with its messages (CHANNEL_DELETE)."""
        payload = self.api.channel_out(channel_id)
        del self.api.world.channels[channel_id]
        self.api.world.messages.pop(channel_id, None)
        self.client._connection.parse_channel_delete(payload)  # type: ignore[arg-type]

    def removed(self) -> None:
        """The bot is removed from this server (GUILD_DELETE without `unavailable`)."""
        self.client._connection.parse_guild_delete({"id": self.api.guild_id})  # type: ignore[arg-type]
