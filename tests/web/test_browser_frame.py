"""The workspace's frame in Debian's Chromium, as a chat app has it: the sidebar in "Channels" and "Direct messages"
(a DM named by the people in it), a header naming the conversation and its members, a badge when an approval waits
for the member, and the composer pinned to the bottom of the window, on a phone with a long conversation too. Each
view is checked with axe-core (no serious or critical violation).

Screenshots (viewport, as the member sees it): `frame-laptop-light.png`, `frame-phone-dark.png` in the artifacts
directory (tests/web/browser_harness.py).
"""

from __future__ import annotations

import re

import pytest

from tests.web.browser_harness import ARTIFACTS, chromium
from tests.web.harness import BUDGET_QUESTION


sync_api = pytest.importorskip("playwright.sync_api")
axe_sync = pytest.importorskip("axe_playwright_python.sync_playwright")
BLOCKING = {"serious", "critical"}
LONG_CONVERSATION = 40  # messages: several screens on a phone
# Post a message through the page's own form (its CSRF token), as the composer does, without a page load each.
POST = """async ([path, count]) => {
  const token = document.querySelector("#composer input[name=csrf_token]").value;
  for (let i = 1; i <= count; i++) {
    const body = new URLSearchParams({csrf_token: token, text: `Status line ${i}: the launch checklist moves on.`});
    const response = await fetch(path, {method: "POST", body, credentials: "same-origin"});
    if (!response.ok) throw new Error(`post ${i}: ${response.status}`);
  }
}"""
# "16 Nov 11:05 UTC", the zone as the browser names it ("UTC", "CET", "GMT+1").
ZONED_TIME = re.compile(r"^\d{1,2} [A-Z][a-z]{2}( \d{4})? \d{2}:\d{2} [A-Z][\w+:-]*$")
IN_VIEW = """(selector) => {
  const box = document.querySelector(selector).getBoundingClientRect();
  return box.top >= 0 && box.bottom <= window.innerHeight && box.height > 0;
}"""


def _page(browser: object, base: str, member: str, size: tuple[int, int], scheme: str):  # noqa: ANN202 - a Page
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, color_scheme=scheme)  # type: ignore[attr-defined]
    page = context.new_page()
    page.goto(f"{base}/signin")
    page.click(f"#pick-{member}")
    page.wait_for_url(f"{base}/workspace/**")
    return page


def _axe(page: object, where: str) -> list[str]:
    return [
        f"{where}: {v['impact']} {v['id']} ({v['help']}) at {[n['target'] for n in v['nodes']][:3]}"
        for v in axe_sync.Axe().run(page).response["violations"]
        if v["impact"] in BLOCKING
    ]


@pytest.mark.slow
def test_sidebar_sections_people_named_dms_header_approval_badge_and_a_pinned_composer(server: str) -> None:
    expect = sync_api.expect
    problems: list[str] = []
    with chromium(sync_api) as browser:
        # Sidebar: two sections; Alice's DM with Carol is "Carol Díaz", never "#alice-carol".
        alice = _page(browser, server, "alice", (1280, 800), "light")
        alice.goto(f"{server}/workspace/C-general")
        nav = alice.locator("nav.channels")
        expect(nav.locator("h2.nav-head")).to_have_text(["Channels", "Direct messages"])
        expect(alice.locator("#nav-channel-list a[data-channel='C-general']")).to_have_text("#general")
        expect(alice.locator("#nav-dm-list a[data-channel='D-alice-carol']")).to_have_text("Carol Díaz")
        assert "alice-carol" not in nav.inner_text()
        expect(alice.locator("#nav-channel-list a[data-channel='D-alice-carol']")).to_have_count(0)
        expect(alice.locator("#approvals-badge")).to_have_count(0)  # nothing waits for Alice

        # Header: the conversation's name and its members (count; the names on expanding).
        expect(alice.locator("#conversation-title")).to_have_text("#general")
        alice.click("#members summary")
        expect(alice.locator("#members-list")).to_contain_text("Carol Díaz")
        expect(alice.locator("#members-list")).not_to_contain_text("@carol")
        problems += _axe(alice, "#general, members open, 1280 light")
        alice.click("#nav-dm-list a[data-channel='D-alice-carol']")
        expect(alice.locator("#conversation-title")).to_have_text("Carol Díaz")
        expect(alice.locator("#members summary")).to_have_text("2 members")
        # Times carry their zone: the browser's, rewritten from the server's "16 Nov 11:05 UTC".
        stamp = alice.locator("#feed time[data-local]").first
        expect(stamp).to_have_text(ZONED_TIME)
        alice.screenshot(path=str(ARTIFACTS / "frame-laptop-light.png"))

        # An approval waits for Erin (her agent asks before sharing): a badge in her sidebar, linking to it.
        alice.goto(f"{server}/workspace/C-general")
        alice.fill("#composer-text", f"/ask-with @erin {BUDGET_QUESTION}")
        alice.press("#composer-text", "Enter")
        alice.wait_for_url(f"{server}/workspace/asks/*")
        erin = _page(browser, server, "erin", (390, 844), "dark")
        erin.goto(f"{server}/workspace/C-general")
        expect(erin.locator(".approval").first).to_be_visible(timeout=30_000)  # the feed polls it in
        erin.reload()
        expect(erin.locator("#approvals-count")).to_have_text("1")
        expect(erin.locator("#approvals-badge")).to_have_attribute("href", "/settings#approvals")

        # A long conversation on a phone: the composer is in view on arrival and after scrolling to the top.
        erin.evaluate(POST, ["/workspace/C-general", LONG_CONVERSATION])
        erin.reload()
        expect(erin.locator("#feed .msg").last).to_contain_text(f"Status line {LONG_CONVERSATION}")
        scroll_height, inner_height = erin.evaluate("[document.documentElement.scrollHeight, window.innerHeight]")
        assert scroll_height > 3 * inner_height, (scroll_height, inner_height)  # it really is long
        assert erin.evaluate(IN_VIEW, "#composer-text"), "the composer is off-screen on arrival"
        assert erin.evaluate(IN_VIEW, "#send"), "Send is off-screen on arrival"
        erin.screenshot(path=str(ARTIFACTS / "frame-phone-dark.png"))
        problems += _axe(erin, "#general, long, approval waiting, 390 dark")
        erin.evaluate("window.scrollTo(0, 0)")
        assert erin.evaluate(IN_VIEW, "#composer-text"), "the composer scrolls away with the messages"
        expect(erin.locator("#conversation-title")).to_be_in_viewport()
        alice.goto(f"{server}/workspace/D-alice-carol")  # Erin's lines are new to Alice: counted in her sidebar
        expect(alice.locator("#nav-channel-list a[data-channel='C-general'] .unread")).to_contain_text(
            re.compile(r"^\d+ unread$")
        )
        erin.click("#approvals-badge")
        erin.wait_for_url(f"{server}/settings#approvals")
        expect(erin.locator("#approvals .approval")).to_have_count(1)
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_times_are_in_the_zone_the_member_picked_rather_than_the_browsers(server: str) -> None:
    expect = sync_api.expect
    with chromium(sync_api) as browser:
        context = browser.new_context(timezone_id="UTC")
        alice = context.new_page()
        alice.goto(f"{server}/signin")
        alice.click("#pick-alice")
        alice.wait_for_url(f"{server}/workspace/**")
        alice.goto(f"{server}/workspace/C-general")
        expect(alice.locator("#feed time[data-local]").first).to_have_text(re.compile(r" UTC$"))  # the browser's
        alice.fill("#composer-text", "/askwith timezone Asia/Tokyo")
        alice.press("#composer-text", "Enter")
        expect(alice.locator(".note")).to_contain_text("Asia/Tokyo (you chose it")
        alice.goto(f"{server}/workspace/C-general")
        expect(alice.locator("#feed time[data-local]").first).to_have_text(re.compile(r" (GMT\+9|JST)$"))
