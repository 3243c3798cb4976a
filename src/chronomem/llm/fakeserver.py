"""A scriptable fake provider: a real HTTP/1.1 server on loopback speaking the providers' wire formats.

A test tool (the adapter tests and ``bench/llm.py`` use it), shipped in the package so benchmarks
can import it; importing it starts nothing. It serves, on ``127.0.0.1`` and a free port:

- OpenAI ``POST /v1/chat/completions`` and ``POST /v1/embeddings`` (any prefix before ``/chat`` or
  ``/embeddings`` works, so Azure-style deployment paths do too);
- Anthropic ``POST /v1/messages``.

Servers differ in the ``response_format`` they take: ``response_formats`` names the forms this one
accepts (``json_schema``, ``json_object_schema`` = ``{"type": "json_object", "schema": …}``,
``json_object``; default: all). A chat request in another form is refused before the script is
consulted, the way llama-cpp-python's server refuses ``json_schema``: HTTP ``refusal_status`` (500)
with a validation message naming ``response_format``.

With ``prompt_caching=True`` it reports prompt-cache reads the way each provider does, from the
prompts it has answered (per model; tokens estimated as characters / 4):

- OpenAI route: ``usage.prompt_tokens_details.cached_tokens`` is the longest prefix the prompt shares
  with an earlier one (a ``json_schema`` response format's schema first, as OpenAI puts it before the
  system message, then each message's role and content), counted OpenAI's way: nothing below
  ``cache_min_tokens`` (1,024), then in steps of ``cache_increment_tokens`` (128); only prompts of
  at least ``cache_min_tokens`` are remembered.
- Anthropic route: only a prefix that ends at a ``cache_control`` breakpoint (tools → system →
  messages) and holds at least ``cache_min_tokens`` is cached. The first request with it reports it
  as ``cache_creation_input_tokens``, later ones as ``cache_read_input_tokens``, and ``input_tokens``
  is the rest of the prompt.

Without it, neither route reports anything about a cache (as llama-cpp-python's server does not).

Each request takes the next scripted behaviour from a FIFO queue (:meth:`FakeProviderServer.enqueue`);
when the queue is empty the ``responder`` decides, and without one, chat routes answer 500 (an
unscripted request is a test bug) while embeddings get deterministic vectors. Every request is
recorded (:attr:`FakeProviderServer.requests`) so tests can assert how many went out.

    with FakeProviderServer() as server:
        server.enqueue(Status(429, headers={"Retry-After": "0"}), Answer({"name": "Alice"}))
        model = OpenAIChatModel("gpt-x", base_url=server.openai_base_url)

It also runs as its own process (benchmarks use this, so the server does not share the client's
GIL): ``python -m chronomem.llm.fakeserver --answer '{"ok": true}' --latency-ms 50 --rate-limited 0.2``
prints its port, serves until its stdin closes, then prints ``{"requests": n, "rate_limited": m}``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import random
import sys
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Literal

__all__ = [
    "FORMATS",
    "Answer",
    "Behaviour",
    "Disconnect",
    "Embeddings",
    "FakeProviderServer",
    "FakeRequest",
    "RawBody",
    "Stall",
    "Status",
]


_ROUTES = (("chat", "/chat/completions"), ("messages", "/messages"), ("embeddings", "/embeddings"))
FORMATS = frozenset({"json_schema", "json_object_schema", "json_object"})


@dataclass(frozen=True, slots=True)
class FakeRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    @property
    def response_format(self) -> str | None:
        """The structured-output form of a chat request (see ``FORMATS``), ``None`` without one."""
        requested = (self.json or {}).get("response_format") if self.route == "chat" else None
        if not isinstance(requested, dict):
            return None
        if requested.get("type") == "json_object":
            return "json_object_schema" if "schema" in requested else "json_object"
        return str(requested.get("type"))

    @property
    def route(self) -> str:
        path = self.path.split("?")[0].rstrip("/")
        for route, suffix in _ROUTES:
            if path.endswith(suffix):
                return route
        return "unknown"


@dataclass(frozen=True, slots=True)
class Answer:
    """A successful chat answer. A ``str`` is sent as text; other JSON values as JSON (a tool call on
    the Anthropic route). ``finish="length"`` marks it cut off at the token limit."""

    content: Any
    finish: Literal["stop", "length"] = "stop"
    delay_s: float = 0.0


@dataclass(frozen=True, slots=True)
class Embeddings:
    """A successful embeddings answer; ``None`` vectors are derived from the input texts."""

    vectors: list[list[float]] | None = None
    delay_s: float = 0.0


@dataclass(frozen=True, slots=True)
class Status:
    """An error status with an optional body and headers (e.g. ``Retry-After``)."""

    code: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass(frozen=True, slots=True)
class RawBody:
    """Send these bytes as the body, verbatim (malformed JSON, HTML from a proxy, …)."""

    body: str
    status: int = 200
    content_type: str = "application/json"


@dataclass(frozen=True, slots=True)
class Stall:
    """Send nothing for ``seconds``, then close the connection (a client timeout should fire first)."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Disconnect:
    """Close the connection without answering."""


Behaviour = Answer | Embeddings | Status | RawBody | Stall | Disconnect
Responder = Callable[[FakeRequest], Behaviour]


def _estimate(text: str) -> int:
    return max(1, math.ceil(len(text) / 4))


def _vector(text: str, dimension: int) -> list[float]:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    rng = random.Random(digest)
    values = [rng.gauss(0.0, 1.0) for _ in range(dimension)]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def _answer_text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content)


def _shared_prefix(first: str, second: str) -> int:
    """How many leading characters two strings share (a binary search of C-speed slice compares)."""
    low, high = 0, min(len(first), len(second))
    while low < high:
        middle = (low + high + 1) // 2
        if first[:middle] == second[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


class _PromptCache:
    """The prompts the fake has answered, and what a new one would read from a provider's cache."""

    _REMEMBERED = 256  # prompts per model; providers evict too

    def __init__(self, min_tokens: int, increment_tokens: int) -> None:
        self.min_tokens = min_tokens
        self.increment_tokens = increment_tokens
        self._prompts: dict[str, deque[str]] = {}
        self._prefixes: OrderedDict[str, None] = OrderedDict()  # digests of cached Anthropic prefixes

    def openai(self, model: str, prompt: str) -> int:
        """Cached tokens of ``prompt``, OpenAI's way (see the module docstring); remembers it."""
        seen = self._prompts.setdefault(model, deque(maxlen=self._REMEMBERED))
        shared = max((_shared_prefix(prompt, earlier) for earlier in seen), default=0) // 4  # whole tokens
        cached = 0
        if shared >= self.min_tokens:
            cached = shared - (shared - self.min_tokens) % self.increment_tokens
        if _estimate(prompt) >= self.min_tokens:
            seen.append(prompt)
        return cached

    def anthropic(self, model: str, prompt: str, breakpoints: list[int]) -> tuple[int, int]:
        """(read, written) tokens of ``prompt`` at its breakpoints, Anthropic's way; remembers them."""
        cacheable = [end for end in breakpoints if end // 4 >= self.min_tokens]
        digests = {end: hashlib.sha256(f"{model}\0{prompt[:end]}".encode()).hexdigest() for end in cacheable}
        read_to = max((end for end in cacheable if digests[end] in self._prefixes), default=0)
        written_to = max(cacheable, default=0)
        for digest in digests.values():
            self._prefixes[digest] = None
            self._prefixes.move_to_end(digest)
        while len(self._prefixes) > self._REMEMBERED:
            self._prefixes.popitem(last=False)
        return read_to // 4, max(0, written_to // 4 - read_to // 4)


def _openai_prompt(body: dict[str, Any]) -> str:
    """The prompt as OpenAI reads it: a ``json_schema`` response format's schema, then the messages."""
    requested = body.get("response_format")
    parts = []
    if isinstance(requested, dict) and requested.get("type") == "json_schema":
        parts.append(json.dumps(requested.get("json_schema")))
    parts += [f"<|{m.get('role')}|>{m.get('content', '')}" for m in body.get("messages", [])]
    return "".join(parts)


def _openai_chat(request: FakeRequest, answer: Answer, cache: _PromptCache | None) -> dict[str, Any]:
    body = request.json or {}
    text = _answer_text(answer.content)
    prompt = _openai_prompt(body)
    usage: dict[str, Any] = {
        "prompt_tokens": _estimate(prompt),
        "completion_tokens": _estimate(text),
        "total_tokens": _estimate(prompt) + _estimate(text),
    }
    if cache is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cache.openai(str(body.get("model")), prompt)}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": answer.finish}],
        "usage": usage,
    }


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, dict)]


def _anthropic_prompt(body: dict[str, Any]) -> tuple[str, list[int]]:
    """The prompt in Anthropic's cache order (tools → system → messages), and where each of its
    ``cache_control`` breakpoints ends (character offsets)."""
    text, breakpoints = "", []
    parts = [(json.dumps(tool), tool) for tool in body.get("tools") or []]
    parts += [(block.get("text", ""), block) for block in _blocks(body.get("system"))]
    for message in body.get("messages", []):
        parts.append((f"<|{message.get('role')}|>", {}))
        parts += [(b["text"] if b.get("type") == "text" else json.dumps(b), b) for b in _blocks(message.get("content"))]
    for part, block in parts:
        text += part
        if "cache_control" in block:
            breakpoints.append(len(text))
    return text, breakpoints


def _anthropic_message(request: FakeRequest, answer: Answer, cache: _PromptCache | None) -> dict[str, Any]:
    body = request.json or {}
    tool = (body.get("tool_choice") or {}).get("name")
    if tool and not isinstance(answer.content, str):
        content = [{"type": "tool_use", "id": "toolu_fake", "name": tool, "input": answer.content}]
        stop = "tool_use"
    else:
        content = [{"type": "text", "text": _answer_text(answer.content)}]
        stop = "end_turn"
    prompt, breakpoints = _anthropic_prompt(body)
    output_tokens = _estimate(_answer_text(answer.content))
    usage: dict[str, Any] = {"input_tokens": _estimate(prompt), "output_tokens": output_tokens}
    if cache is not None:  # Anthropic's input_tokens leaves out what was read from or written to the cache
        read, written = cache.anthropic(str(body.get("model")), prompt, breakpoints)
        usage.update(input_tokens=usage["input_tokens"] - read - written,
                     cache_read_input_tokens=read, cache_creation_input_tokens=written)
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "fake"),
        "content": content,
        "stop_reason": "max_tokens" if answer.finish == "length" else stop,
        "usage": usage,
    }


def _embeddings(request: FakeRequest, answer: Embeddings, dimension: int) -> dict[str, Any]:
    body = request.json or {}
    texts = body.get("input", [])
    texts = [texts] if isinstance(texts, str) else texts
    vectors = answer.vectors or [_vector(str(t), body.get("dimensions") or dimension) for t in texts]
    tokens = sum(_estimate(str(t)) for t in texts)
    return {
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
        "model": body.get("model", "fake"),
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def _format_refusal(request: FakeRequest, status: int) -> Status:
    """What llama-cpp-python's server answers to a ``response_format`` it does not take."""
    requested = (request.json or {}).get("response_format", {}).get("type")
    message = (
        "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
        f"'msg': \"Input should be 'text' or 'json_object'\", 'input': {requested!r}}}"
    )
    return Status(status, body={"error": {"message": message, "type": "internal_server_error", "code": None}})


def _error_body(code: int, body: Any) -> bytes:
    if body is None:
        body = {"error": {"message": HTTPStatus(code).phrase, "type": "fake_error", "code": code}}
    return (body if isinstance(body, str) else json.dumps(body)).encode()


def _http_response(status: int, body: bytes, headers: dict[str, str], content_type: str) -> bytes:
    reason = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Unknown"
    lines = [f"HTTP/1.1 {status} {reason}", f"Content-Type: {content_type}", f"Content-Length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def _read_request(reader: asyncio.StreamReader) -> FakeRequest | None:
    line = await reader.readline()
    if not line:
        return None
    method, path, _ = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while (header := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = header.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return FakeRequest(method, path, headers, body)


class FakeProviderServer:
    """See the module docstring. ``latency_s`` delays every answer; ``rate_limit_fraction`` answers
    that share of requests (drawn from a seeded RNG) with 429 before consulting the script;
    ``prompt_caching`` reports prompt-cache reads (``cache_min_tokens`` and ``cache_increment_tokens``
    are the providers' rules, lowered by tests that send short prompts)."""

    def __init__(
        self,
        *,
        responder: Responder | None = None,
        latency_s: float = 0.0,
        rate_limit_fraction: float = 0.0,
        rate_limit_headers: dict[str, str] | None = None,
        embedding_dimension: int = 8,
        seed: int = 0,
        response_formats: frozenset[str] = FORMATS,
        refusal_status: int = 500,
        prompt_caching: bool = False,
        cache_min_tokens: int = 1024,
        cache_increment_tokens: int = 128,
    ) -> None:
        unknown = set(response_formats) - FORMATS
        if unknown:
            raise ValueError(f"unknown response formats {sorted(unknown)}; known: {sorted(FORMATS)}")
        self.responder = responder
        self.response_formats = response_formats
        self.refusal_status = refusal_status
        self.refused = 0
        self.latency_s = latency_s
        self.rate_limit_fraction = rate_limit_fraction
        self.rate_limit_headers = dict(rate_limit_headers or {})
        self.embedding_dimension = embedding_dimension
        self._prompt_cache = _PromptCache(cache_min_tokens, cache_increment_tokens) if prompt_caching else None
        self.requests: list[FakeRequest] = []
        self.rate_limited = 0
        self._rng = random.Random(seed)
        self._script: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.port = 0

    # -- scripting -------------------------------------------------------------------------------

    def enqueue(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self._script.extend(behaviours)

    def count(self, route: str | None = None) -> int:
        with self._lock:
            return sum(1 for r in self.requests if route is None or r.route == route)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return self.url + "/v1"

    def _next_behaviour(self, request: FakeRequest) -> Behaviour:
        with self._lock:
            self.requests.append(request)
            if self.rate_limit_fraction and self._rng.random() < self.rate_limit_fraction:
                self.rate_limited += 1
                return Status(429, headers=self.rate_limit_headers)
            requested = request.response_format
            if requested is not None and requested not in self.response_formats:
                self.refused += 1
                return _format_refusal(request, self.refusal_status)
            if self._script:
                return self._script.popleft()
        if self.responder is not None:
            return self.responder(request)
        if request.route == "embeddings":
            return Embeddings()
        return Status(500, body={"error": {"message": f"no behaviour scripted for {request.path}"}})

    # -- serving ---------------------------------------------------------------------------------

    def _render(self, request: FakeRequest, behaviour: Behaviour) -> bytes:
        if isinstance(behaviour, RawBody):
            return _http_response(behaviour.status, behaviour.body.encode(), {}, behaviour.content_type)
        if isinstance(behaviour, Status):
            return _http_response(
                behaviour.code, _error_body(behaviour.code, behaviour.body), behaviour.headers, "application/json"
            )
        if isinstance(behaviour, Embeddings):
            payload = _embeddings(request, behaviour, self.embedding_dimension)
        elif isinstance(behaviour, Answer) and request.route == "messages":
            payload = _anthropic_message(request, behaviour, self._prompt_cache)
        elif isinstance(behaviour, Answer):
            payload = _openai_chat(request, behaviour, self._prompt_cache)
        else:
            raise TypeError(f"cannot render {behaviour!r}")
        return _http_response(200, json.dumps(payload).encode(), {}, "application/json")

    async def _respond(self, request: FakeRequest, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; False when the connection must close."""
        behaviour = self._next_behaviour(request)
        delay = self.latency_s + getattr(behaviour, "delay_s", 0.0)
        if isinstance(behaviour, Stall):
            delay += behaviour.seconds
        if delay:
            await asyncio.sleep(delay)
        if isinstance(behaviour, Stall | Disconnect):
            return False
        writer.write(self._render(request, behaviour))
        await writer.drain()
        return request.headers.get("connection", "").lower() != "close"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while (request := await _read_request(reader)) is not None:
                if not await self._respond(request, writer):
                    break
        except (ConnectionError, ValueError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def start(self) -> FakeProviderServer:
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="fake-provider", daemon=True)
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(asyncio.start_server(self._serve, "127.0.0.1", 0), loop)
        self._server = future.result(timeout=10)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def _shutdown(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await self._server.wait_closed()

    def stop(self) -> None:
        if self._loop is None or self._thread is None:
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
        self._loop = self._thread = None

    def __enter__(self) -> FakeProviderServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    """Serve one fixed answer from a separate process (see the module docstring)."""
    parser = argparse.ArgumentParser(description="A loopback fake LLM provider (test tool).")
    parser.add_argument("--answer", required=True, help="the JSON every chat request is answered with")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--rate-limited", type=float, default=0.0, help="share of requests answered 429")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    answer = Answer(json.loads(args.answer))
    server = FakeProviderServer(
        responder=lambda _request: answer,
        latency_s=args.latency_ms / 1000,
        rate_limit_fraction=args.rate_limited,
        seed=args.seed,
    ).start()
    print(server.port, flush=True)
    sys.stdin.read()  # the parent closes our stdin to stop us
    server.stop()
    print(json.dumps({"requests": server.count(), "rate_limited": server.rate_limited}), flush=True)


if __name__ == "__main__":
    main()
