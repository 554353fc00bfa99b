"""`AskService`: the one entry point for asks. Adapters (Slack, Discord, web) and the CLI call it.

    service = AskService(settings=settings, db=db, port=port, llm=llm, memory=memory, workspace_id=ws)
    outcome = await service.ask(AskRequest("alice", ["bob"], "When is the rehearsal?"))   # submit + run here
    ask_id = await service.submit(request)   # or: enqueue, and let an `AskWorker` run it

Requests are validated first (each problem has one clear text in `bot.messages`). A queued ask is claimed by one
worker, saved after every turn, resumed by another worker if its own dies, and ends with exactly one final post.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from sqlalchemy import and_, or_, select, update

from bot import messages
from bot.agents.ablations import Ablations
from bot.agents.context import AskContext, RecursionBudget
from bot.agents.memory_tools import MemoryAccess
from bot.agents.multiparty import AskResult, run_ask
from bot.agents.privacy import SharingGate
from bot.agents.roster import Roster
from bot.asks import models
from bot.asks.delivery import Delivery
from bot.asks.record import AskRecorder
from bot.errors import AskNotFoundError, AskRejectedError, ClaimLostError, UnknownMemberError
from bot.llm.client import LLMClient
from bot.port import ChatPort, ThreadRef
from bot.settings import Settings
from bot.store.db import Database


log = logging.getLogger(__name__)
T = TypeVar("T")
TranscriptLink = Callable[[int, str], str]
MAX_ATTEMPTS = 3  # an ask that killed its worker this often is failed instead of retried again


@dataclass(frozen=True)
class AskRequest:
    requester: str  # handle or platform id
    colleagues: list[str]
    question: str
    origin_channel_id: str | None = None  # where to answer; None = the requester's DM
    origin_thread_id: str | None = None
    ablations: list[str] = field(default_factory=list)


@dataclass
class AskOutcome:
    ask_id: int
    status: str
    answer: str | None
    failure: str | None
    final_text: str
    result: AskResult | None  # None when this run only delivered an earlier result
    wall_s: float


class AskService:
    def __init__(
        self,
        *,
        settings: Settings,
        db: Database,
        port: ChatPort,
        llm: LLMClient,
        memory: MemoryAccess,
        workspace_id: int,
        worker_id: str | None = None,
        transcript_link: TranscriptLink | None = None,
    ) -> None:
        self.settings = settings
        self.db = db
        self.port = port
        self.llm = llm
        self.memory = memory
        self.workspace_id = workspace_id
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.roster = Roster(db, workspace_id)
        self.transcript_link = transcript_link  # (ask id, requester handle) -> web URL for the final post

    # ------------------------------------------------------------------ requests
    async def ask(self, request: AskRequest) -> AskOutcome:
        """Validate, enqueue and run one ask in this process."""
        ask_id = await self.submit(request)
        if not await self.claim(ask_id):
            raise ClaimLostError(f"ask #{ask_id} was claimed by another worker")
        return await self.process(ask_id)

    async def submit(self, request: AskRequest) -> int:
        requester, colleagues, ablations = await self.validate(request)
        row = models.Ask(
            workspace_id=self.workspace_id, status=models.AskStatus.QUEUED.value, requester=requester,
            colleagues=colleagues, question=request.question.strip(), origin_channel_id=request.origin_channel_id,
            origin_thread_id=request.origin_thread_id, ablations=ablations.names(), attempts=0,
            final_post=models.FinalPost.NONE.value, notices_posted=False, llm_calls=0, prompt_tokens=0,
            completion_tokens=0, wall_s=0.0, created_at=datetime.now(UTC),
        )  # fmt: skip
        async with self.db.session() as session, session.begin():
            session.add(row)
            await session.flush()
            return row.id

    async def validate(self, request: AskRequest) -> tuple[str, list[str], Ablations]:
        """(requester handle, colleague handles, ablations), or AskRejectedError with a user-facing text."""
        if not request.question.strip():
            raise AskRejectedError(messages.empty_question())
        if not [c for c in request.colleagues if c.strip()]:
            raise AskRejectedError(messages.no_colleague())
        ablations = Ablations.parse([*self.settings.ablations.split(","), *request.ablations])
        requester = await self._member(request.requester)
        if not requester.can_take_part:
            raise AskRejectedError(messages.requester_inactive(requester.handle))
        colleagues: list[str] = []
        for name in request.colleagues:
            profile = await self._member(name)
            if profile.is_bot:
                raise AskRejectedError(messages.bot_member(profile.handle))
            if profile.deactivated:
                raise AskRejectedError(messages.deactivated_member(profile.handle))
            if not profile.opted_in:
                raise AskRejectedError(messages.opted_out(profile.handle))
            if profile.handle != requester.handle and profile.handle not in colleagues:
                colleagues.append(profile.handle)
        if not colleagues:
            raise AskRejectedError(messages.only_yourself())
        return requester.handle, colleagues, ablations

    async def _member(self, name: str):  # noqa: ANN202 - MemberProfile
        try:
            return await self.roster.profile(name)
        except UnknownMemberError as exc:
            raise AskRejectedError(messages.unknown_member(name.strip().lstrip("@"))) from exc

    # ------------------------------------------------------------------ claiming
    def _claimable(self) -> object:
        stale = datetime.now(UTC) - timedelta(seconds=self.settings.worker_stale_seconds)
        ask = models.Ask
        return and_(
            ask.workspace_id == self.workspace_id,
            or_(
                ask.status == models.AskStatus.QUEUED.value,
                and_(ask.status == models.AskStatus.RUNNING.value, ask.heartbeat_at < stale),
            ),
        )

    async def claim_next(self) -> int | None:
        """Claim the oldest queued ask, or a running one whose worker went silent; None if there is none.

        PostgreSQL: `FOR UPDATE SKIP LOCKED` lets several workers claim side by side without waiting on each other.
        The conditional UPDATE makes the claim safe on SQLite too (meant for a single worker there)."""
        claimable = self._claimable()
        async with self.db.session() as session, session.begin():
            stmt = select(models.Ask.id).where(claimable).order_by(models.Ask.id).limit(1)
            if self.db.dialect == "postgresql":
                stmt = stmt.with_for_update(skip_locked=True)
            ask_id = (await session.execute(stmt)).scalar_one_or_none()
            if ask_id is None:
                return None
            claimed = await self._take(session, ask_id, claimable)
        return ask_id if claimed else None

    async def claim(self, ask_id: int) -> bool:
        """Claim one given ask (the in-process path); False if another worker holds it."""
        async with self.db.session() as session, session.begin():
            return await self._take(session, ask_id, self._claimable())

    async def _take(self, session, ask_id: int, claimable: object) -> bool:  # noqa: ANN001 - AsyncSession
        result = await session.execute(
            update(models.Ask)
            .where(models.Ask.id == ask_id, claimable)
            .values(
                status=models.AskStatus.RUNNING.value,
                claimed_by=self.worker_id,
                heartbeat_at=datetime.now(UTC),
                attempts=models.Ask.attempts + 1,
            )
        )
        return result.rowcount == 1

    # ------------------------------------------------------------------ running a claimed ask
    async def process(self, ask_id: int) -> AskOutcome:
        """Run (or resume) a claimed ask to its one final post."""
        ask = await self.load(ask_id)
        thread = await self._hidden_thread(ask)
        recorder = AskRecorder(self.db, self.port, self.roster, ask_id=ask_id, worker_id=self.worker_id, thread=thread)
        return await self._with_heartbeat(recorder, self._process(ask, recorder))

    async def _process(self, ask: models.Ask, recorder: AskRecorder) -> AskOutcome:
        started = time.perf_counter()
        result = None
        requester = await self.roster.profile(ask.requester)
        if ask.final_text is None:
            if ask.attempts > MAX_ATTEMPTS:
                result, answer, failure = None, None, messages.failure_internal()
            else:
                result = await self._converse(ask, recorder)
                answer, failure = result.answer, result.failure
            final_text = _final_text(ask.id, result, failure, self._link(ask))
            await recorder.save_outcome(
                result.consensus if result else None, answer=answer, failure=failure, final_text=final_text,
                wall_s=time.perf_counter() - started,
            )  # fmt: skip
            ask = await self.load(ask.id)
        delivery = Delivery(self.db, self.port, recorder)
        platform_ids = {h: (await self.roster.profile(h)).platform_id for h in await self._members_in(ask)}
        await delivery.notices(ask, requester.display_name, platform_ids)
        status = models.AskStatus.FAILED if ask.failure else models.AskStatus.DONE
        await delivery.final_post(ask, requester.platform_id, status=status.value)
        return AskOutcome(
            ask.id, status.value, ask.answer, ask.failure, ask.final_text or "", result, time.perf_counter() - started
        )

    async def _converse(self, ask: models.Ask, recorder: AskRecorder) -> AskResult:
        ctx = AskContext(
            ask_id=ask.id,
            question=ask.question,
            requester=ask.requester,
            settings=self.settings,
            ablations=Ablations.parse(ask.ablations),
            llm=self.llm,
            memory=self.memory,
            roster=self.roster,
            recorder=recorder,
            gate=SharingGate(
                self.port,
                ask_id=ask.id,
                question=ask.question,
                requester=ask.requester,
                timeout_s=self.settings.approval_timeout_seconds,
            ),  # fmt: skip
            budget=RecursionBudget(self.settings.recursion_llm_budget),
            participants=frozenset([ask.requester, *ask.colleagues]),
        )
        saved = await recorder.load_saved()
        return await run_ask(ctx, list(ask.colleagues), saved=saved)

    async def _members_in(self, ask: models.Ask) -> set[str]:
        async with self.db.session() as session:
            rows = await session.execute(
                select(models.Conversation.participants).where(models.Conversation.ask_id == ask.id)
            )
            return {handle for participants in rows.scalars() for handle in participants}

    async def _hidden_thread(self, ask: models.Ask) -> ThreadRef:
        if ask.hidden_channel_id and ask.hidden_thread_id:
            return ThreadRef(ask.hidden_channel_id, ask.hidden_thread_id)
        title = messages.hidden_thread_title(ask.id, ask.requester, ask.colleagues, ask.question)
        thread = await self.port.create_hidden_thread(title)
        async with self.db.session() as session, session.begin():
            await session.execute(
                update(models.Ask)
                .where(models.Ask.id == ask.id)
                .values(hidden_channel_id=thread.channel_id, hidden_thread_id=thread.thread_id)
            )
        return thread

    async def _with_heartbeat(self, recorder: AskRecorder, work: Awaitable[T]) -> T:
        """Run `work` while renewing the claim; cancel it (ClaimLostError) if another worker took over."""
        task = asyncio.ensure_future(work)
        lost: list[ClaimLostError] = []

        async def beat() -> None:
            while not task.done():
                await asyncio.sleep(self.settings.worker_heartbeat_seconds)
                try:
                    await recorder.heartbeat()
                except ClaimLostError as exc:
                    lost.append(exc)
                    task.cancel()
                    return

        beater = asyncio.create_task(beat())
        try:
            return await task
        except asyncio.CancelledError:
            if lost:
                raise lost[0] from None
            raise
        finally:
            beater.cancel()

    def _link(self, ask: models.Ask) -> str | None:
        return self.transcript_link(ask.id, ask.requester) if self.transcript_link else None

    async def load(self, ask_id: int) -> models.Ask:
        async with self.db.session() as session:
            ask = await session.get(models.Ask, ask_id)
        if ask is None:
            raise AskNotFoundError(ask_id)
        return ask

    async def fail(self, ask_id: int, failure: str) -> None:
        """Give up on a claimed ask after an unexpected error: record the failure and tell the requester once."""
        ask = await self.load(ask_id)
        recorder = AskRecorder(
            self.db, self.port, self.roster, ask_id=ask_id, worker_id=self.worker_id, thread=ThreadRef("", "")
        )
        if ask.final_text is None:
            text = messages.final_failure(ask_id, failure, link=self._link(ask))
            await recorder.save_outcome(None, answer=None, failure=failure, final_text=text, wall_s=0.0)
            ask = await self.load(ask_id)
        requester = await self.roster.profile(ask.requester)
        await Delivery(self.db, self.port, recorder).final_post(
            ask, requester.platform_id, status=models.AskStatus.FAILED.value
        )


def _final_text(ask_id: int, result: AskResult | None, failure: str | None, link: str | None = None) -> str:
    if failure is not None or result is None or result.consensus is None:
        return messages.final_failure(ask_id, failure or messages.failure_internal(), link=link)
    citations = [messages.citation(*c) for c in result.consensus.citations()]
    return messages.final_answer(ask_id, result.consensus.answer, citations, link=link)
