"""Member pages speak to people: no record ids, schema words, token counts or worker states in what a member reads
of a finished ask (with one colleague and with two), technical detail only behind a disclosure; and every page leads
on: the note that an ask started links to its page, the transcript links back to it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser

import pytest
from starlette.testclient import TestClient

from bot.asks.progress import Stage
from bot.settings import Settings
from bot.texts import progress_texts
from tests.web.harness import QUESTION, app_for, ask_and_wait, sign_in, web_settings


INTERNAL_ID = re.compile(r"\bm\d{7}\b|\b\w+:m\d+\b|\balice:")
SCHEMA_WORDS = ("plans_complete", "json_schema", "budget_tokens", "schema")
WORKER_STATES = ("free worker", "claimed", "lease")
TECHNICAL = re.compile(r"\btokens?\b|\bcost\b|\bLLM calls?\b|\bprompt_tokens\b", re.IGNORECASE)


class _VisibleText(HTMLParser):
    """A page's text as a reader sees it (no script, style or attribute), split into what is in the open and what is
    behind a technical disclosure (`<details class="technical">`, summary included: a folded long text or what an
    agent said is in the open, whether folded or not)."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.technical: list[str] = []
        self._skip = 0
        self._details: list[bool] = []  # for each <details> we are in: whether it is technical

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._skip += tag in ("script", "style")
        if tag == "details":
            self._details.append("technical" in (dict(attrs).get("class") or "").split())

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("script", "style") and self._skip > 0
        if tag == "details" and self._details:
            self._details.pop()

    def handle_data(self, data: str) -> None:
        if not self._skip:
            (self.technical if any(self._details) else self.open).append(data)


def visible(html: str) -> tuple[str, str]:
    """(text in the open, text behind technical disclosures)."""
    parser = _VisibleText()
    parser.feed(html)
    return " ".join(" ".join(parser.open).split()), " ".join(" ".join(parser.technical).split())


def _prose(data: object) -> list[str]:
    """The texts of a JSON view meant to be read: not ids or links (keys naming an id, paths), nor the plain-text
    chat post (`final_text`, what a platform DM carries)."""
    if isinstance(data, dict):
        kept = [v for k, v in data.items() if k != "final_text" and not k.endswith(("id", "ids"))]
        return [t for v in kept for t in _prose(v)]
    if isinstance(data, list):
        return [t for v in data for t in _prose(v)]
    return [data] if isinstance(data, str) and not data.startswith("/") else []


def _internals(text: str, *, wording: bool = True) -> list[str]:
    found = [m[0] for m in INTERNAL_ID.finditer(text)]
    if wording:
        lowered = text.lower()
        found += [w for w in (*SCHEMA_WORDS, *WORKER_STATES) if w in lowered]
    return found


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(app_for(web_settings(settings))) as client:
        yield client


@pytest.mark.parametrize("colleagues", [["carol"], ["carol", "bob"]], ids=["one-colleague", "two-colleagues"])
def test_every_member_page_of_a_finished_ask_reads_as_plain_words(client: TestClient, colleagues: list[str]) -> None:
    sign_in(client, "alice")
    ask_id = ask_and_wait(client, "alice", " @".join(colleagues), QUESTION)
    pages = {
        "ask page": f"/workspace/asks/{ask_id}",
        "transcript": f"/asks/{ask_id}",
        "my conversations": "/conversations",
        "settings": "/settings",
        "channel with the note": "/workspace/C-general",
        "DM with the answer": "/workspace/D-alice-askwith",
    }
    problems: dict[str, object] = {}
    for viewer in ("alice", *colleagues):
        client.cookies.clear()
        sign_in(client, viewer)
        for name, path in pages.items():
            response = client.get(path)
            if response.status_code != 200:
                assert viewer != "alice" and response.status_code in (403, 404), (viewer, name, response.status_code)
                continue
            shown, _ = visible(response.text)
            if found := _internals(shown):
                problems[f"{viewer}: {name}: internals"] = sorted(set(found))
            if technical := sorted({m[0].lower() for m in TECHNICAL.finditer(shown)}):
                problems[f"{viewer}: {name}: technical detail in the open"] = technical
        json_page = client.get(f"/workspace/asks/{ask_id}?format=json")
        if json_page.status_code == 200 and (ids := _internals(" ".join(_prose(json_page.json())), wording=False)):
            problems[f"{viewer}: ask page JSON: ids"] = sorted(set(ids))
    assert not problems, json.dumps(problems, indent=1)


def test_the_note_links_to_the_asks_page_and_the_transcript_links_back(client: TestClient) -> None:
    sign_in(client, "alice")
    ask_id = ask_and_wait(client, "alice", "carol", QUESTION)
    note = re.search(r'<div class="box ephemeral note".*?</div>', client.get("/workspace/C-general/feed").text, re.S)
    assert note and "Your agent is asking" in note[0], note
    assert f'href="/workspace/asks/{ask_id}"' in note[0] and "My settings" not in note[0], note[0]
    assert f'href="/workspace/asks/{ask_id}"' in client.get(f"/asks/{ask_id}").text
    shown, technical = visible(client.get(f"/asks/{ask_id}").text)
    assert "LLM calls" not in shown and "LLM calls" in technical  # one click away
    assert "clear memory query" not in shown and "clear memory query" in technical


def test_no_stage_of_an_ask_names_the_workers_machinery() -> None:
    for stage in Stage:
        for name in ("", "Carol Díaz"):
            text = progress_texts.progress_stage(stage.value, name)
            assert not _internals(text), (stage, text)


def test_the_sample_workspace_has_an_admin_and_a_member_is_told_plainly(client: TestClient) -> None:
    sign_in(client, "erin")  # the sample workspace file names her its admin
    assert client.get("/admin").status_code == 200
    client.cookies.clear()
    sign_in(client, "alice")
    refused = client.get("/admin")
    assert refused.status_code == 403 and "Only workspace admins can open this page." in refused.text
    assert "ASKWITH" not in refused.text
