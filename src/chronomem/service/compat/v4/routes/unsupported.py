"""Every other call of the v4 SDK answers 501 in Zep's error shape, naming the call.

The table names the ``zep-cloud`` 4.0 calls chronomem does not implement by method and path (a
path the SDK never sends gets 501 too, naming the route). A test reads the installed SDK's routes
and checks that each is served or named here.
"""

from __future__ import annotations

import re

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from chronomem.service.compat.v4.errors import error_response

__all__ = ["UNSUPPORTED_CALLS", "router", "sdk_call"]

router = APIRouter(include_in_schema=False)

_ID = r"[^/]+"
_G = rf"graphs/{_ID}"
UNSUPPORTED_CALLS: tuple[tuple[str, str, str], ...] = (
    ("POST", r"debug-logs/enable", "debug_log.enable"),
    ("POST", rf"{_G}/document-summaries/list", "graph.document_summary.list"),
    ("GET", rf"{_G}/documents/{_ID}/episodes", "graph.episode.list_for_document"),
    ("GET", rf"{_G}/episodes/{_ID}/debug-logs", "graph.episode.get_debug_logs"),
    ("GET", rf"{_G}/episodes/{_ID}/ingestion-traces", "graph.episode.list_ingestion_traces"),
    ("POST", rf"{_G}/hyperedges/{_ID}/edges", "graph.hyperedge.create_edge"),
    ("DELETE", rf"{_G}/hyperedges/{_ID}/edges/{_ID}", "graph.hyperedge.delete_edge"),
    ("POST", rf"{_G}/observations/list", "graph.observation.list"),
    ("GET", rf"{_G}/observations/{_ID}", "graph.observation.get"),
    ("POST", r"graphs/query", "graph.query"),
    ("GET", rf"{_G}/content-policy", "graph.get_content_policy"),
    ("POST", rf"{_G}/content-policy/events/list", "graph.list_content_policy_events"),
    ("GET", rf"{_G}/instructions", "graph.get_instructions"),
    ("PUT", rf"{_G}/instructions", "graph.set_instructions"),
    ("GET", rf"{_G}/observation-steering", "graph.get_observation_steering"),
    ("PUT", rf"{_G}/observation-steering", "graph.set_observation_steering"),
    ("GET", r"project", "project.get"),
    ("PATCH", r"project", "project.update"),
    ("GET", r"project/.*", "project.*"),
    ("PUT", r"project/.*", "project.*"),
    ("PATCH", rf"threads/{_ID}/messages/{_ID}", "thread.message.update"),
    ("GET", rf"users/{_ID}/user-groups", "user_group.list_for_user"),
    ("GET", r"user-groups.*", "user_group.*"),
    ("POST", r"user-groups.*", "user_group.*"),
    ("PATCH", r"user-groups.*", "user_group.*"),
    ("DELETE", r"user-groups.*", "user_group.*"),
    ("GET", r"agents?(/.*)?", "agent.*"),
    ("POST", r"agents?(/.*)?", "agent.*"),
    ("PUT", r"agents?(/.*)?", "agent.*"),
    ("PATCH", r"agents?(/.*)?", "agent.*"),
    ("DELETE", r"agents?(/.*)?", "agent.*"),
    ("GET", r"trace-connections?(/.*)?", "trace_connection.*"),
    ("POST", r"trace-connections?(/.*)?", "trace_connection.*"),
    ("PATCH", r"trace-connections?(/.*)?", "trace_connection.*"),
    ("DELETE", r"trace-connections?(/.*)?", "trace_connection.*"),
)
_COMPILED = tuple((method, re.compile(pattern), call) for method, pattern, call in UNSUPPORTED_CALLS)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def sdk_call(method: str, path: str) -> str | None:
    """The SDK call that sends ``method`` to ``path`` (relative to ``/api/v4``), if it is one of them."""
    for wanted, pattern, call in _COMPILED:
        if wanted == method and pattern.fullmatch(path.strip("/")):
            return call
    return None


@router.api_route("/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
async def not_implemented(path: str, request: Request) -> JSONResponse:
    shown = request.scope["path"]
    if _CONTROL.search(shown):
        return error_response(400, f"{shown!r}: a path may not hold control characters")
    relative = shown.removeprefix(request.scope.get("root_path", ""))
    call = sdk_call(request.method, relative)
    what = f"zep-cloud's {call} ({request.method} {shown})" if call else f"{request.method} {shown}"
    return error_response(501, f"{what}: chronomem does not implement it")
