from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from bot.errors import LLMUnavailableError
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.llm.types import LLMRequest
from bot.memory.sessions import SessionLine, content_hash
from bot.memory.summarizer import EXTRACTIVE_CHARS, SessionSummarizer, extractive_summary
from bot.store import models
from bot.store.db import Database


T0 = datetime(1994, 9, 22, 20, 0, tzinfo=UTC)


def lines(*pairs: tuple[str, str]) -> list[SessionLine]:
    return [SessionLine(i, sender, T0 + timedelta(minutes=i), text) for i, (sender, text) in enumerate(pairs)]


PARIS = lines(
    ("monica", "Rachel, are you really moving to Paris?"), ("rachel", "Yes, on Friday, for the Louis Vuitton job.")
)
DUCK = lines(("chandler", "We bought a duck."), ("joey", "His name is Yasmine? No, it's the chick."))


async def stored(db: Database) -> dict[str, models.SessionSummary]:
    async with db.session() as session:
        return {s.content_hash: s for s in (await session.execute(select(models.SessionSummary))).scalars()}


async def test_model_summaries_are_stored_once_per_content_hash(db: Database) -> None:
    backend = ScriptedBackend(lambda request: "Rachel tells Monica she moves to Paris on Friday.", model="m1")
    summarizer = SessionSummarizer(db, LLMClient(backend))
    assert await summarizer.ensure({content_hash(PARIS): PARIS}) == 1
    # Same content again (e.g. the other member's copy of a shared session): no second call, nothing new.
    assert await summarizer.ensure({content_hash(PARIS): PARIS}) == 0
    assert len(backend.requests) == 1
    summary = (await stored(db))[content_hash(PARIS)]
    assert (summary.text, summary.method, summary.model) == (
        "Rachel tells Monica she moves to Paris on Friday.",
        "llm",
        "m1",
    )


async def test_the_prompt_carries_the_transcript_and_asks_for_objectivity(db: Database) -> None:
    backend = ScriptedBackend(lambda request: "A summary.")
    await SessionSummarizer(db, LLMClient(backend)).ensure({content_hash(PARIS): PARIS})
    (request,) = backend.requests
    assert request.purpose == "summarize_session"
    system, user = request.messages
    assert "objective" in system["content"] and "opinions" in system["content"]
    assert "monica: Rachel, are you really moving to Paris?" in user["content"]
    assert "rachel: Yes, on Friday, for the Louis Vuitton job." in user["content"]


async def test_without_a_model_the_summary_is_extractive_and_labelled(db: Database) -> None:
    assert await SessionSummarizer(db, None).ensure({content_hash(PARIS): PARIS, content_hash(DUCK): DUCK}) == 2
    summaries = await stored(db)
    assert {s.method for s in summaries.values()} == {"extractive"}
    assert "Paris" in summaries[content_hash(PARIS)].text and "monica" in summaries[content_hash(PARIS)].text


async def test_a_failing_or_empty_model_falls_back_to_extractive(db: Database) -> None:
    def script(request: LLMRequest) -> str:
        if "Paris" in request.messages[1]["content"]:
            raise LLMUnavailableError("the endpoint kept answering 503")
        return "   "

    summarizer = SessionSummarizer(db, LLMClient(ScriptedBackend(script)))
    assert await summarizer.ensure({content_hash(PARIS): PARIS, content_hash(DUCK): DUCK}) == 2
    summaries = await stored(db)
    assert summaries[content_hash(PARIS)].method == "extractive"
    assert summaries[content_hash(DUCK)].method == "extractive"
    assert summaries[content_hash(DUCK)].text == extractive_summary(DUCK)


def test_extractive_summary_names_participants_and_keeps_informative_lines_in_order() -> None:
    chat = lines(
        ("ross", "ok"),
        ("rachel", "The museum tour with Carol starts at nine on Saturday near the dinosaur hall."),
        ("ross", "sure"),
        ("rachel", "Bring the tickets and the receipt from the gift shop."),
    )
    text = extractive_summary(chat)
    assert text.startswith("ross, rachel (4 messages):")
    assert text.index("museum tour") < text.index("gift shop")
    long_chat = lines(
        *[("ross", f"fact number {i} about the dinosaur exhibition and its opening hours") for i in range(60)]
    )
    assert len(extractive_summary(long_chat)) <= EXTRACTIVE_CHARS + 60


def test_extractive_summary_prefers_names_numbers_dates_and_decisions_over_chatter() -> None:
    chatter = "honestly I really do not understand what everybody keeps talking about around here lately"
    chat = lines(
        *[("joey", chatter + f" variant{i}") for i in range(12)],
        ("monica", "We agreed: Chandler books Room 4B for Thursday at 15:00."),
    )
    text = extractive_summary(chat, max_chars=120)  # room for one line: the informative one
    assert "Chandler books Room 4B for Thursday at 15:00" in text
