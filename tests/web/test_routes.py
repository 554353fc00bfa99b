"""The served app over the sample workspace, through Starlette's TestClient (lifespan included: the ask worker
runs, so `/ask-with` really goes through `AskService` and the answer really arrives in the member's DM)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from bot.settings import Settings
from bot.web.tokens import MemberClaim, sign_member_token
from tests.web.harness import (
    BUDGET_QUESTION,
    SECRET,
    app_for,
    ask_and_wait,
    post_form,
    sign_in,
    wait_for,
    web_settings,
)


# The hit itself, as the transcript lists it (what the agents then said is theirs to share, and shown to all).
BUDGET_HIT = '<li class="hit">[m0000013]'


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(app_for(web_settings(settings, web_admins="carol"))) as client:
        yield client


def test_a_private_dm_a_member_is_not_in_is_answered_like_one_that_does_not_exist(client: TestClient) -> None:
    sign_in(client, "bob")  # not in Alice and Carol's DM
    for suffix in ("", "/feed"):
        private = client.get(f"/workspace/D-alice-carol{suffix}")
        missing = client.get(f"/workspace/D-no-such-dm{suffix}")
        assert private.status_code == missing.status_code == 404, (suffix, private.status_code, missing.status_code)
        assert private.text == missing.text, suffix  # the same page, word for word
        assert "alice-carol" not in private.text and "Carol" not in private.text
    posted = [post_form(client, f"/workspace/{c}", {"text": "hello?"}) for c in ("D-alice-carol", "D-no-such-dm")]
    assert posted[0].status_code == posted[1].status_code == 404 and posted[0].text == posted[1].text
    client.cookies.clear()
    sign_in(client, "carol")  # a member of it opens it
    assert client.get("/workspace/D-alice-carol").status_code == 200
    assert "hello?" not in client.get("/workspace/D-alice-carol/feed").text  # bob's post went nowhere


def test_healthz_reports_the_database_and_the_model(client: TestClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "llm": "configured", "platforms": ["local"]}


def test_a_member_posts_and_everyone_in_the_channel_sees_it(client: TestClient) -> None:
    sign_in(client, "bob")
    page = post_form(client, "/workspace/C-general", {"text": "Coffee in the kitchen at 3?"})
    assert "Coffee in the kitchen at 3?" in page.text
    client.cookies.clear()
    sign_in(client, "carol")
    assert "Coffee in the kitchen at 3?" in client.get("/workspace/C-general/feed").text
    assert client.get("/workspace/D-alice-bob").status_code == 404  # not carol's DM: as if it did not exist


def test_ask_answer_transcript_redaction_and_access(client: TestClient) -> None:
    sign_in(client, "alice")
    ask_id = ask_and_wait(client, "alice", "dave", BUDGET_QUESTION)
    assert "4,000" in client.get("/workspace/D-alice-askwith/feed").text

    page = client.get(f"/asks/{ask_id}").text  # her own agent's plan and searches; of Dave's, that it searched
    assert BUDGET_QUESTION in page and "clear memory query" in page and '<table class="plan">' in page
    assert 'class="known"' not in page  # the budget was known to Dave's agent's plan only: his
    assert "Dave Singh's agent searched Dave Singh's messages" in page
    assert BUDGET_HIT not in page and "from Dave Singh&#39;s memory" not in page  # not even how much it found
    body = client.get(f"/asks/{ask_id}?format=json").json()
    assert body["ask"]["question"] == BUDGET_QUESTION
    dave = [t for c in body["conversations"] for t in c["turns"] if t["agent"] == "dave"]
    assert dave and all(t["searched"] and not t["queries"] and not t["plan"] for t in dave)
    assert f"#{ask_id}" in client.get("/conversations").text

    client.cookies.clear()
    sign_in(client, "dave")  # his own memory: he reads the hit itself
    assert BUDGET_HIT in client.get(f"/asks/{ask_id}").text

    client.cookies.clear()
    sign_in(client, "bob")  # not part of it
    assert client.get(f"/asks/{ask_id}").status_code == 403
    assert f"/asks/{ask_id}" not in client.get("/conversations").text

    client.cookies.clear()
    sign_in(client, "carol")  # admin: opens it, but reads no agent's searches (only with raw access, logged)
    admin_view = client.get(f"/asks/{ask_id}")
    assert admin_view.status_code == 200 and "Dave Singh's agent searched" in admin_view.text
    assert BUDGET_HIT not in admin_view.text and "from Dave Singh&#39;s memory" not in admin_view.text


@pytest.mark.parametrize("decision", ["approve", "deny"])
def test_a_share_waits_for_the_members_approve_or_deny_button(client: TestClient, decision: str) -> None:
    sign_in(client, "alice")
    post_form(client, "/workspace/C-general", {"text": f"/ask-with @erin {BUDGET_QUESTION}"})
    client.cookies.clear()
    sign_in(client, "bob")  # the prompt is Erin's alone: Bob sees none
    assert "approval" not in client.get("/workspace/C-general/feed").text
    client.cookies.clear()
    sign_in(client, "erin")
    feed = "/workspace/C-general/feed"
    action = wait_for(lambda: re.search(r'action="(/workspace/approvals/[^"]+)"', client.get(feed).text))
    prompt = client.get(feed).text
    assert "Share this?" in prompt and "Answer by" in prompt and " UTC (" in prompt
    assert re.search(r"Who will see it:</strong> Alice Chen\b", prompt)  # names, not handles
    assert "Alice Chen asked something" in prompt and not re.search(r"\[(\w+:)?m\d{7}", prompt)  # no ids
    decided = post_form(client, action[1], {"decision": decision, "back": "/workspace/C-general"})
    confirmation = "Approved: your agent shares exactly this" if decision == "approve" else "Denied: nothing of it"
    assert confirmation in decided.text  # said once, on the page the member comes back to
    client.cookies.clear()
    sign_in(client, "alice")
    dm = "/workspace/D-alice-askwith/feed"
    answer = wait_for(lambda: _answered(client.get(dm).text))
    assert ("4,000" in answer) == (decision == "approve")


def _answered(feed: str) -> str | None:
    return feed if "transcript-link" in feed else None


def test_metrics_count_asks_calls_tokens_and_ingestion_lag(client: TestClient) -> None:
    sign_in(client, "alice")
    ask_and_wait(client, "alice", "dave", BUDGET_QUESTION)
    assert client.get("/metrics").status_code == 401  # not an admin
    client.cookies.clear()
    sign_in(client, "carol")
    text = client.get("/metrics").text
    assert "askwith_asks_started_total 1" in text and "askwith_asks_finished_total 1" in text
    assert "askwith_asks_failed_total 0" in text
    calls = next(line for line in text.splitlines() if line.startswith("askwith_llm_calls_total "))
    assert int(calls.split()[1]) >= 3
    assert 'askwith_llm_tokens_total{kind="prompt"}' in text
    assert 'askwith_ingestion_lag_seconds{workspace="Acme Robotics"}' in text


def test_rejected_asks_answer_at_once_with_the_reason(client: TestClient) -> None:
    sign_in(client, "alice")
    page = post_form(client, "/workspace/C-general", {"text": "/ask-with @nobody where is it?"}).text
    assert "I don&#39;t know anyone called &#39;nobody&#39;" in page
    assert "Only visible to you" in page


def test_admin_pages_are_for_admins_only(client: TestClient) -> None:
    sign_in(client, "alice")
    assert client.get("/admin").status_code == 403
    client.cookies.clear()
    sign_in(client, "carol")
    assert client.get("/admin").status_code == 200
    ingestion = client.get("/admin/ingestion").text
    assert "launch-team" in ingestion and "Erin Walsh" in ingestion
    assert "memory source <strong>mirror</strong>" in ingestion
    assert "No bench reports yet" in client.get("/admin/bench").text


def test_without_a_model_asks_answer_how_to_configure_one(settings: Settings) -> None:
    with TestClient(app_for(web_settings(settings), llm=False)) as client:
        sign_in(client, "alice")
        page = post_form(client, "/workspace/C-general", {"text": f"/ask-with @erin {BUDGET_QUESTION}"}).text
        assert "No language model is configured: set ASKWITH_LLM_BASE_URL" in page
        assert client.get("/healthz").json()["llm"] == "not configured"


# ---------------------------------------------------------------------- signed links (no member picker)
@pytest.fixture
def public_client(settings: Settings) -> Iterator[TestClient]:
    """Bound to all interfaces: no member picker; the only way in is a signed link."""
    with TestClient(app_for(web_settings(settings, web_host="0.0.0.0"))) as client:
        yield client


def _link(member: str, *, ttl: float = 600) -> str:
    return sign_member_token(SECRET, MemberClaim(1, member), expires_at=time.time() + ttl)


def _first_ask(client: TestClient) -> int:
    """Run an ask through the core while the picker is off: submit as Alice via a signed session."""
    client.get(f"/conversations?t={_link('alice')}")
    return ask_and_wait(client, "alice", "dave", BUDGET_QUESTION)


def test_without_a_link_nobody_is_signed_in_and_there_is_no_picker(public_client: TestClient) -> None:
    assert public_client.get("/conversations").status_code == 401
    assert public_client.get("/signin").status_code == 401
    assert public_client.post("/signin", data={"member": "alice"}).status_code == 403


def test_a_signed_link_opens_its_members_transcript_only(public_client: TestClient) -> None:
    ask_id = _first_ask(public_client)
    public_client.cookies.clear()
    assert public_client.get(f"/asks/{ask_id}?t={_link('dave')}").status_code == 200
    public_client.cookies.clear()
    assert public_client.get(f"/asks/{ask_id}?t={_link('bob')}").status_code == 403  # wrong member


def test_expired_and_tampered_links_are_refused_even_when_signed_in(public_client: TestClient) -> None:
    ask_id = _first_ask(public_client)  # signed in as alice now
    expired = public_client.get(f"/asks/{ask_id}?t={_link('alice', ttl=-1)}")
    assert expired.status_code == 403 and "expired" in expired.text
    token = _link("alice")
    tampered = public_client.get(f"/asks/{ask_id}?t={token[:-2]}{'AA' if token[-2:] != 'AA' else 'BB'}")
    assert tampered.status_code == 403 and "not valid" in tampered.text
    assert public_client.get(f"/asks/{ask_id}").status_code == 200  # the session itself still stands
