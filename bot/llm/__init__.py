"""The one LLM client and its backends."""

from bot.llm.client import LLMClient
from bot.llm.retry import RetryPolicy
from bot.llm.types import LLMCallRecord, LLMRequest, LLMResult, LLMTotals


__all__ = ["LLMCallRecord", "LLMClient", "LLMRequest", "LLMResult", "LLMTotals", "RetryPolicy"]
