"""What the Slack listeners call: the core's entry points, bundled once at start-up and handed to every listener
through bolt's context (`services(context)`)."""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext

from adapters.slack import texts
from adapters.slack.answers import AnswerPosts
from adapters.slack.install import MemberInstallFlow
from adapters.slack.live_search import Audience, SlackLiveSearch, hearing_in
from adapters.slack.memory_events import SlackMemoryEvents
from adapters.slack.port import SlackPort
from bot.asks.requests import AskRequest
from bot.asks.service import AskService
from bot.errors import AskRejectedError
from bot.negotiation.members import ClientFor, MemberNegotiation, one_client
from bot.settings import Settings
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.deliveries import DeliveryLog
from bot.store.member_settings import MemberSettingsStore
from memory_ingest.worker import IngestWorker


logger = logging.getLogger(__name__)

CONTEXT_KEY = "askwith"


@dataclass
class SlackServices:
    settings: Settings
    db: Database
    port: SlackPort
    asks: AskService
    ingest: IngestWorker | None = None
    install: MemberInstallFlow | None = None
    negotiation_clients: ClientFor | None = None  # who plays the agents in `/negotiate`; None = the asks' LLM
    # Installed by OAuth (many workspaces): deletes the team's installation when it removes askwith.
    uninstall: Callable[[], Awaitable[None]] | None = None
    # Set by the hosting process: stops the workspace's scheduled ingestion and ask worker when it leaves.
    left: Callable[[], None] | None = None
    status_interval_s: float = 1.0  # at most one chat.update per status message per this many seconds
    live_search: SlackLiveSearch | None = None  # live memory: searches run on Slack as each member
    member_settings: MemberSettingsStore = field(init=False)
    deliveries: DeliveryLog = field(init=False)
    memory_events: SlackMemoryEvents | None = field(init=False)  # None when this process ingests nothing
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set, init=False)

    def __post_init__(self) -> None:
        self.member_settings = MemberSettingsStore(self.db)
        self.deliveries = DeliveryLog(self.db)
        self.memory_events = None if self.ingest is None else SlackMemoryEvents(self.port, self.ingest)
        if self.memory_events is not None:
            # A member token refused while reading or listing: disabled, its DMs unread, the member told.
            self.ingest.on_token_disabled = self.memory_events.after_token_disabled
            self.port.on_token_refused = self.memory_events.token_lost

    @property
    def answers(self) -> AnswerPosts:
        """Rich final posts of asks (the port renders what the core hands it)."""
        return self.port.answers

    async def workspace(self) -> WorkspaceKey:
        return WorkspaceKey("slack", (await self.port.identity()).team_id)

    async def submit(self, request: AskRequest) -> int:
        """Queue an ask from Slack (`AskRejectedError` with a message for the member when it cannot run). With live
        memory a workspace guest may not ask: "Workspace guests are not permitted to access apps using platform AI
        features" (Slack's Real-time Search guide)."""
        if self.live_search is not None and await self.port.is_guest(request.requester):
            raise AskRejectedError(texts.GUEST_REFUSED)
        return await self.asks.submit(request)

    async def run_ask(self, ask_id: int) -> None:
        """Run a submitted ask in this process, unless it leaves asks to `askwith worker` processes
        (ASKWITH_SERVE_RUNS_ASKS=false). If an ask worker claimed it first, it runs there instead; if this process
        dies mid-way, a worker resumes it (asks are durable)."""
        if self.settings.serve_runs_asks and await self.asks.claim(ask_id):
            await self.asks.process(ask_id)

    def negotiation(self) -> MemberNegotiation:
        """The core's `/negotiate` entry point over this Slack workspace."""
        clients = self.negotiation_clients or one_client(self.asks.llm)
        timeout_s = self.settings.negotiation_approval_timeout_seconds
        return MemberNegotiation(self.db, self.port, clients, approval_timeout_s=timeout_s)

    def saw_member_event(self, event: dict[str, Any]) -> None:
        """A member's message that may start an ask: with live memory, its `action_token` lets the bot search as
        that member for the ask (Slack gives one on messages to the app)."""
        thread = event.get("assistant_thread") or {}
        if event.get("channel_type") == "im" or thread:
            self.port.note_bot_dm(str(event.get("channel") or thread.get("channel_id") or ""))
        token = event.get("action_token") or thread.get("action_token")
        if self.live_search is not None and token and event.get("user"):
            # Spawned before the ask (tasks start in the order spawned): this process holds the token at once, and the
            # database from its commit on, for whichever process runs the ask.
            self.spawn(self.live_search.remember_action_token(str(event["user"]), str(token)))

    def audience_of(self, event: dict[str, Any]) -> Audience:
        """Where the ask an event starts is answered: its searches are for public channels only unless it is the
        asker's DM with askwith (a mention carries no channel type: narrowed, without naming the channel)."""
        thread = event.get("assistant_thread") or {}
        channel = str(event.get("channel") or thread.get("channel_id") or "")
        kind = event.get("channel_type") or ("im" if thread else "")
        return Audience(channel, kind == "channel", kind == "im")

    @property
    def tasks(self) -> set[asyncio.Task[Any]]:
        """Background work running now (what `spawn` started and has not finished)."""
        return set(self._tasks)

    def spawn(self, work: Coroutine[Any, Any, Any], *, audience: Audience | None = None) -> asyncio.Task[Any]:
        """Run work after the listener returned, keeping a reference so it is not garbage-collected mid-way. With
        `audience`, an ask's live searches (in that task only) know where its answer is posted."""
        context = contextvars.copy_context()
        if audience is not None:
            context.run(hearing_in, audience.channel_id, public=audience.public, dm=audience.dm)
        task = asyncio.get_running_loop().create_task(work, context=context)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(_log_failure)
        return task

    async def drain(self) -> None:
        """Wait for background work (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.error("background work failed", exc_info=task.exception())


def services(context: AsyncBoltContext) -> SlackServices:
    return context[CONTEXT_KEY]
