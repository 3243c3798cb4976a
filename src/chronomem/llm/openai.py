"""Adapter for OpenAI-compatible chat completions (``POST {base_url}/chat/completions``).

One adapter covers OpenAI, Azure OpenAI, Ollama, vLLM, llama.cpp server, LM Studio, Groq, Together,
OpenRouter and DeepSeek: they differ only in base URL, authentication header and how much of
``response_format`` they support. ``structured_output`` picks one form (``json_schema``,
``json_object_schema``, ``json_object``, ``prompt``) or, with ``auto`` (the default), negotiates it
with the endpoint: see :mod:`chronomem.llm.structured`.

Whatever the mode, the answer text goes through the tolerant parser (code fences, prose,
``<think>`` blocks) and validation, with one corrective retry (:mod:`chronomem.llm.answering`).
``finish_reason == "length"`` raises ``ModelTruncatedError``. The wire format is spoken with httpx
directly, so no SDK (and no SDK retry loop) is involved.

Prompt caching: OpenAI, vLLM (``--enable-prefix-caching``) and llama.cpp reuse the longest prefix a
prompt shares with earlier ones, with nothing to ask for. So that every call of a prompt shares the
whole system message, the schema that goes into the prompt's tokens is the answer model's own, the
same on every call: the instruction appended to the system message (``json_object_schema``,
``json_object``, ``prompt``) and, where the provider renders ``response_format`` into the prompt
(OpenAI and Azure put its schema before the system message), the ``json_schema`` one too. The schema
tightened for the call (:func:`~chronomem.llm.budget.answer_schema_for`) goes where a server compiles
it into a grammar instead of reading it (``json_object_schema``; vLLM's and llama.cpp's
``json_schema``), and the answer is held to it in any case (:mod:`chronomem.llm.parsing`). What the
provider served from its cache is ``Usage.cached_input_tokens``: OpenAI, vLLM and llama.cpp's
``llama-server`` report ``usage.prompt_tokens_details.cached_tokens``; older ``llama-server`` builds
only ``timings.cache_n``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from chronomem.errors import ModelOutputError
from chronomem.llm.accounting import estimate_message_tokens
from chronomem.llm.answering import Reply, answer_prompt
from chronomem.llm.base import Completion, Message, Prompt
from chronomem.llm.budget import answer_schema_for, output_cap
from chronomem.llm.cache import answer_schema
from chronomem.llm.structured import (
    Negotiation,
    StructuredOutputMode,
    WireMode,
    grammar_safe,
    negotiation_for,
    refuses_structured_output,
)
from chronomem.providers.endpoints import AuthScheme, api_version_params, auth_headers
from chronomem.providers.http import LazyHttpClient, ProviderRequestError, ProviderUnavailableError, post_json
from chronomem.providers.tokens import estimate_tokens

__all__ = ["OpenAIChatModel", "StructuredOutputMode", "schema_instruction"]

_SCHEMA_NAME = re.compile(r"[^a-zA-Z0-9_-]")
# Providers that render a ``json_schema`` response format into the prompt, before the system message
_SCHEMA_IN_PROMPT = frozenset({"openai", "azure"})


def schema_instruction(answer: type[Any], schema: dict[str, Any] | None = None) -> str:
    """The system-message text that asks for JSON matching the answer's schema (or ``schema``)."""
    text = json.dumps(answer_schema(answer) if schema is None else schema, separators=(",", ":"))
    return (
        "Respond with one JSON object that conforms to this JSON schema, and nothing else "
        f"(no prose, no code fences):\n{text}"
    )


def _with_instruction(messages: list[Message], instruction: str) -> list[dict[str, str]]:
    rendered = [{"role": m.role, "content": m.content} for m in messages]
    if rendered and rendered[0]["role"] == "system":
        rendered[0] = {"role": "system", "content": f"{rendered[0]['content']}\n\n{instruction}"}
    else:
        rendered.insert(0, {"role": "system", "content": instruction})
    return rendered


def _content_text(content: Any) -> str:
    if isinstance(content, list):  # some servers send content parts
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def _cached_tokens(data: dict[str, Any]) -> int:
    """The prompt tokens the server read from its prompt cache, as it reports them (0 if it does not)."""
    details = (data.get("usage") or {}).get("prompt_tokens_details")
    if isinstance(details, dict) and details.get("cached_tokens") is not None:
        return int(details["cached_tokens"])
    timings = data.get("timings")  # llama.cpp's llama-server, before it reported the details
    return int(timings.get("cache_n") or 0) if isinstance(timings, dict) else 0


class OpenAIChatModel:
    """A ``LanguageModel`` over an OpenAI-compatible ``/chat/completions`` endpoint.

    ``api_key`` goes in ``Authorization: Bearer`` (or in ``api-key`` when ``auth_header="api-key"``,
    as Azure wants, with ``api_version`` as the ``api-version`` query parameter). ``extra_body``
    is merged into every request (e.g. ``{"seed": 7}`` or provider routing options).
    ``schema_in_prompt`` says the provider renders a ``json_schema`` response format into the prompt
    (default: for ``openai`` and ``azure``), so the answer model's own schema is sent in it, the same
    on every call, rather than the one tightened for the call (see the module docstring).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        provider: str = "openai",
        structured_output: StructuredOutputMode = "auto",
        timeout_s: float = 60.0,
        temperature: float | None = 0.0,
        max_tokens_field: str = "max_tokens",
        auth_header: AuthScheme = "bearer",
        api_version: str | None = None,
        extra_headers: dict[str, str] | None = None,
        extra_body: dict[str, Any] | None = None,
        schema_in_prompt: bool | None = None,
        corrective_retries: int = 1,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.model = model
        self.model_name = f"{provider}:{model}"
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.structured_output = structured_output
        # auto: the mode learnt for this endpoint and model, shared by the process
        self._negotiation: Negotiation | None = None
        self._fixed_mode: WireMode = "json_schema"
        if structured_output == "auto":
            self._negotiation = negotiation_for(f"{self.url}#{model}")
        else:
            self._fixed_mode = structured_output
        self.temperature = temperature
        self.max_tokens_field = max_tokens_field
        self.extra_body = dict(extra_body or {})
        self.schema_in_prompt = provider in _SCHEMA_IN_PROMPT if schema_in_prompt is None else schema_in_prompt
        self.corrective_retries = corrective_retries
        self._params = api_version_params(api_version)
        self._headers = {**(extra_headers or {}), **auth_headers(api_key, auth_header)}
        self._http = LazyHttpClient(timeout_s, client)

    @property
    def mode(self) -> WireMode:
        """The structured-output form the next request uses."""
        return self._negotiation.mode if self._negotiation is not None else self._fixed_mode

    async def aclose(self) -> None:
        await self._http.aclose()

    def _payload(
        self, prompt: Prompt[Any, Any], messages: list[Message], mode: WireMode, context: Any = None
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self.model, self.max_tokens_field: output_cap(prompt, context)}
        if self.temperature is not None:
            payload["temperature"] = self.temperature
        schema = answer_schema_for(prompt, context)
        if mode == "json_schema":
            payload["messages"] = [{"role": m.role, "content": m.content} for m in messages]
            name = _SCHEMA_NAME.sub("_", prompt.name)[:64] or "answer"
            sent = answer_schema(prompt.answer) if self.schema_in_prompt else schema
            payload["response_format"] = {"type": "json_schema", "json_schema": {"name": name, "schema": sent}}
        else:
            # the answer model's own schema, not the call's: the system message stays a cacheable prefix
            payload["messages"] = _with_instruction(messages, schema_instruction(prompt.answer))
            if mode == "json_object_schema":  # compiled into a grammar: see structured.grammar_safe
                payload["response_format"] = {"type": "json_object", "schema": grammar_safe(schema)}
            elif mode == "json_object":
                payload["response_format"] = {"type": "json_object"}
        payload.update(self.extra_body)
        return payload

    async def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        return await post_json(
            self._http.client,
            self.url,
            payload,
            headers=self._headers,
            params=self._params,
            target=self.url,
            timeout_s=self._http.timeout_s,
        )

    async def _send(self, prompt: Prompt[Any, Any], messages: list[Message], context: Any) -> dict[str, Any]:
        """One answer, in the structured-output mode the endpoint takes (stepping down on refusals)."""
        while True:
            mode = self.mode
            try:
                data = await self._post(self._payload(prompt, messages, mode, context))
            except (ProviderRequestError, ProviderUnavailableError) as error:
                if mode == "prompt" or not refuses_structured_output(error):
                    raise
                self._step_down(mode, error)
                continue
            if self._negotiation is not None:
                self._negotiation.worked(mode)
            return data

    def _step_down(self, refused: WireMode, error: ProviderRequestError | ProviderUnavailableError) -> None:
        """Move to the next mode, or raise a refusal that retrying cannot fix (fixed modes)."""
        reason = f"HTTP {error.status}: {error.body[:200]}"
        if self._negotiation is not None and self._negotiation.step_down(refused, reason) is not None:
            return
        raise ProviderRequestError(
            f"{self.url} refuses structured output {refused!r} ({reason}); set structured_output "
            "(CHRONOMEM_LLM_STRUCTURED_OUTPUT) to 'auto' or a lower mode",
            status=error.status or 400,
            body=error.body,
        ) from error

    def _reply(self, data: dict[str, Any], messages: list[Message]) -> Reply:
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ProviderUnavailableError(f"{self.url} answered without choices: {str(data)[:300]}")
        choice = choices[0]
        message = choice.get("message") or {}
        text = _content_text(message.get("content"))
        if not text and message.get("refusal"):
            raise ModelOutputError(f"{self.model_name} refused to answer: {message['refusal']}")
        usage = data.get("usage") or {}
        input_tokens = int(usage.get("prompt_tokens") or estimate_message_tokens(messages))
        return Reply(
            text=text,
            input_tokens=input_tokens,
            output_tokens=int(usage.get("completion_tokens") or estimate_tokens(text)),
            truncated=choice.get("finish_reason") == "length",
            model=data.get("model") or self.model,
            cached_input_tokens=min(input_tokens, _cached_tokens(data)),
        )

    async def complete(self, prompt: Prompt[Any, Any], context: Any) -> Completion[Any]:
        async def ask(messages: list[Message]) -> Reply:
            return self._reply(await self._send(prompt, messages, context), messages)

        return await answer_prompt(
            prompt, context, ask, model=self.model_name, corrective_retries=self.corrective_retries, provider="openai"
        )
