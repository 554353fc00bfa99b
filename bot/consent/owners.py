"""Whose words a text carries: a line keeps its owner after it left, and a requester's DM partners own their lines.

What a colleague's agent let out (its outbox records: the text and the memory lines it rests on) was approved, or
allowed, for the people its record named. When another agent passes those words on (the requester's agent in a
question to a third member, or in a later turn to another colleague), the owner's policy decides again for anyone
new. Likewise a line someone else wrote in a DM or private channel of the requester is theirs: it leaves the
requester's agent only as its author's policy allows. The outbox (`bot.consent.outbox`) asks; this module finds, for
each owner, the sentences of a text that carry their words (a run of `QUOTE_WORDS` words copied, or a sentence with
their line's rare terms: `bot.consent.paraphrase`) and who could read those words already.

    owners = Owners()
    owners.add("bob", "sent:3", "The launch date is 14 March.", readers={"alice", "carol"}, said=True)
    part = owners.carried("Bob's agent says it is 14 March.", known=[question], speaker="alice")["bob"]
    part.sentences, part.covers(["dave"])  # -> ["Bob's agent says it is 14 March."], False: dave never read it
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from bot.agents.agent import Agent
from bot.agents.roster import Authorship, Roster
from bot.base.text_fold import normalise, skeleton
from bot.consent.outgoing import line_text
from bot.consent.paraphrase import PrivateTerms
from bot.consent.screen import QuoteIndex
from bot.platform.port import SharePolicy


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_CITATION = re.compile(r"\[[^\]\s]*\d[^\]\s]*\]")  # "[m0000007]", "[alice:m0000001]": ids agents cite by
_ENDS = " \t.!?;:,"
RELAYED = "'s agent"  # a notebook line's `via` ending: relayed by that member's agent (theirs, not the reader's)


def sentences(text: str) -> list[str]:
    """The sentences of a text as it was written (split after . ! ? and at line ends)."""
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def normalised_sentences(text: str) -> frozenset[str]:
    """The sentences of a text as a reader takes them: look-alike letters and case folded, whitespace collapsed,
    citation ids and the closing punctuation dropped. Words and the punctuation between them stay: "The merger will
    not close at 450 million." and "The merger will. Close at 45" share no sentence."""
    folded = (" ".join(skeleton(_CITATION.sub(" ", s)).split()).strip(_ENDS) for s in sentences(text))
    return frozenset(s for s in folded if s)


@dataclass(frozen=True)
class _Line:
    owner: str
    text: str
    readers: frozenset[str]  # who could read it already (its owner included)
    said: bool  # what the owner's agent said (else a line the owner wrote in the requester's DM or channel)


@dataclass
class Carried:
    """The sentences of one text that carry one owner's words, and who could read those words already."""

    owner: str
    said: bool  # some of them are what the owner's agent said (its memory switch counts too)
    sentences: list[str] = field(default_factory=list)
    keys: set[str] = field(default_factory=set)  # the owner's lines they carry
    readers: list[frozenset[str]] = field(default_factory=list)  # per line carried

    def covers(self, audience: Iterable[str]) -> bool:
        """Everyone in `audience` (but the owner) could read every line carried already."""
        wanted = set(audience) - {self.owner}
        return all(wanted <= readers for readers in self.readers)

    def mixes_unread(self, others: Iterable[Carried]) -> bool:
        """These sentences also carry another owner's words that this owner never read: a prompt asking them would
        show those words to them."""
        mine = set(self.sentences)
        return any(o.owner != self.owner and mine & set(o.sentences) and not o.covers([self.owner]) for o in others)


class Owners:
    """The owned lines of one ask, by key; one instance per outbox."""

    def __init__(self) -> None:
        self._lines: dict[str, _Line] = {}

    def __contains__(self, key: str) -> bool:
        return key in self._lines

    def add(self, owner: str, key: str, text: str, *, readers: Iterable[str], said: bool) -> None:
        """`owner`'s line `key`; the same line read by more people (sent again) is readable by them all."""
        if not text.strip():
            return
        before = self._lines.get(key)
        seen = frozenset({owner, *readers} | (before.readers if before is not None else frozenset()))
        self._lines[key] = _Line(owner, text, seen, said or (before is not None and before.said))

    def widen(self, keys: Iterable[str], readers: Iterable[str]) -> frozenset[str]:
        """These lines were let out to `readers` too (their owner consented, or could not object): those people
        may read them again. Returns everyone who can read them all now."""
        everyone: set[str] | None = None
        for key in keys:
            line = self._lines[key]
            self._lines[key] = _Line(line.owner, line.text, line.readers | frozenset(readers), line.said)
            everyone = set(self._lines[key].readers) if everyone is None else everyone & self._lines[key].readers
        return frozenset(everyone or readers)

    def carried(self, text: str, *, known: Iterable[str], speaker: str) -> dict[str, Carried]:
        """owner -> what of `text` carries their words (owners other than `speaker`). `known`: text whose words are
        the speaker's own (the question, its member's own lines), never counted as anyone's."""
        lines = {key: line.text for key, line in self._lines.items() if line.owner != speaker}
        if not lines or not text.strip():
            return {}
        known = list(known)
        index = QuoteIndex(lines, known=known)
        terms = PrivateTerms(lines, known=known, permitted=set())
        found: dict[str, Carried] = {}
        for sentence in sentences(text):
            keys = {k for quote in index.quotes(normalise(sentence)) for k in quote.ids} | terms.leaked(sentence)
            for key in sorted(keys):
                line = self._lines[key]
                part = found.setdefault(line.owner, Carried(line.owner, line.said))
                part.said = part.said or line.said
                if sentence not in part.sentences:
                    part.sentences.append(sentence)
                if key not in part.keys:
                    part.keys.add(key)
                    part.readers.append(line.readers)
        return found


def carrying(text: str, lines: dict[str, str], *, known: Iterable[str]) -> list[str]:
    """The sentences of `text` that carry any of `lines` (a quote, or their rare terms): what of an agent's words
    rests on its member's memory, rather than on the question or the talk's own phrases."""
    if not lines or not text.strip():
        return []
    known = list(known)
    index = QuoteIndex(lines, known=known)
    terms = PrivateTerms(lines, known=known, permitted=set())
    return [s for s in sentences(text) if index.quotes(normalise(s)) or terms.leaks(s)]


class DmLines:
    """The requester's notebook lines someone else wrote in their DMs and private channels: their authors' lines,
    registered as such in `owners`, with their authors' policies read as they are now."""

    def __init__(self, roster: Roster, requester: str, owners: Owners) -> None:
        self.roster, self.requester, self.owners = roster, requester, owners
        self._authors: dict[str, Authorship | None] = {}  # line id -> who wrote it (None: the requester, or public)
        self.cleared: set[str] = set()  # owned lines (keys) their owners let reach the answer's channel

    async def authored(self, agent: Agent) -> dict[str, Authorship]:
        """line id -> its authors, for `agent`'s notebook (empty for any agent but the requester's)."""
        if agent.handle != self.requester:
            return {}
        own = [line for line in agent.notebook.lines.values() if not line.via.endswith(RELAYED)]
        fresh = [line.id for line in own if line.id not in self._authors]
        if fresh:
            found = await self.roster.private_authors(self.requester, fresh)
            self._authors.update({i: found.get(i) for i in fresh})
            for line in (line for line in own if found.get(line.id) is not None):
                for author in found[line.id].authors:
                    self.owners.add(author, f"line:{line.id}", line_text(line.render()),
                                    readers=found[line.id].readers, said=False)  # fmt: skip
        return {line.id: a for line in own if (a := self._authors.get(line.id)) is not None}

    async def withheld(self, agent: Agent) -> frozenset[str]:
        """The lines whose authors share nothing (`never`): no fact may cite them, so the share screen cuts them as
        it cuts anything else not passed on."""
        authored = await self.authored(agent)
        policies = await self._policies(authored)
        return frozenset(i for i, a in authored.items() if any(policies[x] is SharePolicy.NEVER for x in a.authors))

    async def keep_to(self, agent: Agent, channel: str) -> None:
        """The answer of a channel ask is written from the requester's notebooks and posted in `channel`: a line
        stays in them only when its authors' policies let it reach that channel (`auto`, or they approved it)."""
        authored = {i: a for i, a in (await self.authored(agent)).items() if f"line:{i}" not in self.cleared}
        policies = await self._policies(authored)
        for line_id, authorship in authored.items():
            if any(policies[a] is not SharePolicy.AUTO for a in authorship.authors):
                del agent.notebook.lines[line_id]
                agent.notebook.released.discard(line_id)

    async def _policies(self, authored: dict[str, Authorship]) -> dict[str, SharePolicy]:
        """Each author's policy as it is now; memory off shares nothing, as `never` does."""
        handles = {a for authorship in authored.values() for a in authorship.authors}
        profiles = await self.roster.profiles(handles)
        return {h: p.share if p.can_take_part else SharePolicy.NEVER for h, p in profiles.items()}
