"""Text as a screen should compare it: one spelling for the many ways chat text can write the same words.

Untrusted text (chat messages, model output) can hide a word from an exact comparison with compatibility forms
(fullwidth `＜`, ligatures), invisible characters (zero-width spaces, bidi controls), HTML entities (`&lt;`), Unicode
dashes (`‐`) or letters of another script that look the same (Cyrillic `а` for Latin `a`). Every screen that compares
untrusted text, the share screen and the prompt's data markers alike, reads it through these functions.

    fold("Ｄａｖｅ&#39;s\u200b ＤＭ")  # -> "dave's dm"
    skeleton("Саrоl")                # -> "carol" (Cyrillic С, а, о read as Latin)
"""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache


# Letters of other scripts drawn like a Latin letter (Unicode's confusables, the common subset): read as that letter.
_CONFUSABLES = str.maketrans({
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
    "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "ԁ": "d", "ɡ": "g", "һ": "h", "ӏ": "l", "ԛ": "q",
    "ԝ": "w", "ү": "y", "ӧ": "o", "ѡ": "w",
    # Greek
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u",
    "χ": "x", "γ": "y", "ω": "w", "ϲ": "c", "ϳ": "j",
    # Latin look-alikes
    "ı": "i", "ȷ": "j", "ℓ": "l", "ſ": "s",
})  # fmt: skip
# Dashes and hyphens of every kind read as "-".
_DASHES = re.compile(r"[\u2010-\u2015\u2212\u2E3A\u2E3B\uFE58\uFE63\uFF0D\u00AD]")


def strip_invisible(text: str) -> str:
    """Without format characters (zero-width spaces and joiners, bidi controls, soft hyphens, BOMs): Unicode's Cf
    category, which draws nothing."""
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def normalise(text: str) -> str:
    """The text as it reads: HTML entities decoded (twice, for `&amp;lt;`), NFKC (fullwidth and compatibility forms
    to their plain letters), invisible characters removed, every dash a `-`. Case and script are kept."""
    decoded = html.unescape(html.unescape(str(text)))
    if decoded.isascii():  # NFKC leaves ASCII as it is, and no format character nor dash above is ASCII
        return decoded
    return _DASHES.sub("-", strip_invisible(unicodedata.normalize("NFKC", decoded)))


def fold(text: str) -> str:
    """`normalise`, then case-folded: what two texts are compared as when case does not matter."""
    return normalise(text).casefold()


def as_latin(text: str) -> str:
    """Letters of other scripts drawn like Latin ones read as those, one character for one (same length and places)."""
    return text.translate(_CONFUSABLES)


def skeleton(text: str) -> str:
    """`fold`, then letters of other scripts drawn like Latin ones read as those, and accents dropped: two texts with
    the same skeleton look the same to a reader."""
    folded = fold(text).translate(_CONFUSABLES)
    decomposed = unicodedata.normalize("NFKD", folded)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


_SUFFIXES = (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""), ("e", ""))


@lru_cache(maxsize=1 << 16)  # a prompt's words recur turn after turn: each is stemmed once (a pure function)
def stem(word: str) -> str:
    """A crude stem, the same for "hike", "hikes" and "hiking", "cry" and "crying" (suffixes stripped until none is
    left, never below three letters)."""
    for _ in range(3):
        for suffix, replacement in _SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)] + replacement
                break
        else:
            return word
    return word


def stems_of(text: str) -> set[str]:
    """The stems of a lower-cased text's words."""
    return {stem(w) for w in re.findall(r"[a-z0-9]+", text)}
