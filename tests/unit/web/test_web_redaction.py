"""The hit-redaction rule: a viewer reads a hit only from their own memory or from a channel they belong to."""

from __future__ import annotations

from bot.asks.read_models.redaction import Hit, may_read_hit, redact_hits, withheld_label
from bot.web.access import Identity, is_admin, may_open


BOB_DM_WITH_ERIN = 11
GENERAL = 1
ALICE_CHANNELS = frozenset({GENERAL, 12})
HITS = [
    Hit("m1", GENERAL, "general", "carol", text="Standup moved to 10."),
    Hit("m2", BOB_DM_WITH_ERIN, "bob-erin", "erin", text="The launch date moved to 14 March."),
    Hit("session:abc", BOB_DM_WITH_ERIN, "bob-erin", text="Bob and Erin discuss the launch."),
    Hit("m3", None),  # the message is gone
]


def test_the_member_whose_memory_was_searched_reads_every_existing_hit() -> None:
    redacted = redact_hits("bob", "bob", HITS, frozenset({GENERAL, BOB_DM_WITH_ERIN}))
    assert [h.id for h in redacted.shown] == ["m1", "m2", "session:abc"]
    assert redacted.withheld == 1 and redacted.total == 4


def test_another_viewer_reads_only_hits_in_their_own_channels_and_counts_the_rest() -> None:
    redacted = redact_hits("alice", "bob", HITS, ALICE_CHANNELS)
    assert [h.id for h in redacted.shown] == ["m1"]
    assert redacted.withheld == 3 and redacted.owner == "bob"
    assert all("14 March" not in h.text for h in redacted.shown)


def test_a_viewer_with_no_channels_there_sees_only_counts() -> None:  # e.g. an admin from another workspace
    redacted = redact_hits("", "bob", HITS, frozenset())
    assert redacted.shown == () and redacted.withheld == 4


def test_a_private_hit_is_readable_by_its_owner_even_when_the_viewer_set_is_empty() -> None:
    assert may_read_hit("bob", "bob", HITS[1], frozenset())
    assert not may_read_hit("alice", "bob", HITS[1], frozenset())
    assert not may_read_hit("bob", "bob", HITS[3], frozenset({GENERAL}))


def test_withheld_label_says_how_many_and_whose() -> None:
    assert withheld_label(1, "Bob") == "1 message from Bob's memory"
    assert withheld_label(3, "Bob") == "3 messages from Bob's memory"


def test_transcripts_open_to_participants_of_the_same_workspace_and_to_admins() -> None:
    alice = Identity(1, "alice", "U1", "Alice")
    assert may_open(alice, workspace_id=1, participants=["alice", "bob"])
    assert not may_open(alice, workspace_id=1, participants=["bob", "carol"])
    assert not may_open(alice, workspace_id=2, participants=["alice", "bob"])  # another workspace's alice
    admin = Identity(1, "dave", "U4", "Dave", is_admin=True)
    assert may_open(admin, workspace_id=1, participants=["bob"])
    assert not may_open(admin, workspace_id=2, participants=["bob"])  # admin of workspace 1 only
    assert is_admin("dave", "U4", {"U4"}) and is_admin("dave", "U4", {"dave"}) and not is_admin("erin", "U5", {"dave"})
