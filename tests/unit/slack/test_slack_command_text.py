from __future__ import annotations

from adapters.slack.command_text import Colleague, parse_ask, parse_settings
from bot.platform.port import SharePolicy


def test_escaped_unescaped_and_named_mentions() -> None:
    parsed = parse_ask("<@U1|bob> <@W2>  @carol.j  when is <@U9|dave>'s demo? ")
    assert parsed.colleagues == (Colleague("U1", "bob"), Colleague("W2", None), Colleague(None, "carol.j"))
    assert [c.ref for c in parsed.colleagues] == ["U1", "W2", "carol.j"]
    assert [c.label for c in parsed.colleagues] == ["<@U1>", "<@W2>", "@carol.j"]
    assert parsed.question == "when is @dave's demo?"


def test_repeated_colleague_counts_once_and_mentions_after_the_question_stay_in_it() -> None:
    parsed = parse_ask("@bob @bob what did @carol say?")
    assert parsed.colleagues == (Colleague(None, "bob"),)
    assert parsed.question == "what did @carol say?"


def test_help_and_empty() -> None:
    assert parse_ask("help").wants_help and parse_ask("  ").wants_help
    assert parse_ask("@bob").question == "" and not parse_ask("@bob").wants_help
    assert parse_ask("what now?").colleagues == ()


def test_settings_commands() -> None:
    assert parse_settings("").action == "show"
    assert parse_settings("ON").action == "opt_in" and parse_settings("opt-out").action == "opt_out"
    assert parse_settings("share never").share == SharePolicy.NEVER
    assert parse_settings("exclude <#C123|random>").channel_id == "C123"
    assert parse_settings("include <#G9>").action == "include"
    assert parse_settings("timezone America/Los_Angeles").zone == "America/Los_Angeles"
    assert parse_settings("timezone").action == "timezone" and parse_settings("timezone").zone == ""
    assert parse_settings("timezone Europe Paris").action == "invalid"
    for bad in ("share maybe", "exclude random", "on please", "dance"):
        assert parse_settings(bad).action == "invalid", bad


def test_install_state_is_signed_and_expires(tmp_path) -> None:  # noqa: ANN001 - pytest's tmp_path
    import pytest
    from slack_sdk.web.async_client import AsyncWebClient

    from adapters.slack.install import STATE_TTL_SECONDS, MemberInstallFlow
    from bot.errors import PlatformInstallError
    from bot.settings import Settings

    settings = Settings(data_dir=tmp_path, slack_client_id="1.2", slack_client_secret="s3cret")
    flow = MemberInstallFlow(settings, AsyncWebClient(token="xoxb-x"), tokens=None)  # type: ignore[arg-type]
    state = flow.new_state(now=1000.0)
    flow.check_state(state, now=1000.0 + STATE_TTL_SECONDS - 1)
    with pytest.raises(PlatformInstallError, match="expired"):
        flow.check_state(state, now=1000.0 + STATE_TTL_SECONDS + 1)
    nonce, expires, signature = state.split(".")
    with pytest.raises(PlatformInstallError, match="not issued"):
        flow.check_state(f"{nonce}.{int(expires) + 3600}.{signature}", now=1000.0)
    assert "user_scope=im:history,mpim:history,im:read,mpim:read" in flow.authorize_url()
