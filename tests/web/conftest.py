"""Fixtures for the browser tests: the web app served on a free port, and Debian's Chromium driven by Playwright.

A module whose app differs (a model that takes its time, bench reports to show) defines its own `server`.

    def test_sign_in(server: str, browser: object) -> None:
        page = signed_in_page(browser, server, "alice")
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.settings import Settings
from tests.web.browser_harness import chromium, free_port, serving
from tests.web.harness import app_for, web_settings


@pytest.fixture
def server(settings: Settings) -> Iterator[str]:
    port = free_port()
    with serving(app_for(web_settings(settings, web_port=port)), port) as base:
        yield base


@pytest.fixture
def browser() -> Iterator[object]:
    # Imported here, not at the top: the tests of this folder that drive no browser run without Playwright.
    sync_api = pytest.importorskip("playwright.sync_api")
    with chromium(sync_api) as browser:
        yield browser
