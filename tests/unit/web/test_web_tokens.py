"""Signed member links: a valid token round-trips; expired, altered, re-signed or foreign ones are refused."""

from __future__ import annotations

import base64
import json

import pytest

from bot.errors import LinkExpiredError, LinkInvalidError
from bot.settings import Settings
from bot.web.links import TranscriptLinks
from bot.web.tokens import MemberClaim, sign_member_token, verify_member_token


SECRET = "s3cret"
NOW = 1_800_000_000.0


def _token(member: str = "alice", *, ttl: float = 3600, secret: str = SECRET) -> str:
    return sign_member_token(secret, MemberClaim(7, member), expires_at=NOW + ttl)


def test_a_valid_token_names_its_member_and_workspace() -> None:
    assert verify_member_token(SECRET, _token(), now=NOW + 10) == MemberClaim(7, "alice")


def test_an_expired_token_is_refused_at_and_after_its_expiry() -> None:
    token = _token(ttl=60)
    assert verify_member_token(SECRET, token, now=NOW + 59).member == "alice"
    with pytest.raises(LinkExpiredError):
        verify_member_token(SECRET, token, now=NOW + 60)
    with pytest.raises(LinkExpiredError):
        verify_member_token(SECRET, token, now=NOW + 86400)


def _swap_payload(token: str, **changes: object) -> str:
    payload, _, signature = token.partition(".")
    body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    body.update(changes)
    raw = base64.urlsafe_b64encode(json.dumps(body).encode()).rstrip(b"=").decode()
    return f"{raw}.{signature}"


@pytest.mark.parametrize(
    "changes", [{"m": "bob"}, {"w": 8}, {"e": NOW + 10**9}], ids=["other member", "other workspace", "later expiry"]
)
def test_a_token_whose_payload_was_changed_is_refused(changes: dict[str, object]) -> None:
    with pytest.raises(LinkInvalidError):
        verify_member_token(SECRET, _swap_payload(_token(), **changes), now=NOW)


def test_a_token_bound_to_one_member_cannot_be_moved_to_another() -> None:
    alice, bob = _token("alice"), _token("bob")
    moved = f"{bob.partition('.')[0]}.{alice.partition('.')[2]}"  # bob's claim, alice's signature
    with pytest.raises(LinkInvalidError):
        verify_member_token(SECRET, moved, now=NOW)
    assert verify_member_token(SECRET, bob, now=NOW).member == "bob"


@pytest.mark.parametrize("token", ["", "no-dot", ".", "abc.def", "a.b.c"])
def test_malformed_tokens_are_refused(token: str) -> None:
    with pytest.raises(LinkInvalidError):
        verify_member_token(SECRET, token, now=NOW)


def test_a_token_signed_with_another_secret_is_refused() -> None:
    with pytest.raises(LinkInvalidError):
        verify_member_token(SECRET, _token(secret="other"), now=NOW)
    with pytest.raises(LinkInvalidError):
        verify_member_token("", _token(), now=NOW)


def test_signing_needs_a_secret() -> None:
    with pytest.raises(ValueError):
        sign_member_token("", MemberClaim(1, "alice"), expires_at=NOW)


def test_transcript_links_point_at_the_public_url_and_never_show_the_secret() -> None:
    settings = Settings(public_url="https://askwith.example/", link_ttl_seconds=120)
    links = TranscriptLinks(settings, SECRET)
    url = links.url(ask_id=5, workspace_id=7, member="carol", now=NOW)
    assert url.startswith("https://askwith.example/asks/5?t=")
    token = url.split("?t=", 1)[1]
    assert verify_member_token(SECRET, token, now=NOW + 119) == MemberClaim(7, "carol")
    with pytest.raises(LinkExpiredError):
        verify_member_token(SECRET, token, now=NOW + 120)
    assert SECRET not in repr(links)
