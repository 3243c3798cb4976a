"""A request the body limits refuse before any route runs is answered in the error shape of the API
it was sent to: Zep's SDKs parse /api/v2 and /api/v4 errors by their own models."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from chronomem.service.app import _refusal
from chronomem.service.limits import BodySizeLimit


async def _echo(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


@pytest.mark.parametrize(("path", "status", "shape"), [
    ("/api/v2/graph-batch", 413, lambda body: body["message"].startswith("request body larger")),
    ("/api/v4/graphs", 413, lambda body: body["error"]["code"] == "content_too_large"),
    ("/api/v3/users", 413, lambda body: body["error"]["type"] == "PayloadTooLargeError"),
])
async def test_a_too_large_body_is_refused_in_the_shape_of_its_api(path: str, status: int, shape: Any) -> None:
    app = BodySizeLimit(_echo, max_bytes=10, refusal=_refusal)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        response = await client.post(path, content=b"x" * 11)
    assert response.status_code == status and shape(response.json())


async def test_text_that_is_not_text_is_a_400_on_zeps_apis_and_a_422_on_the_native_one() -> None:
    app = BodySizeLimit(_echo, max_bytes=1000, refusal=_refusal)
    body = b'{"a": "\\ud800"}'
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        v2, v4, native = [await client.post(p, content=body) for p in ("/api/v2/x", "/api/v4/x", "/api/v3/x")]
    assert (v2.status_code, v4.status_code, native.status_code) == (400, 400, 422)
    assert "message" in v2.json() and v4.json()["error"]["code"] == "bad_request"
