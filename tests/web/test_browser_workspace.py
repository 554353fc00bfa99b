"""The local web workspace in Debian's Chromium, as a member meets it on the first `askwith serve`: an ask's progress
while the (scripted, slowed-down) model works, the rich answer with a source that opens, a follow-up in the same
thread, the settings page, and a colleague's approval clicked in the page.

Each step leaves a screenshot in the artifacts directory (tests/web/browser_harness.py: ASKWITH_TEST_ARTIFACTS_DIR,
else test-artifacts/). The README's screenshot of an answer is `workspace-2-answer.png` from this run.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.settings import Settings
from tests.web.browser_harness import chromium, free_port, screenshot, serving, signed_in_page
from tests.web.harness import BUDGET_QUESTION, app_for, web_settings


sync_api = pytest.importorskip("playwright.sync_api")
MODEL_LATENCY_S = 0.25  # per scripted model call: an ask takes a few seconds, long enough to watch


@pytest.fixture
def server(settings: Settings) -> Iterator[str]:
    port = free_port()
    with serving(app_for(web_settings(settings, web_port=port), latency_s=MODEL_LATENCY_S), port) as base:
        yield base


@pytest.fixture
def browser() -> Iterator[object]:
    with chromium(sync_api) as browser:
        yield browser


@pytest.mark.slow
def test_progress_answer_source_follow_up_settings_and_approval_in_the_page(server: str, browser: object) -> None:
    expect = sync_api.expect
    alice = signed_in_page(browser, server, "alice")
    alice.goto(f"{server}/workspace/C-general")
    alice.fill("#composer-text", f"/ask-with @dave {BUDGET_QUESTION}")
    alice.press("#composer-text", "Enter")

    # 1. Progress: the live page shows the ask's stage while the agents work, and a Cancel button.
    alice.wait_for_url(f"{server}/workspace/asks/*")
    expect(alice.locator("#ask-status")).to_be_visible()
    expect(alice.locator("#cancel")).to_be_visible()
    expect(alice.locator("#ask-status-text")).not_to_have_text("")
    screenshot(alice, "workspace-1-progress")

    # 2. The answer replaces the status by itself (no reload by the member).
    expect(alice.locator("#answer")).to_contain_text("4,000", timeout=30_000)
    expect(alice.locator("#cancel")).to_have_count(0)
    screenshot(alice, "workspace-2-answer")

    # 3. A follow-up in the same thread, with the same colleague.
    first_ask = alice.url
    alice.fill("#follow-up-text", "Who approved that budget?")
    alice.click("#send-follow-up")
    alice.wait_for_url(lambda url: url.startswith(f"{server}/workspace/asks/") and url != first_ask)
    expect(alice.locator("h2.question")).to_have_text("Who approved that budget?")
    expect(alice.locator("#answer")).to_be_visible(timeout=30_000)
    screenshot(alice, "workspace-3-follow-up")

    # 4. Settings: Erin (whose agent asks before sharing) sees her settings; an ask from Alice waits on her.
    erin = signed_in_page(browser, server, "erin")
    erin.click("#settings-link")
    expect(erin.locator("#share-ask")).to_be_checked()
    screenshot(erin, "workspace-4-settings")
    alice.goto(f"{server}/workspace/C-general")
    alice.fill("#composer-text", f"/ask-with @erin {BUDGET_QUESTION}")
    alice.press("#composer-text", "Enter")
    alice.wait_for_url(f"{server}/workspace/asks/*")

    # 5. The approval shows in Erin's page (it polls); she clicks Approve, and Alice's answer arrives.
    erin.goto(f"{server}/workspace/C-general")
    approval = erin.locator(".approval").first
    expect(approval).to_contain_text("Share this with", timeout=30_000)
    screenshot(erin, "workspace-5-approval")
    approval.locator("button.approve").click()
    expect(erin.locator(".approval")).to_have_count(0, timeout=10_000)
    expect(alice.locator("#answer")).to_contain_text("4,000", timeout=30_000)
    screenshot(alice, "workspace-6-approved-answer")
