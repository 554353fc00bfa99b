"""The one port between askwith and a chat world.

Slack, Discord and the local simulated workspace each implement `ChatPort`. The core (`bot/`) and the ingestion
workers (`memory_ingest/`) talk only to this interface and its plain data types, never to a platform library.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING


if TYPE_CHECKING:
    from bot.asks.read_models.answer_view import AnswerView
    from bot.consent.card import ApprovalCard


@dataclass(frozen=True)
class FinalAnswer:
    """An ask's one final post (`ChatPort.post_answer`): its plain text, which ends with the ask's transcript reference
    (what a port without rich answers posts, and what the core looks for in history after a crash), and the answer
    as its requester sees it, for the platform to render (None when it could not be read: the text is posted)."""

    ask_id: int
    text: str
    requester_id: str  # the requester's platform id
    in_conversation: bool  # asked in a channel, thread or DM conversation (else a command, answered by DM)
    view: AnswerView | None = None


class ChannelKind(StrEnum):
    PUBLIC = "public"
    PRIVATE = "private"
    DM = "dm"
    GROUP_DM = "group_dm"


class SharePolicy(StrEnum):
    AUTO = "auto"  # the agent shares what it finds
    ASK = "ask"  # each utterance carrying retrieved facts waits for the member's approval
    NEVER = "never"  # the agent politely declines to take part


class ApprovalKind(StrEnum):
    """What a member is asked to approve; the platforms label the buttons and the outcome after it."""

    SHARE = "share"  # let my agent share what it found (Approve / Deny)
    TRADE = "trade"  # take the task trade my agent agreed (Accept / Decline)


class ApprovalDecision(StrEnum):
    APPROVED = "approved"
    APPROVED_ALL = "approved_all"  # this and everything else the member's agent passes on in the same ask
    DENIED = "denied"
    TIMEOUT = "timeout"
    UNREACHABLE = "unreachable"  # the member could not be asked (closed DMs): counts as not approved


@dataclass(frozen=True)
class WorkspaceInfo:
    id: str
    name: str


@dataclass(frozen=True)
class Member:
    id: str  # the platform's id (Slack U…, Discord snowflake, local handle)
    name: str  # handle used in mentions, unique within the workspace
    display_name: str
    is_bot: bool = False
    deactivated: bool = False
    time_zone: str | None = None  # IANA name from the platform's profile (Slack's `tz`); None when it gives none


@dataclass(frozen=True)
class Channel:
    id: str
    name: str
    kind: ChannelKind
    member_ids: tuple[str, ...]


@dataclass(frozen=True)
class ChatMessage:
    id: str  # unique within the workspace
    channel_id: str
    sender_id: str
    ts: datetime  # timezone-aware UTC
    text: str
    thread_id: str | None = None  # id of the thread's parent message; None for a top-level message
    reply_count: int = 0
    edited_at: datetime | None = None  # when this version was written by an edit; None = as first posted


@dataclass(frozen=True)
class HistoryPage:
    """Messages oldest first. `cursor` marks the position after the last message and is never None, so a caller can
    store it and resume later; `has_more` says whether another page is ready now."""

    messages: list[ChatMessage]
    cursor: str
    has_more: bool


@dataclass(frozen=True)
class ThreadRef:
    channel_id: str
    thread_id: str


@dataclass(frozen=True)
class ApprovalRequest:
    id: str  # stable id, so a resumed ask re-asks the same question
    member_id: str  # who must approve
    title: str  # one line: "Share with Alice's agent?"
    body: str  # what exactly would be shared
    context: dict[str, str] = field(default_factory=dict)
    kind: ApprovalKind = ApprovalKind.SHARE
    card: ApprovalCard | None = None  # a share's card, which every surface renders (`body` is its plain text)


class ChatPort(ABC):
    """What askwith needs from a chat platform."""

    platform: str = "abstract"

    @property
    def name(self) -> str:
        return f"{self.__module__}.{self.__class__.__name__}"

    # ------------------------------------------------------------------ reading
    @abstractmethod
    async def workspace_info(self) -> WorkspaceInfo:
        raise NotImplementedError()

    @abstractmethod
    async def list_members(self) -> list[Member]:
        raise NotImplementedError()

    @abstractmethod
    async def list_channels(self) -> list[Channel]:
        raise NotImplementedError()

    @abstractmethod
    async def read_history(self, channel_id: str, *, cursor: str | None = None, limit: int = 200) -> HistoryPage:
        """Top-level messages of a channel after `cursor` (None = from the beginning), oldest first."""
        raise NotImplementedError()

    @abstractmethod
    async def read_replies(
        self, channel_id: str, thread_id: str, *, cursor: str | None = None, limit: int = 200
    ) -> HistoryPage:
        """Replies in one thread after `cursor`, oldest first (the parent itself is not included)."""
        raise NotImplementedError()

    async def thread_states(self, channel_id: str, thread_ids: list[str]) -> dict[str, str] | None:
        """A marker per known thread that changes whenever the thread gets a reply (e.g. reply count and latest
        reply), so ingestion re-reads only threads whose marker changed. None (the fallback): unknown, every known
        thread is read. A thread missing from the dict is left to live events."""
        return None

    def cursor_since(self, when: datetime) -> str | None:
        """A history cursor that starts reading at `when` (a channel's first, bounded backfill); None when the
        platform cannot start there (then a channel is read from its beginning)."""
        return None

    async def list_channel_ids(self) -> list[str]:
        """Ids of the channels `list_channels` would list, without their members (a cheap check for channels
        created or left between full listings). Platforms override this; the fallback lists everything."""
        return [c.id for c in await self.list_channels()]

    async def lookup_member(self, member_id: str) -> Member | None:
        """One member, looked up alone (a live event named someone new). Platforms override this with a single
        call; the fallback lists everyone."""
        return next((m for m in await self.list_members() if m.id == member_id), None)

    async def lookup_channel(self, channel_id: str) -> Channel | None:
        """One channel with its members, looked up alone (None when askwith cannot read it). Platforms override
        this with single calls; the fallback lists every channel."""
        return next((c for c in await self.list_channels() if c.id == channel_id), None)

    async def permalink(self, channel_id: str, message_id: str) -> str | None:
        """A URL that opens this message for a member who can see it (Slack: chat.getPermalink, Discord: the jump
        URL, local workspace: its web page). None (the fallback): the platform has none to give."""
        return None

    # ------------------------------------------------------------------ writing
    @abstractmethod
    async def post(self, channel_id: str, text: str, *, thread_id: str | None = None) -> str:
        """Post as the bot; returns the new message's id."""
        raise NotImplementedError()

    async def post_answer(self, channel_id: str, answer: FinalAnswer, *, thread_id: str | None = None) -> str:
        """Post an ask's one final answer; returns the message id. Platforms render `answer.view` (Block Kit, an
        embed with buttons); the fallback posts its text."""
        return await self.post(channel_id, answer.text, thread_id=thread_id)

    @abstractmethod
    async def post_ephemeral(self, channel_id: str, member_id: str, text: str) -> None:
        """A message only `member_id` sees."""
        raise NotImplementedError()

    @abstractmethod
    async def open_dm(self, member_id: str) -> str:
        """The id of the bot's DM channel with a member (opened if needed)."""
        raise NotImplementedError()

    @abstractmethod
    async def create_hidden_thread(self, title: str) -> ThreadRef:
        """A thread, seen only by the bot (and admins), where agents talk."""
        raise NotImplementedError()

    @abstractmethod
    async def request_approval(self, request: ApprovalRequest, *, timeout_s: float) -> ApprovalDecision:
        """Ask a member to approve something; TIMEOUT when they do not answer within `timeout_s`, UNREACHABLE when
        the platform refuses to deliver the prompt (a member who closed their DMs)."""
        raise NotImplementedError()
