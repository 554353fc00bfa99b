"""The live page of an ask in the local web workspace: `/ask-with` leads to it, its progress is the requester's (and
admins') alone, and it shows the answer once the ask is finished."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from bot.settings import Settings
from tests.web.harness import BUDGET_QUESTION, QUESTION, app_for, post_form, sign_in, wait_for, web_settings


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(app_for(web_settings(settings, web_admins="carol"))) as client:
        yield client


def _ask(client: TestClient, colleague: str, question: str) -> int:
    page = post_form(client, "/workspace/C-general", {"text": f"/ask-with @{colleague} {question}"})
    match = re.search(r"/workspace/asks/(\d+)$", str(page.url))
    assert match, page.url
    return int(match[1])


def _finished(client: TestClient, ask_id: int) -> dict[str, object] | None:
    progress = client.get(f"/workspace/asks/{ask_id}/progress").json()
    return progress if progress["finished"] else None


def test_ask_with_opens_its_live_page_which_ends_with_the_answer(client: TestClient) -> None:
    sign_in(client, "alice")
    ask_id = _ask(client, "dave", BUDGET_QUESTION)
    first = client.get(f"/workspace/asks/{ask_id}/progress")
    assert first.status_code == 200 and first.headers["cache-control"] == "no-store"
    assert set(first.json()) >= {"status", "stage", "text", "finished"}
    done = wait_for(lambda: _finished(client, ask_id))
    assert done["status"] == "done"
    page = client.get(f"/workspace/asks/{ask_id}").text
    assert 'id="answer"' in page and "4,000" in page and 'id="cancel"' not in page
    # The budget is in Dave's DM with Erin: Alice gets the line Dave's agent shared, attributed, with no link to it and
    # not a word of where it lies (that Dave and Erin have a DM is theirs).
    assert "shared by Dave Singh's agent</span>" in page and "D-dave-erin" not in page and "dave-erin" not in page
    assert 'data-member="dave"' in page and f'href="/asks/{ask_id}" id="transcript-link"' in page
    assert "Your agent is asking @dave" in client.get("/workspace/C-general/feed").text  # the channel says so too
    dm = client.get("/workspace/D-alice-askwith/feed").text  # the answer in the DM leads back to its page
    assert f'class="answer-page-link" href="/workspace/asks/{ask_id}"' in dm


def test_only_the_requester_and_admins_follow_an_ask(client: TestClient) -> None:
    sign_in(client, "alice")
    ask_id = _ask(client, "dave", BUDGET_QUESTION)
    wait_for(lambda: _finished(client, ask_id))
    client.cookies.clear()
    sign_in(client, "dave")  # a colleague in the ask: the transcript is his to read, the live page is not
    assert client.get(f"/workspace/asks/{ask_id}").status_code == 403
    refused = client.get(f"/workspace/asks/{ask_id}/progress")
    assert refused.status_code == 403 and "4,000" not in refused.text and "status" not in refused.json()
    assert client.get(f"/asks/{ask_id}").status_code == 200
    client.cookies.clear()
    sign_in(client, "carol")  # admin
    assert client.get(f"/workspace/asks/{ask_id}").status_code == 200
    assert client.get("/workspace/asks/999999/progress").status_code == 404
    client.cookies.clear()
    assert client.get(f"/workspace/asks/{ask_id}/progress", follow_redirects=False).status_code == 303  # sign in


def test_a_rejected_ask_stays_in_the_channel_with_the_reason(client: TestClient) -> None:
    sign_in(client, "alice")
    page = post_form(client, "/workspace/C-general", {"text": "/ask-with @nobody where is it?"})
    assert str(page.url).endswith("/workspace/C-general") and "anyone called" in page.text


def test_a_follow_up_asks_the_same_colleagues_again(client: TestClient) -> None:
    sign_in(client, "alice")
    ask_id = _ask(client, "dave", BUDGET_QUESTION)
    wait_for(lambda: _finished(client, ask_id))
    assert 'id="follow-up"' in client.get(f"/workspace/asks/{ask_id}").text
    page = post_form(client, f"/workspace/asks/{ask_id}/follow-up", {"text": "And who pays for it?"})
    follow_id = int(re.search(r"/workspace/asks/(\d+)$", str(page.url))[1])  # type: ignore[index]
    assert follow_id != ask_id and "And who pays for it?" in page.text and "asked Dave Singh" in page.text
    assert 'id="thread"' in page.text and f'href="/workspace/asks/{ask_id}"' in page.text  # the earlier ask above
    wait_for(lambda: _finished(client, follow_id))
    empty = post_form(client, f"/workspace/asks/{ask_id}/follow-up", {"text": "  "})
    assert (
        str(empty.url).endswith(f"/workspace/asks/{ask_id}#follow-up") and 'class="box ephemeral notice"' in empty.text
    )
    client.cookies.clear()
    sign_in(client, "bob")  # not his ask: no follow-up in its thread
    assert post_form(client, f"/workspace/asks/{ask_id}/follow-up", {"text": "hijack"}).status_code == 403


def test_a_source_the_asker_can_read_is_a_link_to_the_message_in_the_workspace(client: TestClient) -> None:
    sign_in(client, "alice")
    ask_id = _ask(client, "carol", QUESTION)  # the rehearsal room: in Alice's own DM with Carol
    wait_for(lambda: _finished(client, ask_id))
    link = re.search(
        r'class="source-link" href="(/workspace/D-alice-carol#msg-([^"]+))"',
        client.get(f"/workspace/asks/{ask_id}").text,
    )
    assert link, "no link to the source"
    channel = client.get(link[1].split("#")[0]).text
    assert f'id="msg-{link[2]}"' in channel  # the message it opens


def test_feedback_is_one_vote_per_member_and_changeable(client: TestClient) -> None:
    sign_in(client, "alice")
    ask_id = _ask(client, "dave", BUDGET_QUESTION)
    wait_for(lambda: _finished(client, ask_id))
    up = post_form(client, f"/workspace/asks/{ask_id}/feedback", {"vote": "up"})
    assert "Thanks for the 👍." in up.text and _chosen(up.text) == "up" and "👍 1" in up.text
    down = post_form(client, f"/workspace/asks/{ask_id}/feedback", {"vote": "down"})
    assert _chosen(down.text) == "down" and "👍 0" in down.text and "👎 1" in down.text
    assert "👎 1" in post_form(client, f"/workspace/asks/{ask_id}/feedback", {"vote": "sideways"}).text  # unchanged
    client.cookies.clear()
    sign_in(client, "bob")
    assert post_form(client, f"/workspace/asks/{ask_id}/feedback", {"vote": "up"}).status_code == 403


def test_the_requester_cancels_an_ask_and_nobody_else_can(client: TestClient) -> None:
    sign_in(client, "alice")
    ask_id = _ask(client, "erin", BUDGET_QUESTION)  # Erin's agent asks her first: the ask waits on her
    wait_for(lambda: client.get(f"/workspace/asks/{ask_id}/progress").json()["stage"] == "waiting" or None)
    (waiting,) = client.get(f"/workspace/asks/{ask_id}/progress").json()["waiting_for"]
    assert waiting.startswith("Waiting for Erin Walsh's agent") and " UTC " in waiting, waiting
    assert "approve" not in waiting and "share" not in waiting  # why it waits is Erin's
    assert 'id="waiting-for"' in client.get(f"/workspace/asks/{ask_id}").text and "Erin Walsh" in waiting
    # The deadline says its zone ("16 Nov 11:05 UTC"), and is a <time> the browser shows in the member's own zone.
    (deadline,) = client.get(f"/workspace/asks/{ask_id}/progress").json()["deadlines"]
    assert re.fullmatch(r"\d{1,2} [A-Z][a-z]{2}( \d{4})? \d\d:\d\d UTC", deadline["at"]) and deadline["at"] in waiting
    page = client.get(f"/workspace/asks/{ask_id}").text
    assert f'<time datetime="{deadline["datetime"]}" data-local>{deadline["at"]}</time>' in page, page
    client.cookies.clear()
    sign_in(client, "bob")
    assert post_form(client, f"/workspace/asks/{ask_id}/cancel", {}).status_code == 403
    client.cookies.clear()
    sign_in(client, "alice")
    assert not client.get(f"/workspace/asks/{ask_id}/progress").json()["finished"]
    page = post_form(client, f"/workspace/asks/{ask_id}/cancel", {})
    assert str(page.url).endswith(f"/workspace/asks/{ask_id}") and 'data-status="cancelled"' in page.text
    assert "cancelled by Alice Chen" in page.text and 'id="cancel"' not in page.text
    assert client.get(f"/workspace/asks/{ask_id}/progress").json() | {"text": ""} == {
        "status": "cancelled",
        "stage": "cancelled",
        "text": "",
        "finished": True,
        "waiting_for": [],
        "deadlines": [],
    }
    again = post_form(client, f"/workspace/asks/{ask_id}/cancel", {})
    assert "already finished" in again.text
    client.cookies.clear()
    sign_in(client, "erin")  # her approval was closed with the ask: nothing left to click
    assert "data-approval=" not in client.get("/settings").text


def _chosen(page: str) -> str | None:
    """Which vote button the page shows as the viewer's own."""
    match = re.search(r'id="vote-(up|down)"[^>]*class="chosen"', page)
    return match[1] if match else None


def test_an_approval_for_the_viewer_shows_on_their_ask_page_too(client: TestClient) -> None:
    sign_in(client, "erin")
    own = _ask(client, "dave", QUESTION)
    client.cookies.clear()
    sign_in(client, "alice")
    _ask(client, "erin", BUDGET_QUESTION)  # Erin's agent asks her first
    client.cookies.clear()
    sign_in(client, "erin")
    approval_id = wait_for(lambda: re.search(r'data-approval="([^"]+)"', client.get(f"/workspace/asks/{own}").text))[1]
    back = f"/workspace/asks/{own}"
    page = post_form(client, f"/workspace/approvals/{approval_id}", {"decision": "deny", "back": back})
    assert str(page.url).endswith(f"{back}?decided=denied") and f'data-approval="{approval_id}"' not in page.text
    assert "Denied: nothing of it is shared" in page.text
