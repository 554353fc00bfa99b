"""The server's threads as askwith sees them: where each thread's messages belong, and who may read them.

On Discord a thread is a channel of its own under a parent channel. askwith files a *public* thread's messages
under its parent (everyone who reads the parent reads the thread) with the thread's id, like a Slack thread; a
*private* thread is a scope of its own, a channel whose readers are its members (and the parent's thread
moderators), so nobody else's agent ever finds what is said in it. A forum post is a public thread of a forum
channel whose first message (same id as the thread) is the post itself.

    directory = ThreadDirectory(http)
    threads = await directory.scan(guild_id, parents)     # active threads + every archived one the bot can list
    members = await directory.members(thread_id)          # ids of a private thread's members
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

import discord


log = logging.getLogger(__name__)

PUBLIC_THREAD_TYPES = {10, 11}  # announcement thread, public thread
PRIVATE_THREAD = 12
THREAD_TYPES = PUBLIC_THREAD_TYPES | {PRIVATE_THREAD}
FORUM_TYPES = {15, 16}  # forum, media: every post is a thread
THREAD_PARENT_TYPES = {0, 5}  # text, announcement: may hold private threads
ARCHIVE_PAGE = 100
MEMBERS_TTL_S = 300.0  # the ingestion interval's order: a missed member event is corrected by then


def is_private(thread: Mapping[str, Any]) -> bool:
    return int(thread["type"]) == PRIVATE_THREAD


def is_thread(payload: Mapping[str, Any]) -> bool:
    return int(payload.get("type", 0)) in THREAD_TYPES


class ThreadDirectory:
    def __init__(self, http: discord.http.HTTPClient) -> None:
        self.http = http
        # thread id -> (when read, member ids): a recomputation after a role change need not list every private
        # thread's members again; a thread member event forgets its thread's entry, and entries expire anyway.
        self._members: dict[str, tuple[float, set[str]]] = {}

    async def scan(self, guild_id: str, parents: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Threads of `parents` (channel id -> payload): the active ones (one call for the server) and the archived
        ones of each parent: public threads of text and announcement channels and forum posts, and private threads
        of text channels. A parent the bot may not list is skipped, not fatal."""
        found: dict[str, dict[str, Any]] = {}
        active = await self.http.get_active_threads(guild_id)
        for thread in active.get("threads", []):
            if str(thread.get("parent_id")) in parents:
                found[str(thread["id"])] = dict(thread)
        public, private = self.http.get_public_archived_threads, self.http.get_private_archived_threads
        for parent_id, parent in parents.items():
            kind = int(parent["type"])
            listings = [public] if kind in FORUM_TYPES else [public, private] if kind in THREAD_PARENT_TYPES else []
            for listing in listings:
                for thread in await self._archived(listing, parent_id):
                    found.setdefault(str(thread["id"]), dict(thread))
        return sorted(found.values(), key=lambda t: int(t["id"]))

    async def _archived(self, listing: Any, parent_id: str) -> list[dict[str, Any]]:
        threads: list[dict[str, Any]] = []
        before: str | None = None
        while True:
            try:
                page = await listing(parent_id, before=before, limit=ARCHIVE_PAGE)
            except discord.Forbidden as exc:  # no Manage Threads / Read History there: its archive stays unread
                log.info("archived threads of %s not listed: HTTP %s, code %s", parent_id, exc.status, exc.code)
                return threads
            batch = list(page.get("threads", []))
            threads.extend(batch)
            if not page.get("has_more") or not batch:
                return threads
            before = str(batch[-1].get("thread_metadata", {}).get("archive_timestamp") or "") or None
            if before is None:
                return threads

    async def members(self, thread_id: str) -> set[str]:
        """A thread's member ids, listed at most once per MEMBERS_TTL_S unless a member event says they changed."""
        cached = self._members.get(thread_id)
        if cached is not None and time.monotonic() - cached[0] < MEMBERS_TTL_S:
            return cached[1]
        members = {str(m["user_id"]) for m in await self.http.get_thread_members(thread_id)}
        self._members[thread_id] = (time.monotonic(), members)
        return members

    def members_changed(self, thread_id: str) -> None:
        self._members.pop(thread_id, None)

    def forget_members(self) -> None:
        """A full reconciliation lists every private thread's members again (an event may have been missed)."""
        self._members.clear()
