"""Markdown (what the model writes) to Slack mrkdwn (what Slack renders), escaped so no text can ping or link.

Slack's mrkdwn is not Markdown: `*bold*` not `**bold**`, `_italic_`, `~strike~`, links `<url|label>`, no headings,
and `&`, `<`, `>` must be escaped (`&amp;` `&lt;` `&gt;`) or Slack reads them as control sequences (`<!channel>`).
Code spans and fenced blocks keep their contents verbatim (escaped only).

    to_mrkdwn("## Plan\\n**Ship** it & see [docs](https://x.y)")
    # "*Plan*\\n*Ship* it &amp; see <https://x.y|docs>"
"""

from __future__ import annotations

import re


FENCE = re.compile(r"^\s*```")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"\[([^\]]+)\]\((https?://[^\s)]+)\)")
BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
ITALIC_STAR = re.compile(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])")
STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
PLACEHOLDER = "\x00{}\x00"


def escape(text: str) -> str:
    """Slack's three control characters as entities (the only escaping Slack asks for)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_mrkdwn(markdown: str) -> str:
    lines: list[str] = []
    in_fence = False
    for line in (markdown or "").splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            lines.append("```")
        elif in_fence:
            lines.append(escape(line))
        else:
            lines.append(_line(line))
    if in_fence:  # an unclosed fence would swallow the rest of the message in Slack
        lines.append("```")
    return "\n".join(lines)


def _line(line: str) -> str:
    if match := HEADING.match(line):
        return f"*{_inline(match.group(1), bold_ok=False)}*"
    if match := BULLET.match(line):
        return f"{match.group(1)}• {_inline(match.group(2))}"
    return _inline(line)


def _inline(text: str, *, bold_ok: bool = True) -> str:
    kept: list[str] = []

    def keep(value: str) -> str:
        kept.append(value)
        return PLACEHOLDER.format(len(kept) - 1)

    # Code and links first, so their contents are not restyled; then escape everything else.
    text = CODE_SPAN.sub(lambda m: keep(f"`{escape(m.group(2))}`"), text)
    text = LINK.sub(lambda m: keep(f"<{_url(m.group(2))}|{escape(m.group(1)).replace('|', '/')}>"), text)
    text = escape(text)
    text = ITALIC_STAR.sub(lambda m: f"_{m.group(1)}_", text)
    text = BOLD.sub(lambda m: f"*{m.group(2)}*" if bold_ok else m.group(2), text)
    text = STRIKE.sub(lambda m: f"~{m.group(1)}~", text)
    return re.sub("\x00(\\d+)\x00", lambda m: kept[int(m.group(1))], text)


def _url(url: str) -> str:
    return url.replace("&", "&amp;").replace("<", "%3C").replace(">", "%3E").replace("|", "%7C")


def link(url: str, label: str) -> str:
    """A mrkdwn link whose label cannot break out of the link."""
    return f"<{_url(url)}|{escape(label).replace('|', '/')}>"
