"""Turning an agent's keywords into full-text search terms that can never carry query syntax.

A keyword is reduced to its words (runs of letters and digits, lower-cased): quotes, `*`, `-`, `:`, parentheses,
`NEAR`-style operators and SQL punctuation are separators, exactly as the FTS tokenizers treat them, so what is left
is plain words. A keyword of several words is a phrase and stays whole. Keywords made only of stop words are dropped
(PostgreSQL's english configuration drops them anyway; SQLite would otherwise match half the workspace for "the").

    terms = search_terms(["Coffee", "central perk", "the"])   # (("coffee",), ("central", "perk"))
    fts5_expression(terms)                                     # 'text : ("coffee" OR "central perk")'
    tsquery_expression(terms)                                  # "('coffee') | ('central' <-> 'perk')"
    coordination_stems(terms)                                  # ('coffee', 'central')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from bot.base.text_fold import stem
from bot.errors import MemoryQueryError


Phrase = tuple[str, ...]

WORD = re.compile(r"[^\W_]+")  # letters and digits; like FTS5's unicode61 tokenizer, "_" separates words
# PostgreSQL's english stop-word list (snowball), so both engines ignore the same words.
STOP_WORDS = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself
    it its itself they them their theirs themselves what which who whom this that these those am is are was were be
    been being have has had having do does did doing a an the and but if or because as until while of at by for with
    about against between into through during before after above below to from up down in out on off over under
    again further then once here there when where why how all any both each few more most other some such no nor not
    only own same so than too very s t can will just don should now
    """.split()
)
MAX_KEYWORDS = 32  # counted after stop words are dropped: every one is a content word or phrase
MAX_PHRASE_WORDS = 8
# "John's", "don't", "we're": the ending after an apostrophe is no word of its own (the index would read "john s").
APOSTROPHE_ENDING = re.compile(r"(?<=[^\W_])['’](?:s|t|re|ve|ll|d|m)\b", re.IGNORECASE)


def phrase_of(keyword: str) -> Phrase:
    """The words of one keyword, lower-cased, possessive and contraction endings dropped, at most
    MAX_PHRASE_WORDS of them."""
    return tuple(word.lower() for word in WORD.findall(APOSTROPHE_ENDING.sub("", keyword)))[:MAX_PHRASE_WORDS]


def search_terms(keywords: Iterable[str]) -> tuple[Phrase, ...]:
    """The distinct phrases to search for, in the order given.

    Raises MemoryQueryError when no keyword holds a single word: that is a malformed query, not an empty result.
    Returns () when every keyword is a stop word (nothing meaningful to look for).
    """
    phrases = [p for p in (phrase_of(k) for k in keywords if isinstance(k, str)) if p]
    if not phrases:
        raise MemoryQueryError("A clear-memory search needs at least one keyword made of letters or digits.")
    meaningful = [p for p in phrases if not all(word in STOP_WORDS for word in p)]
    return tuple(dict.fromkeys(meaningful))[:MAX_KEYWORDS]


def fts5_expression(phrases: Iterable[Phrase], scope_channels: Sequence[int] = ()) -> str:
    """An FTS5 MATCH expression OR-ing quoted phrases in the `text` column, and, when `scope_channels` are given,
    requiring one of their scope tokens too (see migration 0004_scoped_fts).

    Inside double quotes FTS5 reads only tokens, never operators; the words are letters and digits already, and
    quotes are doubled anyway as a second line of defence.
    """
    quoted = ['"' + " ".join(phrase).replace('"', '""') + '"' for phrase in phrases]
    expression = "text : (" + " OR ".join(quoted) + ")"
    if scope_channels:
        expression += " AND scope : (" + " OR ".join(scope_token(c) for c in scope_channels) + ")"
    return expression


def scope_token(channel_id: int) -> str:
    """The token migration 0004_scoped_fts indexes for a message of this channel."""
    return f"c{int(channel_id)}"


def tsquery_expression(phrases: Iterable[Phrase]) -> str:
    """A PostgreSQL to_tsquery() input OR-ing phrases whose words follow each other (<->). Every word is letters and
    digits only and single-quoted, so the text holds no operator but the ones written here."""
    return " | ".join("(" + " <-> ".join(f"'{word}'" for word in phrase) + ")" for phrase in phrases)


def coordination_stems(phrases: Iterable[Phrase]) -> tuple[str, ...]:
    """What the store's `message_search_sql.coordination` looks for in a message's text, one per phrase: the crude
    stem of its longest word ("hiking" -> "hik", found in "hike" and "hikes"); phrases of one stem count once."""
    return tuple(dict.fromkeys(stem(max(phrase, key=len)) for phrase in phrases))
