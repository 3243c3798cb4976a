"""The pure parts of the Zep compatibility layer and of context templates, without a server."""

from __future__ import annotations

import ast
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
import zep_cloud
from fastapi import FastAPI

from chronomem.app.groups import decode_cursor, encode_cursor
from chronomem.domain import Entity, Episode, Fact
from chronomem.errors import InvalidInputError
from chronomem.search.templates import parse_template, render_template
from chronomem.service.compat import create_compat_app
from chronomem.service.compat.models import DateFilterIn, EdgeTypeIn, EntityTypeIn, SearchFiltersIn, SearchRequest
from chronomem.service.compat.ontology import ontology_from_types
from chronomem.service.compat.routes.unsupported import sdk_call
from chronomem.service.compat.search import date_filters_pass, edge_passes, plan_search

T0 = datetime(2024, 1, 1, tzinfo=UTC)
T1 = datetime(2024, 6, 1, tzinfo=UTC)


def sdk_routes() -> set[tuple[str, str]]:
    """Every (method, path) the installed SDK sends, read from its generated raw clients."""
    routes = set()
    for source in Path(zep_cloud.__file__).parent.rglob("raw_client.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "request":
                method = next(k.value.value for k in node.keywords if k.arg == "method")  # type: ignore[attr-defined]
                path = re.sub(r"\{[^}]*\}", "some-id", ast.unparse(node.args[0]).strip("f'\""))
                routes.add((method, path))
    return routes


def served_routes() -> list[tuple[str, re.Pattern[str]]]:
    """The compatibility app's own routes (its OpenAPI document; the 501 catch-all is not in it)."""
    paths = create_compat_app(FastAPI()).openapi()["paths"]
    return [(method.upper(), re.compile(re.sub(r"\{[^}]*\}", "[^/]+", template.strip("/"))))
            for template, operations in paths.items() for method in operations]


def test_every_sdk_call_is_served_or_answers_501_by_name():
    served = served_routes()
    unclaimed = [
        f"{method} {path}" for method, path in sorted(sdk_routes())
        if not any(m == method and p.fullmatch(path) for m, p in served) and sdk_call(method, path) is None
    ]
    assert unclaimed == []
    served_in_table = [(method, path) for method, path in sdk_routes()
                       if any(m == method and p.fullmatch(path) for m, p in served) and sdk_call(method, path)]
    assert served_in_table == []  # the 501 table names no call that is served
    assert len(sdk_routes()) > 90  # the parse found the SDK's calls


def test_the_catch_all_names_the_call_it_does_not_implement_and_refuses_a_path_with_a_control_character():
    from fastapi.testclient import TestClient

    from chronomem.service.compat.routes import unsupported

    compat = FastAPI()
    compat.include_router(unsupported.router)
    parent = FastAPI()
    parent.mount("/api/v2", compat)
    client = TestClient(parent)
    batch = client.get("/api/v2/batches")
    assert batch.status_code == 501
    assert batch.json() == {"message": "zep-cloud's batch.list (GET /api/v2/batches): chronomem does not implement it"}
    assert "does not implement" in client.post("/api/v2/nowhere").json()["message"]
    # a trailing raw newline reaches the catch-all with the whole path: not a call, bad input
    newline = client.patch("/api/v2/graph/kb%0A", json={})
    assert newline.status_code == 400 and "control characters" in newline.json()["message"]


def test_templates_render_sections_in_rank_order_with_limits_and_types():
    fact = lambda text, relation: Fact(group_id="g", source_id="a", target_id="b", relation_type=relation,  # noqa: E731
                                       fact=text, valid_at=T0)
    template = parse_template("Known:\n%{edges limit=2 types=[LIVES_IN]}\nWho:\n%{entities limit=1}\n%{user_summary}")
    text = render_template(
        template,
        facts=[fact("Ada lives in Lisbon", "LIVES_IN"), fact("Ada works at Acme", "WORKS_AT"),
               fact("Ada lives in Porto", "LIVES_IN"), fact("Ada lives in Rome", "LIVES_IN")],
        entities=[Entity(group_id="g", name="Ada", summary="A mathematician."), Entity(group_id="g", name="Bob")],
        episodes=[Episode(group_id="g", content="hi")], summaries={"user_summary": ["Ada likes maps."]},
    )
    assert text.splitlines() == [
        "Known:",
        "- Ada lives in Lisbon (Date range: 2024-01-01 00:00:00Z - present)",
        "- Ada lives in Porto (Date range: 2024-01-01 00:00:00Z - present)",
        "Who:",
        "- Ada: A mathematician.",
        "Ada likes maps.",
    ]
    assert template.limit("facts") == 2 and template.limit("episodes") == 0


@pytest.mark.parametrize("text", ["%{weather}", "%{edges limit=0}", "%{edges limit=101}", "%{edges colour=red}",
                                  "%{edges", "", "x" * 1201])
def test_a_template_that_would_not_render_is_refused(text):
    with pytest.raises(InvalidInputError):
        parse_template(text)


def test_date_filters_are_an_or_of_ands():
    before = DateFilterIn(comparison_operator="<", date=T1)
    after = DateFilterIn(comparison_operator=">=", date=T0)
    assert date_filters_pass(T0, [[after, before]])
    assert not date_filters_pass(T1, [[after, before]])
    assert date_filters_pass(T1, [[after, before], [DateFilterIn(comparison_operator="=", date=T1)]])
    assert date_filters_pass(None, [[DateFilterIn(comparison_operator="IS NULL")]])
    assert not date_filters_pass(None, [[before]])  # a missing date passes no comparison
    assert date_filters_pass(None, None)
    with pytest.raises(InvalidInputError):
        date_filters_pass(T0, [[DateFilterIn(comparison_operator=">")]])


def test_edge_post_filters():
    fact = Fact(group_id="g", source_id="a", target_id="b", relation_type="LIVES_IN", fact="x", valid_at=T1,
                episode_ids=("e1",))
    labels = {"a": ("Person",), "b": ("Place",)}
    assert edge_passes(fact, SearchFiltersIn(connected_node_uuids=["b"]), labels)
    assert not edge_passes(fact, SearchFiltersIn(source_node_uuids=["b"]), labels)
    assert not edge_passes(fact, SearchFiltersIn(exclude_node_labels=["Place"]), labels)
    assert not edge_passes(fact, SearchFiltersIn(exclude_edge_types=["LIVES_IN"]), labels)
    assert edge_passes(fact, SearchFiltersIn(episode_uuids=["e1", "e2"]), labels)
    assert not edge_passes(fact, SearchFiltersIn(valid_at=[[DateFilterIn(comparison_operator="<", date=T0)]]),
                           labels)


def test_search_plans_draw_more_candidates_only_when_they_filter_afterwards():
    plain = plan_search(SearchRequest(user_id="u", query="q", limit=5))
    assert plain.config.facts is not None and plain.config.facts.limit == 5 and plain.post is None
    dated = plan_search(SearchRequest(user_id="u", query="q", limit=5, search_filters=SearchFiltersIn(
        invalid_at=[[DateFilterIn(comparison_operator="IS NOT NULL")]])))
    assert dated.config.facts is not None and dated.config.facts.limit == 15
    assert dated.filters is not None and dated.filters.include_superseded  # ended facts are asked about
    nodes = plan_search(SearchRequest(user_id="u", query="q", scope="nodes", bfs_origin_node_uuids=["n1"]))
    assert nodes.config.facts is None and nodes.config.entities is not None and nodes.seed_entity_ids == ("n1",)


def test_zep_types_become_an_ontology():
    ontology = ontology_from_types(
        [EntityTypeIn.model_validate({"name": "Pet", "description": "An animal someone keeps.",
                                      "properties": [{"name": "age", "type": "Int", "description": "years"}]})],
        [EdgeTypeIn.model_validate({"name": "owns", "description": "Ownership.",
                                    "source_targets": [{"target": "Pet"}]})],
    )
    assert set(ontology.entity_types) == {"Pet"} and set(ontology.edge_types) == {"OWNS"}
    assert ontology.entity_attributes(["Pet"], {"age": "3"}) == {"age": 3}
    assert ontology.signatures == {"OWNS": (("Entity", "Pet"),)}
    with pytest.raises(InvalidInputError):
        ontology_from_types([], [EdgeTypeIn.model_validate(
            {"name": "OWNS", "description": "", "source_targets": [{"source": "Ghost"}]})])


def test_cursors_round_trip_and_refuse_forgeries():
    assert decode_cursor(encode_cursor(40)) == 40 and decode_cursor(None) == 0
    for forged in ("x", encode_cursor(1)[:-1] + "!", "bzotMQ"):
        with pytest.raises(InvalidInputError):
            decode_cursor(forged)
