"""Building the served app for tests: the bundled sample workspace, the scripted model, real clear memory."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import TypeVar

from httpx import Response
from starlette.applications import Starlette
from starlette.testclient import TestClient

from bot.asks.composition import Memory
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.serve.process import serve_app
from bot.settings import Settings
from bot.store.db import Database


T = TypeVar("T")
SECRET = "test-link-secret"
# In the sample workspace the rehearsal room is in Alice's DM with Carol; Bob's dentist slot in his DM with Alice.
QUESTION = "Which room is booked for the rehearsal?"


def clear_only(settings: Settings, db: Database, llm: LLMClient | None) -> Memory:
    return Memory(MemoryAccess(clear=ClearMemory(db), fuzzy=None), indexer=None)


def scripted_llm(settings: Settings, *, latency_s: float = 0.0) -> LLMClient:
    return LLMClient.from_settings(settings, backend=ScriptedBackend(scripted_model, latency_s=latency_s))


def web_settings(settings: Settings, **changes: object) -> Settings:
    """Fast settings for a served test app: quick worker polling is the worker's default; no scheduled ingestion."""
    return settings.replace(ingest_interval_seconds=0, worker_heartbeat_seconds=0.5, **changes)


def app_for(settings: Settings, *, llm: bool = True, workspace: str = "acme", latency_s: float = 0.0) -> Starlette:
    """`latency_s`: how long each scripted model call takes (so a browser can watch an ask's progress)."""
    return serve_app(
        settings,
        llm=scripted_llm(settings, latency_s=latency_s) if llm else None,
        memory=clear_only,
        workspace=workspace,
        secret=SECRET,
    )


BUDGET_QUESTION = "What is the budget for the launch party?"  # only in Dave's DM with Erin


def wait_for(check: Callable[[], T | None], *, timeout_s: float = 20.0) -> T:
    """Poll `check` until it returns something (the ask worker runs in the app's own thread)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if (found := check()) is not None:
            return found
        time.sleep(0.1)
    raise AssertionError(f"nothing after {timeout_s} s")


CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_token(client: TestClient) -> str:
    """The form token of this client's session, as a page of the app hands it to the browser."""
    for path in ("/signin", "/conversations"):
        if match := CSRF_FIELD.search(client.get(path).text):
            return match[1]
    raise AssertionError("no page offered a form token")


def post_form(client: TestClient, path: str, data: dict[str, str]) -> Response:
    """A form submitted from the app's own page: with the session's token."""
    return client.post(path, data={**data, "csrf_token": csrf_token(client)})


def sign_in(client: TestClient, member: str) -> None:
    response = post_form(client, "/signin", {"member": member, "next": ""})
    assert response.status_code == 200 and f'id="signed-in-as" data-handle="{member}"' in response.text


def ask_and_wait(client: TestClient, member: str, colleague: str, question: str) -> int:
    """Post `/ask-with` as `member` in #general and return the ask id once its answer is in the member's DM."""
    post_form(client, "/workspace/C-general", {"text": f"/ask-with @{colleague} {question}"})
    dm = f"/workspace/D-{'-'.join(sorted(('askwith', member)))}/feed"

    def answered() -> int | None:
        match = re.search(r'class="transcript-link" href="/asks/(\d+)"', client.get(dm).text)
        return int(match[1]) if match else None

    return wait_for(answered)
