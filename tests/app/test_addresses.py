"""The UUIDs of a project's users, graphs and threads (Zep v4's addresses), both ways: indexed when
made, objects from before the index found by one pass, a deleted object's UUID gone with it."""

from __future__ import annotations

import uuid

import pytest

from chronomem.app.tenancy import ProjectSpace
from chronomem.config.settings import Settings
from chronomem.controlplane.sqlite import SQLiteControlPlane
from chronomem.embed.testing import HashingEmbedder
from chronomem.errors import NotFoundError
from chronomem.memory import Chronomem


@pytest.fixture
async def parts(tmp_path):
    control = SQLiteControlPlane.open(tmp_path / "control.db")
    async with await Chronomem.open(Settings(data_dir=tmp_path), embedder=HashingEmbedder()) as memory:
        yield control, memory
    control.close()


def space_of(parts, project: str = "acme") -> ProjectSpace:
    control, memory = parts
    return ProjectSpace(control.ensure_project(project), control, memory)


async def test_what_a_project_makes_is_found_by_its_uuid_and_only_in_that_project(parts):
    space = space_of(parts)
    addresses = space.addresses()
    user, graph = space.create_user("ada"), space.create_graph("kb")
    thread = space.create_thread("t1", "ada")
    for record in (user, graph, thread):
        address = addresses.uuid_of(record)
        assert str(uuid.UUID(address)) == address and addresses.find(address) == record
    assert addresses.graph(addresses.user_uuid(user)).user == user  # a user's graph: the user's UUID
    assert addresses.thread(addresses.uuid_of(thread)) == thread
    with pytest.raises(NotFoundError):
        addresses.user(addresses.uuid_of(graph))  # a graph's UUID is not a user's
    with pytest.raises(NotFoundError):
        space_of(parts, "other").addresses().find(addresses.user_uuid(user))


async def test_a_user_made_again_under_the_same_id_has_a_new_uuid_and_the_old_one_is_gone(parts):
    space = space_of(parts)
    old = space.addresses().user_uuid(space.create_user("ada"))
    await space.delete_user("ada")
    new = space.addresses().user_uuid(space.create_user("ada"))
    assert new != old and space.addresses().user(new).user_id == "ada"
    with pytest.raises(NotFoundError):
        space.addresses().user(old)


async def test_objects_made_before_the_index_are_found_by_one_pass(parts):
    control, _ = parts
    space = space_of(parts)
    project = space.project.id
    legacy = control.create_user(project, "bob")  # straight into the control plane: not indexed
    control.create_thread(project, "old-thread", "bob")
    addresses = space.addresses()
    assert addresses.user(addresses.user_uuid(legacy)) == legacy
    thread = control.get_thread(project, "old-thread")
    assert addresses.thread(addresses.thread_uuid(thread)) == thread
    with pytest.raises(NotFoundError):
        addresses.find(str(uuid.uuid4()))
