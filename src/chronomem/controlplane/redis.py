"""The control plane in Redis, beside the graphs on a FalkorDB server or Redis Cluster, so that API
servers and workers on any number of machines share keys, projects, users, threads and tasks.

Layout: every key is ``<namespace>:control:{control}:…``. The one hash tag puts the whole control
plane in one slot of a cluster, so each multi-key write is one Lua script, atomic on one shard
(the control plane is small: a few hundred bytes per user, thread and task, plus 8 bytes per
message id). Records are JSON in hashes; orders are sorted sets scored by creation time in ms
(ties sorted by id, as Redis orders equal scores) or, for a thread's messages, a list.

The lookup cache's change marker (:class:`~chronomem.controlplane.base.AccessCache`) is a version
counter: every write that can take access away (a key created or revoked, a user changed or
deleted) increments it in the same script or transaction. A lookup reads the counter first (one
round trip, against the two or three of an uncached lookup) and drops its cache when it moved, so a
key revoked or a user deleted through one server stops working on every other at its next request.
A counter and not pub/sub: a subscriber that reconnects has missed messages it cannot know about, a
counter cannot be missed.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from chronomem.controlplane.base import (
    AccessCache,
    ApiKeyInfo,
    DocumentRecord,
    GraphRecord,
    Project,
    TaskRecord,
    ThreadRecord,
    UserRecord,
    from_ms,
    key_matches,
    mint_key,
    new_group_id,
    now_ms,
    split_key,
)
from chronomem.domain import new_id
from chronomem.errors import (
    ConflictError,
    InvalidInputError,
    MissingExtraError,
    NotFoundError,
    StoreError,
    StoreUnavailableError,
)

__all__ = ["RedisControlPlane"]

T = TypeVar("T")

# KEYS[1]: the record hash, KEYS[2]: its order; ARGV: field, record, score. 0 when it exists.
_CREATE = """
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
for i = 3, #KEYS do redis.call('ZADD', KEYS[i], ARGV[3], ARGV[1]) end
return 1
"""
# A user's or a graph's record, its order and its group's owner in one step, so that no crash leaves
# a group whose project is unknown. KEYS: record hash, order, the group → project hash; ARGV: field,
# record, score, group id, project id. 0 when it exists.
_CREATE_OWNED = """
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[4], ARGV[5])
return 1
"""
# KEYS: messages list, message set, tasks hash, group's task set, version; ARGV: task id, task, ids…
_APPEND = """
for i = 3, #ARGV do
  if redis.call('SADD', KEYS[2], ARGV[i]) == 1 then redis.call('RPUSH', KEYS[1], ARGV[i]) end
end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[4], ARGV[1])
return 1
"""
# KEYS: tasks hash, group's task set
_DROP_TASKS = """
local ids = redis.call('SMEMBERS', KEYS[2])
for _, id in ipairs(ids) do redis.call('HDEL', KEYS[1], id) end
redis.call('DEL', KEYS[2])
"""
# ARGV: key prefix, project id, user id, group id. Deletes the user's threads and tasks, then them.
_DELETE_USER = """
local p, pid, uid, gid = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local threads = redis.call('ZRANGE', p .. 'user-threads:' .. pid .. ':' .. uid, 0, -1)
for _, t in ipairs(threads) do
  redis.call('DEL', p .. 'messages:' .. pid .. ':' .. t, p .. 'message-set:' .. pid .. ':' .. t)
  redis.call('HDEL', p .. 'threads:' .. pid, t)
  redis.call('ZREM', p .. 'thread-order:' .. pid, t)
end
redis.call('DEL', p .. 'user-threads:' .. pid .. ':' .. uid)
local tasks = redis.call('SMEMBERS', p .. 'group-tasks:' .. pid .. ':' .. gid)
for _, id in ipairs(tasks) do redis.call('HDEL', p .. 'tasks:' .. pid, id) end
redis.call('DEL', p .. 'group-tasks:' .. pid .. ':' .. gid)
redis.call('DEL', p .. 'documents:' .. pid .. ':' .. gid)
redis.call('SREM', p .. 'document-scopes:' .. pid, gid)
redis.call('HDEL', p .. 'group-projects', gid)
redis.call('HDEL', p .. 'users:' .. pid, uid)
redis.call('ZREM', p .. 'user-order:' .. pid, uid)
redis.call('INCR', p .. 'version')
"""


def _redis_module() -> Any:
    try:
        import redis
        import redis.cluster
    except ImportError as exc:  # pragma: no cover - the falkordb extra brings redis
        raise MissingExtraError("redis", "falkordb") from exc
    return redis


class RedisControlPlane:
    """Projects, keys, users, graphs, threads and tasks in Redis (see the module docstring)."""

    def __init__(self, client: Any, *, namespace: str = "chronomem", cache_ttl_s: float = 2.0) -> None:
        self._r = client
        self._p = f"{namespace}:control:{{control}}:"
        self._access = AccessCache(cache_ttl_s, changes=self._version, load_project=self._authenticate,
                                   load_user=self._load_user)
        self._create = client.register_script(_CREATE)
        self._create_owned = client.register_script(_CREATE_OWNED)
        self._append = client.register_script(_APPEND)
        self._drop_tasks = client.register_script(_DROP_TASKS)
        self._delete_user = client.register_script(_DELETE_USER)

    @classmethod
    def connect(cls, url: str, *, cache_ttl_s: float = 2.0) -> RedisControlPlane:
        """On the server (or cluster) of a ``falkordb://`` / ``falkordb+cluster://`` store URL."""
        from chronomem.store.falkordb.connection import parse_url

        settings = parse_url(url)
        redis = _redis_module()
        options: dict[str, Any] = {
            "host": settings.host, "port": settings.port, "username": settings.username,
            "password": settings.password, "decode_responses": True,
            "socket_timeout": settings.socket_timeout, "socket_connect_timeout": settings.connect_timeout,
        }
        if settings.cluster:
            client = redis.cluster.RedisCluster(**options)  # retries and follows MOVED on its own
        else:  # a dropped connection (a server restart) is retried briefly before it becomes a 503
            from redis.backoff import ExponentialBackoff
            from redis.retry import Retry

            client = redis.Redis(**options, retry=Retry(ExponentialBackoff(cap=1.0, base=0.05), 6),
                                 retry_on_error=[redis.exceptions.ConnectionError, redis.exceptions.TimeoutError])
        return cls(client, namespace=settings.namespace, cache_ttl_s=cache_ttl_s)

    def close(self) -> None:
        self._r.close()

    def _k(self, *parts: str) -> str:
        return self._p + ":".join(parts)

    def _call(self, operation: Callable[[], T]) -> T:
        redis = _redis_module()
        try:
            return operation()
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
            raise StoreUnavailableError(f"the control plane's Redis server is unreachable: {exc}") from exc
        except redis.exceptions.RedisError as exc:
            raise StoreError(f"the control plane's Redis server refused a command: {exc}") from exc

    def _get(self, hash_key: str, field: str) -> dict[str, Any] | None:
        raw = self._call(lambda: self._r.hget(hash_key, field))
        return json.loads(raw) if raw is not None else None

    def _page(self, hash_key: str, order_key: str, limit: int, offset: int) -> list[dict[str, Any]]:
        ids = self._call(lambda: self._r.zrange(order_key, offset, offset + limit - 1)) if limit > 0 else []
        if not ids:
            return []
        raws = self._call(lambda: self._r.hmget(hash_key, ids))
        return [json.loads(raw) for raw in raws if raw is not None]

    def _created(self, hash_key: str, order_key: str, field: str, record: dict[str, Any], *more: str) -> bool:
        keys = [hash_key, order_key, *more]
        return bool(self._call(lambda: self._create(keys=keys, args=[field, json.dumps(record), record["created_at"]])))

    def _created_owned(self, hash_key: str, order_key: str, field: str, record: dict[str, Any],
                       project_id: str) -> bool:
        keys = [hash_key, order_key, self._k("group-projects")]
        args = [field, json.dumps(record), record["created_at"], record["group_id"], project_id]
        return bool(self._call(lambda: self._create_owned(keys=keys, args=args)))

    def _atomically(self) -> Any:
        """A MULTI/EXEC pipeline: every key of the control plane is in one hash slot, so this holds
        on a cluster too, and a crash applies all of its commands or none."""
        return self._r.pipeline(transaction=True)

    def _bump(self) -> None:
        self._call(lambda: self._r.incr(self._k("version")))

    def _write_and_bump(self, hash_key: str, field: str, record: dict[str, Any]) -> None:
        """Store a record whose change can take access away, and move the version counter in the
        same transaction, so that no other server keeps a cached answer past its next request."""
        pipe = self._atomically()
        pipe.hset(hash_key, field, json.dumps(record))
        pipe.incr(self._k("version"))
        self._call(pipe.execute)

    # -- projects ----------------------------------------------------------------------------------

    def ensure_project(self, name: str) -> Project:
        if not name.strip():
            raise InvalidInputError("a project needs a non-empty name")
        record = {"id": new_id(), "name": name, "created_at": now_ms()}
        self._created(self._k("projects"), self._k("project-order"), name, record)
        return self.get_project(name)

    def get_project(self, name: str) -> Project:
        record = self._get(self._k("projects"), name)
        if record is None:
            raise NotFoundError(f"no project named {name!r}")
        return Project(record["id"], record["name"], from_ms(record["created_at"]))

    def list_projects(self) -> list[Project]:
        raws = self._call(lambda: self._r.hvals(self._k("projects")))
        records = sorted((json.loads(raw) for raw in raws), key=lambda r: r["name"])
        return [Project(r["id"], r["name"], from_ms(r["created_at"])) for r in records]

    # -- API keys ----------------------------------------------------------------------------------

    def create_key(self, project: str, *, name: str = "") -> tuple[ApiKeyInfo, str]:
        owner = self.ensure_project(project)
        key_id, shown, digest = mint_key()
        record = {"id": key_id, "project_id": owner.id, "project": owner.name, "name": name,
                  "secret_sha256": digest, "created_at": now_ms(), "revoked_at": None}
        self._created(self._k("keys"), self._k("key-order"), key_id, record)
        self._bump()  # a cached miss of this key elsewhere (it cannot be guessed, but be exact)
        self._access.invalidate()
        return self._key(record), shown

    def revoke_key(self, key_id: str) -> ApiKeyInfo:
        record = self._get(self._k("keys"), key_id)
        if record is None:
            raise NotFoundError(f"no API key with id {key_id!r}")
        if record["revoked_at"] is not None:
            raise ConflictError(f"API key {key_id!r} was already revoked")
        record["revoked_at"] = now_ms()
        self._write_and_bump(self._k("keys"), key_id, record)
        self._access.invalidate()
        return self._key(record)

    def list_keys(self, project: str | None = None) -> list[ApiKeyInfo]:
        owner = self.get_project(project).id if project is not None else None
        records = self._page(self._k("keys"), self._k("key-order"), 1 << 30, 0)
        return [self._key(r) for r in records if owner is None or r["project_id"] == owner]

    @staticmethod
    def _key(record: dict[str, Any]) -> ApiKeyInfo:
        return ApiKeyInfo(record["id"], record["project_id"], record["name"], from_ms(record["created_at"]),
                          from_ms(record["revoked_at"]))

    def _version(self) -> str | None:
        """The cache's change marker: the version counter (``None`` before its first write)."""
        version: str | None = self._call(lambda: self._r.get(self._k("version")))
        return version

    def authenticate(self, presented: str) -> Project | None:
        return self._access.authenticate(presented)

    def _authenticate(self, presented: str) -> Project | None:
        parts = split_key(presented)
        record = self._get(self._k("keys"), parts[0]) if parts is not None else None
        if record is None or record["revoked_at"] is not None or not key_matches(presented, record["secret_sha256"]):
            return None
        try:
            return self.get_project(record["project"])
        except NotFoundError:
            return None

    # -- users -------------------------------------------------------------------------------------

    def create_user(
        self,
        project_id: str,
        user_id: str,
        *,
        email: str | None = None,
        first_name: str | None = None,
        last_name: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> UserRecord:
        now = now_ms()
        record = {"user_id": user_id, "group_id": new_group_id("user"), "email": email, "first_name": first_name,
                  "last_name": last_name, "metadata": metadata or {}, "created_at": now, "updated_at": now}
        if not self._created_owned(self._k("users", project_id), self._k("user-order", project_id), user_id, record,
                                   project_id):
            raise ConflictError(f"user {user_id!r} already exists")
        return self._user(project_id, record)

    def get_user(self, project_id: str, user_id: str) -> UserRecord:
        return self._access.get_user(project_id, user_id)

    def _load_user(self, project_id: str, user_id: str) -> UserRecord:
        record = self._get(self._k("users", project_id), user_id)
        if record is None:
            raise NotFoundError(f"user {user_id!r} not found")
        return self._user(project_id, record)

    @staticmethod
    def _user(project_id: str, r: dict[str, Any]) -> UserRecord:
        return UserRecord(project_id=project_id, user_id=r["user_id"], group_id=r["group_id"], email=r["email"],
                          first_name=r["first_name"], last_name=r["last_name"], metadata=r["metadata"],
                          created_at=from_ms(r["created_at"]), updated_at=from_ms(r["updated_at"]))

    def update_user(self, project_id: str, user_id: str, **changes: Any) -> UserRecord:
        unknown = set(changes) - {"email", "first_name", "last_name", "metadata"}
        if unknown:
            raise InvalidInputError(f"cannot change {sorted(unknown)} of a user")
        record = self._get(self._k("users", project_id), user_id)
        if record is None:
            raise NotFoundError(f"user {user_id!r} not found")
        record.update(changes, updated_at=now_ms())
        self._write_and_bump(self._k("users", project_id), user_id, record)
        self._access.invalidate()
        return self._user(project_id, record)

    def delete_user(self, project_id: str, user_id: str) -> UserRecord:
        user = self._load_user(project_id, user_id)
        self._call(lambda: self._delete_user(keys=[self._k("version")],
                                             args=[self._p, project_id, user_id, user.group_id]))
        self._access.invalidate()
        return user

    def list_users(self, project_id: str, *, limit: int = 50, offset: int = 0) -> list[UserRecord]:
        records = self._page(self._k("users", project_id), self._k("user-order", project_id), limit, offset)
        return [self._user(project_id, r) for r in records]

    def count_users(self, project_id: str) -> int:
        return int(self._call(lambda: self._r.hlen(self._k("users", project_id))))

    # -- named graphs ------------------------------------------------------------------------------

    def create_graph(self, project_id: str, graph_id: str, *, name: str = "", description: str = "") -> GraphRecord:
        record = {"graph_id": graph_id, "group_id": new_group_id("graph"), "name": name, "description": description,
                  "created_at": now_ms()}
        if not self._created_owned(self._k("graphs", project_id), self._k("graph-order", project_id), graph_id,
                                   record, project_id):
            raise ConflictError(f"graph {graph_id!r} already exists")
        return self._graph(project_id, record)

    def get_graph(self, project_id: str, graph_id: str) -> GraphRecord:
        record = self._get(self._k("graphs", project_id), graph_id)
        if record is None:
            raise NotFoundError(f"graph {graph_id!r} not found")
        return self._graph(project_id, record)

    def list_graphs(self, project_id: str, *, limit: int = 50, offset: int = 0) -> list[GraphRecord]:
        records = self._page(self._k("graphs", project_id), self._k("graph-order", project_id), limit, offset)
        return [self._graph(project_id, r) for r in records]

    def delete_graph(self, project_id: str, graph_id: str) -> GraphRecord:
        graph = self.get_graph(project_id, graph_id)
        pipe = self._atomically()
        self._drop_tasks(keys=[self._k("tasks", project_id), self._k("group-tasks", project_id, graph.group_id)],
                         client=pipe)
        pipe.hdel(self._k("group-projects"), graph.group_id)
        pipe.delete(self._k("documents", project_id, graph.group_id))
        pipe.srem(self._k("document-scopes", project_id), graph.group_id)
        pipe.hdel(self._k("graphs", project_id), graph_id)
        pipe.zrem(self._k("graph-order", project_id), graph_id)
        self._call(pipe.execute)
        return graph

    def update_graph(self, project_id: str, graph_id: str, *, name: str | None = None,
                     description: str | None = None) -> GraphRecord:
        record = self._get(self._k("graphs", project_id), graph_id)
        if record is None:
            raise NotFoundError(f"graph {graph_id!r} not found")
        record.update({k: v for k, v in (("name", name), ("description", description)) if v is not None})
        self._call(lambda: self._r.hset(self._k("graphs", project_id), graph_id, json.dumps(record)))
        return self._graph(project_id, record)

    def count_graphs(self, project_id: str) -> int:
        return int(self._call(lambda: self._r.hlen(self._k("graphs", project_id))))

    def project_of_group(self, group_id: str) -> str | None:
        found = self._call(lambda: self._r.hget(self._k("group-projects"), group_id))
        return None if found is None else str(found)

    def owned_groups(self, project_id: str) -> list[tuple[str, str, str]]:
        users = self._page(self._k("users", project_id), self._k("user-order", project_id), 1 << 30, 0)
        graphs = self._page(self._k("graphs", project_id), self._k("graph-order", project_id), 1 << 30, 0)
        return [("user", u["user_id"], u["group_id"]) for u in users] + [
            ("graph", g["graph_id"], g["group_id"]) for g in graphs]

    @staticmethod
    def _graph(project_id: str, r: dict[str, Any]) -> GraphRecord:
        return GraphRecord(project_id, r["graph_id"], r["group_id"], r["name"], r["description"],
                           from_ms(r["created_at"]))

    # -- threads -----------------------------------------------------------------------------------

    def create_thread(self, project_id: str, thread_id: str, user_id: str) -> ThreadRecord:
        self.get_user(project_id, user_id)
        record = {"thread_id": thread_id, "user_id": user_id, "created_at": now_ms()}
        if not self._created(self._k("threads", project_id), self._k("thread-order", project_id), thread_id, record,
                             self._k("user-threads", project_id, user_id)):
            raise ConflictError(f"thread {thread_id!r} already exists")
        return self._thread(project_id, record)

    def get_thread(self, project_id: str, thread_id: str) -> ThreadRecord:
        record = self._get(self._k("threads", project_id), thread_id)
        if record is None:
            raise NotFoundError(f"thread {thread_id!r} not found")
        return self._thread(project_id, record)

    def list_threads(
        self, project_id: str, *, user_id: str | None = None, limit: int = 50, offset: int = 0
    ) -> list[ThreadRecord]:
        order = self._k("thread-order", project_id) if user_id is None else self._k("user-threads", project_id, user_id)
        return [self._thread(project_id, r) for r in self._page(self._k("threads", project_id), order, limit, offset)]

    def delete_thread(self, project_id: str, thread_id: str) -> ThreadRecord:
        thread = self.get_thread(project_id, thread_id)
        pipe = self._atomically()
        pipe.delete(self._k("messages", project_id, thread_id), self._k("message-set", project_id, thread_id))
        pipe.hdel(self._k("threads", project_id), thread_id)
        pipe.zrem(self._k("thread-order", project_id), thread_id)
        pipe.zrem(self._k("user-threads", project_id, thread.user_id), thread_id)
        self._call(pipe.execute)
        return thread

    @staticmethod
    def _thread(project_id: str, r: dict[str, Any]) -> ThreadRecord:
        return ThreadRecord(project_id, r["thread_id"], r["user_id"], from_ms(r["created_at"]))

    def append_messages(self, project_id: str, thread_id: str, group_id: str, episode_ids: Sequence[str]) -> TaskRecord:
        task, record = self._new_task(project_id, group_id, episode_ids)
        keys = [self._k("messages", project_id, thread_id), self._k("message-set", project_id, thread_id),
                self._k("tasks", project_id), self._k("group-tasks", project_id, group_id)]
        self._call(lambda: self._append(keys=keys, args=[task.task_id, record, *episode_ids]))
        return task

    def message_ids(self, project_id: str, thread_id: str, *, last: int | None = None) -> list[str]:
        start = 0 if last is None else -last
        return list(self._call(lambda: self._r.lrange(self._k("messages", project_id, thread_id), start, -1)))

    # -- tasks -------------------------------------------------------------------------------------

    def create_task(self, project_id: str, group_id: str, episode_ids: Sequence[str]) -> TaskRecord:
        task, record = self._new_task(project_id, group_id, episode_ids)
        pipe = self._atomically()
        pipe.hset(self._k("tasks", project_id), task.task_id, record)
        pipe.sadd(self._k("group-tasks", project_id, group_id), task.task_id)
        self._call(pipe.execute)
        return task

    @staticmethod
    def _new_task(project_id: str, group_id: str, episode_ids: Sequence[str]) -> tuple[TaskRecord, str]:
        now = now_ms()
        task = TaskRecord(project_id, new_id(), group_id, tuple(episode_ids), from_ms(now))
        return task, json.dumps({"group_id": group_id, "episode_ids": list(episode_ids), "created_at": now})

    def get_task(self, project_id: str, task_id: str) -> TaskRecord:
        record = self._get(self._k("tasks", project_id), task_id)
        if record is None:
            raise NotFoundError(f"task {task_id!r} not found")
        return TaskRecord(project_id, task_id, record["group_id"], tuple(record["episode_ids"]),
                          from_ms(record["created_at"]))

    def count_threads(self, project_id: str, *, user_id: str | None = None) -> int:
        order = self._k("thread-order", project_id) if user_id is None else self._k("user-threads", project_id, user_id)
        return int(self._call(lambda: self._r.zcard(order)))

    # -- project documents: one hash per scope, fields ``[kind, name]``; a set of the scopes in use ----

    def put_document(self, project_id: str, kind: str, scope: str, name: str, body: Any) -> DocumentRecord:
        record = {"body": body, "updated_at": now_ms()}
        pipe = self._atomically()
        pipe.hset(self._k("documents", project_id, scope), json.dumps([kind, name]), json.dumps(record))
        pipe.sadd(self._k("document-scopes", project_id), scope)
        self._call(pipe.execute)
        return DocumentRecord(project_id, kind, scope, name, body, from_ms(record["updated_at"]))

    def get_document(self, project_id: str, kind: str, scope: str, name: str) -> DocumentRecord:
        record = self._get(self._k("documents", project_id, scope), json.dumps([kind, name]))
        if record is None:
            raise NotFoundError(f"{kind.replace('_', ' ')} {name!r} not found")
        return DocumentRecord(project_id, kind, scope, name, record["body"], from_ms(record["updated_at"]))

    def list_documents(self, project_id: str, kind: str, *, scope: str | None = None) -> list[DocumentRecord]:
        scopes = [scope] if scope is not None else self._call(lambda: self._r.smembers(self._k("document-scopes",
                                                                                                 project_id)))
        found: list[DocumentRecord] = []
        for each in sorted(scopes):
            fields = self._call(functools.partial(self._r.hgetall, self._k("documents", project_id, each)))
            for field, raw in fields.items():
                field_kind, name = json.loads(field)
                if field_kind == kind:
                    record = json.loads(raw)
                    found.append(DocumentRecord(project_id, kind, each, name, record["body"],
                                                from_ms(record["updated_at"])))
        return sorted(found, key=lambda d: (d.scope, d.name))

    def delete_document(self, project_id: str, kind: str, scope: str, name: str) -> bool:
        field = json.dumps([kind, name])
        return bool(self._call(lambda: self._r.hdel(self._k("documents", project_id, scope), field)))
