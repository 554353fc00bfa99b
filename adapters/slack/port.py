"""`SlackPort`: the chat port over Slack's Web API (`AsyncWebClient`).

Reading: the bot token sees the conversations the bot is in; a member's DMs are read with the user token that
member granted (`UserTokenStore`), so `list_channels` returns both and each read picks the token that can see the
channel. History holds what members and bots said (joins and topic changes are left out); ingestion drops bots'
posts itself, and the agents' hidden channel is never listed. Live events from bots are not passed on at all.

History is read one Slack page at a time; `HistoryPage.cursor` says where a sweep stands (see
`adapters.slack.history`), so ingestion stores it with each page and resumes there.

Writing: posts as the bot; hidden threads are root messages in a private agents channel (configured, found or
created); approvals are a DM with Approve / Deny buttons whose click resolves a pending decision.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from adapters.slack import blocks, texts
from adapters.slack.answers import AnswerPosts
from adapters.slack.client import MAX_INLINE_WAIT_SECONDS
from adapters.slack.convert import (
    channel_from_slack,
    channel_kind,
    is_guest,
    is_message,
    member_from_slack,
    message_from_slack,
    message_id,
    split_message_id,
    ts_key,
    with_readable_mentions,
)
from adapters.slack.errors import platform_error
from adapters.slack.history import read_history_page, thread_states
from adapters.slack.interactions import KnownPermalinks, SlackInteractions
from adapters.slack.rate_limits import BUDGETS, InstallLimits, MethodBudgets
from bot.consent.pending import ApprovalRegistry, PendingApproval
from bot.errors import (
    ChatPlatformError,
    PlatformAccessError,
    PlatformObjectGoneError,
    PlatformRateLimitedError,
    PlatformTokenRevokedError,
)
from bot.platform.port import (
    ApprovalDecision,
    ApprovalRequest,
    Channel,
    ChannelKind,
    ChatMessage,
    ChatPort,
    FinalAnswer,
    HistoryPage,
    Member,
    ThreadRef,
    WorkspaceInfo,
)
from bot.store.user_tokens import UserTokenGrant, UserTokenStore
from memory_ingest.isolation import TokenDisabled


logger = logging.getLogger(__name__)

AGENTS_CHANNEL_NAME = "askwith-agents"
# Not `im`: the bot's own DMs are members talking to askwith (asks, the Assistant panel), never memory.
BOT_CONVERSATION_TYPES = "public_channel,private_channel,mpim"
PAGE_SIZE = 200
PACED_ATTEMPTS = 3  # a paced method met by 429 waits its Retry-After and tries again, this many times in all


@dataclass(frozen=True)
class SlackIdentity:
    team_id: str
    team_name: str
    bot_user_id: str
    bot_id: str | None = None


class SlackPort(SlackInteractions, ChatPort):
    platform = "slack"

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        approvals: ApprovalRegistry | None = None,
        user_tokens: UserTokenStore | None = None,
        agents_channel: str = "",
        on_token_refused: TokenDisabled | None = None,
        limits: InstallLimits | None = None,
        budgets: MethodBudgets = BUDGETS,
    ) -> None:
        self.client = client
        self.limits = limits or InstallLimits()  # what the install type allows (page sizes, paced methods)
        self.budgets = budgets
        self.on_token_refused = on_token_refused  # a member's token refused while listing: disable it, tell them
        self.approvals = approvals or ApprovalRegistry()
        self.user_tokens = user_tokens
        self._agents_channel = agents_channel
        self._agents_lock = asyncio.Lock()
        self._identity: SlackIdentity | None = None
        self._channel_tokens: dict[str, str] = {}  # channel id -> user token that can read it (bot can't)
        self._bot_dms: set[str] = set()  # members' DMs with askwith met so far: never memory
        self._token_owner: dict[str, str] = {}  # user token -> the member who granted it
        self._names: dict[str, str] = {}  # member id -> display name, from the last member listing
        self.answers = AnswerPosts(self)  # an ask's final post, rendered as a rich answer
        self.permalinks = KnownPermalinks()  # links live search results came with (adapters.slack.live_search)

    # ------------------------------------------------------------------ identity
    async def identity(self) -> SlackIdentity:
        if self._identity is None:
            auth = await self._call("auth.test")
            team = auth.get("team") or auth["team_id"]
            self._identity = SlackIdentity(auth["team_id"], team, auth["user_id"], auth.get("bot_id"))
        return self._identity

    async def workspace_info(self) -> WorkspaceInfo:
        me = await self.identity()
        return WorkspaceInfo(me.team_id, me.team_name)

    async def _call(
        self, method: str, *, write: bool = False, max_wait_s: float | None = None, **params: Any
    ) -> AsyncSlackResponse:
        """One Web API call (reads as GET, writes as JSON POST), in its turn of the method's budget for this
        workspace (`adapters.slack.rate_limits`); Slack's refusals become `ChatPlatformError`. `max_wait_s` bounds
        the wait for a turn of a paced method (a member waiting on the read), which otherwise waits however long."""
        params = self.limits.params(method, {k: v for k, v in params.items() if v is not None})
        team = f"{self.client.base_url}{self._identity.team_id if self._identity is not None else ''}"
        paced = self.limits.interval(method)
        attempt = 0
        while True:
            attempt += 1
            # A paced method waits its turn however long (unless bounded); others wait out only a short Retry-After.
            bound = max_wait_s if paced else MAX_INLINE_WAIT_SECONDS
            await self.budgets.acquire(team, method, paced, max_wait_s=bound)
            try:
                if write:
                    return await self.client.api_call(method, json=params)
                return await self.client.api_call(method, http_verb="GET", params=params)
            except SlackApiError as exc:
                owner = self._token_owner.get(params.get("token") or "")
                error = platform_error(method, exc, token_owner=owner)
                if not isinstance(error, PlatformRateLimitedError):
                    raise error from exc
                self.budgets.retry_after(team, method, error.retry_after)
                if not paced or attempt >= PACED_ATTEMPTS:
                    raise error from exc  # an unpaced method: the caller backs the object off

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
        members = [member_from_slack(user) async for user in self._paged("users.list", "members")]
        self._names.update({m.id: m.display_name for m in members})  # mentions stored readable (convert.readable)
        return members

    def _readable(self, page: HistoryPage) -> HistoryPage:
        return dataclasses.replace(page, messages=[with_readable_mentions(m, self._names) for m in page.messages])

    async def list_channels(self) -> list[Channel]:
        """Conversations the bot is in, plus the DMs of members who granted a user token (agents channel left out)."""
        me = await self.identity()
        found: dict[str, Channel] = {}
        async for raw in self._bot_conversations():
            try:
                found[raw["id"]] = await self._channel(raw, me.bot_user_id, token=None)
            except (PlatformObjectGoneError, PlatformAccessError) as exc:  # one channel never stops the listing
                logger.warning("Leaving channel %s out: its members could not be read (%s)", raw["id"], exc)
        tokens: dict[str, str] = {}
        async for raw, grant in self._member_dms():
            if raw["id"] not in found:
                tokens.setdefault(raw["id"], grant.token)
                found[raw["id"]] = await self._channel(raw, grant.member_platform_id, token=grant.token)
        self._channel_tokens = tokens  # only tokens usable now: an opted-out member's token is never used again
        return list(found.values())

    async def list_channel_ids(self) -> list[str]:
        """The conversations `list_channels` lists, without reading anyone's membership: a few pages of
        `users.conversations` (50 for 10,000 channels) instead of one `conversations.members` per channel. The DMs
        a member's token lists are read with that token from then on, as after `list_channels`."""
        ids = [raw["id"] async for raw in self._bot_conversations()]
        tokens: dict[str, str] = {}
        async for raw, grant in self._member_dms():
            if raw["id"] not in ids:
                tokens.setdefault(raw["id"], grant.token)
                ids.append(raw["id"])
        self._channel_tokens = tokens
        return sorted(set(ids))

    async def _bot_conversations(self) -> AsyncIterator[dict[str, Any]]:
        """The conversations the bot is in, its hidden agents channel left out."""
        async for raw in self._paged("users.conversations", "channels", types=BOT_CONVERSATION_TYPES):
            if not self.is_agents_channel(raw["id"], raw.get("name", "")):
                yield raw

    async def _member_dms(self) -> AsyncIterator[tuple[dict[str, Any], UserTokenGrant]]:
        """Each DM and group DM a member's own token lists, with its grant; a member's DM with askwith is noted and
        left out (questions, never memory), and a refused token never stops the listing (or start-up)."""
        bot_user_id = (await self.identity()).bot_user_id
        for grant in await self._grants():
            try:
                async for raw in self._paged("users.conversations", "channels", types="im,mpim", token=grant.token):
                    if raw.get("user") == bot_user_id:
                        self._bot_dms.add(raw["id"])
                    else:
                        yield raw, grant
            except PlatformTokenRevokedError as exc:
                if self.on_token_refused is not None:
                    await self.on_token_refused(grant.member_platform_id, exc.reason)

    async def _grants(self) -> list[UserTokenGrant]:
        if self.user_tokens is None:
            return []
        grants = await self.user_tokens.usable_grants("slack", (await self.identity()).team_id)
        self._token_owner = {g.token: g.member_platform_id for g in grants}
        return grants

    def drop_member_token(self, member_id: str) -> None:
        """Stop reading with a member's token at once (opt-out, disconnect, revocation), before the next mirror."""
        owned = {t for t, m in self._token_owner.items() if m == member_id}
        self._channel_tokens = {c: t for c, t in self._channel_tokens.items() if t not in owned}

    async def revoke_member_token(self, member_id: str) -> bool:
        """Revoke a member's token at Slack (`auth.revoke`) and forget it; False when none was stored."""
        self.drop_member_token(member_id)
        if self.user_tokens is None:
            return False
        team = (await self.identity()).team_id
        grant = await self.user_tokens.get("slack", team, member_id)
        if grant is None:
            return False
        try:
            await self._call("auth.revoke", token=grant.token)
        except ChatPlatformError:
            pass  # already revoked or refused: forgetting it is what matters
        await self.user_tokens.revoke("slack", team, member_id)
        return True

    async def token_holders(self) -> set[str]:
        """Members whose own token askwith may read with now."""
        return {g.member_platform_id for g in await self._grants()}

    # ------------------------------------------------------------------ reading: one object alone
    async def lookup_member(self, member_id: str) -> Member | None:
        try:
            return member_from_slack((await self._call("users.info", user=member_id))["user"])
        except PlatformObjectGoneError:
            return None

    async def is_guest(self, member_id: str) -> bool:
        """Whether Slack lists the member as a workspace guest (users.info); an unknown member is not one."""
        try:
            return is_guest((await self._call("users.info", user=member_id))["user"])
        except PlatformObjectGoneError:
            return False

    async def lookup_channel(self, channel_id: str) -> Channel | None:
        """A channel the bot can read, or a DM a member's token lists, with its members (`conversations.info` +
        `conversations.members`, with that member's token for their DM)."""
        token = self._channel_tokens.get(channel_id)
        try:
            raw = (await self._call("conversations.info", channel=channel_id, **self._token_kwargs(channel_id)))[
                "channel"
            ]
            if token is None and channel_kind(raw) != ChannelKind.DM and not raw.get("is_member"):
                return None
            if self.is_agents_channel(raw["id"], raw.get("name", "")):
                return None  # the agents' hidden talk is never memory
            viewer = self._token_owner.get(token, "") if token else (await self.identity()).bot_user_id
            return await self._channel(raw, viewer or (await self.identity()).bot_user_id, token=token)
        except (PlatformObjectGoneError, PlatformAccessError):
            return None

    async def _channel(self, raw: dict[str, Any], viewer_id: str, *, token: str | None) -> Channel:
        if channel_kind(raw) == ChannelKind.DM:
            return channel_from_slack(raw, tuple(sorted({viewer_id, raw.get("user") or viewer_id})))
        extra = {"token": token} if token else {}
        members = [m async for m in self._paged("conversations.members", "members", channel=raw["id"], **extra)]
        return channel_from_slack(raw, tuple(members))

    # ------------------------------------------------------------------ reading: history
    def cursor_since(self, when: datetime) -> str:
        """A sweep that reads messages newer than `when` (a channel's first, bounded backfill)."""
        return f"{when.timestamp():.6f}"

    async def read_history(self, channel_id: str, *, cursor: str | None = None, limit: int = 200) -> HistoryPage:
        """Top-level messages newer than the cursor, one Slack page at a time (see `adapters.slack.history`)."""
        page = await read_history_page(
            self._call, channel_id, cursor, limit=limit, token=self._token_kwargs(channel_id)
        )
        return self._readable(page)

    async def thread_states(self, channel_id: str, thread_ids: list[str]) -> dict[str, str] | None:
        """Reply count and latest reply of each recent known thread (see `adapters.slack.history.thread_states`)."""
        token = self._token_kwargs(channel_id)
        return await thread_states(self._call, channel_id, thread_ids, token=token, now=time.time())

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
        return self._readable(HistoryPage(messages, next_cursor, bool(response.get("has_more"))))

    def _token_kwargs(self, channel_id: str) -> dict[str, str]:
        token = self._channel_tokens.get(channel_id)
        return {"token": token} if token else {}

    def note_bot_dm(self, channel_id: str) -> None:
        """A member wrote to askwith in this DM: it is theirs with the bot (never memory, never a search result)."""
        if channel_id:
            self._bot_dms.add(channel_id)

    def is_bot_dm_channel(self, channel_id: str) -> bool:
        """A member's DM with askwith met so far (opened to answer or ask, or listed with the member's token)."""
        return channel_id in self._bot_dms

    def is_agents_channel(self, channel_id: str, name: str = "") -> bool:
        """askwith's hidden agents channel, by its id or, before this process has looked it up, by its name."""
        return (bool(channel_id) and channel_id == self._agents_channel) or name == AGENTS_CHANNEL_NAME

    def is_not_memory(self, channel_id: str, name: str = "") -> bool:
        """A conversation never searched or stored as memory: a member's DM with askwith (questions) or the agents'
        hidden channel (their own talk)."""
        return self.is_bot_dm_channel(channel_id) or self.is_agents_channel(channel_id, name)

    def is_dm_with_bot(self, event: dict[str, Any]) -> bool:
        """An event in a member's DM with askwith (new, edited, a file share): the bot receives DM events only for
        its own DMs; a DM between members reaches askwith only through a member's token (`_channel_tokens`)."""
        if event.get("channel") in self._bot_dms:
            return True
        return event.get("channel_type") == "im" and event.get("channel") not in self._channel_tokens

    def is_ingestible(self, event: dict[str, Any], bot_user_id: str) -> bool:
        """A live message event worth remembering: spoken by a person, outside the agents' hidden channel."""
        if self.is_agents_channel(str(event.get("channel", ""))) or event.get("bot_id"):
            return False
        if str(event.get("text", "")).lstrip().startswith(f"<@{bot_user_id}"):
            return False  # a question to askwith (`@askwith ask @bob …`), not something said to colleagues
        return is_message(event) and event.get("user") != bot_user_id

    def live_message(self, event: dict[str, Any]) -> ChatMessage:
        return with_readable_mentions(message_from_slack(event["channel"], event), self._names)

    # ------------------------------------------------------------------ writing
    async def post_answer(self, channel_id: str, answer: FinalAnswer, *, thread_id: str | None = None) -> str:
        if (posted := await self.answers.post(channel_id, answer, thread_id)) is not None:
            return posted
        return await self.post(channel_id, answer.text, thread_id=thread_id)

    async def post(self, channel_id: str, text: str, *, thread_id: str | None = None) -> str:
        thread_ts = split_message_id(thread_id)[1] if thread_id else None
        response = await self._call("chat.postMessage", write=True, channel=channel_id, text=text, thread_ts=thread_ts)
        return message_id(channel_id, response["ts"])

    async def post_ephemeral(self, channel_id: str, member_id: str, text: str) -> None:
        await self._call("chat.postEphemeral", write=True, channel=channel_id, user=member_id, text=text)

    async def open_dm(self, member_id: str) -> str:
        response = await self._call("conversations.open", write=True, users=member_id)
        self._bot_dms.add(response["channel"]["id"])
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
