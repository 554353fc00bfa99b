"""`SlackPort`: the chat port over Slack's Web API (`AsyncWebClient`).

Reading: the bot token sees the conversations the bot is in; a member's DMs are read with the user token that
member granted (`UserTokenStore`), so `list_channels` returns both and each read picks the token that can see the
channel. History holds what members and bots said (joins and topic changes are left out); ingestion drops bots'
posts itself, and the agents' hidden channel is never listed. Live events from bots are not passed on at all.

History cursors are Slack timestamps: `HistoryPage.cursor` is the ts of the last message read, so ingestion stores
it and later resumes with only what is newer (`oldest=`).

Writing: posts as the bot; hidden threads are root messages in a private agents channel (configured, found or
created); approvals are a DM with Approve / Deny buttons whose click resolves a pending decision.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from adapters.slack import blocks, texts
from adapters.slack.convert import (
    channel_from_slack,
    channel_kind,
    is_message,
    member_from_slack,
    message_from_slack,
    message_id,
    split_message_id,
    ts_key,
)
from bot.approvals import ApprovalRegistry, PendingApproval
from bot.errors import ChatPlatformError
from bot.port import (
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
from bot.store.user_tokens import UserTokenStore


AGENTS_CHANNEL_NAME = "askwith-agents"
BOT_CONVERSATION_TYPES = "public_channel,private_channel,mpim,im"
PAGE_SIZE = 200


@dataclass(frozen=True)
class SlackIdentity:
    team_id: str
    team_name: str
    bot_user_id: str


class SlackPort(ChatPort):
    platform = "slack"

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        approvals: ApprovalRegistry | None = None,
        user_tokens: UserTokenStore | None = None,
        agents_channel: str = "",
    ) -> None:
        self.client = client
        self.approvals = approvals or ApprovalRegistry()
        self.user_tokens = user_tokens
        self._agents_channel = agents_channel
        self._agents_lock = asyncio.Lock()
        self._identity: SlackIdentity | None = None
        self._channel_tokens: dict[str, str] = {}  # channel id -> user token that can read it (bot can't)
        self._backlog: dict[tuple[str, str], list[dict[str, Any]]] = {}  # (channel, cursor) -> messages not served

    # ------------------------------------------------------------------ identity
    async def identity(self) -> SlackIdentity:
        if self._identity is None:
            auth = await self._call("auth.test")
            self._identity = SlackIdentity(auth["team_id"], auth.get("team") or auth["team_id"], auth["user_id"])
        return self._identity

    async def workspace_info(self) -> WorkspaceInfo:
        me = await self.identity()
        return WorkspaceInfo(me.team_id, me.team_name)

    async def _call(self, method: str, *, write: bool = False, **params: Any) -> AsyncSlackResponse:
        """One Web API call (reads as GET, writes as JSON POST); Slack's refusals become `ChatPlatformError`."""
        params = {k: v for k, v in params.items() if v is not None}  # `token`, when given, overrides the bot's
        try:
            if write:
                return await self.client.api_call(method, json=params)
            return await self.client.api_call(method, http_verb="GET", params=params)
        except SlackApiError as exc:
            raise ChatPlatformError(method, str(exc.response.get("error", "unknown error"))) from exc

    async def _paged(self, method: str, key: str, **kwargs: Any) -> AsyncIterator[Any]:
        """Every item of a cursor-paginated list method."""
        cursor: str | None = None
        while True:
            response = await self._call(method, **kwargs, limit=PAGE_SIZE, cursor=cursor)
            for item in response.get(key, []):
                yield item
            cursor = (response.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                return

    # ------------------------------------------------------------------ reading: directory
    async def list_members(self) -> list[Member]:
        return [member_from_slack(user) async for user in self._paged("users.list", "members")]

    async def list_channels(self) -> list[Channel]:
        """Conversations the bot is in, plus the DMs of members who granted a user token (agents channel left out)."""
        me = await self.identity()
        agents = self._agents_channel
        found: dict[str, Channel] = {}
        async for raw in self._paged("users.conversations", "channels", types=BOT_CONVERSATION_TYPES):
            if raw["id"] != agents and raw.get("name") != AGENTS_CHANNEL_NAME:
                found[raw["id"]] = await self._channel(raw, me.bot_user_id, token=None)
        for grant in await self._grants():
            async for raw in self._paged("users.conversations", "channels", types="im,mpim", token=grant.token):
                if raw["id"] not in found:
                    self._channel_tokens.setdefault(raw["id"], grant.token)
                    found[raw["id"]] = await self._channel(raw, grant.member_platform_id, token=grant.token)
        return list(found.values())

    async def _grants(self) -> list[Any]:
        if self.user_tokens is None:
            return []
        return await self.user_tokens.grants("slack", (await self.identity()).team_id)

    async def _channel(self, raw: dict[str, Any], viewer_id: str, *, token: str | None) -> Channel:
        if channel_kind(raw) == ChannelKind.DM:
            return channel_from_slack(raw, tuple(sorted({viewer_id, raw.get("user") or viewer_id})))
        extra = {"token": token} if token else {}
        members = [m async for m in self._paged("conversations.members", "members", channel=raw["id"], **extra)]
        return channel_from_slack(raw, tuple(members))

    # ------------------------------------------------------------------ reading: history
    async def read_history(self, channel_id: str, *, cursor: str | None = None, limit: int = 200) -> HistoryPage:
        """Top-level messages newer than the ts `cursor`, oldest first.

        Slack lists history newest first, so everything newer than the cursor is fetched once and served in
        `limit`-sized pages from a backlog keyed by the cursor each page hands out.
        """
        backlog = self._backlog.pop((channel_id, cursor or ""), None)
        if backlog is None:
            backlog = await self._history_after(channel_id, cursor)
        messages: list[ChatMessage] = []
        next_cursor = cursor or ""
        # A page holding only joins and topic changes would read as "nothing more"; go on until one has a message.
        while backlog and not messages:
            page, backlog = backlog[:limit], backlog[limit:]
            next_cursor = page[-1]["ts"]
            messages = [message_from_slack(channel_id, m) for m in page if is_message(m)]
        if backlog:
            self._backlog[(channel_id, next_cursor)] = backlog
        return HistoryPage(messages, next_cursor, bool(backlog))

    async def _history_after(self, channel_id: str, oldest: str | None) -> list[dict[str, Any]]:
        kwargs: dict[str, Any] = {"channel": channel_id, **self._token_kwargs(channel_id)}
        if oldest:
            kwargs["oldest"] = oldest
        raw = [m async for m in self._paged("conversations.history", "messages", **kwargs)]
        top_level = [m for m in raw if m.get("thread_ts") in (None, m["ts"])]
        return sorted(top_level, key=lambda m: ts_key(m["ts"]))

    async def read_replies(
        self, channel_id: str, thread_id: str, *, cursor: str | None = None, limit: int = 200
    ) -> HistoryPage:
        _, thread_ts = split_message_id(thread_id)
        kwargs: dict[str, Any] = {"channel": channel_id, "ts": thread_ts, "limit": limit}
        if cursor:
            kwargs["oldest"] = cursor
        response = await self._call("conversations.replies", **kwargs, **self._token_kwargs(channel_id))
        after = ts_key(cursor) if cursor else (0, 0)
        replies = [m for m in response.get("messages", []) if m["ts"] != thread_ts and ts_key(m["ts"]) > after]
        replies.sort(key=lambda m: ts_key(m["ts"]))
        next_cursor = replies[-1]["ts"] if replies else (cursor or "")
        messages = [message_from_slack(channel_id, m) for m in replies if is_message(m)]
        return HistoryPage(messages, next_cursor, bool(response.get("has_more")))

    def _token_kwargs(self, channel_id: str) -> dict[str, str]:
        token = self._channel_tokens.get(channel_id)
        return {"token": token} if token else {}

    def is_ingestible(self, event: dict[str, Any], bot_user_id: str) -> bool:
        """A live message event worth remembering: spoken by a person, outside the agents' hidden channel."""
        if event.get("channel") == self._agents_channel or event.get("bot_id"):
            return False
        return is_message(event) and event.get("user") != bot_user_id

    def live_message(self, event: dict[str, Any]) -> ChatMessage:
        return message_from_slack(event["channel"], event)

    # ------------------------------------------------------------------ writing
    async def post(self, channel_id: str, text: str, *, thread_id: str | None = None) -> str:
        thread_ts = split_message_id(thread_id)[1] if thread_id else None
        response = await self._call("chat.postMessage", write=True, channel=channel_id, text=text, thread_ts=thread_ts)
        return message_id(channel_id, response["ts"])

    async def post_ephemeral(self, channel_id: str, member_id: str, text: str) -> None:
        await self._call("chat.postEphemeral", write=True, channel=channel_id, user=member_id, text=text)

    async def open_dm(self, member_id: str) -> str:
        response = await self._call("conversations.open", write=True, users=member_id)
        return response["channel"]["id"]

    async def agents_channel(self) -> str:
        """The private channel of hidden threads: configured, else found by name among the bot's, else created."""
        async with self._agents_lock:
            if not self._agents_channel:
                self._agents_channel = await self._find_or_create_agents_channel()
            return self._agents_channel

    async def _find_or_create_agents_channel(self) -> str:
        async for raw in self._paged("users.conversations", "channels", types="private_channel"):
            if raw.get("name") == AGENTS_CHANNEL_NAME:
                return raw["id"]
        response = await self._call("conversations.create", write=True, name=AGENTS_CHANNEL_NAME, is_private=True)
        return response["channel"]["id"]

    async def create_hidden_thread(self, title: str) -> ThreadRef:
        channel_id = await self.agents_channel()
        return ThreadRef(channel_id, await self.post(channel_id, title))

    # ------------------------------------------------------------------ approvals
    async def request_approval(self, request: ApprovalRequest, *, timeout_s: float) -> ApprovalDecision:
        """DM the member an Approve / Deny prompt and wait for the click (TIMEOUT after `timeout_s`)."""
        decided = self.approvals.decision(request.id)
        if decided is not None:
            return decided
        if self.approvals.pending(request.id) is None:
            channel_id = await self.open_dm(request.member_id)
            response = await self._call(
                "chat.postMessage",
                write=True,
                channel=channel_id,
                text=request.title,
                blocks=blocks.approval_prompt(request),
            )
            self.approvals.track(PendingApproval(request, message_id(channel_id, response["ts"])))
        decision = await self.approvals.wait(request.id, timeout_s=timeout_s)
        if decision == ApprovalDecision.TIMEOUT:
            await self.close_approval_prompt(request.id, decision)
        return decision

    async def close_approval_prompt(self, approval_id: str, decision: ApprovalDecision) -> None:
        """Replace the buttons with the outcome, so a prompt can't be clicked twice."""
        pending = self.approvals.take(approval_id)
        if pending is None:
            return
        channel_id, ts = split_message_id(pending.prompt_ref)
        text = texts.approval_outcome(pending.request, decision)
        await self._call(
            "chat.update", write=True, channel=channel_id, ts=ts, text=text, blocks=blocks.approval_closed(text)
        )
