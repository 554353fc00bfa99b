from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from adapters.local import LocalWorkspace
from bot.errors import NegotiationRejectedError
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.negotiation import messages
from bot.negotiation.members import MemberNegotiation, load_profiles, sync_directory
from bot.negotiation.model import Scenario
from bot.negotiation.pareto import outcome_space
from bot.negotiation.profiles import get_profile, load_profiles_file, profiles_from_scenario
from bot.negotiation.record import ConfirmationStatus, NegotiationRecorder
from bot.negotiation.scenario import generate_scenario
from bot.negotiation.scripted import ScriptedNegotiator
from bot.negotiation.transcript import Outcome
from bot.platform.port import ApprovalDecision, ApprovalRequest
from bot.store.db import Database
from bot.store.models import Base
from bot.store.world import World


SAMPLE_PROFILES = Path(__file__).parents[3] / "adapters" / "local" / "samples" / "acme-negotiation-profiles.json"


def scripted(scenario: Scenario, agent: str) -> LLMClient:
    return LLMClient(ScriptedBackend(ScriptedNegotiator(scenario, agent)))


def _port(world: World, decisions: dict[str, ApprovalDecision], asked: list[ApprovalRequest]) -> LocalWorkspace:
    async def respond(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return decisions[request.member_id]

    return LocalWorkspace(world, approval_responder=respond)


async def _holdings(db: Database, port: LocalWorkspace) -> dict[str, list[str]]:
    directory = await sync_directory(db, port)
    async with db.session() as session:
        return {
            h: [t.id for t in (await get_profile(session, directory.db_ids[h], h)).tasks] for h in ("alice", "bob")
        }


async def test_both_members_accept_and_the_tasks_move(db: Database, sample_world: World) -> None:
    asked: list[ApprovalRequest] = []
    approve = {"alice": ApprovalDecision.APPROVED, "bob": ApprovalDecision.APPROVED}
    port = _port(sample_world, approve, asked)
    assert await load_profiles(db, port, load_profiles_file(SAMPLE_PROFILES)) == 2
    outcome = await MemberNegotiation(db, port, scripted).negotiate("alice", "@bob")
    result = outcome.result
    assert result.outcome is Outcome.AGREEMENT and outcome.status == ConfirmationStatus.CONFIRMED
    assert sorted(r.member_id for r in asked) == ["alice", "bob"]
    assert all("Accept the task trade" in r.title and "You hand over:" in r.body for r in asked)
    holdings = await _holdings(db, port)
    assert holdings == {h: list(result.allocation.holdings(h)) for h in ("alice", "bob")}
    assert holdings["alice"] != ["IT", "MKT-A", "DES"]
    assert result.utilities == pytest.approx(result.scenario.utilities(result.allocation))
    assert result.l2_to_pareto == pytest.approx(outcome_space(result.scenario).distance_to_frontier(result.utilities))
    alice_dm = sample_world.dm(sample_world.bot_id, "alice").id
    assert "confirmed" in sample_world.messages[alice_dm][-1].text


async def test_a_decline_leaves_the_allocation_unchanged(db: Database, sample_world: World) -> None:
    asked: list[ApprovalRequest] = []
    port = _port(sample_world, {"alice": ApprovalDecision.APPROVED, "bob": ApprovalDecision.DENIED}, asked)
    await load_profiles(db, port, load_profiles_file(SAMPLE_PROFILES))
    before = await _holdings(db, port)
    outcome = await MemberNegotiation(db, port, scripted).negotiate("alice", "bob")
    assert outcome.result.outcome is Outcome.AGREEMENT and outcome.status == ConfirmationStatus.DECLINED
    assert len(asked) == 2
    assert await _holdings(db, port) == before
    stored = await NegotiationRecorder(db).load(outcome.negotiation_id)
    assert stored is not None and stored["status"] == "declined"
    assert (stored["approval_a"], stored["approval_b"]) == ("approved", "denied")


async def test_the_negotiation_is_recorded_step_by_step(db: Database, sample_world: World) -> None:
    port = _port(sample_world, {"alice": ApprovalDecision.TIMEOUT, "bob": ApprovalDecision.APPROVED}, [])
    await load_profiles(db, port, load_profiles_file(SAMPLE_PROFILES))
    outcome = await MemberNegotiation(db, port, scripted).negotiate("alice", "bob")
    stored = await NegotiationRecorder(db).load(outcome.negotiation_id)
    assert stored is not None and stored["status"] == "declined" and stored["outcome"] == "agreement"
    steps = stored["steps"]
    assert len(steps) == len(outcome.result.calls) == stored["llm_calls"]
    assert [s["phase"] for s in steps[:2]] == ["consider", "consider"] and not steps[0]["delivered"]
    assert steps[-1]["move"]["kind"] == "accept" and steps[-1]["delivered"]
    assert all(s["estimate"] is not None for s in steps) and stored["prompt_tokens"] > 0
    assert stored["scenario"]["preferences"]["alice"]["IT"] == {"value": 2.0, "cost": 6.0}


async def test_a_member_without_a_profile_gets_a_clear_error(db: Database, sample_world: World) -> None:
    port = _port(sample_world, {}, [])
    await load_profiles(db, port, profiles_from_scenario(generate_scenario("cooperative", 3)))  # alice and bob
    with pytest.raises(NegotiationRejectedError, match="carol has no negotiation profile"):
        await MemberNegotiation(db, port, scripted).negotiate("alice", "carol")


async def test_the_negotiation_tables_match_their_models(db: Database) -> None:
    def diff(connection: object) -> list[object]:
        context = MigrationContext.configure(connection)  # type: ignore[arg-type]
        return [d for d in compare_metadata(context, Base.metadata) if "negotiation" in str(d)]

    async with db.engine.connect() as conn:
        assert await conn.run_sync(diff) == []


@pytest.mark.parametrize(
    ("initiator", "counterpart", "expected"),
    [
        ("alice", "@nobody", "I don't know anyone called 'nobody' in this workspace."),
        ("alice", "askwith", messages.counterpart_is_bot("askwith")),
        ("alice", "@alice", messages.counterpart_is_yourself()),
        ("alice", "  ", messages.no_counterpart()),
        ("carol", "bob", messages.your_profile_missing()),
        ("alice", "dave", messages.their_profile_missing("dave")),
    ],
)
async def test_a_request_that_cannot_run_says_why(
    sqlite_db: Database, sample_world: World, initiator: str, counterpart: str, expected: str
) -> None:
    port = _port(sample_world, {}, [])
    await load_profiles(sqlite_db, port, load_profiles_file(SAMPLE_PROFILES))  # alice and bob
    await sync_directory(sqlite_db, port)
    with pytest.raises(NegotiationRejectedError) as refused:
        await MemberNegotiation(sqlite_db, port, scripted).check(initiator, counterpart)
    assert str(refused.value) == expected
