"""Block Kit for an ask in a conversation: the status message (stage + Cancel) and the rich answer (answer in
mrkdwn, sources as permalinks or attributed quotes, contributors, Transcript and 👍/👎 buttons).

Rendering is pure: permalinks are looked up by the caller (`SourceLinks`) before the blocks are built.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from adapters.slack import texts
from adapters.slack.mrkdwn import escape, link, to_mrkdwn
from bot.asks.read_models.answer_view import AnswerView, ContributorView, SourceView
from bot.texts import approval_texts, chat_texts


CANCEL_ACTION = "askwith_cancel"
VOTE_UP_ACTION = "askwith_vote_up"
VOTE_DOWN_ACTION = "askwith_vote_down"
TRANSCRIPT_ACTION = "askwith_transcript"
GROUP_CONFIRM_ACTION = "askwith_group_confirm"
GROUP_CANCEL_ACTION = "askwith_group_cancel"
SECTION_LIMIT = 2900  # Slack refuses a section text over 3000 characters
MAX_SOURCES = 10
QUESTION_CHARS = 300  # the question above an answer; the transcript has it whole

Block = dict[str, Any]


def status_blocks(ask_id: int, line: str, *, final: bool) -> list[Block]:
    blocks: list[Block] = [{"type": "context", "elements": [{"type": "mrkdwn", "text": line}]}]
    if not final:
        blocks.append(
            {"type": "actions", "elements": [_button(CANCEL_ACTION, chat_texts.CANCEL_BUTTON, ask_id, "danger")]}
        )
    return blocks


def group_confirm_blocks(text: str, value: str) -> list[Block]:
    """ "Ask all N?" with Ask / Don't ask; `value` carries the expanded request (Slack keeps up to 2000 chars)."""
    buttons = [
        {**_button(GROUP_CONFIRM_ACTION, chat_texts.GROUP_CONFIRM_BUTTON, 0, "primary"), "value": value},
        {**_button(GROUP_CANCEL_ACTION, texts.GROUP_CANCEL_BUTTON, 0), "value": "-"},
    ]
    return [{"type": "section", "text": {"type": "mrkdwn", "text": text}}, {"type": "actions", "elements": buttons}]


def answer_blocks(view: AnswerView, asker_id: str, links: Mapping[tuple[str, str], str]) -> list[Block]:
    """`links`: permalink per (channel id, message id) of the sources the viewer may open."""
    body = view.answer or view.final_text or view.failure or ""
    blocks: list[Block] = [
        {"type": "context", "elements": [{"type": "mrkdwn", "text": texts.answer_heading(asker_id, _question(view))}]},
        *_sections(to_mrkdwn(body)),
    ]
    sources = [line for source in view.sources[:MAX_SOURCES] if (line := _source(source, links))]
    if sources:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": s[:2900]} for s in sources]})
    notes = [texts.disagreement(escape(d)) for d in view.disagreements]
    if view.status == "unsupported":
        notes += [texts.tried(escape(t)) for t in view.tried]
    if notes:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": n[:2900]} for n in notes[:10]]})
    names = [_contributor(c, links) for c in view.contributors if c.sources]
    lines = [texts.contributors_line(names)]
    lines += [escape(approval_texts.share_withheld(c.name, c.withheld)) for c in view.contributors if c.withheld]
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": line[:2900]} for line in lines[:10]]})
    blocks.append({"type": "actions", "elements": _answer_buttons(view)})
    return blocks


def _question(view: AnswerView) -> str:
    question = " ".join(view.question.split())
    return escape(question if len(question) <= QUESTION_CHARS else question[: QUESTION_CHARS - 1] + "\u2026")


def quotes_blocks(view: AnswerView) -> list[Block]:
    """The lines colleagues' agents released to the asker, for the asker's DM when the answer went to a thread."""
    quotes = [texts.source_quote(escape(s.text), escape(s.via_name)) for s in view.released_quotes]
    header = {"type": "section", "text": {"type": "mrkdwn", "text": escape(texts.quotes_for_you(view.question))}}
    return [header, *_sections("\n".join(quotes))]


def _source(source: SourceView, links: Mapping[tuple[str, str], str]) -> str:
    url = links.get((source.channel_id or "", source.message_id or ""))
    if source.visible_to_viewer and url:
        label = f"#{source.channel_name}" if source.channel_name else "message"
        return texts.source_link(link(url, label), source.sender and escape(source.sender), source.when)
    if source.text:
        return texts.source_quote(escape(source.text), escape(source.via_name))
    return escape(source.withheld_text)


def _contributor(contributor: ContributorView, links: Mapping[tuple[str, str], str]) -> str:
    """A colleague credited with its own sources, as permalinks where the viewer may open them."""
    labels = []
    for source in contributor.sources:
        url = links.get((source.channel_id or "", source.message_id or ""))
        if source.visible_to_viewer and url:
            labels.append(link(url, f"#{source.channel_name}" if source.channel_name else "message"))
    return texts.contributor(escape(contributor.name), contributor.source_count, labels)


def _answer_buttons(view: AnswerView) -> list[Block]:
    buttons = []
    if view.transcript_url:
        buttons.append(
            {
                "type": "button",
                "action_id": TRANSCRIPT_ACTION,
                "text": {"type": "plain_text", "text": chat_texts.TRANSCRIPT_BUTTON},
                "url": view.transcript_url,
            }
        )
    buttons.append(_button(VOTE_UP_ACTION, chat_texts.VOTE_UP_BUTTON, view.ask_id))
    buttons.append(_button(VOTE_DOWN_ACTION, chat_texts.VOTE_DOWN_BUTTON, view.ask_id))
    return buttons


def _sections(mrkdwn: str) -> list[Block]:
    chunks = [mrkdwn[i : i + SECTION_LIMIT] for i in range(0, len(mrkdwn), SECTION_LIMIT)] or [" "]
    return [{"type": "section", "text": {"type": "mrkdwn", "text": chunk}} for chunk in chunks[:20]]


def _button(action_id: str, label: str, ask_id: int, style: str | None = None) -> Block:
    button: Block = {
        "type": "button",
        "action_id": action_id,
        "text": {"type": "plain_text", "text": label, "emoji": True},
        "value": str(ask_id),
    }
    if style:
        button["style"] = style
    return button
