"""Building the Slack side of the serving process from settings."""

from __future__ import annotations

import pytest

from adapters.slack.runtime import SlackRuntime
from bot.errors import MissingSettingError
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.settings import Settings
from bot.store.db import Database
from tests.fakes.asks import ask_factory
from tests.fakes.slack_requests import bolt_request, command_body
from tests.integration.slack.conftest import SIGNING_SECRET


def _parts(settings: Settings, db: Database) -> dict:
    llm = LLMClient.from_settings(settings, backend=ScriptedBackend(scripted_model))
    memory = MemoryAccess(clear=ClearMemory(db), fuzzy=None)
    return {"ask_service": ask_factory(settings, db, llm, memory), "memory": memory}


@pytest.mark.parametrize("missing", ["slack_bot_token", "slack_signing_secret"])
async def test_a_missing_token_is_one_line_naming_it(
    slack_settings: Settings, sqlite_db: Database, missing: str
) -> None:
    settings = slack_settings.replace(**{missing: ""})
    with pytest.raises(MissingSettingError) as info:
        await SlackRuntime.start(settings, sqlite_db, **_parts(settings, sqlite_db))
    assert str(info.value).startswith(missing.upper() + " is not set") and "\n" not in str(info.value)


async def test_start_mirrors_the_workspace_and_serves_commands(slack_settings: Settings, sqlite_db: Database) -> None:
    runtime = await SlackRuntime.start(slack_settings, sqlite_db, **_parts(slack_settings, sqlite_db))
    try:
        assert runtime.socket_mode is None and runtime.services.install is not None
        assert runtime.services.ingest.workspace_id == runtime.services.asks.workspace_id
        body = command_body("TACME", "UALICE", "/askwith", "")
        response = await runtime.app.async_dispatch(bolt_request(SIGNING_SECRET, body))
        assert response.status == 200 and "Your askwith settings" in response.body
    finally:
        await runtime.stop()
