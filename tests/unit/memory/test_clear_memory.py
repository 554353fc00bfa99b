"""Clear memory on both engines: ranking, phrases, filters, context, fan-out, scoping, hostile keywords."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import delete, func, select, update

from bot.errors import MemoryQueryError, UnknownMemberError
from bot.memory.clear import ClearMemory
from bot.memory.types import ClearHit, ClearQuery, Viewer
from bot.memory.visibility import resolve_viewer
from bot.platform.port import Channel, ChannelKind, Member
from bot.store import models
from bot.store.db import Database
from bot.store.world import MemberPolicy, World
from bot.store.world_mirror import mirror_world


T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def team_world() -> World:
    """ann, ben, cat, dan; a public channel, a private one (ann+ben), DMs, a group DM. dan excludes #general."""
    world = World(id="team", name="Team")
    for handle in ("ann", "ben", "cat", "dan"):
        excluded = ["C-general"] if handle == "dan" else []
        world.add_member(Member(f"U-{handle}", handle, handle.title()), MemberPolicy(excluded_channels=excluded))
    world.add_channel(Channel("C-general", "general", ChannelKind.PUBLIC, ("U-ann", "U-ben", "U-cat", "U-dan")))
    world.add_channel(Channel("C-secret", "secret", ChannelKind.PRIVATE, ("U-ann", "U-ben")))
    world.add_channel(Channel("G-trio", "trio", ChannelKind.GROUP_DM, ("U-ann", "U-cat", "U-dan")))
    lines = [
        ("C-general", "U-ann", 0, "The budget review is at noon on Thursday"),
        ("C-general", "U-ben", 1, "Budget looks fine to me"),
        ("C-general", "U-cat", 2, "Can someone review my slides"),
        ("C-general", "U-dan", 3, "Party after the launch, everyone welcome"),
        ("C-general", "U-ann", 4, "The launch party moves to the rooftop"),
        ("C-general", "U-ben", 5, "Rooftop it is"),
        ("C-general", "U-cat", 6, "I will bring snacks"),
        ("C-secret", "U-ann", 7, "The acquisition codename is bluebird"),
        ("C-secret", "U-ben", 8, "Bluebird stays between us"),
        ("G-trio", "U-cat", 9, "Dinner at the harbour on Friday"),
        ("G-trio", "U-dan", 10, "Harbour dinner works for me"),
    ]
    for channel, sender, minute, text in lines:
        world.add_message(channel, sender, text, ts=at(minute))
    # One spoken line stored once per listener (fan-out), as FriendsTV does.
    for listener in ("U-ben", "U-cat", "U-dan"):
        world.add_message(world.dm("U-ann", listener).id, "U-ann", "The offsite hotel is booked", ts=at(20))
    world.add_message(world.dm("U-ann", "U-ben").id, "U-ben", "Great, which hotel?", ts=at(21))
    return world


@pytest.fixture
async def team(db: Database) -> tuple[ClearMemory, dict[str, Viewer]]:
    workspace_id = await mirror_world(db, team_world())
    async with db.session() as session:
        viewers = {h: await resolve_viewer(session, workspace_id, h) for h in ("ann", "ben", "cat", "dan")}
    return ClearMemory(db), viewers


def texts(hits: list[ClearHit]) -> list[str]:
    return [hit.message.text for hit in hits]


# ---------------------------------------------------------------------- ranking and phrases
async def test_more_matching_keywords_rank_higher(team: tuple[ClearMemory, dict[str, Viewer]]) -> None:
    memory, who = team
    hits = await memory.search(who["ann"], ClearQuery(keywords=("budget", "review")))
    assert texts(hits)[0] == "The budget review is at noon on Thursday"
    assert set(texts(hits)[1:]) == {"Budget looks fine to me", "Can someone review my slides"}
    assert hits[0].score > hits[1].score >= hits[2].score > 0


async def test_a_line_holding_more_keywords_outranks_a_short_one_holding_a_rarer(db: Database) -> None:
    """The engines' ranks favour a one-word line holding a rare keyword; the line holding most of the question
    comes first all the same (coordination)."""
    world = World(id="talk", name="Talk")
    for handle in ("ann", "ben"):
        world.add_member(Member(f"U-{handle}", handle, handle.title()), MemberPolicy())
    world.add_channel(Channel("C-talk", "talk", ChannelKind.PUBLIC, ("U-ann", "U-ben")))
    answer = (
        "hi mindy, i saw barry today. if you two end up getting married and having kids, i just hope they have "
        "his old hairline and your old nose, honestly, because that would be something to see"
    )
    lines = ["mindy.", "mindy?!", answer, *(f"barry said thing number {n} about the weather" for n in range(30))]
    for minute, text in enumerate(lines):
        world.add_message("C-talk", "U-ben", text, ts=at(minute))
    workspace_id = await mirror_world(db, world)
    async with db.session() as session:
        ann = await resolve_viewer(session, workspace_id, "ann")
    hits = await ClearMemory(db).search(ann, ClearQuery(keywords=("might", "barry", "mindy", "end", "up"), limit=3))
    assert texts(hits)[0] == answer
    assert set(texts(hits)[1:]) == {"mindy.", "mindy?!"}  # two keywords' worth beats a rarer one's alone


async def test_a_phrase_matches_only_whole(team: tuple[ClearMemory, dict[str, Viewer]]) -> None:
    memory, who = team
    phrase = await memory.search(who["ann"], ClearQuery(keywords=("launch party",)))
    assert texts(phrase) == ["The launch party moves to the rooftop"]
    words = await memory.search(who["ann"], ClearQuery(keywords=("launch", "party")))
    assert len(words) == 2


async def test_stemming_finds_other_word_forms(team: tuple[ClearMemory, dict[str, Viewer]]) -> None:
    memory, who = team
    assert texts(await memory.search(who["ann"], ClearQuery(keywords=("reviews",)))) != []


async def test_limit_caps_the_hits(team: tuple[ClearMemory, dict[str, Viewer]]) -> None:
    memory, who = team
    assert len(await memory.search(who["ann"], ClearQuery(keywords=("budget", "review"), limit=1))) == 1


# ---------------------------------------------------------------------- filters
async def test_sender_filter_takes_a_handle_or_a_platform_id(team: tuple[ClearMemory, dict[str, Viewer]]) -> None:
    memory, who = team
    for sender in ("ben", "@ben", "U-ben"):
        hits = await memory.search(who["ann"], ClearQuery(keywords=("budget", "rooftop"), sender=sender))
        assert {h.message.sender for h in hits} == {"ben"} and len(hits) == 2
    assert await memory.search(who["ann"], ClearQuery(keywords=("budget",), sender="nobody")) == []


async def test_channel_filter_takes_a_name_or_a_platform_id(team: tuple[ClearMemory, dict[str, Viewer]]) -> None:
    memory, who = team
    for channel in ("secret", "#secret", "C-secret"):
        hits = await memory.search(who["ann"], ClearQuery(keywords=("bluebird", "budget"), channel=channel))
        assert {h.message.channel_name for h in hits} == {"secret"} and len(hits) == 2


async def test_time_range_is_inclusive(team: tuple[ClearMemory, dict[str, Viewer]]) -> None:
    memory, who = team
    query = ClearQuery(keywords=("budget", "review", "rooftop"), since=at(1), until=at(4))
    assert set(texts(await memory.search(who["ann"], query))) == {
        "Budget looks fine to me",
        "Can someone review my slides",
        "The launch party moves to the rooftop",
    }
    # A time in another zone means the same instant.
    local = at(5).astimezone(datetime.now().astimezone().tzinfo)
    assert texts(await memory.search(who["ann"], ClearQuery(keywords=("rooftop",), since=local))) == ["Rooftop it is"]


# ---------------------------------------------------------------------- context and fan-out
async def test_context_window_is_the_channel_neighbourhood_in_order(
    team: tuple[ClearMemory, dict[str, Viewer]],
) -> None:
    memory, who = team
    [hit] = await memory.search(who["ann"], ClearQuery(keywords=("snacks",), context_window=2))
    assert [m.text for m in hit.context] == [
        "The launch party moves to the rooftop",
        "Rooftop it is",
        hit.message.text,
    ]
    [hit] = await memory.search(who["ann"], ClearQuery(keywords=("noon",), context_window=1))
    assert [m.ts for m in hit.context] == [at(0), at(1)]
    [hit] = await memory.search(who["ann"], ClearQuery(keywords=("noon",)))
    assert hit.context == ()


async def test_fan_out_copies_collapse_into_one_hit(team: tuple[ClearMemory, dict[str, Viewer]]) -> None:
    memory, who = team
    [hit] = await memory.search(who["ann"], ClearQuery(keywords=("hotel",), sender="ann"))
    assert hit.duplicates == 2
    [hit] = await memory.search(who["cat"], ClearQuery(keywords=("hotel",)))
    assert hit.duplicates == 0 and hit.message.channel_name == "U-ann-U-cat"


async def test_message_views_carry_platform_ids_and_names(team: tuple[ClearMemory, dict[str, Viewer]]) -> None:
    memory, who = team
    [hit] = await memory.search(who["ben"], ClearQuery(keywords=("bluebird",), sender="ann"))
    view = hit.message
    assert (view.channel_id, view.channel_name, view.sender) == ("C-secret", "secret", "ann")
    assert view.id.startswith("m") and view.ts == at(7) and view.ts.tzinfo is not None


# ---------------------------------------------------------------------- scoping
async def test_a_viewer_never_sees_channels_they_are_not_in(team: tuple[ClearMemory, dict[str, Viewer]]) -> None:
    memory, who = team
    assert await memory.search(who["cat"], ClearQuery(keywords=("bluebird", "acquisition"))) == []
    assert await memory.search(who["ben"], ClearQuery(keywords=("harbour", "dinner"))) == []
    hits = await memory.search(who["cat"], ClearQuery(keywords=("hotel", "great")))
    assert texts(hits) == ["The offsite hotel is booked"]  # ben's reply lives in ann and ben's DM


async def test_an_excluded_channel_never_appears_not_even_as_context(
    team: tuple[ClearMemory, dict[str, Viewer]],
) -> None:
    memory, who = team
    assert await memory.search(who["dan"], ClearQuery(keywords=("budget", "rooftop", "launch"))) == []
    hits = await memory.search(who["dan"], ClearQuery(keywords=("harbour", "hotel"), context_window=20))
    seen = {m.channel_id for hit in hits for m in (hit.message, *hit.context)}
    assert seen == {"G-trio", "D-U-ann-U-dan"}


async def test_hostile_keywords_are_plain_words(team: tuple[ClearMemory, dict[str, Viewer]], db: Database) -> None:
    memory, who = team
    hostile = (
        '" OR 1=1 --',
        "'); DROP TABLE message; --",
        "NEAR(budget rooftop)",
        "text:bluebird",
        "-budget",
        "budget*",
        '"unbalanced',
        "(rooftop OR",
        "AND",
        "^snacks",
    )
    for keyword in hostile:
        await memory.search(who["ann"], ClearQuery(keywords=(keyword,)))
    hits = await memory.search(who["cat"], ClearQuery(keywords=("text:bluebird", "-budget", "rooftop)*")))
    assert "bluebird" not in " ".join(texts(hits)).lower()  # cat cannot see #secret, whatever the syntax
    assert {"Budget looks fine to me", "Rooftop it is"} <= set(texts(hits))
    async with db.session() as session:
        assert (await session.execute(select(func.count()).select_from(models.Message))).scalar_one() == 15


# ---------------------------------------------------------------------- malformed queries
async def test_blank_keywords_are_an_error_and_stop_words_find_nothing(
    team: tuple[ClearMemory, dict[str, Viewer]],
) -> None:
    memory, who = team
    for blank in ((), ("",), ("  ", "?!"), "budget"):
        with pytest.raises(MemoryQueryError):
            await memory.search(who["ann"], ClearQuery(keywords=blank))  # type: ignore[arg-type]
    assert await memory.search(who["ann"], ClearQuery(keywords=("the", "is"))) == []


async def test_out_of_range_parameters_are_an_error(team: tuple[ClearMemory, dict[str, Viewer]]) -> None:
    memory, who = team
    for bad in ({"limit": 0}, {"limit": 1000}, {"context_window": -1}, {"context_window": 99}):
        with pytest.raises(MemoryQueryError):
            await memory.search(who["ann"], ClearQuery(keywords=("budget",), **bad))


async def test_the_index_follows_edits_and_deletions(
    team: tuple[ClearMemory, dict[str, Viewer]], db: Database
) -> None:
    memory, who = team
    async with db.session() as session, session.begin():
        edited = models.Message.text == "I will bring snacks"
        await session.execute(update(models.Message).where(edited).values(text="I will bring lemonade"))
        await session.execute(delete(models.Message).where(models.Message.text == "Rooftop it is"))
    assert await memory.search(who["ann"], ClearQuery(keywords=("snacks",))) == []
    assert texts(await memory.search(who["ann"], ClearQuery(keywords=("lemonade",)))) == ["I will bring lemonade"]
    assert texts(await memory.search(who["ann"], ClearQuery(keywords=("rooftop",)))) == [
        "The launch party moves to the rooftop"
    ]


async def test_an_unknown_viewer_is_an_error(db: Database) -> None:
    workspace_id = await mirror_world(db, team_world())
    async with db.session() as session:
        with pytest.raises(UnknownMemberError, match="zed"):
            await resolve_viewer(session, workspace_id, "@zed")
        assert (await resolve_viewer(session, workspace_id, "U-ann")).name == "ann"
