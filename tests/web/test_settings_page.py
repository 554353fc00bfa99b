"""The member's own settings page: memory, sharing and excluded channels through the same store as the platforms'
commands; approvals decided in the page and stored; every change the signed-in member's own."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from bot.consent.pending import ApprovalStore
from bot.platform.port import SharePolicy
from bot.settings import Settings
from bot.store.chat_store import WorkspaceKey
from bot.store.member_settings import MemberSettings, MemberSettingsStore
from tests.web.harness import BUDGET_QUESTION, app_for, post_form, sign_in, wait_for, web_settings


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(app_for(web_settings(settings))) as client:
        yield client


def _stored(client: TestClient, member_id: str) -> MemberSettings:
    runtime = client.app_state["runtime"]
    key = WorkspaceKey("local", runtime.local.port.world.id)
    return client.portal.call(MemberSettingsStore(runtime.db).get, key, member_id)  # type: ignore[union-attr]


def test_memory_sharing_and_exclusions_change_the_members_own_settings(client: TestClient) -> None:
    sign_in(client, "bob")
    page = client.get("/settings").text
    assert 'Memory is <strong id="memory-state">on' in page and 'id="share-auto"' in page
    off = post_form(client, "/settings/memory", {"memory": "off"})
    assert str(off.url).endswith("/settings?saved=memory") and "Saved: memory setting." in off.text
    assert not _stored(client, "bob").opted_in
    post_form(client, "/settings/share", {"share": "ask"})
    assert _stored(client, "bob").share is SharePolicy.ASK
    excluded = post_form(client, "/settings/exclusions", {"exclude": "C-general"})
    assert _stored(client, "bob").excluded_channels == ("C-general",)
    assert 'id="exclude-C-general" checked' in excluded.text
    post_form(client, "/settings/exclusions", {})  # nothing ticked: let it back in
    assert _stored(client, "bob").excluded_channels == ()
    assert _stored(client, "alice").opted_in and _stored(client, "alice").share is not SharePolicy.ASK


def test_settings_refuse_what_the_form_never_offers(client: TestClient) -> None:
    sign_in(client, "carol")
    assert post_form(client, "/settings/memory", {"memory": "maybe"}).status_code == 400
    assert post_form(client, "/settings/share", {"share": "everyone"}).status_code == 400
    assert post_form(client, "/settings/exclusions", {"exclude": "D-alice-bob"}).status_code == 400  # not hers
    assert _stored(client, "carol").excluded_channels == ()


def test_an_approval_is_decided_in_the_settings_page_by_its_member_only_and_stored(client: TestClient) -> None:
    sign_in(client, "alice")
    post_form(client, "/workspace/C-general", {"text": f"/ask-with @erin {BUDGET_QUESTION}"})
    client.cookies.clear()
    sign_in(client, "erin")
    approval_id = wait_for(lambda: re.search(r'data-approval="([^"]+)"', client.get("/settings").text))[1]
    client.cookies.clear()
    sign_in(client, "bob")
    assert "Waiting for your approval" not in client.get("/settings").text  # Erin's alone
    post_form(client, f"/workspace/approvals/{approval_id}", {"decision": "approve", "back": "/settings"})
    assert _approval(client, approval_id) == "pending"  # Bob cannot decide it
    client.cookies.clear()
    sign_in(client, "erin")
    page = post_form(client, f"/workspace/approvals/{approval_id}", {"decision": "approve", "back": "/settings"})
    assert str(page.url).endswith("/settings?decided=approved") and "Approved: your agent shares" in page.text
    assert _approval(client, approval_id) == "approved"


def _approval(client: TestClient, approval_id: str) -> str:
    row = client.portal.call(ApprovalStore(client.app_state["runtime"].db).get, approval_id)  # type: ignore[union-attr]
    assert row is not None and row.member_id == "erin"
    return row.status


def test_recent_asks_and_what_my_agent_shared_with_whom(client: TestClient) -> None:
    sign_in(client, "alice")
    page = post_form(client, "/workspace/C-general", {"text": f"/ask-with @dave {BUDGET_QUESTION}"})
    ask_id = int(re.search(r"/workspace/asks/(\d+)$", str(page.url))[1])  # type: ignore[index]
    wait_for(lambda: client.get(f"/workspace/asks/{ask_id}/progress").json()["finished"] or None)
    mine = client.get("/settings").text
    assert f'<a href="/workspace/asks/{ask_id}">{BUDGET_QUESTION}</a>' in mine
    asked = re.search(r'<tr class="recent-ask">(.*?)</tr>', mine, re.S)
    assert asked and "Dave Singh" in asked[1] and "@dave" not in asked[1]  # people by name, not by handle
    assert 'data-handle="alice">Alice Chen</strong>' in mine and "(@alice)" not in mine  # the top bar: her name
    assert "Your agent has shared nothing yet." in mine  # Alice's agent asked; it shared nothing for others
    client.cookies.clear()
    sign_in(client, "dave")
    shared = client.get("/settings").text
    row = re.search(r'<tr class="shared-item">(.*?)</tr>', shared, re.S)
    assert row and "Alice Chen" in row[1] and "@alice" not in row[1]  # people by name, not by handle
    assert BUDGET_QUESTION in row[1] and "auto" in row[1] and "4,000" in row[1]
    assert BUDGET_QUESTION not in shared.split('id="shared-by-me"')[0]  # not among Dave's own asks


def test_forged_settings_and_ask_actions_from_another_origin_change_nothing(client: TestClient) -> None:
    evil = {"Origin": "http://localhost:9999"}
    sign_in(client, "alice")
    token = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/settings").text)[1]  # type: ignore[index]
    for path, data in (
        ("/settings/memory", {"memory": "off"}),
        ("/settings/share", {"share": "never"}),
        ("/settings/exclusions", {"exclude": "C-general"}),
        ("/workspace/asks/1/cancel", {}),
        ("/workspace/asks/1/feedback", {"vote": "down"}),
        ("/workspace/asks/1/follow-up", {"text": "forged"}),
    ):
        assert client.post(path, data={**data, "csrf_token": token}, headers=evil).status_code == 403, path
    stored = _stored(client, "alice")
    assert stored.opted_in and stored.share is not SharePolicy.NEVER and stored.excluded_channels == ()
