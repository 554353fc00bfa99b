"""Rendering pages: one Jinja environment over the package's templates, with the signed-in identity in context."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.templating import Jinja2Templates

from bot.asks.read_models.redaction import withheld_label
from bot.consent import card as approval_card
from bot.texts import answer_texts, approval_texts
from bot.web.access import Identity
from bot.web.csrf import csrf_token
from bot.web.texts import ASK_PAGE, short_time, waiting_for


TEMPLATES_DIR = Path(__file__).parent / "templates"
MESSAGE_FOLD_CHARS = 700  # a chat message longer than this is folded in the feed
FOLD_CHARS = 280  # longer texts show this much and fold the rest (a 10,000-character question stays one line)
TRANSCRIPT_REF = re.compile(r"\(transcript: `askwith transcripts show (\d+)`\)")
# An agent's citation of the messages a sentence rests on ("[alice:m0000011, m0000012]", "[1700000000.0001]"): for the
# technical detail, not for the words a member reads.
CITATION = re.compile(r"\s*\[[^\[\]\s,]*\d[^\[\]\s,]*(?:,\s*[^\[\]\s,]*\d[^\[\]\s,]*)*\]")
# A note's pointer to an ask's page (`texts.ask_page_ref`), as it reads once escaped.
ASK_PAGE_REF = re.compile(re.escape(str(escape(ASK_PAGE))) + r" \((/workspace/asks/\d+)\)")

templates = Jinja2Templates(directory=str(TEMPLATES_DIR))


def page(
    request: Request, name: str, *, identity: Identity | None = None, status_code: int = 200, **context: Any
) -> HTMLResponse:
    context = {"identity": identity, "web": request.app.state.web, "csrf_token": csrf_token(request), **context}
    return templates.TemplateResponse(request, name, context, status_code=status_code)


def message_html(text: str) -> Markup:
    """A chat message as HTML: escaped, line breaks kept, and askwith's transcript reference and a note's pointer to
    an ask's page turned into links."""
    escaped = str(escape(text))
    linked = TRANSCRIPT_REF.sub(lambda m: f'(<a class="transcript-link" href="/asks/{m[1]}">transcript</a>)', escaped)
    linked = ASK_PAGE_REF.sub(lambda m: f'<a class="ask-page-link" href="{m[1]}">{escape(ASK_PAGE)}</a>', linked)
    return Markup(linked.replace("\n", "<br>"))


def answered_ask(text: str) -> int | None:
    """The ask whose answer `text` is (askwith's final post carries its transcript reference), else None."""
    match = TRANSCRIPT_REF.search(text)
    return int(match[1]) if match else None


def fold(text: str | None, limit: int = FOLD_CHARS) -> Markup:
    """Long text folded: its first `limit` characters, and the whole of it one click away (a <details>)."""
    text = text or ""
    if len(text) <= limit:
        return Markup(escape(text))
    head = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return Markup(
        '<details class="fold"><summary><span class="fold-head">{head}…</span> <span class="fold-more">'
        'Show all ({size:,} characters)</span></summary><div class="fold-full">{full}</div></details>'
    ).format(head=head, size=len(text), full=text)


def message_fold(text: str, limit: int = MESSAGE_FOLD_CHARS) -> Markup:
    """A chat message as HTML (`message_html`), folded like `fold` when it is long."""
    if len(text) <= limit:
        return message_html(text)
    head = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return Markup(
        '<details class="fold"><summary><span class="fold-head">{head}…</span> <span class="fold-more">'
        'Show all ({size:,} characters)</span></summary><div class="fold-full">{full}</div></details>'
    ).format(head=message_html(head), size=len(text), full=message_html(text))


def note_html(text: str, limit: int = FOLD_CHARS) -> Markup:
    """An "only visible to you" note: each long line (an echoed question) folded on its own, so the reply after it
    stays in view and a 3,000-character question is one line, not a wall."""
    lines = [message_fold(line, limit) for line in text.split("\n")]
    # A folded line is a block of its own (a <details>): no line break after it.
    return Markup("").join(
        line if i == len(lines) - 1 or line.startswith("<details") else line + Markup("<br>")
        for i, line in enumerate(lines)
    )


def uncited(text: str | None) -> str:
    """`text` without the bracketed message ids an agent cites."""
    return CITATION.sub("", text or "")


def when(ts: datetime | None) -> Markup:
    """A <time> the browser rewrites in the member's zone; without JavaScript it reads "16 Nov 11:05 UTC"."""
    if ts is None:
        return Markup("")
    utc = ts.astimezone(UTC) if ts.tzinfo else ts.replace(tzinfo=UTC)
    return Markup('<time datetime="{}" data-local>{}</time>').format(
        utc.isoformat(timespec="seconds"), short_time(utc)
    )


def waiting_html(name: str, deadline: datetime) -> Markup:
    """`texts.waiting_for`, its deadline a <time> the browser shows in the member's zone."""
    text, stamp = waiting_for(name, deadline), short_time(deadline)
    return Markup(escape(text)).replace(str(escape(stamp)), when(deadline), 1)


def when_text(text: str | None) -> Markup | str:
    """An agent's "YYYY-MM-DD HH:MM" (UTC) as `when` shows times; any other text as it is."""
    try:
        return when(datetime.strptime(text or "", "%Y-%m-%d %H:%M").replace(tzinfo=UTC))
    except ValueError:
        return text or ""


templates.env.filters["message_html"] = message_html
templates.env.filters["when_text"] = when_text
templates.env.filters["note_html"] = note_html
templates.env.filters["when"] = when
templates.env.filters["fold"] = fold
templates.env.filters["uncited"] = uncited
templates.env.filters["message_fold"] = message_fold
templates.env.globals["waiting_text"] = waiting_html
templates.env.globals["share_withheld"] = approval_texts.share_withheld
templates.env.globals["answer_not_yours"] = answer_texts.answer_not_yours
templates.env.globals["approval_confirmed"] = approval_texts.approval_confirmed
templates.env.globals["sources_heading"] = approval_card.SOURCES_HEADING
templates.env.globals["audience_heading"] = approval_card.AUDIENCE_HEADING
templates.env.globals["approve_all"] = approval_card.APPROVE_ALL
templates.env.globals["approve_all_means"] = approval_card.APPROVE_ALL_MEANS
templates.env.filters["answered_ask"] = answered_ask
templates.env.globals["withheld_label"] = withheld_label
