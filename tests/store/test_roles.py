"""The store port's roles: each method has one home, and `Store` is exactly their union."""

from __future__ import annotations

from chronomem.store.base import (
    BulkLoader,
    EpisodeQueue,
    EpisodeReader,
    GraphReader,
    GraphWriter,
    GroupAdmin,
    SearchIndex,
    Store,
)

ROLES = (GroupAdmin, EpisodeReader, EpisodeQueue, GraphReader, GraphWriter, BulkLoader, SearchIndex)


def _methods(protocol: type) -> set[str]:
    """The methods a protocol declares itself."""
    return {name for name, value in vars(protocol).items() if callable(value) and not name.startswith("_")}


def _all_methods(protocol: type) -> set[str]:
    """The methods a protocol asks for, its bases' included."""
    return set().union(*(_methods(base) for base in protocol.__mro__ if base is not object))


def test_every_store_method_is_declared_by_exactly_one_role() -> None:
    declared = [name for role in ROLES for name in _methods(role)]
    assert len(declared) == len(set(declared))  # no method in two roles
    assert len(declared) == 33 and set(declared) == _all_methods(Store)
    assert _methods(Store) == set()  # the union adds nothing of its own


def test_the_queue_and_the_graph_reader_share_the_episode_reads() -> None:
    assert {"get_episodes", "list_episodes"} <= _all_methods(EpisodeQueue)
    assert {"get_episodes", "list_episodes"} <= _all_methods(GraphReader)
