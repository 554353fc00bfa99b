"""The workspace composer in Debian's Chromium: @-autocomplete (an ARIA combobox: "@Bo" lists Bob, Enter, Tab or a
click writes "@bob ", Escape closes), the question counter near askwith's cap, a 3,000-character question refused
with its text still in the box and its echo folded, and a mistyped `/askwith` fixed in one click, with JavaScript and
without. No serious or critical axe-core violation on the way; screenshots go to the artifacts directory as
`composer-*.png` (tests/web/browser_harness.py).
"""

from __future__ import annotations

import pytest

from tests.web.browser_harness import screenshot, signed_in_page


sync_api = pytest.importorskip("playwright.sync_api")
axe_sync = pytest.importorskip("axe_playwright_python.sync_playwright")
BLOCKING = {"serious", "critical"}
LONG_QUESTION = ("Where is the signed budget sheet for the launch party, and who holds it? " * 42).strip()  # 3,065


def _axe_clean(page: object, where: str) -> None:
    violations = axe_sync.Axe().run(page).response["violations"]
    blocking = [f"{v['impact']} {v['id']} at {[n['target'] for n in v['nodes']][:3]}" for v in violations
                if v["impact"] in BLOCKING]  # fmt: skip
    assert not blocking, f"{where}: {blocking}"


@pytest.mark.slow
def test_at_autocomplete_picks_a_colleague_by_keyboard_and_writes_the_handle(server: str, browser: object) -> None:
    expect = sync_api.expect
    alice = signed_in_page(browser, server, "alice")
    alice.goto(f"{server}/workspace/C-general")
    box, listbox = alice.locator("#composer-text"), alice.locator("#mention-list")
    expect(box).to_have_attribute("role", "combobox")
    expect(box).to_have_attribute("aria-expanded", "false")

    box.press_sequentially("/ask-with @Bo")
    expect(listbox).to_be_visible()
    expect(box).to_have_attribute("aria-expanded", "true")
    expect(listbox.locator("[role=option]:visible")).to_have_text([r"Bob Okafor @bob"])
    expect(box).to_have_attribute("aria-activedescendant", "mention-bob")
    expect(alice.locator("#mention-bob")).to_have_attribute("aria-selected", "true")
    _axe_clean(alice, "autocomplete open")
    screenshot(alice, "composer-autocomplete")
    box.press("Enter")  # picks; it does not send
    expect(box).to_have_value("/ask-with @bob ")
    expect(listbox).to_be_hidden()
    assert alice.url == f"{server}/workspace/C-general"

    box.press_sequentially("@")  # every colleague, arrows move through them, Tab picks
    expect(listbox.locator("[role=option]:visible")).to_have_count(4)
    box.press("ArrowDown")
    box.press("ArrowDown")
    expect(box).to_have_attribute("aria-activedescendant", "mention-dave")
    box.press("Tab")
    expect(box).to_have_value("/ask-with @bob @dave ")
    box.press_sequentially("@Díaz")  # a surname finds its colleague too
    expect(listbox.locator("[role=option]:visible")).to_have_text([r"Carol Díaz @carol"])
    box.press("Escape")
    expect(listbox).to_be_hidden()
    expect(box).to_have_value("/ask-with @bob @dave @Díaz")
    box.fill("")
    box.press_sequentially("/ask-with @Ca")
    alice.click("#mention-carol")
    expect(box).to_have_value("/ask-with @carol ")
    expect(box).to_be_focused()


@pytest.mark.slow
def test_a_question_over_the_cap_is_counted_then_refused_with_its_text_kept(server: str, browser: object) -> None:
    expect = sync_api.expect
    alice = signed_in_page(browser, server, "alice")
    alice.goto(f"{server}/workspace/C-general")
    box, count = alice.locator("#composer-text"), alice.locator("#composer-count")
    box.fill("/ask-with @dave " + "x" * 1700)
    expect(count).to_be_hidden()  # far from the cap: no counter
    box.fill("/ask-with @dave " + "x" * 1850)
    expect(count).to_have_text("1,850 / 2,000 characters")
    expect(alice.locator("#composer-count-status")).to_have_text(
        "Near askwith's 2,000-character limit for a question."
    )
    typed = f"/ask-with @dave {LONG_QUESTION}"
    box.fill(typed)
    expect(count).to_have_text(f"{len(LONG_QUESTION):,} / 2,000 characters")
    expect(count).to_have_class("composer-count muted over")
    expect(alice.locator("#composer-count-status")).to_contain_text("Over askwith's 2,000-character limit")
    box.press("Enter")

    expect(alice.locator(".note").last).to_contain_text(f"That question is {len(LONG_QUESTION):,} characters long")
    expect(box).to_have_value(typed)  # nothing lost: the member shortens it and sends again
    note = alice.locator(".note").last
    expect(note.locator("details.fold")).to_have_count(1)
    height = note.bounding_box()["height"]
    assert height < 200, f"the note is {height} px tall: the echo is folded"
    _axe_clean(alice, "refused question")
    screenshot(alice, "composer-too-long")


@pytest.mark.slow
@pytest.mark.parametrize("javascript", [True, False])
def test_a_mistyped_askwith_is_fixed_in_one_click(server: str, browser: object, javascript: bool) -> None:
    expect = sync_api.expect
    context = browser.new_context(viewport={"width": 1200, "height": 800}, java_script_enabled=javascript)  # type: ignore[attr-defined]
    alice = context.new_page()
    alice.goto(f"{server}/signin")
    alice.click("#pick-alice")
    alice.wait_for_url(f"{server}/workspace/**")
    alice.goto(f"{server}/workspace/C-general")
    box = alice.locator("#composer-text")
    box.fill("/askwith shre ask")
    alice.click("#send")

    expect(alice.locator("#did-you-mean")).to_contain_text("Did you mean /askwith share ask?")
    expect(box).to_have_value("/askwith shre ask")
    if javascript:
        _axe_clean(alice, "did you mean")
        screenshot(alice, "composer-did-you-mean")
    alice.click("#use-fix")
    expect(box).to_have_value("/askwith share ask")
    alice.click("#send")
    expect(alice.locator(".note").last).to_contain_text("your agent asks you (by DM) before sharing anything")
    expect(box).to_have_value("")
    expect(alice.locator("#did-you-mean")).to_have_count(0)
    context.close()
