"""The answer flow every chat platform shares (`bot.asks.answer_post`), over a recording platform: the status
message becomes the answer, a new message when it cannot, the asker's quotes by DM where others read it, nothing
posted for an answer that cannot be read, and a refused place left to the platform."""

from __future__ import annotations

import pytest

from bot.asks.answer_post import RichAnswerPost
from bot.asks.read_models.answer_view import AnswerView, ClaimView, SourceView
from bot.errors import ChatPlatformError, PlatformAccessError
from bot.platform.port import FinalAnswer


QUOTED = SourceView("U2", "Bob", False, "the launch is on Friday", "launch", "Bob", "2026-11-20 10:00")


def final(*, quotes: bool = False, readable: bool = True) -> FinalAnswer:
    claims = [ClaimView("Friday", [QUOTED])] if quotes else []
    view = AnswerView(7, "done", "When is the launch?", "alice", "Friday.", None, claims=claims)
    return FinalAnswer(7, "Friday.\n(transcript)", "U1", True, view if readable else None)


class RecordingPosts(RichAnswerPost[str, str, str]):
    """A platform whose status messages take the answer unless named "gone"; it records every call."""

    def __init__(self, *, refuse_place: bool = False, refuse_dm: bool = False) -> None:
        super().__init__()
        self.calls: list[tuple[str, ...]] = []
        self.refuse_place = refuse_place
        self.refuse_dm = refuse_dm

    async def render(self, answer: FinalAnswer, *, shared: bool) -> str:
        return f"answer #{answer.ask_id} ({'shared' if shared else 'private'})"

    async def into_status(self, status: str, rendered: str) -> str | None:
        self.calls.append(("into_status", status, rendered))
        return None if status == "gone" else status

    async def post_new(self, place: str, rendered: str) -> str:
        if self.refuse_place:
            raise PlatformAccessError("chat.postMessage", "not_in_channel")
        self.calls.append(("post_new", place, rendered))
        return "new"

    async def send_quotes(self, answer: FinalAnswer, rendered: str) -> None:
        if self.refuse_dm:
            raise ChatPlatformError("conversations.open", "DMs closed")
        self.calls.append(("quotes", answer.requester_id))

    async def release(self, status: str | None) -> None:
        self.calls.append(("release", str(status)))


async def test_the_status_message_becomes_the_answer() -> None:
    posts = RecordingPosts()
    posts.expect(7, "status-1")
    assert await posts.deliver(final(), "C1", shared=True) == "status-1"
    assert posts.calls == [("into_status", "status-1", "answer #7 (shared)")]
    assert posts.statuses == {}  # taken once: a second post of the same ask is a new message
    assert await posts.deliver(final(), "C1", shared=True) == "new"


async def test_a_status_message_that_cannot_take_it_leaves_a_new_message() -> None:
    posts = RecordingPosts()
    posts.expect(7, "gone")
    assert await posts.deliver(final(), "C1", shared=False) == "new"
    assert posts.calls[-1] == ("post_new", "C1", "answer #7 (private)")


async def test_quotes_go_to_the_asker_only_where_others_read_the_answer() -> None:
    shared, private = RecordingPosts(), RecordingPosts()
    await shared.deliver(final(quotes=True), "C1", shared=True)
    await private.deliver(final(quotes=True), "D1", shared=False)
    assert ("quotes", "U1") in shared.calls and ("quotes", "U1") not in private.calls


async def test_quotes_that_cannot_be_sent_do_not_undo_the_answer() -> None:
    posts = RecordingPosts(refuse_dm=True)
    assert await posts.deliver(final(quotes=True), "C1", shared=True) == "new"


async def test_an_answer_that_cannot_be_read_posts_nothing_and_releases_its_status() -> None:
    posts = RecordingPosts()
    posts.expect(7, "status-1")
    assert await posts.deliver(final(readable=False), "C1", shared=True) is None
    assert posts.calls == [("release", "status-1")]


async def test_a_refused_place_propagates_unless_the_platform_handles_it() -> None:
    with pytest.raises(PlatformAccessError):
        await RecordingPosts(refuse_place=True).deliver(final(), "C1", shared=True)

    class ByDM(RecordingPosts):
        async def refused(self, answer: FinalAnswer, exc: Exception) -> str:
            return f"dm:{answer.requester_id}"

    assert await ByDM(refuse_place=True).deliver(final(), "C1", shared=True) == "dm:U1"
