"""A trade's Accept / Decline reaches the negotiation whichever process hears the click.

The negotiation runs on one process (its port holds the prompts); the click arrives at another one: an empty
registry (it posted nothing) and the same database, as a second `serve` behind the same address would be.
"""

from __future__ import annotations

import asyncio
import time

from adapters.local import LocalWorkspace
from bot.asks.forget import count_workspace_rows, forget_workspace
from bot.consent.pending import ApprovalRegistry, ApprovalStore, Click, decide_click
from bot.negotiation.members import MemberNegotiation, MemberNegotiationOutcome
from bot.negotiation.record import ConfirmationStatus, NegotiationRecorder
from bot.platform.port import ApprovalDecision, ApprovalRequest
from bot.store.db import Database
from bot.store.world import World
from tests.negotiation_helpers import holdings, load_sample_profiles, scripted_negotiators


async def _prompts(port: LocalWorkspace, task: asyncio.Task[MemberNegotiationOutcome]) -> list[ApprovalRequest]:
    """Both members' prompts, once the negotiation has agreed and posted them."""
    deadline = time.monotonic() + 30
    while len(port.pending_approvals) < 2:
        assert not task.done(), task.result()
        assert time.monotonic() < deadline, "the trade was never put to the members"
        await asyncio.sleep(0.02)
    return sorted(port.pending_approvals.values(), key=lambda request: request.member_id)


async def _negotiation(db: Database, world: World) -> tuple[LocalWorkspace, asyncio.Task[MemberNegotiationOutcome]]:
    port = LocalWorkspace(world)  # no responder: a prompt waits for a click
    await load_sample_profiles(db, port)
    flow = MemberNegotiation(db, port, scripted_negotiators, approval_timeout_s=60, poll_s=0.05)
    return port, asyncio.create_task(flow.negotiate("alice", "bob"))


async def test_clicks_heard_by_another_process_confirm_the_trade(db: Database, sample_world: World) -> None:
    port, task = await _negotiation(db, sample_world)
    before = await holdings(db, port, "alice", "bob")
    elsewhere, store = ApprovalRegistry(), ApprovalStore(db)
    for request in await _prompts(port, task):
        wrong = await decide_click(store, elsewhere, request.id, ApprovalDecision.APPROVED, member_id="carol")
        assert wrong.outcome is Click.NOT_YOURS
        heard = await decide_click(
            store, elsewhere, request.id, ApprovalDecision.APPROVED, member_id=request.member_id
        )
        assert heard.outcome is Click.DECIDED and heard.pending is None
    outcome = await asyncio.wait_for(task, 30)
    assert outcome.status == ConfirmationStatus.CONFIRMED
    assert set(outcome.decisions.values()) == {ApprovalDecision.APPROVED}
    moved = await holdings(db, port, "alice", "bob")
    assert moved != before and moved == {h: list(outcome.result.allocation.holdings(h)) for h in ("alice", "bob")}
    assert port.pending_approvals == {}  # the prompts of the process running the trade are closed too
    # The decisions are in the negotiation's row now; a late click finds nothing pending anywhere.
    stored = await NegotiationRecorder(db).load(outcome.negotiation_id)
    assert stored is not None and (stored["approval_a"], stored["approval_b"]) == ("approved", "approved")
    late = await decide_click(store, elsewhere, f"negotiation-{outcome.negotiation_id}-alice",
                              ApprovalDecision.DENIED, member_id="alice")  # fmt: skip
    assert late.outcome is Click.NOT_PENDING


async def test_a_decline_heard_elsewhere_leaves_the_tasks(db: Database, sample_world: World) -> None:
    port, task = await _negotiation(db, sample_world)
    before = await holdings(db, port, "alice", "bob")
    alice, bob = await _prompts(port, task)
    assert port.decide(alice.id, ApprovalDecision.APPROVED)  # a click on the prompt's own process
    store = ApprovalStore(db)
    denied = await decide_click(store, ApprovalRegistry(), bob.id, ApprovalDecision.DENIED, member_id=bob.member_id)
    assert denied.outcome is Click.DECIDED
    outcome = await asyncio.wait_for(task, 30)
    assert outcome.status == ConfirmationStatus.DECLINED
    assert (outcome.decisions["alice"], outcome.decisions["bob"]) == (
        ApprovalDecision.APPROVED,
        ApprovalDecision.DENIED,
    )
    assert await holdings(db, port, "alice", "bob") == before


async def test_forgetting_the_workspace_drops_a_waiting_trade(db: Database, sample_world: World) -> None:
    port, task = await _negotiation(db, sample_world)
    alice, _bob = await _prompts(port, task)
    task.cancel()  # the process running the trade stopped while it waited: its approval rows stay behind
    await asyncio.gather(task, return_exceptions=True)
    store = ApprovalStore(db)
    row = await store.get(alice.id)
    assert row is not None and row.ask_id is None
    workspace_id = int((await NegotiationRecorder(db).load(int(alice.id.split("-")[1])) or {})["workspace_id"])
    key = ("local", (await port.workspace_info()).id)
    assert (await count_workspace_rows(db, workspace_id, key))["approval"] == 2
    deleted = await forget_workspace(db, workspace_id)
    assert deleted["approval"] == 2
    assert await store.get(alice.id) is None
