"""Which Slack memory an app gets, by the kind of app Slack says it is: "Only directory-published apps or internal
apps may use the Real-time Search API", and a distributed app outside the Marketplace installed on or after
2025-05-29 reads history at the posted limits. `auto` never picks live search for an app Slack does not let use it,
and start-up says which option exists."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from adapters.slack.rate_limits import LIMITED_PAGE, InstallLimits
from adapters.slack.serve import SLACK, refuse_socket_mode_in_the_marketplace
from bot.errors import InvalidSecretSettingError, InvalidSettingError
from bot.memory.live import memory_source, slack_app_kind, slack_memory_option
from bot.settings import Settings


BEFORE = datetime(2025, 5, 28, 23, 0, tzinfo=UTC)
AFTER = datetime(2025, 5, 29, 0, 0, tzinfo=UTC)


def test_auto_is_live_for_a_marketplace_app_only(settings: Settings) -> None:
    oauth = settings.replace(slack_distribution="oauth", slack_memory="auto")
    assert memory_source(oauth.replace(slack_app="marketplace"), "slack") == "live"
    assert memory_source(oauth.replace(slack_app="internal"), "slack") == "mirror"
    assert memory_source(oauth.replace(slack_app="distributed"), "slack") == "mirror"
    # Unset: an OAuth install outside the Marketplace is a distributed app (not live), a single workspace internal.
    assert slack_app_kind(oauth)[0] == "distributed" and memory_source(oauth, "slack") == "mirror"
    assert slack_app_kind(settings.replace(slack_distribution="single"))[0] == "internal"
    assert slack_app_kind(oauth.replace(slack_marketplace=True)) == ("marketplace", "ASKWITH_SLACK_MARKETPLACE=true")
    assert memory_source(oauth.replace(slack_app="marketplace"), "discord") == "mirror"


def test_live_memory_for_a_distributed_app_is_refused_in_one_line(settings: Settings) -> None:
    chosen = settings.replace(slack_distribution="oauth", slack_app="distributed", slack_memory="live")
    with pytest.raises(InvalidSettingError, match="ASKWITH_SLACK_MEMORY.*Marketplace-published or internal"):
        memory_source(chosen, "slack")
    assert memory_source(chosen.replace(slack_app="internal"), "slack") == "live"  # internal apps may use RTS


def test_start_up_says_which_memory_a_distributed_install_has(settings: Settings) -> None:
    distributed = settings.replace(slack_distribution="oauth", slack_app="distributed")
    option, said = slack_memory_option(distributed, BEFORE)
    assert option == "mirror" and "installed before 2025-05-29" in said and "no Real-time Search" in said
    option, said = slack_memory_option(distributed, AFTER)
    assert option == "none" and "no memory option" in said and "1 request a minute, 15 messages a page" in said
    assert slack_memory_option(distributed, None)[0] == "none"  # an install of unknown date: not assumed exempt
    option, said = slack_memory_option(settings.replace(slack_app="marketplace"), AFTER)
    assert option == "live" and said.startswith("marketplace Slack app (ASKWITH_SLACK_APP)")


def test_posted_history_limits_follow_the_app_kind_and_install_date(settings: Settings) -> None:
    distributed = settings.replace(slack_distribution="oauth", slack_app="distributed")
    assert InstallLimits.for_settings(distributed, installed_at=AFTER).page_cap == LIMITED_PAGE
    assert InstallLimits.for_settings(distributed, installed_at=BEFORE).page_cap is None  # "not subject to" them
    assert InstallLimits.for_settings(distributed.replace(slack_app="internal")).page_cap is None
    assert InstallLimits.for_settings(distributed.replace(slack_app="marketplace")).page_cap is None


def test_an_unknown_app_kind_is_refused(settings: Settings) -> None:
    with pytest.raises(InvalidSettingError, match="ASKWITH_SLACK_APP"):
        Settings.load(env={"ASKWITH_SLACK_APP": "unlisted"}, env_file=None)


async def test_start_up_refuses_socket_mode_for_a_marketplace_app(settings: Settings) -> None:
    """ "Apps using Socket Mode are not currently allowed in the public Slack Marketplace" (the Socket Mode page)."""
    socket = settings.replace(slack_bot_token="xoxb-1", slack_app_token="xapp-1-A1-secret", slack_app="marketplace")
    with pytest.raises(InvalidSecretSettingError, match="SLACK_APP_TOKEN.*Marketplace") as refused:
        await SLACK.start(SimpleNamespace(settings=socket))  # type: ignore[arg-type]  # refused before anything opens
    assert "xapp-1-A1-secret" not in str(refused.value)
    refuse_socket_mode_in_the_marketplace(socket.replace(slack_app="internal"))  # an internal app may use it
    refuse_socket_mode_in_the_marketplace(socket.replace(slack_app_token=""))  # HTTP request URLs
