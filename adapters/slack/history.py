"""Reading a channel's history from Slack one page at a time, resumable from a cursor saved with every page.

Slack lists `conversations.history` newest first and pages toward older messages with its own cursor. A sweep reads
everything newer than the last sweep's high-water mark (`oldest`) that way, page by page, never holding more than
one page; the cursor handed out after each page says where the sweep stands, so ingestion stores it with the page
and a run killed or rate-limited part-way resumes at the next page:

    "1700000100.000200"                              done: everything up to this ts is read (the next sweep's oldest)
    "1700000000.000100|1700000100.000200|<slack>"    sweeping: oldest | this sweep's high-water mark | Slack's cursor

Messages are unique by id, so a page read twice (a kill between reading and storing) adds nothing. A stored Slack
cursor that Slack no longer accepts (`invalid_cursor`, after a long downtime) restarts that channel's sweep.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from adapters.slack.convert import is_message, message_from_slack, ts_key
from bot.errors import ChatPlatformError
from bot.platform.port import HistoryPage


Call = Callable[..., Awaitable[Any]]  # SlackPort._call
SEP = "|"
INVALID_CURSOR = "invalid_cursor"


@dataclass(frozen=True)
class Sweep:
    oldest: str  # read messages newer than this ts ("" = from the beginning)
    high_water: str  # newest ts seen in this sweep ("" before its first page)
    slack_cursor: str  # Slack's cursor to the next (older) page ("" before the first page)

    @classmethod
    def parse(cls, cursor: str | None) -> Sweep:
        if cursor and SEP in cursor:
            oldest, high_water, slack_cursor = cursor.split(SEP, 2)
            return cls(oldest, high_water, slack_cursor)
        return cls(cursor or "", "", "")

    def after(self, newest_on_page: str, next_cursor: str) -> str:
        """The cursor to store with a page: still sweeping, or done up to the sweep's high-water mark."""
        high_water = max((self.high_water, newest_on_page), key=lambda t: ts_key(t) if t else (0, 0))
        if next_cursor:
            return SEP.join((self.oldest, high_water, next_cursor))
        return high_water or self.oldest


async def read_history_page(
    call: Call, channel_id: str, cursor: str | None, *, limit: int, token: dict[str, str]
) -> HistoryPage:
    """The next page of a sweep (skipping pages that hold only joins and topic changes)."""
    sweep = Sweep.parse(cursor)
    while True:
        params: dict[str, Any] = {"channel": channel_id, "limit": limit, **token}
        if sweep.oldest:
            params["oldest"] = sweep.oldest
        if sweep.slack_cursor:
            params["cursor"] = sweep.slack_cursor
        try:
            response = await call("conversations.history", **params)
        except ChatPlatformError as exc:
            if exc.reason != INVALID_CURSOR or not sweep.slack_cursor:
                raise
            # Slack's cursors expire: sweep again from the newest message down to the same `oldest`. Messages are
            # unique by id, so what this sweep had stored already is not stored twice.
            sweep = Sweep(sweep.oldest, sweep.high_water, "")
            continue
        raw = response.get("messages", [])
        next_slack = (response.get("response_metadata") or {}).get("next_cursor") or ""
        newest = max((m["ts"] for m in raw), key=ts_key, default="")
        after = sweep.after(newest, next_slack if response.get("has_more") or next_slack else "")
        # Thread replies broadcast to the channel are read with their thread.
        top_level = [m for m in raw if m.get("thread_ts") in (None, m["ts"]) and is_message(m)]
        messages = sorted((message_from_slack(channel_id, m) for m in top_level), key=lambda m: m.ts)
        more = SEP in after
        if messages or not more:
            return HistoryPage(messages, after, more)
        sweep = Sweep.parse(after)


VANISHED = "vanished"
THREAD_WATCH_DAYS = 30  # threads whose parent is older are left to live events (their replies arrive as events)


async def thread_states(
    call: Call, channel_id: str, thread_ids: list[str], *, token: dict[str, str], now: float
) -> dict[str, str]:
    """`reply_count:latest_reply` of each known thread whose parent is in the watch window, from one paged
    `conversations.history` over that window (instead of one `conversations.replies` per thread)."""
    wanted = {tid.rpartition(":")[2]: tid for tid in thread_ids}
    window_start = now - THREAD_WATCH_DAYS * 86_400
    oldest_parent = min((ts_key(ts) for ts in wanted), default=(0, 0))
    oldest = max(float(f"{oldest_parent[0]}.{oldest_parent[1]:06d}") - 0.000001, window_start)
    states: dict[str, str] = {}
    cursor = ""
    while True:
        params: dict[str, Any] = {"channel": channel_id, "oldest": f"{oldest:.6f}", "limit": 200, **token}
        if cursor:
            params["cursor"] = cursor
        response = await call("conversations.history", **params)
        for m in response.get("messages", []):
            if m["ts"] in wanted:
                states[wanted[m["ts"]]] = f"{m.get('reply_count', 0)}:{m.get('latest_reply', '')}"
        cursor = (response.get("response_metadata") or {}).get("next_cursor") or ""
        if not cursor or len(states) == len(wanted):
            break
    # A parent inside the window that history no longer lists is gone: reading the thread meets Slack's
    # thread_not_found, which retires it.
    for ts, thread_id in wanted.items():
        if thread_id not in states and float(ts) >= window_start:
            states[thread_id] = VANISHED
    return states
