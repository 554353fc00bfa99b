"""The local simulated workspace: a `ChatPort` over an in-memory `World`, loadable from and savable to a file.

Used by the CLI, the local web workspace, the benchmark replays and most tests. Posts by the bot land in the world
like any other message; ephemeral posts and approval prompts are kept in lists a UI or a test can read.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from adapters.local.journal import Journal
from bot.errors import UnknownChannelError, UnknownMemberError
from bot.platform.port import (
    ApprovalDecision,
    ApprovalRequest,
    Channel,
    ChannelKind,
    ChatMessage,
    ChatPort,
    HistoryPage,
    Member,
    ThreadRef,
    WorkspaceInfo,
)
from bot.store.world import MemberPolicy, World


HIDDEN_CHANNEL_ID = "C-askwith-agents"
MAX_EPHEMERALS = 500  # "only visible to you" notes kept, all members together

# Decides an approval request in place of a person (tests, CLI); None = wait for `LocalWorkspace.decide`.
ApprovalResponder = Callable[[ApprovalRequest], Awaitable[ApprovalDecision]]


@dataclass(frozen=True)
class EphemeralPost:
    channel_id: str
    member_id: str
    text: str
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    ts: datetime = field(default_factory=lambda: datetime.now(UTC))  # shown among the channel's messages by time


class LocalWorkspace(ChatPort):
    platform = "local"

    def __init__(
        self,
        world: World,
        *,
        path: Path | None = None,
        approval_responder: ApprovalResponder | None = None,
        web_base_url: str = "",
    ) -> None:
        self.world = world
        self.web_base_url = web_base_url.rstrip("/")  # where `askwith serve` shows this workspace ("" = relative)
        self.path = path
        self.approval_responder = approval_responder
        self.ephemerals: list[EphemeralPost] = []
        self.pending_approvals: dict[str, ApprovalRequest] = {}
        self._approval_futures: dict[str, asyncio.Future[ApprovalDecision]] = {}
        self.journal = Journal.beside(path) if path is not None else None  # posts are durable before they return
        self._ensure_bot()

    @classmethod
    def load(cls, path: Path | str, **kwargs: ApprovalResponder | str | None) -> LocalWorkspace:
        workspace = cls(World.load(path), path=Path(path), **kwargs)  # the bot and its channel first: it posted too
        Journal.beside(Path(path)).replay(workspace.world)  # posts made after the world file was last saved
        return workspace

    def save(self, path: Path | str | None = None) -> None:
        """Write the world file (atomically); the journal, now contained in it, is emptied."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise ValueError("This workspace was not loaded from a file; give a path to save it to.")
        self.world.save(target)
        if target == self.path:
            self.saved(self.world.message_count())

    def saved(self, message_count: int) -> None:
        """A snapshot holding `message_count` messages was written to the world file (possibly in another thread):
        the journal may be emptied if nothing was posted since. Call it on the thread that posts."""
        if self.journal is not None and message_count == self.world.message_count():
            self.journal.clear()

    def _record(self, message: ChatMessage) -> ChatMessage:
        if self.journal is not None:
            self.journal.append(message)
        return message

    def _ensure_bot(self) -> None:
        if self.world.bot_id not in self.world.members:
            self.world.add_member(
                Member(self.world.bot_id, self.world.bot_id, "askwith", is_bot=True), MemberPolicy(opted_in=False)
            )
        if HIDDEN_CHANNEL_ID not in self.world.channels:
            self.world.add_channel(
                Channel(HIDDEN_CHANNEL_ID, "askwith-agents", ChannelKind.PRIVATE, (self.world.bot_id,))
            )

    # ------------------------------------------------------------------ reading
    def initial_policies(self) -> dict[str, MemberPolicy]:
        """Members' askwith policies as the world file states them; ingestion gives them to new members."""
        return dict(self.world.policies)

    async def workspace_info(self) -> WorkspaceInfo:
        return WorkspaceInfo(self.world.id, self.world.name)

    async def list_members(self) -> list[Member]:
        return list(self.world.members.values())

    async def list_channels(self) -> list[Channel]:
        return list(self.world.channels.values())

    async def read_history(self, channel_id: str, *, cursor: str | None = None, limit: int = 200) -> HistoryPage:
        top_level = [m for m in self._channel_messages(channel_id) if m.thread_id is None]
        replies: dict[str, int] = {}
        for message in self._channel_messages(channel_id):
            if message.thread_id is not None:
                replies[message.thread_id] = replies.get(message.thread_id, 0) + 1
        page = _page_after(top_level, cursor, limit)
        messages = [replace(m, reply_count=replies.get(m.id, 0)) for m in page.messages]
        return HistoryPage(messages, page.cursor, page.has_more)

    async def read_replies(
        self, channel_id: str, thread_id: str, *, cursor: str | None = None, limit: int = 200
    ) -> HistoryPage:
        replies = [m for m in self._channel_messages(channel_id) if m.thread_id == thread_id]
        return _page_after(replies, cursor, limit)

    def _channel_messages(self, channel_id: str) -> list[ChatMessage]:
        if channel_id not in self.world.channels:
            raise UnknownChannelError(channel_id)
        return self.world.messages[channel_id]

    async def permalink(self, channel_id: str, message_id: str) -> str | None:
        """The message on the web workspace's channel page (`/workspace/<channel>#msg-<id>`); None if unknown."""
        if channel_id not in self.world.channels:
            return None
        if not any(m.id == message_id for m in self.world.messages.get(channel_id, [])):
            return None
        return f"{self.web_base_url}/workspace/{quote(channel_id, safe='')}#msg-{quote(message_id, safe='')}"

    # ------------------------------------------------------------------ writing
    async def post(self, channel_id: str, text: str, *, thread_id: str | None = None) -> str:
        return self._record(self.world.add_message(channel_id, self.world.bot_id, text, thread_id=thread_id)).id

    async def post_as(
        self, member_id: str, channel_id: str, text: str, *, thread_id: str | None = None
    ) -> ChatMessage:
        """Post as a member (the local UI and tests play the humans)."""
        message = self.world.add_message(channel_id, member_id, text, thread_id=thread_id, ts=datetime.now(UTC))
        return self._record(message)

    async def post_ephemeral(self, channel_id: str, member_id: str, text: str) -> None:
        if member_id not in self.world.members:
            raise UnknownMemberError(member_id)
        self.ephemerals.append(EphemeralPost(channel_id, member_id, text))
        del self.ephemerals[:-MAX_EPHEMERALS]  # notes live in memory only: the oldest go first

    def dismiss_ephemeral(self, member_id: str, ephemeral_id: str) -> bool:
        """Remove one of `member_id`'s notes (only theirs); False when there was none such."""
        kept = [e for e in self.ephemerals if not (e.id == ephemeral_id and e.member_id == member_id)]
        found = len(kept) < len(self.ephemerals)
        self.ephemerals[:] = kept
        return found

    async def open_dm(self, member_id: str) -> str:
        if member_id not in self.world.members:
            raise UnknownMemberError(member_id)
        return self.world.dm(self.world.bot_id, member_id).id

    async def create_hidden_thread(self, title: str) -> ThreadRef:
        root = await self.post(HIDDEN_CHANNEL_ID, title)
        return ThreadRef(HIDDEN_CHANNEL_ID, root)

    async def request_approval(self, request: ApprovalRequest, *, timeout_s: float) -> ApprovalDecision:
        if request.member_id not in self.world.members:
            raise UnknownMemberError(request.member_id)
        if self.approval_responder is not None:
            return await self.approval_responder(request)
        future = self._approval_futures.get(request.id)
        if future is None or future.done():
            future = asyncio.get_running_loop().create_future()
            self._approval_futures[request.id] = future
        self.pending_approvals[request.id] = request
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout_s)
        except TimeoutError:
            return ApprovalDecision.TIMEOUT
        finally:
            self.pending_approvals.pop(request.id, None)

    def decide(self, approval_id: str, decision: ApprovalDecision) -> bool:
        """A member answers a pending approval (the local UI's Approve / Deny). False if nothing was pending."""
        future = self._approval_futures.get(approval_id)
        if future is None or future.done():
            return False
        future.set_result(decision)
        return True


def _page_after(messages: list[ChatMessage], cursor: str | None, limit: int) -> HistoryPage:
    """Messages after the one whose id is `cursor`; the cursor returned is the id of the last message seen."""
    start = 0
    if cursor:
        ids = [m.id for m in messages]
        start = ids.index(cursor) + 1 if cursor in ids else len(messages)
    chunk = messages[start : start + limit]
    next_cursor = chunk[-1].id if chunk else (cursor or "")
    return HistoryPage(chunk, next_cursor, start + limit < len(messages))
