"""High 1: oversized unsigned bodies to a real `askwith serve` process are refused before they are read, and
nothing of them reaches the log (the red team sent ~660 MB: a 692 MB log and 1.4 GB of resident memory).

Each body here is 64 MB of unsigned junk, written onto the socket until the server answers; the process logs at
INFO, the default.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.fakes.served_slack import ServedSlack
from tests.security.raw_http import post_stream


BODY_BYTES = 64 * 1024 * 1024
LIMIT = 1024 * 1024  # ASKWITH_MAX_REQUEST_BYTES's default
JUNK_HEADERS = {"X-Slack-Request-Timestamp": "1700000000", "X-Slack-Signature": "v0=" + "0" * 64}


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[ServedSlack]:
    async with ServedSlack(tmp_path, log_level="INFO") as served:
        yield served


def _log_bytes(served: ServedSlack) -> int:
    return sum(p.stat().st_size for p in (served.out_path, served.err_path) if p.exists())


@pytest.mark.parametrize("declare_length", [True, False], ids=["content-length", "chunked"])
@pytest.mark.parametrize("path", ["/slack/events", "/signin", "/workspace/C-general"])
async def test_an_oversized_body_is_refused_unread_and_unlogged(
    served: ServedSlack, path: str, declare_length: bool
) -> None:
    rss_before, log_before = served.rss_kib(), _log_bytes(served)
    result = await post_stream(served.url, path, BODY_BYTES, declare_length=declare_length, headers=JUNK_HEADERS)
    rss_growth_mib = (served.rss_kib() - rss_before) / 1024
    log_growth = _log_bytes(served) - log_before
    measured = f"{result.status}: {result.sent >> 20} MiB sent, log +{log_growth} B, RSS +{rss_growth_mib:.0f} MiB"
    assert result.status == 413, measured
    # Answered before the body was all sent (what was sent meanwhile sat in socket buffers, unread).
    assert result.sent < BODY_BYTES, measured
    assert log_growth < 2000 and rss_growth_mib < 32, measured
    assert "AAAAAAAA" not in served.logs()
    # A body within the limit still gets through to the signature check.
    small = await post_stream(served.url, "/slack/events", LIMIT // 2, declare_length=True, headers=JUNK_HEADERS)
    assert small.status == 401
