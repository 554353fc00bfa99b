"""What the web app reads of the process it serves: the composition root hands it over, the web app never imports it.

    app = build_app(settings, secret=secret, start=lambda: running(settings), local_picker=True)
    # `running` yields `bot.serve.runtime.Runtime`, one `ServedProcess`; handlers read it as `request.state.runtime`

Read-only here: the process alone starts, joins and stops its parts.
"""

from __future__ import annotations

from typing import Protocol

from bot.llm.client import LLMClient
from bot.platform.runtime import PlatformRuntime
from bot.settings import Settings
from bot.store.db import Database
from bot.web.local_runtime import LocalRuntime


class ServedProcess(Protocol):
    @property
    def settings(self) -> Settings: ...

    @property
    def db(self) -> Database: ...

    @property
    def llm(self) -> LLMClient | None: ...  # None: no language model configured (asks answer how to set one)

    @property
    def local(self) -> LocalRuntime | None: ...  # the local workspace the web workspace UI plays, when hosted

    @property
    def platforms(self) -> list[PlatformRuntime]: ...  # Slack, Discord: their endpoints are mounted on the app
