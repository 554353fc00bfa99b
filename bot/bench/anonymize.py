"""`--anonymize-names`: the paper's prior-knowledge check (section 6.4) renames FriendsTV's main characters.

One fixed mapping, applied consistently to member ids, names and every text (messages, question, gold), whole words
only and keeping the case, so a model cannot lean on what it remembers about the show.

    world = anonymize_world(world); item = anonymize_item(item)
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from bot.bench.items import BenchItem
from bot.platform.port import Member
from bot.store.world import World


# Names no FriendsTV character has, so the renamed world has no collisions.
RENAMES = {
    "rachel": "alice", "rach": "ali", "ross": "gordon", "monica": "clara", "mon": "clar", "chandler": "derek",
    "joey": "vincent", "joe": "vince", "phoebe": "harriet", "pheebs": "hattie", "phoe": "hat",
    "geller": "hartley", "green": "lawson", "bing": "mercer", "tribbiani": "moretti", "buffay": "sutton",
}  # fmt: skip
_WORD = re.compile(r"\b(" + "|".join(sorted(RENAMES, key=len, reverse=True)) + r")\b", re.IGNORECASE)


def rename(text: str) -> str:
    def swap(match: re.Match[str]) -> str:
        word, new = match.group(0), RENAMES[match.group(0).lower()]
        return new.upper() if word.isupper() and len(word) > 1 else new.capitalize() if word[0].isupper() else new

    return _WORD.sub(swap, text)


def anonymize_world(world: World) -> World:
    renamed = World(id=world.id, name=world.name)
    for member in world.members.values():
        renamed.add_member(
            Member(rename(member.id), rename(member.name), rename(member.display_name), member.is_bot),
            world.policies.get(member.id),
        )
    for channel_id, messages in world.messages.items():
        channel = world.channels[channel_id]
        target = renamed.dm(*(rename(m) for m in channel.member_ids))
        for message in messages:
            renamed.add_message(target.id, rename(message.sender_id), rename(message.text), ts=message.ts,
                                thread_id=message.thread_id, message_id=message.id)  # fmt: skip
    return renamed


def _renamed(value: Any) -> Any:
    if isinstance(value, str):
        return rename(value)
    if isinstance(value, list):
        return [_renamed(v) for v in value]
    if isinstance(value, dict):
        return {k: _renamed(v) for k, v in value.items()}
    return value


def anonymize_item(item: BenchItem) -> BenchItem:
    return replace(
        item, asking=(rename(item.asking[0]), rename(item.asking[1])), question=rename(item.question),
        gold=_renamed(item.gold),
    )  # fmt: skip
