"""The paraphrase screen: a sentence that names the rare terms of a memory line it may not pass on is cut.

Exact word runs (`bot.consent.screen.QuoteIndex`) miss a reworded line: "Bob earns 91,000 and is interviewing" shares
no four words in a row with "my salary is 91,000 and I am interviewing elsewhere". What a rewording keeps is the
line's rare terms (names, numbers, unusual words). So every text is read through `bot.base.text_fold.skeleton` (NFKC,
invisible characters, entities, case, look-alike letters), its words crudely stemmed, and a sentence is cut when it
shares `CUT_WEIGHT` or more with one line that is not cited evidence about the question (a number, or a term no other
line has, counts double: alone it is enough).
Terms the other side already has (the question, what was said), terms of the lines that may be passed on, and terms
common in the member's memory are no secret and never count.

    terms = PrivateTerms(lines, known=[question], permitted={"m1"})
    terms.cut("Bob earns 91,000.", cut="[…]")  # -> "[…]"

What it cannot catch: a paraphrase that keeps none of the line's rare terms (a synonym for every word), or one
secret spread thinly over many sentences. `share=ask` exists for members who need more than a screen.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

from bot.base.text_fold import normalise, skeleton


CUT_WEIGHT = 2  # shared rare terms (a number counts 2) that make a sentence a paraphrase of a line
STEM = 6  # characters a term is compared on ("interviewing" ~ "interview")
COMMON_SHARE = 3  # a term in more than 1/COMMON_SHARE of the member's lines (and at least 4 of them) is common
SUBSTRING = 5  # a term this long is also found inside run-together words ("isinterviewingatquorvex")
_WORD = re.compile(r"\w+")
_NON_WORD = re.compile(r"[\W_]+")
_CITATION = re.compile(r"\[[^\]\s]*\]")
_SENTENCE = re.compile(r"[^.!?;\n]*(?:[.!?;\n]+|$)")
_LINE_HEAD = re.compile(r"^\[[^\]]+\]\s*(?:#\S+ \S+ \S+ [^:]*: )?")
_FUNCTION = frozenset(
    "about after also been before being both come does done from going good great have here just know like make more "
    "most much need only other over please said same should some such take than thank thanks that them then there "
    "these they think this today very want what when where which while will with would your their agent agents".split()
)


@lru_cache(maxsize=16_384)
def terms(text: str) -> frozenset[str]:
    """The rare-term candidates of `text`: stemmed skeleton words of 4+ letters, and numbers of 2+ digits."""
    found = set()
    for word in _WORD.findall(skeleton(text)):
        if any(ch.isdigit() for ch in word):
            if len(word) >= 2:
                found.add(word)
        elif len(word) >= 4 and word not in _FUNCTION:
            found.add(word[:STEM])
    return frozenset(found)


@lru_cache(maxsize=16_384)
def line_terms(line: str) -> frozenset[str]:
    """`terms` of a memory line's text, without its id, channel, time and sender (a line is screened many times)."""
    return terms(_LINE_HEAD.sub("", line))


class PrivateTerms:
    """The rare terms of the lines an agent may not pass on, per line, with their weights."""

    def __init__(self, lines: dict[str, str], *, known: Iterable[str], permitted: set[str]) -> None:
        bodies = {i: line_terms(line) for i, line in lines.items()}
        df = Counter(t for body in bodies.values() for t in body)
        common = {t for t, n in df.items() if n >= 4 and n * COMMON_SHARE > len(bodies)}
        free = common.union(*(terms(text) for text in known), *(bodies[i] for i in permitted if i in bodies))
        # A term found in one line only names that line's matter (a name, an unusual word): alone it is enough.
        self.secret = {
            i: {t: 2 if df[t] == 1 or t[0].isdigit() else 1 for t in body - free}
            for i, body in bodies.items()
            if i not in permitted and body - free
        }
        # The terms long enough to be looked for inside run-together words, each once (many lines share a term).
        self._long = [term for term in set().union(*self.secret.values()) if len(term) >= SUBSTRING]

    def leaks(self, sentence: str) -> bool:
        return bool(self.leaked(sentence, first=True))

    def leaked(self, sentence: str, *, first: bool = False) -> set[str]:
        """The lines whose rare terms `sentence` carries (with `first`, at most one: whether it leaks at all)."""
        sentence = _CITATION.sub(" ", sentence)  # "[alice:m0000001]" names a source, not what it says
        said = terms(sentence)
        # Words run together or split by invisible or odd characters still hold the term as a substring.
        squashed = _NON_WORD.sub("", skeleton(sentence))
        held = said.union([t for t in self._long if t in squashed])
        found = set()
        for line_id, body in self.secret.items():
            if not body.keys().isdisjoint(held) and sum(body[t] for t in body.keys() & held) >= CUT_WEIGHT:
                found.add(line_id)
                if first:
                    break
        return found

    def cut(self, text: str, *, cut: str) -> str:
        """`text` (normalised) with every sentence that paraphrases a secret line replaced by `cut`."""
        text = normalise(text)
        if not self.secret:
            return text
        return "".join(cut + " " if self.leaks(m[0]) else m[0] for m in _SENTENCE.finditer(text)).strip()
