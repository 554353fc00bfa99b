"""Signed, expiring link tokens bound to one member: what a transcript link posted in Slack or Discord carries.

    token = sign_member_token(secret, MemberClaim(workspace_id=1, member="alice"), expires_at=now + ttl)
    claim = verify_member_token(secret, token, now=now)   # LinkExpiredError / LinkInvalidError otherwise

A token is `<payload>.<signature>`: the payload is base64url JSON {"w": workspace id, "m": member handle,
"e": expiry as Unix seconds}, the signature base64url HMAC-SHA256 of the payload under the secret. The member is
inside the signed part, so a token cannot be moved to another member; the clock is a parameter, so expiry is
testable without waiting. Pure functions: no settings, no I/O.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass

from bot.errors import LinkExpiredError, LinkInvalidError


DOMAIN = b"askwith-member-link-v1\x00"  # keeps these signatures apart from any other use of the same secret


@dataclass(frozen=True)
class MemberClaim:
    workspace_id: int  # the store's workspace id
    member: str  # the member's handle in that workspace


def sign_member_token(secret: str, claim: MemberClaim, *, expires_at: float) -> str:
    if not secret:
        raise ValueError("a link secret is required to sign a link")
    body = {"w": claim.workspace_id, "m": claim.member, "e": int(expires_at)}
    payload = _b64encode(json.dumps(body, separators=(",", ":"), sort_keys=True).encode())
    return f"{payload}.{_signature(secret, payload)}"


def verify_member_token(secret: str, token: str, *, now: float) -> MemberClaim:
    """The claim a token carries, once its signature and expiry are checked."""
    payload, dot, signature = token.partition(".")
    # Compared as bytes: a link is typed by anyone, and compare_digest refuses non-ASCII text with a TypeError.
    expected = _signature(secret, payload).encode() if secret else b""
    if not secret or not dot or not hmac.compare_digest(signature.encode("utf-8", "replace"), expected):
        raise LinkInvalidError()
    try:
        body = json.loads(_b64decode(payload))
        claim = MemberClaim(workspace_id=int(body["w"]), member=str(body["m"]))
        expires_at = float(body["e"])
    except (ValueError, KeyError, TypeError) as exc:  # signed by us, so only a changed format lands here
        raise LinkInvalidError() from exc
    if now >= expires_at:
        raise LinkExpiredError()
    return claim


def _signature(secret: str, payload: str) -> str:
    digest = hmac.new(secret.encode(), DOMAIN + payload.encode(), hashlib.sha256).digest()
    return _b64encode(digest)


def _b64encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
