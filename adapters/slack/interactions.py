"""The Web API calls of askwith's in-conversation experience (Block Kit posts and edits, permalinks, the Assistant
panel's status, user groups, threads as context), mixed into `SlackPort`, which supplies `_call` (errors mapped to
askwith's, writes paced)."""

from __future__ import annotations

from typing import Any

from slack_sdk.web.async_slack_response import AsyncSlackResponse

from adapters.slack.convert import is_message, split_message_id
from adapters.slack.rate_limits import INTERACTIVE_WAIT_S
from bot.errors import ChatPlatformError


class SlackInteractions:
    async def _call(
        self, method: str, *, write: bool = False, max_wait_s: float | None = None, **params: Any
    ) -> AsyncSlackResponse:
        raise NotImplementedError  # SlackPort's

    async def thread_messages(self, channel_id: str, thread_ts: str, *, limit: int = 200) -> list[dict[str, Any]]:
        """A thread as Slack returns it, parent first: one page, Slack's oldest `limit` messages. A member waits on it,
        so it waits for its turn behind paced reads at most `INTERACTIVE_WAIT_S` (then `PlatformRateLimitedError`)."""
        response = await self._call(
            "conversations.replies", max_wait_s=INTERACTIVE_WAIT_S, channel=channel_id, ts=thread_ts, limit=limit
        )
        return [m for m in response.get("messages", []) if is_message(m)]

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
        """A link Slack opens only for who may see the message (chat.getPermalink); None when Slack refuses."""
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
