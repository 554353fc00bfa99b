"""The answer embed stays within Discord's limits however long the answer is, and renders each kind of source."""

from __future__ import annotations

from adapters.discord.answer_embeds import MAX_FIELDS, answer_embed, chat_text
from bot.asks.read_models.answer_view import AnswerView, ClaimView, ContributorView, SourceView
from tests.fakes.discord_limits import check_embeds


def jump(source: SourceView) -> str:
    return f"https://discord.com/channels/1/{source.channel_id}/{source.message_id}"


def visible(i: int) -> SourceView:
    return SourceView("bob", "Bob", True, f"line {i}", "general", "bob", "2026-03-01 09:00", "10", str(100 + i))


QUOTED = SourceView("bob", "Bob", False, "the *launch* moved to @Erin (<@55>)'s date", "launch", "erin", "09:05")
WITHHELD = SourceView("dave", "Dave", False, None, None, None, None)


def view(answer: str, claims: list[ClaimView], **more: object) -> AnswerView:
    return AnswerView(
        ask_id=7, status="done", question="When?", requester="alice", answer=answer, failure=None, claims=claims,
        contributors=[
            ContributorView("bob", "Bob", ["x"], [visible(7), QUOTED], False),
            ContributorView("dave", "Dave", [], [WITHHELD], True),
        ],
        **more,  # type: ignore[arg-type]
    )  # fmt: skip


def test_each_kind_of_source_renders_as_a_link_a_quote_or_a_withheld_note() -> None:
    embed = answer_embed(
        view("**14 March**", [ClaimView("launch: 14 March", [visible(1), QUOTED, WITHHELD])]), permalink=jump
    )
    data = embed.to_dict()
    check_embeds([data])
    assert data["description"] == "**14 March**", "the model's markdown is kept"
    assert data["author"]["name"] == "Asked: When?", "the answer says what it answers"
    sources = data["fields"][0]["value"].splitlines()
    assert (
        sources[0] == "\u2022 [\\#general \u00b7 bob \u00b7 2026-03-01 09:00](https://discord.com/channels/1/10/101)"
    )
    assert sources[1] == "\u2022 > \u201cthe \\*launch\\* moved to @Erin's date\u201d \u2014 shared by Bob's agent"
    assert sources[2] == "\u2022 (a message Dave's agent relied on; not shown to you)"
    assert data["fields"][1] == {
        "name": "Who contributed",
        "value": "\u2022 Bob's agent: 2 sources "
        "[\\#general \u00b7 bob \u00b7 2026-03-01 09:00](https://discord.com/channels/1/10/107)\n"
        "\u2022 Dave's agent (brought in): 1 source",
        "inline": False,
    }
    assert data["footer"]["text"] == "ask #7 \u00b7 askwith transcripts show 7"


def test_a_huge_answer_fits_discords_limits_and_says_what_was_left_out() -> None:
    claims = [ClaimView(f"claim {i} " + "x" * 400, [visible(j) for j in range(30)]) for i in range(40)]
    data = answer_embed(view("y" * 9000, claims, disagreements=["z" * 2000] * 3), permalink=jump).to_dict()
    check_embeds([data])  # raises as Discord's 400/50035 would
    assert len(data["description"]) <= 4096 and len(data["fields"]) <= MAX_FIELDS
    total = len(data["title"]) + len(data["description"]) + len(data["footer"]["text"])
    total += sum(len(f["name"]) + len(f["value"]) for f in data["fields"])
    assert total <= 6000
    assert data["fields"][-1]["name"] == "More" and "more part(s)" in data["fields"][-1]["value"]
    assert any("more (see the transcript)" in f["value"] for f in data["fields"]), "long source lists are counted"


def test_chat_text_shows_stored_mentions_by_name_and_escapes_markdown() -> None:
    assert chat_text("ping @Bob (<@123>) about __this__") == "ping @Bob about \\_\\_this\\_\\_"


def test_an_answer_posted_where_others_read_it_quotes_nothing_and_names_no_private_place() -> None:
    full = view("14 March", [ClaimView("launch: 14 March", [visible(1), QUOTED, WITHHELD])])
    assert full.released_quotes == [QUOTED], "only the released line the asker cannot open goes by DM"
    shared = full.for_shared_place()
    assert not shared.released_quotes and full.released_quotes, "the asker's own copy keeps its quotes"
    sources = answer_embed(shared, permalink=jump).to_dict()["fields"][0]["value"]
    assert "launch" not in sources and "erin" not in sources.lower() and "general" not in sources
    assert "https://discord.com/channels/1/10/101" in sources, "a message the asker may open stays a link"
    assert sources.count("Bob's agent relied on") == 1 and "Dave's agent relied on" in sources


def test_an_answer_whose_sources_the_asker_can_open_sends_no_quotes_by_dm() -> None:
    own = view("14 March", [ClaimView("launch: 14 March", [visible(1)])])
    assert own.sources[0].text, "a visible source carries its line"
    assert not own.released_quotes, "the link opens it: no copy by DM"
