"""Prompt templates, one YAML file per use, loaded by `bot.base.prompts`."""
