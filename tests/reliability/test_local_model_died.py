"""The local model server dies under a running askwith (here: SIGKILL, as the AMX fault did).

Before: every call was retried and the ask ended with "could not connect after 5 attempts", nothing about the server
or where to look. After: the first failed call says the local model server stopped, with its exit code and the path
of its log, and is not retried."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from bot.errors import LLMConfigurationError
from bot.llm.client import LLMClient
from bot.llm.openai_backend import OpenAIBackend
from bot.llm.types import LLMRequest
from bot.settings import Settings
from tests.unit.llm.test_local_llm_server import stand_in


async def test_a_dead_local_server_is_named_with_its_log(tmp_path: Path, settings: Settings) -> None:
    async with stand_in(tmp_path) as server:
        backend = OpenAIBackend(base_url=server.base_url, model=server.model_name, timeout_s=5.0)
        client = LLMClient.from_settings(settings.replace(llm_backoff_seconds=0.0), backend=backend)
        assert server.pid is not None and server._process is not None
        os.kill(server.pid, signal.SIGKILL)
        await server._process.wait()
        try:
            with pytest.raises(LLMConfigurationError) as raised:
                await client.complete(LLMRequest([{"role": "user", "content": "hi"}], purpose="act"))
        finally:
            await client.aclose()
    assert "local model server for tiny stopped" in raised.value.reason
    assert str(tmp_path / "logs" / "s.log") in raised.value.reason and "-9" in raised.value.reason
