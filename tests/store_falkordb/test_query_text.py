"""What reaches FalkorDB as text: parameter literals, graph keys, full-text queries, URLs.
No server needed."""

from __future__ import annotations

import numpy as np
import pytest

from chronomem.errors import ConfigurationError, InvalidInputError
from chronomem.store.falkordb.connection import parse_url
from chronomem.store.falkordb.fulltext import MAX_TERMS, fulltext_query
from chronomem.store.falkordb.keys import GroupKeys
from chronomem.store.falkordb.params import cypher_literal, params_header

HOSTILE_IDS = [
    "3f2b9c1e-8d4a-4c2b-9e1f-0a1b2c3d4e5f", "user-1", "it's", 'say "hi"', "a{b}c", "{x}", "a:b:c",
    "100%", "ünïcødé 日本語 🎉", " lead and trail ", "back\\slash", "new\nline", "%7B",
]


def test_strings_are_quoted_and_escaped() -> None:
    assert cypher_literal('say "hi" \\ now') == '"say \\"hi\\" \\\\ now"'
    assert cypher_literal("line\nbreak") == '"line\nbreak"'  # the parser takes control characters verbatim


def test_values_the_server_cannot_represent_are_refused() -> None:
    with pytest.raises(InvalidInputError):
        cypher_literal("NUL\x00inside")  # would cut the query text short in the server's C parser
    with pytest.raises(InvalidInputError):
        cypher_literal(float("nan"))
    with pytest.raises(InvalidInputError):
        cypher_literal(np.array([1.0, np.inf], dtype=np.float32))


def test_map_keys_must_be_our_identifiers() -> None:
    assert cypher_literal({"id": "x", "n": [1, None, True]}) == '{id:"x",n:[1,null,true]}'
    with pytest.raises(ValueError, match="identifier"):
        cypher_literal({"a} RETURN 1 //": 1})


def test_header_puts_every_value_in_front_of_the_query() -> None:
    assert params_header({"q": "x", "k": 3}) == 'CYPHER q="x" k=3 '
    assert params_header({}) == ""


def test_vectors_become_float_lists_that_parse_back_to_the_same_float32() -> None:
    vector = np.array([0.123456789, -1e-9, 1.0, 3.4028235e38], dtype=np.float32)
    text = cypher_literal(vector)
    assert text == "[0.123456791,-9.99999972e-10,1,3.40282347e+38]"
    values = [float(x) for x in text.strip("[]").split(",")]
    assert np.array_equal(np.array(values, dtype=np.float32), vector)


@pytest.mark.parametrize("group_id", HOSTILE_IDS)
def test_graph_keys_round_trip_and_keep_one_hash_tag(group_id: str) -> None:
    keys = GroupKeys("ns")
    key = keys.graph(group_id)
    assert keys.group_of(key) == group_id
    assert key.count("{") == 1 and key.count("}") == 1  # the slot depends on the group id only
    assert key.isprintable()


def test_graph_keys_are_distinct_and_namespaced() -> None:
    keys = GroupKeys("ns")
    assert len({keys.graph(g) for g in HOSTILE_IDS}) == len(HOSTILE_IDS)
    assert GroupKeys("other").group_of(keys.graph("user-1")) is None
    assert keys.group_of("ns:queue") is None
    with pytest.raises(ConfigurationError):
        GroupKeys("bad{namespace}")


def test_fulltext_query_keeps_only_words() -> None:
    assert fulltext_query('alice -bob* @fact:"x" | (dogs) ~maybe %fuzzy%') == "alice|bob|fact|x|dogs|maybe|fuzzy"
    assert fulltext_query("snake_case user-1") == "snake\\_case|user|1"
    assert fulltext_query("Ünïcode CAFÉ") == "unicode|cafe"  # folded like the indexed copies


def test_fulltext_query_without_words_is_none() -> None:
    assert fulltext_query("") is None
    assert fulltext_query(" -|@*()\"'{}[]~% ") is None


def test_fulltext_query_is_bounded() -> None:
    words = [f"w{i}" for i in range(100)]
    assert len(fulltext_query(" ".join(words)).split("|")) == MAX_TERMS  # type: ignore[union-attr]


def test_urls() -> None:
    settings = parse_url("falkordb+cluster://u:p%40ss@10.0.0.1:7000?namespace=prod&max_connections=8&retry_seconds=3")
    assert (settings.host, settings.port, settings.cluster, settings.password) == ("10.0.0.1", 7000, True, "p@ss")
    assert (settings.namespace, settings.max_connections, settings.retry_seconds) == ("prod", 8, 3.0)
    assert parse_url("falkordb://localhost").port == 6379
    with pytest.raises(ConfigurationError):
        parse_url("falkordb://h:1?bogus=1")
