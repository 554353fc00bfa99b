"""Browser tests: Debian's Chromium driven by Playwright against `askwith serve`'s app on a real uvicorn server.

A member posts `/ask-with` in the local workspace and sees the answer arrive; opens the transcript and sees plans,
memory queries and utterances; a second member gets 403 on it; expired and tampered links are refused.
Screenshots go to test-artifacts/ (git-ignored).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from bot.settings import Settings
from bot.web.tokens import MemberClaim, sign_member_token
from tests.web.harness import BUDGET_QUESTION, SECRET, app_for, web_settings


CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).parents[2] / "test-artifacts"
REQUIRE_BROWSER = os.environ.get("ASKWITH_REQUIRE_BROWSER", "") == "1"

sync_api = pytest.importorskip("playwright.sync_api")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server(settings: Settings) -> Iterator[str]:
    """The served app on a real socket, in a thread of its own (its lifespan runs the ask worker)."""
    port = _free_port()
    app = app_for(web_settings(settings, web_port=port))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the web server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=30)


@pytest.fixture
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        if REQUIRE_BROWSER:
            pytest.fail(f"{CHROMIUM} is missing (apt-get install -y chromium)")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium)")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def _sign_in(browser: object, base: str, member: str):  # noqa: ANN202 - a Playwright Page
    page = browser.new_context().new_page()  # type: ignore[attr-defined]
    page.goto(f"{base}/signin")
    page.click(f"#pick-{member}")
    page.wait_for_url(f"{base}/workspace/**")
    return page


@pytest.mark.slow
def test_ask_in_the_browser_then_read_the_transcript_and_be_refused_elsewhere(server: str, browser: object) -> None:
    expect = sync_api.expect
    alice = _sign_in(browser, server, "alice")
    alice.goto(f"{server}/workspace/C-general")
    alice.fill("#composer-text", f"/ask-with @dave {BUDGET_QUESTION}")
    alice.press("#composer-text", "Enter")
    expect(alice.locator(".ephemeral").last).to_contain_text("Your agent is asking @dave")
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
    expect(alice.locator(".withheld").first).to_contain_text("from Dave Singh's memory")
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
