"""An answer's sources tell the truth about who passed them on: every source listed on the requester's ask page is
credited to an agent whose outbox record let that very line out (or marked as the requester's own memory), each
message once, in "Based on", under "Who contributed" and in the DM copy; checked for an ask with one colleague, one
with two and a follow-up. An admin reads another member's ask without the asker's controls, and may not use them."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from bot.asks.read_models.ask_view import records_of
from bot.asks.read_models.transcripts import load_transcript
from bot.consent.outbox import Sent, Verdict
from bot.settings import Settings
from bot.store.db import Database
from tests.web.harness import QUESTION, app_for, post_form, sign_in, wait_for, web_settings


LINE_ID = re.compile(r"^\[([^\]]+)\]")
SOURCE_LINK = re.compile(r'class="source-link" href="[^"]*#msg-([^"]+)"')


@pytest.fixture
def app_settings(settings: Settings) -> Settings:
    return web_settings(settings, web_admins="erin")


@pytest.fixture
def client(app_settings: Settings) -> Iterator[TestClient]:
    with TestClient(app_for(app_settings)) as client:
        yield client


def _opened(page_url: str) -> int:
    match = re.search(r"/workspace/asks/(\d+)$", page_url)
    assert match, page_url
    return int(match[1])


def _finish(client: TestClient, ask_id: int) -> int:
    wait_for(lambda: client.get(f"/workspace/asks/{ask_id}/progress").json()["finished"] or None)
    return ask_id


def _ask(client: TestClient, colleagues: str, question: str) -> int:
    page = post_form(client, "/workspace/C-general", {"text": f"/ask-with @{colleagues} {question}"})
    return _finish(client, _opened(str(page.url)))


async def _outbox(settings: Settings, ask_id: int) -> tuple[list[Sent], dict[str, dict]]:
    """The outbox's stored records of an ask (every turn and closing statement) and its consensus evidence."""
    db = await Database.open(settings, migrate=False)
    try:
        record = await load_transcript(db, ask_id)
    finally:
        await db.engine.dispose()
    data = (record.consensus.data or {}) if record.consensus is not None else {}
    turns = [r for c in record.all_conversations() for t in c.turns for r in records_of(t.data)]
    sides = [r for side in data.get("sides", []) for r in records_of(side)]
    return [*turns, *sides], dict(data.get("evidence") or {})


def _passers(records: list[Sent]) -> dict[str, set[str]]:
    """Message id -> the members whose agent's record let that line out."""
    found: dict[str, set[str]] = {}
    for record in (r for r in records if r.verdict is Verdict.SENT):
        for line in record.sources:
            if match := LINE_ID.match(line):
                found.setdefault(match[1], set()).add(record.member)
    return found


def _credit_problems(view: dict, records: list[Sent], evidence: dict[str, dict]) -> list[str]:
    answer = view["answer"]
    requester = answer["requester"]
    names = {c["handle"]: c["name"] for c in answer["contributors"]}
    passers = _passers(records)
    problems = []
    listed = [("based on", s) for c in answer["claims"] for s in c["sources"]]
    listed += [(f"under {c['handle']}", s) for c in answer["contributors"] for s in c["sources"]]
    for where, source in listed:
        message_id = source["message_id"]
        assert message_id, source  # every source of these asks is one the requester can open
        sent_by = passers.get(message_id, set()) - {requester}
        own = source.get("requester_own", False)  # (views without the field credit every source to an agent)
        credited = set(source.get("credits", [])) | (set() if own else {source["via_name"]})
        if not credited <= {names.get(m, m) for m in sent_by}:
            problems.append(f"{where}: {message_id} credited to {sorted(credited)}, passed on by {sorted(sent_by)}")
        if own and evidence[message_id]["agent"] != requester:
            problems.append(f"{where}: {message_id} marked the requester's own, held by another agent")
        if where.startswith("under "):
            member = where.removeprefix("under ")
            if member not in passers.get(message_id, set()):
                problems.append(f"{where}: {message_id} listed, but no record of {member}'s agent let it out")
    for claim in answer["claims"]:
        ids = [s["message_id"] for s in claim["sources"]]
        if len(ids) != len(set(ids)):
            problems.append(f"based on: a message twice in {ids}")
    for contributor in answer["contributors"]:
        ids = [s["message_id"] for s in contributor["sources"]]
        if len(ids) != len(set(ids)):
            problems.append(f"under {contributor['handle']}: a message twice in {ids}")
    return problems


def _dm_card(client: TestClient, ask_id: int) -> str:
    feed = client.get("/workspace/D-alice-askwith/feed").text
    start = feed.index(f'class="dm-answer" data-ask="{ask_id}"')
    end = feed.find('class="dm-answer"', start + 1)
    return feed[start : end if end != -1 else len(feed)]


def test_every_source_is_credited_to_an_agent_that_passed_it_on_and_listed_once(
    client: TestClient, app_settings: Settings
) -> None:
    sign_in(client, "alice")
    one = _ask(client, "carol", QUESTION)
    two = _ask(client, "carol @bob", QUESTION)
    follow = post_form(client, f"/workspace/asks/{two}/follow-up", {"text": "When is that room booked?"})
    asks = {"one colleague": one, "two colleagues": two, "follow-up": _finish(client, _opened(str(follow.url)))}
    problems: dict[str, list[str]] = {}
    for name, ask_id in asks.items():
        view = client.get(f"/workspace/asks/{ask_id}?format=json").json()
        assert view["answer"]["status"] == "done" and view["answer"]["claims"], (name, view["answer"])
        records, evidence = asyncio.run(_outbox(app_settings, ask_id))
        found = _credit_problems(view, records, evidence)
        page = client.get(f"/workspace/asks/{ask_id}").text
        for claim in re.findall(r'<li class="claim">(.*?)</li>', page, re.S):
            if len(links := SOURCE_LINK.findall(claim)) != len(set(links)):
                found.append(f"page: based on lists a message twice: {links}")
        if len(links := SOURCE_LINK.findall(_dm_card(client, ask_id))) != len(set(links)):
            found.append(f"DM copy: a message twice: {links}")
        if found:
            problems[name] = found
    assert not problems, problems


def test_the_requesters_own_sources_are_marked_hers(client: TestClient) -> None:
    sign_in(client, "alice")
    ask_id = _ask(client, "carol @bob", QUESTION)  # the room is in Alice's own DM with Carol
    answer = client.get(f"/workspace/asks/{ask_id}?format=json").json()["answer"]
    own = [s for c in answer["claims"] for s in c["sources"] if s.get("requester_own")]
    assert own and all(s["via"] == "alice" for s in own)
    page = client.get(f"/workspace/asks/{ask_id}").text
    assert "from your own memory" in page and "via Alice Chen's agent" not in page


def test_an_admin_reads_another_members_ask_without_the_askers_controls(client: TestClient) -> None:
    sign_in(client, "alice")
    ask_id = _ask(client, "carol", QUESTION)
    client.cookies.clear()
    sign_in(client, "erin")  # an admin, not in the ask
    page = client.get(f"/workspace/asks/{ask_id}")
    assert page.status_code == 200 and 'id="answer"' in page.text
    assert not [c for c in ('id="vote-up"', 'id="vote-down"', 'id="follow-up"', 'id="cancel"') if c in page.text]
    refused = {
        "vote": post_form(client, f"/workspace/asks/{ask_id}/feedback", {"vote": "up"}).status_code,
        "follow-up": post_form(client, f"/workspace/asks/{ask_id}/follow-up", {"text": "mine now"}).status_code,
        "cancel": post_form(client, f"/workspace/asks/{ask_id}/cancel", {}).status_code,
    }
    assert refused == {"vote": 403, "follow-up": 403, "cancel": 403}
    client.cookies.clear()
    sign_in(client, "alice")  # the asker keeps hers
    mine = client.get(f"/workspace/asks/{ask_id}").text
    assert 'id="vote-up"' in mine and 'id="follow-up"' in mine
