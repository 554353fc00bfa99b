"""The one LLM client and its backends."""

from bot.llm.client import LLMClient
from bot.llm.types import LLMCallRecord, LLMRequest, LLMResult


__all__ = ["LLMCallRecord", "LLMClient", "LLMRequest", "LLMResult"]
