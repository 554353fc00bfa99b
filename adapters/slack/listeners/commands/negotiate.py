"""`/negotiate @bob`: acknowledge at once, then let the core's member negotiation run.

The mention is parsed like `/ask-with`'s; the core checks the request (database look-ups only: both members known,
Bob is a person other than you, both have a negotiation profile) and the member reads the reason if it can't run.
The negotiation itself runs after the acknowledgement; both members get the agreed trade by DM with Accept /
Decline, and the outcome.
"""

from __future__ import annotations

from logging import Logger
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from adapters.slack import texts
from adapters.slack.command_text import ParsedAsk, parse_ask
from adapters.slack.services import services
from bot.errors import NegotiationRejectedError
from bot.negotiation import messages


async def negotiate_callback(
    ack: AsyncAck, command: dict[str, Any], context: AsyncBoltContext, logger: Logger
) -> None:
    parsed = parse_ask(command.get("text", ""))
    if (refusal := _refusal(parsed, command.get("text", ""))) is not None:
        await ack(text=refusal, response_type="ephemeral")
        return
    svc, colleague = services(context), parsed.colleagues[0]
    negotiation = svc.negotiation()
    try:
        initiator, counterpart = await negotiation.check(command["user_id"], colleague.ref)
    except NegotiationRejectedError as exc:
        await ack(text=str(exc), response_type="ephemeral")
        return
    await ack(text=texts.negotiating(colleague.label), response_type="ephemeral")
    logger.info("negotiation started by %s with %s", initiator, counterpart)
    svc.spawn(negotiation.negotiate(initiator, counterpart))


def _refusal(parsed: ParsedAsk, raw: str) -> str | None:
    """What to answer instead of negotiating, when the text is not exactly one mention."""
    if parsed.wants_help:
        return texts.NEGOTIATE_HELP
    if parsed.question:
        return texts.negotiate_usage_error(raw.strip()) if parsed.colleagues else messages.no_counterpart()
    if len(parsed.colleagues) > 1:
        return messages.one_counterpart_only()
    return None
