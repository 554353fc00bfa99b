"""Approve / Deny clicked on an approval prompt: resume the ask waiting on it.

The click is acknowledged first; resolving it and updating the prompt (`chat.update`, which Slack may rate-limit
for seconds) happen after the acknowledgement has gone out.
"""

from __future__ import annotations

from logging import Logger
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.context.respond.async_respond import AsyncRespond

from adapters.slack import texts
from adapters.slack.blocks import APPROVE_ACTION
from adapters.slack.port import SlackPort
from adapters.slack.services import services
from bot.port import ApprovalDecision


async def approval_callback(
    ack: AsyncAck,
    action: dict[str, Any],
    body: dict[str, Any],
    respond: AsyncRespond,
    context: AsyncBoltContext,
    logger: Logger,
) -> None:
    await ack()
    svc = services(context)
    svc.spawn(_decide(svc.port, action, body, respond, logger))


async def _decide(
    port: SlackPort, action: dict[str, Any], body: dict[str, Any], respond: AsyncRespond, logger: Logger
) -> None:
    approval_id, clicker = action.get("value", ""), body["user"]["id"]
    pending = port.approvals.pending(approval_id)
    if pending is None:
        await respond(text=texts.approval_not_pending(), response_type="ephemeral", replace_original=False)
        return
    if pending.request.member_id != clicker:
        await respond(text=texts.approval_not_yours(), response_type="ephemeral", replace_original=False)
        return
    decision = ApprovalDecision.APPROVED if action["action_id"] == APPROVE_ACTION else ApprovalDecision.DENIED
    if port.approvals.resolve(approval_id, decision):
        logger.info("approval %s: %s by %s", approval_id, decision.value, clicker)
        await port.close_approval_prompt(approval_id, decision)
