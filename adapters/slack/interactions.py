"""The Web API calls of askwith's in-conversation experience (Block Kit posts and edits, permalinks, the Assistant
panel's status, user groups, threads as context), mixed into `SlackPort`, which supplies `_call` (errors mapped to
askwith's, writes paced)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from slack_sdk.web.async_slack_response import AsyncSlackResponse

from adapters.slack.convert import is_message, split_message_id
from adapters.slack.rate_limits import INTERACTIVE_WAIT_S
from bot.errors import ChatPlatformError


MAX_KNOWN_PERMALINKS = 5000  # about the sources of a few hundred asks
MAX_PERMALINK_CHARS = 2000


class KnownPermalinks:
    """Links Slack already gave with messages (a live search's results), so an answer's sources need no
    `chat.getPermalink`; the least recently added go first past `limit`.

        links = KnownPermalinks()
        links.add("C1:1700.0001", "https://acme.slack.com/archives/C1/p17000001")
    """

    def __init__(self, limit: int = MAX_KNOWN_PERMALINKS) -> None:
        self.limit = limit
        self._links: OrderedDict[str, str] = OrderedDict()

    def add(self, message_id: str, url: str) -> None:
        if not url.startswith("https://") or len(url) > MAX_PERMALINK_CHARS:
            return  # only a link Slack would give; anything else is left to chat.getPermalink
        self._links[message_id] = url
        self._links.move_to_end(message_id)
        while len(self._links) > self.limit:
            self._links.popitem(last=False)

    def get(self, message_id: str) -> str | None:
        return self._links.get(message_id)


class SlackInteractions:
    permalinks: KnownPermalinks  # SlackPort's

    async def _call(
        self, method: str, *, write: bool = False, max_wait_s: float | None = None, **params: Any
    ) -> AsyncSlackResponse:
        raise NotImplementedError  # SlackPort's

    async def thread_messages(
        self, channel_id: str, thread_ts: str, *, limit: int = 200
    ) -> tuple[list[dict[str, Any]], bool]:
        """One page of a thread as Slack returns it, parent first, then Slack's *oldest* `limit` replies (Slack has no
        newest-first order for replies); True when the thread goes on past the page. A member waits on it, so it waits
        for its turn behind paced reads at most `INTERACTIVE_WAIT_S` (then `PlatformRateLimitedError`)."""
        response = await self._call(
            "conversations.replies", max_wait_s=INTERACTIVE_WAIT_S, channel=channel_id, ts=thread_ts, limit=limit
        )
        return [m for m in response.get("messages", []) if is_message(m)], bool(response.get("has_more"))

    async def usergroup_members(self, group_id: str) -> list[str]:
        """The members of a user group (`<!subteam^S…>`), as Slack lists them (usergroups.users.list)."""
        response = await self._call("usergroups.users.list", usergroup=group_id)
        return [str(u) for u in response.get("users", [])]

    async def post_ephemeral_blocks(
        self, channel_id: str, member_id: str, text: str, blocks: list[dict[str, Any]], *, thread_ts: str | None = None
    ) -> None:
        await self._call(
            "chat.postEphemeral", write=True, channel=channel_id, user=member_id, text=text, blocks=blocks,
            thread_ts=thread_ts,
        )  # fmt: skip

    async def set_assistant_status(self, channel_id: str, thread_ts: str, status: str) -> None:
        """The Assistant panel's "is thinking…" line for a thread ("" clears it)."""
        await self._call(
            "assistant.threads.setStatus", write=True, channel_id=channel_id, thread_ts=thread_ts, status=status
        )

    async def permalink(self, channel_id: str, message_id: str) -> str | None:
        """A link Slack opens only for who may see the message: the one a search returned with it, else
        chat.getPermalink's; None when Slack refuses."""
        if (known := self.permalinks.get(message_id)) is not None:
            return known
        try:
            response = await self._call(
                "chat.getPermalink", channel=channel_id, message_ts=split_message_id(message_id)[1]
            )
        except ChatPlatformError:
            return None
        return response.get("permalink")

    async def post_blocks(
        self, channel_id: str, text: str, blocks: list[dict[str, Any]] | None, *, thread_id: str | None = None
    ) -> str:
        """A Block Kit message (`blocks` None: `text` alone, as mrkdwn); `text` is the notification fallback.
        Returns the message's ts."""
        thread_ts = split_message_id(thread_id)[1] if thread_id else None
        response = await self._call(
            "chat.postMessage", write=True, channel=channel_id, text=text, blocks=blocks, thread_ts=thread_ts
        )
        return str(response["ts"])

    async def update_blocks(self, channel_id: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> None:
        await self._call("chat.update", write=True, channel=channel_id, ts=ts, text=text, blocks=blocks)
