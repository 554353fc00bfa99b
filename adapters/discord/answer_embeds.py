"""An ask's answer as Discord embeds, within Discord's limits.

One embed: the answer as its description; a field per claim listing its sources (a jump link when the asker can
open the message, else the quoted line attributed to the colleague's agent, or a note that it is not shown); who
contributed; where the agents disagreed; what they tried when nothing supports the answer. Chat text (quotes,
claims, names) is escaped so a message's own markdown cannot restyle the answer; the model's answer keeps its
markdown. Discord refuses more than 4,096 characters of description, 25 fields of 256 + 1,024 characters, or
6,000 characters in all (400/50035): `fit` cuts fields from the end, then shortens what is left, saying so.

    embed = answer_embed(view, permalink=lambda s: port.jump_url(s.channel_id, s.message_id))
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import discord

from adapters.discord import texts
from bot.asks.read_models.answer_view import AnswerView, ContributorView, SourceView
from bot.texts import answer_texts, approval_texts, chat_texts


MAX_DESCRIPTION = 4096
MAX_FIELDS = 25
MAX_FIELD_NAME = 256
MAX_FIELD_VALUE = 1024
MAX_TITLE = 256
MAX_AUTHOR = 256
MAX_FOOTER = 2048
MAX_TOTAL = 6000
QUOTE_CHARS = 300  # a quoted line longer than this is shortened (the transcript has it whole)
STORED_MENTION = re.compile(r"@([^()\n]{1,100}) \(<@[!&]?\d+>\)")  # `@Bob (<@123>)`, as memory keeps mentions
COLOURS = {"done": 0x2B8A3E, "unsupported": 0xE8590C, "failed": 0xC92A2A, "cancelled": 0x868E96}

Permalink = Callable[[SourceView], str | None]


def answer_embed(view: AnswerView, *, permalink: Permalink) -> discord.Embed:
    embed = discord.Embed(
        title=_clip(texts.answer_title(view.status), MAX_TITLE),
        description=_clip(_body(view), MAX_DESCRIPTION),
        colour=COLOURS.get(view.status, 0x1971C2),
    )
    embed.set_author(name=_clip(texts.asked(" ".join(view.question.split())), MAX_AUTHOR))  # a DM reads on its own
    for index, claim in enumerate(view.claims, start=1):
        if claim.sources:
            lines = [_source_line(source, permalink) for source in claim.sources]
            embed.add_field(
                name=_clip(f"{index}. {chat_text(claim.text)}", MAX_FIELD_NAME), value=_lines(lines), inline=False
            )
    if view.contributors:
        embed.add_field(
            name=texts.CONTRIBUTED,
            value=_lines([_contributor(c, permalink) for c in view.contributors]),
            inline=False,
        )
    if view.disagreements:
        embed.add_field(
            name=texts.DISAGREED, value=_lines([f"\u2022 {chat_text(d)}" for d in view.disagreements]), inline=False
        )
    if view.status == "unsupported" and view.tried:
        embed.add_field(name=texts.TRIED, value=_lines([f"\u2022 {chat_text(t)}" for t in view.tried]), inline=False)
    embed.set_footer(text=_clip(texts.answer_footer(view.ask_id), MAX_FOOTER))
    return fit(embed)


def _body(view: AnswerView) -> str:
    if view.status == "cancelled":
        return texts.answer_cancelled(view.cancelled_by or view.requester)
    if view.answer:
        return view.answer
    return view.failure or view.final_text or ""


def _source_line(source: SourceView, permalink: Permalink) -> str:
    where = _where(source)
    if source.visible_to_viewer and (url := permalink(source)):
        return f"\u2022 [{where or texts.SOURCE}]({url})"
    if source.text:
        quote = _clip(chat_text(source.text), QUOTE_CHARS)
        return f"\u2022 > \u201c{quote}\u201d \u2014 {chat_texts.shared_by(chat_text(source.via_name))}"
    return f"\u2022 {chat_text(source.withheld_text)}"


def _contributor(contributor: ContributorView, permalink: Permalink) -> str:
    """Its own sources, as jump links where the asker may open them (relayed lines credit their holder)."""
    links = []
    for source in contributor.sources:
        if source.visible_to_viewer and (url := permalink(source)):
            links.append(f"[{_where(source) or texts.SOURCE}]({url})")
    line = texts.contributor_line(chat_text(contributor.name), contributor.source_count, contributor.brought_in)
    withheld = [f"\u2014 {chat_text(approval_texts.share_withheld(contributor.name, contributor.withheld))}"]
    return " ".join([line, *links, *(withheld if contributor.withheld else [])])


def _where(source: SourceView) -> str:
    parts = (f"#{source.channel_name}" if source.channel_name else "", source.sender or "", source.when or "")
    return " \u00b7 ".join(chat_text(p) for p in parts if p)


def chat_text(text: str) -> str:
    """Text from chat as plain text in an embed: stored mentions shown by name, markdown escaped."""
    text = STORED_MENTION.sub(lambda m: f"@{m.group(1)}", text)
    return discord.utils.escape_markdown(" ".join(text.split()))


def _lines(lines: list[str]) -> str:
    """Lines joined within a field's 1,024 characters; the lines that do not fit are counted instead."""
    kept: list[str] = []
    for index, line in enumerate(lines):
        rest = len(lines) - index
        candidate = "\n".join([*kept, _clip(line, MAX_FIELD_VALUE)])
        more = answer_texts.more_lines(rest - 1) if rest > 1 else ""
        if len(candidate) + len(more) + 1 > MAX_FIELD_VALUE:
            return "\n".join([*kept, answer_texts.more_lines(rest)])[:MAX_FIELD_VALUE]
        kept.append(_clip(line, MAX_FIELD_VALUE))
    return "\n".join(kept) or "\u200b"


def fit(embed: discord.Embed) -> discord.Embed:
    """Within 25 fields and 6,000 characters: keep the first fields that fit (one more field says how many were
    left out), then shorten the description if it is still too long."""
    fields = list(embed.fields)

    def first(count: int) -> list[Any]:
        return fields[:count] + ([_left_out(len(fields) - count)] if count < len(fields) else [])

    count = len(fields)
    while count > 0 and (len(first(count)) > MAX_FIELDS or _size(embed, first(count)) > MAX_TOTAL):
        count -= 1
    chosen = first(count)
    embed.clear_fields()
    for item in chosen:
        embed.add_field(name=item.name, value=item.value, inline=item.inline)
    over = _size(embed, chosen) - MAX_TOTAL
    if over > 0 and embed.description:
        embed.description = _clip(embed.description, max(1, len(embed.description) - over))
    return embed


@dataclass(frozen=True)
class Field:
    name: str
    value: str
    inline: bool = False


def _left_out(count: int) -> Field:
    return Field(texts.LEFT_OUT, texts.left_out(count))


def _size(embed: discord.Embed, fields: list[Any]) -> int:
    heads = len(embed.title or "") + len(embed.description or "") + len(embed.footer.text or "")
    heads += len(embed.author.name or "")
    return heads + sum(len(f.name or "") + len(f.value or "") for f in fields)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"
