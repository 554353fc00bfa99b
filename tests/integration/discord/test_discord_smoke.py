from __future__ import annotations

from tests.integration.discord.conftest import DiscordHarness, People


async def test_login_mirror_and_settings_command(discord_bot: DiscordHarness, people: People) -> None:
    api = discord_bot.api
    assert api.requests("GET", "/users/@me") and api.requests("GET", "/oauth2/applications/@me")
    token = discord_bot.gateway.slash("askwith", people.alice, subcommand="on")
    await api.wait_for(lambda: [c for c in api.callbacks if c.token == token])
    callback = next(c for c in api.callbacks if c.token == token)
    print(callback)
