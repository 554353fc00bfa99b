"""Gateway events as an unreliable network would deliver them: some dropped, some twice, some late (after the next
one), for the events that change who reads what. Wraps a `FakeGateway`'s client, so each change still lands in the
fake Discord's state first and only its event is disturbed:

    chaos = Chaos(random.Random(3))
    gateway = FakeGateway(chaos.client(runtime.client), api)
    ...
    if chaos.unsynced:            # something was dropped or is late: what a reconciliation must repair
        chaos.flush()             # late events arrive at last
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any


DISTURBED = frozenset({
    "parse_guild_member_add", "parse_guild_member_update", "parse_guild_member_remove", "parse_guild_role_create",
    "parse_guild_role_update", "parse_guild_role_delete", "parse_channel_update", "parse_channel_create",
    "parse_thread_create", "parse_thread_members_update",
})  # fmt: skip


class Chaos:
    def __init__(self, rng: random.Random, *, drop: float = 0.08, twice: float = 0.08, late: float = 0.08) -> None:
        self.rng = rng
        self.odds = (drop, drop + twice, drop + twice + late)
        self.held: list[Callable[[], None]] = []
        self.unsynced = False  # an event was dropped, or one is still late
        self.counts = {"dropped": 0, "twice": 0, "late": 0, "delivered": 0}

    def client(self, real: Any) -> Any:  # noqa: ANN401 - a discord.Client stand-in
        return _Client(real, self)

    def deliver(self, parse: Callable[[Any], None], payload: Any) -> None:  # noqa: ANN401 - a gateway payload
        roll = self.rng.random()
        if roll < self.odds[0]:
            self.counts["dropped"] += 1
            self.unsynced = True
            return
        late, self.held = self.held, []
        if roll < self.odds[1]:
            self.counts["twice"] += 1
            parse(payload)
            parse(payload)
        elif roll < self.odds[2]:
            self.counts["late"] += 1
            self.held.append(lambda: parse(payload))
            self.unsynced = True
        else:
            self.counts["delivered"] += 1
            parse(payload)
        for event in late:  # what was held arrives after this one: the two are swapped
            event()

    def flush(self) -> None:
        late, self.held = self.held, []
        for event in late:
            event()


class _Client:
    def __init__(self, real: Any, chaos: Chaos) -> None:  # noqa: ANN401
        self._real = real
        self._connection = _Connection(real._connection, chaos)

    def __getattr__(self, name: str) -> Any:  # noqa: ANN401
        return getattr(self._real, name)


class _Connection:
    def __init__(self, real: Any, chaos: Chaos) -> None:  # noqa: ANN401
        self._real = real
        self._chaos = chaos

    def __getattr__(self, name: str) -> Any:  # noqa: ANN401
        method = getattr(self._real, name)
        if name not in DISTURBED:
            return method
        return lambda payload: self._chaos.deliver(method, payload)
