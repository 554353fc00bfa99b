"""Answering a member through the slash command they typed: interaction follow-ups, with a DM when that is over.

Discord lets the bot follow up on an interaction for 15 minutes (the interaction token's life), visible to that
member only when ephemeral. An ask may run longer, or be finished by another process after a crash, so an ask's
destination is a *route* string naming the interaction and its member; posting to a route follows up while the
interaction is alive here and DMs the member otherwise.

    route = replies.route(interaction)           # "interaction:<interaction id>:<member id>"
    interaction, member_id = replies.lookup(route)
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import discord


PREFIX = "interaction:"
# The token lives 15 minutes; stop using it a little earlier so a slow post does not race its expiry.
USABLE_FOR = timedelta(minutes=14)


class InteractionReplies:
    def __init__(self) -> None:
        self._live: dict[str, discord.Interaction] = {}

    @staticmethod
    def is_route(channel_id: str) -> bool:
        return channel_id.startswith(PREFIX)

    def route(self, interaction: discord.Interaction) -> str:
        self._forget_expired()
        route = f"{PREFIX}{interaction.id}:{interaction.user.id}"
        self._live[route] = interaction
        return route

    def lookup(self, route: str) -> tuple[discord.Interaction | None, str]:
        """(the live interaction, or None when it expired or belongs to another process; the member's id)."""
        member_id = route.rsplit(":", 1)[-1]
        interaction = self._live.get(route)
        if interaction is not None and _expired(interaction):
            self._live.pop(route, None)
            interaction = None
        return interaction, member_id

    def live_for(self, member_id: str) -> discord.Interaction | None:
        """The member's most recent live interaction (for ephemeral notes outside an ask's own route)."""
        for route in reversed(list(self._live)):
            interaction, owner = self.lookup(route)
            if interaction is not None and owner == member_id:
                return interaction
        return None

    def _forget_expired(self) -> None:
        for route in [r for r, i in self._live.items() if _expired(i)]:
            del self._live[route]


def _expired(interaction: discord.Interaction) -> bool:
    return datetime.now(UTC) - interaction.created_at > USABLE_FOR
