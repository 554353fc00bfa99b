"""What each person can see of an ask, read from the sinks themselves: the web pages (and their JSON) rendered as a
signed-in member, the INFO log, and the rows stored after the ask. The consent oracle judges these texts; nothing
here reads the outbox's own records.

    pages = PageReader(settings, db, port, workspace_id, service, admin="olga")
    seen = await pages.read(ask_ids, viewers=["alice", "bob", "olga"])   # [(viewer, "page /asks/3", text), ...]
    rows = await stored_rows(db, ask_ids)                                # [(reader, "row turn.plan", text), ...]

Pages are served by the real app (`bot.web.app.build_app`) in this event loop: an ASGI wrapper hands the app the
runtime its lifespan would (the ask's own store, workspace and service), and each viewer signs in once with a
signed member link, as a link posted in Slack would. The admin is a member listed in ASKWITH_WEB_ADMINS who took
part in nothing, with the raw-prompt setting off.

Stored rows, and who may read each (the design's rule: what another person sees is built only from what was let out
to them; an agent's own working state is its member's):

- ask (answer, final text, failure, stage text) and consensus (answer, data): the requester;
- conversation (question, conclusion) and turn.utterance: the conversation's participants (said to the partner);
- turn.plan, turn.think, turn.data, memory_query (params, error) and llm_call.error of a turn: that turn's agent's
  member only (the agent's working state; the transcript may show it to others only as what the outbox let out);
- llm_call.error of no turn: the requester for consensus, else the conversation's participants.
"""

from __future__ import annotations

import html
import json
import logging
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from sqlalchemy import text as sql

from adapters.local.workspace import LocalWorkspace
from bot.asks.service import AskService
from bot.serve.runtime import Runtime
from bot.settings import Settings
from bot.store.db import Database
from bot.web.app import build_app
from bot.web.local_runtime import LocalRuntime
from bot.web.tokens import MemberClaim, sign_member_token


SECRET = "consent-oracle-link-secret"
Seen = tuple[str, str, str]  # (who, which sink, text)
_TAGS = re.compile(r"<[^>]+>")
_ROW = re.compile(r"<tr\b.*?</tr>", re.S)
LISTS = ("/conversations", "/settings")  # pages that list every ask a member was in, this case's and earlier ones


class LogSink(logging.Handler):
    """Every record at INFO and above, as an operator reading the log gets it."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith(("httpx", "httpcore")):
            return  # this reader's own page requests, not the product's
        try:
            self.lines.append(record.getMessage())
        except Exception:  # a record whose arguments do not format is still what the operator sees
            self.lines.append(str(record.msg))

    @asynccontextmanager
    async def capturing(self) -> AsyncIterator[LogSink]:
        root, client = logging.getLogger(), logging.getLogger("httpx")
        level, client_level = root.level, client.level
        root.addHandler(self)
        root.setLevel(min(level, logging.INFO) if level else logging.INFO)
        client.setLevel(logging.WARNING)  # this reader's own page requests are not the product's log
        try:
            yield self
        finally:
            root.removeHandler(self)
            root.setLevel(level)
            client.setLevel(client_level)


class PageReader:
    """The served app over the ask's own store, read as one member at a time."""

    def __init__(
        self, settings: Settings, db: Database, port: LocalWorkspace, workspace_id: int, service: AskService,
        *, admin: str,
    ) -> None:  # fmt: skip
        settings = settings.replace(web_admins=admin, admin_raw_prompts=False)
        self.admin = admin
        self.workspace_id = workspace_id
        local = LocalRuntime("consent", port, None, workspace_id, service)  # type: ignore[arg-type]  # no ingestion here
        self.runtime = Runtime(settings=settings, db=db, llm=None, local=local)
        app = build_app(settings, secret=SECRET, start=self._never, local_picker=False)
        runtime = self.runtime

        async def served(scope: dict[str, Any], receive: Any, send: Any) -> None:
            scope["state"] = {"runtime": runtime}  # what the app's lifespan hands every request
            await app(scope, receive, send)

        self.transport = httpx.ASGITransport(app=served)  # type: ignore[arg-type]
        self.clients: dict[str, httpx.AsyncClient] = {}

    @asynccontextmanager
    async def _never(self) -> AsyncIterator[Runtime]:  # the lifespan does not run: the wrapper hands the runtime
        yield self.runtime

    def set_service(self, service: AskService) -> None:
        self.runtime.local.asks = service  # type: ignore[union-attr]

    async def client(self, member: str) -> httpx.AsyncClient:
        if member not in self.clients:
            client = httpx.AsyncClient(transport=self.transport, base_url="http://127.0.0.1")
            token = sign_member_token(SECRET, MemberClaim(self.workspace_id, member), expires_at=time.time() + 86400)
            response = await client.get("/conversations", params={"t": token})
            if response.status_code != 303:
                raise AssertionError(f"{member} could not sign in: {response.status_code}")
            self.clients[member] = client
        return self.clients[member]

    async def read(self, ask_ids: list[int], viewers: list[str], requester: str) -> list[Seen]:
        """Each viewer's "My conversations", settings and transcript pages; the requester's ask pages and JSON."""
        seen: list[Seen] = []
        for viewer in viewers:
            client = await self.client(viewer)
            # The admin took part in nothing: only the transcripts (admins may open any) can show them the ask.
            paths = [] if viewer == self.admin else ["/conversations", "/settings"]
            paths += [f"/asks/{ask_id}" for ask_id in ask_ids]
            if viewer == requester:
                paths += [p for i in ask_ids for p in (f"/workspace/asks/{i}", f"/workspace/asks/{i}/progress")]
            for path in paths:
                response = await client.get(path)
                if path in LISTS:  # every ask the viewer was in: only this case's rows are this case's to judge
                    response = _rows_about(response, ask_ids)
                seen.append((viewer, f"page {path}", _visible(response)))
        return seen

    async def latest_ask(self) -> int | None:
        async with self.runtime.db.session() as session:
            return (await session.execute(sql("SELECT max(id) FROM ask"))).scalar()

    async def read_live(self, ask_id: int, requester: str) -> list[Seen]:
        """The requester's ask status (the JSON her ask page polls, with the same texts) while the ask runs."""
        client = await self.client(requester)
        path = f"/workspace/asks/{ask_id}/progress"
        return [(requester, f"page {path} (mid-ask)", _visible(await client.get(path)))]

    async def close(self) -> None:
        for client in self.clients.values():
            await client.aclose()


def _rows_about(response: httpx.Response, ask_ids: list[int]) -> httpx.Response:
    """A list page cut to its table rows that link to these asks (the rest lists other asks, or settings)."""
    links = tuple(f'asks/{ask_id}"' for ask_id in ask_ids)
    rows = [row for row in _ROW.findall(response.text) if any(link in row for link in links)]
    return httpx.Response(response.status_code, text="\n".join(rows), headers={"content-type": "text/html"})


def _visible(response: httpx.Response) -> str:
    """The page's text as shown (tags dropped, entities decoded) and, for JSON, every string in it."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return " ".join(_strings(response.json()))
    return html.unescape(_TAGS.sub(" ", response.text))


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


async def stored_rows(db: Database, ask_ids: list[int], requester: str) -> list[Seen]:
    """The rows the asks left, each with the members who may read it (see the module docstring)."""
    if not ask_ids:
        return []
    ids = ",".join(str(int(i)) for i in ask_ids)
    seen: list[Seen] = []
    async with db.session() as session:

        async def rows(query: str) -> list[Any]:
            return list((await session.execute(sql(query))).all())

        for answer, final, failure, stage in await rows(
            f"SELECT answer, final_text, failure, stage_detail FROM ask WHERE id IN ({ids})"
        ):
            seen += [(requester, "row ask", _join(answer, final, failure, stage))]
        for answer, data in await rows(f"SELECT answer, data FROM consensus WHERE ask_id IN ({ids})"):
            seen += [(requester, "row consensus", _join(answer, data))]
        talks = {
            cid: json.loads(p) if isinstance(p, str) else p
            for cid, p in await rows(f"SELECT id, participants FROM conversation WHERE ask_id IN ({ids})")
        }
        for cid, question, conclusion in await rows(
            f"SELECT id, question, conclusion FROM conversation WHERE ask_id IN ({ids})"
        ):
            seen += [(m, "row conversation", _join(question, conclusion)) for m in talks[cid]]
        turns = await rows(
            "SELECT t.id, t.conversation_id, t.agent, t.utterance, t.plan, t.think, t.data FROM turn t "
            f"JOIN conversation c ON c.id = t.conversation_id WHERE c.ask_id IN ({ids})"
        )
        agent_of = {tid: agent for tid, _, agent, *_ in turns}
        for _, cid, agent, utterance, plan, think, data in turns:
            seen += [(m, "row turn.utterance", utterance or "") for m in talks[cid]]
            seen += [(agent, "row turn.plan/think/data", _join(plan, think, data))]
        for tid, params, error in await rows(
            "SELECT q.turn_id, q.params, q.error FROM memory_query q JOIN turn t ON t.id = q.turn_id "
            f"JOIN conversation c ON c.id = t.conversation_id WHERE c.ask_id IN ({ids})"
        ):
            seen += [(agent_of.get(tid, requester), "row memory_query", _join(params, error))]
        for tid, cid, purpose, error in await rows(
            "SELECT turn_id, conversation_id, purpose, error FROM llm_call"
            f" WHERE ask_id IN ({ids}) AND error IS NOT NULL"
        ):
            if tid is not None:
                readers = [agent_of.get(tid, requester)]
            elif purpose == "consensus" or cid is None:
                readers = [requester]
            else:
                readers = list(talks.get(cid, [requester]))
            seen += [(r, f"row llm_call.error ({purpose})", error) for r in readers]
    return seen


def _join(*values: Any) -> str:
    return "\n".join(v if isinstance(v, str) else json.dumps(v) for v in values if v is not None)
