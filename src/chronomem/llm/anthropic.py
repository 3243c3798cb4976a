"""Adapter for the Anthropic Messages API (``POST {base_url}/v1/messages``), structured by tool use.

The answer's JSON schema becomes the ``input_schema`` of one tool that the model is forced to call
(``tool_choice={"type": "tool", ...}``); the tool call's ``input`` is the answer. If a model answers
in text instead, the text goes through the tolerant parser. System messages are sent as the
top-level ``system`` field; consecutive turns of one role are merged, as the API requires
alternation. ``stop_reason == "max_tokens"`` raises ``ModelTruncatedError``. Spoken with httpx
directly (no SDK, so no SDK retry loop).

Prompt caching: Anthropic caches a prompt's prefix up to a ``cache_control`` breakpoint, in the order
tools → system → messages. The system prompt is sent as a text block carrying the breakpoint, so the
tool and the system prompt (the static part of every prompt of the package) are cached together. For
that the tool must be the same on every call of a prompt: its ``input_schema`` is the answer model's
own schema, not the one tightened for the call (:func:`~chronomem.llm.budget.answer_schema_for`);
the answer is still held to the tightened one (:mod:`chronomem.llm.parsing`) and the output cap
still computed from it. Anthropic's ``input_tokens`` leaves out what was read from the cache
(``cache_read_input_tokens``) and written to it (``cache_creation_input_tokens``); ``Usage.input_tokens``
counts all three, as OpenAI's ``prompt_tokens`` does, and ``Usage.cached_input_tokens`` the reads.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from chronomem.llm.accounting import estimate_message_tokens
from chronomem.llm.answering import Reply, answer_prompt
from chronomem.llm.base import Completion, Message, Prompt
from chronomem.llm.budget import output_cap
from chronomem.llm.cache import answer_schema
from chronomem.providers.endpoints import auth_headers
from chronomem.providers.http import LazyHttpClient, ProviderUnavailableError, post_json
from chronomem.providers.tokens import estimate_tokens

__all__ = ["ANTHROPIC_API_VERSION", "AnthropicModel"]

ANTHROPIC_API_VERSION = "2023-06-01"
_TOOL_NAME = re.compile(r"[^a-zA-Z0-9_-]")


def _split_messages(messages: list[Message]) -> tuple[str, list[dict[str, str]]]:
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    turns: list[dict[str, str]] = []
    for message in messages:
        if message.role == "system":
            continue
        if turns and turns[-1]["role"] == message.role:
            turns[-1] = {"role": message.role, "content": f"{turns[-1]['content']}\n\n{message.content}"}
        else:
            turns.append({"role": message.role, "content": message.content})
    if not turns or turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": "(see instructions)"})
    return system, turns


def _answer_text(blocks: list[Any], tool_name: str) -> str:
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == tool_name:
            return json.dumps(block.get("input"), ensure_ascii=False)
    return "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")


class AnthropicModel:
    """A ``LanguageModel`` over the Anthropic Messages API (or a server speaking its wire format)."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.anthropic.com",
        api_key: str | None = None,
        timeout_s: float = 60.0,
        temperature: float | None = 0.0,
        extra_headers: dict[str, str] | None = None,
        corrective_retries: int = 1,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.model = model
        self.model_name = f"anthropic:{model}"
        self.url = base_url.rstrip("/") + "/v1/messages"
        self.temperature = temperature
        self.corrective_retries = corrective_retries
        self._headers = {
            "anthropic-version": ANTHROPIC_API_VERSION,
            **(extra_headers or {}),
            **auth_headers(api_key, "x-api-key"),
        }
        self._http = LazyHttpClient(timeout_s, client)

    async def aclose(self) -> None:
        await self._http.aclose()

    def _payload(
        self, prompt: Prompt[Any, Any], messages: list[Message], tool_name: str, context: Any = None
    ) -> dict[str, Any]:
        system, turns = _split_messages(messages)
        payload: dict[str, Any] = {
            "model": self.model,
            "max_tokens": output_cap(prompt, context),
            "messages": turns,
            "tools": [
                {
                    "name": tool_name,
                    "description": f"Record the answer ({prompt.answer.__name__}).",
                    "input_schema": answer_schema(prompt.answer),  # the same on every call: cacheable
                }
            ],
            "tool_choice": {"type": "tool", "name": tool_name},
        }
        if system:
            payload["system"] = [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
        if self.temperature is not None:
            payload["temperature"] = self.temperature
        return payload

    def _reply(self, data: dict[str, Any], messages: list[Message], tool_name: str) -> Reply:
        blocks = data.get("content")
        if not isinstance(blocks, list):
            raise ProviderUnavailableError(f"{self.url} answered without content: {str(data)[:300]}")
        text = _answer_text(blocks, tool_name)
        usage = data.get("usage") or {}
        read = int(usage.get("cache_read_input_tokens") or 0)
        written = int(usage.get("cache_creation_input_tokens") or 0)
        prompt_tokens = int(usage.get("input_tokens") or 0) + read + written  # all of them, as OpenAI counts
        return Reply(
            text=text,
            input_tokens=prompt_tokens or estimate_message_tokens(messages),
            output_tokens=int(usage.get("output_tokens") or estimate_tokens(text)),
            truncated=data.get("stop_reason") == "max_tokens",
            model=data.get("model") or self.model,
            cached_input_tokens=read,
        )

    async def complete(self, prompt: Prompt[Any, Any], context: Any) -> Completion[Any]:
        tool_name = _TOOL_NAME.sub("_", prompt.name)[:64] or "answer"

        async def ask(messages: list[Message]) -> Reply:
            payload = self._payload(prompt, messages, tool_name, context)
            data = await post_json(
                self._http.client,
                self.url,
                payload,
                headers=self._headers,
                target=self.url,
                timeout_s=self._http.timeout_s,
            )
            return self._reply(data, messages, tool_name)

        return await answer_prompt(
            prompt,
            context,
            ask,
            model=self.model_name,
            corrective_retries=self.corrective_retries,
            provider="anthropic",
        )
