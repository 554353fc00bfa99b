from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.memory.sessions import SessionLine, content_hash, session_key, sessionize, split_sessions


T0 = datetime(2026, 11, 16, 9, 0, tzinfo=UTC)
GAP = timedelta(minutes=30)


def line(message_id: int, minutes: float, sender: str = "alice", text: str = "hi") -> SessionLine:
    return SessionLine(message_id, sender, T0 + timedelta(minutes=minutes), text)


def ids(runs: list[list[SessionLine]]) -> list[list[int]]:
    return [[entry.message_id for entry in run] for run in runs]


def test_a_silence_longer_than_the_gap_starts_a_new_session() -> None:
    lines = [line(1, 0), line(2, 10), line(3, 40), line(4, 71), line(5, 101)]
    # 2 -> 3 is exactly 30 minutes (not longer): same session; 3 -> 4 is 31 minutes: new session.
    assert ids(split_sessions(lines, gap=GAP, max_messages=40)) == [[1, 2, 3], [4, 5]]


def test_sessions_are_cut_at_the_maximum_size() -> None:
    lines = [line(i, i) for i in range(1, 8)]
    assert ids(split_sessions(lines, gap=GAP, max_messages=3)) == [[1, 2, 3], [4, 5, 6], [7]]


def test_gap_and_size_cuts_combine() -> None:
    lines = [line(1, 0), line(2, 1), line(3, 2), line(4, 100), line(5, 101)]
    assert ids(split_sessions(lines, gap=GAP, max_messages=2)) == [[1, 2], [3], [4, 5]]


def test_no_messages_no_sessions_and_a_bad_size_is_refused() -> None:
    assert split_sessions([], gap=GAP, max_messages=5) == []
    with pytest.raises(ValueError):
        split_sessions([line(1, 0)], gap=GAP, max_messages=0)


def test_appending_messages_changes_only_the_last_session() -> None:
    before = sessionize(7, [line(i, i * 20) for i in range(1, 6)], gap=GAP, max_messages=2)
    after = sessionize(7, [line(i, i * 20) for i in range(1, 8)], gap=GAP, max_messages=2)
    assert [s.key for s in before[:-1]] == [s.key for s in after[: len(before) - 1]]
    assert before[-1].key != after[len(before) - 1].key  # the last session grew: a new key


def test_session_key_is_deterministic_and_depends_on_channel_and_exact_messages() -> None:
    assert session_key(3, [1, 2, 3]) == session_key(3, [1, 2, 3])
    assert len(session_key(3, [1, 2, 3])) == 64
    assert session_key(3, [1, 2, 3]) != session_key(4, [1, 2, 3])
    assert session_key(3, [1, 2, 3]) != session_key(3, [1, 2])
    assert session_key(3, [12, 3]) != session_key(3, [1, 23])


def test_content_hash_depends_on_senders_and_texts_only() -> None:
    a = [line(1, 0, "ross", "we were on a break"), line(2, 1, "rachel", "no we were not")]
    same_words_elsewhere = [line(90, 500, "ross", "we were on a break"), line(91, 900, "rachel", "no we were not")]
    other_sender = [line(1, 0, "joey", "we were on a break"), line(2, 1, "rachel", "no we were not")]
    other_text = [line(1, 0, "ross", "we were on a break!"), line(2, 1, "rachel", "no we were not")]
    assert content_hash(a) == content_hash(same_words_elsewhere)
    assert content_hash(a) != content_hash(other_sender)
    assert content_hash(a) != content_hash(other_text)


def test_content_hash_does_not_confuse_different_line_splits() -> None:
    one = [line(1, 0, "ross", "hi\nrachel: hello")]
    two = [line(1, 0, "ross", "hi"), line(2, 0, "rachel", "hello")]
    assert content_hash(one) != content_hash(two)


def test_sessionize_gives_spans_with_keys_hashes_and_times() -> None:
    spans = sessionize(5, [line(1, 0), line(2, 5), line(3, 120)], gap=GAP, max_messages=40)
    assert [s.message_ids for s in spans] == [[1, 2], [3]]
    assert spans[0].key == session_key(5, [1, 2])
    assert spans[0].content_hash == content_hash(spans[0].lines)
    assert (spans[0].first_ts, spans[0].last_ts) == (T0, T0 + timedelta(minutes=5))
    assert all(s.channel_id == 5 for s in spans)
