"""Members' negotiation profiles: the atomic tasks each member holds and their private value and cost per task.

An admin loads them from a JSON file (`askwith negotiate profile load FILE`):

    {"profiles": [
      {"member": "alice",
       "tasks": [{"id": "IT", "name": "IT setup", "parent": "Product launch"}],
       "preferences": {"IT": {"value": 2, "cost": 6}, "HR": {"value": 7, "cost": 2}}}]}

A member's preferences must cover their own tasks and every task of anyone they will negotiate with. A confirmed
trade moves tasks from one profile to the other; nothing else changes a profile.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.errors import ProfileError, ScenarioError
from bot.negotiation.model import Allocation, AtomicTask, Preference, Proposal, Scenario
from bot.store.negotiation_models import NegotiationProfile


@dataclass(frozen=True)
class MemberProfile:
    member: str  # the member's handle
    tasks: tuple[AtomicTask, ...]
    preferences: dict[str, Preference]

    def to_row(self) -> tuple[list[dict[str, Any]], dict[str, dict[str, float]]]:
        tasks = [{"id": t.id, "name": t.name, "parent": t.parent} for t in self.tasks]
        return tasks, {t: {"value": p.value, "cost": p.cost} for t, p in self.preferences.items()}


def profile_from_dict(raw: dict[str, Any]) -> MemberProfile:
    try:
        tasks = tuple(
            AtomicTask(str(t["id"]), str(t.get("name", t["id"])), str(t.get("parent", ""))) for t in raw["tasks"]
        )
        prefs = {str(k): Preference(float(v["value"]), float(v["cost"])) for k, v in raw["preferences"].items()}
        return MemberProfile(str(raw["member"]), tasks, prefs)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ProfileError(f"A negotiation profile is malformed: {exc!r}") from exc


def load_profiles_file(path: Path | str) -> list[MemberProfile]:
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ProfileError(f"Profile file {str(path)!r} does not exist.") from exc
    except json.JSONDecodeError as exc:
        raise ProfileError(f"Profile file {str(path)!r} is not valid JSON: {exc}") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("profiles"), list):
        raise ProfileError(f'Profile file {str(path)!r} must hold {{"profiles": [...]}}.')
    return [profile_from_dict(item) for item in raw["profiles"]]


def scenario_for(first: MemberProfile, second: MemberProfile, *, scenario_id: str = "members") -> Scenario:
    """The negotiation between two members: all tasks either holds, each member's own preferences."""
    holder = {t.id: first.member for t in first.tasks} | {t.id: second.member for t in second.tasks}
    if len(holder) != len(first.tasks) + len(second.tasks):
        raise ProfileError(f"{first.member} and {second.member} both list the same task id in their profiles.")
    if not holder:
        raise ProfileError(f"Neither {first.member} nor {second.member} holds any task to negotiate about.")
    try:
        return Scenario(
            id=scenario_id,
            setting="members",
            agents=(first.member, second.member),
            tasks=first.tasks + second.tasks,
            preferences={first.member: first.preferences, second.member: second.preferences},
            initial=Allocation(holder),
        )
    except ScenarioError as exc:
        raise ProfileError(f"The profiles cannot be negotiated: {exc}") from exc


def profiles_from_scenario(scenario: Scenario) -> list[MemberProfile]:
    """Each agent of a scenario as a member profile (demos, tests, turning a bench scenario into a workspace's)."""
    return [
        MemberProfile(
            agent,
            tuple(scenario.task(t) for t in scenario.initial.holdings(agent)),
            dict(scenario.preferences[agent]),
        )
        for agent in scenario.agents
    ]


# ---------------------------------------------------------------------- storage
async def save_profile(session: AsyncSession, workspace_id: int, member_id: int, profile: MemberProfile) -> None:
    tasks, preferences = profile.to_row()
    row = await _row(session, member_id)
    now = datetime.now(UTC)
    if row is None:
        session.add(
            NegotiationProfile(
                workspace_id=workspace_id, member_id=member_id, tasks=tasks, preferences=preferences, updated_at=now
            )
        )
    else:
        row.tasks, row.preferences, row.updated_at = tasks, preferences, now


async def get_profile(session: AsyncSession, member_id: int, handle: str) -> MemberProfile:
    row = await _row(session, member_id)
    if row is None:
        raise ProfileError(
            f"{handle} has no negotiation profile yet; an admin loads one with `askwith negotiate profile load`."
        )
    return profile_from_dict({"member": handle, "tasks": row.tasks, "preferences": row.preferences})


async def has_profile(session: AsyncSession, member_id: int) -> bool:
    return await _row(session, member_id) is not None


async def apply_trade(
    session: AsyncSession, member_ids: dict[str, int], scenario: Scenario, proposal: Proposal, proposer: str
) -> None:
    """Move the traded tasks between the two members' profiles (a trade both members confirmed)."""
    counterpart = scenario.counterpart(proposer)
    after = scenario.initial.apply(proposal, proposer, counterpart)
    for handle in scenario.agents:
        row = await _row(session, member_ids[handle])
        if row is None:
            raise ProfileError(f"{handle}'s negotiation profile disappeared during the negotiation.")
        held = after.holdings(handle)
        row.tasks = [{"id": t, "name": scenario.task(t).name, "parent": scenario.task(t).parent} for t in held]
        row.updated_at = datetime.now(UTC)


async def _row(session: AsyncSession, member_id: int) -> NegotiationProfile | None:
    query = select(NegotiationProfile).where(NegotiationProfile.member_id == member_id)
    return (await session.execute(query)).scalar_one_or_none()
