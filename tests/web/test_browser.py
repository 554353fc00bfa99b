"""Browser tests: Debian's Chromium driven by Playwright against `askwith serve`'s app on a real uvicorn server.

A member posts `/ask-with` in the local workspace and sees the answer arrive; opens the transcript and sees plans,
memory queries and utterances; a second member gets 403 on it; expired and tampered links are refused.
Screenshots go to test-artifacts/ (git-ignored; see tests/web/browser_harness.py).
"""

from __future__ import annotations

import time

import pytest

from bot.web.tokens import MemberClaim, sign_member_token
from tests.web.browser_harness import ARTIFACTS, signed_in_page
from tests.web.harness import BUDGET_QUESTION, SECRET


sync_api = pytest.importorskip("playwright.sync_api")


def _sign_in(browser: object, base: str, member: str):  # noqa: ANN202 - a Playwright Page
    return signed_in_page(browser, base, member)


@pytest.mark.slow
def test_ask_in_the_browser_then_read_the_transcript_and_be_refused_elsewhere(server: str, browser: object) -> None:
    expect = sync_api.expect
    alice = _sign_in(browser, server, "alice")
    alice.goto(f"{server}/workspace/C-general")
    alice.fill("#composer-text", f"/ask-with @dave {BUDGET_QUESTION}")
    alice.press("#composer-text", "Enter")
    alice.wait_for_url(f"{server}/workspace/asks/*")  # the ask's live page
    alice.click("nav.channels a[data-channel='D-alice-askwith']")
    link = alice.locator("a.transcript-link").last
    expect(link).to_be_visible(timeout=20_000)  # arrives through the polling script, no reload
    expect(alice.locator("#feed")).to_contain_text("4,000 euros")
    alice.screenshot(path=str(ARTIFACTS / "workspace-answer.png"), full_page=True)

    link.click()
    alice.wait_for_url(f"{server}/asks/*")
    transcript_url = alice.url
    expect(alice.locator("table.plan").first).to_contain_text("known")
    expect(alice.locator(".query").first).to_contain_text("clear memory query")
    expect(alice.locator("blockquote.utterance").first).to_be_visible()
    # Dave's searches are his: alice reads that his agent searched, never what for nor how much it found
    expect(alice.locator(".searched").first).to_contain_text("Dave Singh's agent searched Dave Singh's messages")
    expect(alice.locator(".withheld")).to_have_count(0)
    alice.screenshot(path=str(ARTIFACTS / "transcript.png"), full_page=True)

    bob = _sign_in(browser, server, "bob")
    response = bob.goto(transcript_url)
    assert response is not None and response.status == 403
    expect(bob.locator("h1")).to_have_text("Not yours to open")
    bob.screenshot(path=str(ARTIFACTS / "transcript-403.png"), full_page=True)

    _links_are_refused(browser, transcript_url)


def _links_are_refused(browser: object, transcript_url: str) -> None:
    stranger = browser.new_context().new_page()  # type: ignore[attr-defined]
    expired = sign_member_token(SECRET, MemberClaim(1, "alice"), expires_at=time.time() - 1)
    response = stranger.goto(f"{transcript_url}?t={expired}")
    assert response is not None and response.status == 403
    sync_api.expect(stranger.locator(".error-message")).to_contain_text("expired")
    stranger.screenshot(path=str(ARTIFACTS / "link-expired.png"), full_page=True)

    valid = sign_member_token(SECRET, MemberClaim(1, "alice"), expires_at=time.time() + 600)
    tampered = valid[:-3] + ("xyz" if not valid.endswith("xyz") else "abc")
    response = stranger.goto(f"{transcript_url}?t={tampered}")
    assert response is not None and response.status == 403
    sync_api.expect(stranger.locator(".error-message")).to_contain_text("not valid")
    stranger.screenshot(path=str(ARTIFACTS / "link-tampered.png"), full_page=True)

    response = stranger.goto(f"{transcript_url}?t={valid}")  # the genuine link opens it
    assert response is not None and response.status == 200
