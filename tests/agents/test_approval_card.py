"""The approval card an `ask` member reads, on every surface (web page, Slack blocks, Discord embed and buttons):
the asker and the audience by display name, the exact text once without ids, only the member's own view of where it
comes from, the deadline in the workspace's zone (said), Approve first and the one primary button."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import discord
import pytest

from adapters.discord.approval_embed import card_embed
from adapters.discord.views.approval import approval_view
from adapters.slack import blocks
from bot.asks.service import AskRequest
from bot.consent.card import APPROVE_ALL, APPROVE_ALL_MEANS, ApprovalCard, plain_text
from bot.platform.port import ApprovalDecision, ApprovalRequest, Member, SharePolicy
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import MemberPolicy
from bot.texts import approval_texts, conversation_texts
from bot.web.render import templates
from tests.fakes.asks import QUESTION, build, two_fact_world
from tests.fakes.records import conversations, turns


NAMES = {"alice": "Alice Chen", "bob": "Bob Okafor", "carol": "Carol Diaz", "dave": "Dave Singh", "erin": "Erin Walsh"}
IDS = re.compile(r"\bm\d{7}\b|\[[^\]]*\d{4,}[^\]]*\]")  # "m0000007", "[alice:m0000006, m0000005]", "[1700.0001]"
HANDLE_PREFIX = re.compile(r"\b(alice|bob|carol|dave|erin):")


async def _asked(db: Database, settings: Settings) -> tuple[ApprovalRequest, object]:
    """Bob (policy `ask`) is asked to share the launch date Erin told him in their DM; he approves."""
    world = two_fact_world(policies={"bob": MemberPolicy(share=SharePolicy.ASK)})
    for handle, name in NAMES.items():
        world.members[handle] = Member(handle, handle, name)
    seen: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> ApprovalDecision:
        seen.append(request)
        return ApprovalDecision.APPROVED

    h = await build(db, world, settings=settings.replace(timezone="Europe/Paris"), approvals=approve)
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    assert "14 March" in outcome.answer and len(seen) == 1 and seen[0].card is not None
    return seen[0], (h, outcome)


def _shown(tree: object) -> str:
    """The words a Block Kit or embed tree shows: its "text", "name", "value", "title", "description" strings (not a
    link's target nor a button's value)."""
    if isinstance(tree, dict):
        shown = [v for k, v in tree.items() if k in ("text", "name", "title", "description") and isinstance(v, str)]
        shown += [tree["value"]] if "name" in tree and isinstance(tree.get("value"), str) else []  # an embed field
        return "\n".join([*shown, *(_shown(v) for v in tree.values() if isinstance(v, dict | list))])
    if isinstance(tree, list):
        return "\n".join(_shown(v) for v in tree)
    return ""


def _clean(text: str) -> None:
    assert not IDS.search(text), text
    assert not HANDLE_PREFIX.search(text), text
    assert "Alice Chen" in text and "Europe/Paris" in text, text


async def test_the_card_names_people_shows_the_text_once_without_ids_and_the_deadline_with_its_zone(
    db: Database, settings: Settings
) -> None:
    request, (h, outcome) = await _asked(db, settings)
    card: ApprovalCard = request.card  # type: ignore[assignment]
    assert card.asker == "Alice Chen" and card.title == approval_texts.approval_title("Alice Chen")
    assert card.audience[0] == "Alice Chen" and "alice" not in card.audience
    assert card.zone == "Europe/Paris" and card.deadline is not None and card.deadline.tzname() in ("CET", "CEST")
    assert "Europe/Paris time" in card.answer_by
    # exactly what the outbox let out (its record), the ids agents cite by aside, once
    bob_turns = [t for c in await conversations(db, outcome.ask_id) for t in await turns(db, c.id) if t.agent == "bob"]
    sent = [t.data["sharing"]["sent"]["text"] for t in bob_turns if (t.data or {}).get("sharing", {}).get("sent")]
    assert request.context["text"] in sent
    assert (
        card.quote == conversation_texts.without_ids(request.context["text"]).strip()
        and card.quote.count("14 March") == 1
    )
    # the sources: whose message, in which of Bob's conversations, when (Paris time), with the web page's link
    assert card.sources and all(s.label.startswith(("Your message", "Erin Walsh's message")) for s in card.sources)
    erin = next(s for s in card.sources if s.label.startswith("Erin Walsh's"))
    assert re.match(r"Erin Walsh's message in your DM with Erin Walsh, 1 Mar( 2026)? 10:07$", erin.label)
    assert "/workspace/" in erin.link and "#msg-" in erin.link
    assert "From your messages" not in plain_text(card)
    _clean(plain_text(card))
    assert request.body == plain_text(card)


async def test_slack_renders_the_card_with_approve_primary_deny_plain_and_approve_all_last(
    db: Database, settings: Settings
) -> None:
    request, _ = await _asked(db, settings)
    rendered = blocks.approval_prompt(request)
    buttons = next(b for b in rendered if b["type"] == "actions")["elements"]
    _clean(_shown([b for b in rendered if b["type"] != "actions"]))
    quote = [e for b in rendered if b["type"] == "rich_text" for e in b["elements"] if e["type"] == "rich_text_quote"]
    assert len(quote) == 1 and _shown(quote).count("14 March") == 1
    assert [b["action_id"] for b in buttons] == [blocks.APPROVE_ACTION, blocks.DENY_ACTION, blocks.APPROVE_ALL_ACTION]
    assert [b.get("style") for b in buttons] == ["primary", None, None]
    assert buttons[2]["text"]["text"] == APPROVE_ALL
    assert APPROVE_ALL_MEANS in json.dumps(rendered, ensure_ascii=False)


async def test_discord_renders_the_card_as_an_embed_with_approve_the_one_coloured_button(
    db: Database, settings: Settings
) -> None:
    request, _ = await _asked(db, settings)
    embed = card_embed(request.card)  # type: ignore[arg-type]
    _clean(re.sub(r"\]\([^)]*\)", "]", _shown(embed.to_dict())))  # a masked link's target is not shown
    assert embed.description is not None and embed.description.count("14 March") == 1
    assert any(f.name == "Where it comes from" and "Erin Walsh" in (f.value or "") for f in embed.fields)
    view = approval_view(request.id)
    labels = [(b.item.label, b.item.style) for b in view.children]  # type: ignore[attr-defined]
    assert labels == [
        ("Approve", discord.ButtonStyle.success),
        ("Deny", discord.ButtonStyle.secondary),
        (APPROVE_ALL, discord.ButtonStyle.secondary),
    ]


async def test_the_web_card_takes_the_focus_and_styles_approve_all_as_a_plain_link_button(
    db: Database, settings: Settings
) -> None:
    request, _ = await _asked(db, settings)
    page = templates.env.get_template("_approvals.html").render(
        request=SimpleNamespace(query_params={}), approvals=[request], csrf_token="t", back="/workspace/C-general"
    )
    text = re.sub(r"<[^>]+>", " ", page)
    _clean(text)
    assert "&gt;" not in page and "\u2022" not in text and "From your messages" not in text
    assert re.search(r'<section class="box approval" id="approval-1"[^>]* tabindex="-1"[^>]* autofocus', page)
    buttons = re.findall(r'<button type="submit" name="decision" value="(\w+)" class="([^"]+)"', page)
    assert buttons == [("approve", "approve"), ("deny", "deny secondary"), ("approve_all", "approve-all tertiary")]
    assert APPROVE_ALL_MEANS in page and '<blockquote class="approval-quote">' in page


async def test_the_dm_notice_after_sharing_names_the_asker_and_carries_no_ids(
    db: Database, settings: Settings
) -> None:
    _, (h, _) = await _asked(db, settings)
    notices = [m.text for m in h.world.messages[h.world.dm(h.world.bot_id, "bob").id] if "answered" in m.text]
    assert len(notices) == 1 and notices[0].startswith("Your askwith agent answered Alice Chen's question")
    assert "14 March" in notices[0] and not IDS.search(notices[0]) and not HANDLE_PREFIX.search(notices[0])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The launch is on 14 March [alice:m0000006, m0000005].", "The launch is on 14 March."),
        ("Room 4B [m0000013]; lunch at noon [1700000000.0001]", "Room 4B; lunch at noon"),
        ("We keep [two options] open.", "We keep [two options] open."),
    ],
)
def test_without_ids_drops_every_citation_and_keeps_bracketed_words(text: str, expected: str) -> None:
    assert conversation_texts.without_ids(text) == expected
    notice = approval_texts.share_notice("Alice Chen", "When?", [text])
    assert notice.endswith(f"> {expected}") and not IDS.search(notice)
