"""The private discord.py hooks these tests stand on. This test exists only to fail loudly, naming the hook, when
a discord.py upgrade moves one of them; every other Discord test would fail in confusing ways instead."""

from __future__ import annotations

import inspect

import discord
import discord.gateway
import discord.http
import discord.webhook.async_
from discord.state import ConnectionState


def test_private_discord_py_hooks_the_tests_rely_on_are_still_there() -> None:
    # the fake API is reached by pointing every REST route (webhook follow-ups included) at it
    assert isinstance(discord.http.Route.BASE, str), "discord.http.Route.BASE is gone"
    assert discord.webhook.async_.Route is discord.http.Route, "webhooks no longer use discord.http.Route"
    discord.http.Route.BASE, saved = "http://127.0.0.1:9/api/v10", discord.http.Route.BASE
    try:
        assert discord.http.Route("GET", "/users/@me").url == "http://127.0.0.1:9/api/v10/users/@me"
    finally:
        discord.http.Route.BASE = saved
    # the gateway websocket's address, pointed at the fake so nothing ever reaches for the real Discord
    assert hasattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY"), "DiscordWebSocket.DEFAULT_GATEWAY is gone"
    # gateway events are injected where the websocket would hand them over
    for parser in ("parse_interaction_create", "parse_message_create"):
        assert callable(getattr(ConnectionState, parser, None)), f"ConnectionState.{parser} is gone"
        assert list(inspect.signature(getattr(ConnectionState, parser)).parameters) == ["self", "data"], parser
    # interactions find their client through the connection state
    client = discord.Client(intents=discord.Intents.none())
    assert client._connection._get_client() is client, "ConnectionState._get_client no longer returns the client"
    # the fake answers with exactly this content type because discord.py parses JSON only then
    assert "== 'application/json'" in inspect.getsource(discord.http.json_or_text)
