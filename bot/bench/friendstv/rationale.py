"""Rationales: the chat line holding an answer of a FriendsQA question, and who can see it.

An answer's utterance is matched to a chat line of its scene by character similarity of the spoken words (stage
directions removed on both sides, so a line of stage directions only matches nothing). The answer must then be
readable in that chat line: its words are in the line, or it names the line's speaker (the sender of the messages).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from bot.bench.friendstv.alignment import ChatLine, spoken
from bot.bench.friendstv.friendsqa import Answer, Question, squash
from bot.store.world import World


MIN_RATIO = 0.75  # character similarity for an answer utterance to match a chat line of its scene


EPISODE_MIN_CHARS = 15  # an utterance not found in its scene is looked up episode-wide only when this long
EPISODE_RATIO = 0.85  # ... and only this similar (scene ids of the partial train subset can be off by one)


@dataclass(frozen=True)
class Rationale:
    question: Question
    answers: tuple[Answer, ...]  # the question's answers this line holds (annotators marked different spans)
    line: ChatLine
    speaker: str  # member id of the line's sender
    viewers: frozenset[str]  # the named humans among the sender and listeners: whose DMs hold the line
    everyone: frozenset[str] = frozenset()  # the sender and every listener, human or not

    @property
    def answer(self) -> Answer:
        return self.answers[0]


def best_line(utterance: str, lines: list[ChatLine], *, min_ratio: float = MIN_RATIO) -> ChatLine | None:
    target = squash(spoken(utterance))
    if not target:
        return None  # a stage direction only: nothing in the chat to match it to
    best, best_ratio = None, min_ratio
    for line in lines:
        said = squash(spoken(line.text))
        if not said:
            continue
        ratio = difflib.SequenceMatcher(None, target, said, autojunk=False).ratio()
        if ratio >= best_ratio:
            best, best_ratio = line, ratio
    return best


def readable_in(answer: Answer, line: ChatLine, speaker_name: str) -> bool:
    """The answer can be read from the chat line: its words are in it, or it is the line's speaker."""
    wanted = squash(answer.text)
    if not wanted:
        return False
    if answer.is_speaker:
        first = squash(speaker_name.split(" ")[0])
        return bool(first) and wanted.startswith(first)
    return wanted in squash(line.text)


def line_of(utterance: str, scene_lines: list[ChatLine], episode_lines: list[ChatLine]) -> ChatLine | None:
    found = best_line(utterance, scene_lines)
    if found is None and len(squash(spoken(utterance))) >= EPISODE_MIN_CHARS:
        found = best_line(utterance, episode_lines, min_ratio=EPISODE_RATIO)
    return found


def rationales_of(
    world: World,
    question: Question,
    lines: tuple[list[ChatLine], list[ChatLine]],  # the scene's chat lines, the episode's
    sender_of: dict[str, tuple[str, str]],  # message id -> (sender, channel)
    humans: frozenset[str],  # the members who can hold a rationale (`people.named_humans`)
) -> list[Rationale]:
    """One rationale per chat line of the scene that readably holds some answer of `question`."""
    by_line: dict[ChatLine, list[Answer]] = {}
    for answer in question.answers:
        line = line_of(answer.utterance, *lines)
        if line is None:
            continue
        speaker = sender_of[line.message_ids[0]][0]
        if readable_in(answer, line, world.members[speaker].display_name):
            by_line.setdefault(line, []).append(answer)
    found = []
    for line, answers in by_line.items():
        speaker = sender_of[line.message_ids[0]][0]
        channels = [world.channels[sender_of[mid][1]] for mid in line.message_ids]
        everyone = frozenset(m for channel in channels for m in channel.member_ids)
        found.append(Rationale(question, tuple(answers), line, speaker, everyone & humans, everyone))
    return found
