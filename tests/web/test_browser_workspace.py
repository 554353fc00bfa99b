"""The local web workspace in Debian's Chromium, as a member meets it on the first `askwith serve`: an ask's progress
while the (scripted, slowed-down) model works, the rich answer with a source that opens, a follow-up in the same
thread, the settings page, and a colleague's approval clicked in the page.

Each step leaves a screenshot in the artifacts directory (tests/web/browser_harness.py: ASKWITH_TEST_ARTIFACTS_DIR,
else test-artifacts/). The README's screenshots come from tests/web/test_browser_pages.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from bot.settings import Settings
from tests.web.browser_harness import free_port, screenshot, serving, signed_in_page
from tests.web.harness import BUDGET_QUESTION, QUESTION, app_for, web_settings


sync_api = pytest.importorskip("playwright.sync_api")
MODEL_LATENCY_S = 0.25  # per scripted model call: an ask takes a few seconds, long enough to watch


@pytest.fixture
def server(settings: Settings) -> Iterator[str]:
    port = free_port()
    with serving(app_for(web_settings(settings, web_port=port), latency_s=MODEL_LATENCY_S), port) as base:
        yield base


@pytest.mark.slow
def test_progress_answer_source_follow_up_settings_and_approval_in_the_page(server: str, browser: object) -> None:
    expect = sync_api.expect
    alice = signed_in_page(browser, server, "alice")
    alice.goto(f"{server}/workspace/C-general")
    alice.fill("#composer-text", f"/ask-with @dave {BUDGET_QUESTION}")
    alice.press("#composer-text", "Enter")

    # 1. Progress: the live page follows the ask through its stages (the page polls), with a Cancel button.
    alice.wait_for_url(f"{server}/workspace/asks/*")
    expect(alice.locator("#cancel")).to_be_visible()
    expect(alice.locator("#ask-status")).to_have_attribute("data-stage", re.compile("searching|talking"))
    stages = alice.locator("#ask-stages li").all_inner_texts()
    assert len(stages) >= 2 and stages[-1].startswith(("Searching", "Talking")), stages  # it moved, shown live
    screenshot(alice, "workspace-1-progress")

    # 2. The answer replaces the status by itself: claims with their sources, contributors, transcript, feedback.
    expect(alice.locator("#answer")).to_contain_text("4,000", timeout=30_000)
    expect(alice.locator("#cancel")).to_have_count(0)
    expect(alice.locator(".source.quoted").first).to_contain_text("shared by Dave Singh's agent")
    expect(alice.locator(".contributor")).to_contain_text("Dave Singh's agent")
    screenshot(alice, "workspace-2-answer")
    alice.click("#vote-up")
    expect(alice.locator("#vote-up")).to_have_class("chosen")
    expect(alice.locator(".notice")).to_contain_text("Thanks")
    screenshot(alice, "workspace-2-feedback")
    answer_url = alice.url

    # 3. A follow-up in the same thread, with the same colleague.
    alice.fill("#follow-up-text", "Who approved that budget?")
    alice.click("#send-follow-up")
    alice.wait_for_url(lambda url: url.startswith(f"{server}/workspace/asks/") and url != answer_url)
    expect(alice.locator("h2.question")).to_have_text("Who approved that budget?")
    expect(alice.locator("#thread")).to_contain_text(BUDGET_QUESTION)
    # The follow-up may bring in Erin's agent (a third party who may know); her policy asks her before it shares.
    waiting_for_erin = alice.get_by_text("Waiting for Erin Walsh's agent")
    expect(alice.locator("#answer").or_(waiting_for_erin).first).to_be_visible(timeout=30_000)
    if not alice.locator("#answer").is_visible():
        erin = signed_in_page(browser, server, "erin")
        erin.goto(f"{server}/workspace/C-general")
        erin.locator(".approval").first.locator("button.approve").click(timeout=30_000)
    expect(alice.locator("#answer")).to_be_visible(timeout=30_000)
    screenshot(alice, "workspace-3-follow-up")

    # 4. A source Alice can read herself (her DM with Carol) is a link that opens the message in the workspace.
    alice.goto(f"{server}/workspace/C-general")
    alice.fill("#composer-text", f"/ask-with @carol {QUESTION}")
    alice.press("#composer-text", "Enter")
    alice.wait_for_url(f"{server}/workspace/asks/*")
    source = alice.locator("a.source-link").first
    expect(source).to_contain_text("DM with Carol Díaz", timeout=30_000)
    source.click()
    alice.wait_for_url(re.compile(r".*/workspace/D-alice-carol#msg-.+"))
    message_id = alice.url.split("#")[1]
    expect(alice.locator(f"[id='{message_id}']")).to_contain_text("Room 4B")  # the line that answers, first
    screenshot(alice, "workspace-4-source-opened")

    # 5. Settings: Erin's own page (her agent asks before sharing); an ask from Alice will wait on her.
    erin = signed_in_page(browser, server, "erin")
    erin.click("#settings-link")
    expect(erin.locator("#share-ask")).to_be_checked()
    screenshot(erin, "workspace-5-settings")
    alice.goto(f"{server}/workspace/C-general")
    alice.fill("#composer-text", f"/ask-with @erin {BUDGET_QUESTION}")
    alice.press("#composer-text", "Enter")
    alice.wait_for_url(f"{server}/workspace/asks/*")

    # 6. The approval shows in Erin's page (the channel page polls); she clicks Approve; Alice's answer arrives.
    erin.goto(f"{server}/workspace/C-general")
    approval = erin.locator(".approval").first
    expect(approval).to_contain_text("Share this?", timeout=30_000)
    screenshot(erin, "workspace-6-approval")
    approval.locator("button.approve").click()
    expect(erin.locator(".approval")).to_have_count(0, timeout=10_000)
    expect(alice.locator("#answer")).to_contain_text("4,000", timeout=30_000)
    screenshot(alice, "workspace-7-approved-answer")
    erin.click("#settings-link")
    expect(erin.locator(".shared-item").first).to_contain_text("approved")
