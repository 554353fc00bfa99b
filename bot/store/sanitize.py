"""Text as the database can store it, without losing the message.

PostgreSQL refuses a NUL character in a text column and both engines choke on lone UTF-16 surrogates (what a
platform's JSON can carry as an escaped `\\ud83d` without its pair): one such message would fail a whole page.
Each offending character becomes U+FFFD (the replacement character); everything else is kept as it was.

    db_text("a\\x00b")  # "a\\ufffdb"
"""

from __future__ import annotations

import re


REPLACEMENT = "\ufffd"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def db_text(text: str) -> str:
    """`text` with NUL and lone surrogates replaced by U+FFFD (unchanged, and not copied, when there are none)."""
    return _UNSTORABLE.sub(REPLACEMENT, text) if _UNSTORABLE.search(text) else text
