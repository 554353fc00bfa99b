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
from adapters.slack.blocks import APPROVE_ACTION, APPROVE_ALL_ACTION
from adapters.slack.port import SlackPort
from adapters.slack.services import services
from bot.consent.pending import ApprovalStore, Click, decide_click
from bot.platform.port import ApprovalDecision


CLICKS = {APPROVE_ACTION: ApprovalDecision.APPROVED, APPROVE_ALL_ACTION: ApprovalDecision.APPROVED_ALL}


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
    svc.spawn(_decide(svc.port, ApprovalStore(svc.db), action, body, respond, logger))


async def _decide(
    port: SlackPort,
    store: ApprovalStore,
    action: dict[str, Any],
    body: dict[str, Any],
    respond: AsyncRespond,
    logger: Logger,
) -> None:
    approval_id, clicker = action.get("value", ""), body["user"]["id"]
    decision = CLICKS.get(action["action_id"], ApprovalDecision.DENIED)
    # Stored first: the ask may wait in another process, or resume after a restart.
    result = await decide_click(store, port.approvals, approval_id, decision, member_id=clicker)
    if result.outcome is Click.NOT_YOURS:
        await respond(text=texts.approval_not_yours(), response_type="ephemeral", replace_original=False)
        return
    if result.outcome is Click.NOT_PENDING:
        await respond(text=texts.approval_not_pending(), response_type="ephemeral", replace_original=False)
        return
    logger.info("approval %s: %s by %s", approval_id, decision.value, clicker)
    if result.pending is not None:
        await port.close_approval_prompt(approval_id, decision)
    else:  # posted by another process: replace the prompt's buttons with the outcome here
        await respond(text=texts.approval_recorded(decision), replace_original=True)
