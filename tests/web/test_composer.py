"""The workspace composer, server side: "@Bob Okafor" is a mention of @bob, whatever is refused comes back with the
text still in the box (and a long echo folded in the note), `/askwith` changes the member's settings, and a mistyped
command gets a one-click fix."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from bot.settings import Settings
from tests.web.harness import app_for, post_form, sign_in, web_settings


BOX = re.compile(r'<textarea name="text" id="composer-text"[^>]*>(.*?)</textarea>', re.S)


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(app_for(web_settings(settings))) as client:
        sign_in(client, "alice")
        yield client


def _box(page: str) -> str:
    match = BOX.search(page)
    assert match, "the page has a message box"
    return html.unescape(match[1])


def test_a_full_display_name_is_a_mention_and_not_the_start_of_the_question(client: TestClient) -> None:
    response = post_form(client, "/workspace/C-general", {"text": "/ask-with @Bob Okafor when are you free?"})
    assert response.status_code == 200 and re.search(r"/workspace/asks/\d+$", str(response.url))
    assert "when are you free?" in response.text and "Okafor when" not in response.text
    assert "asking @bob&#39;s agent" in client.get("/workspace/C-general/feed").text


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("/ask-with @dave " + "Where is the budget sheet? " * 112, "That question is 3,023 characters long"),
        ("/ask-with @zed when is the demo?", "zed"),
        ("/askwit @bob when is the demo?", "/askwit is not a command"),
        ("/askwith shre ask", "/askwith shre is not a setting"),
        ("/ask-with", "Usage: /ask-with"),
    ],
)
def test_a_refused_text_stays_in_the_box(client: TestClient, typed: str, said: str) -> None:
    response = post_form(client, "/workspace/C-general", {"text": typed})
    assert response.status_code == 422 and said in html.unescape(response.text)
    assert _box(response.text) == typed.strip()
    assert 'href="/workspace/asks/' not in client.get("/conversations").text, "nothing was asked"


def test_a_long_echo_in_a_note_is_folded_and_the_reply_stays_in_view(client: TestClient) -> None:
    question = "Where is the budget sheet? " * 112
    page = post_form(client, "/workspace/C-general", {"text": f"/ask-with @dave {question}"}).text
    note = page[page.index('class="box ephemeral note"') :]
    note = note[: note.index("</form>")]
    assert '<details class="fold">' in note and "Show all (3,039 characters)" in note
    summary = note[note.index("<summary>") : note.index("</summary>")]
    assert len(summary) < 400, "the folded echo shows a line, not the question"
    assert "</details><br>" not in note, "no blank line after the fold"
    reply = note[note.index("</details>") :]
    assert "That question is 3,023 characters long; askwith takes up to 2,000." in reply  # outside the fold


def test_a_mistyped_askwith_gets_a_did_you_mean_that_fills_the_box(client: TestClient) -> None:
    page = post_form(client, "/workspace/C-general", {"text": "/askwith shre ask"}).text
    assert '<code id="fix-command">/askwith share ask</code>' in page
    link = html.unescape(re.search(r'id="use-fix" href="([^"]+)"', page)[1])  # type: ignore[index]
    assert link == "/workspace/C-general?draft=/askwith%20share%20ask"
    assert 'data-put-draft="/askwith share ask"' in page  # the same fix without a reload, with JavaScript
    assert _box(client.get(link).text) == "/askwith share ask"
    done = post_form(client, "/workspace/C-general", {"text": "/askwith share ask"})
    assert done.status_code == 200 and 'id="did-you-mean"' not in done.text and _box(done.text) == ""
    assert "Saved. Memory: on" in done.text and "your agent asks you (by DM) before sharing" in done.text


def test_askwith_changes_the_members_own_settings(client: TestClient) -> None:
    post_form(client, "/workspace/C-general", {"text": "/askwith exclude #launch-team"})
    post_form(client, "/workspace/C-general", {"text": "/askwith off"})
    shown = html.unescape(post_form(client, "/workspace/C-general", {"text": "/askwith"}).text)
    assert "Memory: off" in shown and "Channels kept out of memory: #launch-team." in shown
    bare = html.unescape(post_form(client, "/workspace/C-general", {"text": "/askwith share"}).text)
    assert "/askwith share is not a setting askwith knows" in bare and "/askwith share auto|ask|never" in bare
    refused = post_form(client, "/workspace/C-general", {"text": "/askwith exclude #nowhere"})
    assert refused.status_code == 422 and "You are in no channel #nowhere" in refused.text
    assert _box(refused.text) == "/askwith exclude #nowhere" and 'id="did-you-mean"' not in refused.text


def test_askwith_timezone_sets_shows_refuses_and_clears_the_members_zone(settings: Settings) -> None:
    with TestClient(app_for(web_settings(settings, timezone="Europe/Paris"))) as client:
        sign_in(client, "alice")
        shown = html.unescape(post_form(client, "/workspace/C-general", {"text": "/askwith timezone"}).text)
        assert "Deadlines and times you are sent are in Europe/Paris (the workspace's" in shown
        saved = html.unescape(post_form(client, "/workspace/C-general", {"text": "/askwith timezone asia/tokyo"}).text)
        assert "Saved. Deadlines and times you are sent are in Asia/Tokyo (you chose it" in saved
        refused = post_form(client, "/workspace/C-general", {"text": "/askwith timezone Asia/Tokio"})
        assert refused.status_code == 422 and "Did you mean Asia/Tokyo?" in html.unescape(refused.text)
        assert _box(refused.text) == "/askwith timezone Asia/Tokio"
        cleared = html.unescape(post_form(client, "/workspace/C-general", {"text": "/askwith timezone auto"}).text)
        assert "Saved. Deadlines and times you are sent are in Europe/Paris (the workspace's" in cleared


def test_the_box_offers_colleagues_to_mention_and_knows_the_question_cap(settings: Settings) -> None:
    with TestClient(app_for(web_settings(settings, max_question_chars=500))) as client:
        sign_in(client, "alice")
        page = client.get("/workspace/C-general").text
    options = re.findall(r'<li role="option" id="mention-(\w+)" data-handle="(\w+)" data-name="([^"]+)"', page)
    assert [(handle, html.unescape(name)) for _, handle, name in options] == [
        ("bob", "Bob Okafor"), ("carol", "Carol Díaz"), ("dave", "Dave Singh"), ("erin", "Erin Walsh"),
    ]  # fmt: skip
    assert 'id="mention-list" role="listbox"' in page and " hidden>" in page  # shown only by the script
    assert 'id="composer-count" data-cap="500"' in page and 'id="composer-count-status" aria-live="polite"' in page


def test_an_ask_the_server_cannot_run_keeps_its_text(settings: Settings) -> None:
    with TestClient(app_for(web_settings(settings), llm=False)) as client:  # no model configured
        sign_in(client, "alice")
        response = post_form(client, "/workspace/C-general", {"text": "/ask-with @dave What is the budget?"})
    assert response.status_code == 422 and _box(response.text) == "/ask-with @dave What is the budget?"
