"""The local web workspace as a newcomer meets it: a typo'd command is never posted, questions are bounded and long
texts folded, notes can be dismissed and sit among the messages, answers in the DM say what they answer and link
their sources, a waiting or withheld share is said plainly, unknown addresses get a page of the app, the first
screen offers an ask to try, and the sidebar counts what is new."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from bot.settings import Settings
from tests.web.harness import BUDGET_QUESTION, QUESTION, app_for, post_form, sign_in, wait_for, web_settings


NOTE = re.compile(r'id="note-([0-9a-f]+)"')


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(app_for(web_settings(settings, web_admins="alice"))) as client:
        yield client


def _asks_of(client: TestClient) -> list[str]:
    return re.findall(r'href="/workspace/asks/(\d+)"', client.get("/conversations").text)


@pytest.mark.parametrize("typed", ["/askwith", "/ask", "/askwith-me", "/ASKWITH"])
def test_an_unknown_command_is_never_posted_and_ask_with_is_suggested(client: TestClient, typed: str) -> None:
    sign_in(client, "alice")
    before = client.get("/workspace/C-general/feed").text.count('class="msg')
    feed = post_form(client, "/workspace/C-general", {"text": f"{typed} @bob {QUESTION}"}).text
    assert feed.count('class="msg') == before, "nothing was posted to #general"
    # `/askwith` is the settings command, which takes no colleague; the others are no command at all.
    refused = f"{typed} @bob is not a setting" if typed.lower() == "/askwith" else f"{typed} is not a command"
    assert refused in feed and "nothing was posted" in feed and f"/ask-with @bob {QUESTION}" in feed
    client.cookies.clear()
    sign_in(client, "bob")
    assert QUESTION not in client.get("/workspace/C-general/feed").text, "the channel never saw the question"
    assert _asks_of(client) == []


def test_a_message_that_merely_starts_with_a_slash_is_posted(client: TestClient) -> None:
    sign_in(client, "alice")
    feed = post_form(client, "/workspace/C-general", {"text": "/usr/local is full again"}).text
    assert "/usr/local is full again" in feed and "nothing was posted" not in feed
    assert 'data-command-hint="composer-hint"' in feed and 'id="composer-hint"' in feed  # the live suggestion


def test_questions_are_capped_with_a_clear_message(client: TestClient) -> None:
    sign_in(client, "alice")
    feed = post_form(client, "/workspace/C-general", {"text": f"/ask-with @dave {'x' * 2001}"}).text
    assert "That question is 2,001 characters long; askwith takes up to 2,000." in feed
    assert _asks_of(client) == []
    post_form(client, "/workspace/C-general", {"text": f"/ask-with @dave {'budget ' * 280}"})  # 1,960: taken
    assert len(_asks_of(client)) == 1


def test_the_cap_is_a_setting(settings: Settings) -> None:
    with TestClient(app_for(web_settings(settings, max_question_chars=100))) as client:
        sign_in(client, "alice")
        feed = post_form(client, "/workspace/C-general", {"text": f"/ask-with @dave {'y' * 101}"}).text
        assert "takes up to 100." in feed and _asks_of(client) == []


def test_long_texts_are_folded_in_my_conversations_admin_and_the_transcript(client: TestClient) -> None:
    sign_in(client, "alice")
    question = "What is the budget for the launch party? " + "Please check every channel. " * 50
    post_form(client, "/workspace/C-general", {"text": f"/ask-with @dave {question}"})
    (ask_id,) = _asks_of(client)
    wait_for(lambda: client.get(f"/workspace/asks/{ask_id}/progress").json()["finished"] or None)
    assert client.get("/settings").text.count("Please check every channel.") <= 6  # a link: shortened
    for path in ("/conversations", "/admin", f"/asks/{ask_id}", f"/workspace/asks/{ask_id}"):
        page = client.get(path).text
        assert '<details class="fold">' in page and "Show all (" in page, path
        if path in ("/conversations", "/admin"):  # (a transcript repeats it in the prompts, each folded away too)
            assert page.count("Please check every channel.") <= 60, path  # once whole, inside the fold


def test_a_long_message_is_folded_in_the_channel(client: TestClient) -> None:
    sign_in(client, "alice")
    feed = post_form(client, "/workspace/C-general", {"text": "Minutes: " + "we agreed on <b>Friday</b>. " * 100}).text
    assert '<details class="fold">' in feed and "Show all (2,808 characters)" in feed
    assert "<b>Friday</b>" not in feed and "&lt;b&gt;Friday&lt;/b&gt;" in feed  # escaped, folded or not


def test_notes_are_dismissable_and_sit_among_the_messages(client: TestClient) -> None:
    sign_in(client, "alice")
    post_form(client, "/workspace/C-general", {"text": "/askwith @bob hi"})
    post_form(client, "/workspace/C-general", {"text": "a later message"})
    feed = client.get("/workspace/C-general/feed").text
    (note,) = NOTE.findall(feed)
    assert feed.index(f'id="note-{note}"') < feed.index("a later message"), "the note is in time order"
    assert feed.index("Heads up: the staging cluster") < feed.index(f'id="note-{note}"')
    client.cookies.clear()
    sign_in(client, "bob")  # only the member it was for can dismiss it
    post_form(client, f"/workspace/notes/{note}/dismiss", {"back": "/workspace/C-general"})
    client.cookies.clear()
    sign_in(client, "alice")
    assert f'id="note-{note}"' in client.get("/workspace/C-general/feed").text
    page = post_form(client, f"/workspace/notes/{note}/dismiss", {"back": "/workspace/C-general"})
    assert str(page.url).endswith("/workspace/C-general") and f'id="note-{note}"' not in page.text


def test_an_answer_in_the_dm_shows_its_question_and_links_its_sources(client: TestClient) -> None:
    sign_in(client, "alice")
    post_form(client, "/workspace/C-general", {"text": f"/ask-with @carol {QUESTION}"})
    dm_feed = "/workspace/D-alice-askwith/feed"
    dm = wait_for(lambda: page if "dm-answer" in (page := client.get(dm_feed).text) else None)
    assert f"You asked @carol:</span> <strong>{QUESTION}</strong>" in dm
    assert re.search(r'class="source-link" href="/workspace/D-alice-carol#msg-m\d+">DM with Carol Díaz, <time', dm), dm
    assert "#alice-carol" not in dm  # a DM is named by the person in it
    assert not re.search(r"\(message m\d+\)", dm), "no internal message id"


def test_a_share_denied_is_said_plainly_not_as_a_failure(client: TestClient) -> None:
    sign_in(client, "alice")
    post_form(client, "/workspace/C-general", {"text": f"/ask-with @erin {BUDGET_QUESTION}"})
    (ask_id,) = _asks_of(client)
    client.cookies.clear()
    sign_in(client, "erin")
    approval = wait_for(lambda: re.search(r'data-approval="([^"]+)"', client.get("/workspace/C-general/feed").text))
    post_form(client, f"/workspace/approvals/{approval[1]}", {"decision": "deny", "back": "/workspace/C-general"})
    client.cookies.clear()
    sign_in(client, "alice")
    wait_for(lambda: client.get(f"/workspace/asks/{ask_id}/progress").json()["finished"] or None)
    page = client.get(f"/workspace/asks/{ask_id}").text
    assert "Erin Walsh chose not to share that, so their agent kept it back." in page
    answer = page[page.index('id="answer"') :]
    assert 'class="status-failed' not in answer and 'failure status-failed"' not in answer, answer[:1500]
    assert '<td class="status-withheld">withheld</td>' in client.get("/conversations").text


def test_the_follow_up_box_sends_on_enter_and_says_what_it_does(client: TestClient) -> None:
    sign_in(client, "alice")
    post_form(client, "/workspace/C-general", {"text": f"/ask-with @dave {BUDGET_QUESTION}"})
    (ask_id,) = _asks_of(client)
    wait_for(lambda: client.get(f"/workspace/asks/{ask_id}/progress").json()["finished"] or None)
    page = client.get(f"/workspace/asks/{ask_id}").text
    assert 'id="follow-up-text" placeholder="Ask a follow-up question" data-enter-sends' in page
    assert ">Send follow-up</button>" in page and "Ask again" not in page


def test_an_unknown_address_gets_a_page_of_the_app(client: TestClient) -> None:
    anonymous = client.get("/no/such/page")
    assert anonymous.status_code == 404 and "<header>" in anonymous.text and "There is no page" in anonymous.text
    sign_in(client, "alice")
    page = client.get("/no/such/page")
    assert page.status_code == 404 and 'id="sign-out"' in page.text and 'id="go-home"' in page.text


def test_the_first_screen_offers_an_example_ask_that_the_sample_answers(client: TestClient) -> None:
    sign_in(client, "alice")
    first = client.get("/workspace").text
    assert 'id="onboarding"' in first and "/ask-with @carol Which room is booked for the rehearsal?" in first
    client.cookies.clear()
    sign_in(client, "carol")  # never asked to ask herself
    assert "/ask-with @dave What is the budget for the launch party?" in client.get("/workspace").text


def test_without_a_model_the_reply_mentions_the_scripted_demo(settings: Settings) -> None:
    with TestClient(app_for(web_settings(settings), llm=False)) as client:
        sign_in(client, "alice")
        page = post_form(client, "/workspace/C-general", {"text": f"/ask-with @erin {BUDGET_QUESTION}"}).text
        assert "--scripted" in page


def test_design_notes_live_under_docs() -> None:
    root = Path(__file__).parents[2]
    assert [p.name for p in root.glob("*.md")] == ["README.md"]
    assert (root / "docs" / "UX_CORE_API.md").is_file()


def test_the_sidebar_counts_what_others_posted_since_the_member_last_looked(client: TestClient) -> None:
    unread = re.compile(r'data-channel="C-general">.*?</a>', re.S)
    sign_in(client, "carol")
    first = client.get("/workspace/D-askwith-carol").text
    assert "data-unread" not in unread.search(first)[0], "what came before her first visit is not new"
    carol = dict(client.cookies)
    client.cookies.clear()
    sign_in(client, "bob")  # another member posts twice
    for text in ("Lunch at noon?", "Or at one?"):
        post_form(client, "/workspace/C-general", {"text": text})
    client.cookies.clear()
    client.cookies.update(carol)  # carol again, in her own browser
    assert (
        'data-unread="2">2<span class="visually-hidden"> unread</span>'
        in unread.search(client.get("/workspace/D-askwith-carol").text)[0]
    )
    client.get("/workspace/C-general")  # she reads them
    post_form(client, "/workspace/C-general", {"text": "Noon works."})  # her own message is never unread
    assert "data-unread" not in unread.search(client.get("/workspace/D-askwith-carol").text)[0]
