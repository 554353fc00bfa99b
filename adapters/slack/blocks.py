"""Block Kit layouts askwith posts (approval prompts). Action ids are what the action listeners match on."""

from __future__ import annotations

from typing import Any

from adapters.slack import texts
from bot.port import ApprovalKind, ApprovalRequest


APPROVE_ACTION = "askwith_approve"
APPROVE_ALL_ACTION = "askwith_approve_all"  # everything the member's agent says in this ask
DENY_ACTION = "askwith_deny"
APPROVAL_BLOCK = "askwith_approval"


def approval_prompt(request: ApprovalRequest) -> list[dict[str, Any]]:
    """Title, what exactly would be shared (or traded), and Approve / Deny (Accept / Decline) buttons carrying the
    approval id."""
    yes, no = texts.BUTTONS[request.kind]
    buttons = [_button(APPROVE_ACTION, yes, request.id, "primary"), _button(DENY_ACTION, no, request.id, "danger")]
    if request.kind is ApprovalKind.SHARE:
        buttons.insert(1, _button(APPROVE_ALL_ACTION, texts.APPROVE_ALL, request.id, None))
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*{request.title}*"}},
        {"type": "section", "text": {"type": "mrkdwn", "text": request.body[:2900]}},
        {
            "type": "actions",
            "block_id": APPROVAL_BLOCK,
            "elements": buttons,
        },
    ]


def approval_closed(outcome: str) -> list[dict[str, Any]]:
    return [{"type": "section", "text": {"type": "mrkdwn", "text": outcome}}]


def _button(action_id: str, label: str, value: str, style: str | None) -> dict[str, Any]:
    button = {"type": "button", "action_id": action_id, "text": {"type": "plain_text", "text": label}, "value": value}
    return button | ({"style": style} if style else {})
