"""Shared client plumbing for judges, compressors and draft models: cache, retries, concurrency, accounting."""

from workbench.llm.account import RunAccount
from workbench.llm.cache import DiskCache, request_key
from workbench.llm.client import LLMClient, MissingKey, RequestFailed, RetryPolicy, Usage

__all__ = ["DiskCache", "LLMClient", "MissingKey", "RequestFailed", "RetryPolicy", "RunAccount", "Usage", "request_key"]
