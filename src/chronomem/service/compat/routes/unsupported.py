"""Every other call of the SDK answers 501 with a body that names it.

The table names the ``zep-cloud`` 3.30 calls chronomem does not implement, by method and path, so
the answer says which SDK call it was; a path the SDK never sends gets 501 too, naming the route.
"""

from __future__ import annotations

import re

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

__all__ = ["UNSUPPORTED_CALLS", "router", "sdk_call"]

router = APIRouter(include_in_schema=False)

_ID = r"[^/]+"
UNSUPPORTED_CALLS: tuple[tuple[str, str, str], ...] = (
    ("GET", r"batches", "batch.list"),
    ("POST", r"batches", "batch.create"),
    ("GET", rf"batches/{_ID}", "batch.get"),
    ("DELETE", rf"batches/{_ID}", "batch.delete"),
    ("GET", rf"batches/{_ID}/items", "batch.list_items"),
    ("POST", rf"batches/{_ID}/items", "batch.add"),
    ("POST", rf"batches/{_ID}/process", "batch.process"),
    ("POST", rf"graph/document-summary/graph/{_ID}", "graph.document_summary.get_by_graph_id"),
    ("POST", rf"graph/episodes/graph/{_ID}", "graph.episode.list_by_graph_id"),
    ("POST", rf"graph/episodes/user/{_ID}", "graph.episode.list_by_user_id"),
    ("PATCH", rf"graph/episodes/{_ID}", "graph.episode.update"),
    ("POST", rf"graph/node/{_ID}/neighbors", "graph.node.get_neighbors"),
    ("POST", rf"graph/observation/(user|graph)/{_ID}", "graph.observation.get_by_user_id / get_by_graph_id"),
    ("GET", rf"graph/observation/{_ID}", "graph.observation.get"),
    ("GET", r"custom-instructions", "graph.list_custom_instructions"),
    ("POST", r"custom-instructions", "graph.add_custom_instructions"),
    ("DELETE", r"custom-instructions", "graph.delete_custom_instructions"),
    ("GET", rf"graph/documents/{_ID}/episodes", "graph.get_episodes_for_document"),
    ("POST", r"graph/nodes", "graph.add_nodes"),
    ("POST", r"graph/patterns", "graph.detect_patterns"),
    ("POST", r"graph/subgraph", "graph.get_subgraph"),
    ("GET", rf"graph/{_ID}/warm", "graph.warm"),
    ("POST", rf"graph/thread-summary/(user|graph)/{_ID}", "graph.thread_summary.get_by_user_id / get_by_graph_id"),
    ("GET", r"projects/info", "project.get"),
    ("PATCH", r"projects/info", "project.update"),
    ("GET", r"projects/observation-steering", "project.get_observation_steering"),
    ("PUT", r"projects/observation-steering", "project.set_observation_steering"),
    ("PATCH", rf"messages/{_ID}", "thread.message.update"),
    ("GET", rf"threads/{_ID}/episodes", "thread.get_episodes"),
    ("GET", rf"users/{_ID}/warm", "user.warm"),
    ("GET", r"user-groups.*", "user_group.*"),
    ("POST", r"user-groups.*", "user_group.*"),
    ("PATCH", r"user-groups.*", "user_group.*"),
    ("DELETE", r"user-groups.*", "user_group.*"),
    ("GET", r"abac/.*", "user_group.*"),
    ("POST", r"abac/.*", "user_group.*"),
    ("DELETE", r"abac/.*", "user_group.*"),
)
_COMPILED = tuple((method, re.compile(pattern), call) for method, pattern, call in UNSUPPORTED_CALLS)


def sdk_call(method: str, path: str) -> str | None:
    """The SDK call that sends ``method`` to ``path`` (relative to ``/api/v2``), if it is one of them."""
    for wanted, pattern, call in _COMPILED:
        if wanted == method and pattern.fullmatch(path.strip("/")):
            return call
    return None


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@router.api_route("/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
async def not_implemented(path: str, request: Request) -> JSONResponse:
    # The request's own path, not the parameter: with a trailing raw newline Starlette's mount hands
    # this route the whole path ("/api/v2/graph/kb%0A" arrives as "api/v2/graph/kb\n").
    shown = request.scope["path"]  # as sent, decoded (request.url drops a trailing newline)
    if _CONTROL.search(shown):  # an id with a control character: no SDK call, and no route matched it
        return JSONResponse({"message": f"{shown!r}: a path may not hold control characters"}, status_code=400)
    relative = shown.removeprefix(request.scope.get("root_path", ""))  # the mount's prefix, /api/v2
    call = sdk_call(request.method, relative)
    what = f"zep-cloud's {call} ({request.method} {shown})" if call else f"{request.method} {shown}"
    return JSONResponse({"message": f"{what}: chronomem does not implement it"}, status_code=501)
