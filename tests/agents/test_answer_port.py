"""The answer port: the core hands an ask's one final post to `ChatPort.post_answer` with the answer as its requester
sees it, so a platform renders it without reading the text back (no pattern matched on what the core wrote)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event

from bot.asks.service import AskRequest
from bot.platform.port import FinalAnswer
from bot.settings import Settings
from bot.store.db import Database
from tests.fakes.asks import QUESTION, build, two_fact_world


async def test_the_final_post_reaches_the_port_with_the_requesters_answer_view(
    db: Database, settings: Settings
) -> None:
    h = await build(db, two_fact_world(), settings=settings)
    answers: list[tuple[str, FinalAnswer]] = []
    post_answer = h.port.post_answer

    async def recording(channel_id: str, answer: FinalAnswer, *, thread_id: str | None = None) -> str:
        answers.append((channel_id, answer))
        return await post_answer(channel_id, answer, thread_id=thread_id)

    h.port.post_answer = recording  # type: ignore[method-assign]
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    [(channel_id, answer)] = answers
    assert channel_id == await h.port.open_dm("alice")
    assert answer.ask_id == outcome.ask_id and answer.requester_id == "alice" and not answer.in_conversation
    assert answer.view is not None and answer.view.ask_id == outcome.ask_id
    assert answer.view.status == outcome.status and answer.view.answer == outcome.answer  # finished, as it ended
    assert answer.text == outcome.final_text and answer.view.final_text == outcome.final_text


async def test_a_cancelled_ask_hands_its_ending_to_the_port_too(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(), settings=settings)
    answers: list[FinalAnswer] = []
    post_answer = h.port.post_answer

    async def recording(channel_id: str, answer: FinalAnswer, *, thread_id: str | None = None) -> str:
        answers.append(answer)
        return await post_answer(channel_id, answer, thread_id=thread_id)

    h.port.post_answer = recording  # type: ignore[method-assign]
    ask_id = await h.service.submit(AskRequest("alice", ["bob"], QUESTION))
    await h.service.cancel(ask_id, by="alice")
    assert [a.ask_id for a in answers] == [ask_id]
    assert answers[0].view is not None and answers[0].view.status == "cancelled"


async def test_the_final_post_reads_the_ending_and_the_ask_once_and_names_from_the_services_roster(
    db: Database, settings: Settings
) -> None:
    h = await build(db, two_fact_world(), settings=settings)
    statements: list[tuple[str, str]] = []  # (where: "view" or "ask", the SQL)
    where = ["ask"]

    def note(conn: Any, cursor: Any, statement: str, params: Any, context: Any, executemany: bool) -> None:  # noqa: ANN401
        statements.append((where[0], " ".join(statement.split())))

    final_view = h.service.final_view

    async def viewing(*args: Any, **kwargs: Any) -> Any:  # noqa: ANN401 - the view or None
        where[0] = "view"
        try:
            return await final_view(*args, **kwargs)
        finally:
            where[0] = "ask"

    h.service.final_view = viewing  # type: ignore[method-assign]
    event.listen(db.engine.sync_engine, "before_cursor_execute", note)
    try:
        outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    finally:
        event.remove(db.engine.sync_engine, "before_cursor_execute", note)

    assert outcome.status == "done", outcome.final_text
    contributors = (await h.service.answer_view(outcome.ask_id, viewer="alice")).contributors
    assert "bob" in {c.handle for c in contributors}  # the view names Bob: it needs his display name
    # The ending (the consensus row's word on support) is read once; the view is built with the service's roster,
    # whose names were read during the ask: only the viewer's own profile is read afresh there.
    assert sum(sql.startswith("SELECT consensus.") for _, sql in statements) == 1
    member_reads = [sql for at, sql in statements if at == "view" and sql.startswith("SELECT member.id")]
    assert len(member_reads) == 1
    # Once its end is saved, the ask's record is read once, for the notices, its status and the view alike: its row
    # is read twice in all (as it starts, then with that record), its conversations twice (for any saved turns to
    # resume, none here, then with that record), its turns once.
    assert sum(sql.startswith("SELECT ask.") for _, sql in statements) == 2
    assert sum(sql.startswith("SELECT conversation.") for _, sql in statements) == 2
    assert sum(sql.startswith("SELECT turn.") for _, sql in statements) == 1
    assert not [sql for at, sql in statements if at == "view" and sql.startswith(("SELECT ask.", "SELECT turn."))]
