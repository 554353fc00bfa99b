"""The gateway's member requests as Discord answers them: REQUEST_GUILD_MEMBERS (opcode 8, what discord.py's
`guild.chunk()` and `guild.query_members()` send) is answered by GUILD_MEMBERS_CHUNK events of at most 1,000
members each, carrying the request's nonce, delivered after the request was sent (not inside the call), with the
ids asked for that are not in the server under `not_found`.

    FakeSocket.install(client, api)   # the client's `ws`: the member requests it sends reach the fake Discord
"""

from __future__ import annotations

import asyncio
from typing import Any

import discord

from tests.fakes.discord_api import FakeDiscordApi


CHUNK_SIZE = 1000  # Discord's largest GUILD_MEMBERS_CHUNK
ROUND_TRIP_HOPS = 100  # event-loop passes the answer waits at most for the requester to start listening


class FakeSocket:
    """The part of discord.py's websocket that member requests use; nothing else is sent through it."""

    open = False  # no connection to close: `client.close()` leaves it alone

    def __init__(self, state: Any, api: FakeDiscordApi) -> None:  # noqa: ANN401 - discord.py's ConnectionState
        self.state = state
        self.api = api
        self.requests: list[dict[str, Any]] = []  # each request's payload (`d`), as Discord received it
        self.latency = 0.0
        self._answers: set[asyncio.Task[None]] = set()

    @classmethod
    def install(cls, client: discord.Client, api: FakeDiscordApi) -> FakeSocket:
        state = client._connection
        real = state._get_client()  # the discord.py client itself, also behind a wrapper (`tests.fakes.discord_chaos`)
        if not isinstance(real.ws, FakeSocket):
            real.ws = cls(state, api)
        return real.ws  # type: ignore[no-any-return]

    def is_ratelimited(self) -> bool:
        return False

    async def request_chunks(
        self,
        guild_id: int,
        query: str | None = None,
        *,
        limit: int,
        user_ids: list[int] | None = None,
        presences: bool = False,
        nonce: str | None = None,
    ) -> None:
        request = {"guild_id": guild_id, "query": query, "limit": limit, "user_ids": user_ids, "nonce": nonce}
        self.requests.append(request)
        members = self.api.members_out() if str(guild_id) == self.api.guild_id else []
        not_found: list[str] = []
        if user_ids is not None:
            wanted = {str(u) for u in user_ids}
            members = [m for m in members if m["user"]["id"] in wanted]
            not_found = sorted(wanted - {m["user"]["id"] for m in members})
        elif query:
            members = [m for m in members if str(m["user"]["username"]).lower().startswith(query.lower())]
        if limit and (query or user_ids is not None):
            members = members[:limit]  # limit 0 with an empty query: every member
        chunks = [members[i : i + CHUNK_SIZE] for i in range(0, len(members), CHUNK_SIZE)] or [[]]
        payloads = []
        for index, chunk in enumerate(chunks):
            payload: dict[str, Any] = {
                "guild_id": str(guild_id),
                "members": chunk,
                "chunk_index": index,
                "chunk_count": len(chunks),
                "nonce": nonce,
            }
            if not_found and index == 0:
                payload["not_found"] = not_found
            payloads.append(payload)
        task = asyncio.create_task(self._answer(nonce, payloads))
        self._answers.add(task)
        task.add_done_callback(self._answers.discard)

    async def _answer(self, nonce: str | None, payloads: list[dict[str, Any]]) -> None:
        """The chunks arrive a round trip later: discord.py starts waiting for them only once the request is sent."""
        for _ in range(ROUND_TRIP_HOPS):
            waiting = [r for r in self.state._chunk_requests.values() if r.nonce == nonce]
            if not waiting or waiting[0].waiters:
                break
            await asyncio.sleep(0)  # one pass of the event loop, not a delay
        for payload in payloads:
            self.state.parse_guild_members_chunk(payload)
