from pathlib import Path

import pytest

from adapters.local import LocalWorkspace
from bot.errors import UnknownMemberError, WorkspaceError
from bot.platform.port import ApprovalDecision, ApprovalRequest
from bot.store.world import World


def test_world_round_trips_through_its_file(sample_world: World, tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    sample_world.save(path)
    again = World.load(path)
    assert again.to_dict() == sample_world.to_dict()
    again.save(tmp_path / "w2.json")
    assert (tmp_path / "w2.json").read_bytes() == path.read_bytes()


def test_a_new_message_never_takes_an_id_a_loaded_file_already_uses(sample_world: World, tmp_path: Path) -> None:
    channel, sender = "C-general", next(iter(sample_world.members))
    # A file whose messages use the numbered ids the next messages would otherwise be given.
    count = sample_world.message_count()
    sample_world.add_message(channel, sender, "numbered ahead", message_id=f"m{count + 2:07d}")
    sample_world.add_message(channel, sender, "numbered ahead too", message_id=f"m{count + 3:07d}")
    sample_world.save(tmp_path / "w.json")
    world = World.load(tmp_path / "w.json")
    added = [world.add_message(channel, sender, f"new {i}").id for i in range(3)]
    ids = [m.id for msgs in world.messages.values() for m in msgs]
    assert len(ids) == len(set(ids))
    assert added == [f"m{count + n:07d}" for n in (4, 5, 6)]


def test_bad_workspace_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(WorkspaceError, match="is not valid"):
        World.load(path)
    with pytest.raises(WorkspaceError, match="does not exist"):
        World.load(tmp_path / "missing.json")


async def test_history_pages_resume_from_their_cursor(sample_world: World) -> None:
    port = LocalWorkspace(sample_world)
    first = await port.read_history("C-general", limit=2)
    assert [m.text[:7] for m in first.messages] == ["Morning", "I can h"]
    assert first.has_more
    rest = await port.read_history("C-general", cursor=first.cursor, limit=10)
    assert len(rest.messages) == 1 and not rest.has_more
    nothing = await port.read_history("C-general", cursor=rest.cursor)
    assert nothing.messages == [] and nothing.cursor == rest.cursor


async def test_replies_are_read_per_thread(sample_world: World) -> None:
    port = LocalWorkspace(sample_world)
    parent = sample_world.messages["C-general"][0]
    await port.post_as("bob", "C-general", "count me in", thread_id=parent.id)
    page = await port.read_history("C-general")
    assert page.messages[0].reply_count == 1
    assert all(m.thread_id is None for m in page.messages)
    replies = await port.read_replies("C-general", parent.id)
    assert [m.text for m in replies.messages] == ["count me in"]


async def test_hidden_thread_and_dm(sample_world: World) -> None:
    port = LocalWorkspace(sample_world)
    thread = await port.create_hidden_thread("ask 1")
    await port.post(thread.channel_id, "agents talk here", thread_id=thread.thread_id)
    hidden = sample_world.channels[thread.channel_id]
    assert hidden.member_ids == (sample_world.bot_id,)
    dm = await port.open_dm("alice")
    assert set(sample_world.channels[dm].member_ids) == {"alice", sample_world.bot_id}
    with pytest.raises(UnknownMemberError):
        await port.open_dm("nobody")


async def test_approval_waits_for_a_decision_or_times_out(sample_world: World) -> None:
    import asyncio

    port = LocalWorkspace(sample_world)
    request = ApprovalRequest("ap1", "erin", "Share?", "the budget")
    assert await port.request_approval(request, timeout_s=0.01) is ApprovalDecision.TIMEOUT
    waiting = asyncio.create_task(port.request_approval(request, timeout_s=5))
    await asyncio.sleep(0)
    assert "ap1" in port.pending_approvals
    assert port.decide("ap1", ApprovalDecision.APPROVED)
    assert await waiting is ApprovalDecision.APPROVED
