"""v4's search and list filters onto the search both API versions share
(:func:`chronomem.service.compat.search.run_search`).

v4 names scopes by path (``search/edges``, ``search/nodes``, ``search/episodes``) and takes
``page_size`` for the limit (at most 50, as on Zep). Its filters are v3's, with UUIDs in either form
and one difference: ``date_filters`` is an OR of ANDs whose comparisons may each name a different
field. Those are checked here on the candidates (:func:`dates_pass`), which the shared search draws
three times as many of, superseded facts included, as it does for v3's date filters.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chronomem.app.addresses import Target, object_id
from chronomem.errors import InvalidInputError
from chronomem.service.compat.models import DateFilterIn, SearchFiltersIn, SearchRequest, SearchScope
from chronomem.service.compat.search import Hits, date_filters_pass, run_search
from chronomem.service.compat.v4.deps import Zep4Space
from chronomem.service.compat.v4.errors import refuse_unsupported
from chronomem.service.compat.v4.models import DateFiltersIn, ListFiltersIn, SearchIn

__all__ = ["MAX_SEARCH_PAGE", "dates_pass", "search_graph", "v3_filters"]

MAX_SEARCH_PAGE = 50
_OPERATORS = {"eq": "=", "ne": "<>", "gt": ">", "lt": "<", "gte": ">=", "lte": "<=", "is_null": "IS NULL",
              "is_not_null": "IS NOT NULL"}
_UUID_LISTS = ("edge_uuids", "episode_uuids", "source_node_uuids", "target_node_uuids", "connected_node_uuids")
_ALWAYS = [[DateFilterIn(comparison_operator="IS NOT NULL")]]  # created_at is always set


def _uuids(values: list[str] | None) -> list[str] | None:
    return [object_id(v) for v in values] if values else None


def v3_filters(call: str, filters: ListFiltersIn | None) -> SearchFiltersIn | None:
    """The v3 filters these stand for; a v4 date filter makes the shared search draw superseded
    facts and more candidates (the filter itself is checked by :func:`dates_pass`)."""
    if filters is None:
        return None
    refuse_unsupported(call, property_filters=filters.property_filters, metadata_filters=filters.metadata_filters,
                       content_policy_violated=filters.content_policy_violated)
    fields: dict[str, Any] = {name: _uuids(getattr(filters, name)) for name in _UUID_LISTS}
    if filters.date_filters and filters.date_filters.any_of:
        fields["created_at"] = _ALWAYS
    return SearchFiltersIn(node_labels=filters.node_labels, edge_types=filters.edge_types,
                           exclude_node_labels=filters.exclude_node_labels,
                           exclude_edge_types=filters.exclude_edge_types, **fields)


def dates_pass(item: Any, wanted: DateFiltersIn | None) -> bool:
    """Whether an edge, node or episode passes v4's ``date_filters`` (any group all of whose
    comparisons hold; a field the object lacks counts as null)."""
    if wanted is None or not wanted.any_of:
        return True
    for group in wanted.any_of:
        checks = group.all_of or []
        if all(_holds(getattr(item, check.field, None), check.operator, check.value) for check in checks):
            return True
    return False


def _holds(value: datetime | None, operator: str, wanted: datetime | None) -> bool:
    return date_filters_pass(value, [[DateFilterIn(comparison_operator=_OPERATORS[operator], date=wanted)]])  # type: ignore[arg-type]


async def search_graph(zep: Zep4Space, target: Target, body: SearchIn, scope: SearchScope,
                       page_size: int | None) -> Hits:
    """One scope of a graph searched as v3's ``graph.search`` does, then v4's date filters."""
    call = f"graph.search_{scope}"
    if page_size is not None and page_size > MAX_SEARCH_PAGE:
        raise InvalidInputError(f"page_size: at most {MAX_SEARCH_PAGE}")
    refuse_unsupported(call, filter_low_quality_results=body.filter_low_quality_results)
    request = SearchRequest(
        user_id=target.ref.user_id, graph_id=target.ref.graph_id, query=body.query, scope=scope,
        reranker=body.reranker, limit=page_size, mmr_lambda=body.mmr_lambda,
        center_node_uuid=object_id(body.center_node_uuid) if body.center_node_uuid else None,
        bfs_origin_node_uuids=_uuids(body.bfs_origin_node_uuids), search_filters=v3_filters(call, body.filters),
    )
    hits = await run_search(zep.space, zep.memory, target.ref, target.group_id, request)
    dated = body.filters.date_filters if body.filters else None
    if dated is not None:
        hits.facts = [(f, s) for f, s in hits.facts if dates_pass(f, dated)]
        hits.entities = [(e, s) for e, s in hits.entities if dates_pass(e, dated)]
        hits.episodes = [(e, s) for e, s in hits.episodes if dates_pass(e, dated)]
    return hits
