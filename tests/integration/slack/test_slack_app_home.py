"""The App Home tab through the real bolt app: published on open, each control changes the member's stored
settings with the same core operations as `/askwith`, and it lists recent asks and what the agent shared."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from itertools import count
from typing import Any
from urllib.parse import urlencode

from adapters.slack import texts
from adapters.slack.answer_blocks import VOTE_UP_ACTION
from adapters.slack.app_home import EXCLUDE_ACTION, MEMORY_ACTION, SHARE_ACTION
from adapters.slack.services import SlackServices
from bot.platform.port import SharePolicy
from bot.store.chat_store import WorkspaceKey
from tests.fakes.slack_api import FakeSlackApi
from tests.integration.slack.conftest import Slack
from tests.integration.slack.test_slack_chat_asks import ASK_BOB, TEAM, _action_ids, _say
from tests.integration.slack.test_slack_chat_asks import asks as chat_asks_fixture
from tests.integration.slack.test_slack_chat_asks import world as chat_world_fixture


# The same workspace and wiring as the ask tests (#team, Bob's DMs granted, the core with a scripted model).
world = chat_world_fixture
asks = chat_asks_fixture


_clicks = count(1)


async def _until(condition: Callable[[], object], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


def _home_text(fake: FakeSlackApi, user: str) -> str:
    out = []
    for block in fake.home_views[user]["blocks"]:
        if "text" in block:
            out.append(block["text"]["text"])
    return "\n".join(out)


async def _change(slack: Slack, user: str, action: dict[str, Any]) -> None:
    payload = {
        "type": "block_actions",
        "team": {"id": slack.world.id},
        "user": {"id": user},
        "api_app_id": "A0ASKWITH",
        "trigger_id": f"trigger-home-{next(_clicks)}",  # each click its own (redeliveries are dropped by it)
        "container": {"type": "view", "view_id": f"VH{user}"},
        "view": {"id": f"VH{user}", "type": "home"},
        "actions": [{"block_id": "b", **action}],
    }
    response = await slack.send(urlencode({"payload": json.dumps(payload)}))
    assert response.status == 200


async def test_home_is_published_on_open_and_its_controls_change_the_settings(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    await slack.event({"type": "app_home_opened", "user": "UALICE", "channel": "DHOME", "tab": "home"})
    await asks.drain()
    assert texts.HOME_SETTINGS in [
        b["text"]["text"] for b in fake_slack.home_views["UALICE"]["blocks"] if b["type"] == "header"
    ]
    assert "*Memory:* on" in _home_text(fake_slack, "UALICE")
    ws = WorkspaceKey("slack", fake_slack.world.id)

    await _change(
        slack, "UALICE", {"action_id": SHARE_ACTION, "type": "static_select", "selected_option": {"value": "never"}}
    )
    await asks.drain()
    assert (await asks.member_settings.get(ws, "UALICE")).share == SharePolicy.NEVER
    share = next(
        b for b in fake_slack.home_views["UALICE"]["blocks"] if b.get("accessory", {}).get("action_id") == SHARE_ACTION
    )
    assert share["accessory"]["initial_option"]["value"] == "never"  # re-published with what is stored

    await _change(
        slack,
        "UALICE",
        {"action_id": EXCLUDE_ACTION, "type": "multi_conversations_select", "selected_conversations": [TEAM]},
    )
    await asks.drain()
    assert (await asks.member_settings.get(ws, "UALICE")).excluded_channels == (TEAM,)
    await _change(
        slack,
        "UALICE",
        {"action_id": EXCLUDE_ACTION, "type": "multi_conversations_select", "selected_conversations": []},
    )
    await asks.drain()
    assert (await asks.member_settings.get(ws, "UALICE")).excluded_channels == ()

    await _change(slack, "UALICE", {"action_id": MEMORY_ACTION, "type": "button", "value": "off"})
    await asks.drain()
    assert not (await asks.member_settings.get(ws, "UALICE")).opted_in
    assert "*Memory:* off" in _home_text(fake_slack, "UALICE")
    assert len([c for c in fake_slack.calls_to("views.publish") if c.params.get("user_id") == "UALICE"]) == 5


async def test_home_lists_recent_asks_and_what_the_agent_shared_with_whom(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    await slack.event(_say(fake_slack, TEAM, "UALICE", ASK_BOB))
    await _until(lambda: any(VOTE_UP_ACTION in _action_ids(b) for (c, _), b in fake_slack.blocks.items() if c == TEAM))
    await asks.drain()
    await slack.event({"type": "app_home_opened", "user": "UALICE", "channel": "DHOME", "tab": "home"})
    await slack.event({"type": "app_home_opened", "user": "UBOB", "channel": "DHOME2", "tab": "home"})
    await asks.drain()
    assert "*#1* What is the project code name" in _home_text(fake_slack, "UALICE")
    bob = _home_text(fake_slack, "UBOB")
    assert "to alice's agent (shared automatically)" in bob and "14 March" in bob
    assert texts.HOME_NO_ASKS in bob
