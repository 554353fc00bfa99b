"""Every page of the web app in Debian's Chromium, on a phone (390 x 844) and a laptop (1280 x 800), light and dark:
no horizontal scrolling, Sign out within reach, and no serious or critical accessibility violation by axe-core
(axe-playwright-python ships axe.min.js, so this runs offline). One served app and one browser for the whole walk.

Screenshots go to the artifacts directory as `pages-<page>-<width>-<scheme>.png` (tests/web/browser_harness.py); the
README's screenshots are copied from them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.bench.report import Run, build_report
from bot.bench.report_files import write_report_files
from bot.settings import Settings
from tests.bench.test_bench_report import config, result
from tests.web.browser_harness import chromium, free_port, screenshot, serving
from tests.web.harness import BUDGET_QUESTION, app_for, web_settings


sync_api = pytest.importorskip("playwright.sync_api")
axe_sync = pytest.importorskip("axe_playwright_python.sync_playwright")
VIEWPORTS = [(390, 844), (1280, 800)]
EDGES = [(360, 740), (1440, 900)]
SCROLL_WIDTHS = "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
SCHEMES = ["light", "dark"]
BLOCKING = {"serious", "critical"}
LONG_QUESTION = "What is the budget for the launch party? " + "Please look in every channel and DM. " * 40


@pytest.fixture
def server(settings: Settings, tmp_path: Path) -> Iterator[str]:
    items = [result("e1", 1.0, rationales_per_plan=4), result("e2", 0.0), result("e3", 1.0)]
    runs = [Run(Path("a"), config("schedule-easy"), items), Run(Path("b"), config("np", scripted=True), items[:1])]
    write_report_files(build_report(runs), runs, tmp_path / "reports" / "nightly")
    port = free_port()
    changed = web_settings(settings, web_port=port, web_admins="alice", bench_reports_dir=tmp_path / "reports")
    with serving(app_for(changed), port) as base:
        yield base


def _signed_in(browser: object, base: str, member: str, width: int, height: int, scheme: str):  # noqa: ANN202
    page = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme).new_page()  # type: ignore[attr-defined]
    page.goto(f"{base}/signin")
    page.click(f"#pick-{member}")
    page.wait_for_url(f"{base}/workspace/**")
    return page


def _ask(page: object, base: str, text: str) -> str:
    """Type an ask in #general, send it with Enter, and wait on its page for the answer; returns that page's URL."""
    page.goto(f"{base}/workspace/C-general")  # type: ignore[attr-defined]
    page.fill("#composer-text", text)  # type: ignore[attr-defined]
    page.press("#composer-text", "Enter")  # type: ignore[attr-defined]
    page.wait_for_url(f"{base}/workspace/asks/*")  # type: ignore[attr-defined]
    sync_api.expect(page.locator("#answer")).to_be_visible(timeout=30_000)  # type: ignore[attr-defined]
    return page.url  # type: ignore[attr-defined]


def _check(page: object, name: str, problems: list[str]) -> None:
    width = page.viewport_size["width"]  # type: ignore[attr-defined]
    scheme = page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'")  # type: ignore[attr-defined]
    where = f"{name} at {width} px, {scheme}"
    scroll, client = page.evaluate(SCROLL_WIDTHS)  # type: ignore[attr-defined]
    if scroll > client:
        problems.append(f"{where}: scrolls sideways ({scroll} > {client} px)")
    sign_out = page.locator("#sign-out")  # type: ignore[attr-defined]
    if sign_out.count() and (box := sign_out.bounding_box()) and box["x"] + box["width"] > width:
        problems.append(f"{where}: Sign out is off-screen")
    for violation in axe_sync.Axe().run(page).response["violations"]:
        if violation["impact"] in BLOCKING:
            targets = [node["target"] for node in violation["nodes"]][:3]
            problems.append(f"{where}: {violation['impact']} {violation['id']} ({violation['help']}) at {targets}")
    screenshot(page, f"pages-{name}-{width}-{scheme}")


@pytest.mark.slow
def test_every_page_fits_phones_and_laptops_light_and_dark_with_no_serious_accessibility_violation(
    server: str,
) -> None:
    with chromium(sync_api) as browser:
        alice = _signed_in(browser, server, "alice", 1280, 800, "light")
        answer_url = _ask(alice, server, f"/ask-with @dave {BUDGET_QUESTION}")
        ask_id = answer_url.rsplit("/", 1)[1]
        _ask(alice, server, f"/ask-with @dave {LONG_QUESTION}")  # long texts fold in the lists and the transcript
        pages = {
            "workspace": "/workspace",
            "ask": f"/workspace/asks/{ask_id}",
            "transcript": f"/asks/{ask_id}",
            "settings": "/settings",
            "conversations": "/conversations",
            "admin": "/admin",
            "bench-report": "/admin/bench?report=nightly",
            "not-found": "/no/such/page",
        }
        problems: list[str] = []
        for width, height in VIEWPORTS:
            for scheme in SCHEMES:
                context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
                page = context.new_page()
                page.goto(f"{server}/signin")
                _check(page, "signin", problems)
                page.click("#pick-alice")
                page.wait_for_url(f"{server}/workspace/**")
                for name, path in pages.items():
                    page.goto(f"{server}{path}")
                    _check(page, name, problems)
                context.close()
                newcomer = _signed_in(browser, server, "bob", width, height, scheme)  # nothing in his DM yet
                sync_api.expect(newcomer.locator("#onboarding")).to_be_visible()
                _check(newcomer, "first-screen", problems)
                newcomer.context.close()
        for width, height in EDGES:  # the narrowest phone and a wide screen: the layout only
            page = _signed_in(browser, server, "alice", width, height, "light")
            for name, path in pages.items():
                page.goto(f"{server}{path}")
                scroll, client = page.evaluate(SCROLL_WIDTHS)
                if scroll > client:
                    problems.append(f"{name} at {width} px: scrolls sideways ({scroll} > {client} px)")
            page.context.close()
        assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_the_keyboard_sends_and_a_typo_is_caught_before_it_is_posted(server: str) -> None:
    expect = sync_api.expect
    with chromium(sync_api) as browser:
        alice = _signed_in(browser, server, "alice", 390, 844, "light")
        alice.goto(f"{server}/workspace/C-general")
        alice.locator("#composer-text").press_sequentially("/askwith @dave hi")
        expect(alice.locator("#composer-hint")).to_be_visible()  # suggested while typing
        alice.click("[data-fix-command]")
        expect(alice.locator("#composer-text")).to_have_value("/ask-with @dave hi")
        expect(alice.locator("#composer-hint")).to_be_hidden()
        answer_url = _ask(alice, server, f"/ask-with @dave {BUDGET_QUESTION}")
        box = alice.locator("#follow-up-text")
        box.press_sequentially("Who approved")
        box.press("Shift+Enter")  # a new line, not a send
        box.press_sequentially("that budget?")
        expect(box).to_have_value("Who approved\nthat budget?")
        assert alice.url == answer_url
        box.press("Enter")
        alice.wait_for_url(lambda url: url.startswith(f"{server}/workspace/asks/") and url != answer_url)
        expect(alice.locator("h2.question")).to_contain_text("Who approved")
        expect(alice.locator("#answer")).to_be_visible(timeout=30_000)
        screenshot(alice, "pages-follow-up-390-light")
