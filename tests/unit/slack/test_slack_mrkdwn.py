"""Markdown to Slack mrkdwn: styles translated, Slack's control characters escaped, code kept verbatim."""

from __future__ import annotations

import pytest

from adapters.slack.mrkdwn import escape, link, to_mrkdwn


@pytest.mark.parametrize(
    ("markdown", "mrkdwn"),
    [
        ("**Ship** it", "*Ship* it"),
        ("__Ship__ it", "*Ship* it"),
        ("an *italic* word", "an _italic_ word"),
        ("~~old~~ new", "~old~ new"),
        ("## The plan", "*The plan*"),
        ("# **Loud** heading ##", "*Loud heading*"),
        ("- one\n* two\n  + nested", "• one\n• two\n  • nested"),
        ("see [the docs](https://example.com/a?b=1&c=2)", "see <https://example.com/a?b=1&amp;c=2|the docs>"),
        ("a & b < c > d", "a &amp; b &lt; c &gt; d"),
        ("<!channel> hello <@U123>", "&lt;!channel&gt; hello &lt;@U123&gt;"),
        ("use `a **b** <c>` here", "use `a **b** &lt;c&gt;` here"),
        ("```\nx = 1 < 2 & **y**\n```", "```\nx = 1 &lt; 2 &amp; **y**\n```"),
        ("```python\nopen fence", "```\nopen fence\n```"),
        ("2 * 3 * 4", "2 * 3 * 4"),
        ("", ""),
    ],
)
def test_markdown_becomes_escaped_mrkdwn(markdown: str, mrkdwn: str) -> None:
    assert to_mrkdwn(markdown) == mrkdwn


def test_nothing_markdown_only_survives() -> None:
    converted = to_mrkdwn("# Title\n**bold** and [link](https://x.example)")
    assert "**" not in converted and "#" not in converted and "](" not in converted


def test_a_link_label_cannot_break_out() -> None:
    assert link("https://x.example/?a=1|b", "a|b <c>") == "<https://x.example/?a=1%7Cb|a/b &lt;c&gt;>"
    assert escape("&<>") == "&amp;&lt;&gt;"


def test_stored_mentions_keep_a_readable_name_beside_the_id() -> None:
    from adapters.slack.convert import readable

    names = {"U123": "Bob"}
    assert readable("ask <@U123>, and <@U999|carol>; <@U777>", names) == (
        "ask @Bob (<@U123>), and @carol (<@U999>); <@U777>"
    )
