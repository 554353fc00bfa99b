"""Medium 6: every state-changing form of the local web workspace refuses a request from another origin or without
the session's CSRF token (red team: a page on another local origin posted a message and submitted /ask-with as the
signed-in member; a page on localhost switched the victim's sign-in)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from starlette.routing import Route
from starlette.testclient import TestClient

from bot.settings import Settings
from tests.web.harness import app_for, csrf_token, post_form, sign_in, wait_for, web_settings


EVIL = {"Origin": "http://localhost:9999"}  # another port of the same host: same site, other origin


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(app_for(web_settings(settings))) as client:
        yield client


def test_a_message_from_another_origin_is_refused_even_with_the_token(client: TestClient) -> None:
    sign_in(client, "bob")
    token = csrf_token(client)
    forged = client.post("/workspace/C-general", data={"text": "forged hello", "csrf_token": token}, headers=EVIL)
    assert forged.status_code == 403
    tokenless = client.post("/workspace/C-general", data={"text": "/ask-with @carol forged ask"})
    assert tokenless.status_code == 403
    feed = client.get("/workspace/C-general/feed").text
    assert "forged hello" not in feed and "forged ask" not in feed
    assert post_form(client, "/workspace/C-general", {"text": "real hello"}).status_code == 200
    assert "real hello" in client.get("/workspace/C-general/feed").text


def test_a_forged_sign_in_switch_or_sign_out_leaves_the_member_signed_in(client: TestClient) -> None:
    sign_in(client, "alice")
    assert client.post("/signin", data={"member": "erin", "next": ""}, headers=EVIL).status_code == 403
    assert client.post("/signin", data={"member": "erin", "next": ""}).status_code == 403
    assert client.post("/signout").status_code == 403
    assert 'id="signed-in-as" data-handle="alice"' in client.get("/conversations").text


def test_a_forged_approval_decides_nothing(client: TestClient) -> None:
    sign_in(client, "alice")
    post_form(client, "/workspace/C-general", {"text": "/ask-with @erin What is the budget for the launch party?"})
    client.cookies.clear()
    sign_in(client, "erin")
    feed = "/workspace/C-general/feed"
    action = wait_for(lambda: re.search(r'action="(/workspace/approvals/[^"]+)"', client.get(feed).text))[1]
    refused = client.post(action, data={"decision": "approve", "back": "/workspace/C-general"}, headers=EVIL)
    assert refused.status_code == 403
    assert action in client.get(feed).text  # still waiting for Erin's own click
    post_form(client, action, {"decision": "deny", "back": "/workspace/C-general"})


def test_every_state_changing_route_wants_the_token(client: TestClient) -> None:
    """New forms are covered without a test of their own: every non-GET route refuses a tokenless request."""
    sign_in(client, "alice")
    routes = [r for r in client.app.routes if isinstance(r, Route) and set(r.methods or ()) - {"GET", "HEAD"}]
    assert len(routes) >= 4
    for route in routes:
        path = re.sub(r"\{[^}]+\}", "x", route.path)
        for method in set(route.methods or ()) - {"GET", "HEAD"}:
            assert client.request(method, path, data={"text": "x"}).status_code == 403, (method, path)
