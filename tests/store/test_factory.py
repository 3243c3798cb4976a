"""The store factory: which backend a URL names, and what that backend allows, without opening it."""

from __future__ import annotations

import pytest

from chronomem.errors import ConfigurationError
from chronomem.store.factory import StoreTraits, store_traits


@pytest.mark.parametrize("url", ["sqlite:///x.db", "sqlite:////abs/x.db", "sqlite://:memory:"])
def test_an_embedded_sqlite_store_takes_one_queue_consumer_and_no_shards(url: str) -> None:
    assert store_traits(url) == StoreTraits(single_queue_consumer=True, supports_shards=False)


@pytest.mark.parametrize("url", ["falkordb://127.0.0.1:1", "falkordb+cluster://127.0.0.1:1", "redis://127.0.0.1:1"])
def test_a_falkordb_store_takes_sharded_consumers_and_is_not_contacted(url: str) -> None:
    # Port 1 has no server: learning the traits must not connect.
    assert store_traits(url) == StoreTraits(single_queue_consumer=False, supports_shards=True)


@pytest.mark.parametrize(("url", "message"), [("chronomem.db", "no scheme"), ("postgres://x", "unknown store scheme")])
def test_a_url_without_a_known_scheme_is_a_configuration_error(url: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        store_traits(url)
