"""How the consent oracle looks for a marked line in what someone saw: `bot.base.text_fold.skeleton`, computed with
translation tables instead of a Python loop over every character (the oracle folds every page, prompt and row it
reads; the tables are applied to the runs of non-ASCII text only, the ASCII between them needing none), and markers
matched with or without the spaces between their words (look-alike text joins words with
zero-width spaces, which the fold removes).

    carries("Pier\u200bNіne", "pier nine")   # True
"""

from __future__ import annotations

import html
import re
import sys
import unicodedata
from collections.abc import Callable

from bot.base.text_fold import _CONFUSABLES, _DASHES


def _dropping(drop: Callable[[str], bool]) -> dict[int, None]:
    """A `str.translate` table that removes every code point `drop` holds."""
    return dict.fromkeys(code for code in range(sys.maxunicode + 1) if drop(chr(code)))


_INVISIBLE = _dropping(lambda ch: unicodedata.category(ch) == "Cf")
_COMBINING = _dropping(lambda ch: unicodedata.combining(ch) != 0)
_OUTSIDE_ASCII = re.compile(r"[^\x00-\x7f]+")
assert min([*_INVISIBLE, *_COMBINING, *_CONFUSABLES]) > 0x7F, "a table that changes ASCII must see every character"


def _translate(text: str, table: dict[int, str | None]) -> str:
    """`text.translate(table)` for a table of non-ASCII code points: only the runs of non-ASCII text are looked up
    (a lookup per character of every page was most of the oracle's time; pages are nearly all ASCII)."""
    return _OUTSIDE_ASCII.sub(lambda run: run[0].translate(table), text)


def skeleton(text: str) -> str:
    """Exactly `bot.base.text_fold.skeleton(text)`."""
    decoded = html.unescape(html.unescape(str(text)))
    if decoded.isascii():  # no compatibility forms, invisibles, dashes, other scripts or accents to undo
        return decoded.lower()
    folded = _DASHES.sub("-", _translate(unicodedata.normalize("NFKC", decoded), _INVISIBLE)).casefold()
    return _translate(unicodedata.normalize("NFKD", _translate(folded, _CONFUSABLES)), _COMBINING)


def carries(seen: str, marker: str) -> bool:
    """Whether a folded text holds the marker (a folded phrase), its words spaced or run together."""
    return marker in seen or (" " in marker and marker.replace(" ", "") in seen.replace(" ", ""))
