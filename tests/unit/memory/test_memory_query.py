"""The one query reader (`read_query`) on tricky input, and typed searches that can never fail on their text."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.memory import query as query_module
from bot.memory.clear import ClearMemory
from bot.memory.keywords import MAX_KEYWORDS, STOP_WORDS, phrase_of
from bot.memory.query import MAX_QUERY_TERMS, question_parts, read_query, search_typed
from bot.memory.visibility import resolve_viewer
from bot.store.db import Database
from bot.store.world import World
from bot.store.world_mirror import mirror_world


NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)  # a Monday
TRICKY = [
    "what's Bob's plan?",
    "don't",
    '"unbalanced quote',
    "'single",
    '""',
    "rock'n'roll",
    "🎉🚀 launch 🎉",
    "מה קרה עם התקציב?",
    "ما هي الميزانية",
    'NEAR(press kit) OR text:* AND -firmware "a" + ^b',
    "'); DROP TABLE message; --",
    "\x00\x1f\u200b\u202e",
    "   ",
    "",
    "x" * 10_000,
    "%_\\",
]


def test_possessives_contractions_and_hyphens_read_as_the_index_reads_them() -> None:
    read = read_query("What is John's transgender-specific plan? I don't know")
    assert read.keywords == ("john", "transgender", "specific", "plan", "know")


def test_quoted_phrases_stay_whole_and_come_first() -> None:
    read = read_query('who owns the "press kit" for the launch?')
    assert read.keywords == ("press kit", "owns", "launch")


def test_stop_words_go_before_the_cap() -> None:
    read = read_query("what did she say to her about it up there " * 5 + "rehearsal room")
    assert read.keywords == ("say", "rehearsal", "room")
    many = read_query(" ".join(f"word{i}" for i in range(100)))
    assert len(many.keywords) == MAX_QUERY_TERMS <= MAX_KEYWORDS
    assert not any(k in STOP_WORDS for k in many.keywords)


def test_participants_names_are_not_searched_unless_nothing_else_is_left() -> None:
    read = read_query("When is Bob free, Alice?", participants=["alice", "Alice Chen", "bob", "Bob Okafor"])
    assert (read.keywords, read.names) == (("free",), ("bob", "alice"))
    assert read_query("Bob?", participants=["bob"]).keywords == ("bob",)
    assert read_query("what did Monica steal?", participants=["rachel"]).keywords == ("monica", "steal")


@pytest.mark.parametrize(
    ("question", "since", "until"),
    [
        ("what happened yesterday?", datetime(2026, 11, 22), datetime(2026, 11, 23)),
        ("anything decided last Tuesday?", datetime(2026, 11, 17), datetime(2026, 11, 18)),
        ("what did she do on 8 May?", datetime(2026, 5, 8), datetime(2026, 5, 9)),
        ("what did we decide in March", datetime(2026, 3, 1), datetime(2026, 4, 1)),
        ("who was off last week", datetime(2026, 11, 16), datetime(2026, 11, 23)),
    ],
)
def test_dates_become_a_span_in_the_workspace_time_zone(question: str, since: datetime, until: datetime) -> None:
    read = read_query(question, now=NOW, tz="UTC")
    assert read.since == since.replace(tzinfo=UTC)
    assert read.until is not None and abs((read.until - until.replace(tzinfo=UTC)).total_seconds()) < 1e-3
    # The same words in Paris: the day starts an hour earlier in UTC (CET in winter, CEST in May).
    paris = read_query(question, now=NOW, tz="Europe/Paris")
    assert paris.since is not None and paris.since < read.since


def test_words_that_only_look_like_dates_are_words() -> None:
    for text in ("may I ask what we said", "we march on", "a second opinion"):
        assert (read_query(text, now=NOW).since, read_query(text, now=NOW).until) == (None, None)
    assert read_query("When is Bob free on Thursday?", now=NOW).keywords == ("bob", "free", "thursday")


def test_an_unknown_time_zone_falls_back_to_utc() -> None:
    assert read_query("yesterday", now=NOW, tz="Mars/Olympus").since == datetime(2026, 11, 22, tzinfo=UTC)


@pytest.mark.parametrize("text", TRICKY)
def test_tricky_text_is_read_without_error(text: str) -> None:
    read = read_query(text, participants=["bob"], now=NOW)
    assert all(phrase_of(k) for k in read.keywords)  # every keyword holds index words only


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_read_without_error(text: str) -> None:
    read_query(text, participants=["ann", "Ann Lee"], now=NOW)


async def test_typed_searches_never_fail_and_stay_in_scope(db: Database, sample_world: World) -> None:
    workspace_id = await mirror_world(db, sample_world)
    async with db.session() as session:
        erin = await resolve_viewer(session, workspace_id, "erin")
        bob = await resolve_viewer(session, workspace_id, "bob")
    memory = ClearMemory(db)
    for text in TRICKY:
        assert isinstance(await search_typed(memory, bob, read_query(text, now=NOW)), list)
    hits = await search_typed(memory, bob, read_query("When's Bob's dentist appointment?", participants=["bob"]))
    assert hits[0].message.text.startswith("Thursday I'm at the dentist")
    # Neighbours by default: the question before it (it is the last line of the DM).
    assert [m.id for m in hits[0].context] == ["m0000007", "m0000008"]
    assert await search_typed(memory, erin, read_query("dentist")) == []


async def test_a_read_date_ranks_its_span_first_and_others_follow(db: Database, sample_world: World) -> None:
    workspace_id = await mirror_world(db, sample_world)
    async with db.session() as session:
        alice = await resolve_viewer(session, workspace_id, "alice")
    memory = ClearMemory(db)
    # The sample's messages are from Monday 16 November 2026; asked on Tuesday the 17th, "yesterday" is that day.
    asked = datetime(2026, 11, 17, 9, 0, tzinfo=UTC)
    dated = await search_typed(memory, alice, read_query("rehearsal yesterday", now=asked), context_window=0)
    assert dated and all(h.message.ts.date().day == 16 for h in dated)
    # A date with nothing in its span still finds the best others.
    later = await search_typed(memory, alice, read_query("rehearsal on 8 May", now=asked), context_window=0)
    assert {h.message.id for h in later} == {h.message.id for h in dated}


def test_agents_keywords_lose_stop_words_before_their_cap() -> None:
    from bot.agents.memory_tools import MAX_KEYWORDS as AGENT_CAP
    from bot.agents.memory_tools import parse_clear

    params = parse_clear({"keywords": ["what", "her", "up", "the", "🎉"] * 4 + ["rehearsal", "Bob's room"]})
    assert params.keywords == ("rehearsal", "Bob's room")
    assert len(parse_clear({"keywords": [f"w{i}" for i in range(50)]}).keywords) == AGENT_CAP


def test_each_question_of_a_text_is_read_on_its_own_and_lead_ins_are_not_questions() -> None:
    text = (
        "Two things were said in one scene, and the answer needs both. First: when is the offsite? "
        "Second: who owns the press kit? Reply with both answers."
    )
    parts = read_query(text).parts
    assert [p.text for p in parts] == ["First: when is the offsite?", "Second: who owns the press kit?"]
    assert parts[1].keywords == ("second", "owns", "press", "kit")
    assert read_query("When is the offsite? Please answer briefly.").parts == (), "one question: no parts"
    assert question_parts("?? ?") == []


def test_each_question_keeps_its_own_dates_read_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    passes = []
    parsed = query_module._parsed_dates
    monkeypatch.setattr(query_module, "_parsed_dates", lambda *args: passes.append(args) or parsed(*args))
    read = read_query("What did Bob say yesterday? And who booked the room last week?", now=NOW)
    first, second = read.parts
    assert len(passes) == 1, "the whole text is read for dates once, not once more per question"
    assert (first.since, first.dates) == (datetime(2026, 11, 22, tzinfo=UTC), ("yesterday",))
    assert (second.since, second.dates) == (datetime(2026, 11, 16, tzinfo=UTC), ("last week",))
    assert "yesterday" not in first.keywords and "week" not in second.keywords
    assert (read.since, read.until) == (second.since, first.until), "the whole text: the span covering both"
