"""Driving Debian's Chromium with Playwright against the served app on a real uvicorn server.

Screenshots are artifacts of the run: they go to ASKWITH_TEST_ARTIFACTS_DIR when set, else `test-artifacts/` at the
repository root (git-ignored). ASKWITH_REQUIRE_BROWSER=1 (CI) turns a missing Chromium into a failure, not a skip.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn
from starlette.applications import Starlette


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
ARTIFACTS = Path(os.environ.get("ASKWITH_TEST_ARTIFACTS_DIR") or Path(__file__).parents[2] / "test-artifacts")
REQUIRE_BROWSER = os.environ.get("ASKWITH_REQUIRE_BROWSER", "") == "1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(app: Starlette, port: int) -> Iterator[str]:
    """The app on a real socket, in a thread of its own (its lifespan runs the ask worker); yields its base URL."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the web server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@contextmanager
def chromium(sync_api: object) -> Iterator[object]:
    """A headless Chromium (Debian's), or a skip (a failure with ASKWITH_REQUIRE_BROWSER=1) when it is missing."""
    if not CHROMIUM.exists():
        if REQUIRE_BROWSER:
            pytest.fail(f"{CHROMIUM} is missing (apt-get install -y chromium)")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium)")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as playwright:  # type: ignore[attr-defined]
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def signed_in_page(browser: object, base: str, member: str, *, width: int = 1200):  # noqa: ANN201 - a Playwright Page
    """A fresh browser context with `member` picked on the local sign-in page."""
    page = browser.new_context(viewport={"width": width, "height": 800}).new_page()  # type: ignore[attr-defined]
    page.goto(f"{base}/signin")
    page.click(f"#pick-{member}")
    page.wait_for_url(f"{base}/workspace/**")
    return page


def screenshot(page: object, name: str) -> Path:
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
    return path
