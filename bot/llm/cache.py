"""An on-disk cache of LLM answers: an identical request (model, messages, schema, temperature) is answered from disk.

One JSON file per answer under `<dir>/<2 hex>/<sha256>.json`, written atomically (temporary file, then rename) so a
killed process never leaves half a file that a later run would trust. Unreadable entries count as misses.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.llm.types import LLMRequest


@dataclass(frozen=True)
class CachedAnswer:
    text: str
    data: dict[str, Any] | None
    json_mode: str


def cache_key(model: str, request: LLMRequest) -> str:
    identity = {
        "model": model,
        "messages": request.messages,
        "schema": request.json_schema,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
    }
    blob = json.dumps(identity, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    async def get(self, key: str) -> CachedAnswer | None:
        return await asyncio.to_thread(self._read, key)

    async def put(self, key: str, answer: CachedAnswer) -> None:
        await asyncio.to_thread(self._write, key, answer)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def _read(self, key: str) -> CachedAnswer | None:
        try:
            raw = json.loads(self._path(key).read_text(encoding="utf-8"))
            return CachedAnswer(text=raw["text"], data=raw["data"], json_mode=raw["json_mode"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _write(self, key: str, answer: CachedAnswer) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = json.dumps({"text": answer.text, "data": answer.data, "json_mode": answer.json_mode})
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(payload)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
