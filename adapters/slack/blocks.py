"""Block Kit layouts askwith posts (approval prompts). Action ids are what the action listeners match on.

A share's prompt renders its `ApprovalCard`: the question and who asks, the exact text as a quote block, its sources
as a list (linked where Slack gave a permalink), who will see it, the deadline, then Approve (primary), Deny (no
style: denying is safe, and Slack keeps `danger` for what cannot be undone) and "Approve all in this ask" (plain),
with one line above them on what approving all means.

    blocks = approval_prompt(request)    # request.card set: the card; else title and body (a trade)
"""

from __future__ import annotations

from typing import Any

from adapters.slack.mrkdwn import escape
from bot.consent import card as cards
from bot.platform.port import ApprovalKind, ApprovalRequest
from bot.texts import chat_texts


APPROVE_ACTION = "askwith_approve"
APPROVE_ALL_ACTION = "askwith_approve_all"  # everything the member's agent says in this ask
DENY_ACTION = "askwith_deny"
APPROVAL_BLOCK = "askwith_approval"


def approval_prompt(request: ApprovalRequest) -> list[dict[str, Any]]:
    """A share's card, or a trade's title and body; Approve / Deny (Accept / Decline) buttons carry the approval
    id."""
    if request.card is not None:
        return card_blocks(request.card, request.id)
    yes, no = chat_texts.APPROVAL_BUTTONS[request.kind]
    buttons = [_button(APPROVE_ACTION, yes, request.id, "primary"), _button(DENY_ACTION, no, request.id, None)]
    if request.kind is ApprovalKind.SHARE:
        buttons.append(_button(APPROVE_ALL_ACTION, cards.APPROVE_ALL, request.id, None))
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*{request.title}*"}},
        {"type": "section", "text": {"type": "mrkdwn", "text": request.body[:2900]}},
        {
            "type": "actions",
            "block_id": APPROVAL_BLOCK,
            "elements": buttons,
        },
    ]


def card_blocks(card: cards.ApprovalCard, approval_id: str) -> list[dict[str, Any]]:
    """A share's card: headings in bold, the quote and sources as rich text (no raw `>` or bullets to escape)."""
    sources = [_source(s) for s in card.sources] + ([_rich_text(card.more_label)] if card.more_sources else [])
    blocks: list[dict[str, Any]] = [
        _mrkdwn(f"*{escape(card.title)}*"),
        _mrkdwn(f"*{escape(card.asked_by)}:* {escape(card.question)}"[:2900]),
        _mrkdwn(f"*{escape(card.lead)}:*"),
        {"type": "rich_text", "elements": [{"type": "rich_text_quote", "elements": [_text(card.quote[:2900])]}]},
    ]
    if sources:
        blocks += [
            _mrkdwn(f"*{cards.SOURCES_HEADING}:*"),
            {"type": "rich_text", "elements": [{"type": "rich_text_list", "style": "bullet", "elements": sources}]},
        ]
    blocks += [
        _mrkdwn(f"*{cards.AUDIENCE_HEADING}:* {escape(card.who_sees)}"),
        {"type": "context", "elements": [{"type": "mrkdwn", "text": escape(card.answer_by)}]},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": escape(cards.APPROVE_ALL_MEANS)}]},
        {  # last, where the member's eye ends after reading the card
            "type": "actions",
            "block_id": APPROVAL_BLOCK,
            "elements": [
                _button(APPROVE_ACTION, cards.APPROVE, approval_id, "primary"),
                _button(DENY_ACTION, cards.DENY, approval_id, None),
                _button(APPROVE_ALL_ACTION, cards.APPROVE_ALL, approval_id, None),
            ],
        },
    ]
    return [b for b in blocks if b.get("type") != "context" or b["elements"][0]["text"]]


def _mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text or " "}


def _rich_text(text: str) -> dict[str, Any]:
    return {"type": "rich_text_section", "elements": [_text(text)]}


def _source(source: cards.SourceRef) -> dict[str, Any]:
    if not source.link:
        return _rich_text(source.label)
    return {"type": "rich_text_section", "elements": [{"type": "link", "url": source.link, "text": source.label}]}


def approval_closed(outcome: str) -> list[dict[str, Any]]:
    return [{"type": "section", "text": {"type": "mrkdwn", "text": outcome}}]


def _button(action_id: str, label: str, value: str, style: str | None) -> dict[str, Any]:
    button = {"type": "button", "action_id": action_id, "text": {"type": "plain_text", "text": label}, "value": value}
    return button | ({"style": style} if style else {})
