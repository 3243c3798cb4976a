"""An opt-in response cache on disk (one SQLite file), so re-running the same prompts costs nothing.

The key is a SHA-256 over the model name, the prompt name, the rendered messages, the answer's JSON
schema and the output-token limit: change any of them and the cache misses. Only validated answers
are stored (as their JSON), so a hit is re-validated into the answer model and never holds a
refused answer. A hit is recorded as ``Usage(cache_hits=1)`` with no calls and no tokens.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from chronomem.llm.accounting import record_usage
from chronomem.llm.base import Completion, LanguageModel, Prompt, Usage
from chronomem.llm.closing import aclose_model

__all__ = ["CachedModel", "ResponseCache", "answer_schema", "cache_key"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS llm_responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    prompt TEXT NOT NULL,
    answer TEXT NOT NULL,
    created_at REAL NOT NULL
)
"""


_schemas: dict[type[BaseModel], tuple[dict[str, Any], str]] = {}


def _schema_and_digest(answer: type[BaseModel]) -> tuple[dict[str, Any], str]:
    # Building a JSON schema costs milliseconds: once per answer model per process.
    found = _schemas.get(answer)
    if found is None:
        schema = answer.model_json_schema()
        digest = hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()
        found = _schemas[answer] = (schema, digest)
    return found


def answer_schema(answer: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of an answer model (built once per model and process)."""
    return _schema_and_digest(answer)[0]


def _schema_digest(answer: type[BaseModel]) -> str:
    return _schema_and_digest(answer)[1]


def cache_key(model: str, prompt: Prompt[Any, Any], context: Any) -> str:
    rendered = [[message.role, message.content] for message in prompt.messages(context)]
    material = json.dumps(
        [model, prompt.name, rendered, _schema_digest(prompt.answer), prompt.max_output_tokens],
        ensure_ascii=False,
    )
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


class ResponseCache:
    """Validated answers by key, in one SQLite file (created on first use, safe across threads)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute(_SCHEMA)
            self._connection = connection
        return self._connection

    def _get(self, key: str) -> str | None:
        with self._lock:
            row = self._connect().execute("SELECT answer FROM llm_responses WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def _put(self, key: str, model: str, prompt: str, answer: str) -> None:
        with self._lock:
            self._connect().execute(
                "INSERT OR REPLACE INTO llm_responses VALUES (?, ?, ?, ?, ?)",
                (key, model, prompt, answer, time.time()),
            )

    async def get(self, key: str) -> str | None:
        return await asyncio.to_thread(self._get, key)

    async def put(self, key: str, *, model: str, prompt: str, answer: str) -> None:
        await asyncio.to_thread(self._put, key, model, prompt, answer)

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None


class CachedModel:
    """Wraps a ``LanguageModel``: an answer already in ``cache`` is returned without a call."""

    def __init__(self, inner: LanguageModel, cache: ResponseCache, *, model_name: str | None = None) -> None:
        self.inner = inner
        self.cache = cache
        self.model_name: str = model_name or str(getattr(inner, "model_name", type(inner).__name__))

    async def complete(self, prompt: Prompt[Any, Any], context: Any) -> Completion[Any]:
        key = cache_key(self.model_name, prompt, context)
        stored = await self.cache.get(key)
        if stored is not None:
            try:
                output = prompt.answer.model_validate_json(stored)
            except ValidationError:
                output = None  # the answer model changed its validators: treat as a miss
            if output is not None:
                usage = Usage(cache_hits=1, by_prompt={}, model=self.model_name)
                record_usage(usage)
                return Completion(output=output, usage=usage)
        completion = await self.inner.complete(prompt, context)
        await self.cache.put(key, model=self.model_name, prompt=prompt.name, answer=completion.output.model_dump_json())
        return completion

    async def aclose(self) -> None:
        await aclose_model(self.inner)
