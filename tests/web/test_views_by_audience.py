"""What anyone but a member reads of their agent is what its outbox let out to them: pages, their JSON, the posted
answer, "What the agents tried" and the waiting notice, rendered for a member brought in, the requester and the
channel."""

from __future__ import annotations

import asyncio
import json
import re

from bot.asks.progress import Stage, read_progress
from bot.asks.read_models.answer_view import answer_view
from bot.asks.read_models.ask_summaries import asks_of_member
from bot.asks.read_models.jsonable import jsonable
from bot.asks.read_models.live_ask import load_ask_row, load_live_ask, waiting_approvals
from bot.asks.read_models.transcript_page import load_transcript, transcript_json
from bot.asks.service import AskRequest
from bot.base.text_fold import skeleton
from bot.consent.outbox import AGENTS_THREAD
from bot.llm.standin.model import scripted_model
from bot.llm.types import LLMRequest
from bot.platform.port import ApprovalDecision, ApprovalRequest, SharePolicy
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import MemberPolicy
from bot.texts import progress_texts
from bot.web import texts
from bot.web.render import templates
from tests.fakes.asks import LAUNCH, QUESTION, build, two_fact_world


ASK_BOB = {"bob": MemberPolicy(share=SharePolicy.ASK)}
KEYWORD = "zebracorn"  # a word only bob's own search uses, and a line of his memory holds


def _bob_brings_in_carol_first():  # noqa: ANN202
    """The scripted model, except that bob's agent brings in carol's on its first think (before it has read anything
    of its own memory, so nothing it says to carol rests on it)."""
    thought = [0]

    def script(request: LLMRequest) -> str:
        text = scripted_model(request)
        if request.purpose == "think" and "YOU ARE: bob's agent" in request.messages[1]["content"]:
            thought[0] += 1
            if thought[0] == 1:
                data = json.loads(text)
                data["recruit"] = [{"member": "carol", "question": "Anything about the project?"}]
                text = json.dumps(data)
        return text

    return script


def _sentences(request: ApprovalRequest) -> list[str]:
    """The sentences of the text an approval prompt quoted (its card's quote)."""
    assert request.card is not None
    return [skeleton(s) for s in re.split(r"[.!?;\n]+", request.card.quote) if len(s.split()) >= 3]


def _people(request: ApprovalRequest) -> set[str]:
    """The members an approval prompt named as its audience (the agents' thread's admins aside)."""
    return {p.strip() for p in request.context.get("audience", "").split(",")} - {AGENTS_THREAD, ""}


def _pages(view, answer, live) -> str:  # noqa: ANN001
    """Everything the web shows of an ask to one viewer: the transcript page and its JSON, the answer as the ask page
    renders it and the ask page's JSON."""
    page = templates.get_template("transcript.html").render(t=view, identity=None, request=None)
    ask_html = templates.get_template("_answer.html").render(ask=live, csrf_token="", request=None)
    return "\n".join([page, json.dumps(transcript_json(view)), ask_html, json.dumps(jsonable(live)), str(answer)])


async def test_what_bob_approved_for_alice_and_dave_never_renders_for_carol(db: Database, settings: Settings) -> None:
    asked: list[ApprovalRequest] = []

    async def bob_approves(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.APPROVED

    world = two_fact_world(policies=ASK_BOB)
    h = await build(db, world, settings=settings, script=_bob_brings_in_carol_first(), approvals=bob_approves)

    outcome = await h.service.ask(AskRequest("alice", ["bob", "dave"], QUESTION))

    assert outcome.status == "done" and "14 March" in outcome.answer
    to_carol = {s for r in asked if "carol" in r.context.get("audience", "") for s in _sentences(r)}
    only_alice_and_dave = [
        s for r in asked if _people(r) == {"alice", "dave"} for s in _sentences(r) if s not in to_carol
    ]
    assert any("14 march" in s for s in only_alice_and_dave), [r.context for r in asked]
    ask = await load_ask_row(db, outcome.ask_id)
    assert ask is not None and "carol" in {p for c in (await load_transcript(db, ask.id, viewer="carol")).conversations
                                           for t in c.turns for s in t.subs for p in s.participants}  # fmt: skip

    for viewer, reads in (("carol", False), ("alice", True), ("dave", True)):
        view = await load_transcript(db, ask.id, viewer=viewer)
        answer = await answer_view(db, ask.id, viewer=viewer, settings=settings)
        live = await load_live_ask(db, settings, h.port, ask, viewer=viewer)
        shown = skeleton(_pages(view, answer, live))
        leaked = [s for s in only_alice_and_dave if s in shown]
        assert bool(leaked) == reads, (viewer, leaked)
        assert ("14 march" in shown) == reads, viewer
    carol = await answer_view(db, ask.id, viewer="carol", settings=settings)
    assert carol.answer is None and not carol.readable and not carol.claims
    [listed] = await asks_of_member(db, ask.workspace_id, "carol")  # "My conversations"
    assert listed.id == ask.id and listed.answer is None
    assert (await asks_of_member(db, ask.workspace_id, "alice"))[0].answer == outcome.answer
    assert not any(c.shared for c in carol.contributors if c.handle == "bob")


async def test_a_colleagues_searches_reach_others_as_that_it_searched(db: Database, settings: Settings) -> None:
    """Bob's agent searches for a word of the requester's choosing: neither the word nor how much it found reaches
    her (an oracle of what his memory holds), nor the post that answers her."""

    def script(request: LLMRequest) -> str:
        text = scripted_model(request)
        if request.purpose == "consensus":  # an answer no message supports: "What the agents tried" is posted
            claims = [{"text": "March", "sources": []}]
            return json.dumps({"answer": "Perhaps in March.", "cited": [], "claims": claims})
        prompt = request.messages[1]["content"] if len(request.messages) > 1 else ""
        if request.purpose == "think" and "YOU ARE: bob's agent" in prompt:
            data = json.loads(text)
            data["clear"] = [*data.get("clear", []), {"keywords": [KEYWORD], "limit": 5}]
            text = json.dumps(data)
        return text

    world = two_fact_world()
    world.add_message(world.dm("bob", "erin").id, "erin", f"The {KEYWORD} arrives on Monday.")
    h = await build(db, world, settings=settings, script=script)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert outcome.status == "unsupported" and "What the agents tried:" in outcome.final_text
    bob_view = await load_transcript(db, outcome.ask_id, viewer="bob")
    own = [q for c in bob_view.conversations for t in c.turns if t.agent == "bob" for q in t.queries]
    assert any(KEYWORD in str(q.params) and q.hits.total >= 1 for q in own)  # his own: in full
    assert "bob's agent searched bob's messages" in outcome.final_text
    assert KEYWORD not in outcome.final_text and " results" not in outcome.final_text  # the post, wherever it goes

    ask = await load_ask_row(db, outcome.ask_id)
    assert ask is not None
    view = await load_transcript(db, ask.id, viewer="alice")
    answer = await answer_view(db, ask.id, viewer="alice", settings=settings)
    live = await load_live_ask(db, settings, h.port, ask, viewer="alice")
    shown = _pages(view, answer, live)
    assert KEYWORD not in shown and "messages from Bob" not in shown
    assert "bob's agent searched" in " ".join(answer.tried)
    assert any(t.startswith("alice's agent: clear") for t in answer.tried)  # her own agent's: hers in full
    bob_turns = [t for c in view.conversations for t in c.turns if t.agent == "bob"]
    assert bob_turns and all(t.queries == [] and t.plan == [] for t in bob_turns)
    shared = answer.for_shared_place()  # as adapters post it in a channel: nobody's words or counts
    assert shared.tried and all(t.endswith("messages") and " results" not in t for t in shared.tried)


async def test_the_waiting_notice_says_whose_agent_it_waits_for_not_why(db: Database, settings: Settings) -> None:
    notices: list[str] = []
    holder: list = []

    async def bob_looks_first(request: ApprovalRequest) -> ApprovalDecision:
        ask = await load_ask_row(db, 1)
        deadline = asyncio.get_running_loop().time() + 10
        while (progress := await read_progress(db, 1)) is not None and progress.stage is not Stage.WAITING:
            assert asyncio.get_running_loop().time() < deadline, "the ask never said it waits"
            await asyncio.sleep(0.05)  # the stage is stored by its own task
        assert ask is not None and progress is not None
        notices.append(progress.text)
        notices.extend(texts.waiting_for(w.name, w.deadline) for w in await waiting_approvals(db, ask))
        holder.append(request)
        return ApprovalDecision.DENIED

    h = await build(db, two_fact_world(policies=ASK_BOB), settings=settings, approvals=bob_looks_first)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert outcome.ask_id == 1 and holder and notices
    assert any("Bob" in n for n in notices), notices
    for notice in notices:  # what bob was asked, and that he was asked to share anything, are his
        assert not any(word in notice.lower() for word in ("approve", "share", "14 march", "launch")), notice
    assert "approve" not in progress_texts.progress_stage("waiting", "")
    assert LAUNCH not in (outcome.final_text or "")
