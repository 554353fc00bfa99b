"""`AskService`: the one entry point for asks. Adapters (Slack, Discord, web) and the CLI call it.

    service = AskService(settings=settings, db=db, port=port, llm=llm, memory=memory, workspace_id=ws)
    outcome = await service.ask(AskRequest("alice", ["bob"], "When is the rehearsal?"))   # submit + run here
    ask_id = await service.submit(request)   # or: enqueue, and let an `AskWorker` run it
    await service.cancel(ask_id, by="alice")  # bot.asks.control; progress: service.progress (bot.asks.progress)
    view = await service.answer_view(ask_id, viewer="alice")   # the rich answer (bot.asks.read_models.answer_view)

Requests are validated first (each problem has one clear text in `bot.texts.rejection_texts`). A queued ask is claimed
by one worker, saved after every turn, resumed by another worker if its own dies, and ends with exactly one final post.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from functools import partial
from typing import Any, TypeVar

from sqlalchemy import select, update

from bot.agents.ablations import Ablations
from bot.agents.context import AskContext, RecursionBudget, TokenBudget
from bot.agents.evidence import EvidenceLine
from bot.agents.grounding import Grounding
from bot.agents.multiparty import AskResult, run_ask
from bot.agents.progress import Stage
from bot.agents.roster import Roster
from bot.asks import models
from bot.asks.background import BACKGROUND_SHARE, ask_in_thread, background, resolve_follow_up
from bot.asks.claims import AskClaims
from bot.asks.control import CancelResult, cancel_ask, end_cancelled
from bot.asks.delivery import Delivery
from bot.asks.feedback import record_feedback
from bot.asks.heartbeat import with_heartbeat
from bot.asks.live_record import expire_transcripts, keep_no_text
from bot.asks.progress import ProgressHub, ProgressTracker, stage_writes
from bot.asks.read_models.answer_view import AnswerView, answer_view
from bot.asks.read_models.transcripts import Transcript, load_transcript
from bot.asks.record import AskRecorder
from bot.asks.requests import AskOutcome, AskRequest
from bot.consent.approval import SharingGate
from bot.consent.card_facts import CardFacts
from bot.consent.outbox import Audience, Outbox
from bot.consent.pending import ApprovalStore
from bot.consent.prompt_limits import ApprovalLimits
from bot.consent.screen import ShareScreen
from bot.errors import (
    AskCancelledError,
    AskNotFoundError,
    AskRejectedError,
    AskwithError,
    ClaimLostError,
    MemoryUnavailableError,
    UnknownMemberError,
)
from bot.llm.client import LLMClient
from bot.memory.access import MemoryAccess
from bot.platform.port import ChannelKind, ChatPort, ThreadRef
from bot.settings import Settings
from bot.store import models as store_models
from bot.store.db import Database
from bot.texts import answer_texts, failure_texts, rejection_texts, transcript_texts


log = logging.getLogger(__name__)
__all__ = ["AskOutcome", "AskRequest", "AskService", "CancelResult"]
T = TypeVar("T")
TranscriptLink = Callable[[int, str], str]
MAX_ATTEMPTS = 3  # an ask that killed its worker this often is failed instead of retried again
# The worker slot the running ask holds (set by `AskWorker` in the ask's task): a parked ask gives it back.
worker_slot: ContextVar[asyncio.Semaphore | None] = ContextVar("worker_slot", default=None)


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
        self.approvals = ApprovalStore(db)
        self.approval_limits = ApprovalLimits()  # one requester cannot flood a colleague with prompts
        self._parked: dict[int, int] = {}  # ask id -> branches of it waiting on a member right now
        self.progress = ProgressHub()  # stages of the asks this process runs (bot.asks.progress)
        self.stage_writes = stage_writes(db)
        self._stops: dict[int, asyncio.Event] = {}  # asks running here -> set to cancel one at once
        self._trackers: dict[int, ProgressTracker] = {}

    # ------------------------------------------------------------------ requests
    async def ask(self, request: AskRequest) -> AskOutcome:
        """Validate and run one ask in this process. It is stored already claimed by this worker: no other worker
        can take it in between, and it costs one write less."""
        ask_id = await self.submit(request, claimed=True)
        try:
            return await self.process_or_fail(ask_id)
        except asyncio.CancelledError:  # the command was stopped: say so in the record (shielded: we are cancelled)
            await asyncio.shield(self._set_status(ask_id, models.AskStatus.INTERRUPTED))
            raise

    async def process_or_fail(self, ask_id: int) -> AskOutcome:
        """`process`, but an unexpected error ends the ask failed (requester told once) instead of leaving it
        `running`; the trace goes to the log for the team."""
        try:
            return await self.process(ask_id)
        except (ClaimLostError, asyncio.CancelledError):
            raise
        except Exception:
            log.exception("ask #%s failed unexpectedly", ask_id)
            await self.fail(ask_id, failure_texts.failure_internal())
            ask = await self.load(ask_id)
            failed = models.AskStatus.FAILED.value
            return AskOutcome(ask_id, failed, None, ask.failure, ask.final_text or "", None, 0.0)

    async def submit(self, request: AskRequest, *, claimed: bool = False) -> int:
        """Store a valid ask: queued for a worker, or `claimed` by this one (as `claim` would leave it)."""
        request = await resolve_follow_up(self.db, self.roster, self.settings, self.workspace_id, request)
        requester, colleagues, ablations = await self.validate(request)
        status = models.AskStatus.RUNNING if claimed else models.AskStatus.QUEUED
        row = models.Ask(
            workspace_id=self.workspace_id, status=status.value, requester=requester,
            colleagues=colleagues, question=request.question.strip(), origin_channel_id=request.origin_channel_id,
            origin_thread_id=request.origin_thread_id, ablations=ablations.names(), attempts=int(claimed),
            claimed_by=self.worker_id if claimed else None, heartbeat_at=datetime.now(UTC) if claimed else None,
            final_post=models.FinalPost.NONE.value, notices_posted=False, llm_calls=0, prompt_tokens=0,
            completion_tokens=0, wall_s=0.0, created_at=datetime.now(UTC), stage=Stage.QUEUED.value,
            stage_at=datetime.now(UTC), follow_up_of=request.follow_up_of, context=request.context,
        )  # fmt: skip
        async with self.db.session() as session, session.begin():
            session.add(row)
            await session.flush()
            return row.id

    async def validate(self, request: AskRequest) -> tuple[str, list[str], Ablations]:
        """(requester handle, colleague handles, ablations), or AskRejectedError with a user-facing text."""
        if not request.question.strip():
            raise AskRejectedError(rejection_texts.empty_question())
        if len(request.question.strip()) > self.settings.max_question_chars:
            limit = self.settings.max_question_chars
            raise AskRejectedError(rejection_texts.question_too_long(len(request.question.strip()), limit))
        if not [c for c in request.colleagues if c.strip()]:
            raise AskRejectedError(rejection_texts.no_colleague())
        ablations = Ablations.parse([*self.settings.ablations.split(","), *request.ablations])
        requester = await self._member(request.requester)
        if not requester.can_take_part:
            raise AskRejectedError(rejection_texts.requester_inactive(requester.handle))
        await self._searchable(requester.platform_id, requester.handle, requester=True)
        colleagues: list[str] = []
        for name in request.colleagues:
            profile = await self._member(name)
            if profile.is_bot:
                raise AskRejectedError(rejection_texts.bot_member(profile.handle))
            if profile.deactivated:
                raise AskRejectedError(rejection_texts.deactivated_member(profile.handle))
            if not profile.opted_in:
                raise AskRejectedError(rejection_texts.opted_out(profile.handle))
            await self._searchable(profile.platform_id, profile.handle, requester=False)
            if profile.handle != requester.handle and profile.handle not in colleagues:
                colleagues.append(profile.handle)
        if not colleagues:
            raise AskRejectedError(rejection_texts.only_yourself())
        return requester.handle, colleagues, ablations

    async def _searchable(self, platform_id: str, handle: str, *, requester: bool) -> None:
        """A live-memory workspace searches each member's memory with that member's permission: without one, say so
        before the ask starts (a mirror workspace has nothing to check)."""
        if self.memory.live is not None and not await self.memory.live.can_search(platform_id):
            raise AskRejectedError(rejection_texts.not_connected(handle, requester=requester))

    async def _member(self, name: str):  # noqa: ANN202 - MemberProfile
        try:
            return await self.roster.profile(name)
        except UnknownMemberError as exc:
            raise AskRejectedError(rejection_texts.unknown_member(name.strip().lstrip("@"))) from exc

    # ------------------------------------------------------------------ claiming (bot.asks.claims)
    def _claims(self) -> AskClaims:
        return AskClaims(
            self.db, workspace_id=self.workspace_id, worker_id=self.worker_id,
            stale_seconds=self.settings.worker_stale_seconds,
        )  # fmt: skip

    async def claim_next(self) -> int | None:
        """Claim the oldest queued ask, or a running one whose worker went silent; None if there is none."""
        return await self._claims().claim_next()

    async def claim(self, ask_id: int) -> bool:
        """Claim one given ask (the in-process path); False if another worker holds it."""
        return await self._claims().claim(ask_id)

    async def release(self, ask_id: int) -> None:
        """Give a claimed, unfinished ask back to the queue (this worker stops); its saved turns are kept."""
        await self._claims().release(ask_id)

    # ------------------------------------------------------------------ running a claimed ask
    async def process(self, ask_id: int) -> AskOutcome:
        """Run (or resume) a claimed ask to its one final post."""
        ask = await self.load(ask_id)
        cancelled_early = ask.cancel_requested_at is not None and ask.final_text is None
        thread = ThreadRef("", "") if cancelled_early else await self._hidden_thread(ask)  # nothing to show there
        recorder = AskRecorder(self.db, self.port, self.roster, ask_id=ask_id, worker_id=self.worker_id, thread=thread)
        tracker = self._new_tracker(ask_id)
        self._trackers[ask_id] = tracker
        try:
            stop = self._stops.setdefault(ask_id, asyncio.Event())
            interval_s = self.settings.worker_heartbeat_seconds
            try:
                return await with_heartbeat(recorder, self._process(ask, recorder), interval_s=interval_s, stop=stop)
            except AskCancelledError:
                return await end_cancelled(self, ask_id, recorder, tracker)
        finally:
            self._trackers.pop(ask_id, None)
            self._stops.pop(ask_id, None)

    async def _process(self, ask: models.Ask, recorder: AskRecorder) -> AskOutcome:
        started = time.perf_counter()
        result = None
        requester = await self.roster.identity(ask.requester)  # its name and id, for the posts
        if ask.cancel_requested_at is not None and ask.final_text is None:
            raise AskCancelledError(f"ask #{ask.id} was cancelled before it ran")
        if ask.final_text is None:
            if ask.attempts > MAX_ATTEMPTS:
                result, answer, failure = None, None, failure_texts.failure_internal()
            else:
                result = await self._converse(ask, recorder)
                answer, failure = result.answer, result.failure
                if _memory_unreachable(result) and failure == failure_texts.failure_unanswerable():
                    failure = (
                        failure_texts.failure_memory_unavailable()
                    )  # not "nothing found": not everything was searched
            final_text = _final_text(ask.id, result, failure, self.transcript_url(ask))
            await recorder.save_outcome(
                result.consensus if result else None, answer=answer, failure=failure, final_text=final_text,
                wall_s=time.perf_counter() - started,
            )  # fmt: skip
        # The ask's record, read once for the notices, its status and the answer's view (each would read it again);
        # its row too, when its end was saved just now (it had no final text).
        record = await load_transcript(self.db, ask.id, ask=ask if ask.final_text is not None else None)
        ask = record.ask
        status = _status_of(ask, record.consensus.data if record.consensus is not None else None)
        # The view shows this status, from this record: neither is read twice.
        delivery = Delivery(
            self.db, self.port, recorder, view_of=partial(self.final_view, status=status, record=record)
        )
        members = {handle for c in record.all_conversations() for handle in c.row.participants}
        platform_ids = {h: (await self.roster.identity(h)).platform_id for h in members}
        await delivery.notices(ask, requester.display_name, platform_ids, record=record)
        await delivery.final_post(ask, requester.platform_id, status=status.value)
        await self._tracker(ask.id).finish(Stage(status.value))
        await self.settle_record(ask.id)
        return AskOutcome(
            ask.id, status.value, ask.answer, ask.failure, ask.final_text or "", result, time.perf_counter() - started
        )

    async def _converse(self, ask: models.Ask, recorder: AskRecorder) -> AskResult:
        tracker = self._tracker(ask.id)
        tracker(Stage.PLANNING)
        await tracker.flush()  # stored before the conversations open (their record order stays the colleagues')
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
            outbox=Outbox(
                self.roster,
                SharingGate(
                    self.port,
                    ask_id=ask.id,
                    question=ask.question,
                    requester=ask.requester,
                    timeout_s=self.settings.approval_timeout_seconds,
                    approvals=self.approvals,
                    park=lambda member_id: self._park(ask.id, member_id),
                    limits=self.approval_limits,
                    facts=CardFacts(self.db, self.workspace_id),
                    zone=self.settings.timezone,
                ),
                screen=ShareScreen(cap=self.settings.share_quote_limit(len(ask.colleagues)), asked=ask.question),
                audience=Audience(ask.requester, tuple(ask.colleagues), await self._answer_channel(ask)),
            ),  # fmt: skip
            budget=RecursionBudget(self.settings.recursion_llm_budget),
            # A resumed ask goes on from what its saved calls spent.
            tokens=TokenBudget(self.settings.ask_token_limit, spent=ask.prompt_tokens or 0),
            participants=frozenset([ask.requester, *ask.colleagues]),
            grounding=await self._grounding(ask),
            progress=tracker,
        )
        saved = await recorder.load_saved()
        return await run_ask(ctx, list(ask.colleagues), saved=saved)

    async def _status(self, ask: models.Ask) -> models.AskStatus:
        status = _status_of(ask, None)
        if status is not models.AskStatus.DONE:  # decided by the row alone
            return status
        async with self.db.read() as conn:
            data = (
                await conn.execute(select(models.Consensus.data).where(models.Consensus.ask_id == ask.id))
            ).scalar_one_or_none()
        return _status_of(ask, data)

    async def _grounding(self, ask: models.Ask) -> Grounding:
        names = {h: (await self.roster.identity(h)).display_name for h in [ask.requester, *ask.colleagues]}
        budget = self.settings.evidence_budget // BACKGROUND_SHARE  # the background's share of what a prompt may show
        earlier, thread, cut = await background(self.db, ask, budget_tokens=budget)
        return Grounding.at(
            self.settings.timezone, requester=ask.requester, colleagues=tuple(ask.colleagues),
            origin=await self._origin(ask), names=names, earlier=earlier, thread=thread, thread_cut=cut,
        )  # fmt: skip

    async def _answer_channel(self, ask: models.Ask) -> str | None:
        """ "#name" of the channel the answer is posted in (its members read it); None for a DM to the requester."""
        if not ask.origin_channel_id:
            return None
        async with self.db.session() as session:
            row = (
                await session.execute(
                    select(store_models.Channel.name, store_models.Channel.kind).where(
                        store_models.Channel.workspace_id == self.workspace_id,
                        store_models.Channel.platform_id == ask.origin_channel_id,
                    )
                )
            ).one_or_none()
        if row is not None and row.kind == ChannelKind.DM.value:  # the requester's DM with the bot
            return None
        return f"#{row.name if row is not None else ask.origin_channel_id}"

    async def _origin(self, ask: models.Ask) -> str:
        if not ask.origin_channel_id:
            return transcript_texts.origin_direct()
        async with self.db.session() as session:
            name = (
                await session.execute(
                    select(store_models.Channel.name).where(
                        store_models.Channel.workspace_id == self.workspace_id,
                        store_models.Channel.platform_id == ask.origin_channel_id,
                    )
                )
            ).scalar_one_or_none()
        return transcript_texts.origin_channel(name or ask.origin_channel_id, in_thread=bool(ask.origin_thread_id))

    @asynccontextmanager
    async def _park(self, ask_id: int, member_id: str = "") -> AsyncIterator[None]:
        """While any branch of the ask waits on a member: the ask is `waiting` and its worker slot is free for other
        asks (the heartbeat goes on, so no other worker takes it over). The slot is taken back before going on."""
        slot = worker_slot.get()
        first = self._parked.get(ask_id, 0) == 0
        self._parked[ask_id] = self._parked.get(ask_id, 0) + 1
        if first:
            await self._set_status(ask_id, models.AskStatus.WAITING)
            self._tracker(ask_id)(Stage.WAITING, member_id)
            if slot is not None:
                slot.release()
        try:
            yield
        finally:
            self._parked[ask_id] -= 1
            if self._parked[ask_id] == 0:
                del self._parked[ask_id]
                task = asyncio.current_task()
                # A cancelled ask still ends in its worker (the cancel post) and gives a slot back then: it takes
                # one first. A worker shutting down has no slot to wait for, nor to run in.
                cancelled = ask_id in self._stops and self._stops[ask_id].is_set()
                stopping = task is not None and task.cancelling() > 0 and not cancelled
                if slot is not None and not stopping:
                    await slot.acquire()
                if not stopping and not cancelled:
                    await self._set_status(ask_id, models.AskStatus.RUNNING)

    async def _set_status(self, ask_id: int, status: models.AskStatus) -> None:
        async with self.db.begin() as conn:
            await conn.execute(
                update(models.Ask)
                .where(models.Ask.id == ask_id, models.Ask.claimed_by == self.worker_id)
                .values(status=status.value)
            )

    async def members_in(self, ask: models.Ask) -> set[str]:
        async with self.db.read() as conn:
            rows = await conn.execute(
                select(models.Conversation.participants).where(models.Conversation.ask_id == ask.id)
            )
            return {handle for participants in rows.scalars() for handle in participants}

    async def _hidden_thread(self, ask: models.Ask) -> ThreadRef:
        if ask.hidden_channel_id and ask.hidden_thread_id:
            return ThreadRef(ask.hidden_channel_id, ask.hidden_thread_id)
        title = transcript_texts.hidden_thread_title(ask.id, ask.requester, ask.colleagues, ask.question)
        thread = await self.port.create_hidden_thread(title)
        async with self.db.begin() as conn:
            await conn.execute(
                update(models.Ask)
                .where(models.Ask.id == ask.id)
                .values(hidden_channel_id=thread.channel_id, hidden_thread_id=thread.thread_id)
            )
        return thread

    def transcript_url(self, ask: models.Ask) -> str | None:
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
        if ask.cancel_requested_at is not None:  # cancelled meanwhile: it ends cancelled, not failed
            await end_cancelled(self, ask_id, recorder, self._tracker(ask_id))
            return
        if ask.final_text is None:
            text = failure_texts.final_failure(ask_id, failure, link=self.transcript_url(ask))
            await recorder.save_outcome(None, answer=None, failure=failure, final_text=text, wall_s=0.0)
            ask = await self.load(ask_id)
        requester = await self.roster.profile(ask.requester)
        await Delivery(self.db, self.port, recorder, view_of=self.final_view).final_post(
            ask, requester.platform_id, status=models.AskStatus.FAILED.value
        )
        await self._tracker(ask_id).finish(Stage.FAILED)
        await self.settle_record(ask_id)

    async def settle_record(self, ask_id: int) -> None:
        """Once an ask has ended (answered, failed or cancelled): with live memory its record keeps ids, no text (its
        answer lives in the platform), and only for ASKWITH_TRANSCRIPT_RETENTION_DAYS (bot.asks.live_record)."""
        if self.memory.live is not None:
            await keep_no_text(self.db, ask_id)
            await expire_transcripts(self.db, self.workspace_id, days=self.settings.transcript_retention_days)

    # ------------------------------------------------------------------ cancel, follow-ups, feedback
    async def cancel(self, ask_id: int, *, by: str) -> CancelResult:
        """Stop an ask (requester or admin only: AskNotAllowedError otherwise). See `bot.asks.control`."""
        return await cancel_ask(self, ask_id, by=by)

    async def ask_in_thread(self, channel_id: str, thread_id: str) -> int | None:
        """The latest ask asked in this thread (or whose answer started it): what a reply there follows up."""
        return await ask_in_thread(self.db, self.workspace_id, channel_id, thread_id)

    async def record_feedback(self, ask_id: int, member: str, vote: int) -> int:
        """+1 / -1 on an ask's answer, one vote per member (voting again changes it); returns the vote stored."""
        return await record_feedback(self.db, self.settings, self.roster, self.workspace_id, ask_id, member, vote)

    async def answer_view(self, ask_id: int, *, viewer: str) -> AnswerView:
        """The ask's rich answer as `viewer` may see it (`read_models.answer_view`), with their transcript link."""
        return await answer_view(
            self.db, ask_id, viewer=viewer, settings=self.settings, workspace_id=self.workspace_id,
            transcript_link=self.transcript_link, roster=self.roster,
        )  # fmt: skip

    async def final_view(
        self, ask: models.Ask, *, status: models.AskStatus | None = None, record: Transcript | None = None
    ) -> AnswerView | None:
        """The answer of the ask's final post as its requester sees it, for the platform to render (None: it cannot
        be read, and the final post is its text alone). `status`, `record`: `ask`'s, when the caller read them
        already."""
        try:
            view = await answer_view(
                self.db, ask.id, viewer=ask.requester, settings=self.settings, workspace_id=self.workspace_id,
                transcript_link=self.transcript_link, roster=self.roster, record=record,
            )  # fmt: skip
        except AskwithError as exc:
            log.warning("ask #%s: answer not rendered, posted as text: %s", ask.id, exc)
            return None
        if view.status not in models.FINISHED:  # the final post goes out just before the row says how the ask ended
            view.status = (status if status is not None else await self._status(ask)).value
        view.final_text = ask.final_text
        return view

    def stop_here(self, ask_id: int) -> bool:
        """Cancel an ask this process is running, at once; False when it does not run here."""
        stop = self._stops.get(ask_id)
        if stop is None:
            return False
        stop.set()
        return True

    def _tracker(self, ask_id: int) -> ProgressTracker:
        tracker = self._trackers.get(ask_id)
        if tracker is None:  # a path outside `process` (fail): a tracker of its own
            tracker = self._new_tracker(ask_id)
        return tracker

    def _new_tracker(self, ask_id: int) -> ProgressTracker:
        return ProgressTracker(self.stage_writes, self.progress, self.roster, ask_id=ask_id, worker_id=self.worker_id)


def _status_of(ask: models.Ask, consensus: dict[str, Any] | None) -> models.AskStatus:
    """How an ask ended, from its row and its consensus's data (None: it has none)."""
    if ask.cancel_requested_at is not None and ask.answer is None and ask.failure is None:
        return models.AskStatus.CANCELLED
    if ask.failure:
        return models.AskStatus.FAILED
    unsupported = consensus is not None and not consensus.get("supported", True)
    return models.AskStatus.UNSUPPORTED if unsupported else models.AskStatus.DONE


def _final_text(ask_id: int, result: AskResult | None, failure: str | None, link: str | None = None) -> str:
    if failure is not None or result is None or result.consensus is None:
        return failure_texts.final_failure(ask_id, failure or failure_texts.failure_internal(), link=link)
    consensus = result.consensus
    # An answer found while part of memory could not be searched says so first: it may miss something.
    note = f"{failure_texts.memory_unavailable_note()}\n" if _memory_unreachable(result) else ""
    if not consensus.supported:
        return note + answer_texts.final_unsupported(
            ask_id, consensus.answer, consensus.tried, consensus.disagreements, link=link
        )
    claims = [(c.text, [_reference(*r) for r in consensus.references(c)]) for c in consensus.claims]
    return note + answer_texts.final_cited_answer(ask_id, consensus.answer, claims, consensus.disagreements, link=link)


def _memory_unreachable(result: AskResult) -> bool:
    """Whether a search of the ask's talks failed because a memory store could not be reached (its search recorded
    `MemoryUnavailableError`, and the agents went on with what they could search)."""
    return any(
        query.error == MemoryUnavailableError.MESSAGE
        for conversation in result.conversations
        for turn in conversation.turns
        for query in turn.queries
    )


def _reference(line: EvidenceLine, holder: str, visible: bool) -> str:
    if visible:
        return answer_texts.reference_own(line.channel, line.ts, line.sender, line.id)
    return answer_texts.reference_quote(line.text, holder, line.channel)
