"""Slack's inbound requests, as a test sends them to the bolt app: signed slash commands, events and clicks."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from itertools import count
from typing import Any
from urllib.parse import urlencode

from slack_bolt.async_app import AsyncBoltRequest


_triggers = count(1)


def signature(secret: str, timestamp: str, body: str) -> str:
    base = f"v0:{timestamp}:{body}".encode()
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def signed_headers(secret: str, body: str, *, timestamp: int | None = None, retry: int | None = None) -> dict:
    ts = str(int(time.time()) if timestamp is None else timestamp)
    headers = {
        "x-slack-request-timestamp": ts,
        "x-slack-signature": signature(secret, ts, body),
        "content-type": "application/x-www-form-urlencoded",
    }
    if retry is not None:
        headers["x-slack-retry-num"] = str(retry)
        headers["x-slack-retry-reason"] = "http_timeout"
    return headers


def command_body(
    team_id: str,
    user_id: str,
    command: str,
    text: str,
    *,
    channel_id: str = "CCGENERAL",
    response_url: str = "https://hooks.invalid/commands/1",
) -> str:
    return urlencode(
        {
            "token": "deprecated-verification-token",
            "team_id": team_id,
            "channel_id": channel_id,
            "user_id": user_id,
            "command": command,
            "text": text,
            "response_url": response_url,
            "trigger_id": f"trigger-{next(_triggers)}",
            "api_app_id": "A0ASKWITH",
        }
    )


def event_body(team_id: str, event: dict[str, Any], *, event_id: str | None = None) -> str:
    return json.dumps(
        {
            "token": "deprecated",
            "team_id": team_id,
            "api_app_id": "A0ASKWITH",
            "type": "event_callback",
            "event_id": event_id or f"Ev{next(_triggers):08d}",
            "event_time": int(time.time()),
            "event": event,
        }
    )


def block_actions_body(
    team_id: str, user_id: str, channel_id: str, action_id: str, value: str, *, response_url: str
) -> str:
    payload = {
        "type": "block_actions",
        "team": {"id": team_id},
        "user": {"id": user_id},
        "api_app_id": "A0ASKWITH",
        "trigger_id": f"trigger-{next(_triggers)}",
        "channel": {"id": channel_id},
        "container": {"type": "message", "channel_id": channel_id},
        "response_url": response_url,
        "actions": [{"action_id": action_id, "block_id": "askwith_approval", "value": value, "type": "button"}],
    }
    return urlencode({"payload": json.dumps(payload)})


def message_shortcut_body(
    team_id: str, user_id: str, channel_id: str, message: dict[str, Any], callback_id: str, *, response_url: str
) -> str:
    payload = {
        "type": "message_action",
        "team": {"id": team_id},
        "user": {"id": user_id},
        "api_app_id": "A0ASKWITH",
        "callback_id": callback_id,
        "trigger_id": f"trigger-{next(_triggers)}",
        "channel": {"id": channel_id},
        "message": message,
        "message_ts": message["ts"],
        "response_url": response_url,
    }
    return urlencode({"payload": json.dumps(payload)})


def view_submission_body(team_id: str, user_id: str, view: dict[str, Any], values: dict[str, Any]) -> str:
    """The modal `view` submitted with its inputs' `values` (block id -> action id -> value)."""
    submitted = {**view, "id": "V0SUBMIT", "state": {"values": values}}
    payload = {
        "type": "view_submission",
        "team": {"id": team_id},
        "user": {"id": user_id},
        "api_app_id": "A0ASKWITH",
        "trigger_id": f"trigger-{next(_triggers)}",
        "view": submitted,
    }
    return urlencode({"payload": json.dumps(payload)})


def bolt_request(secret: str, body: str, **kwargs: Any) -> AsyncBoltRequest:
    headers = signed_headers(secret, body, **kwargs)
    if body.startswith("{"):
        headers["content-type"] = "application/json"
    return AsyncBoltRequest(body=body, headers=headers)
