"""Negotiation for members: `/negotiate @bob` (or `askwith negotiate --as alice --with bob`).

Both members' agents negotiate over the tasks in their profiles; an agreed trade is shown to both members through the
chat port with Accept / Decline, and only when both accept do the tasks move between their profiles. A Decline, a
time-out, no agreement or an Error leave everything as it was. Every negotiation is recorded.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.agents.roster import MemberProfile as RosterMember
from bot.agents.roster import Roster
from bot.errors import AskwithError, NegotiationRejectedError, UnknownMemberError
from bot.llm.client import LLMClient
from bot.negotiation import messages
from bot.negotiation.confirmation import TradeConfirmations, approval_id
from bot.negotiation.engine import NegotiationEngine
from bot.negotiation.model import Scenario
from bot.negotiation.profiles import (
    MemberProfile,
    apply_trade,
    get_profile,
    has_profile,
    save_profile,
    scenario_for,
)
from bot.negotiation.record import ConfirmationStatus, NegotiationRecorder
from bot.negotiation.transcript import NegotiationOptions, NegotiationResult, Outcome
from bot.platform.port import ApprovalDecision, ApprovalKind, ApprovalRequest, ChatPort, Member
from bot.store.chat_store import ChatStore, WorkspaceKey
from bot.store.db import Database
from bot.texts import rejection_texts


log = logging.getLogger(__name__)


ClientFor = Callable[[Scenario, str], LLMClient]  # the LLM client playing a member's agent in a scenario


def one_client(client: LLMClient) -> ClientFor:
    """Both members' agents played by the same LLM client (the serving process's)."""
    return lambda _scenario, _agent: client


@dataclass(frozen=True)
class MemberDirectory:
    workspace_id: int
    db_ids: dict[str, int]  # handle -> member row id
    members: dict[str, Member]  # handle -> member

    def member(self, handle: str) -> Member:
        found = self.members.get(handle.lstrip("@"))
        if found is None:
            raise UnknownMemberError(handle)
        return found


@dataclass(frozen=True)
class MemberNegotiationOutcome:
    negotiation_id: int
    result: NegotiationResult
    status: str  # a ConfirmationStatus value
    decisions: dict[str, ApprovalDecision]


async def sync_directory(db: Database, port: ChatPort) -> MemberDirectory:
    """Mirror the port's workspace and members into the store and index them by handle."""
    info = await port.workspace_info()
    everyone = await port.list_members()
    store = ChatStore(db)
    async with db.session() as session, session.begin():
        workspace_id = await store.ensure_workspace(session, WorkspaceKey(port.platform, info.id), info.name)
        by_platform_id = await store.upsert_members(session, workspace_id, everyone)  # bots too: known as bots
    members = [m for m in everyone if not m.is_bot]
    return MemberDirectory(workspace_id, {m.name: by_platform_id[m.id] for m in members}, {m.name: m for m in members})


async def load_profiles(db: Database, port: ChatPort, profiles: Sequence[MemberProfile]) -> int:
    """Store (or replace) members' profiles; returns how many were stored."""
    directory = await sync_directory(db, port)
    async with db.session() as session, session.begin():
        for profile in profiles:
            member = directory.member(profile.member)
            await save_profile(session, directory.workspace_id, directory.db_ids[member.name], profile)
    return len(profiles)


class MemberNegotiation:
    def __init__(
        self,
        db: Database,
        port: ChatPort,
        client_for: ClientFor,
        *,
        options: NegotiationOptions | None = None,
        approval_timeout_s: float = 86400.0,
        poll_s: float = 1.0,
    ) -> None:
        self.db = db
        self.port = port
        self.client_for = client_for
        self.options = options or NegotiationOptions()
        self.approval_timeout_s = approval_timeout_s
        self.recorder = NegotiationRecorder(db)
        # Decisions in the database: a click heard by any process counts, not only by the one that posted the prompt.
        self.confirmations = TradeConfirmations(db, port, timeout_s=approval_timeout_s, poll_s=poll_s)

    async def check(self, initiator: str, counterpart: str) -> tuple[str, str]:
        """Both members' handles (each given as handle or platform id), or NegotiationRejectedError worded for the
        initiator. Database look-ups only, so a chat command can answer at once."""
        if not counterpart.strip():
            raise NegotiationRejectedError(messages.no_counterpart())
        roster = Roster(self.db, await self._workspace_id())
        me, other = await _roster_member(roster, initiator), await _roster_member(roster, counterpart)
        if other.is_bot:
            raise NegotiationRejectedError(messages.counterpart_is_bot(other.handle))
        if other.deactivated:
            raise NegotiationRejectedError(rejection_texts.deactivated_member(other.handle))
        if other.handle == me.handle:
            raise NegotiationRejectedError(messages.counterpart_is_yourself())
        async with self.db.session() as session:
            if not await has_profile(session, me.viewer.member_id):
                raise NegotiationRejectedError(messages.your_profile_missing())
            if not await has_profile(session, other.viewer.member_id):
                raise NegotiationRejectedError(messages.their_profile_missing(other.handle))
        return me.handle, other.handle

    async def _workspace_id(self) -> int:
        info = await self.port.workspace_info()
        async with self.db.session() as session, session.begin():
            key = WorkspaceKey(self.port.platform, info.id)
            return await ChatStore(self.db).ensure_workspace(session, key, info.name)

    async def negotiate(self, initiator: str, counterpart: str) -> MemberNegotiationOutcome:
        directory = await sync_directory(self.db, self.port)
        handles = await self.check(initiator, counterpart)
        async with self.db.session() as session:
            profiles = [await get_profile(session, directory.db_ids[h], h) for h in handles]
        scenario = scenario_for(*profiles)
        clients = {agent: self.client_for(scenario, agent) for agent in scenario.agents}
        result = await NegotiationEngine(scenario, clients, options=self.options).run()
        agreed = result.outcome is Outcome.AGREEMENT
        negotiation_id = await self.recorder.save(
            result,
            workspace_id=directory.workspace_id,
            member_ids=(directory.db_ids[handles[0]], directory.db_ids[handles[1]]),
            status=ConfirmationStatus.PENDING if agreed else ConfirmationStatus.NONE,
        )
        if not agreed:
            await self._notify_all(directory, result, _unconfirmed_note(result))
            return MemberNegotiationOutcome(negotiation_id, result, ConfirmationStatus.NONE, {})
        return await self._confirm(negotiation_id, directory, result)

    async def _confirm(
        self, negotiation_id: int, directory: MemberDirectory, result: NegotiationResult
    ) -> MemberNegotiationOutcome:
        """Both members see the agreed trade with Accept / Decline; the tasks move only if both accept."""
        agents = result.scenario.agents
        asks = [self._ask(negotiation_id, directory.member(agent), result) for agent in agents]
        decisions = dict(zip(agents, await asyncio.gather(*asks), strict=True))
        confirmed = all(decision is ApprovalDecision.APPROVED for decision in decisions.values())
        status = ConfirmationStatus.CONFIRMED if confirmed else ConfirmationStatus.DECLINED
        if confirmed and result.agreed is not None and result.proposer is not None:
            async with self.db.session() as session, session.begin():
                await apply_trade(session, directory.db_ids, result.scenario, result.agreed, result.proposer)
        approvals = (decisions[agents[0]].value, decisions[agents[1]].value)
        await self.recorder.set_confirmation(negotiation_id, approvals, status)
        await self.confirmations.close(negotiation_id, agents)
        note = messages.trade_confirmed if confirmed else messages.trade_declined
        await self._notify_all(directory, result, note)
        return MemberNegotiationOutcome(negotiation_id, result, status, decisions)

    async def _ask(self, negotiation_id: int, member: Member, result: NegotiationResult) -> ApprovalDecision:
        scenario, handle = result.scenario, member.name
        other = scenario.counterpart(handle)
        before, after = scenario.initial.holdings(handle), result.allocation.holdings(handle)
        request = ApprovalRequest(
            id=approval_id(negotiation_id, handle),
            member_id=member.id,
            title=messages.approval_title(other),
            body=messages.approval_body(
                gives=[scenario.task(t).name for t in before if t not in after],
                receives=[scenario.task(t).name for t in after if t not in before],
                before=scenario.utility(handle, scenario.initial),
                after=scenario.utility(handle, result.allocation),
            ),
            context={"negotiation_id": str(negotiation_id), "counterpart": other},
            kind=ApprovalKind.TRADE,
        )
        return await self.confirmations.decide(request)

    async def _notify_all(
        self, directory: MemberDirectory, result: NegotiationResult, note: Callable[[str], str]
    ) -> None:
        for handle in result.scenario.agents:
            try:
                channel = await self.port.open_dm(directory.member(handle).id)
                await self.port.post(channel, note(result.scenario.counterpart(handle)))
            except AskwithError as exc:  # one member's closed DMs must not keep the other from hearing the outcome
                log.warning("could not tell %s the negotiation's outcome: %s", handle, exc)


async def _roster_member(roster: Roster, ref: str) -> RosterMember:
    try:
        return await roster.profile(ref)
    except UnknownMemberError as exc:
        raise NegotiationRejectedError(rejection_texts.unknown_member(ref.strip().lstrip("@"))) from exc


def _unconfirmed_note(result: NegotiationResult) -> Callable[[str], str]:
    if result.outcome is Outcome.ERROR:
        return messages.negotiation_failed
    return lambda counterpart: messages.no_agreement(counterpart, result.turns_played)
