"""`/ask-with @bob [@carol …] <question>`: acknowledge at once, then let the core run the ask. A leading user group
(`@eng`) stands for its members.

Slack wants an answer within 3 seconds: the request is parsed and checked by the core (fast: database look-ups
only), the member gets an ephemeral "your agent is asking…" (or the reason it can't), and the ask runs after the
acknowledgement; the core posts the agents' conversation in a hidden thread and DMs the answer.
"""

from __future__ import annotations

from logging import Logger
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from adapters.slack import texts
from adapters.slack.chat_asks import ChatAsks
from adapters.slack.command_text import parse_ask
from adapters.slack.services import services
from bot.asks.service import AskRequest
from bot.errors import AskRejectedError


async def ask_with_callback(ack: AsyncAck, command: dict[str, Any], context: AsyncBoltContext, logger: Logger) -> None:
    svc = services(context)
    # A user group (`<!subteam^S…|@eng>`) names its members: one `usergroups.users.list` call each.
    text, _ = await ChatAsks(svc).expand_groups(command.get("text", ""), command["user_id"])
    parsed = parse_ask(text)
    if parsed.wants_help:
        await ack(text=texts.ASK_HELP, response_type="ephemeral")
        return
    request = AskRequest(command["user_id"], [c.ref for c in parsed.colleagues], parsed.question)
    try:
        ask_id = await svc.submit(request)
    except AskRejectedError as exc:
        await ack(text=str(exc), response_type="ephemeral")
        return
    await ack(text=texts.asking([c.label for c in parsed.colleagues]), response_type="ephemeral")
    logger.info("ask #%s submitted by %s", ask_id, command["user_id"])
    svc.spawn(svc.run_ask(ask_id))
