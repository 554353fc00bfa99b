"""Every setting, fed anything an operator might type: it is accepted with a sane value or refused in one line."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as run
from hypothesis import strategies as st

from bot.asks.runtime import build_llm
from bot.errors import InvalidSettingError, SettingsError
from bot.llm.scripted import ScriptedBackend
from bot.settings import Settings, documented_settings


ENVS = [env for env, _default, _doc in documented_settings()]
AWKWARD = [
    "nan", "-nan", "NaN", "inf", "-inf", "Infinity", "1e309", "-1e309", "1e-400", "0", "-0", "0.0", "-1", "-1.5",
    "1e6", "65536", "70000", "2147483648", "9" * 400, "9" * 5000, "1_000", " 5 ", "0x10", "true", "no", "",
    " ", "\x00", "a\nb", "Europe/Paris", "../../etc/passwd", "UTC\x00", "x" * 10_000, "é", "\u202e", "DEBUG",
]  # fmt: skip
RAW_VALUES = st.one_of(
    st.sampled_from(AWKWARD),
    st.text(max_size=40),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)


def _check_one(env: str, raw: str) -> None:
    try:
        settings = Settings.load(env={env: raw}, env_file=None)
    except SettingsError as refused:
        message = str(refused)
        assert message.startswith(env), message
        assert "\n" not in message and len(message) < 400, message
        return
    name, info = next((n, i) for n, i in Settings.model_fields.items() if i.validation_alias == env)
    value = getattr(settings, name)
    if isinstance(value, float):
        assert math.isfinite(value), (env, raw, value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        for bound in info.metadata:
            assert getattr(bound, "ge", -math.inf) <= value <= getattr(bound, "le", math.inf), (env, raw, value)
            assert value > getattr(bound, "gt", -math.inf), (env, raw, value)
    if isinstance(value, str):
        assert value.isprintable() or not value, (env, raw)
        assert len(value) <= 8192


@pytest.mark.parametrize("env", ENVS)
@run(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=RAW_VALUES)
def test_every_setting_accepts_a_sane_value_or_refuses_in_one_line(env: str, raw: str) -> None:
    _check_one(env, raw)


@pytest.mark.slow
@pytest.mark.parametrize("env", ENVS)
@run(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=RAW_VALUES)
def test_every_setting_holds_for_a_thousand_values(env: str, raw: str) -> None:
    _check_one(env, raw)


@pytest.mark.parametrize(
    ("env", "raw"),
    [
        ("ASKWITH_MAX_REQUEST_BYTES", "-1"),
        ("ASKWITH_MAX_REQUEST_BYTES", "0"),
        ("ASKWITH_APPROVAL_TIMEOUT_SECONDS", "nan"),
        ("ASKWITH_LLM_TEMPERATURE", "inf"),
        ("ASKWITH_WORKER_HEARTBEAT_SECONDS", "1e309"),
        ("ASKWITH_WEB_PORT", "70000"),
        ("ASKWITH_TIMEZONE", "Mars/Olympus_Mons"),
        ("ASKWITH_WEB_SESSION_SECONDS", "0"),
        ("ASKWITH_LOG_LEVEL", "chatty"),
    ],
)
def test_the_values_the_red_team_got_through_are_refused(env: str, raw: str) -> None:
    with pytest.raises(InvalidSettingError) as refused:
        Settings.load(env={env: raw}, env_file=None)
    assert str(refused.value).startswith(f"{env}={raw!r} is not a valid ")


def test_a_refused_secret_is_never_repeated() -> None:
    with pytest.raises(SettingsError) as refused:
        Settings.load(env={"ASKWITH_LLM_API_KEY": "sk-abc\x00def"}, env_file=None)
    assert "sk-abc" not in str(refused.value) and "ASKWITH_LLM_API_KEY" in str(refused.value)


def test_values_in_bounds_and_the_defaults_are_accepted() -> None:
    settings = Settings.load(
        env={"ASKWITH_WEB_PORT": "65535", "ASKWITH_LLM_TEMPERATURE": "0", "ASKWITH_TIMEZONE": "Europe/Paris"},
        env_file=None,
    )
    assert (settings.web_port, settings.llm_temperature, settings.timezone) == (65535, 0.0, "Europe/Paris")
    assert Settings.load(env={}, env_file=None) == Settings()


def test_every_bounded_setting_says_its_bounds_in_env_example() -> None:
    documented = {env: doc for env, _default, doc in documented_settings()}
    assert "at most 65,535" in documented["ASKWITH_WEB_PORT"]
    assert "in seconds" in documented["ASKWITH_APPROVAL_TIMEOUT_SECONDS"]


@pytest.mark.parametrize("raw", ["-0.1", "61", "nan", "inf", "a second"])
def test_the_scripted_models_latency_is_refused_out_of_its_bounds(raw: str) -> None:
    with pytest.raises(InvalidSettingError) as refused:
        Settings.load(env={"ASKWITH_SCRIPTED_LATENCY_SECONDS": raw}, env_file=None)
    assert str(refused.value).startswith("ASKWITH_SCRIPTED_LATENCY_SECONDS=")


def test_the_scripted_model_waits_the_latency_set_and_not_at_all_by_default() -> None:
    slow = build_llm(Settings.load(env={"ASKWITH_SCRIPTED_LATENCY_SECONDS": "0.3"}, env_file=None), scripted=True)
    instant = build_llm(Settings.load(env={}, env_file=None), scripted=True)
    assert isinstance(slow.backend, ScriptedBackend) and isinstance(instant.backend, ScriptedBackend)
    assert (slow.backend.latency_s, instant.backend.latency_s) == (0.3, 0.0)
