"""What every platform says about a member's own settings: sharing policy, memory on or off, time zone, forgetting and
the member's token.

    settings_texts.memory_state(True)    # "on: askwith remembers what you can see"
    settings_texts.SHARE_MEANING[SharePolicy.ASK]
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.platform.port import SharePolicy


SHARE_MEANING = {
    SharePolicy.AUTO: "your agent shares what it finds",
    SharePolicy.ASK: "your agent asks you (by DM) before sharing anything it found",
    SharePolicy.NEVER: "your agent politely declines to take part",
}


def memory_state(opted_in: bool) -> str:
    return "on: askwith remembers what you can see" if opted_in else "off: askwith does not remember anything"


def time_zone_state(chosen: str | None, profile: str | None, workspace: str) -> str:
    """Which zone a member reads deadlines and times in, and why (every surface's `/askwith timezone` says this)."""
    if chosen:
        return f"{chosen} (you chose it; `/askwith timezone auto` goes back to {profile or workspace})"
    if profile:
        return f"{profile} (your profile's; `/askwith timezone Europe/Paris` picks another)"
    return f"{workspace} (the workspace's; `/askwith timezone Europe/Paris` picks your own)"


def memory_off_effect() -> str:
    """What turning memory off does, exactly (every platform says this when a member turns it off)."""
    return (
        "askwith stops at once reading anything with your own token (your DMs), no longer reads channels for your "
        "sake (a channel stays remembered for colleagues in it who have memory on), and colleagues' agents can no "
        "longer ask yours. What it already remembers of your DMs stays until you forget it."
    )


def forgot(deleted: Mapping[str, int]) -> str:
    """`/askwith forget` done: what was deleted (rows per kind, `bot.asks.forget.forget_member`)."""
    return (
        f"Done: askwith deleted your memory: {deleted.get('channel', 0)} conversation(s) only you could see "
        f"({deleted.get('message', 0)} message(s)), {deleted.get('ask', 0)} ask(s) of yours with their transcripts, "
        "and your token; your memory is off. Channels a colleague with memory on reads stay remembered for them."
    )


def disconnected(had_token: bool) -> str:
    if not had_token:
        return "askwith holds no token of yours: it reads only the channels its bot was invited to."
    return (
        "Done: your token is revoked and forgotten; askwith no longer reads your DMs. What it already remembered of "
        "them stays until you forget it."
    )


def token_disabled(reason: str) -> str:
    return (
        f"askwith stopped reading your DMs: your authorisation no longer works ({reason}). Nobody's agent reads "
        "what it remembered of them until you connect again."
    )
