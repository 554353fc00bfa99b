"""Medium 7: a transcript link signs its member in once and leaves the URL (red team: `GET /asks/1?t=…` in the access
log; each link signed a member in for 7 days; sign-out did not revoke a copied session cookie)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from bot.settings import Settings
from bot.web.tokens import MemberClaim, sign_member_token
from tests.web.harness import SECRET, app_for, ask_and_wait, post_form, web_settings


SESSION_S = 3600


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    """Bound to all interfaces (no member picker): links are the only way in."""
    with TestClient(app_for(web_settings(settings, web_host="0.0.0.0", web_session_seconds=SESSION_S))) as client:
        yield client


def _link(member: str) -> str:
    return sign_member_token(SECRET, MemberClaim(1, member), expires_at=time.time() + 7 * 86400)


def test_a_link_is_exchanged_for_a_short_session_and_a_clean_url(client: TestClient) -> None:
    opened = client.get(f"/conversations?t={_link('alice')}&tab=asks", follow_redirects=False)
    assert opened.status_code == 303 and opened.headers["location"] == "/conversations?tab=asks"
    cookie = opened.headers["set-cookie"]
    assert f"Max-Age={SESSION_S}" in cookie and _link("alice").split(".")[0] not in cookie
    assert client.get("/conversations").status_code == 200


def test_sign_out_ends_the_session_so_a_copied_cookie_stops_working(client: TestClient) -> None:
    client.get(f"/conversations?t={_link('alice')}")
    ask_and_wait(client, "alice", "dave", "What is the budget for the launch party?")
    copied = dict(client.cookies)
    post_form(client, "/signout", {})
    assert client.get("/conversations").status_code == 401
    client.cookies.clear()
    client.cookies.update(copied)  # someone kept a copy of the signed-in cookie
    assert client.get("/conversations").status_code == 401
    assert client.get("/asks/1").status_code == 401
