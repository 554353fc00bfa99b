"""The local workspace as the web workspace UI drives it: a `LocalWorkspace` port, its ingestion worker and its ask
service.

    local = LocalRuntime("acme", port, ingest, workspace_id, asks)      # built by `askwith serve` (bot.serve.runtime)
    await local.post("alice", "C-general", "the launch moved to Friday")
    reply = await local.ask("alice", ["bob"], "when is the launch?")      # reply.text: what the composer shows

Members post (stored at once into memory, like a live Slack message event), and `/ask-with` goes through
`AskService.submit` exactly as the Slack command does; the process's ask worker runs it. Every post is durable when it
returns (the workspace's journal); the world file itself is rewritten after members post and every few seconds while
askwith posts answers into it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from dataclasses import dataclass, field

from adapters.local.workspace import LocalWorkspace
from bot.asks.service import AskRequest, AskService
from bot.errors import AskRejectedError, LLMNotConfiguredError
from bot.platform.port import ChatMessage
from bot.store.world import World
from bot.web import texts
from memory_ingest.worker import IngestWorker


log = logging.getLogger(__name__)
SAVE_INTERVAL_S = 5.0


@dataclass(frozen=True)
class AskReply:
    """What the composer shows the member right after `/ask-with` (Slack's ephemeral acknowledgement)."""

    ok: bool
    text: str
    ask_id: int | None = None


@dataclass
class LocalRuntime:
    key: str  # the workspace spec it was opened by (acme, friendstv, a file, an id)
    port: LocalWorkspace
    ingest: IngestWorker
    workspace_id: int
    asks: AskService | None  # None when no language model is configured
    _saved_count: int = field(default=-1, init=False)

    async def post(self, member: str, channel_id: str, text: str) -> ChatMessage:
        """A member's message: into the world, then into memory right away."""
        message = await self.port.post_as(member, channel_id, text)
        await self.ingest.ingest_message(message)
        await self.save()
        return message

    async def ask(self, member: str, colleagues: list[str], question: str) -> AskReply:
        """Submit an ask for the worker to run; the answer arrives in the member's DM with askwith."""
        if self.asks is None:
            return AskReply(False, str(LLMNotConfiguredError()))
        try:
            ask_id = await self.asks.submit(AskRequest(member, colleagues, question))
        except AskRejectedError as exc:
            return AskReply(False, str(exc))
        return AskReply(True, texts.asking(colleagues, ask_id), ask_id)

    async def follow_up(self, member: str, ask_id: int, question: str) -> AskReply:
        """Ask again in the thread of ask `ask_id`: its colleagues, and the earlier asks as the requester's context."""
        if self.asks is None:
            return AskReply(False, str(LLMNotConfiguredError()))
        try:
            new_id = await self.asks.submit(AskRequest(member, [], question, follow_up_of=ask_id))
            colleagues = list((await self.asks.load(new_id)).colleagues)
        except AskRejectedError as exc:
            return AskReply(False, str(exc))
        return AskReply(True, texts.asking(colleagues, new_id), new_id)

    async def save(self) -> None:
        """Write the world file if anything was posted since the last save (no-op for an in-memory world)."""
        count = self.port.world.message_count()
        if self.port.path is None or count == self._saved_count:
            return
        await asyncio.to_thread(_snapshot(self.port.world).save, self.port.path)
        self.port.saved(count)  # the journal made each post durable meanwhile; what the file now holds leaves it
        self._saved_count = count

    async def keep_saved(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):  # asyncio.timeout: wait_for can swallow a cancellation (3.11)
                async with asyncio.timeout(SAVE_INTERVAL_S):
                    await stop.wait()
            try:
                await self.save()
            except OSError as exc:
                log.warning("could not save the local workspace %s: %s", self.key, exc)


def _snapshot(world: World) -> World:
    """A copy whose containers no post can change while another thread writes it out."""
    return dataclasses.replace(
        world,
        members=dict(world.members),
        channels=dict(world.channels),
        messages={channel: list(messages) for channel, messages in world.messages.items()},
        policies=dict(world.policies),
    )
