"""The lookup cache both control planes share (no I/O): what it keeps, and its one way out."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chronomem.controlplane.base import AccessCache, Project, UserRecord
from chronomem.errors import NotFoundError

ACME = Project("p1", "acme", datetime(2024, 1, 1, tzinfo=UTC))


class Backend:
    """A control plane's data as the cache sees it: keys, users, a change marker, and a count of
    the loads that reached it."""

    def __init__(self) -> None:
        self.keys: dict[str, Project] = {"cmk_a_secret": ACME}
        self.users: dict[tuple[str, str], UserRecord] = {}
        self.marker = 0
        self.loads = 0
        self.during_load = lambda: None  # what another thread does while a load is under way

    def load_project(self, presented: str) -> Project | None:
        self.loads += 1
        found = self.keys.get(presented)
        self.during_load()
        return found

    def load_user(self, project_id: str, user_id: str) -> UserRecord:
        self.loads += 1
        if (project_id, user_id) not in self.users:
            raise NotFoundError(f"user {user_id!r} not found")
        return self.users[project_id, user_id]

    def cache(self) -> AccessCache:
        return AccessCache(3600, changes=lambda: self.marker, load_project=self.load_project,
                           load_user=self.load_user)


def test_answers_are_kept_until_the_change_marker_moves():
    backend = Backend()
    cache = backend.cache()
    assert cache.authenticate("cmk_a_secret") == ACME
    assert cache.authenticate("cmk_a_secret") == ACME and backend.loads == 1
    del backend.keys["cmk_a_secret"]  # revoked by another process, which moves the marker
    backend.marker += 1
    assert cache.authenticate("cmk_a_secret") is None and backend.loads == 2


def test_a_revocation_that_lands_while_a_lookup_is_loading_is_not_hidden_by_the_cache():
    backend = Backend()
    cache = backend.cache()

    def revoke() -> None:  # commits after the load read the key, before it returned
        del backend.keys["cmk_a_secret"]
        cache.invalidate()

    backend.during_load = revoke
    assert cache.authenticate("cmk_a_secret") == ACME  # the answer of a lookup that began first
    backend.during_load = lambda: None
    assert cache.authenticate("cmk_a_secret") is None


def test_a_missing_user_is_not_remembered_as_missing():
    backend = Backend()
    cache = backend.cache()
    with pytest.raises(NotFoundError):
        cache.get_user("p1", "ann")
    backend.users["p1", "ann"] = UserRecord("p1", "ann", "u_1", created_at=ACME.created_at,
                                            updated_at=ACME.created_at)
    assert cache.get_user("p1", "ann").group_id == "u_1"
