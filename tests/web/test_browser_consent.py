"""Consent in the browser, without a restart: a colleague's agent shares automatically; he switches sharing to `ask`
in Settings and the very next ask waits for his approval (a prompt showing the text once, who will see it and the
deadline); he denies it and the answer goes on without it; he turns memory off and the next ask naming him is
refused; he turns it back on and asks naming him work again.

Screenshots (tests/web/browser_harness.py: ASKWITH_TEST_ARTIFACTS_DIR, else test-artifacts/): `consent-1-settings`,
`consent-2-approval` (the prompt), `consent-3-denied`, `consent-4-memory-off`.
"""

from __future__ import annotations

import pytest

from tests.web.browser_harness import ARTIFACTS, screenshot, signed_in_page
from tests.web.harness import BUDGET_QUESTION


sync_api = pytest.importorskip("playwright.sync_api")
SECRET = "4,000"  # the party budget: only in Dave's DM with Erin


def ask_dave(page: object, server: str) -> None:
    page.goto(f"{server}/workspace/C-general")  # type: ignore[attr-defined]
    page.fill("#composer-text", f"/ask-with @dave {BUDGET_QUESTION}")  # type: ignore[attr-defined]
    page.press("#composer-text", "Enter")  # type: ignore[attr-defined]


@pytest.mark.slow
def test_sharing_ask_and_memory_off_apply_to_the_very_next_ask(server: str, browser: object) -> None:
    expect = sync_api.expect
    alice = signed_in_page(browser, server, "alice")
    dave = signed_in_page(browser, server, "dave")

    # Dave shares automatically: the budget reaches Alice's answer, and this server has now looked Dave up.
    ask_dave(alice, server)
    alice.wait_for_url(f"{server}/workspace/asks/*")
    expect(alice.locator("#answer")).to_contain_text(SECRET, timeout=60_000)

    # Dave switches to "ask" in Settings; nothing restarts.
    dave.click("#settings-link")
    dave.click("#share-ask")
    dave.click("#save-share")
    expect(dave.locator("#share-ask")).to_be_checked()
    screenshot(dave, "consent-1-settings")

    # The very next ask waits for him: the prompt says the question, the text once, who will see it, the deadline.
    ask_dave(alice, server)
    alice.wait_for_url(f"{server}/workspace/asks/*")
    dave.goto(f"{server}/workspace/C-general")
    approval = dave.locator(".approval").first
    expect(approval).to_contain_text("Who will see it: Alice Chen", timeout=60_000)
    body = approval.inner_text()
    assert "Question from Alice Chen: " + BUDGET_QUESTION in body and "Answer by" in body and "UTC" in body
    assert approval.locator(".approval-quote").inner_text().count(SECRET) == 1 and body.count(SECRET) == 1
    assert "[" not in body and ">" not in body and "\u2022" not in body  # no internal message id, no raw markup
    # The card takes the focus when it arrives, and is where the page opens on a phone (the text above the buttons).
    expect(approval).to_be_focused()
    dave.set_viewport_size({"width": 390, "height": 700})
    dave.reload()
    expect(approval).to_be_focused()
    assert approval.evaluate("e => e.getBoundingClientRect().top >= 0 && e.getBoundingClientRect().top < innerHeight")
    # The picture of the prompt is the card as the page opens on a phone, taken before the keyboard walk below (which
    # scrolls the page button by button: a picture taken after it shows where the walk ended, not the prompt).
    approval.screenshot(path=str(ARTIFACTS / "consent-2-approval.png"))
    # On a phone the pinned composer never hides the card's buttons: each one, in the window but under the composer
    # when the keyboard reaches it, is scrolled above it (focus not obscured), not left where it was.
    seen = (
        "e => { const r = e.getBoundingClientRect();"
        " return e.contains(document.elementFromPoint(r.left + r.width / 2, r.bottom - 2)); }"
    )
    under_composer = (
        "e => scrollBy(0, e.getBoundingClientRect().top"
        " - document.getElementById('composer').getBoundingClientRect().top - 4)"
    )
    for name in ("approve", "deny", "approve-all"):
        button = approval.locator(f"button.{name}")
        button.evaluate(under_composer)
        assert not button.evaluate(seen), f"the {name} button was not put under the composer"
        button.focus()
        assert button.evaluate(seen), f"the {name} button is under the composer"
    # only Approve is styled as the primary button
    colours = [approval.locator(f"button.{c}").evaluate("e => getComputedStyle(e).backgroundColor")
               for c in ("approve", "deny", "approve-all")]  # fmt: skip
    assert colours[0] not in colours[1:], colours
    approval.locator("button.deny").click()
    expect(dave.locator(".approval-confirmed")).to_contain_text("Denied: nothing of it is shared")
    screenshot(dave, "consent-3-denied")
    expect(alice.locator("#answer")).to_be_visible(timeout=60_000)
    assert SECRET not in alice.locator("#answer").inner_text()

    # Memory off: the next ask naming him is refused at once; back on, asks naming him run again.
    dave.click("#settings-link")
    dave.click("#memory-off")
    expect(dave.locator("#memory-on")).to_be_visible()
    ask_dave(alice, server)
    expect(alice.get_by_text("dave has not turned on their askwith agent").first).to_be_visible(timeout=30_000)
    screenshot(alice, "consent-4-memory-off")
    dave.click("#memory-on")
    expect(dave.locator("#memory-off")).to_be_visible()
    ask_dave(alice, server)
    alice.wait_for_url(f"{server}/workspace/asks/*")
    dave.goto(f"{server}/workspace/C-general")
    expect(dave.locator(".approval").first).to_contain_text("Who will see it: Alice Chen", timeout=60_000)
