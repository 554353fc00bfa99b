from pathlib import Path

import pytest

from bot.errors import InvalidSettingError, MissingSettingError
from bot.settings import Settings, documented_settings


ENV_EXAMPLE = Path(__file__).parents[3] / ".env.example"


def test_every_setting_is_documented_in_env_example_with_its_default() -> None:
    text = ENV_EXAMPLE.read_text()
    for env, default, _doc in documented_settings():
        assert f"\n{env}={default}\n" in text, env


def test_environment_wins_over_dotenv_file(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("ASKWITH_LLM_MODEL=from-file\nASKWITH_MAX_UNKNOWN=1\nASKWITH_LLM_CONCURRENCY=3\n")
    settings = Settings.load(env={"ASKWITH_LLM_MODEL": "from-env"}, env_file=env_file)
    assert settings.llm_model == "from-env"
    assert settings.llm_concurrency == 3


def test_missing_required_setting_names_it_in_one_line() -> None:
    settings = Settings.load(env={}, env_file=None)
    with pytest.raises(MissingSettingError) as info:
        settings.require("bench_data_dir")
    assert str(info.value).startswith("ASKWITH_BENCH_DATA_DIR is not set")
    assert "\n" not in str(info.value)


def test_invalid_value_is_reported_with_its_name() -> None:
    with pytest.raises(InvalidSettingError, match="ASKWITH_LLM_CONCURRENCY='many'"):
        Settings.load(env={"ASKWITH_LLM_CONCURRENCY": "many"}, env_file=None)


def test_repr_hides_secrets() -> None:
    settings = Settings.load(env={"ASKWITH_LLM_API_KEY": "sk-secret"}, env_file=None)
    assert "sk-secret" not in repr(settings)


def test_share_quote_cap_defaults_to_each_sides_share_of_the_answer_prompt() -> None:
    settings = Settings.load(env={"ASKWITH_EVIDENCE_BUDGET_TOKENS": "3000"}, env_file=None)
    # 3,000 tokens of evidence (12,000 characters) in the prompt that writes the answer, split between the sides.
    assert settings.share_quote_limit(1) == 6000
    assert settings.share_quote_limit(2) == 4000
    assert settings.replace(context_profile="small", evidence_budget_tokens=0).share_quote_limit(1) == 2400
    explicit = Settings.load(env={"ASKWITH_SHARE_QUOTE_CHARS": "500"}, env_file=None)
    assert explicit.share_quote_limit(1) == explicit.share_quote_limit(3) == 500
    nothing = Settings.load(env={"ASKWITH_SHARE_QUOTE_CHARS": "0"}, env_file=None)
    assert nothing.share_quote_limit(1) == 0  # zero still means no verbatim text at all, never "the default"
    assert Settings.load(env={"ASKWITH_SHARE_QUOTE_CHARS": ""}, env_file=None).share_quote_limit(1) > 0
