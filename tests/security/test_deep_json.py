"""A signed Slack body nested 200,000 deep gets a 400 from a real `askwith serve` process, not a 500 with a
RecursionError (red team: bolt's JSON parsing recursed without bound); an ordinary signed body still works."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import httpx

from bot.base.json_limits import MAX_DEPTH, too_deep
from tests.fakes.served_slack import SIGNING_SECRET, ServedSlack
from tests.fakes.slack_requests import signed_headers


DEPTH = 200_000


async def test_a_deeply_nested_signed_body_is_a_400(tmp_path: Path) -> None:
    nested = "[" * DEPTH + "]" * DEPTH
    bodies = {
        "event JSON": json.dumps({"type": "event_callback", "token": "x"})[:-1] + f', "event": {nested}}}',
        "interactive payload": "payload=" + quote(nested[DEPTH // 2 : -DEPTH // 2]),  # within the size bound
    }
    async with ServedSlack(tmp_path, log_level="INFO") as served:
        async with httpx.AsyncClient(base_url=served.url, timeout=60) as http:
            answers = {}
            for name, body in bodies.items():
                kind = "application/json" if body.startswith("{") else "application/x-www-form-urlencoded"
                headers = {**signed_headers(SIGNING_SECRET, body), "content-type": kind}
                answers[name] = (await http.post("/slack/events", content=body, headers=headers)).status_code
            ok = "ssl_check=1&token=x"
            fine = await http.post("/slack/events", content=ok, headers=signed_headers(SIGNING_SECRET, ok))
        logs = served.logs()
    assert answers == {name: 400 for name in bodies}, answers
    assert fine.status_code == 200
    assert "RecursionError" not in logs and "Traceback" not in logs


def test_the_depth_check_reads_brackets_outside_strings_only() -> None:
    assert not too_deep(json.dumps({"text": "[" * 10_000}))
    assert not too_deep("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    assert too_deep("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    assert too_deep('{"a": ' * 100 + "1" + "}" * 100)
