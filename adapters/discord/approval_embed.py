"""A share's approval card (`bot.consent.card.ApprovalCard`) as a Discord embed, within Discord's limits.

The description is the question, who asks and the exact text as a block quote; fields name the sources (jump links
where Discord gave one), who will see it, and what "Approve all in this ask" means; the footer holds the deadline.
Chat text is escaped, so the text's own markdown cannot restyle the card. The buttons are `approval_view`'s.

    await channel.send(request.title, embed=card_embed(request.card), view=approval_view(request.id))
"""

from __future__ import annotations

import discord

from adapters.discord.answer_embeds import MAX_DESCRIPTION, MAX_FIELD_NAME, MAX_TITLE, _clip, _lines, fit
from bot.consent import card as cards


COLOUR = 0x1C7ED6


def card_embed(card: cards.ApprovalCard) -> discord.Embed:
    quote = "\n".join(f"> {_escaped(line)}" for line in card.quote.splitlines() if line.strip())
    description = f"**{_escaped(card.asked_by)}:** {_escaped(card.question)}\n\n**{card.lead}:**\n{quote}"
    embed = discord.Embed(
        title=_clip(card.title, MAX_TITLE), description=_clip(description, MAX_DESCRIPTION), colour=COLOUR
    )
    sources = [_source(s) for s in card.sources] + ([card.more_label] if card.more_sources else [])
    if sources:
        embed.add_field(name=cards.SOURCES_HEADING, value=_lines(sources), inline=False)
    embed.add_field(name=cards.AUDIENCE_HEADING, value=_lines([_escaped(card.who_sees)]), inline=False)
    name, _, meaning = cards.APPROVE_ALL_MEANS.partition(": ")
    embed.add_field(name=_clip(name, MAX_FIELD_NAME), value=_lines([meaning]), inline=False)
    if card.answer_by:
        embed.set_footer(text=card.answer_by)
    return fit(embed)


def _escaped(text: str) -> str:
    return discord.utils.escape_mentions(discord.utils.escape_markdown(" ".join(text.split())))


def _source(source: cards.SourceRef) -> str:
    label = _escaped(source.label).replace("[", "(").replace("]", ")")
    return f"[{label}]({source.link})" if source.link.startswith("https://") else label
